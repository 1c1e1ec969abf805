//! Workflows and schedules as stored data: `workflows` (`Workflows`: versioned recipes and the
//! record of their runs), `steps` (what a step is and the checks before a save), `template`
//! (`{{input.*}}`, `{{steps.<id>.result}}`), `cron` (five-field expressions in a time zone),
//! `cron_description` (an expression in words),
//! `schedules` (`Schedules`: CRUD, pause and resume) and `firings` (claiming a due time
//! through the database, so it fires once across processes, and recording its outcome).
//! Nothing here runs a step or starts a run: that is `agent::workflow` and
//! `supervisor::automations`.

pub mod cron;
pub mod cron_description;
pub mod firings;
pub mod schedules;
pub mod steps;
pub mod template;
pub mod workflows;

pub use schedules::{ScheduleFields, ScheduleView, Schedules};
pub use steps::{Step, StepAction, StepSpec};
pub use workflows::{WorkflowFields, WorkflowView, Workflows};

/// Why a workflow or schedule request cannot be done.
#[derive(Debug, thiserror::Error)]
pub enum AutomationError {
    /// The workflow's shape is wrong (no steps, a bad id, a step both tool and prompt…).
    #[error("{0}")]
    InvalidWorkflow(String),
    /// A step calls a tool this server cannot run in a workflow.
    #[error("{0}")]
    UnknownTool(String),
    /// A placeholder is malformed or names a step that does not run before it.
    #[error("{0}")]
    InvalidTemplate(String),
    /// The input lacks a value a placeholder needs (found before any step runs).
    #[error("{0}")]
    MissingInput(String),
    /// A cron expression, time zone, or what a schedule fires is wrong.
    #[error("{0}")]
    InvalidSchedule(String),
    #[error("workflow not found")]
    WorkflowNotFound,
    #[error("schedule not found")]
    ScheduleNotFound,
    /// A workflow that schedules fire is not deleted from under them: each is named.
    #[error(
        "the workflow is fired by the schedule{} {}; delete them or point them at another workflow (PATCH /api/schedules/{{id}}) first",
        if .0.len() == 1 { "" } else { "s" },
        .0.join(", ")
    )]
    WorkflowInUse(Vec<String>),
    /// A user's count limit.
    #[error("you have {max} {what} already, the most one user may have; delete one first")]
    TooMany { what: &'static str, max: u64 },
    #[error(transparent)]
    Database(#[from] sea_orm::DbErr),
}
