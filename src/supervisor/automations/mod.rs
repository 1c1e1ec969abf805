//! Starting workflow and schedule runs: `run` (a workflow run of its own in a chat, recorded
//! in `workflow_runs`; the tools its steps may call), `scheduler` (each process's look for due
//! schedules, the claim through the database, the firing as a run in the schedule's chat, its
//! outcome and the self-pause) and `tools` (`execute_workflow`, `create_schedule`,
//! `get_schedule_info`, built per run for its owner).

pub mod run;
pub mod scheduler;
pub mod tools;

pub(in crate::supervisor) use run::launch_workflow_turn;
pub use run::{step_tool_names, workflows_of};
pub use tools::automation_tools;

use super::launch::Launcher;
use crate::chat::automations::{Schedules, Workflows};

/// The workflows store over the launcher's database.
pub fn workflows(launcher: &Launcher) -> Workflows {
    Workflows::new(
        launcher.db.clone(),
        launcher.config.schedules.max_workflows_per_user,
    )
}

/// The schedules store over the launcher's database.
pub fn schedules(launcher: &Launcher) -> Schedules {
    Schedules::new(launcher.db.clone(), &launcher.config.schedules)
}
