//! One id type per entity. Every id is text in the database (a UUID, sometimes with a
//! prefix); in Rust each table's ids are their own type, so a chat id cannot be passed where a
//! run id is expected. They are stored and read through sea-orm as their text
//! (`DeriveValueType`) and serialised as plain strings.

use sea_orm::DeriveValueType;
use serde::{Deserialize, Serialize};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        id_type!($(#[$doc])* $name, uuid::Uuid::now_v7().to_string());
    };
    ($(#[$doc:meta])* $name:ident, simple $prefix:literal) => {
        id_type!($(#[$doc])* $name, format!("{}{}", $prefix, uuid::Uuid::now_v7().simple()));
    };
    ($(#[$doc:meta])* $name:ident, $fresh:expr) => {
        $(#[$doc])*
        #[derive(
            Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, DeriveValueType, Serialize,
            Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// A fresh id, made of a time-ordered UUID (v7).
            pub fn generate() -> Self {
                Self($fresh)
            }

            /// Wraps text that names one of these ids: read back from storage, a checkpoint
            /// or a request. Whether it exists (and whose it is) is for the lookup to say.
            pub fn from_string(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl From<&$name> for sea_orm::Value {
            fn from(id: &$name) -> Self {
                id.0.clone().into()
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        /// Ids are text: none is made from a number.
        impl sea_orm::TryFromU64 for $name {
            fn try_from_u64(_: u64) -> Result<Self, sea_orm::DbErr> {
                Err(sea_orm::DbErr::ConvertFromU64(stringify!($name)))
            }
        }
    };
}

id_type!(
    /// A user (`users.id`).
    UserId
);
id_type!(
    /// A chat (`chats.id`).
    ChatId
);
id_type!(
    /// A message in a chat's tree (`messages.id`).
    MessageId
);
id_type!(
    /// One run of the agent loop (`runs.id`).
    RunId
);
id_type!(
    /// An artifact (`artifacts.id`); a document's text is one, prefixed `doc_`.
    ArtifactId
);
id_type!(
    /// One stored version of an artifact (`artifact_versions.id`).
    ArtifactVersionId
);
id_type!(
    /// An uploaded document (`documents.id`).
    DocumentId
);
id_type!(
    /// A chunk of a document's text (`document_chunks.id`).
    ChunkId
);
id_type!(
    /// A tus upload in progress (`uploads.id`): a UUID without hyphens, as it appears in
    /// the upload URL.
    UploadId,
    simple ""
);
id_type!(
    /// A saved memory (`memories.id`): `mem_` and a UUID without hyphens.
    MemoryId,
    simple "mem_"
);
id_type!(
    /// A paused run's question or client tool calls (`pending_asks.id`).
    AskId
);
id_type!(
    /// The public id of a paused run's ask (`pending_asks.correlation_id`), by which its
    /// answer or client tool results come back: `ask_…` for an ask_user question, `tools_…`
    /// for client tool calls.
    AskCorrelationId
);
id_type!(
    /// An API key (`api_keys.id`).
    ApiKeyId
);
id_type!(
    /// An agent configuration (`agents.id`).
    AgentId
);
id_type!(
    /// A browser sign-in session (`login_sessions.id`).
    LoginSessionId
);
id_type!(
    /// A one-time sign-in link's token record (`login_tokens.id`).
    LoginTokenId
);
id_type!(
    /// A user's folder of chats (`chat_folders.id`): `fld_` and a UUID without hyphens.
    ChatFolderId,
    simple "fld_"
);

impl ChatId {
    /// Accepts only a UUID, so a malformed id is a 404 without touching the database.
    pub fn parse(raw: &str) -> Option<Self> {
        uuid::Uuid::parse_str(raw)
            .ok()
            .map(|id| Self(id.to_string()))
    }
}

impl AskCorrelationId {
    /// A new id for an ask_user question.
    pub fn for_question() -> Self {
        Self(format!("ask_{}", uuid::Uuid::now_v7().simple()))
    }

    /// A new id for a run's client tool calls.
    pub fn for_client_tools() -> Self {
        Self(format!("tools_{}", uuid::Uuid::now_v7().simple()))
    }
}

impl ArtifactId {
    /// The id of a document's text artifact: `doc_` and a UUID without hyphens.
    pub fn generate_for_document() -> Self {
        Self(format!("doc_{}", uuid::Uuid::now_v7().simple()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_serialise_as_their_text_and_compare_with_it() {
        let id = ChatId::from_string("abc");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"abc\"");
        assert_eq!(serde_json::from_str::<ChatId>("\"abc\"").unwrap(), id);
        assert!(id == "abc");
        assert_eq!(sea_orm::Value::from(&id), sea_orm::Value::from("abc"));
    }

    #[test]
    fn an_attachment_id_is_parsed_only_in_the_shape_it_is_made() {
        let id = AttachmentId::generate();
        assert_eq!(AttachmentId::parse(id.as_str()), Some(id));
        for bad in [
            "att_",
            "att_../../etc/passwd",
            "file-0123",
            "att_0123456789ABCDEF0123456789abcdef",
        ] {
            assert!(AttachmentId::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_chat_id_is_parsed_only_from_a_uuid() {
        assert!(ChatId::parse("not-a-uuid").is_none());
        let id = ChatId::generate();
        assert_eq!(ChatId::parse(id.as_str()), Some(id));
    }
}
id_type!(
    /// A stored Responses API response (`responses.id`): `resp_` and its run's id.
    ResponseId,
    simple "resp_"
);
id_type!(
    /// A file uploaded with `POST /v1/files` (`files.id`): `file-` and a UUID without hyphens.
    FileId,
    simple "file-"
);
id_type!(
    /// An image attached to a user message (`attachments.id`): `att_` and a UUID without
    /// hyphens.
    AttachmentId,
    simple "att_"
);

impl AttachmentId {
    /// Accepts only the shape `generate` makes (`att_` and 32 lower-case hex digits), so an id
    /// can name a file on disk and a malformed one is a 404 without touching the database.
    pub fn parse(raw: &str) -> Option<Self> {
        let hex = raw.strip_prefix("att_")?;
        let valid = hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        valid.then(|| Self(raw.to_string()))
    }
}
id_type!(
    /// One email send_email sent or tried to send (`email_sends.id`).
    EmailSendId
);
id_type!(
    /// A user's workflow (`workflows.id`): `wf_` and a UUID without hyphens.
    WorkflowId,
    simple "wf_"
);
id_type!(
    /// A user's schedule (`schedules.id`): `sched_` and a UUID without hyphens.
    ScheduleId,
    simple "sched_"
);
id_type!(
    /// One firing of a schedule (`schedule_firings.id`).
    ScheduleFiringId
);
id_type!(
    /// A code interpreter container (`containers.id`): `cntr_` and a UUID without hyphens.
    ContainerId,
    simple "cntr_"
);
id_type!(
    /// A file in a code interpreter container (`container_files.id`): `cfile_` and a UUID
    /// without hyphens.
    ContainerFileId,
    simple "cfile_"
);

id_type!(
    /// A read-only link to a chat (`chat_shares.id`): `shr_` and a UUID without hyphens. Not
    /// the link's token, which only its creator ever sees.
    ChatShareId,
    simple "shr_"
);

/// Whether `raw` is `prefix` and 32 lower-case hex digits, the shape `generate` makes.
fn is_simple(raw: &str, prefix: &str) -> bool {
    raw.strip_prefix(prefix).is_some_and(|hex| {
        hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

impl ContainerId {
    /// Accepts only the shape `generate` makes, so a malformed id is a 404 without a query.
    pub fn parse(raw: &str) -> Option<Self> {
        is_simple(raw, "cntr_").then(|| Self(raw.to_string()))
    }
}

impl ContainerFileId {
    /// Accepts only the shape `generate` makes, so a malformed id is a 404 without a query.
    pub fn parse(raw: &str) -> Option<Self> {
        is_simple(raw, "cfile_").then(|| Self(raw.to_string()))
    }
}

impl ChatShareId {
    /// Accepts only the shape `generate` makes, so a malformed id is a 404 without a query.
    pub fn parse(raw: &str) -> Option<Self> {
        is_simple(raw, "shr_").then(|| Self(raw.to_string()))
    }
}
