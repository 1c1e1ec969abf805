//! Images reach the model: just before each model call, every `image_url` part that names an
//! attachment (`attachment:att_…`, what prompt assembly puts there) or an image a tool returned
//! (a reference under its `ImageSource`'s scheme, for a model that has not refused images)
//! gets the image's bytes as a `data:` URL, read from the chat's storage with tokio's file I/O and encoded on the blocking
//! pool, never on an actor's thread. The loop's own messages keep the small references.

use std::collections::HashMap;
use std::sync::Arc;

use entities::ids::{AttachmentId, ChatId};
use serde_json::{Value, json};

use crate::chat::attachments::{Attachments, ImageType, image};
use crate::llm::LlmClient;
use crate::llm::wire::{ChatMessage, ChatRequest, MessageContent, ToolCall};
use crate::tools::SharedTool;
use crate::tools::images::{ImageRef, ImageSource};

/// What a model is told in place of an image whose file is gone (swept or lost): the turn
/// goes on with the rest of the message rather than failing.
const MISSING_IMAGE: &str = "[an image was attached here, but it is no longer stored]";

/// The `data:` URLs of the images one run has read, by attachment.
#[derive(Default)]
pub struct InlinedImages {
    urls: HashMap<AttachmentId, Option<Arc<str>>>,
}

impl InlinedImages {
    /// Replaces the attachment references in `request` with the images' bytes, from
    /// `chat_id`'s storage.
    pub async fn inline(
        &mut self,
        request: &mut ChatRequest,
        attachments: &Attachments,
        chat_id: &ChatId,
    ) {
        for message in &mut request.messages {
            let Some(MessageContent::Parts(parts)) = &mut message.content else {
                continue;
            };
            for part in parts.iter_mut() {
                let Some(id) = part["image_url"]["url"]
                    .as_str()
                    .and_then(image::referenced)
                else {
                    continue;
                };
                let url = match self.urls.get(&id) {
                    Some(url) => url.clone(),
                    None => {
                        let url = read(attachments, chat_id, &id).await;
                        self.urls.insert(id, url.clone());
                        url
                    }
                };
                *part = match url {
                    Some(url) => {
                        let mut image_url = json!({"url": url.as_ref()});
                        if let Some(detail) = part["image_url"].get("detail") {
                            image_url["detail"] = detail.clone();
                        }
                        json!({"type": "image_url", "image_url": image_url})
                    }
                    None => json!({"type": "text", "text": MISSING_IMAGE}),
                };
            }
        }
    }
}

/// The image as a `data:` URL, or `None` (logged) when it cannot be read.
async fn read(attachments: &Attachments, chat_id: &ChatId, id: &AttachmentId) -> Option<Arc<str>> {
    let bytes = match attachments.read(chat_id, id).await {
        Ok(bytes) => bytes,
        Err(err) => {
            tracing::warn!(%chat_id, attachment = %id, %err, "cannot read an attached image");
            return None;
        }
    };
    let encoded = tokio::task::spawn_blocking(move || {
        ImageType::sniff(&bytes).map(|kind| Arc::<str>::from(image::data_url(kind, &bytes)))
    })
    .await
    .ok()
    .flatten();
    if encoded.is_none() {
        tracing::warn!(%chat_id, attachment = %id, "a stored attachment is not an image");
    }
    encoded
}

/// The images tools' results refer to that a run shows its model, and to which models
/// (`browser.screenshots_to_model`): each read by the source of its reference's scheme.
#[derive(Clone)]
pub struct ShownImages {
    pub sources: Vec<Arc<dyn ImageSource>>,
    /// Only to a model that has not refused images (learnt from its server's error, and the
    /// refused call made again without them); `false`: to every model.
    pub per_model: bool,
}

impl ShownImages {
    /// Whether `model` is shown them now.
    pub fn to(&self, llm: &LlmClient, model: &str) -> bool {
        !(self.per_model && llm.refuses_images(model))
    }

    /// The source of the image `url` refers to, if one of these reads it.
    fn source(&self, url: &str) -> Option<&dyn ImageSource> {
        self.sources
            .iter()
            .find(|source| url.starts_with(source.scheme()))
            .map(AsRef::as_ref)
    }
}

/// The image parts of `request` whose references one of `shown`'s sources reads, each with
/// that source.
fn tool_image_parts<'a>(
    request: &'a mut ChatRequest,
    shown: &'a ShownImages,
) -> impl Iterator<Item = (&'a mut Value, &'a dyn ImageSource, String)> {
    request
        .messages
        .iter_mut()
        .filter_map(|message| match &mut message.content {
            Some(MessageContent::Parts(parts)) => Some(parts.iter_mut()),
            _ => None,
        })
        .flatten()
        .filter_map(|part| {
            let url = part["image_url"]["url"].as_str()?.to_string();
            let source = shown.source(&url)?;
            Some((part, source, url))
        })
}

/// Replaces the references in `request` to images tools returned (shown to a model that reads
/// images) with their bytes from `chat_id`'s storage; one that is gone becomes a note, as a
/// lost attachment does. Returns how many images it put in.
pub async fn inline_tool_images(
    request: &mut ChatRequest,
    shown: &ShownImages,
    chat_id: &ChatId,
) -> usize {
    let mut inlined = 0;
    for (part, source, url) in tool_image_parts(request, shown) {
        let read = match source.read(chat_id, &url).await {
            Ok(bytes) => tokio::task::spawn_blocking(move || {
                ImageType::sniff(&bytes).map(|kind| image::data_url(kind, &bytes))
            })
            .await
            .ok()
            .flatten(),
            Err(err) => {
                tracing::warn!(%chat_id, image = %url, %err, "cannot read an image a tool returned");
                None
            }
        };
        *part = match read {
            Some(url) => {
                inlined += 1;
                json!({"type": "image_url", "image_url": {"url": url}})
            }
            None => json!({"type": "text", "text": MISSING_IMAGE}),
        };
    }
    inlined
}

/// Replaces the references in `request` to images tools returned with a note, for a model
/// that has said it cannot read images (those shown before it said so are in its history).
pub fn withhold_tool_images(request: &mut ChatRequest, shown: &ShownImages) {
    for (part, source, _) in tool_image_parts(request, shown) {
        let note = format!("[{}: this model does not read images]", source.what());
        *part = json!({"type": "text", "text": note});
    }
}

/// Shows `request`'s images that tools returned to its model as `shown` says: their bytes
/// for a model that reads images, a note for one that has refused them (`refused`: in this
/// run). Whether it showed some the model may still refuse (per model, and not yet refused).
pub async fn show_tool_images(
    request: &mut ChatRequest,
    shown: &ShownImages,
    llm: &LlmClient,
    chat_id: &ChatId,
    refused: bool,
) -> bool {
    if refused || !shown.to(llm, &request.model) {
        withhold_tool_images(request, shown);
        return false;
    }
    let inlined = inline_tool_images(request, shown, chat_id).await;
    shown.per_model && inlined > 0
}

/// The message after a tool round that shows its model the images the round's calls returned
/// (`results` are the calls' results as the model reads them; `tools` the run's), if they
/// returned any.
pub fn images_returned(
    tools: &[SharedTool],
    calls: &[ToolCall],
    results: &[Option<String>],
) -> Option<ChatMessage> {
    let mut names: Vec<&str> = Vec::new();
    let mut returned: Vec<Value> = Vec::new();
    for (call, text) in calls.iter().zip(results) {
        let (Some(text), Some(tool)) =
            (text, tools.iter().find(|t| t.name() == call.function.name))
        else {
            continue;
        };
        let images = tool.images(text);
        if !images.is_empty() && !names.contains(&tool.name()) {
            names.push(tool.name());
        }
        returned.extend(images.iter().map(ImageRef::part));
    }
    if returned.is_empty() {
        return None;
    }
    let intro = format!("The images {} returned, in order:", names.join(", "));
    let mut parts = vec![json!({"type": "text", "text": intro})];
    parts.extend(returned);
    Some(ChatMessage::user_parts(parts))
}

/// Whether a content part is an image (which a model counts as a fixed number of tokens).
pub fn is_image(part: &Value) -> bool {
    part["type"] == "image_url" || part["type"] == "input_image"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::attachments::ImagePart;

    #[tokio::test]
    async fn references_become_data_urls_and_a_lost_image_becomes_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let config = crate::config::Config {
            data_dir: dir.path().to_path_buf(),
            ..crate::config::Config::default()
        };
        let db = crate::db::connect(&config).await.unwrap();
        crate::db::migrate(&db).await.unwrap();
        let user = crate::auth::Accounts::new(db.clone(), 1, 1)
            .create_user(crate::auth::NewUser {
                username: "viewer",
                password: None,
                is_admin: false,
            })
            .await
            .unwrap()
            .id;
        let chat = crate::chat::Chats::new(db.clone())
            .create(&user, None, false)
            .await
            .unwrap()
            .id;
        let attachments = Attachments::new(
            db,
            crate::storage::Storage::directory(dir.path()),
            config.attachments.clone(),
        );
        let row = attachments
            .store(&chat, &user, image::TEST_PNG.to_vec())
            .await
            .unwrap();
        let kept = ImagePart {
            attachment_id: row.id,
            mime_type: row.mime_type,
            detail: None,
        };
        let lost = ImagePart {
            attachment_id: AttachmentId::generate(),
            mime_type: "image/png".into(),
            detail: None,
        };
        let mut message = ChatMessage::user("");
        message.content = Some(MessageContent::Parts(vec![
            json!({"type": "text", "text": "look"}),
            kept.reference(),
            lost.reference(),
        ]));
        let mut request = ChatRequest::new("m", vec![message]);
        let mut inlined = InlinedImages::default();
        inlined.inline(&mut request, &attachments, &chat).await;
        let Some(MessageContent::Parts(parts)) = &request.messages[0].content else {
            panic!("parts stay parts");
        };
        assert_eq!(
            parts[1]["image_url"]["url"],
            image::data_url(ImageType::Png, image::TEST_PNG)
        );
        assert_eq!(parts[2], json!({"type": "text", "text": MISSING_IMAGE}));
        assert!(is_image(&parts[1]));
        assert!(!is_image(&parts[0]));
    }

    /// A source under the browser's scheme, as its screenshot store is.
    struct Shots;

    impl ImageSource for Shots {
        fn scheme(&self) -> &'static str {
            "screenshot:"
        }
        fn what(&self) -> &'static str {
            "a screenshot"
        }
        fn read(
            &self,
            _: &ChatId,
            _: &str,
        ) -> futures_util::future::BoxFuture<'static, std::io::Result<Vec<u8>>> {
            Box::pin(async { Ok(image::TEST_PNG.to_vec()) })
        }
    }

    /// A tool whose every result refers to one image.
    struct Pictures;

    impl crate::tools::Tool for Pictures {
        fn name(&self) -> &str {
            "pictures"
        }
        fn definition(&self) -> crate::llm::wire::ToolDefinition {
            crate::llm::wire::ToolDefinition::function("pictures", "", json!({"type": "object"}))
        }
        fn progress(&self) -> Option<crate::tools::ProgressKind> {
            None
        }
        fn run(&self, _: Value) -> crate::tools::ToolFuture {
            Box::pin(async { Ok(Value::Null) })
        }
        fn images(&self, result: &str) -> Vec<ImageRef> {
            vec![ImageRef {
                url: format!("screenshot:{result}"),
            }]
        }
    }

    #[test]
    fn the_images_a_round_returned_follow_its_results_in_order() {
        let call = |id: &str, name: &str| ToolCall {
            id: id.into(),
            kind: "function".into(),
            function: crate::llm::wire::FunctionCall {
                name: name.into(),
                arguments: "{}".into(),
            },
        };
        let tools: Vec<SharedTool> = vec![Arc::new(Pictures)];
        let calls = [
            call("a", "pictures"),
            call("b", "other"),
            call("c", "pictures"),
        ];
        let results = [
            Some("one".to_string()),
            Some("x".into()),
            Some("two".into()),
        ];
        let message = images_returned(&tools, &calls, &results).expect("a message");
        let Some(MessageContent::Parts(parts)) = &message.content else {
            panic!("a message of parts");
        };
        assert_eq!(parts.len(), 3, "{parts:?}");
        assert_eq!(parts[1]["image_url"]["url"], "screenshot:one");
        assert_eq!(parts[2]["image_url"]["url"], "screenshot:two");
        assert!(images_returned(&tools, &calls[1..2], &results[1..2]).is_none());
        let paused = [None, None, None];
        assert!(images_returned(&tools, &calls, &paused).is_none());
    }

    #[test]
    fn a_withheld_screenshot_becomes_a_note_and_other_parts_stay() {
        let mut message = ChatMessage::user("");
        let screenshot = json!({"type": "image_url", "image_url": {"url":
            "screenshot:shot_0123456789abcdef0123456789abcdef"}});
        let attached = json!({"type": "image_url", "image_url": {"url": "attachment:att_1"}});
        message.content = Some(MessageContent::Parts(vec![
            json!({"type": "text", "text": "shots"}),
            screenshot,
            attached.clone(),
        ]));
        let mut request = ChatRequest::new("m", vec![message]);
        let shown = ShownImages {
            sources: vec![Arc::new(Shots)],
            per_model: true,
        };
        withhold_tool_images(&mut request, &shown);
        let Some(MessageContent::Parts(parts)) = &request.messages[0].content else {
            panic!("parts stay parts");
        };
        assert_eq!(
            parts[1],
            json!({"type": "text", "text": "[a screenshot: this model does not read images]"})
        );
        assert_eq!(parts[2], attached, "an attached image is not a screenshot");
    }
}
