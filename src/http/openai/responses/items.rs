//! A Responses request's input items: read into the chat messages a model is sent (messages
//! with text and image parts, `function_call` items grouped into one assistant message,
//! `function_call_output` as tool messages), the trailing function outputs that continue a
//! waiting run, and the items as `input_items` lists them.

use entities::ids::{AskCorrelationId, ResponseId};
use serde_json::{Value, json};

use super::request::LOCAL_SHELL;
use crate::error::{AppError, AppResult};
use crate::llm::wire::{ChatMessage, FunctionCall, MessageContent, Role, ToolCall};

/// A result of a client function call (`function_call_output`).
pub struct FunctionOutput {
    pub call_id: String,
    pub output: String,
}

/// The text of an input message's `content`: a string, or its text parts joined; images become
/// image parts.
fn message_content(content: &Value) -> AppResult<MessageContent> {
    match content {
        Value::String(text) => Ok(MessageContent::Text(text.clone())),
        Value::Array(parts) => {
            let mut out = Vec::with_capacity(parts.len());
            let mut images = false;
            for part in parts {
                match part["type"].as_str() {
                    Some("input_text" | "output_text" | "text" | "refusal") => {
                        let text = part["text"].as_str().or(part["refusal"].as_str());
                        out.push(json!({"type": "text", "text": text.unwrap_or_default()}));
                    }
                    Some("input_image") => {
                        let Some(url) = part["image_url"].as_str() else {
                            return Err(AppError::invalid(
                                "input_image parts need an image_url (file_id images are not \
                                 supported)",
                            ));
                        };
                        images = true;
                        let mut image = json!({"url": url});
                        if let Some(detail) = part["detail"].as_str() {
                            image["detail"] = json!(detail);
                        }
                        out.push(json!({"type": "image_url", "image_url": image}));
                    }
                    other => {
                        return Err(AppError::invalid(format!(
                            "content part type {} is not supported; use input_text or \
                             input_image",
                            other.unwrap_or("(missing)")
                        )));
                    }
                }
            }
            if images {
                Ok(MessageContent::Parts(out))
            } else {
                Ok(MessageContent::Text(MessageContent::Parts(out).text()))
            }
        }
        _ => Err(AppError::invalid(
            "a message's content is a string or a list of parts",
        )),
    }
}

/// The input items as chat messages: messages as they are, consecutive `function_call` items
/// as one assistant message with tool calls, `function_call_output` as tool messages. Items a
/// response put out that carry nothing for the model (`file_search_call`, `reasoning`) are
/// skipped.
pub fn messages_of(items: &[Value]) -> AppResult<Vec<ChatMessage>> {
    let mut messages: Vec<ChatMessage> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let kind = item["type"]
            .as_str()
            .unwrap_or(if item.get("role").is_some() {
                "message"
            } else {
                ""
            });
        match kind {
            "message" => {
                let role: Role = serde_json::from_value(item["role"].clone()).map_err(|_| {
                    AppError::invalid(format!(
                        "input[{index}]: role must be user, assistant, system or developer"
                    ))
                })?;
                if role == Role::Tool {
                    return Err(AppError::invalid(format!(
                        "input[{index}]: a tool's result is a function_call_output item"
                    )));
                }
                messages.push(ChatMessage {
                    role,
                    content: Some(message_content(&item["content"])?),
                    tool_calls: None,
                    tool_call_id: None,
                    name: None,
                });
            }
            "function_call" | "local_shell_call" => {
                let call = call_of(item).ok_or_else(|| {
                    AppError::invalid(format!(
                        "input[{index}]: a {kind} needs call_id and {}",
                        if kind == "function_call" {
                            "name"
                        } else {
                            "action"
                        }
                    ))
                })?;
                match messages.last_mut() {
                    Some(last) if last.role == Role::Assistant && last.tool_calls.is_some() => {
                        if let Some(calls) = last.tool_calls.as_mut() {
                            calls.push(call);
                        }
                    }
                    _ => messages.push(ChatMessage::assistant_with_tools(
                        Some(String::new()),
                        vec![call],
                    )),
                }
            }
            "function_call_output" | "local_shell_call_output" => {
                let Some(call_id) = output_call_id(item) else {
                    return Err(AppError::invalid(format!(
                        "input[{index}]: a {kind} needs call_id"
                    )));
                };
                messages.push(ChatMessage::tool_result(
                    call_id,
                    output_text(&item["output"]),
                ));
            }
            // Output items carrying nothing for the model, and the approvals a target reads.
            "file_search_call"
            | "web_search_call"
            | "reasoning"
            | "image_generation_call"
            | "code_interpreter_call"
            | "mcp_list_tools"
            | "mcp_call"
            | "mcp_approval_request"
            | "mcp_approval_response" => {}
            other => {
                return Err(AppError::invalid(format!(
                    "input[{index}]: item type {other:?} is not supported"
                )));
            }
        }
    }
    Ok(messages)
}

/// The tool call a `function_call` or `local_shell_call` item records (a local shell call is
/// the `local_shell` function, its `action` the arguments).
fn call_of(item: &Value) -> Option<ToolCall> {
    let call_id = item["call_id"].as_str()?;
    let (name, arguments) = if item["type"] == "local_shell_call" {
        let action = item["action"].as_object()?;
        let mut arguments = action.clone();
        arguments.remove("type");
        arguments.retain(|_, value| !value.is_null());
        (
            LOCAL_SHELL.to_string(),
            Value::Object(arguments).to_string(),
        )
    } else {
        (
            item["name"].as_str()?.to_string(),
            item["arguments"].as_str().unwrap_or("{}").to_string(),
        )
    };
    Some(ToolCall {
        id: call_id.to_string(),
        kind: "function".into(),
        function: FunctionCall { name, arguments },
    })
}

/// The call an output item answers: its `call_id`; a `local_shell_call_output` may name the
/// call by `id` instead, as OpenAI's reference does (the call's id, or its item's `lsh_` id).
fn output_call_id(item: &Value) -> Option<&str> {
    if let Some(call_id) = item["call_id"].as_str() {
        return Some(call_id);
    }
    if item["type"] != "local_shell_call_output" {
        return None;
    }
    let id = item["id"].as_str()?;
    Some(id.strip_prefix("lsh_").unwrap_or(id))
}

/// A `function_call_output`'s output: a string, or its text parts joined.
fn output_text(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The trailing `function_call_output` items of `items`, if the input ends with them.
pub fn trailing_outputs(items: &[Value]) -> Vec<FunctionOutput> {
    let mut outputs: Vec<FunctionOutput> = items
        .iter()
        .rev()
        .take_while(|item| {
            matches!(
                item["type"].as_str(),
                Some("function_call_output" | "local_shell_call_output")
            )
        })
        .map(|item| FunctionOutput {
            call_id: output_call_id(item).unwrap_or_default().to_string(),
            output: output_text(&item["output"]),
        })
        .collect();
    outputs.reverse();
    outputs
}

/// The prefix of an `mcp_approval_request` item's id, before the question's correlation id.
pub const APPROVAL_ID_PREFIX: &str = "mcpr_";

/// An `mcp_approval_response` input item: the question it answers, and whether it approves.
pub struct ApprovalAnswer {
    pub correlation_id: AskCorrelationId,
    pub approve: bool,
}

/// The `mcp_approval_response` items of `items`, checked.
pub fn approvals_of(items: &[Value]) -> AppResult<Vec<ApprovalAnswer>> {
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| item["type"] == "mcp_approval_response")
        .map(|(index, item)| {
            let correlation_id = item["approval_request_id"]
                .as_str()
                .and_then(|id| id.strip_prefix(APPROVAL_ID_PREFIX))
                .filter(|id| !id.is_empty())
                .ok_or_else(|| {
                    AppError::invalid(format!(
                        "input[{index}]: approval_request_id must be the id of an \
                         mcp_approval_request item ({APPROVAL_ID_PREFIX}…)"
                    ))
                })?;
            let approve = item["approve"].as_bool().ok_or_else(|| {
                AppError::invalid(format!("input[{index}]: approve must be true or false"))
            })?;
            Ok(ApprovalAnswer {
                correlation_id: AskCorrelationId::from_string(correlation_id),
                approve,
            })
        })
        .collect()
}

/// The input items with the ids OpenAI's `input_items` list shows (`msg_…` for messages that
/// came without one).
pub fn with_ids(items: Vec<Value>, response_id: &ResponseId) -> Vec<Value> {
    items
        .into_iter()
        .enumerate()
        .map(|(index, mut item)| {
            if item.get("type").is_none() {
                item["type"] = json!("message");
            }
            if item["type"] == "message" {
                if let Value::String(text) = &item["content"] {
                    let kind = if item["role"] == "assistant" {
                        "output_text"
                    } else {
                        "input_text"
                    };
                    item["content"] = json!([{"type": kind, "text": text}]);
                }
                if item.get("status").is_none() {
                    item["status"] = json!("completed");
                }
            }
            if item.get("id").is_none_or(Value::is_null) {
                item["id"] = json!(format!("msg_{}_{index}", response_id.as_str()));
            }
            item
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_items_become_the_messages_a_model_reads() {
        let items = vec![
            json!({"role": "developer", "content": "Be brief."}),
            json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "What is this?"},
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"}]}),
            json!({"type": "function_call", "call_id": "a", "name": "look", "arguments": "{\"x\":1}"}),
            json!({"type": "function_call", "call_id": "b", "name": "look", "arguments": "{}"}),
            json!({"type": "function_call_output", "call_id": "a", "output": "a cat"}),
            json!({"type": "file_search_call", "id": "fs_1", "status": "completed"}),
            json!({"type": "function_call_output", "call_id": "b",
                   "output": [{"type": "input_text", "text": "a hat"}]}),
        ];
        let messages = messages_of(&items).unwrap();
        let roles: Vec<Role> = messages.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::Developer,
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Tool
            ]
        );
        let Some(MessageContent::Parts(parts)) = &messages[1].content else {
            panic!("an image keeps its parts");
        };
        assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,AAAA");
        assert_eq!(parts[1]["image_url"]["detail"], "low");
        let calls = messages[2].tool_calls.as_ref().unwrap();
        assert_eq!(
            calls.len(),
            2,
            "consecutive calls are one assistant message"
        );
        assert_eq!(calls[0].function.arguments, "{\"x\":1}");
        assert_eq!(messages[4].text(), "a hat");
        let outputs = trailing_outputs(&items);
        assert_eq!(outputs.len(), 1, "only the trailing outputs");
        assert_eq!(outputs[0].call_id, "b");
        assert!(messages_of(&[json!({"type": "computer_call"})]).is_err());
        assert!(messages_of(&[json!({"role": "tool", "content": "x"})]).is_err());
        assert!(
            messages_of(&[json!({"role": "user", "content": [{"type": "input_file"}]})]).is_err()
        );
    }

    #[test]
    fn a_local_shell_call_and_its_output_are_a_call_of_the_local_shell_function_and_its_result() {
        let items = [
            json!({"type": "local_shell_call", "id": "lsh_c1", "call_id": "c1",
                   "status": "completed", "action": {"type": "exec", "command": ["ls", "-l"],
                   "env": {}, "timeout_ms": null, "user": null, "working_directory": "/tmp"}}),
            json!({"type": "local_shell_call_output", "id": "lsh_c1", "output": "total 0"}),
        ];
        let messages = messages_of(&items).unwrap();
        let call = &messages[0].tool_calls.as_ref().unwrap()[0];
        assert_eq!(call.id, "c1");
        assert_eq!(call.function.name, "local_shell");
        let arguments: Value = serde_json::from_str(&call.function.arguments).unwrap();
        assert_eq!(
            arguments,
            json!({"command": ["ls", "-l"], "env": {}, "working_directory": "/tmp"})
        );
        assert_eq!(messages[1].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(messages[1].text(), "total 0");
        let outputs = trailing_outputs(&items);
        assert_eq!(outputs.len(), 1);
        assert_eq!(outputs[0].call_id, "c1", "named by its item's id");
        assert!(messages_of(&[json!({"type": "local_shell_call_output", "output": "x"})]).is_err());
    }

    #[test]
    fn input_items_get_ids_and_typed_content_for_listing() {
        let id = ResponseId::from_string("resp_x");
        let items = with_ids(
            vec![
                json!({"role": "user", "content": "hi"}),
                json!({"type": "function_call_output", "call_id": "c", "output": "ok", "id": "fco_1"}),
            ],
            &id,
        );
        assert_eq!(items[0]["id"], "msg_resp_x_0");
        assert_eq!(items[0]["type"], "message");
        assert_eq!(
            items[0]["content"],
            json!([{"type": "input_text", "text": "hi"}])
        );
        assert_eq!(items[1]["id"], "fco_1", "an id the client gave stays");
    }
}
