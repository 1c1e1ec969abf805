//! `schedules` table: a user's cron expression that fires a workflow (with its input) or a
//! prompt in a chat. `next_due_at` is what a firing claims: the process whose conditional
//! UPDATE moves it on is the one that fires.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{ChatId, ScheduleId, UserId, WorkflowId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "schedules")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ScheduleId,
    #[sea_orm(column_type = "Text")]
    pub user_id: UserId,
    /// The chat its firings run in.
    #[sea_orm(column_type = "Text")]
    pub chat_id: ChatId,
    #[sea_orm(column_type = "Text")]
    pub name: String,
    #[sea_orm(column_type = "Text")]
    pub cron: String,
    /// An IANA time zone name (`UTC`, `Europe/Paris`).
    #[sea_orm(column_type = "Text")]
    pub time_zone: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub workflow_id: Option<WorkflowId>,
    /// The workflow's input.
    pub input: Option<Json>,
    /// The message sent in its chat when it fires a prompt instead of a workflow.
    #[sea_orm(column_type = "Text", nullable)]
    pub prompt: Option<String>,
    pub missed_policy: MissedPolicy,
    pub status: ScheduleStatus,
    /// Why it is paused: the user's doing, or the failures that paused it.
    #[sea_orm(column_type = "Text", nullable)]
    pub paused_reason: Option<String>,
    pub consecutive_failures: i32,
    /// Due times passed over while the server was down (policy `skip`, or all but one).
    pub skipped_firings: i32,
    /// When it fires next (`None` while paused).
    pub next_due_at: Option<ChronoDateTimeUtc>,
    pub created_at: ChronoDateTimeUtc,
    pub updated_at: ChronoDateTimeUtc,
}

/// What happens to due times that passed while no server was running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum MissedPolicy {
    /// They are passed over; the schedule fires at its next due time.
    #[sea_orm(string_value = "skip")]
    Skip,
    /// The latest of them fires once, as soon as a server runs.
    #[sea_orm(string_value = "run_once")]
    RunOnce,
}

/// Whether a schedule fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum ScheduleStatus {
    #[sea_orm(string_value = "active")]
    Active,
    #[sea_orm(string_value = "paused")]
    Paused,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
