//! The supervisor and run launching, above both chats and runs. `ChatSupervisor`: one per
//! process. It owns two pools of arbiters, one for chat sessions (through `ChatRegistry`) and one
//! for runs (so a busy run never delays a chat's mailbox). It spawns one `AgentRun` per stored
//! turn (a whole answer's and a run in no chat stay on their request's worker instead:
//! `Launcher::spawn`), Deep Think's `DeepThinkPlanner` and the `DeepThinkSubtask`s it asks
//! for, and workflow runs, and sweeps finished run logs. `launch` turns a request into a
//! persisted turn and a run.
//!
//! Beside it: `turn` (`Launcher::open`, the one door every surface begins a turn through),
//! `launch` (`Launcher`, the handles runs need — not `AppState` —, with `plan`: the
//! checks that write nothing, `options`, `agent` and `chat`: what an agent and a chat add to a
//! run), `resume` (paused runs continued) and `continuation` (Deep Think runs continued after
//! a restart), `lifecycle` (`forget_chat`, the one teardown of a chat), `recovery` (what start-up picks up,
//! in order), `jobs` (background work, each job started by `every`) and `automations` (workflow runs of their own, the scheduler, and the
//! workflow and schedule tools).

pub mod automations;
pub mod continuation;
pub mod jobs;
pub mod launch;
mod lifecycle;
pub mod recovery;
pub mod resume;
pub mod turn;

use std::time::Duration;

use actix::prelude::*;
use sea_orm::DatabaseConnection;

use crate::agent::deep_think::{DeepThinkPlanner, DeepThinkSpec, DeepThinkSubtask, SpawnSubtask};
use crate::agent::kernel::RunSpec;
use crate::agent::loop_actor::AgentRun;
use crate::chat::registry::ChatRegistry;
use crate::retrieval::embed::SharedEmbedder;
use crate::run::log::RunRegistry;

/// How often finished run logs are swept.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// Starts a run on the supervisor's arbiters. Sent only by `Launcher::spawn`, the one path that
/// registers a run's log (so subscribers find it at once) and counts it, whatever the run is.
#[derive(Message)]
#[rtype(result = "()")]
pub enum Spawn {
    /// One run of the agentic loop (a chat turn, a resumed or continued run, a schedule's prompt).
    Run(Box<RunSpec>),
    /// A Deep Think run: its `DeepThinkPlanner`, which asks back for its sub-tasks' actors with
    /// `SpawnSubtask`.
    DeepThink(Box<DeepThinkSpec>),
    /// A run of a workflow of its own (`WorkflowRun`).
    Workflow(Box<crate::agent::workflow::WorkflowRunPlan>),
}

impl Spawn {
    /// The run's log.
    pub fn log(&self) -> &std::sync::Arc<crate::run::log::RunLog> {
        match self {
            Self::Run(spec) => &spec.log,
            Self::DeepThink(spec) => &spec.run.log,
            Self::Workflow(plan) => &plan.run.log,
        }
    }

    /// The kind of run, as `GET /metrics` counts them.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Run(_) => "run",
            Self::DeepThink(_) => "deep_think",
            Self::Workflow(_) => "workflow",
        }
    }
}

pub struct ChatSupervisor {
    registry: ChatRegistry,
    runs: RunRegistry,
    run_retention: Duration,
    /// The chat sessions' arbiters (their mailboxes answer requests).
    _arbiters: Vec<Arbiter>,
    /// The runs' own arbiters, apart from the sessions', so a busy run never delays another
    /// chat's mailbox; taken in turn.
    run_arbiters: Vec<Arbiter>,
    next_run: usize,
}

impl ChatSupervisor {
    /// Creates the arbiter pool and the registries. Call inside an actix `System`.
    pub fn new(
        db: DatabaseConnection,
        group_commit: Option<crate::chat::group_commit::GroupCommit>,
        idle_after: Duration,
        run_retention: Duration,
        embedder: SharedEmbedder,
    ) -> Self {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let arbiters: Vec<Arbiter> = (0..threads).map(|_| Arbiter::new()).collect();
        let handles = arbiters.iter().map(Arbiter::handle).collect();
        Self {
            registry: ChatRegistry::new(handles, db, group_commit, idle_after, embedder),
            runs: RunRegistry::default(),
            run_retention,
            _arbiters: arbiters,
            run_arbiters: (0..threads).map(|_| Arbiter::new()).collect(),
            next_run: 0,
        }
    }

    pub fn registry(&self) -> ChatRegistry {
        self.registry.clone()
    }

    pub fn runs(&self) -> RunRegistry {
        self.runs.clone()
    }

    /// The next run arbiter, in turn.
    fn run_arbiter(&mut self) -> actix::ArbiterHandle {
        let index = self.next_run % self.run_arbiters.len();
        self.next_run = self.next_run.wrapping_add(1);
        self.run_arbiters[index].handle()
    }
}

impl Actor for ChatSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(SWEEP_EVERY, |act, _| {
            let swept = act.runs.sweep(act.run_retention);
            if swept > 0 {
                tracing::debug!(swept, "forgot finished run logs");
            }
        });
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        for arbiter in self._arbiters.iter().chain(&self.run_arbiters) {
            arbiter.stop();
        }
    }
}

impl Handler<Spawn> for ChatSupervisor {
    type Result = ();

    fn handle(&mut self, msg: Spawn, _: &mut Self::Context) {
        let arbiter = self.run_arbiter();
        match msg {
            Spawn::Run(spec) => {
                AgentRun::start_in_arbiter(&arbiter, move |_| AgentRun::new(*spec));
            }
            Spawn::DeepThink(spec) => {
                DeepThinkPlanner::start_in_arbiter(&arbiter, move |_| DeepThinkPlanner::new(*spec));
            }
            Spawn::Workflow(plan) => {
                crate::agent::workflow::WorkflowRun::start_in_arbiter(&arbiter, move |_| {
                    crate::agent::workflow::WorkflowRun::new(*plan)
                });
            }
        }
    }
}

impl Handler<SpawnSubtask> for ChatSupervisor {
    type Result = ();

    fn handle(&mut self, msg: SpawnSubtask, _: &mut Self::Context) {
        let arbiter = self.run_arbiter();
        DeepThinkSubtask::start_in_arbiter(&arbiter, move |_| {
            DeepThinkSubtask::new(msg.spec, msg.reply)
        });
    }
}
