//! Stored Responses API responses (OpenAI's `store: true`): one row per run, in the chat the
//! run belongs to, holding what was asked and, once the run ended, the response object. Every
//! lookup is scoped to the owner.

use chrono::Utc;
use entities::ids::{ChatId, MessageId, ResponseId, RunId, UserId};
use entities::{responses, runs};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, Set,
};
use serde_json::Value;

/// A response about to run.
pub struct NewResponse {
    pub id: ResponseId,
    pub user_id: UserId,
    pub chat_id: ChatId,
    pub run_id: RunId,
    pub previous_response_id: Option<ResponseId>,
    pub request: Value,
    pub input_items: Value,
}

pub async fn insert(db: &DatabaseConnection, new: NewResponse) -> Result<(), DbErr> {
    responses::ActiveModel {
        id: Set(new.id),
        user_id: Set(new.user_id),
        chat_id: Set(new.chat_id),
        run_id: Set(new.run_id),
        previous_response_id: Set(new.previous_response_id),
        request: Set(new.request),
        input_items: Set(new.input_items),
        body: Set(None),
        created_at: Set(Utc::now()),
    }
    .insert(db)
    .await
    .map(|_| ())
}

/// Records the finished response object.
pub async fn finish(db: &DatabaseConnection, id: &ResponseId, body: Value) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    responses::Entity::update_many()
        .col_expr(responses::Column::Body, Expr::value(body))
        .filter(responses::Column::Id.eq(id))
        .exec(db)
        .await
        .map(|_| ())
}

/// The response if `owner` stored it.
pub async fn get_owned(
    db: &DatabaseConnection,
    owner: &UserId,
    id: &ResponseId,
) -> Result<Option<responses::Model>, DbErr> {
    responses::Entity::find_by_id(id.clone())
        .filter(responses::Column::UserId.eq(owner))
        .one(db)
        .await
}

/// Deletes the response if `owner` stored it; the chat's messages stay.
pub async fn delete_owned(
    db: &DatabaseConnection,
    owner: &UserId,
    id: &ResponseId,
) -> Result<bool, DbErr> {
    let deleted = responses::Entity::delete_many()
        .filter(responses::Column::Id.eq(id))
        .filter(responses::Column::UserId.eq(owner))
        .exec(db)
        .await?;
    Ok(deleted.rows_affected > 0)
}

/// The messages a run stored: the user message it answered and its answer, once there is one.
pub async fn run_messages(
    db: &DatabaseConnection,
    run_id: &RunId,
) -> Result<(Option<MessageId>, Option<MessageId>), DbErr> {
    let run = runs::Entity::find_by_id(run_id.clone()).one(db).await?;
    Ok(run
        .map(|run| (run.user_message_id, run.assistant_message_id))
        .unwrap_or_default())
}

/// The item `item_id` of one of `owner`'s stored responses (an output item, or an input item
/// with that id), for an `item_reference`.
pub async fn find_item(
    db: &DatabaseConnection,
    owner: &UserId,
    item_id: &str,
) -> Result<Option<Value>, DbErr> {
    use sea_orm::{QueryOrder, QuerySelect};
    let quoted = format!("%\"{}\"%", item_id.replace(['%', '_', '\\'], ""));
    let rows = responses::Entity::find()
        .filter(responses::Column::UserId.eq(owner))
        .filter(
            sea_orm::Condition::any()
                .add(sea_orm::sea_query::Expr::cust_with_values(
                    "CAST(body AS TEXT) LIKE $1",
                    [quoted.clone()],
                ))
                .add(sea_orm::sea_query::Expr::cust_with_values(
                    "CAST(input_items AS TEXT) LIKE $1",
                    [quoted],
                )),
        )
        .order_by_desc(responses::Column::CreatedAt)
        .limit(8)
        .all(db)
        .await?;
    for row in rows {
        let lists = [row.body.map(|b| b["output"].clone()), Some(row.input_items)];
        for list in lists.into_iter().flatten() {
            if let Some(item) = list
                .as_array()
                .and_then(|items| items.iter().find(|i| i["id"] == item_id))
            {
                return Ok(Some(item.clone()));
            }
        }
    }
    Ok(None)
}

/// How a run that is no longer live ended: its status, its error's code, and the answer (or
/// draft) it stored.
pub struct EndedRun {
    pub status: runs::RunStatus,
    pub error_code: String,
    pub text: String,
}

pub async fn ended_run(db: &DatabaseConnection, run_id: &RunId) -> Result<Option<EndedRun>, DbErr> {
    let Some(run) = runs::Entity::find_by_id(run_id.clone()).one(db).await? else {
        return Ok(None);
    };
    let text = match &run.assistant_message_id {
        Some(id) => entities::messages::Entity::find_by_id(id.clone())
            .one(db)
            .await?
            .and_then(|m| m.content)
            .unwrap_or_default(),
        None => String::new(),
    };
    let error_code = match run.status {
        runs::RunStatus::Interrupted => "interrupted".to_string(),
        _ => run
            .stop_reason
            .map_or_else(|| "server_error".into(), |r| r.as_str().to_string()),
    };
    Ok(Some(EndedRun {
        status: run.status,
        error_code,
        text,
    }))
}
