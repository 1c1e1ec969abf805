//! `workflow_versions` table: one saved version of a workflow, never changed once written:
//! its name, description, agent and steps (the JSON the API took, validated on save).

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

use crate::ids::{AgentId, WorkflowId};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel, Eq, Serialize, Deserialize)]
#[sea_orm(table_name = "workflow_versions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false, column_type = "Text")]
    pub workflow_id: WorkflowId,
    #[sea_orm(primary_key, auto_increment = false)]
    pub version: i32,
    #[sea_orm(column_type = "Text")]
    pub name: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub description: Option<String>,
    /// The agent whose tools and model the steps use (`None`: the owner's default agent).
    #[sea_orm(column_type = "Text", nullable)]
    pub agent_id: Option<AgentId>,
    pub steps: Json,
    pub created_at: ChronoDateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
