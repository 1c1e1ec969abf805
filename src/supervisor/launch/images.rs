//! The images of `/v1` requests (Chat Completions' `image_url` parts, the Responses API's
//! `input_image`, already read into `image_url` parts) that run in a stored chat: read and
//! checked before anything is stored (`read_message`: how many, `data:` URLs decoded and
//! checked by their bytes, only `http(s)` URLs otherwise), then kept as attachments of the
//! chat (`store`), `http(s)` ones fetched through the SSRF-guarded `Fetcher`, so the chat
//! replays them on later turns. Requests with `store: false` pass their parts on untouched.

use std::time::Duration;

use entities::ids::ChatId;
use entities::messages::MessageRole;
use serde_json::Value;

use super::Launcher;
use crate::auth::Principal;
use crate::chat::attachments::{AttachmentError, ImagePart, image};
use crate::chat::session::ImportedMessage;
use crate::config::AttachmentsConfig;
use crate::error::{AppError, AppResult};
use crate::llm::wire::{ChatMessage, MessageContent};
use crate::tools::fetch::FetchError;

/// An image of a request, checked but not stored yet, with the `detail` it asked for.
pub struct PendingImage {
    pub source: ImageSource,
    pub detail: Option<String>,
}

/// Where a pending image's bytes are.
pub enum ImageSource {
    /// A `data:` URL's bytes, already checked.
    Inline(Vec<u8>),
    /// An `http(s)` URL, fetched when it is stored.
    Remote(String),
}

/// The `detail` values OpenAI's image parts take.
const DETAILS: [&str; 3] = ["auto", "low", "high"];

/// A message as a stored chat keeps it: its text, and its images not yet stored.
pub struct PendingMessage {
    pub text: String,
    pub images: Vec<PendingImage>,
}

/// Reads `message`'s content: its text parts joined, and each `image_url` part's image
/// (decoded and checked if inline). Refuses more images than a message may carry, and URLs
/// that are neither `data:` nor `http(s)`.
pub fn read_message(
    limits: &AttachmentsConfig,
    message: &ChatMessage,
) -> AppResult<PendingMessage> {
    let text = message.text();
    let Some(MessageContent::Parts(parts)) = &message.content else {
        return Ok(PendingMessage {
            text,
            images: Vec::new(),
        });
    };
    let urls: Vec<(&str, Option<&str>)> = parts.iter().filter_map(image_url).collect();
    if urls.len() > limits.max_images_per_message {
        return Err(AttachmentError::TooMany {
            count: urls.len(),
            max: limits.max_images_per_message,
        }
        .into());
    }
    let mut images = Vec::with_capacity(urls.len());
    for (url, detail) in urls {
        if let Some(detail) = detail
            && !DETAILS.contains(&detail)
        {
            return Err(AttachmentError::InvalidUrl(format!(
                "an image's detail is auto, low or high, not {detail:?}"
            ))
            .into());
        }
        let scheme = url
            .split_once(':')
            .map(|(scheme, _)| scheme.to_ascii_lowercase());
        let source = match scheme.as_deref() {
            Some("data") => {
                ImageSource::Inline(image::decode_data_url(url, limits.max_image_bytes)?.0)
            }
            Some("http" | "https") => ImageSource::Remote(url.to_string()),
            _ => {
                return Err(AttachmentError::InvalidUrl(
                    "an image_url must be a data: URL (data:image/png;base64,…) or an http(s) \
                     URL"
                    .into(),
                )
                .into());
            }
        };
        images.push(PendingImage {
            source,
            detail: detail.map(str::to_string),
        });
    }
    Ok(PendingMessage { text, images })
}

/// Reads every message (`read_message`), and refuses more images in all than a request may
/// carry.
pub fn read_messages(
    limits: &AttachmentsConfig,
    messages: &[ChatMessage],
) -> AppResult<Vec<PendingMessage>> {
    let read: Vec<PendingMessage> = messages
        .iter()
        .map(|message| read_message(limits, message))
        .collect::<AppResult<_>>()?;
    let count: usize = read.iter().map(|m| m.images.len()).sum();
    if count > limits.max_images_per_request {
        return Err(AppError::Refused {
            code: "too_many_images",
            message: format!(
                "a request may carry at most {} images in all, not {count}",
                limits.max_images_per_request
            ),
        });
    }
    Ok(read)
}

/// The URL and detail of an `image_url` part (`{"image_url": {"url", "detail"}}`, or the URL
/// given as a string).
fn image_url(part: &Value) -> Option<(&str, Option<&str>)> {
    if part["type"] != "image_url" {
        return None;
    }
    let url = part["image_url"]["url"]
        .as_str()
        .or_else(|| part["image_url"].as_str())?;
    Some((url, part["image_url"]["detail"].as_str()))
}

/// Keeps `images` as attachments of `chat_id` (the caller's, checked), fetching remote ones,
/// one at a time; returns the message parts naming them.
pub async fn store(
    launcher: &Launcher,
    principal: &Principal,
    chat_id: &ChatId,
    images: Vec<PendingImage>,
) -> AppResult<Vec<ImagePart>> {
    let attachments = &launcher.attachments;
    let limits = attachments.limits();
    let mut parts = Vec::with_capacity(images.len());
    for pending in images {
        let bytes = match pending.source {
            ImageSource::Inline(bytes) => bytes,
            ImageSource::Remote(url) => launcher
                .fetcher
                .fetch_image(
                    &url,
                    limits.max_image_bytes,
                    Duration::from_secs(limits.fetch_timeout_secs),
                )
                .await
                .map_err(|err| fetch_error(&url, &err, limits.max_image_bytes))?,
        };
        let row = attachments
            .store(chat_id, principal.user_id(), bytes)
            .await?;
        parts.push(ImagePart {
            attachment_id: row.id,
            mime_type: row.mime_type,
            detail: pending.detail,
        });
    }
    Ok(parts)
}

/// A turn of a stored chat from a `/v1` request, its images stored: the earlier messages to
/// import (only user messages keep images), and the new user message's text and images.
pub struct StoredTurn {
    pub history: Vec<ImportedMessage>,
    pub content: String,
    pub images: Vec<ImagePart>,
}

/// Stores the images of `history` (with their roles) and of `last` in `chat_id` (the caller's,
/// checked). The door (`Launcher::open`) deletes a chat made for the turn if this fails.
pub async fn store_turn(
    launcher: &Launcher,
    principal: &Principal,
    chat_id: &ChatId,
    history: Vec<(MessageRole, PendingMessage)>,
    last: PendingMessage,
) -> AppResult<StoredTurn> {
    let history = store_messages(launcher, principal, chat_id, history).await?;
    let images = store(launcher, principal, chat_id, last.images).await?;
    Ok(StoredTurn {
        history,
        content: last.text,
        images,
    })
}

/// Stores the images of `messages` (only user messages keep theirs) in `chat_id` (the
/// caller's, checked), as messages to import. When `fresh` (the chat was made for this
/// request) and something fails, the chat is deleted again, so a refused request leaves nothing
/// behind.
pub async fn store_history(
    launcher: &Launcher,
    principal: &Principal,
    chat_id: &ChatId,
    messages: Vec<(MessageRole, PendingMessage)>,
    fresh: bool,
) -> AppResult<Vec<ImportedMessage>> {
    let stored = store_messages(launcher, principal, chat_id, messages).await;
    if stored.is_err() && fresh {
        discard(launcher, principal, chat_id).await;
    }
    stored
}

async fn store_messages(
    launcher: &Launcher,
    principal: &Principal,
    chat_id: &ChatId,
    messages: Vec<(MessageRole, PendingMessage)>,
) -> AppResult<Vec<ImportedMessage>> {
    let mut imported = Vec::with_capacity(messages.len());
    for (role, message) in messages {
        let images = match role {
            MessageRole::User => store(launcher, principal, chat_id, message.images).await?,
            MessageRole::System | MessageRole::Assistant | MessageRole::Tool => Vec::new(),
        };
        imported.push(ImportedMessage {
            role,
            content: message.text,
            images,
        });
    }
    Ok(imported)
}

/// Deletes a chat made for a request that was then refused, with everything of it.
async fn discard(launcher: &Launcher, principal: &Principal, chat_id: &ChatId) {
    if let Err(err) = launcher.forget_chat(principal.user_id(), chat_id).await {
        tracing::warn!(%chat_id, %err, "could not delete the chat of a refused request");
    }
}

/// The client's error for an image URL that could not be fetched.
fn fetch_error(url: &str, err: &FetchError, limit: usize) -> AppError {
    let shown: String = url.chars().take(200).collect();
    match err {
        FetchError::Refused(_) => AppError::Refused {
            code: "image_url_refused",
            message: format!(
                "the image URL {shown} is not fetched: {err} (images on private or local \
                 addresses cannot be fetched; send the image as a data: URL)"
            ),
        },
        FetchError::TooLarge { .. } => AttachmentError::TooLarge {
            size: limit + 1,
            limit,
        }
        .into(),
        FetchError::UnsupportedContentType(found) => AttachmentError::NotAnImage {
            found: Some(found.clone()),
        }
        .into(),
        FetchError::InvalidUrl { .. } | FetchError::UnsupportedScheme(_) => {
            AttachmentError::InvalidUrl(err.to_string()).into()
        }
        FetchError::TooManyRedirects
        | FetchError::Status { .. }
        | FetchError::Timeout(_)
        | FetchError::Request { .. }
        | FetchError::Extraction(_) => AppError::Refused {
            code: "image_fetch_failed",
            message: format!("the image at {shown} could not be fetched: {err}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(parts: Vec<Value>) -> ChatMessage {
        ChatMessage {
            content: Some(MessageContent::Parts(parts)),
            ..ChatMessage::user("")
        }
    }

    #[test]
    fn a_message_is_read_into_its_text_and_checked_images() {
        let limits = AttachmentsConfig::default();
        let png = image::data_url(image::ImageType::Png, image::TEST_PNG);
        let read = read_message(
            &limits,
            &message(vec![
                json!({"type": "text", "text": "what is"}),
                json!({"type": "image_url", "image_url": {"url": png, "detail": "low"}}),
                json!({"type": "text", "text": "this?"}),
                json!({"type": "image_url", "image_url": "https://example.com/cat.png"}),
            ]),
        )
        .unwrap();
        assert_eq!(read.text, "what is\nthis?");
        assert!(
            matches!(&read.images[0].source, ImageSource::Inline(bytes) if bytes == image::TEST_PNG)
        );
        assert_eq!(read.images[0].detail.as_deref(), Some("low"));
        assert!(
            matches!(&read.images[1].source, ImageSource::Remote(url) if url.ends_with("cat.png"))
        );
    }

    #[test]
    fn bad_images_are_refused_before_anything_is_stored() {
        let limits = AttachmentsConfig {
            max_images_per_message: 1,
            ..AttachmentsConfig::default()
        };
        let image = |url: &str| json!({"type": "image_url", "image_url": {"url": url}});
        let code = |parts: Vec<Value>| {
            read_message(&limits, &message(parts))
                .err()
                .map(|e| e.code())
        };
        assert_eq!(
            code(vec![image("file:///etc/passwd")]),
            Some("invalid_image_url")
        );
        assert_eq!(
            code(vec![image("data:image/png;base64,aGVsbG8=")]),
            Some("unsupported_image_type")
        );
        assert_eq!(
            code(vec![image("https://a/1.png"), image("https://a/2.png")]),
            Some("too_many_images")
        );
        let many: Vec<ChatMessage> = (0..40)
            .map(|_| message(vec![image("https://a/1.png")]))
            .collect();
        assert_eq!(
            read_messages(&limits, &many).err().map(|e| e.code()),
            Some("too_many_images")
        );
    }
}
