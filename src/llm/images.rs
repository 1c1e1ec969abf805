//! The image server (`[images]`): OpenAI's `/v1/images/generations` and `/v1/images/edits`
//! (a form with the pictures to change) on LocalAI, a
//! stable-diffusion server with an OpenAI front, or OpenAI. A request is checked against the
//! configured limits and sent with the configured key and (when it names none) model; the
//! answer is the provider's response, JSON or its server-sent events, for the caller to read.

use std::sync::OnceLock;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::config::ImagesConfig;

/// A generation request: the fields Colloquy checks; the rest (`size`, `quality`,
/// `output_format`, `partial_images`, `stream`, `background`, ...) go to the provider as they
/// are.
#[derive(Debug, Deserialize)]
pub struct ImageRequest {
    pub prompt: String,
    pub model: Option<String>,
    pub n: Option<u32>,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// Why a generation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum ImagesError {
    #[error(
        "this server has no image server: an operator adds one in the [images] section of the \
         configuration"
    )]
    NotConfigured,
    #[error("{0}")]
    Invalid(String),
    #[error("prompt is longer than {0} characters")]
    PromptTooLong(usize),
    #[error("the image server did not answer in time")]
    Timeout,
    #[error("the image server could not be reached")]
    Unreachable,
    /// The provider refused the request (a 4xx): its own message.
    #[error("the image server refused the request: {0}")]
    Rejected(String),
    /// The provider failed (a 5xx): its own message.
    #[error("the image server failed: {0}")]
    Failed(String),
}

/// One client for every provider request: each sets its own timeout.
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .user_agent("colloquy")
            .build()
            .unwrap_or_default()
    })
}

/// The body sent to the provider: the request's, checked, with the model filled in.
pub fn provider_body(images: &ImagesConfig, request: ImageRequest) -> Result<Value, ImagesError> {
    if request.prompt.trim().is_empty() {
        return Err(ImagesError::Invalid("prompt must not be empty".into()));
    }
    if request.prompt.chars().count() > images.max_prompt_chars {
        return Err(ImagesError::PromptTooLong(images.max_prompt_chars));
    }
    let n = request.n.unwrap_or(1);
    if !(1..=images.max_images).contains(&n) {
        return Err(ImagesError::Invalid(format!(
            "n must be from 1 to {}",
            images.max_images
        )));
    }
    let mut body = request.rest;
    body.insert("prompt".into(), json!(request.prompt));
    let model = request
        .model
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| images.model.clone());
    body.insert("model".into(), json!(model));
    body.insert("n".into(), json!(n));
    Ok(Value::Object(body))
}

/// Sends `body` (from `provider_body`) to the image server; its successful response, to be
/// read or streamed on.
pub async fn generate(
    images: &ImagesConfig,
    body: &Value,
) -> Result<reqwest::Response, ImagesError> {
    send(images, "generations", |request| request.json(body)).await
}

/// One file of an edit: its form field (`image`, `image[]` or `mask`), name, type and bytes.
pub struct ImageFile {
    pub field: String,
    pub filename: String,
    pub mime_type: String,
    pub bytes: Vec<u8>,
}

/// Sends an edit (`/images/edits`) to the image server, as OpenAI's form: `body`'s fields
/// (from `provider_body`) as text, then the files; its successful response, to be read or
/// streamed on.
pub async fn edit(
    images: &ImagesConfig,
    body: &Value,
    files: Vec<ImageFile>,
) -> Result<reqwest::Response, ImagesError> {
    let mut form = reqwest::multipart::Form::new();
    for (name, value) in body.as_object().into_iter().flatten() {
        let text = match value {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        form = form.text(name.clone(), text);
    }
    for file in files {
        let part = reqwest::multipart::Part::bytes(file.bytes)
            .file_name(file.filename)
            .mime_str(&file.mime_type)
            .map_err(|err| ImagesError::Invalid(format!("a file's type: {err}")))?;
        form = form.part(file.field, part);
    }
    send(images, "edits", move |request| request.multipart(form)).await
}

/// Posts to the image server's `images/{path}` with the configured key and timeout, the body
/// set by `with_body`; its successful response, or why not.
async fn send(
    images: &ImagesConfig,
    path: &str,
    with_body: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, ImagesError> {
    let url = format!("{}/images/{path}", images.base_url.trim_end_matches('/'));
    let mut request = client()
        .post(url)
        .timeout(Duration::from_secs(images.timeout_secs));
    if let Some(key) = &images.api_key {
        request = request.bearer_auth(secrecy::ExposeSecret::expose_secret(key));
    }
    let response = with_body(request).send().await.map_err(|err| {
        if err.is_timeout() {
            ImagesError::Timeout
        } else {
            ImagesError::Unreachable
        }
    })?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let text = response.text().await.unwrap_or_default();
    let said: Value = serde_json::from_str(&text).unwrap_or_default();
    let message = said["error"]["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| format!("HTTP {}", status.as_u16()));
    Err(if status.is_client_error() {
        ImagesError::Rejected(message)
    } else {
        ImagesError::Failed(message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn images() -> ImagesConfig {
        ImagesConfig {
            base_url: "http://127.0.0.1:9/v1".into(),
            api_key: None,
            model: "sd-turbo".into(),
            timeout_secs: 5,
            max_prompt_chars: 10,
            max_images: 2,
            max_response_bytes: 1024,
        }
    }

    fn request(value: Value) -> ImageRequest {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_request_is_checked_and_gets_the_configured_model() {
        let body = provider_body(
            &images(),
            request(json!({"prompt": "a cat", "size": "256x256"})),
        )
        .unwrap();
        assert_eq!(
            body,
            json!({"prompt": "a cat", "model": "sd-turbo", "n": 1, "size": "256x256"})
        );
        let named = provider_body(
            &images(),
            request(json!({"prompt": "a cat", "model": "other", "n": 2})),
        )
        .unwrap();
        assert_eq!(named["model"], "other");
        for bad in [
            json!({"prompt": "  "}),
            json!({"prompt": "far too long a prompt"}),
            json!({"prompt": "a cat", "n": 3}),
            json!({"prompt": "a cat", "n": 0}),
        ] {
            assert!(
                provider_body(&images(), request(bad.clone())).is_err(),
                "{bad}"
            );
        }
    }
}
