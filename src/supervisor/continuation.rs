//! Deep Think runs a dead process left running: at start-up each one with a checkpoint (its
//! plan made) continues from its next sub-task, under its own run id, so the chat gets its
//! answer and a client re-attaching to the run's stream follows the continuation. A run
//! continued `MAX_RESUMPTIONS` times is left to the ordinary recovery (an interrupted answer).
//! The continuation's log is numbered past the old process's, so a client re-attaching with
//! the last id it saw gets what follows.

use std::sync::Arc;

use entities::runs::{self, RunStatus};
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter};

use crate::agent::deep_think::{Checkpoint, MAX_RESUMPTIONS};
use crate::chat::session::ResumeTurn;
use crate::error::{AppError, AppResult};
use crate::llm::wire::ChatRequest;
use crate::run::events::RunEvent;
use crate::run::log::RunLog;
use crate::tools::chat_context::Parts;

use super::launch::{Launcher, RunPlan};

/// A run to continue, with its checkpoint.
pub struct Continuation {
    pub run: runs::Model,
    pub checkpoint: Checkpoint,
}

/// The running runs that can continue: those with a readable checkpoint, an answered-to
/// message, and resumptions left. Call before `recover_interrupted_runs`, and keep these out
/// of it.
pub async fn continuable(db: &DatabaseConnection) -> Result<Vec<Continuation>, DbErr> {
    let running = runs::Entity::find()
        .filter(runs::Column::Status.eq(RunStatus::Running))
        .filter(runs::Column::DeepThink.is_not_null())
        .all(db)
        .await?;
    Ok(running
        .into_iter()
        .filter(|run| run.user_message_id.is_some())
        .filter_map(|run| {
            let checkpoint: Checkpoint = match serde_json::from_value(run.deep_think.clone()?) {
                Ok(checkpoint) => checkpoint,
                Err(err) => {
                    tracing::error!(run_id = %run.id, %err, "an unreadable Deep Think checkpoint; the run is left interrupted");
                    return None;
                }
            };
            if checkpoint.resumptions >= MAX_RESUMPTIONS {
                tracing::warn!(run_id = %run.id, resumptions = checkpoint.resumptions, "a Deep Think run cut off too often; it is left interrupted");
                return None;
            }
            Some(Continuation { run, checkpoint })
        })
        .collect())
}

/// Continues one run from its checkpoint.
pub async fn continue_run(
    launcher: &Launcher,
    continuation: Continuation,
) -> AppResult<Arc<RunLog>> {
    let Continuation {
        run,
        mut checkpoint,
    } = continuation;
    let user_message_id = run
        .user_message_id
        .clone()
        .ok_or(AppError::NotFound("message"))?;
    checkpoint.resumptions += 1;
    let session = launcher.sessions.session(&run.chat_id).await?;
    session
        .send(ResumeTurn {
            run_id: run.id.clone(),
        })
        .await
        .map_err(|err| AppError::Internal(anyhow::anyhow!("the chat session is gone: {err}")))??;
    let log = Arc::new(
        RunLog::new(
            run.id.clone(),
            Some(run.chat_id.clone()),
            run.user_id.clone(),
            checkpoint.model.clone(),
        )
        .owned_by_admin(checkpoint.owner_is_admin)
        .continued(checkpoint.resumptions as usize),
    );
    log.push(RunEvent::Started {
        user_message_id: Some(user_message_id.clone()),
    });
    let tools = launcher
        .available_tools()
        .into_iter()
        .filter(|tool| checkpoint.tools.iter().any(|name| name == tool.name()))
        .collect();
    let spec = launcher.assemble(RunPlan {
        log: log.clone(),
        template: ChatRequest::new(checkpoint.model.clone(), Vec::new()),
        messages: Vec::new(),
        tools,
        max_iterations: launcher.config.deep_think.subtask_iterations,
        chat: Some(crate::agent::kernel::ChatLink {
            session,
            user_message: user_message_id,
        }),
        resume: None,
        completes_ask: None,
        project: checkpoint.project.clone(),
        parts: Parts::default(),
        context_strategy: launcher.config.agent.context_strategy,
        client_tools: Vec::new(),
    });
    let question = checkpoint.question.clone();
    launcher.start_deep_think(spec, question, Some(checkpoint));
    Ok(log)
}
