//! A chat's runs as stored: recorded when a turn starts, their tool calls kept for showing
//! after a reload, ended with their outcome (with the answer, in one transaction), paused on
//! a question, and resumed.

use chrono::Utc;
use entities::ids::{ChatId, MessageId, RunId, UserId};
use entities::runs::RunStatus;
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QuerySelect, Set};

use super::messages::{insert_nodes, set_active_leaf_at};

/// A run as first recorded.
pub struct NewRun<'a> {
    pub id: &'a RunId,
    pub chat_id: &'a ChatId,
    pub user_id: &'a UserId,
    pub user_message_id: Option<&'a MessageId>,
    pub options: Option<serde_json::Value>,
}

pub async fn insert_run<C: sea_orm::ConnectionTrait>(db: &C, run: NewRun<'_>) -> Result<(), DbErr> {
    // Not read back (no `RETURNING`): nothing of it is needed.
    let row = entities::runs::ActiveModel {
        id: Set(run.id.clone()),
        chat_id: Set(run.chat_id.clone()),
        user_id: Set(run.user_id.clone()),
        status: Set(RunStatus::Running),
        stop_reason: Set(None),
        user_message_id: Set(run.user_message_id.cloned()),
        assistant_message_id: Set(None),
        iterations: Set(0),
        input_tokens: Set(0),
        output_tokens: Set(0),
        error: Set(None),
        options: Set(run.options),
        created_at: Set(Utc::now()),
        finished_at: Set(None),
        draft: Set(None),
        tool_calls: Set(None),
        deep_think: Set(None),
    };
    entities::runs::Entity::insert(row)
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// Everything the start of a turn writes, in the caller's transaction: the chat when the turn
/// makes it (`new_chat`, the chat's draft), the user's message (none for a regeneration), the
/// active leaf (the chat's `updated_at` set to `updated_at`, `updated_now`), the run, and the
/// chat's `pending` asks (read before, `asks::pending_in`) cancelled: the conversation moved
/// on. Returns the cancelled questions' correlation ids. A new chat is inserted with its leaf
/// and `updated_at` already set, so its first turn has no update of it.
pub async fn begin_turn<C: sea_orm::ConnectionTrait>(
    db: &C,
    new_chat: Option<entities::chats::Model>,
    nodes: &[crate::chat::tree::MessageNode],
    active_leaf: &MessageId,
    pending: &[entities::pending_asks::Model],
    run: NewRun<'_>,
    updated_at: chrono::DateTime<Utc>,
) -> Result<Vec<entities::ids::AskCorrelationId>, DbErr> {
    let chat_id = run.chat_id;
    match new_chat {
        Some(mut chat) => {
            chat.active_leaf_id = Some(active_leaf.clone());
            chat.updated_at = updated_at;
            crate::chat::Chats::insert_on(db, chat).await?;
            super::insert_nodes(db, chat_id, nodes).await?;
        }
        None => {
            super::insert_nodes(db, chat_id, nodes).await?;
            set_active_leaf_at(db, chat_id, Some(active_leaf), updated_at).await?;
        }
    }
    insert_run(db, run).await?;
    crate::chat::asks::cancel(db, pending).await
}

/// Keeps a running Deep Think run's checkpoint. A run that already finished keeps what it
/// finished with.
pub async fn save_deep_think<C: sea_orm::ConnectionTrait>(
    db: &C,
    run_id: &RunId,
    checkpoint: serde_json::Value,
) -> Result<(), DbErr> {
    use entities::runs;
    use sea_orm::sea_query::Expr;
    runs::Entity::update_many()
        .col_expr(runs::Column::DeepThink, Expr::value(checkpoint))
        .filter(runs::Column::Id.eq(run_id))
        .filter(runs::Column::Status.eq(RunStatus::Running))
        .exec(db)
        .await?;
    Ok(())
}

/// The most tool calls a run keeps a record of; a run that makes more keeps its first ones.
pub const MAX_RECORDED_TOOL_CALLS: usize = 200;

/// What one tool call of a run did, kept for showing under the answer after a reload.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolCallRecord {
    pub id: String,
    pub name: String,
    /// The arguments as the model sent them (a JSON object, or the raw text if not JSON),
    /// shortened to a string when long.
    pub arguments: serde_json::Value,
    pub success: bool,
    /// A short preview of the result.
    pub preview: String,
    pub error: Option<String>,
    /// The model call (1, 2, …) that asked for it: calls of one call form one round.
    #[serde(default)]
    pub round: u32,
    /// The result as fed back to the model (its tool message, docs/spec.md#tool-messages), after
    /// truncation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// Adds `calls` to the run's record of tool calls, up to [`MAX_RECORDED_TOOL_CALLS`]. The
/// caller serialises writes for one run (its chat session handles them one at a time).
pub async fn append_tool_calls<C: sea_orm::ConnectionTrait>(
    db: &C,
    run_id: &RunId,
    calls: Vec<ToolCallRecord>,
) -> Result<(), DbErr> {
    use entities::runs;
    use sea_orm::sea_query::Expr;
    let Some(run) = runs::Entity::find_by_id(run_id.clone()).one(db).await? else {
        return Ok(());
    };
    let recorded = extend_tool_record(run.tool_calls, calls);
    runs::Entity::update_many()
        .col_expr(runs::Column::ToolCalls, Expr::value(recorded))
        .filter(runs::Column::Id.eq(run_id))
        .exec(db)
        .await?;
    Ok(())
}

/// `recorded` (a run's stored record, if any) with `calls` added after it, at most
/// [`MAX_RECORDED_TOOL_CALLS`] in all.
fn extend_tool_record(
    recorded: Option<serde_json::Value>,
    calls: Vec<ToolCallRecord>,
) -> serde_json::Value {
    let mut items = match recorded {
        Some(serde_json::Value::Array(items)) => items,
        _ => Vec::new(),
    };
    let room = MAX_RECORDED_TOOL_CALLS.saturating_sub(items.len());
    items.extend(
        calls
            .into_iter()
            .take(room)
            .filter_map(|call| serde_json::to_value(call).ok()),
    );
    serde_json::Value::Array(items)
}

/// What a run's answer shows beside its text: the tool calls it made and the error it
/// ended with.
#[derive(Debug, Clone, Default)]
pub struct RunRecord {
    pub tool_calls: Option<serde_json::Value>,
    pub error: Option<String>,
}

/// The records of a chat's runs that made tool calls or failed, by run id.
pub async fn run_records(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<std::collections::HashMap<RunId, RunRecord>, DbErr> {
    use entities::runs;
    use sea_orm::Condition;
    type Row = (RunId, Option<serde_json::Value>, Option<String>);
    let rows: Vec<Row> = runs::Entity::find()
        .select_only()
        .column(runs::Column::Id)
        .column(runs::Column::ToolCalls)
        .column(runs::Column::Error)
        .filter(runs::Column::ChatId.eq(chat_id))
        .filter(
            Condition::any()
                .add(runs::Column::ToolCalls.is_not_null())
                .add(runs::Column::Error.is_not_null()),
        )
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, tool_calls, error)| (id, RunRecord { tool_calls, error }))
        .collect())
}

/// How a run ended, as recorded.
#[derive(Debug, Clone)]
pub struct FinishedRun {
    pub id: RunId,
    pub status: RunStatus,
    pub stop_reason: entities::stop_reason::StopReason,
    pub assistant_message_id: Option<MessageId>,
    pub iterations: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub error: Option<String>,
}

pub async fn finish_run<C: sea_orm::ConnectionTrait>(
    db: &C,
    run: FinishedRun,
) -> Result<(), DbErr> {
    use entities::runs;
    use sea_orm::sea_query::Expr;
    runs::Entity::update_many()
        .col_expr(runs::Column::Status, Expr::value(run.status))
        .col_expr(runs::Column::StopReason, Expr::value(run.stop_reason))
        .col_expr(
            runs::Column::AssistantMessageId,
            Expr::value(run.assistant_message_id),
        )
        .col_expr(runs::Column::Iterations, Expr::value(run.iterations as i32))
        .col_expr(
            runs::Column::InputTokens,
            Expr::value(run.input_tokens as i64),
        )
        .col_expr(
            runs::Column::OutputTokens,
            Expr::value(run.output_tokens as i64),
        )
        .col_expr(runs::Column::Error, Expr::value(run.error))
        .col_expr(runs::Column::FinishedAt, Expr::value(Utc::now()))
        .col_expr(runs::Column::Draft, Expr::value(Option::<String>::None))
        .filter(runs::Column::Id.eq(run.id))
        .exec(db)
        .await?;
    Ok(())
}

/// Marks a run running again (a paused run resumed).
pub async fn resume_run<C: sea_orm::ConnectionTrait>(db: &C, run_id: &RunId) -> Result<(), DbErr> {
    use entities::runs;
    use sea_orm::sea_query::Expr;
    runs::Entity::update_many()
        .col_expr(runs::Column::Status, Expr::value(RunStatus::Running))
        .col_expr(
            runs::Column::StopReason,
            Expr::value(Option::<String>::None),
        )
        .col_expr(
            runs::Column::FinishedAt,
            Expr::value(Option::<chrono::DateTime<Utc>>::None),
        )
        .filter(runs::Column::Id.eq(run_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Everything the end of a turn writes, on `db` (a transaction the caller holds, so they
/// are kept together): the answer, the active leaf (with an answer: the chat's `updated_at`
/// set to `updated_at`), the run's outcome, and the ask it answered (so a resumed answer is
/// delivered exactly once).
pub async fn complete_turn<C: sea_orm::ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
    nodes: &[crate::chat::tree::MessageNode],
    active_leaf: Option<&MessageId>,
    run: FinishedRun,
    completes_ask: Option<&entities::ids::AskCorrelationId>,
    updated_at: chrono::DateTime<Utc>,
) -> Result<(), DbErr> {
    insert_nodes(db, chat_id, nodes).await?;
    if !nodes.is_empty() {
        set_active_leaf_at(db, chat_id, active_leaf, updated_at).await?;
    }
    for node in nodes {
        if let Some(parts) = &node.parts {
            crate::chat::artifacts::link_parts(db, parts, &node.id).await?;
            // A picture the run made (generate_image) is kept with its answer.
            crate::chat::attachments::link_parts(db, chat_id, parts, &node.id).await?;
        }
    }
    finish_run(db, run).await?;
    if let Some(correlation_id) = completes_ask {
        crate::chat::asks::complete(db, correlation_id).await?;
    }
    Ok(())
}

/// A paused run: its pending ask and its status, on `db` (a transaction the caller holds).
pub async fn pause_run<C: sea_orm::ConnectionTrait>(
    db: &C,
    ask: crate::chat::asks::NewAsk,
    run: FinishedRun,
) -> Result<(), DbErr> {
    crate::chat::asks::insert(db, ask).await?;
    finish_run(db, run).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: usize) -> ToolCallRecord {
        ToolCallRecord {
            id: format!("call_{id}"),
            name: "calculator".into(),
            arguments: serde_json::json!({"expression": "1+1"}),
            success: true,
            preview: "Result: 2.0".into(),
            error: None,
            round: 1,
            content: None,
        }
    }

    #[test]
    fn a_tool_record_grows_in_order_and_stops_at_its_limit() {
        let first = extend_tool_record(None, vec![call(0), call(1)]);
        let second = extend_tool_record(Some(first), vec![call(2)]);
        let ids: Vec<&str> = second
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["call_0", "call_1", "call_2"]);

        let full = extend_tool_record(None, (0..MAX_RECORDED_TOOL_CALLS + 5).map(call).collect());
        assert_eq!(full.as_array().unwrap().len(), MAX_RECORDED_TOOL_CALLS);
        let still_full = extend_tool_record(Some(full), vec![call(999)]);
        let items = still_full.as_array().unwrap();
        assert_eq!(items.len(), MAX_RECORDED_TOOL_CALLS);
        assert_eq!(
            items.last().unwrap()["id"],
            format!("call_{}", MAX_RECORDED_TOOL_CALLS - 1)
        );
    }

    #[test]
    fn a_record_that_is_not_a_list_is_started_again() {
        let record = extend_tool_record(Some(serde_json::json!({"bad": true})), vec![call(7)]);
        assert_eq!(record.as_array().unwrap().len(), 1);
    }
}
