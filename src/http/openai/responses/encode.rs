//! The Responses encoder: a run's events as output items (`Output`), the lifecycle events
//! that build them one step at a time (what a stream sends, and what OpenAI's SDKs replay into
//! the same items), and the response object. The model's reasoning is a `reasoning` item (its
//! text one `summary_text` part) before the message it led to. Server-side tools show as
//! OpenAI shows its own: `file_search_call` and `web_search_call` items with their events, on
//! every stream; a call of the client's `local_shell` is a `local_shell_call` item. The answer's
//! text carries `url_citation` annotations for the pages the run found that it links, and the
//! artifacts the run made are `x_artifact` parts of its last message (deliverables are parts,
//! docs/spec.md#metadata-and-parts).

use serde_json::{Value, json};

use super::citations::{ContainerFile, Source, container_file_citations, url_citations};
use super::items::APPROVAL_ID_PREFIX;
use super::request::{Includes, LOCAL_SHELL};
use crate::run::events::{RunError, RunEvent, StopReason};
use crate::run::log::RunLog;
use crate::tools::code_interpreter::{self, CODE_INTERPRETER};
use crate::tools::file_search;
use crate::tools::image_generation::{self, GENERATE_IMAGE};
use crate::tools::mcp::remote::LIST_TOOLS_EVENT;

/// One output item, as the run's events have built it so far.
enum Item {
    /// The model's reasoning; `open` until another item (or the end) follows it.
    Reasoning {
        id: String,
        text: String,
        open: bool,
    },
    /// Assistant text; `open` until another item (or the end) follows it. `annotations`: its
    /// `url_citation`s, found when it closes; `deliverables`: parts after the text (artifacts).
    Message {
        id: String,
        text: String,
        open: bool,
        annotations: Vec<Value>,
        deliverables: Vec<Value>,
    },
    /// A call of the server's `web_search`: `in_progress`, `searching`, then `completed` or
    /// `failed`; `sources` once its results are in.
    WebSearch {
        id: String,
        call_id: String,
        query: Value,
        status: &'static str,
        sources: Vec<Value>,
    },
    /// A call of `generate_image`: `in_progress` until its picture (`picture`: the
    /// `.completed` event's deliverable) is in, `failed` if none came.
    ImageGeneration {
        id: String,
        call_id: String,
        status: &'static str,
        picture: Option<Value>,
    },
    /// A call of `code_interpreter`: `in_progress`, `interpreting` while it runs, then
    /// `completed` with its container and outputs (logs, figures), or `failed`.
    CodeInterpreter {
        id: String,
        call_id: String,
        code: String,
        /// Whether the code was sent (`.code.done`): the item shows it from then on.
        code_sent: bool,
        container_id: Option<String>,
        status: &'static str,
        outputs: Vec<Value>,
    },
    /// A call of the client's `local_shell` (run by the client, never here).
    LocalShell {
        id: String,
        call_id: String,
        action: Value,
    },
    FileSearch {
        id: String,
        call_id: String,
        query: Value,
        status: &'static str,
        results: Option<Value>,
    },
    /// The tools a remote MCP server listed for the run.
    McpListTools {
        id: String,
        server_label: String,
        tools: Value,
    },
    /// A call of a remote MCP server's tool: `in_progress`, then `completed` with its `output`
    /// or `failed` with its `error`; `approval_request_id` when it waited for approval.
    McpCall {
        id: String,
        call_id: String,
        server_label: String,
        name: String,
        arguments: String,
        status: &'static str,
        output: Option<String>,
        error: Option<String>,
        approval_request_id: Option<String>,
    },
    /// A call of a remote MCP server's tool that waits for the client's approval.
    McpApprovalRequest {
        id: String,
        server_label: String,
        name: String,
        arguments: String,
    },
    /// A call of one of the client's functions.
    FunctionCall {
        id: String,
        call_id: String,
        name: String,
        arguments: String,
    },
}

/// The type of the event that ends a file_search call, which carries the finished item.
const FILE_SEARCH_COMPLETED: &str = "response.file_search_call.completed";

/// The type of the event that ends an image generation call, which carries the picture.
const IMAGE_COMPLETED: &str = "response.image_generation_call.completed";

/// The type of the event that ends a web_search call.
const WEB_SEARCH_COMPLETED: &str = "response.web_search_call.completed";
/// The server-side tool whose calls are `web_search_call` items.
const WEB_SEARCH: &str = "web_search";

/// The item id of a web_search call.
fn web_search_item_id(call_id: &str) -> String {
    format!("ws_{call_id}")
}

/// Whether `name` reads pages (fetch_url, or its single-page alias browse_url), whose pages
/// the answer may cite.
fn is_fetch(name: &str) -> bool {
    name == "fetch_url" || name == crate::tools::alias::BROWSE_URL
}

/// The item id of a local_shell call.
pub fn local_shell_item_id(call_id: &str) -> String {
    format!("lsh_{call_id}")
}

/// The response's output items, in the order the run made them.
pub struct Output {
    includes: Includes,
    run_id: String,
    items: Vec<Item>,
    messages: usize,
    reasonings: usize,
    /// The `.completed` events of file_search calls whose results have not arrived yet (the
    /// tool says it is done just before its result is in), by item id.
    searches_done: Vec<(String, Value)>,
    /// The pages the run's searches and fetches found, which its text may cite.
    sources: Vec<Source>,
    /// Single-page fetches under way (fetch_url's `url`, browse_url), whose result is the
    /// page's text alone: (call id, the URL).
    fetching: Vec<(String, String)>,
    /// The files the run's code interpreter calls wrote, which the answer's text may cite.
    container_files: Vec<ContainerFile>,
    /// The artifacts the run made or changed (their latest version each), for the answer.
    deliverables: Vec<Value>,
    /// The remote MCP tools the run has, by the name the model calls them.
    mcp_tools: Vec<McpName>,
    /// Calls of MCP tools that wait for approval, until their question or result comes:
    /// (call id, model-facing name, arguments).
    mcp_waiting: Vec<(String, String, String)>,
    /// The question this run was resumed by an answer to (`x_ask_user.answered`).
    answered: Option<String>,
    pub text: String,
    /// Every reasoning item's text, accumulated (`x_metadata.thinking`).
    pub thinking: String,
}

/// A remote MCP tool as the run's `x_mcp.list_tools` events named it.
struct McpName {
    model: String,
    server_label: String,
    own: String,
    approval: bool,
}

/// The event that answers a paused run's question, with its correlation id.
const ASK_ANSWERED: &str = "x_ask_user.answered";
/// The event that pauses a run on a question (an MCP approval's carries `mcp`).
const ASK_QUESTION: &str = "x_ask_user.question";

/// A lifecycle event: its type and payload (without `sequence_number`).
pub type Lifecycle = (String, Value);

fn event(kind: &str, mut payload: Value) -> Lifecycle {
    payload["type"] = json!(kind);
    (kind.to_string(), payload)
}

impl Output {
    /// `seed` names the items (`msg_<seed>`, ...): the response's id without its prefix.
    pub fn new(seed: &str, includes: Includes) -> Self {
        Self {
            includes,
            run_id: seed.to_string(),
            items: Vec::new(),
            messages: 0,
            reasonings: 0,
            searches_done: Vec::new(),
            sources: Vec::new(),
            fetching: Vec::new(),
            container_files: Vec::new(),
            deliverables: Vec::new(),
            mcp_tools: Vec::new(),
            mcp_waiting: Vec::new(),
            answered: None,
            text: String::new(),
            thinking: String::new(),
        }
    }

    /// Takes in one event of the run; returns the lifecycle events it makes.
    pub fn observe(&mut self, event: &RunEvent) -> Vec<Lifecycle> {
        let mut out = Vec::new();
        match event {
            RunEvent::ReasoningDelta { content, .. } => {
                let index = self.open_reasoning(&mut out);
                self.thinking.push_str(content);
                if let Item::Reasoning { id, text, .. } = &mut self.items[index] {
                    text.push_str(content);
                    out.push(self::event(
                        "response.reasoning_summary_text.delta",
                        json!({"item_id": id, "output_index": index, "summary_index": 0,
                               "delta": content}),
                    ));
                }
            }
            RunEvent::TextDelta { content } => {
                let index = self.open_message(&mut out);
                self.text.push_str(content);
                if let Item::Message { id, text, .. } = &mut self.items[index] {
                    text.push_str(content);
                    out.push(self::event(
                        "response.output_text.delta",
                        json!({"item_id": id, "output_index": index, "content_index": 0,
                               "delta": content, "logprobs": []}),
                    ));
                }
            }
            RunEvent::ToolCall {
                id,
                name,
                arguments,
                ..
            } if name == "file_search" => {
                self.close_open(&mut out);
                self.items.push(Item::FileSearch {
                    id: file_search::item_id(id),
                    call_id: id.clone(),
                    query: arguments["query"].clone(),
                    status: "in_progress",
                    results: None,
                });
                let index = self.items.len() - 1;
                out.push(self.added(index));
            }
            RunEvent::ToolResult {
                tool_call_id,
                name,
                success,
                result,
                ..
            } if name == "file_search" => {
                let include_results = self.includes.file_search_results;
                let found = self.items.iter_mut().position(|item| {
                    matches!(item, Item::FileSearch { call_id, .. } if call_id == tool_call_id)
                });
                if let Some(index) = found {
                    let mut item_id = String::new();
                    if let Item::FileSearch {
                        id,
                        status,
                        results,
                        ..
                    } = &mut self.items[index]
                    {
                        *status = if *success { "completed" } else { "failed" };
                        *results = success.then(|| passages(result, include_results));
                        item_id.clone_from(id);
                    }
                    // The completed event includes the finished item with its results, their
                    // text when `include` asks for it (docs/spec.md#file_search-events).
                    if let Some(at) = self.searches_done.iter().position(|(id, _)| *id == item_id) {
                        let (_, mut payload) = self.searches_done.remove(at);
                        payload["output_index"] = json!(index);
                        payload["item"] = self.item_json(index);
                        out.push(self::event(FILE_SEARCH_COMPLETED, payload));
                    }
                    out.push(self.done(index));
                }
            }
            RunEvent::Extension {
                event_type,
                payload,
            } if event_type == FILE_SEARCH_COMPLETED => {
                match payload["item_id"]
                    .as_str()
                    .filter(|id| self.index_of(id).is_some())
                {
                    Some(id) => self.searches_done.push((id.to_string(), payload.clone())),
                    // A search with no item here (under an alias): passed on as it is.
                    None => out.push(self::event(FILE_SEARCH_COMPLETED, payload.clone())),
                }
            }
            RunEvent::ToolCall {
                id,
                name,
                arguments,
                ..
            } if name == WEB_SEARCH => {
                self.close_open(&mut out);
                let item_id = web_search_item_id(id);
                self.items.push(Item::WebSearch {
                    id: item_id.clone(),
                    call_id: id.clone(),
                    query: arguments["query"].clone(),
                    status: "in_progress",
                    sources: Vec::new(),
                });
                let index = self.items.len() - 1;
                out.push(self.added(index));
                let payload = json!({"item_id": item_id, "output_index": index});
                out.push(self::event(
                    "response.web_search_call.in_progress",
                    payload.clone(),
                ));
                if let Some(Item::WebSearch { status, .. }) = self.items.last_mut() {
                    *status = "searching";
                }
                out.push(self::event("response.web_search_call.searching", payload));
            }
            RunEvent::ToolResult {
                tool_call_id,
                name,
                success,
                result,
                ..
            } if name == WEB_SEARCH => {
                let found = self.items.iter_mut().position(|item| {
                    matches!(item, Item::WebSearch { call_id, .. } if call_id == tool_call_id)
                });
                let hits: Vec<Source> = result["results"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Source::of_hit)
                    .collect();
                if let Some(index) = found {
                    let mut item_id = String::new();
                    if let Item::WebSearch {
                        id,
                        status,
                        sources,
                        ..
                    } = &mut self.items[index]
                    {
                        *status = if *success { "completed" } else { "failed" };
                        *sources = hits
                            .iter()
                            .map(|hit| json!({"type": "url", "url": hit.url}))
                            .collect();
                        item_id.clone_from(id);
                    }
                    out.push(self::event(
                        WEB_SEARCH_COMPLETED,
                        json!({"item_id": item_id, "output_index": index}),
                    ));
                    out.push(self.done(index));
                }
                self.add_sources(hits);
            }
            RunEvent::ToolCall {
                id,
                name,
                arguments,
                ..
            } if name == CODE_INTERPRETER => {
                self.close_open(&mut out);
                let item_id = code_interpreter::item_id(id);
                let code = arguments["code"].as_str().unwrap_or_default().to_string();
                self.items.push(Item::CodeInterpreter {
                    id: item_id.clone(),
                    call_id: id.clone(),
                    code: code.clone(),
                    code_sent: false,
                    container_id: None,
                    status: "in_progress",
                    outputs: Vec::new(),
                });
                let index = self.items.len() - 1;
                out.push(self.added(index));
                let ids = json!({"item_id": item_id, "output_index": index});
                out.push(self::event(
                    "response.code_interpreter_call.in_progress",
                    ids.clone(),
                ));
                for delta in code_deltas(&code) {
                    let mut payload = ids.clone();
                    payload["delta"] = json!(delta);
                    out.push(self::event(
                        "response.code_interpreter_call_code.delta",
                        payload,
                    ));
                }
                let mut payload = ids.clone();
                payload["code"] = json!(code);
                out.push(self::event(
                    "response.code_interpreter_call_code.done",
                    payload,
                ));
                if let Some(Item::CodeInterpreter {
                    code_sent, status, ..
                }) = self.items.last_mut()
                {
                    *code_sent = true;
                    *status = "interpreting";
                }
                out.push(self::event(
                    "response.code_interpreter_call.interpreting",
                    ids,
                ));
            }
            RunEvent::Extension {
                event_type,
                payload,
            } if event_type == code_interpreter::OUTPUT_EVENT => {
                let include = self.includes.code_interpreter_outputs;
                let found = payload["call_id"].as_str().and_then(|call| {
                    self.items.iter().position(|item| {
                        matches!(item, Item::CodeInterpreter { call_id, .. } if call_id == call)
                    })
                });
                let container = payload["container_id"].as_str().unwrap_or_default();
                for file in payload["files"].as_array().into_iter().flatten() {
                    if let (Some(file_id), Some(path)) =
                        (file["file_id"].as_str(), file["path"].as_str())
                    {
                        self.container_files.retain(|known| known.path != path);
                        self.container_files.push(ContainerFile {
                            container_id: container.to_string(),
                            file_id: file_id.to_string(),
                            path: path.to_string(),
                        });
                    }
                }
                if let Some(index) = found {
                    let mut item_id = String::new();
                    if let Item::CodeInterpreter {
                        id,
                        container_id,
                        status,
                        outputs,
                        ..
                    } = &mut self.items[index]
                    {
                        *container_id = Some(container.to_string());
                        *status = "completed";
                        if include {
                            *outputs = call_outputs(payload);
                        }
                        item_id.clone_from(id);
                    }
                    out.push(self::event(
                        "response.code_interpreter_call.completed",
                        json!({"item_id": item_id, "output_index": index}),
                    ));
                    out.push(self.done(index));
                }
            }
            RunEvent::ToolResult {
                tool_call_id,
                name,
                success: false,
                result,
                ..
            } if name == CODE_INTERPRETER => {
                let found = self.items.iter().position(|item| {
                    matches!(item, Item::CodeInterpreter { call_id, status, .. }
                        if call_id == tool_call_id && *status != "completed")
                });
                if let Some(index) = found {
                    let include = self.includes.code_interpreter_outputs;
                    if let Item::CodeInterpreter {
                        status, outputs, ..
                    } = &mut self.items[index]
                    {
                        *status = "failed";
                        if include {
                            let error = result["error"].as_str().unwrap_or("the call failed");
                            *outputs = vec![json!({"type": "logs", "logs": error})];
                        }
                    }
                    out.push(self.done(index));
                }
            }
            RunEvent::ToolCall { id, name, .. } if name == GENERATE_IMAGE => {
                self.close_open(&mut out);
                self.items.push(Item::ImageGeneration {
                    id: image_generation::item_id(id),
                    call_id: id.clone(),
                    status: "in_progress",
                    picture: None,
                });
                let index = self.items.len() - 1;
                out.push(self.added(index));
            }
            RunEvent::Extension {
                event_type,
                payload,
            } if event_type == IMAGE_COMPLETED => {
                let found = payload["item_id"].as_str().and_then(|id| self.index_of(id));
                if let Some(index) = found {
                    if let Item::ImageGeneration {
                        status, picture, ..
                    } = &mut self.items[index]
                    {
                        *status = "completed";
                        *picture = payload.get(image_generation::DELIVERABLE_KEY).cloned();
                    }
                    out.push(self::event(
                        IMAGE_COMPLETED,
                        json!({"item_id": payload["item_id"], "output_index": index}),
                    ));
                    out.push(self.done(index));
                }
            }
            RunEvent::ToolResult {
                tool_call_id,
                name,
                success: false,
                ..
            } if name == GENERATE_IMAGE => {
                let found = self.items.iter().position(|item| {
                    matches!(item, Item::ImageGeneration { call_id, status: "in_progress", .. }
                        if call_id == tool_call_id)
                });
                if let Some(index) = found {
                    if let Item::ImageGeneration { status, .. } = &mut self.items[index] {
                        *status = "failed";
                    }
                    out.push(self.done(index));
                }
            }
            RunEvent::ToolCall {
                id,
                name,
                arguments,
                ..
            } if is_fetch(name) => {
                if let Some(url) = arguments["url"].as_str() {
                    self.fetching.push((id.clone(), url.to_string()));
                }
            }
            RunEvent::ToolResult {
                tool_call_id,
                name,
                success,
                result,
                ..
            } if is_fetch(name) => {
                let single = self.fetching.iter().position(|(id, _)| id == tool_call_id);
                let single = single.map(|at| self.fetching.remove(at).1);
                if !success {
                    return out;
                }
                if let Some(url) = single.filter(|_| result.is_string()) {
                    self.add_sources(vec![Source {
                        title: url.clone(),
                        url,
                    }]);
                }
                let pages: Vec<Source> = result["pages"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|page| page["error"] != true)
                    .filter_map(Source::of_hit)
                    .collect();
                self.add_sources(pages);
            }
            RunEvent::Extension {
                event_type,
                payload,
            } if event_type.starts_with("x_artifact.") => {
                if let Some(part) = crate::chat::artifacts::deliverable_of(payload) {
                    match self
                        .deliverables
                        .iter_mut()
                        .find(|d| d["identifier"] == part["identifier"])
                    {
                        Some(kept) => *kept = part,
                        None => self.deliverables.push(part),
                    }
                }
            }
            RunEvent::Extension {
                event_type,
                payload,
            } if event_type == LIST_TOOLS_EVENT => self.list_mcp_tools(payload, &mut out),
            RunEvent::ToolCall {
                id,
                name,
                arguments,
                ..
            } if self.mcp_tool(name).is_some() => {
                let arguments = arguments.to_string();
                if self.mcp_tool(name).is_some_and(|tool| tool.approval) {
                    self.mcp_waiting.push((id.clone(), name.clone(), arguments));
                } else {
                    self.open_mcp_call(id, name, arguments, None, &mut out);
                }
            }
            RunEvent::ToolResult {
                tool_call_id,
                name,
                success,
                result,
                error,
                ..
            } if self.mcp_tool(name).is_some() => {
                let mut found = self.items.iter().position(
                    |item| matches!(item, Item::McpCall { call_id, .. } if call_id == tool_call_id),
                );
                if found.is_none()
                    && let Some(at) = self
                        .mcp_waiting
                        .iter()
                        .position(|(id, ..)| id == tool_call_id)
                {
                    // An approved call, made by the continuation.
                    let (id, name, arguments) = self.mcp_waiting.remove(at);
                    let approval = self
                        .answered
                        .as_ref()
                        .map(|cid| format!("{APPROVAL_ID_PREFIX}{cid}"));
                    found = Some(self.open_mcp_call(&id, &name, arguments, approval, &mut out));
                }
                if let Some(index) = found {
                    let mut item_id = String::new();
                    if let Item::McpCall {
                        id,
                        status,
                        output,
                        error: failure,
                        ..
                    } = &mut self.items[index]
                    {
                        *status = if *success { "completed" } else { "failed" };
                        if *success {
                            *output = Some(match &result["content"] {
                                Value::String(text) => text.clone(),
                                Value::Null => result.to_string(),
                                other => other.to_string(),
                            });
                        } else {
                            *failure = Some(error.clone().unwrap_or_else(|| result.to_string()));
                        }
                        item_id.clone_from(id);
                    }
                    let kind = if *success {
                        "response.mcp_call.completed"
                    } else {
                        "response.mcp_call.failed"
                    };
                    out.push(self::event(
                        kind,
                        json!({"item_id": item_id, "output_index": index}),
                    ));
                    out.push(self.done(index));
                }
            }
            RunEvent::Extension {
                event_type,
                payload,
            } if event_type == ASK_QUESTION && payload.get("mcp").is_some() => {
                self.close_open(&mut out);
                let mcp = &payload["mcp"];
                let model = mcp["model_name"].as_str().unwrap_or_default();
                self.mcp_waiting.retain(|(_, name, _)| name != model);
                self.items.push(Item::McpApprovalRequest {
                    id: format!(
                        "{APPROVAL_ID_PREFIX}{}",
                        payload["correlation_id"].as_str().unwrap_or_default()
                    ),
                    server_label: mcp["server_label"].as_str().unwrap_or_default().to_string(),
                    name: mcp["name"].as_str().unwrap_or_default().to_string(),
                    arguments: mcp["arguments"].as_str().unwrap_or("{}").to_string(),
                });
                let index = self.items.len() - 1;
                out.push(self.added(index));
                out.push(self.done(index));
            }
            RunEvent::Extension {
                event_type,
                payload,
            } if event_type == ASK_ANSWERED => {
                self.answered = payload["correlation_id"].as_str().map(str::to_string);
            }
            RunEvent::ClientToolCalls { calls } => {
                self.close_open(&mut out);
                for call in calls {
                    if call.function.name == LOCAL_SHELL {
                        self.items.push(Item::LocalShell {
                            id: local_shell_item_id(&call.id),
                            call_id: call.id.clone(),
                            action: shell_action(&call.function.arguments),
                        });
                        let index = self.items.len() - 1;
                        let mut added = self.added(index);
                        added.1["item"]["status"] = json!("in_progress");
                        out.push(added);
                        out.push(self.done(index));
                        continue;
                    }
                    self.items.push(Item::FunctionCall {
                        id: format!("fc_{}", call.id),
                        call_id: call.id.clone(),
                        name: call.function.name.clone(),
                        arguments: call.function.arguments.clone(),
                    });
                    let index = self.items.len() - 1;
                    let mut added = self.added(index);
                    added.1["item"]["arguments"] = json!("");
                    added.1["item"]["status"] = json!("in_progress");
                    out.push(added);
                    let item_id = format!("fc_{}", call.id);
                    out.push(self::event(
                        "response.function_call_arguments.delta",
                        json!({"item_id": item_id, "output_index": index,
                               "delta": call.function.arguments}),
                    ));
                    out.push(self::event(
                        "response.function_call_arguments.done",
                        json!({"item_id": item_id, "output_index": index, "name": call.function.name,
                               "arguments": call.function.arguments}),
                    ));
                    out.push(self.done(index));
                }
            }
            RunEvent::Finished { .. } => {
                // Every response says something: an empty message when the run made no item.
                // The artifacts the run made are parts of its last message, after its text.
                let ends_open = matches!(self.items.last(), Some(Item::Message { open: true, .. }));
                if self.items.is_empty() || (!self.deliverables.is_empty() && !ends_open) {
                    self.open_message(&mut out);
                }
                if let Some(Item::Message { deliverables, .. }) = self.items.last_mut() {
                    *deliverables = std::mem::take(&mut self.deliverables);
                }
                self.close_open(&mut out);
            }
            _ => {}
        }
        out
    }

    /// The remote MCP tool the model calls `name`, if it is one.
    fn mcp_tool(&self, name: &str) -> Option<&McpName> {
        self.mcp_tools.iter().find(|tool| tool.model == name)
    }

    /// An `mcp_list_tools` item for a server's listing (`x_mcp.list_tools`), its tools'
    /// model-facing names kept.
    fn list_mcp_tools(&mut self, payload: &Value, out: &mut Vec<Lifecycle>) {
        self.close_open(out);
        let server_label = payload["server_label"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let approval: Vec<&str> = payload["approval"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if let Some(names) = payload["names"].as_object() {
            for (model, own) in names {
                self.mcp_tools.push(McpName {
                    model: model.clone(),
                    server_label: server_label.clone(),
                    own: own.as_str().unwrap_or(model).to_string(),
                    approval: approval.contains(&model.as_str()),
                });
            }
        }
        let id = format!("mcpl_{}_{}", self.run_id, server_label);
        self.items.push(Item::McpListTools {
            id: id.clone(),
            server_label,
            tools: payload["tools"].clone(),
        });
        let index = self.items.len() - 1;
        out.push(self.added(index));
        let ids = json!({"item_id": id, "output_index": index});
        out.push(event("response.mcp_list_tools.in_progress", ids.clone()));
        out.push(event("response.mcp_list_tools.completed", ids));
        out.push(self.done(index));
    }

    /// Opens an `mcp_call` item for call `call_id` of the MCP tool the model calls `name`;
    /// returns its place.
    fn open_mcp_call(
        &mut self,
        call_id: &str,
        name: &str,
        arguments: String,
        approval_request_id: Option<String>,
        out: &mut Vec<Lifecycle>,
    ) -> usize {
        self.close_open(out);
        let (server_label, own) = self
            .mcp_tool(name)
            .map(|tool| (tool.server_label.clone(), tool.own.clone()))
            .unwrap_or_default();
        let id = format!("mcp_{call_id}");
        self.items.push(Item::McpCall {
            id: id.clone(),
            call_id: call_id.to_string(),
            server_label,
            name: own,
            arguments: arguments.clone(),
            status: "in_progress",
            output: None,
            error: None,
            approval_request_id,
        });
        let index = self.items.len() - 1;
        out.push(self.added(index));
        let ids = json!({"item_id": id, "output_index": index});
        out.push(event("response.mcp_call.in_progress", ids.clone()));
        let mut delta = ids.clone();
        delta["delta"] = json!(arguments);
        out.push(event("response.mcp_call_arguments.delta", delta));
        let mut done = ids;
        done["arguments"] = json!(arguments);
        out.push(event("response.mcp_call_arguments.done", done));
        index
    }

    /// The place of the open reasoning item, closing an open message and opening one when
    /// the last item is not one.
    fn open_reasoning(&mut self, out: &mut Vec<Lifecycle>) -> usize {
        if let Some(Item::Reasoning { open: true, .. }) = self.items.last() {
            return self.items.len() - 1;
        }
        self.close_open(out);
        let id = if self.reasonings == 0 {
            format!("rs_{}", self.run_id)
        } else {
            format!("rs_{}_{}", self.run_id, self.reasonings)
        };
        self.reasonings += 1;
        self.items.push(Item::Reasoning {
            id: id.clone(),
            text: String::new(),
            open: true,
        });
        let index = self.items.len() - 1;
        let mut added = self.added(index);
        added.1["item"]["summary"] = json!([]);
        out.push(added);
        out.push(event(
            "response.reasoning_summary_part.added",
            json!({"item_id": id, "output_index": index, "summary_index": 0,
                   "part": {"type": "summary_text", "text": ""}}),
        ));
        index
    }

    /// Closes the last item if it is still open (a message or a reasoning item).
    fn close_open(&mut self, out: &mut Vec<Lifecycle>) {
        self.close_message(out);
        let index = self.items.len().saturating_sub(1);
        let Some(Item::Reasoning { id, text, open }) = self.items.last_mut() else {
            return;
        };
        if !*open {
            return;
        }
        *open = false;
        let (id, text) = (id.clone(), text.clone());
        out.push(event(
            "response.reasoning_summary_text.done",
            json!({"item_id": id, "output_index": index, "summary_index": 0, "text": text}),
        ));
        out.push(event(
            "response.reasoning_summary_part.done",
            json!({"item_id": id, "output_index": index, "summary_index": 0,
                   "part": {"type": "summary_text", "text": text}}),
        ));
        out.push(self.done(index));
    }

    /// The place of the open message, opening one (closing an open reasoning item) when the
    /// last item is not one.
    fn open_message(&mut self, out: &mut Vec<Lifecycle>) -> usize {
        if let Some(Item::Message { open: true, .. }) = self.items.last() {
            return self.items.len() - 1;
        }
        self.close_open(out);
        let id = if self.messages == 0 {
            format!("msg_{}", self.run_id)
        } else {
            format!("msg_{}_{}", self.run_id, self.messages)
        };
        self.messages += 1;
        self.items.push(Item::Message {
            id: id.clone(),
            text: String::new(),
            open: true,
            annotations: Vec::new(),
            deliverables: Vec::new(),
        });
        let index = self.items.len() - 1;
        let mut added = self.added(index);
        added.1["item"]["status"] = json!("in_progress");
        added.1["item"]["content"] = json!([]);
        out.push(added);
        out.push(event(
            "response.content_part.added",
            json!({"item_id": id, "output_index": index, "content_index": 0,
                   "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}),
        ));
        index
    }

    fn close_message(&mut self, out: &mut Vec<Lifecycle>) {
        let index = self.items.len().saturating_sub(1);
        let Some(Item::Message {
            id,
            text,
            open,
            annotations,
            deliverables,
        }) = self.items.last_mut()
        else {
            return;
        };
        if !*open {
            return;
        }
        *open = false;
        let mut cited = url_citations(text, &self.sources);
        cited.extend(container_file_citations(text, &self.container_files));
        cited.sort_by_key(|a| a["start_index"].as_u64());
        *annotations = cited;
        let (id, text, annotations, deliverables) = (
            id.clone(),
            text.clone(),
            annotations.clone(),
            deliverables.clone(),
        );
        for (at, annotation) in annotations.iter().enumerate() {
            out.push(event(
                "response.output_text.annotation.added",
                json!({"item_id": id, "output_index": index, "content_index": 0,
                       "annotation_index": at, "annotation": annotation}),
            ));
        }
        out.push(event(
            "response.output_text.done",
            json!({"item_id": id, "output_index": index, "content_index": 0, "text": text,
                   "logprobs": []}),
        ));
        out.push(event(
            "response.content_part.done",
            json!({"item_id": id, "output_index": index, "content_index": 0,
                   "part": text_part(&text, &annotations)}),
        ));
        for (at, part) in deliverables.iter().enumerate() {
            for kind in ["response.content_part.added", "response.content_part.done"] {
                out.push(event(
                    kind,
                    json!({"item_id": id, "output_index": index, "content_index": at + 1,
                           "part": part}),
                ));
            }
        }
        out.push(self.done(index));
    }

    /// Keeps pages the text may cite, each once.
    fn add_sources(&mut self, found: Vec<Source>) {
        for source in found {
            if !self.sources.iter().any(|known| known.url == source.url) {
                self.sources.push(source);
            }
        }
    }

    fn added(&self, index: usize) -> Lifecycle {
        event(
            "response.output_item.added",
            json!({"output_index": index, "item": self.item_json(index)}),
        )
    }

    fn done(&self, index: usize) -> Lifecycle {
        event(
            "response.output_item.done",
            json!({"output_index": index, "item": self.item_json(index)}),
        )
    }

    /// The output index of the file_search or image_generation item `item_id` (the items
    /// whose tools send events of their own).
    pub fn index_of(&self, item_id: &str) -> Option<usize> {
        self.items.iter().position(|item| {
            matches!(item, Item::FileSearch { id, .. } | Item::ImageGeneration { id, .. }
                if id == item_id)
        })
    }

    fn item_json(&self, index: usize) -> Value {
        match &self.items[index] {
            Item::Reasoning { id, text, .. } => json!({
                "type": "reasoning",
                "id": id,
                "summary": [{"type": "summary_text", "text": text}],
            }),
            Item::Message {
                id,
                text,
                open,
                annotations,
                deliverables,
            } => {
                let mut content = vec![text_part(text, annotations)];
                if !*open {
                    content.extend(deliverables.iter().cloned());
                }
                json!({
                    "type": "message",
                    "id": id,
                    "status": if *open { "in_progress" } else { "completed" },
                    "role": "assistant",
                    "content": content,
                })
            }
            Item::WebSearch {
                id,
                query,
                status,
                sources,
                ..
            } => {
                let mut action = json!({"type": "search", "query": query});
                if self.includes.web_search_sources {
                    action["sources"] = json!(sources);
                }
                json!({"type": "web_search_call", "id": id, "status": status, "action": action})
            }
            Item::ImageGeneration {
                id,
                status,
                picture,
                ..
            } => {
                let mut item = json!({"type": "image_generation_call", "id": id,
                    "status": status, "result": null});
                if let (Some(target), Some(Value::Object(fields))) = (item.as_object_mut(), picture)
                {
                    for (key, value) in fields.iter().filter(|(_, v)| !v.is_null()) {
                        target.insert(key.clone(), value.clone());
                    }
                }
                item
            }
            Item::CodeInterpreter {
                id,
                code,
                code_sent,
                container_id,
                status,
                outputs,
                ..
            } => json!({
                "type": "code_interpreter_call",
                "id": id,
                "status": status,
                "code": if *code_sent { code.as_str() } else { "" },
                // A string, as OpenAI's schema has it: empty until the call found its container.
                "container_id": container_id.clone().unwrap_or_default(),
                "outputs": if outputs.is_empty() { Value::Null } else { json!(outputs) },
            }),
            Item::LocalShell {
                id,
                call_id,
                action,
            } => json!({
                "type": "local_shell_call",
                "id": id,
                "call_id": call_id,
                "status": "completed",
                "action": action,
            }),
            Item::FileSearch {
                id,
                query,
                status,
                results,
                ..
            } => json!({
                "type": "file_search_call",
                "id": id,
                "status": status,
                "queries": [query],
                "results": results,
            }),
            Item::McpListTools {
                id,
                server_label,
                tools,
            } => json!({
                "type": "mcp_list_tools",
                "id": id,
                "server_label": server_label,
                "tools": tools,
                "error": null,
            }),
            Item::McpCall {
                id,
                server_label,
                name,
                arguments,
                status,
                output,
                error,
                approval_request_id,
                ..
            } => json!({
                "type": "mcp_call",
                "id": id,
                "server_label": server_label,
                "name": name,
                "arguments": arguments,
                "status": status,
                "output": output,
                "error": error,
                "approval_request_id": approval_request_id,
            }),
            Item::McpApprovalRequest {
                id,
                server_label,
                name,
                arguments,
            } => json!({
                "type": "mcp_approval_request",
                "id": id,
                "server_label": server_label,
                "name": name,
                "arguments": arguments,
            }),
            Item::FunctionCall {
                id,
                call_id,
                name,
                arguments,
            } => json!({
                "type": "function_call",
                "id": id,
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
                "status": "completed",
            }),
        }
    }

    pub fn to_json(&self) -> Value {
        Value::Array((0..self.items.len()).map(|i| self.item_json(i)).collect())
    }
}

/// An `output_text` part.
/// The code as the deltas a stream sends: a line each (long lines in pieces).
fn code_deltas(code: &str) -> Vec<String> {
    let mut deltas = Vec::new();
    for line in code.split_inclusive('\n') {
        let chars: Vec<char> = line.chars().collect();
        for piece in chars.chunks(200) {
            deltas.push(piece.iter().collect());
        }
    }
    deltas
}

/// A call's `outputs` as OpenAI gives them: its logs, then each figure as an image.
fn call_outputs(payload: &Value) -> Vec<Value> {
    let mut logs = payload["logs"].as_str().unwrap_or_default().to_string();
    if let Some(error) = payload["error"].as_str() {
        if !logs.is_empty() && !logs.ends_with('\n') {
            logs.push('\n');
        }
        logs.push_str(error);
    }
    let mut outputs = vec![json!({"type": "logs", "logs": logs})];
    for url in payload[code_interpreter::IMAGES_KEY]
        .as_array()
        .into_iter()
        .flatten()
    {
        outputs.push(json!({"type": "image", "url": url}));
    }
    outputs
}

fn text_part(text: &str, annotations: &[Value]) -> Value {
    json!({"type": "output_text", "text": text, "annotations": annotations, "logprobs": []})
}

/// A `local_shell_call`'s `action` from the arguments the model gave the `local_shell`
/// function: OpenAI's `exec` action, with its fields present (null when not given).
fn shell_action(arguments: &str) -> Value {
    let given: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let command = match &given["command"] {
        Value::Array(words) => json!(words),
        Value::String(line) => json!([line]),
        _ => json!([]),
    };
    json!({
        "type": "exec",
        "command": command,
        "env": if given["env"].is_object() { given["env"].clone() } else { json!({}) },
        "timeout_ms": given["timeout_ms"],
        "user": given["user"],
        "working_directory": given["working_directory"],
    })
}

/// A file_search result's passages, without their text unless asked for.
pub fn passages(result: &Value, include_text: bool) -> Value {
    let mut results = result["results"].clone();
    if !include_text && let Some(list) = results.as_array_mut() {
        for passage in list {
            if let Some(fields) = passage.as_object_mut() {
                fields.remove("chunk_text");
            }
        }
    }
    results
}

/// The response's status, and why it is incomplete or failed.
fn status(stop_reason: StopReason, error: Option<&RunError>) -> (&'static str, Value, Value) {
    if let Some(error) = error {
        let failure = json!({"code": error.code(), "message": error.shown()});
        return ("failed", Value::Null, failure);
    }
    let incomplete = |reason: &str| ("incomplete", json!({"reason": reason}), Value::Null);
    match stop_reason {
        StopReason::Completed
        | StopReason::MaxIterations
        | StopReason::Paused
        | StopReason::ToolCalls => ("completed", Value::Null, Value::Null),
        StopReason::Length => incomplete("max_output_tokens"),
        StopReason::TokenBudget => incomplete("token_budget"),
        StopReason::TimeBudget => incomplete("time_budget"),
        StopReason::Cancelled => incomplete("cancelled"),
        StopReason::UpstreamError | StopReason::Interrupted => (
            "failed",
            Value::Null,
            json!({"code": "server_error", "message": "the run was interrupted"}),
        ),
        // Only a workflow run of its own ends so, and it always carries its error.
        StopReason::WorkflowFailed => (
            "failed",
            Value::Null,
            json!({"code": "workflow_failed", "message": "a workflow step failed"}),
        ),
    }
}

/// What a response object is built from besides its output: the request's echo and where it
/// is kept.
pub struct Frame {
    pub id: String,
    /// `ResponsesRequest::echo`.
    pub echo: Value,
    pub chat_id: Option<String>,
}

impl Frame {
    /// What the response's items are named after: its id without the `resp_`.
    pub fn seed(&self) -> &str {
        self.id.strip_prefix("resp_").unwrap_or(&self.id)
    }

    /// The response before anything came: `in_progress`, no output.
    pub fn in_progress(&self, log: &RunLog) -> Value {
        self.object(log.created, "in_progress", json!([]), "")
    }

    fn object(&self, created: i64, status: &str, output: Value, text: &str) -> Value {
        let mut object = json!({
            "id": self.id,
            "object": "response",
            "created_at": created,
            "status": status,
            "error": null,
            "incomplete_details": null,
            "output": output,
            "output_text": text,
            "usage": null,
        });
        if let (Some(target), Some(echo)) = (object.as_object_mut(), self.echo.as_object()) {
            for (key, value) in echo {
                target.insert(key.clone(), value.clone());
            }
        }
        if let Some(chat_id) = &self.chat_id {
            object["x_chat_id"] = json!(chat_id);
        }
        object
    }

    /// The finished response.
    pub fn finished(
        &self,
        log: &RunLog,
        output: &Output,
        stop_reason: StopReason,
        usage: &crate::llm::wire::Usage,
        error: Option<&RunError>,
    ) -> Value {
        let (status, incomplete, failure) = status(stop_reason, error);
        let mut object = self.object(log.created, status, output.to_json(), &output.text);
        object["incomplete_details"] = incomplete;
        object["error"] = failure;
        object["usage"] = responses_usage(usage);
        object["x_stop_reason"] = json!(stop_reason);
        object
    }
}

/// The terminal event's type for a finished response object.
pub fn terminal_event(response: &Value) -> &'static str {
    match response["status"].as_str() {
        Some("failed") => "response.failed",
        Some("incomplete") => "response.incomplete",
        _ => "response.completed",
    }
}

/// Usage in the Responses API's names; `estimated` only when Colloquy counted it.
pub fn responses_usage(usage: &crate::llm::wire::Usage) -> Value {
    let mut value = json!({"input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens().unwrap_or(0)},
        "total_tokens": usage.total_tokens});
    if usage.estimated {
        value["estimated"] = json!(true);
    }
    value
}
