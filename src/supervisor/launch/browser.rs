//! The browser tools in a run: `browser_action` and `analyze_page`, offered together in a
//! stored chat (a session belongs to one) on a server with Chromium, when the request's
//! `x_tools` or the agent's `enabled_tools` names either, and tools are on. Deep Think never
//! has them.

use std::sync::Arc;

use super::{Launcher, RunOptions, deep_think};
use crate::run::log::RunLog;
use crate::tools::SharedTool;
use crate::tools::browser::{AnalyzePage, BROWSER_TOOLS, BrowserAction};

/// The run's browser tools, if it may have them.
pub(super) fn browser_tools(
    launcher: &Launcher,
    options: &RunOptions,
    log: &RunLog,
) -> Vec<SharedTool> {
    let Some(chat) = &log.chat_id else {
        return Vec::new();
    };
    if launcher.browsers.unavailable().is_some() || deep_think(options) {
        return Vec::new();
    }
    let names_either = |names: &[String]| names.iter().any(|n| BROWSER_TOOLS.contains(&n.as_str()));
    let agent_on = options.agent.as_ref().is_none_or(|a| a.tools_enabled);
    if !agent_on || options.enable_tools == Some(false) {
        return Vec::new();
    }
    let by_agent = options
        .agent
        .as_ref()
        .and_then(|a| a.enabled_tools.as_deref())
        .is_some_and(names_either);
    let by_request = options.tools_enabled
        && options
            .web_search
            .as_ref()
            .and_then(|w| w.x_tools.as_deref())
            .is_some_and(names_either);
    if !by_agent && !by_request {
        return Vec::new();
    }
    let browsers = launcher.browsers.clone();
    vec![
        Arc::new(BrowserAction::new(browsers.clone(), chat.clone())),
        Arc::new(AnalyzePage::new(browsers, chat.clone())),
    ]
}

/// The browser tools' definitions, for listing an agent's tools, when this server offers them.
pub(super) fn browser_definitions(launcher: &Launcher) -> Vec<crate::llm::wire::ToolDefinition> {
    if launcher.browsers.unavailable().is_some() {
        return Vec::new();
    }
    vec![BrowserAction::describe(), AnalyzePage::describe()]
}
