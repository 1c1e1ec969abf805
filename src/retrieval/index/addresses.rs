//! Where each chunk lives in the word index, by chunk key. Built once per searcher generation
//! (every commit makes a new one) and kept until the next, so that a search can score by BM25
//! and read the text of any chunk the vectors found, without looking each one up by id.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tantivy::{DocAddress, Searcher};

use super::IndexError;

/// The live chunks of one searcher generation, by key.
pub(super) struct Addresses {
    generation: u64,
    by_key: HashMap<u64, DocAddress>,
}

impl Addresses {
    /// Reads every live chunk's key from its segment's `chunk_key` column.
    fn read(searcher: &Searcher) -> Result<Self, IndexError> {
        let mut by_key = HashMap::with_capacity(searcher.num_docs() as usize);
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            let keys = segment.fast_fields().u64("chunk_key")?;
            let alive = segment.alive_bitset();
            for doc in 0..segment.max_doc() {
                if alive.is_some_and(|alive| alive.is_deleted(doc)) {
                    continue;
                }
                if let Some(key) = keys.first(doc) {
                    by_key.insert(key, DocAddress::new(ord as u32, doc));
                }
            }
        }
        Ok(Self {
            generation: searcher.generation().generation_id(),
            by_key,
        })
    }

    /// Where the chunk with `key` is, if the word index has it.
    pub(super) fn get(&self, key: u64) -> Option<DocAddress> {
        self.by_key.get(&key).copied()
    }
}

/// The addresses of the latest generation searched.
#[derive(Default)]
pub(super) struct AddressCache(Mutex<Option<Arc<Addresses>>>);

impl AddressCache {
    /// The addresses for `searcher`'s generation: those kept when it is the one last read,
    /// otherwise read now and kept.
    pub(super) fn of(&self, searcher: &Searcher) -> Result<Arc<Addresses>, IndexError> {
        let generation = searcher.generation().generation_id();
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(addresses) = kept.as_ref().filter(|a| a.generation == generation) {
            return Ok(Arc::clone(addresses));
        }
        let addresses = Arc::new(Addresses::read(searcher)?);
        *kept = Some(Arc::clone(&addresses));
        Ok(addresses)
    }
}
