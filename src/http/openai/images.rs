//! `POST /v1/images/generations`: OpenAI's image generation, passed through to the server
//! `[images]` names (`llm::images`), behind Colloquy's authentication and limits. The caller's
//! key never reaches the provider; the prompt's length, `n` and the answer's size are bounded;
//! a request that names no model gets the configured one. The provider's answer comes back as
//! it was sent: JSON, or with `stream: true` its server-sent events
//! (`image_generation.partial_image`, `image_generation.completed`).

use actix_web::{HttpResponse, web};
use futures_util::StreamExt;

use crate::auth::Principal;
use crate::error::AppResult;
use crate::llm::images::{self, ImageRequest, ImagesError};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig, max_body_bytes: usize) {
    cfg.service(
        web::resource("/v1/images/generations")
            .app_data(
                web::JsonConfig::default()
                    .limit(max_body_bytes)
                    .error_handler(crate::http::json_error),
            )
            .route(web::post().to(generate)),
    );
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
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    // Passed on as it comes (a stream's partial images as they are made), cut off with an
    // error past the answer's limit.
    let limit = config.max_response_bytes;
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
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("x-accel-buffering", "no"))
        .streaming(bytes))
}
