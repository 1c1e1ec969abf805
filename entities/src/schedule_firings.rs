//! `schedule_firings` table: one firing of a schedule, recorded when claimed (before its run
//! starts) and unique per (schedule, due time): a due time fires once however many processes
//! share the database, and a crash neither loses the record nor runs it again.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{RunId, ScheduleFiringId, ScheduleId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "schedule_firings")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub id: ScheduleFiringId,
    #[sea_orm(column_type = "Text")]
    pub schedule_id: ScheduleId,
    pub due_at: ChronoDateTimeUtc,
    pub status: FiringStatus,
    #[sea_orm(column_type = "Text", nullable)]
    pub run_id: Option<RunId>,
    /// The process that claimed it (a random id per process start).
    #[sea_orm(column_type = "Text")]
    pub claimed_by: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub error: Option<String>,
    pub claimed_at: ChronoDateTimeUtc,
    pub finished_at: Option<ChronoDateTimeUtc>,
}

/// Where a firing is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
#[sea_orm(rs_type = "String", db_type = "String(StringLen::None)")]
#[serde(rename_all = "snake_case")]
pub enum FiringStatus {
    /// Claimed; its run is being started.
    #[sea_orm(string_value = "claimed")]
    Claimed,
    #[sea_orm(string_value = "running")]
    Running,
    #[sea_orm(string_value = "succeeded")]
    Succeeded,
    #[sea_orm(string_value = "failed")]
    Failed,
    /// Its process died while it ran (the run is marked interrupted at the next start).
    #[sea_orm(string_value = "interrupted")]
    Interrupted,
    /// Not run, for the reason in `error` (its owner's account is disabled).
    #[sea_orm(string_value = "skipped")]
    Skipped,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
