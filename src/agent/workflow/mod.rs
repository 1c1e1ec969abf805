//! Running workflows: `engine` (a workflow's steps in order inside a run, each under the
//! loop's governance, with `x_workflow.*` events) and `run` (`WorkflowRun`, the actor for a
//! workflow run of its own in a chat). What a workflow is, and storing it, is
//! `chat::automations`; starting these runs is `supervisor::automations`.

pub mod engine;
pub mod run;

pub use engine::{StepReport, WorkflowOutcome, check_input, run_steps};
pub use run::{WorkflowRun, WorkflowRunPlan};
