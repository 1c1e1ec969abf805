//! `StopReason`: every way a run can end, stored on its run row and on the answer it left
//! (`runs.stop_reason`, `messages.stop_reason`) by the code the API names it with.

use sea_orm::Iterable;
use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::runs::RunStatus;

/// Why a run ended. Recorded on the run row and sent as the last event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without asking for more tools.
    #[sea_orm(string_value = "completed")]
    Completed,
    /// The iteration cap was reached; the model gave a final answer without tools.
    #[sea_orm(string_value = "max_iterations")]
    MaxIterations,
    /// The model hit its output token limit.
    #[sea_orm(string_value = "length")]
    Length,
    /// A client cancelled the run.
    #[sea_orm(string_value = "cancelled")]
    Cancelled,
    /// The run's wall-clock budget ran out.
    #[sea_orm(string_value = "time_budget")]
    TimeBudget,
    /// The upstream model failed.
    #[sea_orm(string_value = "upstream_error")]
    UpstreamError,
    /// The process stopped while the run was in flight.
    #[sea_orm(string_value = "interrupted")]
    Interrupted,
    /// The model asked the user a question; the run continues when the answer arrives.
    #[sea_orm(string_value = "paused")]
    Paused,
    /// The model called a tool of the client's (Chat Completions `tools`): the client runs it
    /// and continues the conversation with its result.
    #[sea_orm(string_value = "tool_calls")]
    ToolCalls,
    /// A token budget (a Deep Think sub-task's) was spent.
    #[sea_orm(string_value = "token_budget")]
    TokenBudget,
    /// A workflow run of its own stopped at a step that failed (the run's error says which
    /// and why).
    #[sea_orm(string_value = "workflow_failed")]
    WorkflowFailed,
}

impl StopReason {
    /// The stop reason named `code` (as `as_str` writes it).
    pub fn from_code(code: &str) -> Option<Self> {
        Self::iter().find(|reason| reason.as_str() == code)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::MaxIterations => "max_iterations",
            Self::Length => "length",
            Self::Cancelled => "cancelled",
            Self::TimeBudget => "time_budget",
            Self::UpstreamError => "upstream_error",
            Self::Interrupted => "interrupted",
            Self::Paused => "paused",
            Self::ToolCalls => "tool_calls",
            Self::TokenBudget => "token_budget",
            Self::WorkflowFailed => "workflow_failed",
        }
    }

    /// The run row's status for this stop.
    pub fn run_status(self) -> RunStatus {
        match self {
            Self::Completed
            | Self::MaxIterations
            | Self::Length
            | Self::TimeBudget
            | Self::TokenBudget
            | Self::ToolCalls => RunStatus::Completed,
            Self::Cancelled => RunStatus::Cancelled,
            Self::UpstreamError | Self::WorkflowFailed => RunStatus::Failed,
            Self::Interrupted => RunStatus::Interrupted,
            Self::Paused => RunStatus::Paused,
        }
    }

    /// OpenAI's `finish_reason` for the last chunk.
    pub fn finish_reason(self) -> &'static str {
        match self {
            Self::Length => "length",
            Self::ToolCalls => "tool_calls",
            _ => "stop",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reason_is_stored_serialised_and_named_by_one_code() {
        for reason in StopReason::iter() {
            let code = reason.as_str();
            assert_eq!(StopReason::from_code(code), Some(reason));
            assert_eq!(serde_json::to_value(reason).unwrap(), code);
            assert_eq!(reason.to_value(), code.to_string());
        }
        assert_eq!(StopReason::from_code("finished"), None);
    }
}
