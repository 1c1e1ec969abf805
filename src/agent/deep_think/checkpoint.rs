//! A Deep Think run's checkpoint, kept on its row (`runs.deep_think`) through its chat session
//! after the plan and after each finished sub-task: what a new process needs to continue the
//! run from the next sub-task.

use serde::{Deserialize, Serialize};

use super::discovery::Discovery;
use super::plan::Plan;
use super::subtask::Finding;
use crate::chat::session::SaveDeepThink;
use crate::llm::wire::Usage;

use super::super::kernel::RunSpec;

/// How many times a run is continued after a restart before it is left interrupted (a run
/// that brings the process down each time must not do so forever).
pub const MAX_RESUMPTIONS: u32 = 3;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub question: String,
    pub model: String,
    /// The project research calls are counted against.
    pub project: String,
    pub owner_is_admin: bool,
    /// The research tools the run had, by name.
    pub tools: Vec<String>,
    pub plan: Plan,
    pub discovery: Option<Discovery>,
    /// The finished sub-tasks, in the order they finished.
    pub findings: Vec<Finding>,
    /// Tokens and model calls spent before the sub-tasks (discovery, planning).
    pub planning_usage: Usage,
    pub planning_iterations: u32,
    /// How many times the run has been continued after a restart.
    pub resumptions: u32,
}

impl Checkpoint {
    /// Saves it on the run's row, if the run is in a chat.
    pub fn save(&self, run: &RunSpec) {
        let Some(crate::agent::kernel::ChatLink { session, .. }) = &run.chat else {
            return;
        };
        match serde_json::to_value(self) {
            Ok(checkpoint) => session.do_send(SaveDeepThink {
                run_id: run.log.run_id.clone(),
                checkpoint,
            }),
            Err(err) => {
                tracing::error!(run_id = %run.log.run_id, %err, "cannot encode a Deep Think checkpoint");
            }
        }
    }
}
