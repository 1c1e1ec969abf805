//! Read-only links to a chat (issue 50): the owner makes, lists and revokes them; anyone holding
//! a link's token reads the chat's active branch. A token is 256 random bits from the OS, shown
//! once and stored only as its SHA-256 (`auth::hash_token`, as API keys are), so a leaked table
//! opens nothing; a request's token is found by its hash, in one indexed lookup.
//! A link opens one chat and nothing else: it is never a `Principal`.

use chrono::{DateTime, Duration, Utc};
use entities::chat_shares;
use entities::ids::{ChatId, ChatShareId, UserId};
use entities::{chats, users};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, DatabaseConnection, DbErr, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, Set,
};

/// Live links one chat may have: enough to give different people different links to revoke
/// one by one, few enough that a list of them is short.
pub const MAX_SHARES_PER_CHAT: u64 = 20;

/// The longest a link may be made to last when it expires: a year. A link meant to live longer
/// is made without an expiry, and revoked.
pub const MAX_EXPIRY_SECS: i64 = 365 * 24 * 3600;

/// The shortest expiry: a link that expires before it can be sent is a mistake.
pub const MIN_EXPIRY_SECS: i64 = 60;

/// Bytes of randomness in a token: 256 bits, like every secret Colloquy issues.
const TOKEN_BYTES: usize = 32;

/// A readable prefix, so a pasted token is recognisable (and a secret scanner can find it).
const TOKEN_PREFIX: &str = "cqshr_";

/// The longest text that can be a token (prefix and base64 of `TOKEN_BYTES`, with room); a
/// longer one is refused without a query.
const MAX_TOKEN_CHARS: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    /// No such link on this chat of this owner (or the chat is not theirs).
    #[error("share not found")]
    NotFound,
    /// The chat has `MAX_SHARES_PER_CHAT` live links already.
    #[error("this chat has {limit} shared links already; revoke one first")]
    TooMany { limit: u64 },
    /// The expiry is in the past, too soon or too far.
    #[error("{0}")]
    InvalidExpiry(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// A link just made: its row and its token, which nobody can see again.
pub struct IssuedShare {
    pub share: chat_shares::Model,
    pub token: String,
}

/// When a link asked to expire at `expires_at`, or in `expires_in` seconds, expires: at most
/// one of them, within `MIN_EXPIRY_SECS..=MAX_EXPIRY_SECS` of `now`.
pub fn expiry(
    now: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    expires_in: Option<i64>,
) -> Result<Option<DateTime<Utc>>, ShareError> {
    let at = match (expires_at, expires_in) {
        (Some(_), Some(_)) => {
            return Err(ShareError::InvalidExpiry(
                "give expires_at or expires_in, not both".into(),
            ));
        }
        (None, None) => return Ok(None),
        (Some(at), None) => at,
        (None, Some(secs)) => {
            if !(MIN_EXPIRY_SECS..=MAX_EXPIRY_SECS).contains(&secs) {
                return Err(ShareError::InvalidExpiry(format!(
                    "expires_in must be between {MIN_EXPIRY_SECS} and {MAX_EXPIRY_SECS} seconds"
                )));
            }
            now + Duration::seconds(secs)
        }
    };
    let lasts = (at - now).num_seconds();
    if lasts < MIN_EXPIRY_SECS {
        return Err(ShareError::InvalidExpiry(format!(
            "expires_at must be at least {MIN_EXPIRY_SECS} seconds in the future"
        )));
    }
    if lasts > MAX_EXPIRY_SECS {
        return Err(ShareError::InvalidExpiry(
            "expires_at must be at most 365 days away".into(),
        ));
    }
    Ok(Some(at))
}

fn new_token() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!(
        "{TOKEN_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// Links that still open: no expiry, or one still ahead.
fn live(now: DateTime<Utc>) -> Condition {
    Condition::any()
        .add(chat_shares::Column::ExpiresAt.is_null())
        .add(chat_shares::Column::ExpiresAt.gt(now))
}

/// Makes a link to `chat`, which the caller has checked is `owner`'s. Expired links of the
/// chat are dropped first, so they do not count against the limit.
pub async fn create(
    db: &DatabaseConnection,
    owner: &UserId,
    chat: &ChatId,
    expires_at: Option<DateTime<Utc>>,
) -> Result<IssuedShare, ShareError> {
    let now = Utc::now();
    chat_shares::Entity::delete_many()
        .filter(chat_shares::Column::ChatId.eq(chat))
        .filter(chat_shares::Column::ExpiresAt.lte(now))
        .exec(db)
        .await?;
    let count = chat_shares::Entity::find()
        .filter(chat_shares::Column::ChatId.eq(chat))
        .count(db)
        .await?;
    if count >= MAX_SHARES_PER_CHAT {
        return Err(ShareError::TooMany {
            limit: MAX_SHARES_PER_CHAT,
        });
    }
    let token = new_token();
    let share = chat_shares::ActiveModel {
        id: Set(ChatShareId::generate()),
        chat_id: Set(chat.clone()),
        user_id: Set(owner.clone()),
        token_hash: Set(crate::auth::hash_token(&token)),
        created_at: Set(now),
        expires_at: Set(expires_at),
    }
    .insert(db)
    .await?;
    Ok(IssuedShare { share, token })
}

/// The owner's links to a chat, newest first (expired ones included, until the next create
/// drops them).
pub async fn list(
    db: &DatabaseConnection,
    owner: &UserId,
    chat: &ChatId,
) -> Result<Vec<chat_shares::Model>, DbErr> {
    chat_shares::Entity::find()
        .filter(chat_shares::Column::ChatId.eq(chat))
        .filter(chat_shares::Column::UserId.eq(owner))
        .order_by_desc(chat_shares::Column::CreatedAt)
        .all(db)
        .await
}

/// Revokes a link: its row goes, and its token finds nothing from then on.
pub async fn revoke(
    db: &DatabaseConnection,
    owner: &UserId,
    chat: &ChatId,
    id: &ChatShareId,
) -> Result<(), ShareError> {
    let deleted = chat_shares::Entity::delete_many()
        .filter(chat_shares::Column::Id.eq(id))
        .filter(chat_shares::Column::ChatId.eq(chat))
        .filter(chat_shares::Column::UserId.eq(owner))
        .exec(db)
        .await?;
    if deleted.rows_affected == 0 {
        return Err(ShareError::NotFound);
    }
    Ok(())
}

/// The chat a token opens: a live link's, still its owner's, whose account is not disabled.
/// Unknown, revoked and expired tokens all answer `None`. The token is compared only as its
/// hash, through the index: nothing about a live token can be learnt from timing.
pub async fn resolve(db: &DatabaseConnection, token: &str) -> Result<Option<chats::Model>, DbErr> {
    if token.len() > MAX_TOKEN_CHARS || !token.starts_with(TOKEN_PREFIX) {
        return Ok(None);
    }
    let hash = crate::auth::hash_token(token);
    let Some(share) = chat_shares::Entity::find()
        .filter(chat_shares::Column::TokenHash.eq(hash))
        .filter(live(Utc::now()))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let Some(chat) = chats::Entity::find_by_id(share.chat_id.clone())
        .filter(chats::Column::UserId.eq(&share.user_id))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let owner_active = users::Entity::find_by_id(share.user_id.clone())
        .filter(users::Column::Disabled.eq(false))
        .count(db)
        .await?
        > 0;
    Ok(owner_active.then_some(chat))
}

/// One message of a shared chat's active branch, as the shared page shows it: text, and the
/// parts that are images and artifact versions (an artifact's content is fetched on its own).
/// Tool calls, reasoning, runs and everything else of the owner's stay out.
#[derive(Debug, serde::Serialize)]
pub struct SharedMessage {
    pub id: entities::ids::MessageId,
    pub role: entities::messages::MessageRole,
    pub content: String,
    pub parts: Vec<serde_json::Value>,
    pub created_at: DateTime<Utc>,
}

/// The messages a link shows, from the chat's active branch (root first): its user messages and
/// the answers with something to show.
pub fn shared_branch(path: &[crate::chat::tree::MessageNode]) -> Vec<SharedMessage> {
    use entities::messages::MessageRole;
    path.iter()
        .filter(|node| matches!(node.role, MessageRole::User | MessageRole::Assistant))
        .map(|node| SharedMessage {
            id: node.id.clone(),
            role: node.role,
            content: node.content.clone().unwrap_or_default(),
            parts: node
                .parts
                .as_ref()
                .and_then(|parts| parts.as_array())
                .into_iter()
                .flatten()
                .filter_map(shared_part)
                .collect(),
            created_at: node.created_at,
        })
        .filter(|m| m.role == MessageRole::User || !m.content.is_empty() || !m.parts.is_empty())
        .collect()
}

/// The fields of a part the page needs; `None` for parts it does not show.
fn shared_part(part: &serde_json::Value) -> Option<serde_json::Value> {
    let keep: &[&str] = match part.get("type")?.as_str()? {
        "image" => &["type", "attachment_id", "mime_type"],
        "artifact" => &[
            "type",
            "artifact_id",
            "identifier",
            "title",
            "mime_type",
            "language",
            "version",
        ],
        _ => return None,
    };
    let fields = keep
        .iter()
        .filter_map(|key| part.get(*key).map(|v| ((*key).to_string(), v.clone())))
        .collect();
    Some(serde_json::Value::Object(fields))
}

/// Whether the branch shows the image `attachment_id`: only those may be fetched by the link.
pub fn shows_attachment(branch: &[SharedMessage], attachment_id: &str) -> bool {
    parts_of(branch, "image")
        .any(|part| part.get("attachment_id").and_then(|v| v.as_str()) == Some(attachment_id))
}

/// Whether the branch shows version `version` of the artifact `key` (its id, or its identifier
/// for a part without one): only those may be fetched by the link.
pub fn shows_artifact_version(branch: &[SharedMessage], key: &str, version: i32) -> bool {
    parts_of(branch, "artifact").any(|part| {
        let named = part
            .get("artifact_id")
            .or_else(|| part.get("identifier"))
            .and_then(|v| v.as_str());
        named == Some(key) && part.get("version").and_then(|v| v.as_i64()) == Some(version.into())
    })
}

fn parts_of<'a>(
    branch: &'a [SharedMessage],
    kind: &'a str,
) -> impl Iterator<Item = &'a serde_json::Value> + 'a {
    branch
        .iter()
        .flat_map(|m| m.parts.iter())
        .filter(move |part| part.get("type").and_then(|v| v.as_str()) == Some(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_recognisable() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX));
        // 32 bytes are 43 base64 characters: 256 bits.
        assert_eq!(a.len(), TOKEN_PREFIX.len() + 43);
        assert!(a.len() <= MAX_TOKEN_CHARS);
    }

    #[test]
    fn an_expiry_is_one_of_two_forms_and_bounded() {
        let now = Utc::now();
        assert_eq!(expiry(now, None, None).unwrap(), None);
        assert_eq!(
            expiry(now, None, Some(3600)).unwrap(),
            Some(now + Duration::seconds(3600))
        );
        let at = now + Duration::days(7);
        assert_eq!(expiry(now, Some(at), None).unwrap(), Some(at));
        assert!(expiry(now, Some(at), Some(3600)).is_err());
        assert!(expiry(now, None, Some(0)).is_err());
        assert!(expiry(now, None, Some(MAX_EXPIRY_SECS + 1)).is_err());
        assert!(expiry(now, Some(now - Duration::seconds(5)), None).is_err());
        assert!(expiry(now, Some(now + Duration::days(400)), None).is_err());
    }
}
