//! The continuation of a send_email confirmation: the email goes out (or, on a no, does not)
//! before the run goes on, and its outcome is the call's result. The send runs in a task so
//! the answer's stream opens at once; the run's log is registered first, so its subscribers
//! see the result come.

use std::time::Instant;

use serde_json::Value;

use crate::agent::kernel::RunSpec;
use crate::agent::tool_round::report_result;
use crate::llm::wire::ChatMessage;
use crate::tools::ToolError;
use crate::tools::email::SEND_EMAIL;
use crate::tools::email::confirm::{Confirmation, deliver};

use super::super::launch::Launcher;
use super::the_call;

/// Sends the confirmed email (or records the no), feeds its result to `spec`'s run as the
/// answer to call `call_id`, then starts the run.
pub(super) fn send_then_start(
    launcher: &Launcher,
    mut spec: RunSpec,
    confirmation: Confirmation,
    answer: Value,
    correlation_id: entities::ids::AskCorrelationId,
    call_id: String,
) {
    // Registered now, so the answering client can follow the email's sending; spawned (and
    // registered again, the same log) once it is sent.
    launcher.runs.insert(spec.log.clone());
    let launcher = launcher.clone();
    tokio::spawn(async move {
        let call = the_call(&spec.messages, &call_id, SEND_EMAIL);
        let started = Instant::now();
        let result = deliver(
            launcher.email.as_ref(),
            confirmation,
            &answer,
            correlation_id.as_str(),
        )
        .await
        .map_err(ToolError::from);
        let text = report_result(&spec, &call, result, started.elapsed());
        spec.messages.push(ChatMessage::tool_result(call_id, text));
        launcher.start(spec);
    });
}
