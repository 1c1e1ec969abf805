//! The tantivy side of a `ChatIndex`: the schema and its `Fields` (the stemming analyzer on
//! the text), opening an existing index directory or creating one, a chunk as a document.

use std::fs;
use std::path::Path;

use tantivy::directory::MmapDirectory;
use tantivy::schema::{FAST, Field, IndexRecordOption, STORED, STRING, Schema};
use tantivy::schema::{TextFieldIndexing, TextOptions};
use tantivy::{Index, IndexReader, IndexSettings, ReloadPolicy, TantivyDocument};

use super::{IndexError, IndexedChunk};
use crate::retrieval::analyzer;
use crate::retrieval::vectors::chunk_key;

/// The name the stemming analyzer is registered under; the schema's text field names it.
const STEMMED_TOKENIZER: &str = "en_stem";

#[derive(Clone, Copy)]
pub(super) struct Fields {
    pub(super) chunk_id: Field,
    /// `chunk_key(chunk_id)`, a fast field: ranks words without opening stored documents.
    chunk_key: Field,
    pub(super) document_id: Field,
    pub(super) filename: Field,
    pub(super) text: Field,
}

/// The fields, with the stemming analyzer on the text.
pub(super) fn schema() -> (Schema, Fields) {
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
pub(super) fn open_existing(
    dir: &Path,
    schema: &Schema,
) -> Result<Option<(Index, IndexReader)>, IndexError> {
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

pub(super) fn create(dir: &Path, schema: &Schema) -> Result<(Index, IndexReader), IndexError> {
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

pub(super) fn document(fields: Fields, chunk: &IndexedChunk) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_text(fields.chunk_id, chunk.chunk_id.as_str());
    doc.add_u64(fields.chunk_key, chunk_key(chunk.chunk_id.as_str()));
    doc.add_text(fields.document_id, chunk.document_id.as_str());
    doc.add_text(fields.filename, &chunk.filename);
    doc.add_text(fields.text, &chunk.text);
    doc
}
