//! `Schedules`: a user's schedules — a cron expression in a time zone that fires a workflow
//! (with its input) or a prompt in a chat —, created, changed, paused, resumed and deleted, and
//! shown with their next due times and last firings. A schedule given no zone takes its
//! owner's (`users.time_zone`, UTC when unset). Claiming and recording firings is `firings`.

use chrono::{DateTime, Utc};
use entities::ids::{ChatId, ScheduleId, UserId, WorkflowId};
use entities::schedule_firings;
use entities::schedules::{self, MissedPolicy, ScheduleStatus};
use entities::workflows;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde::Serialize;
use serde_json::Value;

use super::AutomationError;
use super::cron::CronTiming;
use super::cron_description::describe;
use super::steps::MAX_PROMPT_CHARS;
use crate::db::Page;

/// Due times shown ahead.
pub const SHOWN_NEXT: usize = 5;
/// Past firings shown.
pub const SHOWN_LAST: u64 = 10;
/// Longest schedule name.
pub const MAX_NAME_CHARS: usize = 200;
/// Longest workflow input, as JSON text.
pub const MAX_INPUT_CHARS: usize = 20_000;

/// What a save sets (all that is needed on create; what is present on a PATCH).
#[derive(Debug, Clone, Default)]
pub struct ScheduleFields {
    pub name: Option<String>,
    pub cron: Option<String>,
    pub time_zone: Option<String>,
    pub workflow_id: Option<WorkflowId>,
    pub input: Option<Value>,
    pub prompt: Option<String>,
    pub missed_policy: Option<MissedPolicy>,
}

/// One firing as shown.
#[derive(Debug, Clone, Serialize)]
pub struct FiringView {
    pub due_at: DateTime<Utc>,
    pub status: schedule_firings::FiringStatus,
    pub run_id: Option<entities::ids::RunId>,
    pub error: Option<String>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// A timing as a schedule would have it, before one is saved: the expression in words, the
/// zone it is read in and its next due times.
#[derive(Debug, Clone, Serialize)]
pub struct TimingPreview {
    pub description: String,
    pub time_zone: String,
    pub next: Vec<DateTime<Utc>>,
}

/// A schedule as the API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ScheduleView {
    pub id: ScheduleId,
    pub name: String,
    pub cron: String,
    /// The cron expression in words ("At 08:00 every day").
    pub description: String,
    pub time_zone: String,
    pub chat_id: ChatId,
    pub workflow_id: Option<WorkflowId>,
    pub input: Option<Value>,
    pub prompt: Option<String>,
    pub missed_policy: MissedPolicy,
    pub status: ScheduleStatus,
    pub paused_reason: Option<String>,
    pub consecutive_failures: i32,
    pub skipped_firings: i32,
    /// The next due times (none while paused).
    pub next_firings: Vec<DateTime<Utc>>,
    /// The latest firings, newest first.
    pub last_runs: Vec<FiringView>,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone)]
pub struct Schedules {
    db: DatabaseConnection,
    max_per_user: u64,
    /// The test-only seconds field is accepted.
    seconds: bool,
}

impl Schedules {
    pub fn new(db: DatabaseConnection, config: &crate::config::SchedulesConfig) -> Self {
        Self {
            db,
            max_per_user: config.max_per_user,
            seconds: config.test_only_seconds_field,
        }
    }

    /// The timing of a stored schedule.
    pub fn timing(&self, row: &schedules::Model) -> Result<CronTiming, AutomationError> {
        CronTiming::parse(&row.cron, &row.time_zone, self.seconds)
    }

    async fn check_target(
        &self,
        owner: &UserId,
        workflow_id: Option<&WorkflowId>,
        prompt: Option<&str>,
        input: Option<&Value>,
    ) -> Result<(), AutomationError> {
        let invalid = |m: &str| AutomationError::InvalidSchedule(m.to_string());
        match (workflow_id, prompt) {
            (Some(id), None) => {
                workflows::Entity::find_by_id(id.clone())
                    .filter(workflows::Column::UserId.eq(owner))
                    .one(&self.db)
                    .await?
                    .ok_or(AutomationError::WorkflowNotFound)?;
            }
            (None, Some(prompt)) => {
                if prompt.trim().is_empty() || prompt.chars().count() > MAX_PROMPT_CHARS {
                    return Err(AutomationError::InvalidSchedule(format!(
                        "prompt must have 1 to {MAX_PROMPT_CHARS} characters"
                    )));
                }
                if input.is_some() {
                    return Err(invalid(
                        "input is for a workflow; a prompt schedule takes none",
                    ));
                }
            }
            _ => {
                return Err(invalid(
                    "a schedule fires either a workflowId or a prompt (exactly one)",
                ));
            }
        }
        if input.is_some_and(|i| !i.is_object() || i.to_string().len() > MAX_INPUT_CHARS) {
            return Err(AutomationError::InvalidSchedule(format!(
                "input must be a JSON object of at most {MAX_INPUT_CHARS} characters"
            )));
        }
        Ok(())
    }

    fn check_name(name: &str) -> Result<String, AutomationError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return Err(AutomationError::InvalidSchedule(format!(
                "name must have 1 to {MAX_NAME_CHARS} characters"
            )));
        }
        Ok(name.to_string())
    }

    /// The zone a schedule of `owner`'s takes when given none: theirs, or UTC.
    async fn owner_zone(&self, owner: &UserId) -> Result<String, AutomationError> {
        let zone: Option<Option<String>> = entities::users::Entity::find_by_id(owner.clone())
            .select_only()
            .column(entities::users::Column::TimeZone)
            .into_tuple()
            .one(&self.db)
            .await?;
        Ok(zone.flatten().unwrap_or_else(|| "UTC".to_string()))
    }

    /// How `cron` in `time_zone` (the owner's when `None`) would fire: checked by the same
    /// parser the scheduler uses, so the preview and the firings agree.
    pub async fn preview(
        &self,
        owner: &UserId,
        cron: &str,
        time_zone: Option<&str>,
    ) -> Result<TimingPreview, AutomationError> {
        let time_zone = match time_zone {
            Some(zone) => zone.to_string(),
            None => self.owner_zone(owner).await?,
        };
        let timing = CronTiming::parse(cron, &time_zone, self.seconds)?;
        Ok(TimingPreview {
            description: describe(cron),
            time_zone,
            next: timing.upcoming(Utc::now(), SHOWN_NEXT),
        })
    }

    /// Checks what a create would (timing, target), storing nothing.
    pub async fn check(
        &self,
        owner: &UserId,
        fields: &ScheduleFields,
    ) -> Result<(), AutomationError> {
        Self::check_name(fields.name.as_deref().unwrap_or_default())?;
        let cron = fields
            .cron
            .as_deref()
            .ok_or_else(|| AutomationError::InvalidSchedule("cron is required".into()))?;
        let zone = match &fields.time_zone {
            Some(zone) => zone.clone(),
            None => self.owner_zone(owner).await?,
        };
        CronTiming::parse(cron, &zone, self.seconds)?;
        self.check_target(
            owner,
            fields.workflow_id.as_ref(),
            fields.prompt.as_deref(),
            fields.input.as_ref(),
        )
        .await?;
        // Not the cap's enforcement (`create` counts again under the owner's lock): a caller
        // that makes a chat for the schedule first is told before it makes one.
        self.check_room(&self.db, owner).await
    }

    /// Creates an active schedule firing in `chat_id` (the caller's chat).
    pub async fn create(
        &self,
        owner: &UserId,
        chat_id: ChatId,
        fields: ScheduleFields,
    ) -> Result<ScheduleView, AutomationError> {
        let name = Self::check_name(fields.name.as_deref().unwrap_or_default())?;
        let cron = fields
            .cron
            .ok_or_else(|| AutomationError::InvalidSchedule("cron is required".into()))?;
        let time_zone = match fields.time_zone {
            Some(zone) => zone,
            None => self.owner_zone(owner).await?,
        };
        let timing = CronTiming::parse(&cron, &time_zone, self.seconds)?;
        self.check_target(
            owner,
            fields.workflow_id.as_ref(),
            fields.prompt.as_deref(),
            fields.input.as_ref(),
        )
        .await?;
        // Counted and stored under the owner's lock, so racing creates cannot pass the cap.
        let txn = crate::db::lock_user(&self.db, owner).await?;
        self.check_room(&txn, owner).await?;
        let now = Utc::now();
        let row = schedules::ActiveModel {
            id: Set(ScheduleId::generate()),
            user_id: Set(owner.clone()),
            chat_id: Set(chat_id),
            name: Set(name),
            cron: Set(cron.trim().to_string()),
            time_zone: Set(time_zone),
            workflow_id: Set(fields.workflow_id),
            input: Set(fields.input),
            prompt: Set(fields.prompt),
            missed_policy: Set(fields.missed_policy.unwrap_or(MissedPolicy::Skip)),
            status: Set(ScheduleStatus::Active),
            paused_reason: Set(None),
            consecutive_failures: Set(0),
            skipped_firings: Set(0),
            next_due_at: Set(timing.next_after(now)),
            created_at: Set(now),
            updated_at: Set(now),
        }
        .insert(&txn)
        .await?;
        txn.commit().await?;
        self.view(row).await
    }

    /// Refuses a schedule past the owner's cap (`TooMany`).
    async fn check_room(
        &self,
        db: &impl ConnectionTrait,
        owner: &UserId,
    ) -> Result<(), AutomationError> {
        let count = schedules::Entity::find()
            .filter(schedules::Column::UserId.eq(owner))
            .count(db)
            .await?;
        if count >= self.max_per_user {
            return Err(AutomationError::TooMany {
                what: "schedules",
                max: self.max_per_user,
            });
        }
        Ok(())
    }

    async fn row(
        &self,
        owner: &UserId,
        id: &ScheduleId,
    ) -> Result<schedules::Model, AutomationError> {
        schedules::Entity::find_by_id(id.clone())
            .filter(schedules::Column::UserId.eq(owner))
            .one(&self.db)
            .await?
            .ok_or(AutomationError::ScheduleNotFound)
    }

    /// The schedule with its next due times and last firings.
    pub async fn view(&self, row: schedules::Model) -> Result<ScheduleView, AutomationError> {
        let next_firings = match (row.status, row.next_due_at, self.timing(&row)) {
            (ScheduleStatus::Active, Some(next), Ok(timing)) => {
                let mut times = vec![next];
                times.extend(timing.upcoming(next, SHOWN_NEXT - 1));
                times
            }
            _ => Vec::new(),
        };
        let last_runs = schedule_firings::Entity::find()
            .filter(schedule_firings::Column::ScheduleId.eq(row.id.clone()))
            .order_by_desc(schedule_firings::Column::DueAt)
            .limit(SHOWN_LAST)
            .all(&self.db)
            .await?
            .into_iter()
            .map(|f| FiringView {
                due_at: f.due_at,
                status: f.status,
                run_id: f.run_id,
                error: f.error,
                finished_at: f.finished_at,
            })
            .collect();
        Ok(ScheduleView {
            id: row.id,
            name: row.name,
            description: describe(&row.cron),
            cron: row.cron,
            time_zone: row.time_zone,
            chat_id: row.chat_id,
            workflow_id: row.workflow_id,
            input: row.input,
            prompt: row.prompt,
            missed_policy: row.missed_policy,
            status: row.status,
            paused_reason: row.paused_reason,
            consecutive_failures: row.consecutive_failures,
            skipped_firings: row.skipped_firings,
            next_firings,
            last_runs,
            created_at: row.created_at,
        })
    }

    pub async fn get(
        &self,
        owner: &UserId,
        id: &ScheduleId,
    ) -> Result<ScheduleView, AutomationError> {
        let row = self.row(owner, id).await?;
        self.view(row).await
    }

    /// One page of the owner's schedules, newest first, and how many they have in all.
    pub async fn list(
        &self,
        owner: &UserId,
        page: Page,
    ) -> Result<(Vec<ScheduleView>, u64), AutomationError> {
        let owned = schedules::Entity::find().filter(schedules::Column::UserId.eq(owner));
        let total = owned.clone().count(&self.db).await?;
        let rows = owned
            .order_by_desc(schedules::Column::CreatedAt)
            .order_by_desc(schedules::Column::Id)
            .offset(page.offset)
            .limit(page.limit)
            .all(&self.db)
            .await?;
        let mut views = Vec::with_capacity(rows.len());
        for row in rows {
            views.push(self.view(row).await?);
        }
        Ok((views, total))
    }

    /// Changes what `fields` sets; a new timing moves the next due time.
    pub async fn update(
        &self,
        owner: &UserId,
        id: &ScheduleId,
        fields: ScheduleFields,
    ) -> Result<ScheduleView, AutomationError> {
        let row = self.row(owner, id).await?;
        let name = match &fields.name {
            Some(name) => Self::check_name(name)?,
            None => row.name.clone(),
        };
        let cron = fields.cron.clone().unwrap_or_else(|| row.cron.clone());
        let time_zone = fields
            .time_zone
            .clone()
            .unwrap_or_else(|| row.time_zone.clone());
        let timing = CronTiming::parse(&cron, &time_zone, self.seconds)?;
        // A new target replaces the old one whole.
        let (workflow_id, prompt, input) =
            if fields.workflow_id.is_some() || fields.prompt.is_some() {
                (
                    fields.workflow_id.clone(),
                    fields.prompt.clone(),
                    fields.input.clone(),
                )
            } else {
                (
                    row.workflow_id.clone(),
                    row.prompt.clone(),
                    fields.input.clone().or(row.input.clone()),
                )
            };
        self.check_target(
            owner,
            workflow_id.as_ref(),
            prompt.as_deref(),
            input.as_ref(),
        )
        .await?;
        let retimed = cron != row.cron || time_zone != row.time_zone;
        let mut active: schedules::ActiveModel = row.clone().into();
        active.name = Set(name);
        active.cron = Set(cron.trim().to_string());
        active.time_zone = Set(time_zone);
        active.workflow_id = Set(workflow_id);
        active.prompt = Set(prompt);
        active.input = Set(input);
        if let Some(policy) = fields.missed_policy {
            active.missed_policy = Set(policy);
        }
        if retimed && row.status == ScheduleStatus::Active {
            active.next_due_at = Set(timing.next_after(Utc::now()));
        }
        active.updated_at = Set(Utc::now());
        let row = active.update(&self.db).await?;
        self.view(row).await
    }

    /// Stops the schedule firing, saying why.
    pub async fn pause(
        &self,
        owner: &UserId,
        id: &ScheduleId,
        reason: &str,
    ) -> Result<ScheduleView, AutomationError> {
        let row = self.row(owner, id).await?;
        let mut active: schedules::ActiveModel = row.into();
        active.status = Set(ScheduleStatus::Paused);
        active.paused_reason = Set(Some(reason.to_string()));
        active.next_due_at = Set(None);
        active.updated_at = Set(Utc::now());
        let row = active.update(&self.db).await?;
        self.view(row).await
    }

    /// Fires it again from its next due time after now, its failures forgiven.
    pub async fn resume(
        &self,
        owner: &UserId,
        id: &ScheduleId,
    ) -> Result<ScheduleView, AutomationError> {
        let row = self.row(owner, id).await?;
        let timing = self.timing(&row)?;
        let mut active: schedules::ActiveModel = row.into();
        active.status = Set(ScheduleStatus::Active);
        active.paused_reason = Set(None);
        active.consecutive_failures = Set(0);
        active.next_due_at = Set(timing.next_after(Utc::now()));
        active.updated_at = Set(Utc::now());
        let row = active.update(&self.db).await?;
        self.view(row).await
    }

    /// Deletes the schedule and the record of its firings (its chat and runs stay).
    pub async fn delete(&self, owner: &UserId, id: &ScheduleId) -> Result<(), AutomationError> {
        self.row(owner, id).await?;
        schedule_firings::Entity::delete_many()
            .filter(schedule_firings::Column::ScheduleId.eq(id.clone()))
            .exec(&self.db)
            .await?;
        schedules::Entity::delete_by_id(id.clone())
            .exec(&self.db)
            .await?;
        Ok(())
    }
}

/// When an active schedule next fires in `chat_id`, if one does: the chat's page wakes then to
/// show the firing's run as it happens.
pub async fn next_firing_in_chat(
    db: &DatabaseConnection,
    chat_id: &ChatId,
) -> Result<Option<DateTime<Utc>>, sea_orm::DbErr> {
    let next: Option<Option<DateTime<Utc>>> = schedules::Entity::find()
        .select_only()
        .column(schedules::Column::NextDueAt)
        .filter(schedules::Column::ChatId.eq(chat_id.clone()))
        .filter(schedules::Column::Status.eq(ScheduleStatus::Active))
        .filter(schedules::Column::NextDueAt.is_not_null())
        .order_by_asc(schedules::Column::NextDueAt)
        .into_tuple()
        .one(db)
        .await?;
    Ok(next.flatten())
}
