//! `GET /v1/models` and `/v1/models/{id}`: the upstream's model list, passed through for
//! OpenAI clients; `POST /v1/embeddings`: Colloquy's configured embedder (the upstream's, MiniLM
//! or the hash embedder) in OpenAI's response shape.

use actix_web::{HttpResponse, web};
use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::Principal;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Most texts one embeddings request may carry.
pub const MAX_EMBEDDING_INPUTS: usize = 512;
/// Longest text one embeddings request may carry, in characters.
pub const MAX_EMBEDDING_INPUT_CHARS: usize = 32_768;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/models", web::get().to(list))
        .route("/v1/models/{id:.+}", web::get().to(get))
        .route("/v1/embeddings", web::post().to(embeddings));
}

async fn list(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let models = state
        .llm()
        .models()
        .await
        .map_err(|err| AppError::upstream(err, principal.is_admin()))?;
    Ok(HttpResponse::Ok().json(models))
}

/// One model of the upstream's list (ids may contain `/` and `:`, as Ollama's and
/// Hugging Face's do).
async fn get(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> AppResult<HttpResponse> {
    let models = state
        .llm()
        .models()
        .await
        .map_err(|err| AppError::upstream(err, principal.is_admin()))?;
    let id = path.into_inner();
    models
        .data
        .into_iter()
        .find(|model| model.id == id)
        .map(|model| HttpResponse::Ok().json(model))
        .ok_or(AppError::NotFound("model"))
}

/// OpenAI's embeddings request. `model` and `user` are accepted and not used: Colloquy has
/// one embedder, and the answer's `model` names it.
#[derive(Deserialize)]
struct EmbeddingsRequest {
    input: Value,
    encoding_format: Option<String>,
    dimensions: Option<usize>,
}

/// The texts of an embeddings request's `input`: a string or an array of strings.
fn input_texts(input: Value) -> AppResult<Vec<String>> {
    let texts = match input {
        Value::String(text) => vec![text],
        Value::Array(items) if !items.is_empty() => items
            .into_iter()
            .map(|item| match item {
                Value::String(text) => Ok(text),
                Value::Array(_) | Value::Number(_) => Err(AppError::invalid(
                    "input as token ids is not supported; send the text",
                )),
                _ => Err(AppError::invalid(
                    "input must be a string or an array of strings",
                )),
            })
            .collect::<AppResult<_>>()?,
        _ => {
            return Err(AppError::invalid(
                "input must be a non-empty string or array of strings",
            ));
        }
    };
    if texts.len() > MAX_EMBEDDING_INPUTS {
        return Err(AppError::invalid(format!(
            "input has {} texts; at most {MAX_EMBEDDING_INPUTS} per request",
            texts.len()
        )));
    }
    for (index, text) in texts.iter().enumerate() {
        let chars = text.chars().count();
        if text.trim().is_empty() {
            return Err(AppError::invalid(format!("input[{index}] is empty")));
        }
        if chars > MAX_EMBEDDING_INPUT_CHARS {
            return Err(AppError::TooLarge {
                code: "input_too_long",
                message: format!(
                    "input[{index}] has {chars} characters; at most {MAX_EMBEDDING_INPUT_CHARS}"
                ),
            });
        }
    }
    Ok(texts)
}

async fn embeddings(
    _principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<EmbeddingsRequest>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    let base64 = match body.encoding_format.as_deref() {
        None | Some("float") => false,
        Some("base64") => true,
        Some(other) => {
            return Err(AppError::invalid(format!(
                "encoding_format must be \"float\" or \"base64\", not {other:?}"
            )));
        }
    };
    let texts = input_texts(body.input)?;
    // Counting up to 512 texts of 32,768 characters is CPU work: off the HTTP worker, beside
    // the embedding itself.
    let counted = texts.clone();
    let tokens = tokio::task::spawn_blocking(move || {
        counted
            .iter()
            .map(|t| crate::agent::context::tokens(t))
            .sum::<u64>()
    });
    let vectors = state
        .embedder()
        .embed(texts)
        .await
        .map_err(|err| AppError::EmbedderFailed(err.to_string()))?;
    let tokens = tokens.await.map_err(AppError::internal)?;
    let size = vectors.first().map_or(0, Vec::len);
    if let Some(dimensions) = body.dimensions
        && dimensions != size
    {
        return Err(AppError::invalid(format!(
            "the embedder {} makes vectors of {size} dimensions, not {dimensions}",
            state.embedder().id()
        )));
    }
    let data: Vec<Value> = vectors
        .into_iter()
        .enumerate()
        .map(|(index, vector)| {
            let embedding = if base64 {
                let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
                json!(base64::engine::general_purpose::STANDARD.encode(bytes))
            } else {
                json!(vector)
            };
            json!({"object": "embedding", "index": index, "embedding": embedding})
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({
        "object": "list",
        "data": data,
        "model": state.embedder().id(),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_a_string_or_strings_and_bounded() {
        assert_eq!(input_texts(json!("a")).unwrap(), ["a"]);
        assert_eq!(input_texts(json!(["a", "b"])).unwrap(), ["a", "b"]);
        for bad in [
            json!([]),
            json!(""),
            json!([1, 2]),
            json!([[1, 2]]),
            json!({"a": 1}),
        ] {
            assert!(input_texts(bad.clone()).is_err(), "{bad}");
        }
        let many: Vec<String> = (0..=MAX_EMBEDDING_INPUTS).map(|i| i.to_string()).collect();
        assert!(input_texts(json!(many)).is_err());
        let long = "x".repeat(MAX_EMBEDDING_INPUT_CHARS + 1);
        assert!(matches!(
            input_texts(json!(long)),
            Err(AppError::TooLarge { .. })
        ));
    }
}
