//! Artifacts (create_artifact / update_artifact, docs/spec.md#artifacts): versioned deliverables
//! of a chat.
//! The `ChatSession` is their single writer — it keeps the identifier → head directory that
//! makes "unique per chat" and "versions increase by one" hold without races — and every
//! version is kept. Reads for the REST API go to the database, scoped by chat.

use entities::ids::{ArtifactId, ArtifactVersionId, ChatId, MessageId};
use std::collections::HashMap;

use actix::prelude::*;
use chrono::Utc;
use entities::{artifact_versions, artifacts};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder, Set, TransactionTrait,
};
use serde::Serialize;

use super::session::ChatSession;

/// `artifacts.kind` of a model-made artifact (documents are `document`).
pub const KIND_ARTIFACT: &str = "artifact";
/// Longest artifact title in characters.
pub const MAX_TITLE_CHARS: usize = 256;
/// Longest `language` in characters.
pub const MAX_LANGUAGE_CHARS: usize = 32;
/// The fixed MIME types artifacts may have (docs/spec.md#artifacts); code is `text/x-{language}`.
pub const FIXED_TYPES: [&str; 6] = [
    "text/markdown",
    "text/html",
    "text/plain",
    "image/svg+xml",
    "text/x-mermaid",
    "application/json",
];

/// Why an artifact could not be written, each with the words the model sees.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArtifactError {
    #[error("{0}")]
    Invalid(String),
    #[error("an artifact with identifier {0:?} already exists in this chat")]
    Exists(String),
    #[error("there is no artifact with identifier {0:?} in this chat")]
    NotFound(String),
    #[error("database error: {0}")]
    Database(#[from] DbErr),
}

/// Checks an identifier: 1–`max` characters of ASCII letters, digits, `.`, `_`, `-`.
pub fn check_identifier(identifier: &str, max: usize) -> Result<(), ArtifactError> {
    let valid_chars = identifier
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if identifier.is_empty() || identifier.len() > max || !valid_chars {
        return Err(ArtifactError::Invalid(format!(
            "identifier must be 1-{max} characters of ASCII letters, digits, '.', '_' and '-' \
             (got {:?})",
            identifier.chars().take(140).collect::<String>()
        )));
    }
    Ok(())
}

/// Checks a MIME type against the artifact types (docs/spec.md#artifacts); returns it lowercased.
pub fn check_type(mime_type: &str) -> Result<String, ArtifactError> {
    let mime = mime_type.trim().to_ascii_lowercase();
    if FIXED_TYPES.contains(&mime.as_str()) {
        return Ok(mime);
    }
    if let Some(language) = mime.strip_prefix("text/x-")
        && !language.is_empty()
        && language.len() <= MAX_LANGUAGE_CHARS
        && language
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'#' | b'.' | b'_' | b'-'))
    {
        return Ok(mime);
    }
    Err(ArtifactError::Invalid(format!(
        "type {mime_type:?} is not supported; use one of {} or text/x-{{language}} for code",
        FIXED_TYPES.join(", ")
    )))
}

/// A new artifact, checked.
#[derive(Debug, Clone)]
pub struct NewArtifact {
    pub identifier: String,
    pub title: String,
    pub mime_type: String,
    pub language: Option<String>,
    pub content: String,
}

/// An artifact's head as the session keeps it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArtifactHead {
    pub id: ArtifactId,
    pub identifier: String,
    pub title: String,
    pub mime_type: String,
    pub language: Option<String>,
    pub version: i32,
}

/// The model-made artifacts of a chat, by identifier.
pub type Directory = HashMap<String, ArtifactHead>;

/// Loads a chat's artifact directory.
pub async fn load_directory(db: &DatabaseConnection, chat_id: &ChatId) -> Result<Directory, DbErr> {
    let rows = artifacts::Entity::find()
        .filter(artifacts::Column::ChatId.eq(chat_id))
        .filter(artifacts::Column::Kind.eq(KIND_ARTIFACT))
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            (
                row.identifier.clone(),
                ArtifactHead {
                    id: row.id,
                    identifier: row.identifier,
                    title: row.title,
                    mime_type: row.mime_type,
                    language: row.language,
                    version: row.latest_version,
                },
            )
        })
        .collect())
}

async fn insert_version<C: ConnectionTrait>(
    db: &C,
    artifact_id: &ArtifactId,
    version: i32,
    content: String,
) -> Result<(), DbErr> {
    artifact_versions::ActiveModel {
        id: Set(ArtifactVersionId::generate()),
        artifact_id: Set(artifact_id.clone()),
        version: Set(version),
        content: Set(content),
        message_id: Set(None),
        created_at: Set(Utc::now()),
    }
    .insert(db)
    .await
    .map(|_| ())
}

/// Records which assistant message delivered each artifact version in `parts`.
pub async fn link_parts<C: ConnectionTrait>(
    db: &C,
    parts: &serde_json::Value,
    message_id: &MessageId,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    let Some(parts) = parts.as_array() else {
        return Ok(());
    };
    for part in parts.iter().filter(|p| p["type"] == "artifact") {
        let (Some(id), Some(version)) = (part["artifact_id"].as_str(), part["version"].as_i64())
        else {
            continue;
        };
        artifact_versions::Entity::update_many()
            .col_expr(
                artifact_versions::Column::MessageId,
                Expr::value(message_id),
            )
            .filter(artifact_versions::Column::ArtifactId.eq(id))
            .filter(artifact_versions::Column::Version.lte(version as i32))
            .filter(artifact_versions::Column::MessageId.is_null())
            .exec(db)
            .await?;
        artifacts::Entity::update_many()
            .col_expr(artifacts::Column::MessageId, Expr::value(message_id))
            .filter(artifacts::Column::Id.eq(id))
            .filter(artifacts::Column::MessageId.is_null())
            .exec(db)
            .await?;
    }
    Ok(())
}

/// The message part that carries an artifact version (deliverables are parts:
/// docs/spec.md#metadata-and-parts).
pub fn part(head: &ArtifactHead, content: &str) -> serde_json::Value {
    serde_json::json!({
        "type": "artifact",
        "artifact_id": head.id,
        "identifier": head.identifier,
        "title": head.title,
        "mime_type": head.mime_type,
        "language": head.language,
        "version": head.version,
        "content": content,
    })
}

/// The key of an `x_artifact.*` event that carries the artifact itself (`part`): on `/v1`
/// streams, where it is the deliverable a client receives; the chat API's stream leaves it out
/// (the UI reads artifacts from the chat), and so does `x_metadata` (the deliverable is in the
/// answer, not repeated among the progress).
pub const DELIVERABLE_KEY: &str = "artifact";

/// An `x_artifact.created` / `.updated` event's payload: `fields` and the artifact as it now
/// is.
pub fn event_payload(
    mut fields: serde_json::Value,
    head: &ArtifactHead,
    content: &str,
) -> serde_json::Value {
    fields[DELIVERABLE_KEY] = part(head, content);
    fields
}

/// The artifact an `x_artifact.*` event carries, as a `/v1` answer's part: the stored part
/// with type `x_artifact`.
pub fn deliverable_of(payload: &serde_json::Value) -> Option<serde_json::Value> {
    let mut part = payload.get(DELIVERABLE_KEY)?.clone();
    part["type"] = serde_json::json!("x_artifact");
    Some(part)
}

/// Creates artifact version 1.
#[derive(Message)]
#[rtype(result = "Result<ArtifactHead, ArtifactError>")]
pub struct CreateArtifact(pub NewArtifact);

/// Replaces an artifact's content with a new version.
#[derive(Message)]
#[rtype(result = "Result<ArtifactHead, ArtifactError>")]
pub struct UpdateArtifact {
    pub identifier: String,
    pub content: String,
}

/// Deletes an artifact and every version.
#[derive(Message)]
#[rtype(result = "Result<bool, ArtifactError>")]
pub struct DeleteArtifact {
    pub artifact_id: ArtifactId,
}

impl Handler<CreateArtifact> for ChatSession {
    type Result = AtomicResponse<Self, Result<ArtifactHead, ArtifactError>>;

    fn handle(&mut self, msg: CreateArtifact, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let new = msg.0;
        if self.artifacts.contains_key(&new.identifier) {
            return AtomicResponse::new(Box::pin(fut::ready(Err(ArtifactError::Exists(
                new.identifier,
            )))));
        }
        let head = ArtifactHead {
            id: ArtifactId::generate(),
            identifier: new.identifier.clone(),
            title: new.title.clone(),
            mime_type: new.mime_type.clone(),
            language: new.language.clone(),
            version: 1,
        };
        let writer = self.writer.clone();
        let chat_id = self.chat_id.clone();
        let stored = head.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let write = writer.begin().await?;
                let txn = write.db().begin().await?;
                let now = Utc::now();
                artifacts::ActiveModel {
                    id: Set(stored.id.clone()),
                    chat_id: Set(chat_id),
                    identifier: Set(new.identifier),
                    title: Set(new.title),
                    mime_type: Set(new.mime_type),
                    language: Set(new.language),
                    kind: Set(KIND_ARTIFACT.into()),
                    latest_version: Set(1),
                    message_id: Set(None),
                    created_at: Set(now),
                    updated_at: Set(now),
                    deleted_at: Set(None),
                }
                .insert(&txn)
                .await?;
                insert_version(&txn, &stored.id, 1, new.content).await?;
                txn.commit().await?;
                write.commit().await
            }
            .into_actor(self)
            .map(move |result, act: &mut Self, _| {
                result?;
                act.artifacts.insert(head.identifier.clone(), head.clone());
                Ok(head)
            }),
        ))
    }
}

impl Handler<UpdateArtifact> for ChatSession {
    type Result = AtomicResponse<Self, Result<ArtifactHead, ArtifactError>>;

    fn handle(&mut self, msg: UpdateArtifact, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let Some(current) = self.artifacts.get(&msg.identifier) else {
            return AtomicResponse::new(Box::pin(fut::ready(Err(ArtifactError::NotFound(
                msg.identifier,
            )))));
        };
        let mut head = current.clone();
        head.version += 1;
        let writer = self.writer.clone();
        let (id, version) = (head.id.clone(), head.version);
        AtomicResponse::new(Box::pin(
            async move {
                use sea_orm::sea_query::Expr;
                let write = writer.begin().await?;
                let txn = write.db().begin().await?;
                insert_version(&txn, &id, version, msg.content).await?;
                artifacts::Entity::update_many()
                    .col_expr(artifacts::Column::LatestVersion, Expr::value(version))
                    .col_expr(artifacts::Column::UpdatedAt, Expr::value(Utc::now()))
                    .filter(artifacts::Column::Id.eq(id))
                    .exec(&txn)
                    .await?;
                txn.commit().await?;
                write.commit().await
            }
            .into_actor(self)
            .map(move |result, act: &mut Self, _| {
                result?;
                act.artifacts.insert(head.identifier.clone(), head.clone());
                Ok(head)
            }),
        ))
    }
}

impl Handler<DeleteArtifact> for ChatSession {
    type Result = AtomicResponse<Self, Result<bool, ArtifactError>>;

    fn handle(&mut self, msg: DeleteArtifact, _: &mut Self::Context) -> Self::Result {
        self.touch();
        let Some(identifier) = self
            .artifacts
            .values()
            .find(|head| head.id == msg.artifact_id)
            .map(|head| head.identifier.clone())
        else {
            return AtomicResponse::new(Box::pin(fut::ready(Ok(false))));
        };
        let writer = self.writer.clone();
        AtomicResponse::new(Box::pin(
            async move {
                let write = writer.begin().await?;
                // Versions go with it (ON DELETE CASCADE).
                artifacts::Entity::delete_by_id(msg.artifact_id)
                    .exec(write.db())
                    .await?;
                write.commit().await
            }
            .into_actor(self)
            .map(move |result, act: &mut Self, _| {
                result?;
                act.artifacts.remove(&identifier);
                Ok(true)
            }),
        ))
    }
}

/// An artifact as the REST API shows it.
#[derive(Debug, Serialize)]
pub struct ArtifactView {
    pub id: ArtifactId,
    pub identifier: String,
    pub title: String,
    #[serde(rename = "type")]
    pub mime_type: String,
    pub language: Option<String>,
    pub version: i32,
    pub message_id: Option<MessageId>,
    pub created_at: chrono::DateTime<Utc>,
    pub updated_at: chrono::DateTime<Utc>,
}

impl From<artifacts::Model> for ArtifactView {
    fn from(row: artifacts::Model) -> Self {
        Self {
            id: row.id,
            identifier: row.identifier,
            title: row.title,
            mime_type: row.mime_type,
            language: row.language,
            version: row.latest_version,
            message_id: row.message_id,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

/// A chat's model-made artifacts, most recently updated first.
pub async fn list(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<Vec<artifacts::Model>, DbErr> {
    artifacts::Entity::find()
        .filter(artifacts::Column::ChatId.eq(chat_id))
        .filter(artifacts::Column::Kind.eq(KIND_ARTIFACT))
        .order_by_desc(artifacts::Column::UpdatedAt)
        .all(db)
        .await
}

/// One artifact of a chat, by id or identifier.
pub async fn find(
    db: &DatabaseConnection,
    chat_id: &ChatId,
    key: &str,
) -> Result<Option<artifacts::Model>, DbErr> {
    use sea_orm::Condition;
    artifacts::Entity::find()
        .filter(artifacts::Column::ChatId.eq(chat_id))
        .filter(artifacts::Column::Kind.eq(KIND_ARTIFACT))
        .filter(
            Condition::any()
                .add(artifacts::Column::Id.eq(key))
                .add(artifacts::Column::Identifier.eq(key)),
        )
        .one(db)
        .await
}

/// An artifact's versions, oldest first.
pub async fn versions(
    db: &DatabaseConnection,
    artifact_id: &ArtifactId,
) -> Result<Vec<artifact_versions::Model>, DbErr> {
    artifact_versions::Entity::find()
        .filter(artifact_versions::Column::ArtifactId.eq(artifact_id))
        .order_by_asc(artifact_versions::Column::Version)
        .all(db)
        .await
}

/// One version of an artifact.
pub async fn version(
    db: &DatabaseConnection,
    artifact_id: &ArtifactId,
    version: i32,
) -> Result<Option<artifact_versions::Model>, DbErr> {
    artifact_versions::Entity::find()
        .filter(artifact_versions::Column::ArtifactId.eq(artifact_id))
        .filter(artifact_versions::Column::Version.eq(version))
        .one(db)
        .await
}

#[cfg(test)]
mod tests;
