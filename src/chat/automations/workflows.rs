//! `Workflows`: a user's workflows, every version kept (a PATCH adds one; a run names the
//! version it ran), and the record of their runs. Lookups are scoped to the owner: another
//! user's workflow is `WorkflowNotFound`.

use chrono::Utc;
use entities::ids::{AgentId, ChatId, RunId, UserId, WorkflowId};
use entities::workflow_runs::{self, WorkflowRunStatus};
use entities::{workflow_versions, workflows};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect, Set, TransactionTrait,
};
use serde::Serialize;
use serde_json::Value;

use super::AutomationError;
use super::steps::{Step, StepSpec, check_steps};
use crate::db::Page;

/// Longest workflow name.
pub const MAX_NAME_CHARS: usize = 200;
/// Longest description.
pub const MAX_DESCRIPTION_CHARS: usize = 2_000;
/// Past runs listed with a workflow.
pub const LISTED_RUNS: u64 = 20;

/// What a save sets (all of it on create; what is present on a PATCH).
#[derive(Debug, Clone, Default)]
pub struct WorkflowFields {
    pub name: Option<String>,
    pub description: Option<Option<String>>,
    pub agent_id: Option<Option<AgentId>>,
    pub steps: Option<Vec<StepSpec>>,
}

/// A workflow as the API shows it: its current version's contents.
#[derive(Debug, Clone, Serialize)]
pub struct WorkflowView {
    pub id: WorkflowId,
    pub name: String,
    pub description: Option<String>,
    pub agent_id: Option<AgentId>,
    pub version: i32,
    pub steps: Vec<StepSpec>,
    pub created_at: chrono::DateTime<Utc>,
    pub updated_at: chrono::DateTime<Utc>,
}

impl WorkflowView {
    fn of(row: &workflows::Model, version: workflow_versions::Model) -> Self {
        Self {
            id: row.id.clone(),
            name: version.name,
            description: version.description,
            agent_id: version.agent_id,
            version: version.version,
            steps: serde_json::from_value(version.steps).unwrap_or_default(),
            created_at: row.created_at,
            updated_at: version.created_at,
        }
    }

    /// The steps, checked again (they were when saved; a tool may have gone since, which the
    /// run reports when it reaches that step).
    pub fn checked_steps(&self) -> Result<Vec<Step>, AutomationError> {
        check_steps(&self.steps, &|_| true)
    }
}

#[derive(Clone)]
pub struct Workflows {
    db: DatabaseConnection,
    max_per_user: u64,
}

fn check_name(name: &str) -> Result<String, AutomationError> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(AutomationError::InvalidWorkflow(format!(
            "name must have 1 to {MAX_NAME_CHARS} characters"
        )));
    }
    Ok(name.to_string())
}

fn check_description(description: Option<String>) -> Result<Option<String>, AutomationError> {
    if description
        .as_ref()
        .is_some_and(|d| d.chars().count() > MAX_DESCRIPTION_CHARS)
    {
        return Err(AutomationError::InvalidWorkflow(format!(
            "description has at most {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    Ok(description)
}

impl Workflows {
    pub fn new(db: DatabaseConnection, max_per_user: u64) -> Self {
        Self { db, max_per_user }
    }

    /// Creates a workflow at version 1 (`has_tool`: the tools a step may call).
    pub async fn create(
        &self,
        owner: &UserId,
        fields: WorkflowFields,
        has_tool: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<WorkflowView, AutomationError> {
        let name = check_name(fields.name.as_deref().unwrap_or_default())?;
        let steps = fields
            .steps
            .ok_or_else(|| AutomationError::InvalidWorkflow("steps are required".into()))?;
        check_steps(&steps, has_tool)?;
        let description = check_description(fields.description.flatten())?;
        // Counted and stored under the owner's lock, so racing creates cannot pass the cap.
        let txn = crate::db::lock_user(&self.db, owner).await?;
        let count = workflows::Entity::find()
            .filter(workflows::Column::UserId.eq(owner))
            .count(&txn)
            .await?;
        if count >= self.max_per_user {
            return Err(AutomationError::TooMany {
                what: "workflows",
                max: self.max_per_user,
            });
        }
        let now = Utc::now();
        let id = WorkflowId::generate();
        let row = workflows::ActiveModel {
            id: Set(id.clone()),
            user_id: Set(owner.clone()),
            name: Set(name.clone()),
            version: Set(1),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(&txn)
        .await?;
        let version = workflow_versions::ActiveModel {
            workflow_id: Set(id),
            version: Set(1),
            name: Set(name),
            description: Set(description),
            agent_id: Set(fields.agent_id.flatten()),
            steps: Set(serde_json::to_value(&steps).unwrap_or(Value::Null)),
            created_at: Set(now),
        }
        .insert(&txn)
        .await?;
        txn.commit().await?;
        Ok(WorkflowView::of(&row, version))
    }

    async fn row(
        &self,
        owner: &UserId,
        id: &WorkflowId,
    ) -> Result<workflows::Model, AutomationError> {
        workflows::Entity::find_by_id(id.clone())
            .filter(workflows::Column::UserId.eq(owner))
            .one(&self.db)
            .await?
            .ok_or(AutomationError::WorkflowNotFound)
    }

    /// A version of the owner's workflow (`None`: the current one).
    pub async fn get(
        &self,
        owner: &UserId,
        id: &WorkflowId,
        version: Option<i32>,
    ) -> Result<WorkflowView, AutomationError> {
        let row = self.row(owner, id).await?;
        let stored =
            workflow_versions::Entity::find_by_id((id.clone(), version.unwrap_or(row.version)))
                .one(&self.db)
                .await?
                .ok_or(AutomationError::WorkflowNotFound)?;
        Ok(WorkflowView::of(&row, stored))
    }

    /// Every version of the owner's workflow, oldest first.
    pub async fn versions(
        &self,
        owner: &UserId,
        id: &WorkflowId,
    ) -> Result<Vec<WorkflowView>, AutomationError> {
        let row = self.row(owner, id).await?;
        let versions = workflow_versions::Entity::find()
            .filter(workflow_versions::Column::WorkflowId.eq(id.clone()))
            .order_by_asc(workflow_versions::Column::Version)
            .all(&self.db)
            .await?;
        Ok(versions
            .into_iter()
            .map(|v| WorkflowView::of(&row, v))
            .collect())
    }

    /// One page of the owner's workflows (current versions), most recently changed first, and
    /// how many they have in all.
    pub async fn list(
        &self,
        owner: &UserId,
        page: Page,
    ) -> Result<(Vec<WorkflowView>, u64), AutomationError> {
        let owned = workflows::Entity::find().filter(workflows::Column::UserId.eq(owner));
        let total = owned.clone().count(&self.db).await?;
        let rows = owned
            .order_by_desc(workflows::Column::UpdatedAt)
            .order_by_desc(workflows::Column::Id)
            .offset(page.offset)
            .limit(page.limit)
            .all(&self.db)
            .await?;
        let mut views = Vec::with_capacity(rows.len());
        for row in rows {
            if let Some(version) =
                workflow_versions::Entity::find_by_id((row.id.clone(), row.version))
                    .one(&self.db)
                    .await?
            {
                views.push(WorkflowView::of(&row, version));
            }
        }
        Ok((views, total))
    }

    /// Saves a new version: the current one with `fields` applied, checked as on create.
    pub async fn update(
        &self,
        owner: &UserId,
        id: &WorkflowId,
        fields: WorkflowFields,
        has_tool: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<WorkflowView, AutomationError> {
        let current = self.get(owner, id, None).await?;
        let name = match &fields.name {
            Some(name) => check_name(name)?,
            None => current.name.clone(),
        };
        let steps = fields.steps.unwrap_or(current.steps);
        check_steps(&steps, has_tool)?;
        let description = check_description(fields.description.unwrap_or(current.description))?;
        let agent_id = fields.agent_id.unwrap_or(current.agent_id);
        let now = Utc::now();
        let version = current.version + 1;
        let txn = self.db.begin().await?;
        // The conditional UPDATE makes two concurrent PATCHes two versions, never one lost.
        let moved = workflows::Entity::update_many()
            .col_expr(
                workflows::Column::Version,
                sea_orm::sea_query::Expr::value(version),
            )
            .col_expr(
                workflows::Column::Name,
                sea_orm::sea_query::Expr::value(name.clone()),
            )
            .col_expr(
                workflows::Column::UpdatedAt,
                sea_orm::sea_query::Expr::value(now),
            )
            .filter(workflows::Column::Id.eq(id.clone()))
            .filter(workflows::Column::Version.eq(current.version))
            .exec(&txn)
            .await?;
        if moved.rows_affected != 1 {
            return Err(AutomationError::InvalidWorkflow(
                "the workflow changed while this change was saved; send it again".into(),
            ));
        }
        workflow_versions::ActiveModel {
            workflow_id: Set(id.clone()),
            version: Set(version),
            name: Set(name),
            description: Set(description),
            agent_id: Set(agent_id),
            steps: Set(serde_json::to_value(&steps).unwrap_or(Value::Null)),
            created_at: Set(now),
        }
        .insert(&txn)
        .await?;
        txn.commit().await?;
        self.get(owner, id, None).await
    }

    /// Deletes the workflow with its versions and run records — unless schedules fire it
    /// (paused ones too: a resume would fail every firing): then `WorkflowInUse` names them.
    pub async fn delete(&self, owner: &UserId, id: &WorkflowId) -> Result<(), AutomationError> {
        self.row(owner, id).await?;
        let txn = self.db.begin().await?;
        let users: Vec<String> = entities::schedules::Entity::find()
            .filter(entities::schedules::Column::WorkflowId.eq(id.clone()))
            .order_by_asc(entities::schedules::Column::CreatedAt)
            .all(&txn)
            .await?
            .into_iter()
            .map(|s| format!("\u{201c}{}\u{201d} ({})", s.name, s.id))
            .collect();
        if !users.is_empty() {
            txn.rollback().await?;
            return Err(AutomationError::WorkflowInUse(users));
        }
        workflow_runs::Entity::delete_many()
            .filter(workflow_runs::Column::WorkflowId.eq(id.clone()))
            .exec(&txn)
            .await?;
        workflow_versions::Entity::delete_many()
            .filter(workflow_versions::Column::WorkflowId.eq(id.clone()))
            .exec(&txn)
            .await?;
        workflows::Entity::delete_by_id(id.clone())
            .exec(&txn)
            .await?;
        txn.commit().await?;
        Ok(())
    }

    /// Records that `run_id` began running `workflow` (its current version).
    pub async fn run_started(
        &self,
        run_id: &RunId,
        workflow: &WorkflowView,
        owner: &UserId,
        chat_id: Option<ChatId>,
    ) -> Result<(), AutomationError> {
        workflow_runs::ActiveModel {
            run_id: Set(run_id.clone()),
            workflow_id: Set(workflow.id.clone()),
            version: Set(workflow.version),
            user_id: Set(owner.clone()),
            chat_id: Set(chat_id),
            status: Set(WorkflowRunStatus::Running),
            failed_step: Set(None),
            error: Set(None),
            steps: Set(None),
            created_at: Set(Utc::now()),
            finished_at: Set(None),
        }
        .insert(&self.db)
        .await?;
        Ok(())
    }

    /// Records how `run_id` ended.
    pub async fn run_finished(
        &self,
        run_id: &RunId,
        failed: Option<(String, String)>,
        steps: Value,
    ) -> Result<(), AutomationError> {
        let status = if failed.is_some() {
            WorkflowRunStatus::Failed
        } else {
            WorkflowRunStatus::Succeeded
        };
        let (failed_step, error) = failed.unzip();
        workflow_runs::ActiveModel {
            run_id: sea_orm::Unchanged(run_id.clone()),
            status: Set(status),
            failed_step: Set(failed_step),
            error: Set(error),
            steps: Set(Some(steps)),
            finished_at: Set(Some(Utc::now())),
            ..Default::default()
        }
        .update(&self.db)
        .await?;
        Ok(())
    }

    /// The workflow's most recent runs.
    pub async fn runs(
        &self,
        owner: &UserId,
        id: &WorkflowId,
    ) -> Result<Vec<workflow_runs::Model>, AutomationError> {
        self.row(owner, id).await?;
        Ok(workflow_runs::Entity::find()
            .filter(workflow_runs::Column::WorkflowId.eq(id.clone()))
            .order_by_desc(workflow_runs::Column::CreatedAt)
            .limit(LISTED_RUNS)
            .all(&self.db)
            .await?)
    }
}

/// The workflow runs in `chat_id` by the chat run they belong to — a run of its own (a
/// schedule's firing, a REST run) or an `execute_workflow` call in a model's run (recorded as
/// `<run id>.<call>`) — oldest first, each with the workflow's name and version and each
/// step's report, so a reloaded chat shows a finished run's steps as the live stream did
/// (`/tree`'s `workflows`). A workflow deleted since has no name.
pub async fn steps_in_chat(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<std::collections::HashMap<RunId, Vec<Value>>, sea_orm::DbErr> {
    let runs = workflow_runs::Entity::find()
        .filter(workflow_runs::Column::ChatId.eq(chat_id.clone()))
        .order_by_asc(workflow_runs::Column::CreatedAt)
        .all(db)
        .await?;
    if runs.is_empty() {
        return Ok(Default::default());
    }
    let mut ids: Vec<WorkflowId> = runs.iter().map(|r| r.workflow_id.clone()).collect();
    ids.sort();
    ids.dedup();
    let names: std::collections::HashMap<WorkflowId, String> = workflows::Entity::find()
        .filter(workflows::Column::Id.is_in(ids))
        .all(db)
        .await?
        .into_iter()
        .map(|w| (w.id, w.name))
        .collect();
    let mut by_run: std::collections::HashMap<RunId, Vec<Value>> = Default::default();
    for run in runs {
        let chat_run = match run.run_id.as_str().split_once('.') {
            Some((chat_run, _call)) => RunId::from_string(chat_run),
            None => run.run_id.clone(),
        };
        by_run.entry(chat_run).or_default().push(serde_json::json!({
            "workflow_id": run.workflow_id,
            "name": names.get(&run.workflow_id),
            "version": run.version,
            "status": run.status,
            "steps": run.steps.unwrap_or(Value::Array(Vec::new())),
        }));
    }
    Ok(by_run)
}
