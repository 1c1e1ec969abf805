//! `RunLog`: a run's ordered event log, which any number of SSE subscribers read from any
//! point (re-attach with `Last-Event-ID`), and `RunRegistry`, the process-wide map of live and
//! recently finished runs. The log outlives its clients: a run goes on when they disconnect.

use entities::ids::{ChatId, MessageId, RunId, UserId};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use futures_util::Stream;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::events::RunEvent;

/// Most events one run may log: a bound on memory for a runaway stream.
const MAX_EVENTS_PER_RUN: usize = 200_000;

pub struct RunLog {
    pub run_id: RunId,
    pub chat_id: Option<ChatId>,
    /// The user who may read and cancel this run.
    pub owner_id: UserId,
    /// Whether the owner, this log's only reader, is an admin and so may see the whole cause
    /// of a failure (the upstream's address and answer), not just its public summary.
    pub owner_is_admin: bool,
    pub model: String,
    /// Unix seconds when the run started (the `created` of its chunks).
    pub created: i64,
    pub cancel: CancellationToken,
    /// Sequence numbers of this log start after this one: a run continued by a new process
    /// numbers its events past any the old process could have sent, so a client re-attaching
    /// with the last id it saw gets the continuation from its start.
    first_after: usize,
    /// The user message the run answers, known once its chat took the turn and before the
    /// turn is stored (then `Started` says it).
    accepted_for: std::sync::OnceLock<MessageId>,
    inner: Mutex<Inner>,
    /// Bumped by every event: what live subscribers wait on.
    version: watch::Sender<usize>,
    /// Set once, by `Finished`: what readers of the whole log wait on (`whole`), so that a
    /// run's many events wake them once, not once each.
    finished: watch::Sender<bool>,
}

struct Inner {
    events: Vec<Arc<RunEvent>>,
    finished_at: Option<Instant>,
}

impl RunLog {
    pub fn new(run_id: RunId, chat_id: Option<ChatId>, owner_id: UserId, model: String) -> Self {
        Self {
            run_id,
            chat_id,
            owner_id,
            owner_is_admin: false,
            model,
            created: chrono::Utc::now().timestamp(),
            cancel: CancellationToken::new(),
            first_after: 0,
            accepted_for: std::sync::OnceLock::new(),
            inner: Mutex::new(Inner {
                events: Vec::new(),
                finished_at: None,
            }),
            version: watch::channel(0).0,
            finished: watch::channel(false).0,
        }
    }

    /// Marks the owner an admin (or not): see `owner_is_admin`.
    pub fn owned_by_admin(mut self, is_admin: bool) -> Self {
        self.owner_is_admin = is_admin;
        self
    }

    /// The log of a run continued after a restart: see `first_after`. Its `resumption`
    /// (1 for the first) places it past every event the earlier processes could have logged.
    pub fn continued(mut self, resumption: usize) -> Self {
        self.first_after = resumption * (MAX_EVENTS_PER_RUN + 1);
        self
    }

    /// A log told again for a client whose cursor is `after` (in whichever process's
    /// numbering): its events are numbered past it.
    pub fn told_again_past(self, after: usize) -> Self {
        self.continued(after / (MAX_EVENTS_PER_RUN + 1) + 1)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding this lock cannot leave the Vec inconsistent; keep going.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Appends a feature's typed event (`RunEvent::Extension`: `x_artifact.created`,
    /// `response.file_search_call.searching`, …).
    pub fn emit(&self, event_type: &str, payload: serde_json::Value) {
        self.push(RunEvent::Extension {
            event_type: event_type.into(),
            payload,
        });
    }

    /// Appends an event and wakes subscribers. Returns its sequence number (from 1).
    /// Events after `Finished` are ignored.
    pub fn push(&self, event: RunEvent) -> usize {
        let finished = matches!(event, RunEvent::Finished { .. });
        let mut inner = self.lock();
        // Past the bound only the terminal event gets in: subscribers wait for it.
        if inner.finished_at.is_some() || (inner.events.len() >= MAX_EVENTS_PER_RUN && !finished) {
            return self.first_after + inner.events.len();
        }
        inner.events.push(Arc::new(event));
        if finished {
            inner.finished_at = Some(Instant::now());
        }
        let seq = self.first_after + inner.events.len();
        drop(inner);
        self.version.send_replace(seq);
        if finished {
            self.finished.send_replace(true);
        }
        seq
    }

    /// The user message the run answers, from its `Started` event, or, before it, from its
    /// turn's acceptance (`accepted_for`).
    pub fn user_message_id(&self) -> Option<MessageId> {
        match self.lock().events.first().map(|event| event.as_ref()) {
            Some(RunEvent::Started { user_message_id }) => user_message_id.clone(),
            _ => self.accepted_for.get().cloned(),
        }
    }

    /// Records that the run's turn, answering `user_message_id`, was taken by its chat and
    /// awaits its write.
    pub fn accepted_for(&self, user_message_id: &MessageId) {
        let _ = self.accepted_for.set(user_message_id.clone());
    }

    /// Whether anything was logged yet: a turn answered once its chat took it logs nothing
    /// until its write is durable (`RunEvent::Started`).
    pub fn has_begun(&self) -> bool {
        !self.lock().events.is_empty()
    }

    pub fn is_finished(&self) -> bool {
        self.lock().finished_at.is_some()
    }

    /// Every event logged so far (for tests that look at what a step of a run logged).
    #[cfg(test)]
    pub(crate) fn events_so_far(&self) -> Vec<Arc<RunEvent>> {
        self.lock().events.clone()
    }

    fn finished_before(&self, cutoff: Instant) -> bool {
        self.lock().finished_at.is_some_and(|at| at < cutoff)
    }

    /// Every event of the run, numbered as `subscribe(0)` numbers them, once it has finished:
    /// for a reader that answers only at the end (a non-streamed answer, a schedule's outcome).
    /// It is woken once, by `Finished`, where a subscriber is woken by every event, each wake
    /// a hop between threads.
    pub fn whole(self: &Arc<Self>) -> impl Stream<Item = (usize, Arc<RunEvent>)> + Send + 'static {
        let log = Arc::clone(self);
        let mut finished = self.finished.subscribe();
        futures_util::StreamExt::flatten(futures_util::stream::once(async move {
            // Never `Err`: the sender is the log's own, and `log` holds the log.
            let _ = finished.wait_for(|done| *done).await;
            let events = log.lock().events.clone();
            let first_after = log.first_after;
            futures_util::stream::iter(
                events
                    .into_iter()
                    .enumerate()
                    .map(move |(at, event)| (first_after + at + 1, event)),
            )
        }))
    }

    /// The events after sequence number `after`, then live ones until the run finishes.
    pub fn subscribe(
        self: &Arc<Self>,
        after: usize,
    ) -> impl Stream<Item = (usize, Arc<RunEvent>)> + Send + 'static {
        let log = Arc::clone(self);
        let receiver = self.version.subscribe();
        let first_after = self.first_after;
        let after = after.saturating_sub(first_after);
        futures_util::stream::unfold(
            (log, receiver, after),
            move |(log, mut receiver, cursor)| async move {
                loop {
                    receiver.borrow_and_update();
                    {
                        let inner = log.lock();
                        if let Some(event) = inner.events.get(cursor) {
                            let event = Arc::clone(event);
                            drop(inner);
                            let seq = first_after + cursor + 1;
                            return Some(((seq, event), (log, receiver, cursor + 1)));
                        }
                        if inner.finished_at.is_some() {
                            return None;
                        }
                    }
                    if receiver.changed().await.is_err() {
                        return None;
                    }
                }
            },
        )
    }
}

/// Live and recently finished runs, by id.
#[derive(Clone, Default)]
pub struct RunRegistry {
    runs: Arc<DashMap<RunId, Arc<RunLog>>>,
}

impl RunRegistry {
    pub fn insert(&self, log: Arc<RunLog>) {
        self.runs.insert(log.run_id.clone(), log);
    }

    pub fn get(&self, run_id: &RunId) -> Option<Arc<RunLog>> {
        self.runs.get(run_id).map(|entry| Arc::clone(entry.value()))
    }

    /// Forgets runs that finished more than `retention` ago.
    pub fn sweep(&self, retention: Duration) -> usize {
        let Some(cutoff) = Instant::now().checked_sub(retention) else {
            return 0;
        };
        let before = self.runs.len();
        self.runs.retain(|_, log| !log.finished_before(cutoff));
        before - self.runs.len()
    }

    /// A chat's runs still in flight, oldest first, so a reloaded client can re-attach.
    pub fn live_in_chat(&self, chat_id: &ChatId) -> Vec<Arc<RunLog>> {
        let mut runs: Vec<Arc<RunLog>> = self
            .runs
            .iter()
            .filter(|entry| {
                let log = entry.value();
                log.chat_id.as_ref() == Some(chat_id) && !log.is_finished()
            })
            .map(|entry| Arc::clone(entry.value()))
            .collect();
        runs.sort_by_key(|log| log.created);
        runs
    }

    /// Runs still in flight (for shutdown bookkeeping).
    pub fn live(&self) -> Vec<Arc<RunLog>> {
        self.runs
            .iter()
            .filter(|entry| !entry.value().is_finished())
            .map(|entry| Arc::clone(entry.value()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::events::StopReason;
    use futures_util::StreamExt;

    fn a_log() -> RunLog {
        RunLog::new(
            RunId::from_string("r"),
            None,
            UserId::from_string("u"),
            "m".into(),
        )
    }

    fn finished() -> RunEvent {
        RunEvent::Finished {
            stop_reason: StopReason::Completed,
            assistant_message_id: None,
            usage: Default::default(),
            research_usage: None,
            iterations: 1,
            error: None,
        }
    }

    #[tokio::test]
    async fn a_run_past_the_event_bound_still_logs_its_end_and_subscribers_see_it() {
        let log = Arc::new(a_log());
        for _ in 0..=MAX_EVENTS_PER_RUN {
            log.push(RunEvent::TextDelta {
                content: "x".into(),
            });
        }
        assert_eq!(log.push(finished()), MAX_EVENTS_PER_RUN + 1);
        assert!(log.is_finished());
        let mut from_end = Box::pin(log.subscribe(MAX_EVENTS_PER_RUN));
        let (_, last) = from_end.next().await.expect("the terminal event");
        assert!(matches!(*last, RunEvent::Finished { .. }));
        assert!(from_end.next().await.is_none(), "and the stream ends");
    }

    #[tokio::test]
    async fn a_late_subscriber_replays_what_it_missed_then_follows_live() {
        let log = Arc::new(a_log());
        for i in 0..3 {
            log.push(RunEvent::TextDelta {
                content: i.to_string(),
            });
        }
        let mut from_two = Box::pin(log.subscribe(2));
        let (seq, event) = from_two.next().await.unwrap();
        assert_eq!(seq, 3);
        assert_eq!(
            *event,
            RunEvent::TextDelta {
                content: "2".into()
            }
        );
        let writer = Arc::clone(&log);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            writer.push(RunEvent::TextDelta {
                content: "3".into(),
            });
            writer.push(finished());
            writer.push(RunEvent::TextDelta {
                content: "ignored".into(),
            });
        });
        let rest: Vec<usize> = from_two.map(|(seq, _)| seq).collect().await;
        assert_eq!(rest, [4, 5]);
        let all: Vec<usize> = log.subscribe(0).map(|(seq, _)| seq).collect().await;
        assert_eq!(all, [1, 2, 3, 4, 5]);
    }

    #[tokio::test]
    async fn the_whole_log_comes_at_the_end_numbered_as_subscribers_see_it() {
        let log = Arc::new(a_log().continued(1));
        let whole = tokio::spawn(log.whole().collect::<Vec<_>>());
        for i in 0..3 {
            log.push(RunEvent::TextDelta {
                content: i.to_string(),
            });
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!whole.is_finished(), "nothing is read before the run ends");
        log.push(finished());
        let whole = whole.await.unwrap();
        let subscribed: Vec<(usize, Arc<RunEvent>)> = log.subscribe(0).collect().await;
        assert_eq!(whole.len(), 4);
        assert_eq!(whole, subscribed);
        assert!(matches!(*whole[3].1, RunEvent::Finished { .. }));
        // A reader that comes after the end gets it at once.
        assert_eq!(log.whole().collect::<Vec<_>>().await, subscribed);
    }

    #[tokio::test]
    async fn a_log_told_again_is_numbered_past_the_clients_cursor_whatever_its_numbering() {
        let base = MAX_EVENTS_PER_RUN + 1;
        for cursor in [1, 57, base - 1, base, base + 3, 2 * base + 9] {
            let log = Arc::new(a_log().told_again_past(cursor));
            let seq = log.push(finished());
            assert!(seq > cursor, "{seq} after {cursor}");
            let told: Vec<usize> = log.subscribe(cursor).map(|(seq, _)| seq).collect().await;
            assert_eq!(told, [seq], "the cursor {cursor} gets the one event");
        }
    }

    #[tokio::test]
    async fn a_continued_log_numbers_past_the_old_one_and_an_old_cursor_replays_it_all() {
        let log = Arc::new(a_log().continued(1));
        let base = MAX_EVENTS_PER_RUN + 1;
        assert_eq!(
            log.push(RunEvent::TextDelta {
                content: "a".into()
            }),
            base + 1
        );
        log.push(finished());
        let from_old: Vec<usize> = log.subscribe(57).map(|(seq, _)| seq).collect().await;
        assert_eq!(
            from_old,
            [base + 1, base + 2],
            "a cursor of the old process"
        );
        let from_new: Vec<usize> = log.subscribe(base + 1).map(|(seq, _)| seq).collect().await;
        assert_eq!(from_new, [base + 2]);
    }

    #[test]
    fn finished_runs_are_swept_after_retention() {
        let registry = RunRegistry::default();
        let done = Arc::new(RunLog::new(
            RunId::from_string("done"),
            None,
            UserId::from_string("u"),
            "m".into(),
        ));
        done.push(finished());
        let live = Arc::new(RunLog::new(
            RunId::from_string("live"),
            None,
            UserId::from_string("u"),
            "m".into(),
        ));
        registry.insert(done);
        registry.insert(live);
        assert_eq!(registry.sweep(Duration::from_secs(60)), 0);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(registry.sweep(Duration::from_millis(1)), 1);
        assert!(registry.get(&RunId::from_string("live")).is_some());
        assert!(registry.get(&RunId::from_string("done")).is_none());
    }
}
