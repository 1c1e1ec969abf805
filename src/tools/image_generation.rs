//! `generate_image`: a picture from a prompt, made by the image server of `[images]`
//! (`llm::images`). An agent whose `enabled_tools` names it has it in its chats; on the
//! Responses API it is the `image_generation` tool: each call is an
//! `image_generation_call` item (`ig_<call id>`), announced by
//! `response.image_generation_call.in_progress` and `.generating`, with
//! `.partial_image` events (`partial_image_index`, `partial_image_b64`) while a streaming image
//! server sends them (the request's `partial_images`), and `.completed`, whose payload carries
//! the finished picture under `DELIVERABLE_KEY` for the encoder (the picture is the answer's
//! deliverable, never text the model reads: the model gets the revised prompt and a note).

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{ProgressKind, ToolError, ToolFuture, TypedTool};
use crate::chat::attachments::{Attachments, ImagePart};
use crate::config::ImagesConfig;
use crate::llm::images::{self, ImageFile, ImageRequest};
use crate::run::log::RunLog;
use crate::tools::chat_context::Parts;
use entities::ids::AttachmentId;

pub const GENERATE_IMAGE: &str = "generate_image";

/// What a server needs to offer it (said when an agent names it on a server without).
pub const NEEDS: &str = "an [images] section: base_url and model";

/// The key of the `.completed` event's payload that carries the finished picture (`result`,
/// `revised_prompt`, `size`, `quality`, `output_format`, `background`): read by the Responses
/// encoder, left out of `x_metadata`.
pub const DELIVERABLE_KEY: &str = "x_image";

/// The id of the output item (and events) of the model's call `call_id`.
pub fn item_id(call_id: &str) -> String {
    format!("ig_{call_id}")
}

/// Longest prompt the model may write, in characters (the server's own limit may be lower).
const MAX_PROMPT_CHARS: usize = 4_000;

pub struct ImageGenerationTool {
    log: Arc<RunLog>,
    images: ImagesConfig,
    /// In a stored chat: where the picture is kept (an attachment of the chat, a part of the
    /// answer), so the app shows it with the answer and it stays with the chat.
    keep: Option<(Attachments, Parts)>,
    /// The request's `image_generation` tool fields (`size`, `quality`, `output_format`,
    /// `background`, `partial_images`, `model`), sent with every picture.
    options: Map<String, Value>,
    /// Numbers this run's calls (`output_index`).
    calls: AtomicUsize,
}

impl ImageGenerationTool {
    pub fn new(log: Arc<RunLog>, images: ImagesConfig, options: Map<String, Value>) -> Self {
        Self {
            log,
            images,
            keep: None,
            options,
            calls: AtomicUsize::new(0),
        }
    }

    /// This tool in a stored chat: each picture is kept as an attachment of the log's chat and
    /// added to `parts` (the answer's), linked to the answer when it is stored.
    pub fn keeping(mut self, attachments: Attachments, parts: Parts) -> Self {
        if self.log.chat_id.is_some() {
            self.keep = Some((attachments, parts));
        }
        self
    }
}

/// The chat's picture `image_id` (an attachment of the run's chat, its owner's), as the file
/// an edit sends.
async fn picture_to_change(
    log: &RunLog,
    keep: Option<&(Attachments, Parts)>,
    image_id: &str,
) -> Result<ImageFile, ToolError> {
    let unknown = || {
        ToolError::invalid_arguments(format!(
            "image_id {image_id:?} is no picture of this chat: give the image_id of a picture \
             made here, or leave it out to make a new one"
        ))
    };
    let (Some((attachments, _)), Some(chat_id)) = (keep, log.chat_id.as_ref()) else {
        return Err(ToolError::invalid_arguments(
            "only a picture of a stored chat can be changed; leave image_id out to make a new one",
        ));
    };
    let id = AttachmentId::parse(image_id).ok_or_else(unknown)?;
    let row = attachments
        .get_owned(&log.owner_id, chat_id, &id)
        .await
        .map_err(|err| failed(format!("the chat's pictures could not be read: {err}")))?
        .ok_or_else(unknown)?;
    let bytes = attachments
        .read(chat_id, &row.id)
        .await
        .map_err(|err| failed(format!("the picture could not be read: {err}")))?;
    Ok(ImageFile {
        field: "image".into(),
        filename: format!(
            "{}.{}",
            row.id,
            row.mime_type.rsplit('/').next().unwrap_or("png")
        ),
        mime_type: row.mime_type,
        bytes,
    })
}

/// Keeps the picture (base64 `result`) as an attachment of the run's chat and a part of its
/// answer; returns the attachment's id. A picture that cannot be kept (not an image the chat
/// takes, too large) is still the call's result, and the log says why.
async fn keep_picture(
    log: &RunLog,
    attachments: &Attachments,
    parts: &Parts,
    result: &str,
) -> Option<String> {
    use base64::Engine;
    let chat_id = log.chat_id.as_ref()?;
    let bytes = match base64::engine::general_purpose::STANDARD.decode(result.trim()) {
        Ok(bytes) => bytes,
        Err(err) => {
            tracing::warn!(run_id = %log.run_id, %err, "a generated picture is not base64; not kept");
            return None;
        }
    };
    match attachments.store(chat_id, &log.owner_id, bytes).await {
        Ok(row) => {
            let part = ImagePart {
                attachment_id: row.id.clone(),
                mime_type: row.mime_type.clone(),
                detail: None,
            };
            parts.upsert(part.to_part());
            Some(row.id.to_string())
        }
        Err(err) => {
            tracing::warn!(run_id = %log.run_id, %err, "a generated picture could not be kept in the chat");
            None
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What the picture shows, in detail: subject, setting, style, composition.
    #[schemars(length(min = 1, max = MAX_PROMPT_CHARS))]
    prompt: String,
    /// Width x height in pixels, such as 1024x1024, or auto.
    size: Option<String>,
    /// To change a picture made earlier in this chat instead of making a new one: its
    /// image_id (given with the picture).
    #[schemars(length(max = 64))]
    image_id: Option<String>,
}

fn failed(message: String) -> ToolError {
    ToolError::new(
        "image_generation_failed",
        message,
        "Tell the user the picture could not be made, or try a simpler prompt.",
    )
}

/// The picture and what the server said of it, from a JSON answer (`data[0]`).
fn from_json(body: &Value) -> Option<Map<String, Value>> {
    let first = &body["data"][0];
    let result = first["b64_json"].as_str()?;
    let mut picture = Map::new();
    picture.insert("result".into(), json!(result));
    picture.insert("revised_prompt".into(), first["revised_prompt"].clone());
    for key in ["size", "quality", "output_format", "background"] {
        picture.insert(key.into(), body[key].clone());
    }
    Some(picture)
}

/// Reads an event stream's `data:` payloads as they come, calling `partial` for each
/// `image_generation.partial_image` and returning the `image_generation.completed` one.
async fn read_stream(
    response: reqwest::Response,
    limit: usize,
    mut partial: impl FnMut(&Value),
) -> Result<Value, ToolError> {
    let mut bytes = response.bytes_stream();
    let mut buffer: Vec<u8> = Vec::new();
    let mut read = 0usize;
    while let Some(chunk) = bytes.next().await {
        let chunk =
            chunk.map_err(|err| failed(format!("the image server's stream broke: {err}")))?;
        read += chunk.len();
        if read > limit {
            return Err(failed(format!(
                "the image server's answer is larger than {limit} bytes"
            )));
        }
        buffer.extend_from_slice(&chunk);
        while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = buffer.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&frame);
            let data: String = text
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim)
                .collect();
            let Ok(event) = serde_json::from_str::<Value>(&data) else {
                continue;
            };
            match event["type"].as_str() {
                Some("image_generation.partial_image") => partial(&event),
                Some("image_generation.completed") => return Ok(event),
                _ => {}
            }
        }
    }
    Err(failed(
        "the image server's stream ended before the picture was done".into(),
    ))
}

impl TypedTool for ImageGenerationTool {
    type Args = Args;

    fn name(&self) -> &'static str {
        GENERATE_IMAGE
    }

    fn description(&self) -> Cow<'_, str> {
        "Make a picture from a description. The user sees the picture with your answer; \
         describe it in a sentence rather than repeating the prompt."
            .into()
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    /// `response.image_generation_call.*`.
    fn requested(&self) -> Option<crate::tools::Requested> {
        (!self.options.is_empty()).then(|| crate::tools::Requested::ImageGeneration {
            fields: self.options.clone(),
        })
    }

    fn own_events(&self) -> bool {
        true
    }

    fn call(&self, args: Args) -> ToolFuture {
        let call_id = format!("call_{}", uuid::Uuid::now_v7().simple());
        self.call_with_id(&call_id, args)
    }

    fn call_with_id(&self, call_id: &str, args: Args) -> ToolFuture {
        let item_id = item_id(call_id);
        let log = Arc::clone(&self.log);
        let images = self.images.clone();
        let keep = self.keep.clone();
        let mut rest = self.options.clone();
        let output_index = self.calls.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move {
            if args.prompt.trim().is_empty() || args.prompt.chars().count() > MAX_PROMPT_CHARS {
                return Err(ToolError::invalid_arguments(format!(
                    "prompt must be 1-{MAX_PROMPT_CHARS} characters"
                )));
            }
            rest.remove("type");
            let model = rest
                .remove("model")
                .and_then(|m| m.as_str().map(str::to_string));
            if let Some(size) = args.size {
                rest.insert("size".into(), json!(size));
            }
            let partials = rest
                .get("partial_images")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if partials > 0 {
                rest.insert("stream".into(), json!(true));
            } else {
                rest.remove("partial_images");
            }
            let ids = json!({"item_id": item_id, "output_index": output_index});
            log.emit("response.image_generation_call.in_progress", ids.clone());
            log.emit("response.image_generation_call.generating", ids.clone());
            let body = images::provider_body(
                &images,
                ImageRequest {
                    prompt: args.prompt,
                    model,
                    n: Some(1),
                    rest,
                },
            )
            .map_err(|err| ToolError::invalid_arguments(err.to_string()))?;
            let response = match &args.image_id {
                None => images::generate(&images, &body).await,
                Some(image_id) => {
                    let file = picture_to_change(&log, keep.as_ref(), image_id).await?;
                    images::edit(&images, &body, vec![file]).await
                }
            }
            .map_err(|err| failed(err.to_string()))?;
            let streamed = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|t| t.starts_with("text/event-stream"));
            let picture = if streamed {
                let completed = read_stream(response, images.max_response_bytes, |event| {
                    let mut payload = ids.clone();
                    payload["partial_image_index"] = event["partial_image_index"].clone();
                    payload["partial_image_b64"] = event["b64_json"].clone();
                    log.emit("response.image_generation_call.partial_image", payload);
                })
                .await?;
                let mut picture = Map::new();
                picture.insert("result".into(), completed["b64_json"].clone());
                // OpenAI's completed event has no revised prompt; a server that sends one
                // is passed on.
                for key in [
                    "revised_prompt",
                    "size",
                    "quality",
                    "output_format",
                    "background",
                ] {
                    picture.insert(key.into(), completed[key].clone());
                }
                picture
            } else {
                let text = response
                    .text()
                    .await
                    .map_err(|err| failed(format!("the image server's answer broke: {err}")))?;
                if text.len() > images.max_response_bytes {
                    return Err(failed(format!(
                        "the image server's answer is larger than {} bytes",
                        images.max_response_bytes
                    )));
                }
                let body: Value = serde_json::from_str(&text).map_err(|err| {
                    failed(format!("the image server's answer is not JSON: {err}"))
                })?;
                from_json(&body).ok_or_else(|| failed("the image server sent no picture".into()))?
            };
            if !picture["result"].is_string() {
                return Err(failed("the image server sent no picture".into()));
            }
            let revised_prompt = picture["revised_prompt"].clone();
            let size = picture["size"].clone();
            let kept = match (&keep, picture["result"].as_str()) {
                (Some((attachments, parts)), Some(result)) => {
                    keep_picture(&log, attachments, parts, result).await
                }
                _ => None,
            };
            let mut picture = picture;
            if let Some(id) = &kept {
                picture.insert("x_attachment_id".into(), json!(id));
            }
            let mut completed = ids;
            completed[DELIVERABLE_KEY] = Value::Object(picture);
            log.emit("response.image_generation_call.completed", completed);
            let mut result = json!({
                "status": "completed",
                "revised_prompt": revised_prompt,
                "size": size,
                "note": "The picture was made and is shown to the user with your answer.",
            });
            if let Some(id) = kept {
                result["image_id"] = json!(id);
            }
            Ok(result)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_answer_gives_the_picture_and_what_the_server_said_of_it() {
        let body = json!({"created": 1, "data": [{"b64_json": "AAAA", "revised_prompt": "r"}],
            "size": "256x256", "quality": "low", "output_format": "png"});
        let picture = from_json(&body).unwrap();
        assert_eq!(picture["result"], "AAAA");
        assert_eq!(picture["revised_prompt"], "r");
        assert_eq!(picture["size"], "256x256");
        assert_eq!(picture["background"], Value::Null);
        assert!(from_json(&json!({"data": []})).is_none());
    }
}
