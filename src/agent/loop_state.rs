//! The loop's bookkeeping: the answer so far (saved as a draft while it streams), its
//! reasoning and how long it took, usage, iterations and the research counters; streaming what
//! a model call adds as reasoning and text events.

use std::time::{Duration, Instant};

use crate::chat::session::SaveDraft;
use crate::chat::tree::Reasoning;
use crate::llm::Split;
use crate::llm::wire::Usage;
use crate::run::events::{RunError, RunEvent, StopReason};
use crate::run::log::RunLog;

use super::kernel::{ChatLink, LoopOutcome, ResumePoint, RunSpec};

/// While text streams, the answer so far is saved at least this often, so a crash loses at
/// most about a second of it.
pub(super) const DRAFT_SAVE_INTERVAL: Duration = Duration::from_secs(1);
/// ... or as soon as this many bytes are new, whichever comes first.
pub(super) const DRAFT_SAVE_BYTES: usize = 4096;

/// Bookkeeping of one run of the loop.
pub(super) struct LoopState {
    pub(super) started: Instant,
    pub(super) content: String,
    /// The run's reasoning so far, each model call's apart by a blank line.
    pub(super) reasoning: String,
    /// How long the run has reasoned: each model call's start to its last reasoning, summed.
    pub(super) reasoning_ms: u64,
    /// When the answer's draft was last saved, and how long it was then.
    pub(super) draft_saved_at: Instant,
    pub(super) draft_saved_len: usize,
    pub(super) usage: Usage,
    /// The part of `usage` spent by model calls that asked for tools.
    pub(super) research_usage: Usage,
    pub(super) iterations: u32,
    pub(super) research_calls: u32,
    pub(super) sources: u32,
    pub(super) research_announced: bool,
}

/// One model call's clock: when it was sent, and how long after that its last reasoning came.
pub(super) struct CallClock {
    sent: Instant,
    reasoned_ms: u64,
}

impl CallClock {
    pub(super) fn start() -> Self {
        Self {
            sent: Instant::now(),
            reasoned_ms: 0,
        }
    }
}

impl LoopState {
    /// The state of a loop starting from `resume` (the default point: from the beginning);
    /// `announced`: its research is not announced (a quiet loop's is its driver's).
    pub(super) fn resumed(resume: ResumePoint, announced: bool) -> Self {
        Self {
            started: Instant::now(),
            draft_saved_at: Instant::now(),
            draft_saved_len: resume.content.len(),
            content: resume.content,
            reasoning: resume.reasoning,
            reasoning_ms: resume.reasoning_ms,
            usage: resume.usage,
            research_usage: resume.research_usage,
            iterations: resume.iterations,
            research_calls: 0,
            sources: 0,
            research_announced: announced,
        }
    }

    /// Streams what a model call added: its reasoning, then its text (a quiet loop streams
    /// neither: its text is for its driver only). `pending`: the call's text so far, for the
    /// draft.
    pub(super) fn stream(
        &mut self,
        spec: &RunSpec,
        clock: &mut CallClock,
        split: Split,
        pending: &str,
    ) {
        if !split.reasoning.is_empty() {
            clock.reasoned_ms = clock.sent.elapsed().as_millis() as u64;
        }
        if spec.bounds.quiet {
            return;
        }
        if !split.reasoning.is_empty() {
            spec.log.push(RunEvent::ReasoningDelta {
                content: split.reasoning,
                elapsed_ms: self.reasoning_ms + clock.reasoned_ms,
            });
        }
        if !split.text.is_empty() {
            self.announce_research(&spec.log);
            spec.log.push(RunEvent::TextDelta {
                content: split.text,
            });
            self.save_draft(spec, pending, false);
        }
    }

    /// Keeps a model call's reasoning (all of it, or as far as it came) and its time.
    pub(super) fn append_reasoning(&mut self, text: &str, clock: &CallClock) {
        if text.is_empty() {
            return;
        }
        if !self.reasoning.is_empty() {
            self.reasoning.push_str("\n\n");
        }
        self.reasoning.push_str(text);
        self.reasoning_ms += clock.reasoned_ms;
    }

    pub(super) fn append(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if !self.content.is_empty() && !self.content.ends_with('\n') {
            self.content.push_str("\n\n");
        }
        self.content.push_str(text);
    }

    /// Saves the answer so far (`content` and the turn's `pending` text) through the chat
    /// session when enough time or text has passed since the last save, or when `force`d.
    pub(super) fn save_draft(&mut self, spec: &RunSpec, pending: &str, force: bool) {
        let Some(ChatLink { session, .. }) = &spec.chat else {
            return;
        };
        let len = self.content.len() + pending.len();
        let new_bytes = len.saturating_sub(self.draft_saved_len);
        if new_bytes == 0
            || (!force
                && new_bytes < DRAFT_SAVE_BYTES
                && self.draft_saved_at.elapsed() < DRAFT_SAVE_INTERVAL)
        {
            return;
        }
        let mut draft = self.content.clone();
        if !pending.is_empty() {
            if !draft.is_empty() && !draft.ends_with('\n') {
                draft.push_str("\n\n");
            }
            draft.push_str(pending);
        }
        session.do_send(SaveDraft {
            run_id: spec.log.run_id.clone(),
            content: draft,
        });
        self.draft_saved_at = Instant::now();
        self.draft_saved_len = len;
    }

    pub(super) fn announce_research(&mut self, log: &RunLog) {
        if self.research_calls == 0 || self.research_announced {
            return;
        }
        self.research_announced = true;
        log.push(RunEvent::ResearchComplete {
            elapsed_ms: self.started.elapsed().as_millis() as u64,
            input_tokens: self.usage.prompt_tokens,
            output_tokens: self.usage.completion_tokens,
            iterations: self.iterations,
            sources: self.sources,
        });
    }

    pub(super) fn stop(
        mut self,
        log: &RunLog,
        stop_reason: StopReason,
        error: Option<RunError>,
    ) -> LoopOutcome {
        self.announce_research(log);
        LoopOutcome {
            content: self.content,
            reasoning: (!self.reasoning.is_empty()).then_some(Reasoning {
                text: self.reasoning,
                duration_ms: self.reasoning_ms,
            }),
            stop_reason,
            usage: self.usage,
            research_usage: self.research_usage,
            iterations: self.iterations,
            error,
            pause: None,
            unstored: false,
        }
    }
}
