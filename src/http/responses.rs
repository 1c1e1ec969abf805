//! `POST /v1/responses`: OpenAI's Responses API over the same runs as Chat Completions. A
//! `web_search_preview` tool opts into server-side tools, its `x_tools` choosing them (seed
//! 000). `x_chat_id` runs the request as a turn of a stored chat, whose documents the model
//! may search: a `file_search` tool (seed 002) needs it, and each search becomes a
//! `file_search_call` output item, its passages' `chunk_text` included only when `include`
//! names `file_search_call.results`. Streams use typed `event:` lines: `response.*` for the
//! answer, `x_*` for progress.

use entities::ids::ChatId;

use actix_web::{HttpResponse, web};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::sse::accumulate_metadata;
use crate::auth::Principal;
use crate::chat::session::Turn;
use crate::error::{AppError, AppResult};
use crate::llm::wire::{ChatMessage, ChatRequest, MessageContent, Role};
use crate::run::events::RunEvent;
use crate::state::AppState;
use crate::supervisor::launch::{
    RunOptions, WebSearchOptions, check_message_lengths, launch_chat_turn, launch_ephemeral,
};

mod encode;

use encode::{Output, response_object, responses_usage, stream};

/// Most input items one request may carry.
const MAX_INPUT_ITEMS: usize = 2_000;
/// The `include` value that puts passages' text in `file_search_call` items (seed 002).
const INCLUDE_FILE_SEARCH_RESULTS: &str = "file_search_call.results";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/v1/responses", web::post().to(create));
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Input {
    Text(String),
    Items(Vec<InputItem>),
}

#[derive(Deserialize)]
struct InputItem {
    role: Role,
    content: ItemContent,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ItemContent {
    Text(String),
    Parts(Vec<Value>),
}

#[derive(Deserialize)]
struct ResponsesRequest {
    model: Option<String>,
    input: Input,
    instructions: Option<String>,
    #[serde(default)]
    stream: bool,
    temperature: Option<f32>,
    top_p: Option<f32>,
    max_output_tokens: Option<u32>,
    #[serde(default)]
    tools: Vec<Value>,
    #[serde(default)]
    include: Vec<String>,
    /// Run as a turn of this stored chat (its history is the context).
    x_chat_id: Option<ChatId>,
}

impl ResponsesRequest {
    fn messages(&self) -> AppResult<Vec<ChatMessage>> {
        let mut messages = Vec::new();
        if let Some(instructions) = self
            .instructions
            .as_deref()
            .filter(|i| !i.trim().is_empty())
        {
            messages.push(ChatMessage::system(instructions));
        }
        match &self.input {
            Input::Text(text) => messages.push(ChatMessage::user(text.clone())),
            Input::Items(items) => {
                if items.len() > MAX_INPUT_ITEMS {
                    return Err(AppError::invalid(format!(
                        "at most {MAX_INPUT_ITEMS} input items"
                    )));
                }
                for item in items {
                    let text = match &item.content {
                        ItemContent::Text(text) => text.clone(),
                        ItemContent::Parts(parts) => MessageContent::Parts(
                            parts
                                .iter()
                                .map(|p| json!({"type": "text", "text": p["text"]}))
                                .collect(),
                        )
                        .text(),
                    };
                    messages.push(ChatMessage {
                        role: item.role,
                        content: Some(MessageContent::Text(text)),
                        tool_calls: None,
                        tool_call_id: None,
                        name: None,
                    });
                }
            }
        }
        match messages.last() {
            Some(last) if last.role == Role::User && !last.text().trim().is_empty() => Ok(messages),
            _ => Err(AppError::invalid(
                "input must end with a non-empty user message",
            )),
        }
    }

    fn options(&self, default_model: &str) -> AppResult<RunOptions> {
        let mut web_search = None;
        for tool in &self.tools {
            match tool["type"].as_str() {
                Some("web_search_preview") | Some("web_search") => {
                    web_search = Some(
                        serde_json::from_value::<WebSearchOptions>(tool.clone()).map_err(
                            |err| {
                                AppError::invalid(format!("invalid web_search_preview tool: {err}"))
                            },
                        )?,
                    );
                }
                // The chat's tools, file_search among them once it has searchable documents,
                // come with every turn of a stored chat.
                Some("file_search") if self.x_chat_id.is_some() => {}
                Some("file_search") => {
                    return Err(AppError::invalid(
                        "file_search searches a chat's uploaded documents: send x_chat_id with \
                         the chat's id",
                    ));
                }
                other => {
                    return Err(AppError::invalid(format!(
                        "tool type {} is not supported; use web_search_preview for server-side \
                         tools, or file_search with x_chat_id",
                        other.unwrap_or("(missing)")
                    )));
                }
            }
        }
        let mut template = ChatRequest::new(
            self.model
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| default_model.to_string()),
            Vec::new(),
        );
        template.temperature = self.temperature;
        template.top_p = self.top_p;
        template.max_tokens = self.max_output_tokens;
        Ok(RunOptions {
            tools_enabled: web_search.is_some(),
            web_search,
            template: Some(template),
            client_tools: Vec::new(),
            enable_tools: None,
            agent: None,
        })
    }
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<ResponsesRequest>,
) -> AppResult<HttpResponse> {
    let request = body.into_inner();
    let mut messages = request.messages()?;
    check_message_lengths(&state.config, &messages)?;
    let options = request.options(state.llm.default_model())?;
    if let Some(unknown) = request
        .include
        .iter()
        .find(|value| value.as_str() != INCLUDE_FILE_SEARCH_RESULTS)
    {
        return Err(AppError::invalid(format!(
            "include value {unknown:?} is not supported; the one known is \
             {INCLUDE_FILE_SEARCH_RESULTS:?}"
        )));
    }
    let include_results = !request.include.is_empty();
    let log = match &request.x_chat_id {
        Some(chat_id) => {
            // The chat's history is the context; the request's last user message is the turn.
            let content = messages
                .pop()
                .map(|message| message.text())
                .ok_or_else(|| AppError::invalid("input must end with a user message"))?;
            let turn = Turn::Send {
                parent_id: None,
                content,
            };
            launch_chat_turn(&state.launcher, &principal, chat_id, turn, options).await?
        }
        None => launch_ephemeral(&state.launcher, &principal, messages, options)?,
    };
    if request.stream {
        return Ok(stream(log, include_results));
    }
    let mut events = Box::pin(log.subscribe(0));
    let mut output = Output::new(include_results);
    let mut metadata: Map<String, Value> = Map::new();
    while let Some((_, event)) = events.next().await {
        output.observe(event.as_ref());
        match event.as_ref() {
            RunEvent::Finished {
                stop_reason,
                usage,
                error,
                ..
            } => {
                if let Some(error) = error
                    && output.text.is_empty()
                {
                    return Err(super::completions::run_failure(error));
                }
                let mut body = response_object(&log, *stop_reason, &output);
                body["usage"] = responses_usage(usage);
                body["metadata"] = Value::Object(metadata);
                if let Some(chat_id) = &log.chat_id {
                    body["x_chat_id"] = json!(chat_id);
                }
                return Ok(HttpResponse::Ok().json(body));
            }
            RunEvent::TextDelta { .. } => {}
            other => accumulate_metadata(&mut metadata, &log, other),
        }
    }
    Err(AppError::internal(anyhow::anyhow!(
        "run ended without finishing"
    )))
}

#[cfg(test)]
mod tests;
