//! `ChatIndex`: one chat's searchable chunks. Words go to a tantivy index on disk (BM25 over
//! English stems, `analyzer`), written through `writer`; vectors stay in memory (`vectors`).
//! A search fuses both rankings (reciprocal rank fusion) and scores each hit by its cosine
//! similarity. The database is the source of truth: this index can be wiped and rebuilt from
//! it at any time, and never reads it itself.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fs;
use std::path::{Path, PathBuf};

use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::columnar::Column;
use tantivy::directory::MmapDirectory;
use tantivy::query::{QueryParser, TermQuery};
use tantivy::schema::{FAST, Field, IndexRecordOption, STORED, STRING, Schema};
use tantivy::schema::{TextFieldIndexing, TextOptions, Value};
use tantivy::{
    DocAddress, Index, IndexReader, IndexSettings, ReloadPolicy, Searcher, TantivyDocument, Term,
};

use super::analyzer;
use super::vectors::{Vectors, chunk_key, top_rows};
use super::writer::IdleWriter;

/// Why an index operation failed.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Tantivy(#[from] tantivy::TantivyError),
    #[error(transparent)]
    Directory(#[from] tantivy::directory::error::OpenDirectoryError),
    #[error(transparent)]
    Dimension(#[from] super::vectors::DimensionMismatch),
    /// A step that failed, with what was being done.
    #[error("{what}: {source}")]
    During {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Chunks or an index that cannot be used as they are.
    #[error("{0}")]
    Invalid(String),
}

impl IndexError {
    /// `source`, which failed while doing `what`.
    pub fn during(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::During {
            what: what.into(),
            source: Box::new(source),
        }
    }
}
/// The name the stemming analyzer is registered under; the schema's text field names it.
const STEMMED_TOKENIZER: &str = "en_stem";
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
    /// `chunk_key(chunk_id)`, a fast field: ranks words without opening stored documents.
    chunk_key: Field,
    document_id: Field,
    filename: Field,
    text: Field,
}

/// One chat's hybrid index.
pub struct ChatIndex {
    dir: PathBuf,
    reader: IndexReader,
    parser: QueryParser,
    fields: Fields,
    vectors: Vectors,
    writer: IdleWriter,
    recreated: bool,
}

impl ChatIndex {
    /// Opens the index in `dir`, which it owns: a missing directory is created, and one that
    /// is corrupt or from another schema is wiped and created empty (`was_recreated`); the
    /// caller then rebuilds it from the database. Vectors start empty (`load_vectors`).
    pub fn open(dir: &Path) -> Result<Self, IndexError> {
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
                    fs::remove_dir_all(dir).map_err(|err| {
                        IndexError::during(format!("could not wipe {}", dir.display()), err)
                    })?;
                }
                let (index, reader) = create(dir, &schema)?;
                (index, reader, true)
            }
        };
        Ok(Self {
            dir: dir.to_path_buf(),
            parser: QueryParser::for_index(&index, vec![fields.text]),
            writer: IdleWriter::new(index, reader.clone(), dir),
            reader,
            fields,
            vectors: Vectors::default(),
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
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.len() == 0
    }

    /// Chunks in the word index on disk.
    pub fn indexed_len(&self) -> usize {
        self.reader.searcher().num_docs() as usize
    }

    /// The directory the index lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

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
        documents: Vec<(String, Vec<IndexedChunk>)>,
    ) -> Result<Vec<(String, String)>, IndexError> {
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
                Some(bad) => {
                    let reason = format!(
                        "chunk {} has a {}-dimensional vector; this index holds {}-dimensional ones",
                        bad.chunk_id,
                        bad.vector.len(),
                        expected.unwrap_or_default()
                    );
                    rejected.push((document_id, reason));
                }
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
    fn apply(&mut self, removed: &[String], chunks: Vec<IndexedChunk>) -> Result<(), IndexError> {
        if removed.is_empty() && chunks.is_empty() {
            return Ok(());
        }
        let dim = self
            .vectors
            .dimension()
            .or_else(|| chunks.first().map(|c| c.vector.len()));
        if let Some(bad) = chunks.iter().find(|c| Some(c.vector.len()) != dim) {
            return Err(IndexError::Invalid(format!(
                "chunk {} has a {}-dimensional vector; this index holds {}-dimensional ones",
                bad.chunk_id,
                bad.vector.len(),
                dim.unwrap_or_default()
            )));
        }
        let fields = self.fields;
        let vectors = &self.vectors;
        self.writer.edit(|writer| {
            for document_id in removed {
                writer.delete_term(Term::from_field_text(fields.document_id, document_id));
            }
            for chunk in &chunks {
                if vectors.contains(chunk_key(&chunk.chunk_id)) {
                    writer.delete_term(Term::from_field_text(fields.chunk_id, &chunk.chunk_id));
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
        let fields = self.fields;
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
    pub fn remove_document(&mut self, document_id: &str) -> Result<(), IndexError> {
        self.apply(&[document_id.to_string()], Vec::new())
    }

    /// Lets the merges of the last edits finish and closes the index's writer now rather than
    /// once the index has been idle a few seconds. The next edit opens it again.
    pub fn settle(&mut self) -> Result<(), IndexError> {
        self.writer.close()
    }

    /// The `k` best chunks for a query: BM25 over stemmed words and cosine similarity over
    /// vectors, each `CANDIDATES_PER_RANKING` deep, fused by reciprocal rank. Any query text
    /// is accepted (syntax errors are ignored); a zero query vector searches by words only.
    pub fn search(
        &self,
        query: &str,
        query_vector: &[f32],
        k: usize,
    ) -> Result<Vec<SearchHit>, IndexError> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let depth = CANDIDATES_PER_RANKING.max(k);
        let searcher = self.reader.searcher();

        // Words are indexed without positions, so a quoted phrase is searched as its words.
        let (parsed, _ignored_errors) = self.parser.parse_query_lenient(&query.replace('"', " "));
        let lexical = searcher.search(&parsed, &TopDocs::with_limit(depth).order_by_score())?;
        let similarities = self.vectors.similarities(query_vector)?;
        let semantic = similarities
            .as_deref()
            .map(|scores| top_rows(scores, depth))
            .unwrap_or_default();

        // Fused score by chunk key, with the word index's address when it has one.
        let mut fused: HashMap<u64, (f32, Option<DocAddress>)> = HashMap::new();
        let mut keys = KeyColumns::new(&searcher);
        for (rank, (_, address)) in lexical.into_iter().enumerate() {
            if let Some(key) = keys.key(address)? {
                fused.insert(key, (rrf(rank), Some(address)));
            }
        }
        for (rank, row) in semantic.into_iter().enumerate() {
            fused.entry(self.vectors.key(row)).or_insert((0.0, None)).0 += rrf(rank);
        }

        let relevance = |key: u64| -> f32 {
            match (&similarities, self.vectors.row_index(key)) {
                (Some(scores), Some(row)) => scores[row].clamp(0.0, 1.0),
                _ => 0.0,
            }
        };
        let mut ranked: Vec<(u64, f32, f32, Option<DocAddress>)> = fused
            .into_iter()
            .map(|(key, (score, address))| (key, score, relevance(key), address))
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(b.2.total_cmp(&a.2))
                .then(a.0.cmp(&b.0))
        });

        let mut hits = Vec::with_capacity(k);
        for (key, _, relevance_score, address) in ranked {
            if hits.len() == k {
                break;
            }
            let address = match address.or_else(|| self.find(&searcher, key)) {
                Some(address) => address,
                // A vector whose words are not on disk: the halves disagree until a rebuild.
                None => continue,
            };
            let doc: TantivyDocument = searcher.doc(address)?;
            let field = |field| text_of(&doc, field).unwrap_or_default().to_string();
            hits.push(SearchHit {
                chunk_id: field(self.fields.chunk_id),
                document_id: field(self.fields.document_id),
                filename: field(self.fields.filename),
                text: field(self.fields.text),
                relevance_score,
            });
        }
        Ok(hits)
    }

    /// Looks up in the word index a chunk found by its vector.
    fn find(&self, searcher: &Searcher, key: u64) -> Option<DocAddress> {
        let row = self.vectors.row(key)?;
        let term = Term::from_field_text(self.fields.chunk_id, &row.chunk_id);
        let query = TermQuery::new(term, IndexRecordOption::Basic);
        match searcher.search(&query, &DocSetCollector) {
            Ok(found) => found.into_iter().next(),
            Err(err) => {
                tracing::warn!(error = %err, "looking a chunk up by id");
                None
            }
        }
    }
}

/// The fields, with the stemming analyzer on the text.
fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text_options = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(STEMMED_TOKENIZER)
                // Frequencies for BM25. Positions would serve only phrase queries, which
                // natural-language questions do not use, and cost indexing time.
                .set_index_option(IndexRecordOption::WithFreqs),
        )
        .set_stored();
    let fields = Fields {
        chunk_id: builder.add_text_field("chunk_id", STRING | STORED),
        chunk_key: builder.add_u64_field("chunk_key", FAST),
        document_id: builder.add_text_field("document_id", STRING | STORED),
        filename: builder.add_text_field("filename", STORED),
        text: builder.add_text_field("text", text_options),
    };
    (builder.build(), fields)
}

/// Tokenizers are not stored with an index: every opened or created index needs this.
fn register_analyzer(index: &Index) {
    index
        .tokenizers()
        .register(STEMMED_TOKENIZER, analyzer::english());
}

fn reader_for(index: &Index) -> Result<IndexReader, IndexError> {
    Ok(index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?)
}

/// The index in `dir`: `None` when there is none yet, an error when it cannot be used.
fn open_existing(dir: &Path, schema: &Schema) -> Result<Option<(Index, IndexReader)>, IndexError> {
    if !dir.join("meta.json").exists() {
        return Ok(None);
    }
    let index = Index::open(MmapDirectory::open(dir)?)?;
    if index.schema() != *schema {
        return Err(IndexError::Invalid(
            "the index was made with another schema".into(),
        ));
    }
    register_analyzer(&index);
    // Opening the reader opens every segment, so missing or truncated files show here.
    let reader = reader_for(&index)?;
    Ok(Some((index, reader)))
}

fn create(dir: &Path, schema: &Schema) -> Result<(Index, IndexReader), IndexError> {
    fs::create_dir_all(dir)
        .map_err(|err| IndexError::during(format!("could not create {}", dir.display()), err))?;
    let index = Index::create(
        MmapDirectory::open(dir)?,
        schema.clone(),
        IndexSettings::default(),
    )
    .map_err(|err| {
        IndexError::during(
            format!("could not create an index in {}", dir.display()),
            err,
        )
    })?;
    register_analyzer(&index);
    let reader = reader_for(&index)?;
    Ok((index, reader))
}

fn document(fields: Fields, chunk: &IndexedChunk) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_text(fields.chunk_id, &chunk.chunk_id);
    doc.add_u64(fields.chunk_key, chunk_key(&chunk.chunk_id));
    doc.add_text(fields.document_id, &chunk.document_id);
    doc.add_text(fields.filename, &chunk.filename);
    doc.add_text(fields.text, &chunk.text);
    doc
}

/// The chunk keys of word-search hits, reading each segment's column once.
struct KeyColumns<'a> {
    searcher: &'a Searcher,
    columns: HashMap<u32, Column<u64>>,
}

impl<'a> KeyColumns<'a> {
    fn new(searcher: &'a Searcher) -> Self {
        Self {
            searcher,
            columns: HashMap::new(),
        }
    }

    fn key(&mut self, address: DocAddress) -> Result<Option<u64>, IndexError> {
        let column = match self.columns.entry(address.segment_ord) {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(
                self.searcher
                    .segment_reader(address.segment_ord)
                    .fast_fields()
                    .u64("chunk_key")?,
            ),
        };
        Ok(column.first(address.doc_id))
    }
}

fn text_of(doc: &TantivyDocument, field: Field) -> Option<&str> {
    doc.get_first(field).and_then(|value| value.as_str())
}

/// Reciprocal rank fusion's share for a 0-based rank.
fn rrf(rank: usize) -> f32 {
    1.0 / (RRF_K + rank as f32 + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::embed::cosine;
    use crate::retrieval::embed::hash::HashEmbedder;

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
    fn documents_are_replaced_and_added_in_one_edit() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = ChatIndex::open(dir.path()).unwrap();
        index.add(sample()).unwrap();
        index
            .replace_documents(vec![
                (
                    "d2".into(),
                    vec![chunk("c5", "d2", "Sharding moved to range partitioning.")],
                ),
                (
                    "d3".into(),
                    vec![chunk("c6", "d3", "The kitchen menu lists soup on Fridays.")],
                ),
            ])
            .unwrap();
        assert_eq!((index.len(), index.indexed_len()), (4, 4));
        // A document with vectors of another dimension is refused alone.
        let mut odd = chunk("c7", "d4", "Odd vectors.");
        odd.vector.truncate(10);
        let rejected = index
            .replace_documents(vec![
                ("d4".into(), vec![odd]),
                ("d5".into(), vec![chunk("c8", "d5", "Fine vectors.")]),
            ])
            .unwrap();
        assert_eq!(rejected.len(), 1);
        assert_eq!(rejected[0].0, "d4");
        assert!(rejected[0].1.contains("10-dimensional"), "{rejected:?}");
        assert_eq!((index.len(), index.indexed_len()), (5, 5));
        let found: Vec<String> = search(&index, "sharding partitioning kitchen", 10)
            .into_iter()
            .map(|h| h.chunk_id)
            .collect();
        assert!(found.contains(&"c5".to_string()), "{found:?}");
        assert!(found.contains(&"c6".to_string()), "{found:?}");
        assert!(
            !found.iter().any(|id| id == "c3" || id == "c4"),
            "{found:?}"
        );
        // Reopened, the words on disk agree.
        drop(index);
        let index = ChatIndex::open(dir.path()).unwrap();
        assert_eq!(index.indexed_len(), 5);
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
    fn many_small_additions_merge_in_the_background_and_stay_searchable() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = ChatIndex::open(dir.path()).unwrap();
        for i in 0..30 {
            let text = format!("Report number {i} mentions the word zebra{i} once.");
            index
                .add(vec![chunk(&format!("c{i}"), &format!("d{i}"), &text)])
                .unwrap();
            // Each addition is searchable at once, merges or not.
            assert_eq!(
                ids(&index.search(&format!("zebra{i}"), &[0.0; 384], 1).unwrap()),
                [format!("c{i}")]
            );
        }
        index.settle().unwrap();
        assert_eq!((index.len(), index.indexed_len()), (30, 30));
        assert_eq!(ids(&search(&index, "zebra7", 1)), ["c7"]);
        index.remove_document("d7").unwrap();
        assert!(
            search(&index, "zebra7", 30)
                .iter()
                .all(|h| h.chunk_id != "c7")
        );
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
