//! Editing a `ChatIndex`: adding chunks, replacing and removing documents (each in one
//! commit, words and vectors together), loading vectors, rebuilding, settling the writer.

use entities::ids::DocumentId;
use tantivy::Term;

use super::schema::document;
use super::{ChatIndex, IndexError, IndexedChunk};
use crate::retrieval::vectors::chunk_key;

impl ChatIndex {
    /// Indexes chunks, searchable as soon as this returns. A chunk whose id has a vector in
    /// memory is replaced (ids only on disk are not looked for: to replace a document,
    /// `remove_document` it first, or use `replace_documents`). All vectors must have the
    /// index's dimension.
    pub fn add(&mut self, chunks: Vec<IndexedChunk>) -> Result<(), IndexError> {
        self.apply(&[], chunks)
    }

    /// Replaces documents: each one's chunks on disk and in memory go, and the given chunks
    /// come in, all in one commit. Committing is the fixed cost of an edit, so documents that
    /// are ready together are best indexed together. A document whose vectors do not have
    /// the index's dimension is left as it was and returned with the reason, without holding
    /// the others back; an error means nothing was changed.
    pub fn replace_documents(
        &mut self,
        documents: Vec<(DocumentId, Vec<IndexedChunk>)>,
    ) -> Result<Vec<(DocumentId, String)>, IndexError> {
        // An empty index takes the dimension most of the batch has, so one bad document that
        // happens to come first cannot get every good one rejected.
        let mut dim = self.vectors.dimension().or_else(|| {
            let mut counts: Vec<(usize, usize)> = Vec::new();
            for chunk in documents.iter().flat_map(|(_, chunks)| chunks.first()) {
                match counts
                    .iter_mut()
                    .find(|(len, _)| *len == chunk.vector.len())
                {
                    Some((_, count)) => *count += 1,
                    None => counts.push((chunk.vector.len(), 1)),
                }
            }
            // The first of the most frequent, so ties keep the batch's order.
            let most = counts.iter().map(|(_, count)| *count).max()?;
            counts
                .into_iter()
                .find(|(_, count)| *count == most)
                .map(|(len, _)| len)
        });
        let mut ids = Vec::with_capacity(documents.len());
        let mut chunks = Vec::new();
        let mut rejected = Vec::new();
        for (document_id, document_chunks) in documents {
            let expected = dim.or_else(|| document_chunks.first().map(|c| c.vector.len()));
            match document_chunks
                .iter()
                .find(|c| Some(c.vector.len()) != expected)
            {
                Some(bad) => rejected.push((document_id, wrong_dimension(bad, expected))),
                None => {
                    if !document_chunks.is_empty() {
                        dim = expected;
                    }
                    ids.push(document_id);
                    chunks.extend(document_chunks);
                }
            }
        }
        self.apply(&ids, chunks)?;
        Ok(rejected)
    }

    /// Removes `removed` documents and adds `chunks`, in one commit.
    fn apply(
        &mut self,
        removed: &[DocumentId],
        chunks: Vec<IndexedChunk>,
    ) -> Result<(), IndexError> {
        if removed.is_empty() && chunks.is_empty() {
            return Ok(());
        }
        let dim = self
            .vectors
            .dimension()
            .or_else(|| chunks.first().map(|c| c.vector.len()));
        if let Some(bad) = chunks.iter().find(|c| Some(c.vector.len()) != dim) {
            return Err(IndexError::Invalid(wrong_dimension(bad, dim)));
        }
        let fields = &self.fields;
        let vectors = &self.vectors;
        self.writer.edit(|writer| {
            for document_id in removed {
                writer.delete_term(Term::from_field_text(
                    fields.document_id,
                    document_id.as_str(),
                ));
            }
            for chunk in &chunks {
                if vectors.contains(chunk_key(chunk.chunk_id.as_str())) {
                    writer.delete_term(Term::from_field_text(
                        fields.chunk_id,
                        chunk.chunk_id.as_str(),
                    ));
                }
                writer.add_document(document(fields, chunk))?;
            }
            Ok(())
        })?;
        self.reader.reload()?;
        for document_id in removed {
            self.vectors.remove_document(document_id);
        }
        self.vectors.push(chunks);
        Ok(())
    }

    /// Replaces the vectors in memory, for an index whose words on disk are intact. Chunks
    /// whose vector differs in dimension from the first are skipped.
    pub fn load_vectors(&mut self, chunks: Vec<IndexedChunk>) {
        self.vectors.clear();
        self.vectors.push(chunks);
    }

    /// Replaces everything, words and vectors, with these chunks.
    pub fn rebuild(&mut self, chunks: Vec<IndexedChunk>) -> Result<(), IndexError> {
        let fields = &self.fields;
        self.writer.edit(|writer| {
            writer.delete_all_documents()?;
            for chunk in &chunks {
                writer.add_document(document(fields, chunk))?;
            }
            Ok(())
        })?;
        self.reader.reload()?;
        self.load_vectors(chunks);
        self.recreated = false;
        Ok(())
    }

    /// Removes a document's chunks, words and vectors, effective when this returns.
    pub fn remove_document(&mut self, document_id: &DocumentId) -> Result<(), IndexError> {
        self.apply(std::slice::from_ref(document_id), Vec::new())
    }

    /// Lets the merges of the last edits finish and closes the index's writer now rather than
    /// once the index has been idle a few seconds. The next edit opens it again.
    pub fn settle(&mut self) -> Result<(), IndexError> {
        self.writer.close()
    }
}

/// Why a chunk cannot join an index of `expected`-dimensional vectors.
fn wrong_dimension(chunk: &IndexedChunk, expected: Option<usize>) -> String {
    format!(
        "chunk {} has a {}-dimensional vector; this index holds {}-dimensional ones",
        chunk.chunk_id,
        chunk.vector.len(),
        expected.unwrap_or_default()
    )
}
