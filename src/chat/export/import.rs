//! A JSON export brought back as a new chat of the importer's. Everything is checked before
//! anything is written (the format and version, every count and length, the tree: one id per
//! message, parents that exist and come first, artifacts numbered 1, 2, …), then the chat, its
//! messages, artifacts and memories are written in one transaction with new ids. No session of
//! the new chat can exist before it commits. Images and documents are files the export does not
//! carry: their parts are left out and counted; runs are not brought back. A copy whose title
//! one of the importer's chats already has is titled apart ("Trip (imported)", "… 2)"), so the
//! chat list never shows two identical entries.

use chrono::Utc;
use entities::ids::{AgentId, ArtifactVersionId, ChatId, MemoryId, UserId};
use entities::{artifact_versions, artifacts, chats, memories};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter,
    QuerySelect, Set,
};

use super::ChatExport;
use super::plan::{NewArtifact, plan};
use crate::chat::artifacts::KIND_ARTIFACT;
use crate::chat::persistence::{MAX_TITLE_CHARS, insert_nodes};
use crate::config::Config;

/// Largest export accepted, in bytes: a long chat with many artifact versions fits.
pub const MAX_IMPORT_BYTES: usize = 32 * 1024 * 1024;

/// Why an export was not imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("this is not a Colloquy chat export ({0})")]
    Unsupported(String),
    #[error("the export cannot be imported: {0}")]
    Invalid(String),
    #[error("the export has {found} {what}; at most {limit} can be imported")]
    TooMany {
        what: &'static str,
        limit: usize,
        found: usize,
    },
    #[error(transparent)]
    Database(#[from] DbErr),
}

/// The server's limits an import is held to, from its configuration.
#[derive(Debug, Clone)]
pub struct ImportLimits {
    pub max_message_chars: usize,
    pub max_identifier_chars: usize,
    pub max_artifact_bytes: usize,
    pub max_memories: usize,
    pub max_memory_chars: usize,
}

impl ImportLimits {
    pub fn of(config: &Config) -> Self {
        Self {
            max_message_chars: config.http.max_message_chars,
            max_identifier_chars: config.artifacts.max_identifier_chars,
            max_artifact_bytes: config.artifacts.max_content_bytes,
            max_memories: config.memory.max_per_chat,
            max_memory_chars: config.memory.max_content_chars,
        }
    }
}

/// What an import made.
#[derive(Debug)]
pub struct Imported {
    pub chat: chats::Model,
    pub messages: usize,
    pub artifacts: usize,
    pub memories: usize,
    /// Image parts left out (their files are not in an export).
    pub images_left_out: usize,
}

/// Imports `export` as a new chat of `owner`'s, with `agent` (one of theirs: the caller chose
/// it, the export's own or their default).
pub async fn import_chat(
    db: &DatabaseConnection,
    owner: &UserId,
    agent: AgentId,
    export: ChatExport,
    limits: &ImportLimits,
) -> Result<Imported, ImportError> {
    let plan = plan(export, limits)?;
    let chat_id = ChatId::generate();
    let now = Utc::now();
    // Under the owner's lock, so two imports of one export at once are titled apart too.
    let txn = crate::db::lock_user(db, owner).await?;
    let taken = titles_like(&txn, owner, &plan.title).await?;
    let chat = chats::ActiveModel {
        id: Set(chat_id.clone()),
        user_id: Set(owner.clone()),
        agent_id: Set(Some(agent)),
        title: Set(distinct_title(&plan.title, &taken)),
        active_leaf_id: Set(plan.active_leaf),
        ephemeral: Set(false),
        embedder: Set(None),
        context_strategy: Set(plan.context_strategy),
        model: Set(plan.model),
        history_summary: Set(None),
        metadata: Set(plan.metadata),
        is_vector_store: Set(false),
        pinned_at: Set(None),
        archived_at: Set(None),
        folder_id: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(&txn)
    .await?;
    insert_nodes(&txn, &chat_id, &plan.nodes).await?;
    for artifact in &plan.artifacts {
        artifact.clone().insert(&chat_id, &txn).await?;
    }
    for memory in &plan.memories {
        memories::ActiveModel {
            id: Set(MemoryId::generate()),
            chat_id: Set(chat_id.clone()),
            content: Set(memory.content.clone()),
            category: Set(memory.category.clone()),
            embedding: Set(None),
            embedder: Set(None),
            created_at: Set(memory.created_at),
            updated_at: Set(memory.updated_at),
        }
        .insert(&txn)
        .await?;
    }
    txn.commit().await?;
    Ok(Imported {
        chat,
        messages: plan.nodes.len(),
        artifacts: plan.artifacts.len(),
        memories: plan.memories.len(),
        images_left_out: plan.images_left_out,
    })
}

/// The titles of `owner`'s chats that begin as `title` does (and perhaps a few more: the
/// `LIKE` prefix stops before the first character it would have to escape).
async fn titles_like<C: sea_orm::ConnectionTrait>(
    db: &C,
    owner: &UserId,
    title: &str,
) -> Result<Vec<String>, DbErr> {
    let prefix: String = title
        .chars()
        .take_while(|c| !matches!(c, '%' | '_' | '\\'))
        .collect();
    chats::Entity::find()
        .select_only()
        .column(chats::Column::Title)
        .filter(chats::Column::UserId.eq(owner))
        .filter(chats::Column::Title.like(format!("{prefix}%")))
        .into_tuple()
        .all(db)
        .await
}

/// `title`, or when one of `taken` is already that, `title (imported)`, else the first free
/// `title (imported N)` (N from 2). The suffix always fits: `title` is shortened for it.
fn distinct_title(title: &str, taken: &[String]) -> String {
    let is_free = |candidate: &str| !taken.iter().any(|t| t == candidate);
    if is_free(title) {
        return title.to_string();
    }
    // Ends within `taken.len()` rounds: `taken` holds `title`, which is none of these
    // distinct candidates, so at most `taken.len() - 1` of them are taken.
    let mut n = 1;
    loop {
        let suffix = if n == 1 {
            " (imported)".to_string()
        } else {
            format!(" (imported {n})")
        };
        let room = MAX_TITLE_CHARS - suffix.chars().count();
        let base: String = title.chars().take(room).collect();
        let candidate = format!("{}{suffix}", base.trim_end());
        if is_free(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

impl NewArtifact {
    async fn insert<C: sea_orm::ConnectionTrait>(
        self,
        chat_id: &ChatId,
        db: &C,
    ) -> Result<(), DbErr> {
        let exported = self.exported;
        artifacts::ActiveModel {
            id: Set(self.id.clone()),
            chat_id: Set(chat_id.clone()),
            identifier: Set(exported.identifier),
            title: Set(exported.title),
            mime_type: Set(exported.mime_type),
            language: Set(exported.language),
            kind: Set(KIND_ARTIFACT.to_string()),
            latest_version: Set(exported.versions.len() as i32),
            message_id: Set(self.message_id),
            created_at: Set(exported.created_at),
            updated_at: Set(exported.updated_at),
            deleted_at: Set(None),
        }
        .insert(db)
        .await?;
        for (version, message_id) in exported.versions.into_iter().zip(self.version_messages) {
            artifact_versions::ActiveModel {
                id: Set(ArtifactVersionId::generate()),
                artifact_id: Set(self.id.clone()),
                version: Set(version.version),
                content: Set(version.content),
                message_id: Set(message_id),
                created_at: Set(version.created_at),
            }
            .insert(db)
            .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_nobody_has_is_kept() {
        assert_eq!(distinct_title("Trip", &["Trips".to_string()]), "Trip");
    }

    #[test]
    fn a_title_already_taken_is_marked_imported_then_numbered() {
        let mut taken = vec!["Trip".to_string()];
        assert_eq!(distinct_title("Trip", &taken), "Trip (imported)");
        taken.push("Trip (imported)".to_string());
        assert_eq!(distinct_title("Trip", &taken), "Trip (imported 2)");
        taken.push("Trip (imported 2)".to_string());
        assert_eq!(distinct_title("Trip", &taken), "Trip (imported 3)");
    }

    #[test]
    fn the_suffix_fits_in_a_title_of_the_longest_length() {
        let long = "x".repeat(MAX_TITLE_CHARS);
        let title = distinct_title(&long, std::slice::from_ref(&long));
        assert_eq!(title.chars().count(), MAX_TITLE_CHARS);
        assert!(title.ends_with(" (imported)"), "{title}");
    }
}
