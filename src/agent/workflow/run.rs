//! `WorkflowRun`: one actor per run of a workflow of its own (over REST, or a schedule's
//! firing) in a chat: it runs the steps (`engine`), streams the result as the answer's text,
//! and ends the run like the loop does (`loop_actor::finish`: the chat's session persists the
//! answer), then hands the outcome to whoever records it (the run itself writes nothing). A
//! workflow that stopped at a failed step ends its run as failed (`StopReason::WorkflowFailed`
//! with a `RunErrorKind::WorkflowFailed` error naming the step), so whoever waits on the run
//! learns it from how the run ended.

use actix::prelude::*;
use serde_json::{Value, json};

use super::engine::{WorkflowOutcome, run_steps};
use crate::agent::kernel::{LoopOutcome, RunSpec};
use crate::agent::loop_actor::finish;
use crate::chat::automations::{Step, WorkflowView};
use crate::run::events::{RunError, RunErrorKind, RunEvent, StopReason};

/// What a workflow run is given.
pub struct WorkflowRunPlan {
    /// The run (its chat, tools, model, log).
    pub run: RunSpec,
    pub workflow: WorkflowView,
    pub steps: Vec<Step>,
    pub input: Value,
    /// Where the outcome goes once the answer is saved.
    pub done: tokio::sync::oneshot::Sender<WorkflowOutcome>,
}

pub struct WorkflowRun {
    spec: Option<WorkflowRunPlan>,
}

impl WorkflowRun {
    pub fn new(spec: WorkflowRunPlan) -> Self {
        Self { spec: Some(spec) }
    }
}

impl Actor for WorkflowRun {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        let Some(spec) = self.spec.take() else {
            ctx.stop();
            return;
        };
        ctx.spawn(execute(spec).into_actor(self).map(|(), _, ctx| ctx.stop()));
    }
}

async fn execute(spec: WorkflowRunPlan) {
    let WorkflowRunPlan {
        run,
        workflow,
        steps,
        input,
        done,
    } = spec;
    let log = &run.log;
    log.push(RunEvent::Extension {
        event_type: "x_workflow.started".into(),
        payload: json!({"workflow_id": workflow.id, "version": workflow.version,
            "name": workflow.name, "steps": steps.iter().map(|s| &s.id).collect::<Vec<_>>()}),
    });
    let outcome = run_steps(&run, &workflow, &steps, &input).await;
    let answer = outcome.answer(&workflow);
    if !answer.is_empty() {
        log.push(RunEvent::TextDelta {
            content: answer.clone(),
        });
    }
    log.push(RunEvent::Extension {
        event_type: "x_workflow.finished".into(),
        payload: outcome.to_value(&workflow),
    });
    let (stop_reason, error) = ending(log.cancel.is_cancelled(), &outcome);
    finish(
        &run,
        LoopOutcome {
            content: answer,
            reasoning: None,
            stop_reason,
            usage: outcome.usage,
            research_usage: Default::default(),
            iterations: outcome.steps.len() as u32,
            error,
            pause: None,
            unstored: false,
        },
    )
    .await;
    let _ = done.send(outcome);
}

/// How a workflow's run ends: cancelled when it was (whatever the steps did), failed with the
/// failed step named when one failed, else completed.
fn ending(cancelled: bool, outcome: &WorkflowOutcome) -> (StopReason, Option<RunError>) {
    match (&outcome.failed, cancelled) {
        (_, true) => (StopReason::Cancelled, None),
        (Some((step, why)), false) => (
            StopReason::WorkflowFailed,
            Some(RunError::new(
                RunErrorKind::WorkflowFailed,
                format!("step \"{step}\" failed: {why}"),
            )),
        ),
        (None, false) => (StopReason::Completed, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(failed: Option<(&str, &str)>) -> WorkflowOutcome {
        WorkflowOutcome {
            output: failed.is_none().then(|| "done".to_string()),
            steps: Vec::new(),
            failed: failed.map(|(step, why)| (step.to_string(), why.to_string())),
            usage: Default::default(),
        }
    }

    #[test]
    fn a_failed_step_fails_the_run_naming_it_and_a_cancel_is_a_cancel() {
        let (reason, error) = ending(false, &outcome(Some(("sum", "calculator failed"))));
        assert_eq!(reason, StopReason::WorkflowFailed);
        assert_eq!(reason.run_status().as_str(), "failed");
        let error = error.unwrap();
        assert_eq!(error.code(), "workflow_failed");
        assert_eq!(error.message, "step \"sum\" failed: calculator failed");

        assert_eq!(ending(false, &outcome(None)), (StopReason::Completed, None));
        assert_eq!(
            ending(true, &outcome(Some(("sum", "the run stopped (cancelled)")))),
            (StopReason::Cancelled, None)
        );
    }
}
