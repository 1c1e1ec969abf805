//! `Chats`: creating, listing, renaming and deleting a user's chats in the database. Every
//! query filters by owner; nothing here hands out another user's row.

use chrono::Utc;
use entities::chats;
use entities::ids::{ChatId, MessageId, RunId, UserId};
use entities::runs::RunStatus;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

use crate::config::ContextStrategy;
use crate::error::AppError;

/// Longest chat title in characters.
pub const MAX_TITLE_CHARS: usize = 200;
/// Title of a chat created without one.
const DEFAULT_TITLE: &str = "New chat";

/// Why a chat could not be found, named or changed.
#[derive(Debug, thiserror::Error)]
pub enum ChatStoreError {
    /// No such chat, or someone else's (never said which).
    #[error("chat not found")]
    NotFound,
    #[error("title must be 1-{MAX_TITLE_CHARS} characters")]
    InvalidTitle,
    #[error(transparent)]
    Database(#[from] DbErr),
}

impl From<ChatStoreError> for AppError {
    fn from(err: ChatStoreError) -> Self {
        match err {
            ChatStoreError::NotFound => AppError::NotFound("chat"),
            ChatStoreError::InvalidTitle => AppError::InvalidRequest(err.to_string()),
            ChatStoreError::Database(db) => AppError::Database(db),
        }
    }
}

/// Checks and trims a title.
pub fn parse_title(raw: &str) -> Result<String, ChatStoreError> {
    let title = raw.trim();
    if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
        return Err(ChatStoreError::InvalidTitle);
    }
    Ok(title.to_string())
}

#[derive(Clone)]
pub struct Chats {
    db: DatabaseConnection,
}

impl Chats {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    pub async fn create(
        &self,
        owner: &UserId,
        title: Option<String>,
        ephemeral: bool,
    ) -> Result<chats::Model, DbErr> {
        self.create_with(owner, title, ephemeral, None).await
    }

    /// `create`, with the chat's context strategy (`None`: the server's default).
    pub async fn create_with(
        &self,
        owner: &UserId,
        title: Option<String>,
        ephemeral: bool,
        context_strategy: Option<ContextStrategy>,
    ) -> Result<chats::Model, DbErr> {
        let now = Utc::now();
        chats::ActiveModel {
            id: Set(ChatId::generate()),
            user_id: Set(owner.clone()),
            agent_id: Set(None),
            title: Set(title.unwrap_or_else(|| DEFAULT_TITLE.to_string())),
            active_leaf_id: Set(None),
            ephemeral: Set(ephemeral),
            embedder: Set(None),
            context_strategy: Set(context_strategy.map(|s| s.as_str().to_string())),
            history_summary: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(&self.db)
        .await
    }

    /// The chat if `owner` owns it; `NotFound` otherwise (also for someone else's chat).
    pub async fn get_owned(
        &self,
        owner: &UserId,
        id: &ChatId,
    ) -> Result<chats::Model, ChatStoreError> {
        chats::Entity::find_by_id(id.clone())
            .filter(chats::Column::UserId.eq(owner))
            .one(&self.db)
            .await?
            .ok_or(ChatStoreError::NotFound)
    }

    /// The owner's chats, most recently updated first.
    pub async fn list(&self, owner: &UserId, limit: u64) -> Result<Vec<chats::Model>, DbErr> {
        chats::Entity::find()
            .filter(chats::Column::UserId.eq(owner))
            .filter(chats::Column::Ephemeral.eq(false))
            .order_by_desc(chats::Column::UpdatedAt)
            .limit(limit)
            .all(&self.db)
            .await
    }

    /// Renames the chat and/or sets its context strategy; what is `None` stays as it is.
    pub async fn update(
        &self,
        owner: &UserId,
        id: &ChatId,
        title: Option<String>,
        context_strategy: Option<ContextStrategy>,
    ) -> Result<chats::Model, ChatStoreError> {
        let chat = self.get_owned(owner, id).await?;
        let mut active: chats::ActiveModel = chat.into();
        if let Some(title) = title {
            active.title = Set(title);
            active.updated_at = Set(Utc::now());
        }
        if let Some(strategy) = context_strategy {
            active.context_strategy = Set(Some(strategy.as_str().to_string()));
        }
        Ok(active.update(&self.db).await?)
    }

    /// Keeps a chat made by a `/v1` request (someone opened it in the UI): it joins the chat
    /// list and is no longer swept.
    pub async fn keep(&self, chat: chats::Model) -> Result<chats::Model, DbErr> {
        if !chat.ephemeral {
            return Ok(chat);
        }
        let mut active: chats::ActiveModel = chat.into();
        active.ephemeral = Set(false);
        active.update(&self.db).await
    }

    /// Chats made by `/v1` requests and not used since `before`, at most `limit` of them.
    pub async fn unused_api_chats(
        &self,
        before: chrono::DateTime<Utc>,
        limit: u64,
    ) -> Result<Vec<ChatId>, DbErr> {
        let rows = chats::Entity::find()
            .filter(chats::Column::Ephemeral.eq(true))
            .filter(chats::Column::UpdatedAt.lt(before))
            .limit(limit)
            .all(&self.db)
            .await?;
        Ok(rows.into_iter().map(|chat| chat.id).collect())
    }

    /// Deletes a chat whoever owns it (for the sweeper), with everything in it.
    pub async fn delete_swept(&self, id: &ChatId) -> Result<(), DbErr> {
        chats::Entity::delete_by_id(id.clone())
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// Deletes the chat and, through foreign keys, everything in it.
    pub async fn delete(&self, owner: &UserId, id: &ChatId) -> Result<(), ChatStoreError> {
        let chat = self.get_owned(owner, id).await?;
        chats::Entity::delete_by_id(chat.id).exec(&self.db).await?;
        Ok(())
    }
}

/// The context strategy a chat row names, or `default` when it names none.
pub fn context_strategy_of(chat: &chats::Model, default: ContextStrategy) -> ContextStrategy {
    chat.context_strategy
        .as_deref()
        .and_then(ContextStrategy::parse)
        .unwrap_or(default)
}

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
pub async fn store_history_summary(
    db: &DatabaseConnection,
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
) -> Result<(Vec<super::tree::MessageNode>, Option<MessageId>), DbErr> {
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
        .map(|row| super::tree::MessageNode {
            id: row.id,
            parent_id: row.parent_id,
            role: row.role,
            content: row.content,
            parts: row.parts,
            tool_calls: row.tool_calls,
            tool_call_id: row.tool_call_id,
            run_id: row.run_id,
            stop_reason: row.stop_reason,
            seq: row.seq,
            created_at: row.created_at,
        })
        .collect();
    Ok((nodes, chat.active_leaf_id))
}

/// Stores new messages and the chat's new active leaf in one transaction.
pub async fn store_messages(
    db: &DatabaseConnection,
    chat_id: &ChatId,
    nodes: &[super::tree::MessageNode],
    active_leaf: Option<&MessageId>,
) -> Result<(), DbErr> {
    use sea_orm::TransactionTrait;
    let txn = db.begin().await?;
    insert_nodes(&txn, chat_id, nodes).await?;
    set_active_leaf_in(&txn, chat_id, active_leaf).await?;
    txn.commit().await
}

async fn insert_nodes<C: sea_orm::ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
    nodes: &[super::tree::MessageNode],
) -> Result<(), DbErr> {
    use entities::messages;
    for node in nodes {
        messages::ActiveModel {
            id: Set(node.id.clone()),
            chat_id: Set(chat_id.clone()),
            parent_id: Set(node.parent_id.clone()),
            role: Set(node.role),
            content: Set(node.content.clone()),
            parts: Set(node.parts.clone()),
            tool_calls: Set(node.tool_calls.clone()),
            tool_call_id: Set(node.tool_call_id.clone()),
            run_id: Set(node.run_id.clone()),
            stop_reason: Set(node.stop_reason.clone()),
            seq: Set(node.seq),
            created_at: Set(node.created_at),
        }
        .insert(db)
        .await?;
    }
    Ok(())
}

pub async fn set_active_leaf(
    db: &DatabaseConnection,
    chat_id: &ChatId,
    active_leaf: Option<&MessageId>,
) -> Result<(), DbErr> {
    set_active_leaf_in(db, chat_id, active_leaf).await
}

async fn set_active_leaf_in<C: sea_orm::ConnectionTrait>(
    db: &C,
    chat_id: &ChatId,
    active_leaf: Option<&MessageId>,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    chats::Entity::update_many()
        .col_expr(
            chats::Column::ActiveLeafId,
            Expr::value(active_leaf.map(MessageId::as_str)),
        )
        .col_expr(chats::Column::UpdatedAt, Expr::value(Utc::now()))
        .filter(chats::Column::Id.eq(chat_id))
        .exec(db)
        .await?;
    Ok(())
}

/// A run as first recorded.
pub struct NewRun<'a> {
    pub id: &'a RunId,
    pub chat_id: &'a ChatId,
    pub user_id: &'a UserId,
    pub user_message_id: Option<&'a MessageId>,
    pub options: Option<serde_json::Value>,
}

pub async fn insert_run(db: &DatabaseConnection, run: NewRun<'_>) -> Result<(), DbErr> {
    entities::runs::ActiveModel {
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
    }
    .insert(db)
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
}

/// Adds `calls` to the run's record of tool calls, up to [`MAX_RECORDED_TOOL_CALLS`]. The
/// caller serialises writes for one run (its chat session handles them one at a time).
pub async fn append_tool_calls(
    db: &DatabaseConnection,
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
    pub stop_reason: &'static str,
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
pub async fn resume_run(db: &DatabaseConnection, run_id: &RunId) -> Result<(), DbErr> {
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

/// Everything the end of a turn writes, in one transaction: the answer, the active leaf, the
/// run's outcome, and the ask it answered (so a resumed answer is delivered exactly once).
pub async fn complete_turn(
    db: &DatabaseConnection,
    chat_id: &ChatId,
    nodes: &[super::tree::MessageNode],
    active_leaf: Option<&MessageId>,
    run: FinishedRun,
    completes_ask: Option<&str>,
) -> Result<(), DbErr> {
    use sea_orm::TransactionTrait;
    let txn = db.begin().await?;
    insert_nodes(&txn, chat_id, nodes).await?;
    if !nodes.is_empty() {
        set_active_leaf_in(&txn, chat_id, active_leaf).await?;
    }
    for node in nodes {
        if let Some(parts) = &node.parts {
            super::artifacts::link_parts(&txn, parts, &node.id).await?;
        }
    }
    finish_run(&txn, run).await?;
    if let Some(correlation_id) = completes_ask {
        super::asks::complete(&txn, correlation_id).await?;
    }
    txn.commit().await
}

/// A paused run: its pending ask and its status, in one transaction.
pub async fn pause_run(
    db: &DatabaseConnection,
    ask: super::asks::NewAsk,
    run: FinishedRun,
) -> Result<(), DbErr> {
    use sea_orm::TransactionTrait;
    let txn = db.begin().await?;
    super::asks::insert(&txn, ask).await?;
    finish_run(&txn, run).await?;
    txn.commit().await
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
