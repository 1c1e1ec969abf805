//! The tantivy writer of one chat's index. It stays open while edits keep coming, so the
//! merges a commit starts run in the background while the caller prepares the next document,
//! and closes once the index has been idle for `IDLE_BEFORE_CLOSING`, giving back its memory
//! (about 15 MB) and the directory's lock. Only this module opens writers.

use super::index::IndexError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tantivy::directory::error::LockError;
use tantivy::indexer::{IndexWriterOptions, LogMergePolicy};
use tantivy::{Index, IndexReader, IndexWriter, TantivyError};

/// How long an index goes without edits before its writer closes. The edits of one upload
/// burst come well under a second apart; a quiet chat should not keep a writer.
#[cfg(not(test))]
const IDLE_BEFORE_CLOSING: Duration = Duration::from_secs(3);
#[cfg(test)]
const IDLE_BEFORE_CLOSING: Duration = Duration::from_millis(200);
/// How long an edit waits for the directory's lock held by another writer: long enough for
/// an idle writer of another `ChatIndex` on the same directory (a restart in progress) to
/// close.
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// How often the lock is tried again meanwhile.
const LOCK_RETRY: Duration = Duration::from_millis(50);
/// Memory tantivy may buffer before flushing a segment. A chat holds at most 50 files of
/// 500,000 characters (about 25 MB of text), and tantivy's floor is 15 MB.
const WRITER_MEMORY_BYTES: usize = 32_000_000;
/// Segments of up to this many chunks count as one size when merging; tantivy's default
/// (10,000) puts a whole chat in one layer and re-merges everything every few uploads.
const MIN_MERGE_LAYER_CHUNKS: u32 = 100;
/// Threads indexing words. A burst of uploads is indexed in a few large commits (the
/// workspace groups documents), and once the files are prepared indexing is all that is
/// left, so it may use two cores; each commit makes a segment per thread.
const MAX_INDEXING_THREADS: usize = 2;

pub(crate) struct IdleWriter {
    index: Index,
    /// Reloaded once the merges of a closing writer are done.
    reader: IndexReader,
    dir: PathBuf,
    slot: Arc<Mutex<Slot>>,
}

/// Shared with the thread that closes the writer once it has been idle.
struct Slot {
    writer: Option<IndexWriter>,
    last_edit: Instant,
    closer_running: bool,
}

impl IdleWriter {
    pub(crate) fn new(index: Index, reader: IndexReader, dir: &Path) -> Self {
        Self {
            index,
            reader,
            dir: dir.to_path_buf(),
            slot: Arc::new(Mutex::new(Slot {
                writer: None,
                last_edit: Instant::now(),
                closer_running: false,
            })),
        }
    }

    /// Runs an edit and commits it; an edit that fails is rolled back. The caller reloads
    /// its reader to see the result.
    pub(crate) fn edit(
        &self,
        edit: impl FnOnce(&IndexWriter) -> Result<(), IndexError>,
    ) -> Result<(), IndexError> {
        let mut slot = lock(&self.slot);
        let writer = match &mut slot.writer {
            Some(writer) => writer,
            empty => empty.insert(self.open()?),
        };
        let committed = edit(writer).and_then(|()| Ok(writer.commit()?));
        if let Err(err) = committed {
            // Dropping the writer discards what it had not committed.
            slot.writer = None;
            return Err(err);
        }
        slot.last_edit = Instant::now();
        if !slot.closer_running {
            slot.closer_running = self.spawn_closer();
        }
        Ok(())
    }

    /// Closes the writer now, once its merges are done, and shows their result to searches.
    pub(crate) fn close(&self) -> Result<(), IndexError> {
        close(&mut lock(&self.slot), &self.reader)
    }

    fn open(&self) -> Result<IndexWriter, IndexError> {
        let options = IndexWriterOptions::builder()
            .memory_budget_per_thread(WRITER_MEMORY_BYTES)
            .num_worker_threads(indexing_threads())
            .num_merge_threads(1)
            .build();
        let deadline = Instant::now() + LOCK_WAIT;
        let writer: IndexWriter = loop {
            match self.index.writer_with_options(options.clone()) {
                Err(TantivyError::LockFailure(LockError::LockBusy, _))
                    if Instant::now() < deadline =>
                {
                    std::thread::sleep(LOCK_RETRY);
                }
                opened => {
                    break opened.map_err(|err| {
                        IndexError::during(
                            format!("could not lock the index in {}", self.dir.display()),
                            err,
                        )
                    })?;
                }
            }
        };
        let mut merge_policy = LogMergePolicy::default();
        merge_policy.set_min_layer_size(MIN_MERGE_LAYER_CHUNKS);
        writer.set_merge_policy(Box::new(merge_policy));
        Ok(writer)
    }

    /// Starts the thread that closes the writer after `IDLE_BEFORE_CLOSING` without edits;
    /// false if it could not start (the writer then stays open until `close` or drop).
    fn spawn_closer(&self) -> bool {
        let slot = Arc::clone(&self.slot);
        let reader = self.reader.clone();
        let dir = self.dir.clone();
        let closer = move || {
            loop {
                let idle = lock(&slot).last_edit.elapsed();
                if idle < IDLE_BEFORE_CLOSING {
                    std::thread::sleep(IDLE_BEFORE_CLOSING - idle);
                    continue;
                }
                let mut slot = lock(&slot);
                // An edit may have come while this thread waited for the lock.
                if slot.writer.is_some() && slot.last_edit.elapsed() < IDLE_BEFORE_CLOSING {
                    continue;
                }
                slot.closer_running = false;
                if let Err(err) = close(&mut slot, &reader) {
                    tracing::warn!(dir = %dir.display(), error = %format!("{err:#}"),
                        "closing an idle document index writer");
                }
                return;
            }
        };
        let spawned = std::thread::Builder::new()
            .name("chat-index-idle".into())
            .spawn(closer);
        if let Err(err) = &spawned {
            tracing::warn!(error = %err, "could not start the index writer's closing thread");
        }
        spawned.is_ok()
    }
}

impl Drop for IdleWriter {
    /// Lets the last merges finish, so the directory is settled and unlocked afterwards.
    fn drop(&mut self) {
        if let Err(err) = self.close() {
            tracing::warn!(dir = %self.dir.display(), error = %format!("{err:#}"),
                "closing the document index writer");
        }
    }
}

/// Waits for the writer's merges, closes it and reloads the reader. The slot stays locked
/// meanwhile, so no edit can open a second writer on the directory.
fn close(slot: &mut Slot, reader: &IndexReader) -> Result<(), IndexError> {
    if let Some(writer) = slot.writer.take() {
        writer.wait_merging_threads()?;
        reader.reload()?;
    }
    Ok(())
}

fn indexing_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, MAX_INDEXING_THREADS)
}

/// The slot holds no invariant a panic could break, so a poisoned lock is still usable.
fn lock(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    slot.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::doc;
    use tantivy::schema::{STORED, STRING, Schema};

    fn index(dir: &Path) -> (Index, IndexReader, tantivy::schema::Field) {
        let mut builder = Schema::builder();
        let id = builder.add_text_field("id", STRING | STORED);
        let index = Index::create_in_dir(dir, builder.build()).unwrap();
        let reader = index.reader().unwrap();
        (index, reader, id)
    }

    #[test]
    fn the_writer_stays_open_between_edits_and_closes_when_idle() {
        let dir = tempfile::tempdir().unwrap();
        let (index, reader, id) = index(dir.path());
        let writer = IdleWriter::new(index.clone(), reader.clone(), dir.path());
        writer
            .edit(|w| Ok(w.add_document(doc!(id => "a")).map(drop)?))
            .unwrap();
        // Open: the directory is locked.
        assert!(
            index
                .writer::<tantivy::TantivyDocument>(15_000_000)
                .is_err()
        );
        writer
            .edit(|w| Ok(w.add_document(doc!(id => "b")).map(drop)?))
            .unwrap();
        std::thread::sleep(IDLE_BEFORE_CLOSING * 3);
        // Closed after going idle: the lock is free again.
        let other = index.writer::<tantivy::TantivyDocument>(15_000_000);
        assert!(other.is_ok());
        drop(other);
        reader.reload().unwrap();
        assert_eq!(reader.searcher().num_docs(), 2);
        // And opens again on the next edit.
        writer
            .edit(|w| Ok(w.add_document(doc!(id => "c")).map(drop)?))
            .unwrap();
        writer.close().unwrap();
        reader.reload().unwrap();
        assert_eq!(reader.searcher().num_docs(), 3);
    }

    #[test]
    fn a_second_writer_on_the_directory_waits_for_the_first_to_close() {
        let dir = tempfile::tempdir().unwrap();
        let (index, reader, id) = index(dir.path());
        let first = IdleWriter::new(index.clone(), reader.clone(), dir.path());
        let second = IdleWriter::new(index, reader.clone(), dir.path());
        first
            .edit(|w| Ok(w.add_document(doc!(id => "a")).map(drop)?))
            .unwrap();
        // The first stays open until idle, then the second gets the lock.
        second
            .edit(|w| Ok(w.add_document(doc!(id => "b")).map(drop)?))
            .unwrap();
        second.close().unwrap();
        reader.reload().unwrap();
        assert_eq!(reader.searcher().num_docs(), 2);
    }

    #[test]
    fn a_failed_edit_is_rolled_back() {
        let dir = tempfile::tempdir().unwrap();
        let (index, reader, id) = index(dir.path());
        let writer = IdleWriter::new(index, reader.clone(), dir.path());
        let failed = writer.edit(|w| {
            w.add_document(doc!(id => "lost"))?;
            Err(IndexError::Invalid("the edit gives up".into()))
        });
        assert!(failed.is_err());
        writer
            .edit(|w| Ok(w.add_document(doc!(id => "kept")).map(drop)?))
            .unwrap();
        reader.reload().unwrap();
        assert_eq!(reader.searcher().num_docs(), 1);
    }
}
