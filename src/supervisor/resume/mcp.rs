//! The continuation of an MCP call that waited for approval: on a yes the call is made (over
//! the answering request's connection to its server, or, when the answer came without it —
//! from the app, or after a restart — over a new one to the URL the question remembers,
//! without the headers, which are never stored), on a no it is not; either way its outcome is
//! the call's result and the run goes on. Runs in a task, so the answer's stream opens at
//! once; the run's log is registered first.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use crate::agent::kernel::RunSpec;
use crate::agent::tool_round::report_result;
use crate::llm::wire::ChatMessage;
use crate::run::events::RunEvent;
use crate::tools::ToolError;
use crate::tools::mcp::remote::{self, PendingCall, RemoteServer, RemoteTool};

use super::super::launch::Launcher;
use super::the_call;

/// Makes the approved call (or records the no), feeds its result to `spec`'s run as the answer
/// to call `call_id`, then starts the run. `tools`: the answering request's remote tools.
pub(super) fn call_then_start(
    launcher: &Launcher,
    mut spec: RunSpec,
    pending: PendingCall,
    answer: Value,
    tools: Vec<Arc<RemoteTool>>,
    call_id: String,
) {
    launcher.runs.insert(spec.log.clone());
    let launcher = launcher.clone();
    tokio::spawn(async move {
        let call = the_call(&spec.messages, &call_id, &pending.model_name);
        let started = Instant::now();
        let result = if remote::approves(&answer) {
            let arguments: Value =
                serde_json::from_str(&call.function.arguments).unwrap_or_else(|_| json!({}));
            let tool = match tools
                .iter()
                .find(|t| t.label() == pending.label && t.tool_name() == pending.tool_name)
            {
                Some(tool) => Ok(Arc::clone(tool)),
                None => reconnect(&launcher, &spec, &pending).await,
            };
            spec.log.push(RunEvent::ToolCall {
                id: call.id.clone(),
                name: call.function.name.clone(),
                message: Some(format!(
                    "Calling {} on {}",
                    pending.tool_name, pending.label
                )),
                arguments: arguments.clone(),
                progress: None,
            });
            match tool {
                Ok(tool) => tool.call(arguments).await,
                Err(err) => Err(err),
            }
        } else {
            Err(ToolError::new(
                "declined",
                format!(
                    "the user declined the call of {} on the MCP server {}; it was not made",
                    pending.tool_name, pending.label
                ),
                "Go on without it, or ask the user what to do instead.",
            ))
        };
        let text = report_result(&spec, &call, result, started.elapsed());
        spec.messages.push(ChatMessage::tool_result(call_id, text));
        launcher.start(spec);
    });
}

/// The approved tool over a new connection to the server the question remembers (checked
/// again against the allow-list and the SSRF guard), its tools listed in the run's log.
async fn reconnect(
    launcher: &Launcher,
    spec: &RunSpec,
    pending: &PendingCall,
) -> Result<Arc<RemoteTool>, ToolError> {
    let unavailable = |why: String| {
        ToolError::new(
            "mcp_unavailable",
            format!(
                "the MCP server {} could not be reached to make the approved call: {why}",
                pending.label
            ),
            "Answer without this tool.",
        )
    };
    let server = RemoteServer::remembered(&pending.label, &pending.url, &pending.tool_name)
        .ok_or_else(|| unavailable("its URL is not valid".into()))?;
    let session = launcher
        .remote_mcp
        .open(server)
        .await
        .map_err(|err| unavailable(err.to_string()))?;
    let (_, made, listings) = remote::tools_of(&[session], &[]);
    for listing in listings {
        spec.log.emit(remote::LIST_TOOLS_EVENT, listing);
    }
    made.into_iter()
        .find(|tool| tool.tool_name() == pending.tool_name)
        .ok_or_else(|| unavailable("it no longer lists the tool".into()))
}
