//! A chat's messages as stored: loading them as tree nodes with the active leaf, storing new
//! ones and the leaf in one transaction, and the rolling summary of the oldest history.

use chrono::Utc;
use entities::chats;
use entities::ids::{ChatId, MessageId};
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder, Set};

/// A rolling summary of the oldest messages of a chat's history (`agent::summary`): its text,
/// how many of the left-out messages (those with text, oldest first) it covers, and a digest
/// of them, so it is reused only for the same messages.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HistorySummary {
    /// The first message (of those with text) the summary is of; older ones were left out
    /// without being read.
    #[serde(default)]
    pub from: usize,
    pub covers: usize,
    pub digest: String,
    pub text: String,
}

/// The chat's kept history summary, if any (an unreadable one counts as none).
pub async fn history_summary(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<Option<HistorySummary>, DbErr> {
    let chat = chats::Entity::find_by_id(chat_id.clone()).one(db).await?;
    Ok(chat
        .and_then(|chat| chat.history_summary)
        .and_then(|value| serde_json::from_value(value).ok()))
}

/// Keeps `summary` as the chat's history summary, replacing the one before.
pub async fn store_history_summary<C: sea_orm::ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
    summary: &HistorySummary,
) -> Result<(), DbErr> {
    let value = serde_json::to_value(summary).map_err(|err| DbErr::Custom(err.to_string()))?;
    chats::Entity::update_many()
        .col_expr(
            chats::Column::HistorySummary,
            sea_orm::sea_query::Expr::value(value),
        )
        .filter(chats::Column::Id.eq(chat_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Loads a chat's messages as tree nodes, with its stored active leaf.
pub async fn load_messages(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<(Vec<crate::chat::tree::MessageNode>, Option<MessageId>), DbErr> {
    use entities::messages;
    let chat = chats::Entity::find_by_id(chat_id.clone())
        .one(db)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(format!("chat {chat_id}")))?;
    let rows = messages::Entity::find()
        .filter(messages::Column::ChatId.eq(chat_id))
        .order_by_asc(messages::Column::Seq)
        .all(db)
        .await?;
    let nodes = rows
        .into_iter()
        .map(|row| crate::chat::tree::MessageNode {
            id: row.id,
            parent_id: row.parent_id,
            role: row.role,
            content: row.content,
            parts: row.parts,
            tool_calls: row.tool_calls,
            tool_call_id: row.tool_call_id,
            run_id: row.run_id,
            stop_reason: row.stop_reason,
            reasoning: row.reasoning.map(|text| crate::chat::tree::Reasoning {
                text,
                duration_ms: row.reasoning_ms.unwrap_or(0).max(0) as u64,
            }),
            model: row.model,
            seq: row.seq,
            created_at: row.created_at,
            tokens: Default::default(),
        })
        .collect();
    Ok((nodes, chat.active_leaf_id))
}

/// Stores new messages and the chat's new active leaf in one transaction.
pub async fn store_messages<
    C: sea_orm::ConnectionTrait
        + sea_orm::TransactionTrait<Transaction = sea_orm::DatabaseTransaction>,
>(
    db: &C,
    chat_id: &ChatId,
    nodes: &[crate::chat::tree::MessageNode],
    active_leaf: Option<&MessageId>,
) -> Result<(), DbErr> {
    let txn = db.begin().await?;
    insert_nodes(&txn, chat_id, nodes).await?;
    set_active_leaf_in(&txn, chat_id, active_leaf).await?;
    txn.commit().await
}

/// Inserts `nodes` (parents first) into `chat_id`, within the caller's transaction.
pub async fn insert_nodes<C: sea_orm::ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
    nodes: &[crate::chat::tree::MessageNode],
) -> Result<(), DbErr> {
    use entities::messages;
    for node in nodes {
        // Not read back (no `RETURNING`): the node is what was written.
        let row = messages::ActiveModel {
            id: Set(node.id.clone()),
            chat_id: Set(chat_id.clone()),
            parent_id: Set(node.parent_id.clone()),
            role: Set(node.role),
            content: Set(node.content.clone()),
            parts: Set(node.parts.clone()),
            tool_calls: Set(node.tool_calls.clone()),
            tool_call_id: Set(node.tool_call_id.clone()),
            run_id: Set(node.run_id.clone()),
            stop_reason: Set(node.stop_reason),
            reasoning: Set(node.reasoning.as_ref().map(|r| r.text.clone())),
            reasoning_ms: Set(node
                .reasoning
                .as_ref()
                .map(|r| i64::try_from(r.duration_ms).unwrap_or(i64::MAX))),
            model: Set(node.model.clone()),
            seq: Set(node.seq),
            created_at: Set(node.created_at),
        };
        messages::Entity::insert(row)
            .exec_without_returning(db)
            .await?;
        if node.role == entities::messages::MessageRole::User
            && let Some(parts) = &node.parts
        {
            crate::chat::attachments::link_parts(db, chat_id, parts, &node.id).await?;
        }
    }
    Ok(())
}

/// Deletes a message nothing follows, and sets the chat's active leaf, in one transaction.
pub async fn delete_leaf<
    C: sea_orm::ConnectionTrait
        + sea_orm::TransactionTrait<Transaction = sea_orm::DatabaseTransaction>,
>(
    db: &C,
    chat_id: &ChatId,
    message_id: &MessageId,
    active_leaf: Option<&MessageId>,
) -> Result<(), DbErr> {
    let txn = db.begin().await?;
    entities::messages::Entity::delete_many()
        .filter(entities::messages::Column::Id.eq(message_id))
        .filter(entities::messages::Column::ChatId.eq(chat_id))
        .exec(&txn)
        .await?;
    set_active_leaf_in(&txn, chat_id, active_leaf).await?;
    txn.commit().await
}

pub async fn set_active_leaf<C: sea_orm::ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
    active_leaf: Option<&MessageId>,
) -> Result<(), DbErr> {
    set_active_leaf_in(db, chat_id, active_leaf).await
}

pub(super) async fn set_active_leaf_in<C: sea_orm::ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
    active_leaf: Option<&MessageId>,
) -> Result<(), DbErr> {
    set_active_leaf_at(db, chat_id, active_leaf, updated_now()).await
}

/// The time a write sets as its chat's `updated_at`: now, to the microsecond, so that it reads
/// back the same from SQLite and PostgreSQL (whose timestamps keep microseconds). The chat
/// search's indexer compares a turn's reported time with the one it reads.
pub fn updated_now() -> chrono::DateTime<Utc> {
    use chrono::SubsecRound;
    Utc::now().trunc_subsecs(6)
}

/// `set_active_leaf_in`, with the chat's `updated_at` set to `updated_at`.
pub(super) async fn set_active_leaf_at<C: sea_orm::ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
    active_leaf: Option<&MessageId>,
    updated_at: chrono::DateTime<Utc>,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    chats::Entity::update_many()
        .col_expr(
            chats::Column::ActiveLeafId,
            Expr::value(active_leaf.map(MessageId::as_str)),
        )
        .col_expr(chats::Column::UpdatedAt, Expr::value(updated_at))
        .filter(chats::Column::Id.eq(chat_id))
        .exec(db)
        .await?;
    Ok(())
}
