//! A stored chat read into its export: the chat, every message, the artifacts with every
//! version (documents are files, not carried), the memories (without their vectors) and the
//! runs' usage. Reads only; the caller checked the chat is the requester's.

use chrono::Utc;
use entities::{artifact_versions, artifacts, chats, memories, runs};
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder};

use super::{
    ChatExport, ExportedAgent, ExportedArtifact, ExportedChat, ExportedMemory, ExportedMessage,
    ExportedRun, ExportedVersion, FORMAT, VERSION,
};
use crate::chat::artifacts::KIND_ARTIFACT;
use crate::chat::persistence::load_messages;

/// `chat` (already known to be the caller's) with everything in it.
pub async fn export_chat(
    db: &DatabaseConnection,
    chat: &chats::Model,
) -> Result<ChatExport, DbErr> {
    let (nodes, active_leaf) = load_messages(db, &chat.id).await?;
    let agent = match &chat.agent_id {
        Some(id) => entities::agents::Entity::find_by_id(id.clone())
            .one(db)
            .await?
            .map(|agent| ExportedAgent {
                id: agent.id.into_string(),
                name: agent.name,
                model: agent.model,
            }),
        None => None,
    };
    let messages = nodes
        .into_iter()
        .map(|node| ExportedMessage {
            id: node.id.into_string(),
            parent_id: node.parent_id.map(|id| id.into_string()),
            role: node.role,
            content: node.content,
            parts: node.parts,
            tool_calls: node.tool_calls,
            tool_call_id: node.tool_call_id,
            stop_reason: node.stop_reason,
            reasoning: node.reasoning,
            model: node.model,
            run_id: node.run_id.map(|id| id.into_string()),
            seq: node.seq,
            created_at: node.created_at,
        })
        .collect();
    Ok(ChatExport {
        format: FORMAT.to_string(),
        version: VERSION,
        exported_at: Utc::now(),
        chat: ExportedChat {
            id: chat.id.to_string(),
            title: chat.title.clone(),
            agent,
            context_strategy: chat.context_strategy.clone(),
            model: chat.model.clone(),
            metadata: chat.metadata.clone(),
            active_leaf_id: active_leaf.map(|id| id.into_string()),
            created_at: chat.created_at,
            updated_at: chat.updated_at,
        },
        messages,
        artifacts: read_artifacts(db, chat).await?,
        memories: read_memories(db, chat).await?,
        runs: read_runs(db, chat).await?,
    })
}

async fn read_artifacts(
    db: &DatabaseConnection,
    chat: &chats::Model,
) -> Result<Vec<ExportedArtifact>, DbErr> {
    let rows = artifacts::Entity::find()
        .filter(artifacts::Column::ChatId.eq(chat.id.clone()))
        .filter(artifacts::Column::Kind.eq(KIND_ARTIFACT))
        .filter(artifacts::Column::DeletedAt.is_null())
        .order_by_asc(artifacts::Column::CreatedAt)
        .find_with_related(artifact_versions::Entity)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(artifact, mut versions)| {
            versions.sort_by_key(|v| v.version);
            ExportedArtifact {
                id: artifact.id.into_string(),
                identifier: artifact.identifier,
                title: artifact.title,
                mime_type: artifact.mime_type,
                language: artifact.language,
                message_id: artifact.message_id.map(|id| id.into_string()),
                created_at: artifact.created_at,
                updated_at: artifact.updated_at,
                versions: versions
                    .into_iter()
                    .map(|v| ExportedVersion {
                        version: v.version,
                        content: v.content,
                        message_id: v.message_id.map(|id| id.into_string()),
                        created_at: v.created_at,
                    })
                    .collect(),
            }
        })
        .collect())
}

async fn read_memories(
    db: &DatabaseConnection,
    chat: &chats::Model,
) -> Result<Vec<ExportedMemory>, DbErr> {
    let rows = memories::Entity::find()
        .filter(memories::Column::ChatId.eq(chat.id.clone()))
        .order_by_asc(memories::Column::CreatedAt)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|m| ExportedMemory {
            content: m.content,
            category: m.category,
            created_at: m.created_at,
            updated_at: m.updated_at,
        })
        .collect())
}

async fn read_runs(
    db: &DatabaseConnection,
    chat: &chats::Model,
) -> Result<Vec<ExportedRun>, DbErr> {
    let rows = runs::Entity::find()
        .filter(runs::Column::ChatId.eq(chat.id.clone()))
        .order_by_asc(runs::Column::CreatedAt)
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|run| ExportedRun {
            id: run.id.into_string(),
            status: run.status.as_str().to_string(),
            stop_reason: run.stop_reason,
            iterations: run.iterations,
            input_tokens: run.input_tokens,
            output_tokens: run.output_tokens,
            options: run.options,
            tool_calls: run.tool_calls,
            created_at: run.created_at,
            finished_at: run.finished_at,
        })
        .collect())
}
