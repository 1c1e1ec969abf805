//! `MemoryStore`: a chat's memories in memory, with the `UnitMatrix` of the vectors that came
//! from the current embedder (stale ones are kept out of it), and ranking them by cosine
//! similarity to a query. Plain data: the session persists every change before making it here.

use crate::retrieval::embed;
use crate::retrieval::vectors::UnitMatrix;
use entities::ids::MemoryId;
use entities::memories;

use super::Memory;

/// A chat's memories and the matrix of their current vectors.
#[derive(Debug, Default)]
pub struct MemoryStore {
    memories: Vec<Memory>,
    /// Per memory, its vector from the current embedder (`None` while stale).
    pub(super) vectors: Vec<Option<Vec<f32>>>,
    /// Unit rows of the memories that have a current vector; `rows[i]` is its memory index.
    matrix: UnitMatrix,
    rows: Vec<usize>,
    embedder: String,
}

impl MemoryStore {
    /// Builds a store from rows, keeping vectors only from `embedder`. Returns the memories
    /// that need re-embedding.
    pub fn load(rows: Vec<memories::Model>, embedder: &str) -> (Self, Vec<(MemoryId, String)>) {
        let mut store = Self {
            embedder: embedder.to_string(),
            ..Self::default()
        };
        let mut stale = Vec::new();
        for row in &rows {
            let vector = row
                .embedding
                .as_deref()
                .filter(|_| row.embedder.as_deref() == Some(embedder))
                .and_then(embed::from_blob);
            if vector.is_none() {
                stale.push((row.id.clone(), row.content.clone()));
            }
            store.memories.push(Memory::from(row));
            store.vectors.push(vector);
        }
        store.rebuild();
        (store, stale)
    }

    pub fn embedder(&self) -> &str {
        &self.embedder
    }

    pub fn len(&self) -> usize {
        self.memories.len()
    }

    pub fn is_empty(&self) -> bool {
        self.memories.is_empty()
    }

    pub fn all(&self) -> &[Memory] {
        &self.memories
    }

    pub(super) fn rebuild(&mut self) {
        let current: Vec<usize> = (0..self.memories.len())
            .filter(|&i| self.vectors[i].is_some())
            .collect();
        let (matrix, placed) =
            UnitMatrix::from_vectors(current.iter().filter_map(|&i| self.vectors[i].as_deref()));
        self.rows = current
            .iter()
            .zip(placed)
            .filter_map(|(&i, row)| row.map(|_| i))
            .collect();
        self.matrix = matrix;
    }

    /// Every memory with a current vector, most similar to `query` first, with its cosine
    /// similarity clamped to [0, 1].
    /// Whether any memory has a vector from the current embedder (one a query could match).
    pub fn recallable(&self) -> bool {
        !self.rows.is_empty()
    }

    /// The memories at least `min_relevance` similar to `query`, the `limit` closest, most
    /// similar first.
    pub fn recall(&self, query: &[f32], limit: usize, min_relevance: f32) -> Vec<(Memory, f32)> {
        let mut ranked = self.ranked(query);
        ranked.retain(|(_, relevance)| *relevance >= min_relevance);
        ranked.truncate(limit);
        ranked
    }

    pub fn ranked(&self, query: &[f32]) -> Vec<(Memory, f32)> {
        // No memories with vectors, a query of another length, or a zero one: nothing ranks.
        let Ok(Some(scores)) = self.matrix.similarities(query) else {
            return Vec::new();
        };
        let mut ranked: Vec<(Memory, f32)> = self
            .rows
            .iter()
            .zip(scores)
            .map(|(&i, s)| (self.memories[i].clone(), s.clamp(0.0, 1.0)))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ranked
    }

    pub(super) fn position(&self, id: &MemoryId) -> Option<usize> {
        self.memories.iter().position(|m| &m.id == id)
    }

    pub(super) fn put(&mut self, memory: Memory, vector: Option<Vec<f32>>) {
        match self.position(&memory.id) {
            Some(i) => {
                self.memories[i] = memory;
                self.vectors[i] = vector;
            }
            None => {
                self.memories.push(memory);
                self.vectors.push(vector);
            }
        }
        self.rebuild();
    }

    pub(super) fn remove(&mut self, id: &MemoryId) -> bool {
        let Some(i) = self.position(id) else {
            return false;
        };
        self.memories.remove(i);
        self.vectors.remove(i);
        self.rebuild();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use entities::ids::ChatId;

    fn row(id: &str, vector: &[f32], embedder: &str) -> memories::Model {
        memories::Model {
            id: MemoryId::from_string(id),
            chat_id: ChatId::from_string("c"),
            content: format!("memory {id}"),
            category: "fact".into(),
            embedding: Some(embed::to_blob(vector)),
            embedder: Some(embedder.into()),
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    #[test]
    fn vectors_of_another_embedder_are_stale_and_never_ranked() {
        let rows = vec![row("a", &[1.0, 0.0], "e1"), row("b", &[0.0, 1.0], "e2")];
        let (store, stale) = MemoryStore::load(rows, "e1");
        assert_eq!(
            stale,
            vec![(MemoryId::from_string("b"), "memory b".to_string())]
        );
        let ranked = store.ranked(&[0.6, 0.8]);
        assert_eq!(ranked.len(), 1);
        assert_eq!(ranked[0].0.id, "a");
        assert!((ranked[0].1 - 0.6).abs() < 1e-6);
    }

    #[test]
    fn ranking_orders_by_cosine_and_clamps_at_zero() {
        let rows = vec![
            row("far", &[-1.0, 0.0], "e"),
            row("near", &[0.9, 0.1], "e"),
            row("mid", &[0.5, 0.5], "e"),
        ];
        let (mut store, _) = MemoryStore::load(rows, "e");
        let ids: Vec<_> = store
            .ranked(&[1.0, 0.0])
            .into_iter()
            .map(|(m, s)| (m.id, s))
            .collect();
        assert_eq!(ids[0].0, "near");
        assert_eq!(ids[1].0, "mid");
        assert_eq!(ids[2], (MemoryId::from_string("far"), 0.0));
        assert!(store.remove(&MemoryId::from_string("near")));
        assert_eq!(store.ranked(&[1.0, 0.0])[0].0.id, "mid");
    }
}
