//! `ChatIndex`: one chat's searchable chunks. Words go to a tantivy index on disk (BM25 with
//! English stemming); vectors stay in memory, one contiguous matrix row per chunk. A search
//! fuses both rankings (reciprocal rank fusion) and scores each hit by its cosine similarity.
//! The database is the source of truth: this index can be wiped and rebuilt from it at any
//! time, and never reads it itself.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use ndarray::{Array2, ArrayView1, ArrayView2, Axis};
use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::directory::MmapDirectory;
use tantivy::indexer::IndexWriterOptions;
use tantivy::query::{QueryParser, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing};
use tantivy::schema::{TextOptions, Value};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::tokenizer::{Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer};
use tantivy::{
    Index, IndexReader, IndexSettings, IndexWriter, ReloadPolicy, TantivyDocument, Term,
};

/// The name the stemming analyzer is registered under; the schema's text field names it.
const STEMMED_TOKENIZER: &str = "en_stem";
/// Longer "words" (hashes, base64) are dropped from the word index: nobody searches for them
/// by typing them, and they bloat the term dictionary.
const MAX_WORD_BYTES: usize = 40;
/// Memory tantivy may buffer before flushing a segment. A chat holds at most 50 files of
/// 500,000 characters (about 25 MB of text), and tantivy's floor is 15 MB.
const WRITER_MEMORY_BYTES: usize = 32_000_000;
/// How deep each ranking goes before fusion: enough that a chunk ranked well by one side
/// and modestly by the other still surfaces.
const CANDIDATES_PER_RANKING: usize = 50;
/// The reciprocal rank fusion constant (Cormack et al., 2009): damps the weight of the very
/// first ranks so one ranking cannot dominate.
const RRF_K: f32 = 60.0;

/// A chunk to index, with its embedding.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedChunk {
    pub chunk_id: String,
    pub document_id: String,
    pub filename: String,
    pub text: String,
    pub vector: Vec<f32>,
}

/// A chunk found by a search.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    pub chunk_id: String,
    pub document_id: String,
    pub filename: String,
    pub text: String,
    /// The cosine similarity of the chunk's vector with the query's, clamped to [0, 1]
    /// (0 when the chunk has no vector in memory).
    pub relevance_score: f32,
}

#[derive(Clone, Copy)]
struct Fields {
    chunk_id: Field,
    document_id: Field,
    filename: Field,
    text: Field,
}

/// What a vector row belongs to.
struct Row {
    chunk_id: String,
    document_id: String,
}

/// One chat's hybrid index. Holds no writer between edits (tantivy's writer keeps ~12 MB per
/// thread), so many chats can be open at once; edits take the directory's writer lock.
pub struct ChatIndex {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    parser: QueryParser,
    fields: Fields,
    /// One unit-length row per chunk, in `rows` order; `0 × 0` until the first vector.
    vectors: Array2<f32>,
    rows: Vec<Row>,
    row_of: HashMap<String, usize>,
    recreated: bool,
}

impl ChatIndex {
    /// Opens the index in `dir`, which it owns: a missing directory is created, and one that
    /// is corrupt or from another schema is wiped and created empty (`was_recreated`); the
    /// caller then rebuilds it from the database. Vectors start empty (`load_vectors`).
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        let (schema, fields) = schema();
        let (index, reader, recreated) = match open_existing(dir, &schema) {
            Ok(Some((index, reader))) => (index, reader, false),
            Ok(None) => {
                let (index, reader) = create(dir, &schema)?;
                (index, reader, true)
            }
            Err(err) => {
                tracing::warn!(dir = %dir.display(), error = %format!("{err:#}"),
                    "document index unreadable; recreating it empty");
                if dir.exists() {
                    fs::remove_dir_all(dir)
                        .with_context(|| format!("could not wipe {}", dir.display()))?;
                }
                let (index, reader) = create(dir, &schema)?;
                (index, reader, true)
            }
        };
        let parser = QueryParser::for_index(&index, vec![fields.text]);
        Ok(Self {
            dir: dir.to_path_buf(),
            index,
            reader,
            parser,
            fields,
            vectors: Array2::zeros((0, 0)),
            rows: Vec::new(),
            row_of: HashMap::new(),
            recreated,
        })
    }

    /// Whether `open` found no usable index and created an empty one.
    pub fn was_recreated(&self) -> bool {
        self.recreated
    }

    /// Whether the word index disagrees with the `stored_chunks` the database holds for this
    /// chat, so the caller should `rebuild` rather than `load_vectors`.
    pub fn needs_rebuild(&self, stored_chunks: usize) -> bool {
        self.indexed_len() != stored_chunks
    }

    /// Chunks with a vector in memory.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Chunks in the word index on disk.
    pub fn indexed_len(&self) -> usize {
        self.reader.searcher().num_docs() as usize
    }

    /// The directory the index lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Indexes chunks, searchable as soon as this returns. A chunk id already present is
    /// replaced. All vectors must have the index's dimension.
    pub fn add(&mut self, chunks: Vec<IndexedChunk>) -> anyhow::Result<()> {
        if chunks.is_empty() {
            return Ok(());
        }
        let dim = self.dimension().unwrap_or(chunks[0].vector.len());
        if let Some(bad) = chunks.iter().find(|c| c.vector.len() != dim) {
            bail!(
                "chunk {} has a {}-dimensional vector; this index holds {dim}-dimensional ones",
                bad.chunk_id,
                bad.vector.len()
            );
        }
        self.write(|writer, fields| {
            for chunk in &chunks {
                writer.delete_term(Term::from_field_text(fields.chunk_id, &chunk.chunk_id));
                writer.add_document(document(fields, chunk))?;
            }
            Ok(())
        })?;
        self.push_vectors(chunks);
        Ok(())
    }

    /// Replaces the vectors in memory, for an index whose words on disk are intact. Chunks
    /// whose vector differs in dimension from the first are skipped.
    pub fn load_vectors(&mut self, chunks: Vec<IndexedChunk>) {
        self.clear_vectors();
        self.push_vectors(chunks);
    }

    /// Replaces everything, words and vectors, with these chunks.
    pub fn rebuild(&mut self, chunks: Vec<IndexedChunk>) -> anyhow::Result<()> {
        self.write(|writer, fields| {
            writer.delete_all_documents()?;
            for chunk in &chunks {
                writer.add_document(document(fields, chunk))?;
            }
            Ok(())
        })?;
        self.clear_vectors();
        self.push_vectors(chunks);
        self.recreated = false;
        Ok(())
    }

    /// Removes a document's chunks, words and vectors, effective when this returns.
    pub fn remove_document(&mut self, document_id: &str) -> anyhow::Result<()> {
        self.write(|writer, fields| {
            writer.delete_term(Term::from_field_text(fields.document_id, document_id));
            Ok(())
        })?;
        let keep: Vec<usize> = (0..self.rows.len())
            .filter(|&row| self.rows[row].document_id != document_id)
            .collect();
        if keep.len() < self.rows.len() {
            self.vectors = self.vectors.select(Axis(0), &keep);
            self.rows.retain(|row| row.document_id != document_id);
            self.reindex_rows();
        }
        Ok(())
    }

    /// The `k` best chunks for a query: BM25 over stemmed words and cosine similarity over
    /// vectors, each `CANDIDATES_PER_RANKING` deep, fused by reciprocal rank. Any query text
    /// is accepted (syntax errors are ignored); a zero query vector searches by words only.
    pub fn search(
        &self,
        query: &str,
        query_vector: &[f32],
        k: usize,
    ) -> anyhow::Result<Vec<SearchHit>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let depth = CANDIDATES_PER_RANKING.max(k);
        let searcher = self.reader.searcher();

        let (parsed, _ignored_errors) = self.parser.parse_query_lenient(query);
        let lexical = searcher.search(&parsed, &TopDocs::with_limit(depth).order_by_score())?;
        let similarities = self.similarities(query_vector)?;
        let semantic = similarities
            .as_deref()
            .map(|scores| top_rows(scores, depth))
            .unwrap_or_default();

        // Fused score by chunk id, with the stored document when the word search loaded it.
        let mut fused: HashMap<String, (f32, Option<TantivyDocument>)> = HashMap::new();
        for (rank, (_, address)) in lexical.into_iter().enumerate() {
            let doc: TantivyDocument = searcher.doc(address)?;
            let Some(chunk_id) = text_of(&doc, self.fields.chunk_id) else {
                continue;
            };
            fused.insert(chunk_id.to_string(), (rrf(rank), Some(doc)));
        }
        for (rank, row) in semantic.into_iter().enumerate() {
            let entry = fused
                .entry(self.rows[row].chunk_id.clone())
                .or_insert((0.0, None));
            entry.0 += rrf(rank);
        }

        let cosine = |chunk_id: &str| -> f32 {
            match (&similarities, self.row_of.get(chunk_id)) {
                (Some(scores), Some(&row)) => scores[row].clamp(0.0, 1.0),
                _ => 0.0,
            }
        };
        let mut ranked: Vec<(String, f32, f32, Option<TantivyDocument>)> = fused
            .into_iter()
            .map(|(chunk_id, (score, doc))| {
                let relevance = cosine(&chunk_id);
                (chunk_id, score, relevance, doc)
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(b.2.total_cmp(&a.2))
                .then_with(|| a.0.cmp(&b.0))
        });

        let mut hits = Vec::with_capacity(k);
        for (chunk_id, _, relevance_score, doc) in ranked {
            if hits.len() == k {
                break;
            }
            let doc = match doc {
                Some(doc) => doc,
                // A vector without words on disk: the two halves disagree until a rebuild.
                None => match self.find(&searcher, &chunk_id)? {
                    Some(doc) => doc,
                    None => continue,
                },
            };
            let field = |field| text_of(&doc, field).unwrap_or_default().to_string();
            hits.push(SearchHit {
                document_id: field(self.fields.document_id),
                filename: field(self.fields.filename),
                text: field(self.fields.text),
                chunk_id,
                relevance_score,
            });
        }
        Ok(hits)
    }

    /// The cosine similarity of every row with the query; `None` when there are no rows or
    /// the query vector is zero (it would rank every chunk alike).
    fn similarities(&self, query_vector: &[f32]) -> anyhow::Result<Option<Vec<f32>>> {
        let Some(dim) = self.dimension() else {
            return Ok(None);
        };
        if query_vector.len() != dim {
            bail!(
                "the query vector has {} dimensions; this index holds {dim}-dimensional vectors",
                query_vector.len()
            );
        }
        let mut query = query_vector.to_vec();
        if !normalize(&mut query) {
            return Ok(None);
        }
        Ok(Some(
            self.vectors.dot(&ArrayView1::from(&query[..])).to_vec(),
        ))
    }

    /// Looks a chunk up by id in the word index.
    fn find(
        &self,
        searcher: &tantivy::Searcher,
        chunk_id: &str,
    ) -> anyhow::Result<Option<TantivyDocument>> {
        let term = Term::from_field_text(self.fields.chunk_id, chunk_id);
        let query = TermQuery::new(term, IndexRecordOption::Basic);
        let found = searcher.search(&query, &DocSetCollector)?;
        match found.into_iter().next() {
            Some(address) => Ok(Some(searcher.doc::<TantivyDocument>(address)?)),
            None => Ok(None),
        }
    }

    /// Runs one edit with a short-lived writer, commits it and makes it visible to searches.
    /// An edit that fails is rolled back when the writer drops.
    fn write(
        &self,
        edit: impl FnOnce(&IndexWriter, Fields) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let options = IndexWriterOptions::builder()
            .memory_budget_per_thread(WRITER_MEMORY_BYTES)
            .num_worker_threads(1)
            .num_merge_threads(1)
            .build();
        let mut writer: IndexWriter = self
            .index
            .writer_with_options(options)
            .with_context(|| format!("could not lock the index in {}", self.dir.display()))?;
        edit(&writer, self.fields)?;
        writer.commit()?;
        // Merges started by this commit finish before the writer (and its lock) goes away.
        writer.wait_merging_threads()?;
        self.reader.reload()?;
        Ok(())
    }

    fn dimension(&self) -> Option<usize> {
        (!self.rows.is_empty()).then(|| self.vectors.ncols())
    }

    fn clear_vectors(&mut self) {
        self.vectors = Array2::zeros((0, 0));
        self.rows.clear();
        self.row_of.clear();
    }

    /// Appends (or, for a known chunk id, replaces) vector rows, normalised to unit length.
    fn push_vectors(&mut self, chunks: Vec<IndexedChunk>) {
        let Some(dim) = self
            .dimension()
            .or_else(|| chunks.first().map(|c| c.vector.len()))
        else {
            return;
        };
        let mut flat = Vec::with_capacity(chunks.len() * dim);
        for chunk in chunks {
            let mut vector = chunk.vector;
            if vector.len() != dim {
                tracing::warn!(chunk_id = %chunk.chunk_id, "vector of the wrong dimension skipped");
                continue;
            }
            normalize(&mut vector);
            if let Some(&row) = self.row_of.get(&chunk.chunk_id) {
                self.vectors
                    .row_mut(row)
                    .assign(&ArrayView1::from(&vector[..]));
                continue;
            }
            flat.extend_from_slice(&vector);
            self.row_of.insert(chunk.chunk_id.clone(), self.rows.len());
            self.rows.push(Row {
                chunk_id: chunk.chunk_id,
                document_id: chunk.document_id,
            });
        }
        let added = flat.len() / dim;
        // unwrap: `flat` holds `added` whole rows of `dim` values.
        let new_rows = ArrayView2::from_shape((added, dim), &flat).unwrap();
        if self.vectors.nrows() == 0 {
            self.vectors = new_rows.to_owned();
        } else {
            // unwrap: same number of columns, and `vectors` is an owned standard-layout array.
            self.vectors.append(Axis(0), new_rows).unwrap();
        }
    }

    fn reindex_rows(&mut self) {
        self.row_of = (self.rows.iter().enumerate())
            .map(|(i, row)| (row.chunk_id.clone(), i))
            .collect();
    }
}

/// The fields, with the stemming analyzer on the text.
fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text_options = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(STEMMED_TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let fields = Fields {
        chunk_id: builder.add_text_field("chunk_id", STRING | STORED),
        document_id: builder.add_text_field("document_id", STRING | STORED),
        filename: builder.add_text_field("filename", STORED),
        text: builder.add_text_field("text", text_options),
    };
    (builder.build(), fields)
}

/// Tokenizers are not stored with an index: every opened or created index needs this.
fn register_analyzer(index: &Index) {
    let analyzer = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build();
    index.tokenizers().register(STEMMED_TOKENIZER, analyzer);
}

fn reader_for(index: &Index) -> anyhow::Result<IndexReader> {
    Ok(index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?)
}

/// The index in `dir`: `None` when there is none yet, an error when it cannot be used.
fn open_existing(dir: &Path, schema: &Schema) -> anyhow::Result<Option<(Index, IndexReader)>> {
    if !dir.join("meta.json").exists() {
        return Ok(None);
    }
    let index = Index::open(MmapDirectory::open(dir)?)?;
    if index.schema() != *schema {
        bail!("the index was made with another schema");
    }
    register_analyzer(&index);
    // Opening the reader opens every segment, so missing or truncated files show here.
    let reader = reader_for(&index)?;
    Ok(Some((index, reader)))
}

fn create(dir: &Path, schema: &Schema) -> anyhow::Result<(Index, IndexReader)> {
    fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let index = Index::create(
        MmapDirectory::open(dir)?,
        schema.clone(),
        IndexSettings::default(),
    )
    .with_context(|| format!("could not create an index in {}", dir.display()))?;
    register_analyzer(&index);
    let reader = reader_for(&index)?;
    Ok((index, reader))
}

fn document(fields: Fields, chunk: &IndexedChunk) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_text(fields.chunk_id, &chunk.chunk_id);
    doc.add_text(fields.document_id, &chunk.document_id);
    doc.add_text(fields.filename, &chunk.filename);
    doc.add_text(fields.text, &chunk.text);
    doc
}

fn text_of(doc: &TantivyDocument, field: Field) -> Option<&str> {
    doc.get_first(field).and_then(|value| value.as_str())
}

/// Reciprocal rank fusion's share for a 0-based rank.
fn rrf(rank: usize) -> f32 {
    1.0 / (RRF_K + rank as f32 + 1.0)
}

/// The `depth` best rows by score, best first (ties by row order).
fn top_rows(scores: &[f32], depth: usize) -> Vec<usize> {
    let by_score = |a: &usize, b: &usize| scores[*b].total_cmp(&scores[*a]).then(a.cmp(b));
    let mut rows: Vec<usize> = (0..scores.len()).collect();
    if rows.len() > depth {
        rows.select_nth_unstable_by(depth - 1, by_score);
        rows.truncate(depth);
    }
    rows.sort_unstable_by(by_score);
    rows
}

/// Scales a vector to unit length; false for a zero (or non-finite) vector.
fn normalize(v: &mut [f32]) -> bool {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter_mut().for_each(|x| *x /= norm);
        true
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::cosine;
    use crate::embed::hash::HashEmbedder;

    fn chunk(id: &str, document: &str, text: &str) -> IndexedChunk {
        IndexedChunk {
            chunk_id: id.into(),
            document_id: document.into(),
            filename: format!("{document}.txt"),
            text: text.into(),
            vector: HashEmbedder::default().embed_text(text),
        }
    }

    fn search(index: &ChatIndex, query: &str, k: usize) -> Vec<SearchHit> {
        let vector = HashEmbedder::default().embed_text(query);
        index.search(query, &vector, k).unwrap()
    }

    fn ids(hits: &[SearchHit]) -> Vec<&str> {
        hits.iter().map(|h| h.chunk_id.as_str()).collect()
    }

    fn sample() -> Vec<IndexedChunk> {
        vec![
            chunk(
                "c1",
                "d1",
                "The cluster runs nightly backups of every shard.",
            ),
            chunk("c2", "d1", "Quarterly revenue grew by twelve percent."),
            chunk(
                "c3",
                "d2",
                "Database sharding uses hash based partitioning.",
            ),
            chunk("c4", "d2", "The office kitchen closes at six."),
        ]
    }

    #[test]
    fn stemming_matches_other_forms_of_a_word() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = ChatIndex::open(dir.path()).unwrap();
        index.add(sample()).unwrap();
        // Words only (a zero vector): "running" is found through "runs".
        let hits = index.search("running", &[0.0; 384], 5).unwrap();
        assert_eq!(ids(&hits), ["c1"]);
        let hits = index.search("backup", &[0.0; 384], 5).unwrap();
        assert_eq!(ids(&hits), ["c1"]);
    }

    #[test]
    fn both_rankings_agreeing_put_a_chunk_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = ChatIndex::open(dir.path()).unwrap();
        index.add(sample()).unwrap();
        let hits = search(&index, "how is the database sharding partitioned?", 4);
        assert_eq!(hits[0].chunk_id, "c3");
        assert_eq!(hits[0].document_id, "d2");
        assert_eq!(hits[0].filename, "d2.txt");
        assert_eq!(
            hits[0].text,
            "Database sharding uses hash based partitioning."
        );
        let hits = search(&index, "revenue growth", 2);
        assert_eq!(hits[0].chunk_id, "c2");
        assert_eq!(hits.len(), 2);
        // Punctuation and query syntax never fail a search.
        assert!(!search(&index, "AND (( \"revenue: -", 3).is_empty());
    }

    #[test]
    fn relevance_is_the_clamped_cosine_with_the_query() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = ChatIndex::open(dir.path()).unwrap();
        let chunks = sample();
        index.add(chunks.clone()).unwrap();
        let query = "nightly shard backups";
        let vector = HashEmbedder::default().embed_text(query);
        for hit in index.search(query, &vector, 4).unwrap() {
            assert!(
                (0.0..=1.0).contains(&hit.relevance_score),
                "{}",
                hit.relevance_score
            );
            let stored = chunks.iter().find(|c| c.chunk_id == hit.chunk_id).unwrap();
            let expected = cosine(&stored.vector, &vector).clamp(0.0, 1.0);
            assert!(
                (hit.relevance_score - expected).abs() < 1e-5,
                "{hit:?} vs {expected}"
            );
        }
    }

    #[test]
    fn a_removed_document_is_gone_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = ChatIndex::open(dir.path()).unwrap();
        index.add(sample()).unwrap();
        index.remove_document("d2").unwrap();
        assert_eq!(index.len(), 2);
        assert_eq!(index.indexed_len(), 2);
        let hits = search(&index, "database sharding kitchen", 10);
        assert!(hits.iter().all(|h| h.document_id == "d1"), "{hits:?}");
        // The remaining rows still line up with their chunks.
        let hits = search(&index, "quarterly revenue", 1);
        assert_eq!(ids(&hits), ["c2"]);
        assert!(hits[0].relevance_score > 0.5);
    }

    #[test]
    fn adding_a_known_chunk_id_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = ChatIndex::open(dir.path()).unwrap();
        index.add(sample()).unwrap();
        index
            .add(vec![chunk("c4", "d2", "The canteen opens at noon.")])
            .unwrap();
        assert_eq!((index.len(), index.indexed_len()), (4, 4));
        assert_eq!(ids(&search(&index, "canteen", 1)), ["c4"]);
        assert!(
            index
                .add(vec![IndexedChunk {
                    vector: vec![1.0; 3],
                    ..chunk("x", "d", "x")
                }])
                .is_err()
        );
    }

    #[test]
    fn reopening_keeps_the_words_and_vectors_are_loaded_again() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut index = ChatIndex::open(dir.path()).unwrap();
            assert!(index.was_recreated());
            index.add(sample()).unwrap();
        }
        let mut index = ChatIndex::open(dir.path()).unwrap();
        assert!(!index.was_recreated());
        assert_eq!(index.indexed_len(), 4);
        assert!(!index.needs_rebuild(4));
        assert!(index.needs_rebuild(5));
        assert!(index.is_empty());
        // Words alone still search; then the vectors come back from the database.
        assert_eq!(
            ids(&index.search("kitchen", &[0.0; 384], 1).unwrap()),
            ["c4"]
        );
        index.load_vectors(sample());
        assert_eq!(index.len(), 4);
        assert_eq!(search(&index, "kitchen closes", 1)[0].chunk_id, "c4");
    }

    #[test]
    fn a_corrupt_directory_is_recreated_empty() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut index = ChatIndex::open(dir.path()).unwrap();
            index.add(sample()).unwrap();
        }
        fs::write(dir.path().join("meta.json"), b"{ not json at all").unwrap();
        let index = ChatIndex::open(dir.path()).unwrap();
        assert!(index.was_recreated());
        assert_eq!(index.indexed_len(), 0);
        assert!(index.needs_rebuild(4));
        assert!(search(&index, "kitchen", 3).is_empty());
    }

    #[test]
    fn a_missing_directory_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chats").join("42");
        let index = ChatIndex::open(&path).unwrap();
        assert!(index.was_recreated());
        assert!(path.join("meta.json").exists());
        assert!(!index.needs_rebuild(0));
    }

    #[test]
    fn rebuild_replaces_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = ChatIndex::open(dir.path()).unwrap();
        index.add(sample()).unwrap();
        index
            .rebuild(vec![chunk("n1", "d9", "Fresh content about telescopes.")])
            .unwrap();
        assert_eq!((index.len(), index.indexed_len()), (1, 1));
        assert!(
            search(&index, "kitchen", 3)
                .iter()
                .all(|h| h.chunk_id == "n1")
        );
        assert_eq!(ids(&search(&index, "telescope", 3)), ["n1"]);
    }

    #[test]
    fn vector_only_matches_are_found_with_their_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = ChatIndex::open(dir.path()).unwrap();
        index.add(sample()).unwrap();
        // Misspelt words match no stem, but share trigrams with the right ones.
        let hits = search(&index, "databse shardng", 1);
        assert_eq!(ids(&hits), ["c3"]);
        assert_eq!(
            hits[0].text,
            "Database sharding uses hash based partitioning."
        );
        assert!(search(&index, "anything", 0).is_empty());
    }
}
