//! `workflow_runs` table: each run of a workflow (its run's id), the version it ran, where
//! (a chat, or inside another run's `execute_workflow` call: no chat) and how it ended.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{ChatId, RunId, UserId, WorkflowId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "workflow_runs")]
pub struct Model {
    /// The run that ran it (a chat's run row for a run of its own; the calling run's id for
    /// an `execute_workflow` call, with a suffix naming the call).
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub run_id: RunId,
    #[sea_orm(column_type = "Text")]
    pub workflow_id: WorkflowId,
    pub version: i32,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    #[sea_orm(column_type = "Text", nullable)]
    pub chat_id: Option<ChatId>,
    pub status: WorkflowRunStatus,
    /// The id of the step that failed.
    #[sea_orm(column_type = "Text", nullable)]
    pub failed_step: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub error: Option<String>,
    /// Each step's status (`[{id, status, duration_ms}]`), once it ended.
    pub steps: Option<Json>,
    pub created_at: ChronoDateTimeUtc,
    pub finished_at: Option<ChronoDateTimeUtc>,
}

/// Where a workflow run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum WorkflowRunStatus {
    #[sea_orm(string_value = "running")]
    Running,
    #[sea_orm(string_value = "succeeded")]
    Succeeded,
    #[sea_orm(string_value = "failed")]
    Failed,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
