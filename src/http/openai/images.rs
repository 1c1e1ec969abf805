//! `POST /v1/images/generations` and `POST /v1/images/edits`: OpenAI's image generation and
//! editing, passed through to the server `[images]` names (`llm::images`), behind Colloquy's
//! authentication and limits. An edit is OpenAI's form: one to `MAX_EDIT_IMAGES` pictures
//! (`image` or `image[]`), an optional `mask`, each checked by its bytes to be a PNG, JPEG,
//! WebP or GIF within `attachments.max_image_bytes`, and the text fields. The caller's
//! key never reaches the provider; the prompt's length, `n` and the answer's size are bounded;
//! a request that names no model gets the configured one. The provider's answer comes back as
//! it was sent: JSON, or with `stream: true` its server-sent events
//! (`image_generation.partial_image`, `image_generation.completed`).

use actix_multipart::Multipart;
use actix_web::{HttpRequest, HttpResponse, web};
use futures_util::StreamExt;
use serde_json::{Map, Value};

use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::llm::images::{self, ImageFile, ImageRequest, ImagesError};
use crate::state::AppState;

/// Most pictures one edit may send (OpenAI's limit).
const MAX_EDIT_IMAGES: usize = 16;
/// Longest text field of an edit's form other than the prompt, in bytes.
const MAX_FIELD_BYTES: usize = 1_024;
/// The text fields an edit's form may carry (OpenAI's).
const EDIT_FIELDS: &[&str] = &[
    "prompt",
    "model",
    "n",
    "size",
    "quality",
    "response_format",
    "output_format",
    "output_compression",
    "background",
    "input_fidelity",
    "stream",
    "partial_images",
    "user",
];

pub fn configure(cfg: &mut web::ServiceConfig, max_body_bytes: usize) {
    cfg.service(
        web::resource("/v1/images/generations")
            .app_data(
                web::JsonConfig::default()
                    .limit(max_body_bytes)
                    .error_handler(crate::http::json_error),
            )
            .route(web::post().to(generate)),
    )
    .route("/v1/images/edits", web::post().to(edit));
}

async fn generate(
    _principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<ImageRequest>,
) -> AppResult<HttpResponse> {
    let config = state
        .config()
        .images
        .as_ref()
        .ok_or(ImagesError::NotConfigured)?;
    let body = images::provider_body(config, body.into_inner())?;
    let response = images::generate(config, &body).await?;
    Ok(pass_on(response, config.max_response_bytes))
}

/// The image server's answer as it comes (a stream's partial images as they are made), cut
/// off with an error past `limit` bytes.
fn pass_on(response: reqwest::Response, limit: usize) -> HttpResponse {
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    let mut passed = 0usize;
    let bytes = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(|err| {
            std::io::Error::other(format!("the image server's answer broke off: {err}"))
        })?;
        passed += chunk.len();
        if passed > limit {
            return Err(std::io::Error::other(format!(
                "the image server's answer is larger than {limit} bytes"
            )));
        }
        Ok::<_, std::io::Error>(chunk)
    });
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("x-accel-buffering", "no"))
        .streaming(bytes)
}

/// An edit: the form read and checked field by field (nothing is sent on a refusal), then
/// passed to the image server with the configured key and model.
async fn edit(
    _principal: Principal,
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> AppResult<HttpResponse> {
    let config = state
        .config()
        .images
        .as_ref()
        .ok_or(ImagesError::NotConfigured)?;
    let is_form = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("multipart/form-data"));
    if !is_form {
        return Err(AppError::UnsupportedMediaType(
            "send an edit as multipart/form-data: image (or image[]), prompt and OpenAI's other \
             fields"
                .into(),
        ));
    }
    let max_image = state.config().attachments.max_image_bytes;
    let mut form = Multipart::new(req.headers(), payload);
    let mut fields: Map<String, Value> = Map::new();
    let mut files: Vec<ImageFile> = Vec::new();
    let mut count = 0usize;
    while let Some(field) = form.next().await {
        let mut field =
            field.map_err(|err| AppError::invalid(format!("bad multipart body: {err}")))?;
        count += 1;
        if count > MAX_EDIT_IMAGES + 1 + EDIT_FIELDS.len() {
            return Err(AppError::invalid(
                "the form has too many fields for an image edit",
            ));
        }
        let name = field.name().unwrap_or_default().to_string();
        let is_file = matches!(name.as_str(), "image" | "image[]" | "mask");
        let limit = match name.as_str() {
            _ if is_file => max_image,
            "prompt" => config.max_prompt_chars * 4,
            _ if EDIT_FIELDS.contains(&name.as_str()) => MAX_FIELD_BYTES,
            other => {
                return Err(AppError::invalid(format!(
                    "{other:?} is not a field of an image edit (image, mask, {})",
                    EDIT_FIELDS.join(", ")
                )));
            }
        };
        let filename = field
            .content_disposition()
            .and_then(|cd| cd.get_filename())
            .unwrap_or("image")
            .chars()
            .filter(|c| !c.is_control() && *c != '"')
            .take(128)
            .collect::<String>();
        let mut bytes = Vec::new();
        while let Some(chunk) = field.next().await {
            let chunk =
                chunk.map_err(|err| AppError::invalid(format!("the form broke off: {err}")))?;
            if bytes.len() + chunk.len() > limit {
                return Err(if is_file {
                    AppError::TooLarge {
                        code: "image_too_large",
                        message: format!("{name} {filename:?} is larger than {limit} bytes"),
                    }
                } else {
                    AppError::invalid(format!("{name} is longer than {limit} bytes"))
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        if is_file {
            let kind = crate::chat::attachments::image::check(&bytes, max_image)?;
            if name == "mask" && files.iter().any(|f| f.field == "mask") {
                return Err(AppError::invalid("an edit takes one mask"));
            }
            if name != "mask"
                && files.iter().filter(|f| f.field != "mask").count() == MAX_EDIT_IMAGES
            {
                return Err(AppError::invalid(format!(
                    "an edit takes at most {MAX_EDIT_IMAGES} images"
                )));
            }
            files.push(ImageFile {
                field: name,
                filename,
                mime_type: kind.mime_type().to_string(),
                bytes,
            });
        } else {
            let text = String::from_utf8(bytes)
                .map_err(|_| AppError::invalid(format!("{name} is not UTF-8 text")))?;
            fields.insert(name, Value::String(text));
        }
    }
    if !files.iter().any(|f| f.field != "mask") {
        return Err(AppError::invalid(
            "an edit needs the picture to change: a file in the field image (or image[])",
        ));
    }
    let text = |fields: &mut Map<String, Value>, key: &str| {
        fields
            .remove(key)
            .and_then(|v| v.as_str().map(str::to_string))
    };
    let prompt = text(&mut fields, "prompt").unwrap_or_default();
    let model = text(&mut fields, "model");
    let n = match text(&mut fields, "n") {
        None => None,
        Some(n) => Some(
            n.trim()
                .parse::<u32>()
                .map_err(|_| AppError::invalid("n must be a whole number"))?,
        ),
    };
    let body = images::provider_body(
        config,
        ImageRequest {
            prompt,
            model,
            n,
            rest: fields,
        },
    )?;
    let response = images::edit(config, &body, files).await?;
    Ok(pass_on(response, config.max_response_bytes))
}
