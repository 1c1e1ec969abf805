//! `POST /v1/chat/completions`: OpenAI's Chat Completions, streaming or not, running the
//! governed loop. `web_search_options` opts into server-side tools; `x_chat_id` runs the turn
//! inside a stored chat; without it the request runs in a fresh chat of its own (kept for
//! `http.v1_chat_retention_days` unless opened in the UI), or with `store: false` in none.

use actix_web::{HttpResponse, web};
use entities::ids::ChatId;
use entities::messages::MessageRole;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::runs::stream_run;
use super::sse::{Dialect, accumulate_metadata, completion_id};
use crate::auth::Principal;
use crate::chat::session::{ImportHistory, Turn};
use crate::error::{AppError, AppResult};
use crate::llm::wire::{ChatMessage, ChatRequest, MessageContent, Role, ToolDefinition};
use crate::run::events::RunEvent;
use crate::state::AppState;
use crate::supervisor::launch::{
    RunOptions, WebSearchOptions, check_message_lengths, launch_chat_turn, launch_ephemeral,
};
use crate::supervisor::resume::{ToolResult, launch_resume, launch_tool_results};

/// Most messages one request may carry.
const MAX_MESSAGES: usize = 2_000;

/// `max_body_bytes`: this route's own JSON limit, larger than the rest's (inline images).
pub fn configure(cfg: &mut web::ServiceConfig, max_body_bytes: usize) {
    cfg.service(
        web::resource("/v1/chat/completions")
            .app_data(
                web::JsonConfig::default()
                    .limit(max_body_bytes)
                    .error_handler(super::json_error),
            )
            .route(web::post().to(create)),
    );
}

/// Parameters Colloquy cannot honour, refused by name rather than dropped.
const REFUSED: [(&str, &str); 4] = [
    (
        "logprobs",
        "logprobs are not supported: the answer is assembled from a run of several model calls",
    ),
    (
        "top_logprobs",
        "top_logprobs is not supported: the answer is assembled from a run of several model calls",
    ),
    (
        "functions",
        "functions (the legacy form of tools) is not supported; use tools",
    ),
    (
        "function_call",
        "function_call (the legacy form of tool_choice) is not supported; use tool_choice",
    ),
];

/// Most client-side tools one request may offer (OpenAI's limit).
const MAX_CLIENT_TOOLS: usize = 128;

/// Fields this handler reads itself, which the upstream must not see.
const OWN_FIELDS: [&str; 1] = ["n"];

#[derive(Deserialize)]
struct CompletionRequest {
    model: Option<String>,
    #[serde(default)]
    messages: Vec<ChatMessage>,
    #[serde(default)]
    stream: bool,
    /// `{include_usage}`: usage on the stream's `x_chat.metadata` chunk, OpenAI's final
    /// usage chunk.
    stream_options: Option<StreamOptions>,
    temperature: Option<f32>,
    top_p: Option<f32>,
    max_tokens: Option<u32>,
    max_completion_tokens: Option<u32>,
    stop: Option<Value>,
    tools: Option<Vec<Value>>,
    /// For the server-side tools: `auto`, `none`, `required` or one named function; it
    /// applies to the run's first model call (later calls are `auto`, so the loop can end).
    tool_choice: Option<Value>,
    web_search_options: Option<WebSearchOptions>,
    x_chat_id: Option<ChatId>,
    /// `false`: run without a chat, storing nothing. Otherwise (and by default) a request
    /// without `x_chat_id` runs in a fresh chat of its own (see `in_new_chat`).
    store: Option<bool>,
    /// Answers a pending ask_user question and streams the paused run's continuation.
    x_ask_user_reply: Option<AskUserReply>,
    /// Everything else: OpenAI parameters passed to the upstream (`response_format`, `seed`,
    /// penalties, `logit_bias`, `user`, `parallel_tool_calls`, ...), checked by `validate`.
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

#[derive(Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AskUserReply {
    correlation_id: String,
    answer: Value,
}

impl CompletionRequest {
    fn validate(&self) -> AppResult<()> {
        if self.messages.is_empty() {
            return Err(AppError::invalid("messages must not be empty"));
        }
        if self.messages.len() > MAX_MESSAGES {
            return Err(AppError::invalid(format!(
                "at most {MAX_MESSAGES} messages per request"
            )));
        }
        self.client_tools()?;
        if let Some(choice) = &self.tool_choice {
            check_tool_choice(choice)?;
        }
        for (field, reason) in REFUSED {
            if self
                .extra
                .get(field)
                .is_some_and(|v| !v.is_null() && *v != false)
            {
                return Err(AppError::invalid(reason));
            }
        }
        if let Some(n) = self.extra.get("n").filter(|n| !n.is_null())
            && n.as_u64() != Some(1)
        {
            return Err(AppError::invalid(format!(
                "n must be 1 (not {n}): Colloquy runs one answer per request; send several requests"
            )));
        }
        let last = &self.messages[self.messages.len() - 1];
        let has_content = !last.text().trim().is_empty()
            || matches!(&last.content, Some(MessageContent::Parts(parts)) if !parts.is_empty());
        let stored = self.x_chat_id.is_some() || self.store == Some(true);
        let allowed = match last.role {
            Role::User => has_content && (!stored || !last.text().trim().is_empty()),
            // The result of a client tool: the conversation goes on from it (in a stored chat,
            // the run that called the tool goes on).
            Role::Tool => last.tool_call_id.is_some() && (!stored || self.x_chat_id.is_some()),
            // A prefill: the model continues the assistant's words, after a user's question.
            Role::Assistant => {
                has_content && !stored && self.messages.iter().any(|m| m.role == Role::User)
            }
            _ => false,
        };
        if !allowed {
            return Err(AppError::invalid(if stored {
                "the last message must be a user message with text (a stored chat continues from \
                 it), or with x_chat_id the results of the chat's waiting client tool calls"
            } else {
                "the last message must be a user message with content, or an assistant message \
                 to continue (a prefill) after a user message"
            }));
        }
        Ok(())
    }

    /// The client's `tools`, checked: functions with a name of at most 64 letters, digits,
    /// `_` or `-`, each named once, at most `MAX_CLIENT_TOOLS`.
    fn client_tools(&self) -> AppResult<Vec<ToolDefinition>> {
        let raw = self.tools.clone().unwrap_or_default();
        if raw.len() > MAX_CLIENT_TOOLS {
            return Err(AppError::invalid(format!(
                "at most {MAX_CLIENT_TOOLS} client-side tools per request, not {}",
                raw.len()
            )));
        }
        let mut tools: Vec<ToolDefinition> = Vec::with_capacity(raw.len());
        for (index, value) in raw.into_iter().enumerate() {
            let tool: ToolDefinition = serde_json::from_value(value).map_err(|err| {
                AppError::invalid(format!(
                    "client-side tools are {{\"type\": \"function\", \"function\": {{\"name\", \
                     \"description\", \"parameters\"}}}}; tools[{index}] is not: {err}"
                ))
            })?;
            let name = &tool.function.name;
            let valid = tool.kind == "function"
                && (1..=64).contains(&name.len())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                return Err(AppError::invalid(format!(
                    "client-side tools[{index}] must be of type function with a name of 1-64 \
                     letters, digits, _ or -"
                )));
            }
            if tools.iter().any(|t| t.function.name == *name) {
                return Err(AppError::invalid(format!(
                    "client-side tools name {name} twice"
                )));
            }
            tools.push(tool);
        }
        Ok(tools)
    }

    /// Whether a request without `x_chat_id` runs in a fresh chat of its own (so the chat
    /// tools — artifacts, memory, ask_user — work, and the client may continue there):
    /// unless `store: false`, and unless the conversation is one a stored chat cannot hold
    /// (client-side tools, a tool result or a prefill last).
    fn in_new_chat(&self) -> bool {
        match self.store {
            Some(store) => store,
            None => {
                let last = &self.messages[self.messages.len() - 1];
                self.tools.as_ref().is_none_or(Vec::is_empty)
                    && last.role == Role::User
                    && !last.text().trim().is_empty()
            }
        }
    }

    fn dialect(&self) -> Dialect {
        Dialect::OpenAi {
            include_usage: self
                .stream_options
                .as_ref()
                .is_some_and(|options| options.include_usage),
        }
    }

    fn options(&self, default_model: &str) -> RunOptions {
        let mut template = ChatRequest::new(
            self.model
                .clone()
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| default_model.to_string()),
            Vec::new(),
        );
        template.temperature = self.temperature;
        template.top_p = self.top_p;
        template.max_tokens = self.max_completion_tokens.or(self.max_tokens);
        template.stop = self.stop.clone();
        template.tool_choice = self.tool_choice.clone();
        template.extra = self
            .extra
            .iter()
            .filter(|(key, _)| !key.starts_with("x_") && !OWN_FIELDS.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        RunOptions {
            tools_enabled: self.web_search_options.is_some(),
            web_search: self.web_search_options.clone(),
            template: Some(template),
            // Checked by `validate`.
            client_tools: self.client_tools().unwrap_or_default(),
        }
    }
}

/// `tool_choice` as OpenAI defines it: a mode, or `{"type": "function", "function": {"name"}}`.
fn check_tool_choice(choice: &Value) -> AppResult<()> {
    let named = choice["type"] == "function" && choice["function"]["name"].is_string();
    match choice.as_str() {
        Some("auto" | "none" | "required") => Ok(()),
        None if named => Ok(()),
        _ => Err(AppError::invalid(
            "tool_choice must be \"auto\", \"none\", \"required\" or \
             {\"type\": \"function\", \"function\": {\"name\": …}}",
        )),
    }
}

async fn create(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<CompletionRequest>,
) -> AppResult<HttpResponse> {
    let mut request = body.into_inner();
    if let Some(reply) = request.x_ask_user_reply.take() {
        let log = launch_resume(
            &state.launcher,
            &principal,
            None,
            &reply.correlation_id,
            reply.answer,
        )
        .await?;
        let chat_id = log.chat_id.clone();
        if request.stream {
            return Ok(stream_run(log, 0, request.dialect()));
        }
        return collect(log, chat_id).await;
    }
    request.validate()?;
    // Servers reject an assistant message with tool calls and no `content` (llama-cpp-python's
    // templates read it): a client's null or missing content is sent as "".
    for message in &mut request.messages {
        if message.role == Role::Assistant
            && message.tool_calls.is_some()
            && message.content.is_none()
        {
            message.content = Some(MessageContent::Text(String::new()));
        }
    }
    // Before anything is stored: `store: true` imports the whole history first.
    check_message_lengths(&state.config, &request.messages)?;
    let options = request.options(state.llm.default_model());
    let dialect = request.dialect();
    let last = request.messages[request.messages.len() - 1].text();
    let last_role = request.messages[request.messages.len() - 1].role;
    let (log, chat_id) = if let Some(chat_id) = &request.x_chat_id
        && last_role == Role::Tool
    {
        let results = trailing_tool_results(&request.messages);
        let client_tools = request.client_tools()?;
        let log = launch_tool_results(&state.launcher, &principal, chat_id, results, client_tools)
            .await?;
        (log, Some(chat_id.clone()))
    } else if let Some(chat_id) = &request.x_chat_id {
        let turn = Turn::Send {
            parent_id: None,
            content: last,
        };
        let log = launch_chat_turn(&state.launcher, &principal, chat_id, turn, options).await?;
        (log, Some(chat_id.clone()))
    } else if request.in_new_chat() {
        // Kept `v1_chat_retention_days` unless someone opens it in the UI (see `sweep`).
        let chat = state.chats.create(&principal.user_id, None, true).await?;
        let history: Vec<(MessageRole, String)> = request.messages[..request.messages.len() - 1]
            .iter()
            .filter_map(|m| {
                let role = match m.role {
                    Role::System => MessageRole::System,
                    Role::User => MessageRole::User,
                    Role::Assistant => MessageRole::Assistant,
                    Role::Developer | Role::Tool => return None,
                };
                Some((role, m.text()))
            })
            .collect();
        if !history.is_empty() {
            state
                .sessions
                .session(&chat.id)
                .send(ImportHistory { messages: history })
                .await??;
        }
        let turn = Turn::Send {
            parent_id: None,
            content: last,
        };
        let log = launch_chat_turn(&state.launcher, &principal, &chat.id, turn, options).await?;
        (log, Some(chat.id))
    } else {
        (
            launch_ephemeral(&state.launcher, &principal, request.messages, options)?,
            None,
        )
    };
    if request.stream {
        let mut response = stream_run(log, 0, dialect);
        if let Some(chat_id) = chat_id
            && let Ok(value) = chat_id.as_str().parse()
        {
            response.headers_mut().insert(
                actix_web::http::header::HeaderName::from_static("x-chat-id"),
                value,
            );
        }
        return Ok(response);
    }
    collect(log, chat_id).await
}

/// The `role: "tool"` messages that end a conversation: the results of the client tool calls
/// the last answer made.
fn trailing_tool_results(messages: &[ChatMessage]) -> Vec<ToolResult> {
    let mut results: Vec<ToolResult> = messages
        .iter()
        .rev()
        .take_while(|m| m.role == Role::Tool)
        .map(|m| ToolResult {
            tool_call_id: m.tool_call_id.clone().unwrap_or_default(),
            content: m.text(),
        })
        .collect();
    results.reverse();
    results
}

/// The HTTP error for a run that failed before producing anything: the status and code of
/// its upstream failure, worded as the run's reader may see it (`RunError::shown`).
pub(super) fn run_failure(error: &crate::run::events::RunError) -> AppError {
    use crate::llm::LlmError;
    let message = error.shown().to_string();
    let cause = message.clone();
    let upstream = match error.code.as_str() {
        "upstream_rejected" => LlmError::Status {
            status: 400,
            message: cause,
        },
        "upstream_timeout" => LlmError::Timeout(cause),
        "upstream_unreachable" => LlmError::Connect(cause),
        "upstream_rate_limited" => LlmError::RateLimited {
            retry_after_secs: None,
        },
        "upstream_invalid_response" => LlmError::InvalidResponse(cause),
        "upstream_stream_error" => LlmError::StreamError(cause),
        "upstream_stream_truncated" => LlmError::StreamTruncated(cause),
        "context_length_exceeded" => LlmError::ContextOverflow {
            context_length: None,
            message: cause,
        },
        _ => LlmError::Status {
            status: 502,
            message: cause,
        },
    };
    AppError::Upstream {
        status: upstream.status(),
        code: upstream.code(),
        cause: upstream.to_string(),
        message,
    }
}

/// The answer's message: its text, and the client tools the model called (then the text may
/// be `null`, as OpenAI's is).
fn message(content: String, tool_calls: Option<Value>) -> Value {
    match tool_calls {
        Some(calls) => json!({"role": "assistant",
            "content": if content.is_empty() { Value::Null } else { json!(content) },
            "tool_calls": calls}),
        None => json!({"role": "assistant", "content": content}),
    }
}

/// Waits for the run and answers in one JSON body, with the progress events accumulated in
/// `x_metadata`, one list per kind (seed 003's `metadata`, renamed: OpenAI's `metadata` is a map
/// of strings, and SDKs reject lists there).
async fn collect(
    log: std::sync::Arc<crate::run::log::RunLog>,
    chat_id: Option<ChatId>,
) -> AppResult<HttpResponse> {
    let mut events = Box::pin(log.subscribe(0));
    let mut content = String::new();
    let mut metadata: Map<String, Value> = Map::new();
    let mut tool_calls: Option<Value> = None;
    while let Some((_, event)) = events.next().await {
        match event.as_ref() {
            RunEvent::TextDelta { content: text } => content.push_str(text),
            RunEvent::ClientToolCalls { calls } => tool_calls = Some(json!(calls)),
            RunEvent::Finished {
                stop_reason,
                usage,
                error,
                assistant_message_id,
                iterations,
            } => {
                if let Some(error) = error
                    && content.is_empty()
                {
                    return Err(run_failure(error));
                }
                let mut body = json!({
                    "id": completion_id(&log),
                    "object": "chat.completion",
                    "created": log.created,
                    "model": log.model,
                    "choices": [{
                        "index": 0,
                        "message": message(content, tool_calls),
                        "finish_reason": if error.is_some() { "error" } else { stop_reason.finish_reason() },
                    }],
                    "usage": usage,
                    // Not `metadata`: OpenAI's is a map of strings, which SDKs check.
                    "x_metadata": metadata,
                    "x_stop_reason": stop_reason,
                    "x_iterations": iterations,
                });
                if let Some(chat_id) = &chat_id {
                    body["x_chat_id"] = json!(chat_id);
                    body["x_message_id"] = json!(assistant_message_id);
                }
                return Ok(HttpResponse::Ok().json(body));
            }
            other => accumulate_metadata(&mut metadata, &log, other),
        }
    }
    Err(AppError::internal(anyhow::anyhow!(
        "run ended without finishing"
    )))
}
