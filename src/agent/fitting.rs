//! Fitting each request of a run into the model's context window (`context::fit`), and, when
//! the chat's context strategy is `summarize`, putting a summary of the left-out turns in
//! their place (`summary`). The run says what was done with `x_chat.context_trimmed`.

use super::context::{self, TooLarge, Trimmed};
use super::kernel::{ChatLink, Interrupt, RunSpec, guarded};
use super::summary;
use crate::chat::persistence::HistorySummary;
use crate::chat::session::{LoadHistorySummary, StoreHistorySummary};
use crate::config::ContextStrategy;
use crate::llm::wire::{ChatMessage, ChatRequest, MessageContent, Role, Usage};
use crate::run::events::RunEvent;
use crate::run::log::RunLog;

/// The event saying a request was fitted into the model's context window.
pub const CONTEXT_TRIMMED: &str = "x_chat.context_trimmed";

/// What introduces the summary in the system prompt.
pub const SUMMARY_HEADING: &str = "Earlier in this conversation (summarised, as it no longer \
fits the model's context):";

/// `context::fit` on the blocking pool: it tokenizes the whole context, on every call of the
/// loop, and the run's actor shares its arbiter with chat sessions, which must not wait on it.
async fn fit_off_thread(
    request: &mut ChatRequest,
    latest_turn: usize,
    window: u32,
    reserve: u64,
) -> Result<Option<Trimmed>, context::TooLarge> {
    // The request goes to the pool and comes back fitted; an empty one holds its place.
    let mut owned = std::mem::replace(request, ChatRequest::new(String::new(), Vec::new()));
    let joined = tokio::task::spawn_blocking(move || {
        let outcome = context::fit(&mut owned, latest_turn, window, reserve);
        (owned, outcome)
    })
    .await;
    let (fitted, outcome) = match joined {
        Ok(done) => done,
        // A panic while fitting is the loop's own, as it was on this thread.
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => panic!("fitting was cancelled with the runtime: {err}"),
    };
    *request = fitted;
    outcome
}

/// Why a request could not be sent.
pub(super) enum Unfit {
    TooLarge(TooLarge),
    Interrupted(Interrupt),
}

/// Fitting the requests of one run.
#[derive(Default)]
pub(super) struct Fitting {
    /// What the last trimming did, so the event is sent when it changes, not every call.
    last: Option<(usize, usize, usize)>,
    /// Whether the window was already learnt from an overflow error in this run.
    pub learnt: bool,
    /// The history summary in use: `None` until the chat's kept one is looked up.
    summary: Option<Option<HistorySummary>>,
    /// Summarising failed once in this run: the rest of it only drops.
    summary_failed: bool,
}

impl Fitting {
    /// Fits `request` into `window`; summarising costs are added to `usage`.
    pub(super) async fn fit(
        &mut self,
        spec: &RunSpec,
        deadline: tokio::time::Instant,
        usage: &mut Usage,
        request: &mut ChatRequest,
        latest_turn: usize,
        window: u32,
    ) -> Result<(), Unfit> {
        let log = &spec.log;
        let summarize = spec.context_strategy == ContextStrategy::Summarize && !self.summary_failed;
        // Room for the summary and its heading.
        let reserve = if summarize {
            u64::from(summary::summary_tokens(window)) + context::tokens(SUMMARY_HEADING) + 8
        } else {
            0
        };
        let fitted = fit_off_thread(request, latest_turn, window, reserve)
            .await
            .map_err(Unfit::TooLarge)?;
        let left_out = spec.history_left_out;
        let mut trimmed = match fitted {
            Some(mut trimmed) => {
                trimmed.dropped_messages += left_out;
                trimmed
            }
            // What was left out before the run began is reported even when the rest fits.
            None if left_out > 0 => Trimmed {
                dropped_messages: left_out,
                dropped: Vec::new(),
                summarized_messages: 0,
                shortened_results: 0,
                prompt_tokens: context::request_tokens(request),
                context_length: window,
                answer_tokens: None,
            },
            None => return Ok(()),
        };
        let mut summary_error = None;
        if summarize && trimmed.dropped_messages > 0 {
            match self
                .summary_of(spec, deadline, usage, request, &trimmed, window)
                .await
            {
                Ok(Some(kept)) => {
                    let note = format!("{SUMMARY_HEADING}\n{}", kept.text);
                    let added = context::tokens(&note) + 4;
                    if trimmed.prompt_tokens + added
                        <= context::prompt_budget(window, request.max_tokens)
                    {
                        insert_summary(request, note);
                        trimmed.prompt_tokens += added;
                        trimmed.summarized_messages = kept.covers - kept.from;
                    }
                }
                Ok(None) => {}
                Err(SummaryFailed::Interrupted(interrupt)) => {
                    return Err(Unfit::Interrupted(interrupt));
                }
                Err(SummaryFailed::Model(message)) => summary_error = Some(message),
            }
        }
        self.announce(log, &trimmed, summary_error);
        Ok(())
    }

    fn announce(&mut self, log: &RunLog, trimmed: &Trimmed, summary_error: Option<String>) {
        let now = (
            trimmed.dropped_messages,
            trimmed.summarized_messages,
            trimmed.shortened_results,
        );
        if self.last == Some(now) && summary_error.is_none() {
            return;
        }
        self.last = Some(now);
        let mut payload = trimmed.payload();
        if let Some(message) = summary_error {
            payload["summary_error"] = message.into();
        }
        log.push(RunEvent::Extension {
            event_type: CONTEXT_TRIMMED.into(),
            payload,
        });
    }

    /// The summary standing in for `trimmed.dropped`: the one in use if it still covers them,
    /// else extended (or made) by the model and kept with the chat.
    async fn summary_of(
        &mut self,
        spec: &RunSpec,
        deadline: tokio::time::Instant,
        usage: &mut Usage,
        request: &ChatRequest,
        trimmed: &Trimmed,
        window: u32,
    ) -> Result<Option<HistorySummary>, SummaryFailed> {
        let log = &spec.log;
        let kept = match &self.summary {
            Some(kept) => kept.clone(),
            None => match &spec.chat {
                Some(ChatLink { session, .. }) => {
                    guarded(log, deadline, session.send(LoadHistorySummary))
                        .await
                        .map_err(SummaryFailed::Interrupted)?
                        .unwrap_or_default()
                }
                None => None,
            },
        };
        let made = guarded(
            log,
            deadline,
            summary::summarize(
                &spec.handles.llm,
                &request.model,
                window,
                &trimmed.dropped,
                kept,
            ),
        )
        .await
        .map_err(SummaryFailed::Interrupted)?;
        match made {
            Ok(made) => {
                usage.add(made.usage);
                if made.calls > 0
                    && let Some(ChatLink { session, .. }) = &spec.chat
                {
                    session.do_send(StoreHistorySummary(made.summary.clone()));
                }
                self.summary = Some(Some(made.summary.clone()));
                Ok((made.summary.covers > made.summary.from).then_some(made.summary))
            }
            Err(err) => {
                tracing::warn!(run_id = %log.run_id, %err, "could not summarise the left-out history; it is only dropped");
                self.summary_failed = true;
                Err(SummaryFailed::Model(format!(
                    "the earlier messages could not be summarised, so they were left out: {err}"
                )))
            }
        }
    }
}

enum SummaryFailed {
    Interrupted(Interrupt),
    Model(String),
}

/// Adds the summary to the leading system message (templates that take one system message
/// only at the start accept that), or puts one first.
fn insert_summary(request: &mut ChatRequest, note: String) {
    let leading = request
        .messages
        .iter()
        .take_while(|m| matches!(m.role, Role::System | Role::Developer))
        .count();
    if leading > 0
        && let Some(MessageContent::Text(text)) = &mut request.messages[leading - 1].content
    {
        text.push_str("\n\n");
        text.push_str(&note);
        return;
    }
    request.messages.insert(0, ChatMessage::system(note));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another chat's work on the run's thread keeps going while a huge context is fitted: the
    /// tokenizing happens on the blocking pool. (A chat session shares its arbiter thread with
    /// runs; here the other chat is a task ticking on the same single-threaded runtime.)
    #[tokio::test]
    async fn fitting_a_huge_context_leaves_its_thread_free_for_other_chats() {
        use std::time::{Duration, Instant};
        let turn = |i: usize| format!("turn {i}: {}", "several words of history ".repeat(120));
        let history: Vec<ChatMessage> = (0..1_200)
            .flat_map(|i| [ChatMessage::user(turn(i)), ChatMessage::assistant(turn(i))])
            .collect();
        let latest = history.len() - 1;
        let request = ChatRequest::new("m", history);
        // A window the whole history fits in: every message is tokenized (one that holds less
        // is only counted as far as it reaches).
        const WINDOW: u32 = 4_000_000;

        // What fitting costs when it holds the thread.
        let mut held = request.clone();
        let started = Instant::now();
        let expected = context::fit(&mut held, latest, WINDOW, 0).unwrap();
        let alone = started.elapsed();
        assert!(
            alone > Duration::from_millis(100),
            "the context must take a while to fit: {alone:?}"
        );

        let ticks = std::sync::Arc::new(std::sync::Mutex::new(vec![Instant::now()]));
        let recorded = ticks.clone();
        let other_chat = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(5)).await;
                recorded.lock().unwrap().push(Instant::now());
            }
        });
        let mut fitted = request.clone();
        let outcome = fit_off_thread(&mut fitted, latest, WINDOW, 0)
            .await
            .unwrap();
        other_chat.abort();

        let ticks = ticks.lock().unwrap();
        let longest_wait = ticks
            .windows(2)
            .map(|pair| pair[1] - pair[0])
            .max()
            .unwrap_or_default();
        assert!(ticks.len() > 2, "the other chat ran meanwhile");
        assert!(
            longest_wait < alone / 2,
            "the other chat waited {longest_wait:?} while fitting took {alone:?}"
        );
        // The same fitting as on the thread.
        assert_eq!(fitted, held);
        assert_eq!(
            outcome.map(|t| t.dropped_messages),
            expected.map(|t| t.dropped_messages)
        );
    }

    #[test]
    fn the_summary_joins_the_leading_system_message_or_comes_first() {
        let mut with_system = ChatRequest::new(
            "m",
            vec![ChatMessage::system("Be brief."), ChatMessage::user("hi")],
        );
        insert_summary(&mut with_system, "S".into());
        assert_eq!(with_system.messages.len(), 2);
        assert_eq!(with_system.messages[0].text(), "Be brief.\n\nS");

        let mut without = ChatRequest::new("m", vec![ChatMessage::user("hi")]);
        insert_summary(&mut without, "S".into());
        assert_eq!(without.messages[0].role, Role::System);
        assert_eq!(without.messages[0].text(), "S");
        assert_eq!(without.messages[1].text(), "hi");
    }
}
