//! send_email in an agent's runs: offered only to an agent whose `enabled_tools` names it, on a
//! server with an `[email]` section — and, when each email waits for the user's yes, only in a
//! stored chat, where a run can pause to ask. An agent naming it on a server without one is
//! refused when saved.

use std::sync::Arc;

use super::{Launcher, RunOptions, deep_think};
use crate::tools;
use crate::tools::email::{SEND_EMAIL, SendEmail};

/// The run's send_email, if the request's agent may have it (`in_chat`: the run is in a stored
/// chat).
pub(super) fn send_email_tool(
    launcher: &Launcher,
    options: &RunOptions,
    in_chat: bool,
) -> Option<tools::SharedTool> {
    let mailer = launcher.email.as_ref()?;
    let agent = options.agent.as_ref()?;
    let named = agent
        .enabled_tools
        .as_ref()
        .is_some_and(|named| named.iter().any(|n| n == SEND_EMAIL));
    let on = agent.tools_enabled && options.enable_tools != Some(false) && !deep_think(options);
    if !named || !on || (mailer.confirm() && !in_chat) {
        return None;
    }
    Some(Arc::new(SendEmail::new(mailer.clone(), agent.id.clone())))
}

/// send_email's definition, for listing an agent's tools, when this server offers it.
pub(super) fn send_email_definition(
    launcher: &Launcher,
) -> Option<crate::llm::wire::ToolDefinition> {
    launcher.email.as_deref().map(SendEmail::describe)
}
