//! The tantivy side of a `ChatIndex`: the schema and its `Fields` (exact words, stems and
//! headings of each chunk, each field with its analyzer), opening an existing index directory
//! (one made before stems and headings had fields of their own still opens, as `Layout::Old`,
//! and is searched as it is until it is rebuilt) or creating one, a chunk as a document.

use std::fs;
use std::path::Path;

use tantivy::directory::MmapDirectory;
use tantivy::schema::{FAST, Field, IndexRecordOption, STORED, STRING, Schema};
use tantivy::schema::{FieldType, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, IndexSettings, ReloadPolicy, TantivyDocument};

use super::{IndexError, IndexedChunk};
use crate::retrieval::analyzer::{self, Stemming};
use crate::retrieval::vectors::chunk_key;

/// The tokenizer of indexes made before exact words were kept: English stems in `text`.
const OLD_TOKENIZER: &str = "en_stem";
/// A field BM25 searches: the field, its analyzer, and whether it holds headings (weighed
/// `SearchOptions::headings_boost` times the text) or the text.
#[derive(Clone)]
pub(super) struct WordField {
    pub(super) field: Field,
    pub(super) name: &'static str,
    pub(super) analyzer: TextAnalyzer,
    pub(super) headings: bool,
}

#[derive(Clone)]
pub(super) struct Fields {
    pub(super) chunk_id: Field,
    /// `chunk_key(chunk_id)`, a fast field: ranks words without opening stored documents.
    chunk_key: Field,
    pub(super) document_id: Field,
    pub(super) filename: Field,
    /// The text as stored, indexed as exact words (as stems in an old index).
    pub(super) text: Field,
    /// The text as stems; `None` without stemming and in an old index.
    stems: Option<Field>,
    /// The title and headings the chunk is under or holds; `None` in an old index.
    headings: Option<Field>,
    /// The heading path as shown in results, stored only; `None` in an old index.
    pub(super) heading_path: Option<Field>,
    /// The fields BM25 searches, with their analyzers.
    pub(super) searched: Vec<WordField>,
}

/// Whether an index has today's fields or the old ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    Current,
    /// Made before exact words, stems and headings had fields of their own: searchable, and
    /// to be rebuilt.
    Old,
}

fn indexed(tokenizer: &str, stored: bool) -> TextOptions {
    let options = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            // Frequencies for BM25. Positions would serve only phrase queries, which
            // natural-language questions do not use, and cost indexing time.
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    if stored {
        options.set_stored()
    } else {
        options
    }
}

/// Today's fields for `stemming`. The tokenizers' names are part of the schema, so an index
/// made with another language has another schema (and is rebuilt).
pub(super) fn schema(stemming: Stemming) -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let words = stemming.words_tokenizer();
    let stems = stemming.stems_tokenizer();
    let chunk_id = builder.add_text_field("chunk_id", STRING | STORED);
    let chunk_key = builder.add_u64_field("chunk_key", FAST);
    let document_id = builder.add_text_field("document_id", STRING | STORED);
    let filename = builder.add_text_field("filename", STORED);
    let text = builder.add_text_field("text", indexed(&words, true));
    let stems_field = stems
        .as_deref()
        .map(|stems| builder.add_text_field("stems", indexed(stems, false)));
    let headings = builder.add_text_field(
        "headings",
        indexed(stems.as_deref().unwrap_or(&words), false),
    );
    let heading_path = builder.add_text_field("heading_path", STORED);
    let mut searched = vec![WordField {
        field: text,
        name: "text",
        analyzer: stemming.words(),
        headings: false,
    }];
    if let (Some(field), Some(analyzer)) = (stems_field, stemming.stems()) {
        searched.push(WordField {
            field,
            name: "stems",
            analyzer,
            headings: false,
        });
    }
    searched.push(WordField {
        field: headings,
        name: "headings",
        analyzer: stemming.stems().unwrap_or_else(|| stemming.words()),
        headings: true,
    });
    let fields = Fields {
        chunk_id,
        chunk_key,
        document_id,
        filename,
        text,
        stems: stems_field,
        headings: Some(headings),
        heading_path: Some(heading_path),
        searched,
    };
    (builder.build(), fields)
}

/// The fields of an index made before stems and headings had fields of their own, when
/// `schema` is one: `text` holds English stems.
fn old_fields(schema: &Schema) -> Option<Fields> {
    let field = |name| schema.get_field(name).ok();
    let text = field("text")?;
    let FieldType::Str(options) = schema.get_field_entry(text).field_type() else {
        return None;
    };
    let tokenizer = options.get_indexing_options()?.tokenizer();
    if tokenizer != OLD_TOKENIZER || field("stems").is_some() || field("headings").is_some() {
        return None;
    }
    Some(Fields {
        chunk_id: field("chunk_id")?,
        chunk_key: field("chunk_key")?,
        document_id: field("document_id")?,
        filename: field("filename")?,
        text,
        stems: None,
        headings: None,
        heading_path: None,
        searched: vec![WordField {
            field: text,
            name: "text",
            analyzer: analyzer::legacy_english(),
            headings: false,
        }],
    })
}

/// Tokenizers are not stored with an index: every opened or created index needs its fields'.
fn register_analyzers(index: &Index, fields: &Fields) {
    let schema = index.schema();
    for searched in &fields.searched {
        let FieldType::Str(options) = schema.get_field_entry(searched.field).field_type() else {
            continue;
        };
        if let Some(indexing) = options.get_indexing_options() {
            index
                .tokenizers()
                .register(indexing.tokenizer(), searched.analyzer.clone());
        }
    }
}

fn reader_for(index: &Index) -> Result<IndexReader, IndexError> {
    Ok(index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?)
}

/// The index in `dir` and its fields: `None` when there is none yet, an error when it cannot
/// be used. An index from before stems and headings had fields opens as `Layout::Old`.
pub(super) fn open_existing(
    dir: &Path,
    schema: &Schema,
    fields: &Fields,
) -> Result<Option<(Index, IndexReader, Fields, Layout)>, IndexError> {
    if !dir.join("meta.json").exists() {
        return Ok(None);
    }
    let index = Index::open(MmapDirectory::open(dir)?)?;
    let (fields, layout) = if index.schema() == *schema {
        (fields.clone(), Layout::Current)
    } else if let Some(old) = old_fields(&index.schema()) {
        (old, Layout::Old)
    } else {
        return Err(IndexError::Invalid(
            "the index was made with another schema".into(),
        ));
    };
    register_analyzers(&index, &fields);
    // Opening the reader opens every segment, so missing or truncated files show here.
    let reader = reader_for(&index)?;
    Ok(Some((index, reader, fields, layout)))
}

pub(super) fn create(
    dir: &Path,
    schema: &Schema,
    fields: &Fields,
) -> Result<(Index, IndexReader), IndexError> {
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
    register_analyzers(&index, fields);
    let reader = reader_for(&index)?;
    Ok((index, reader))
}

pub(super) fn document(fields: &Fields, chunk: &IndexedChunk) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    doc.add_text(fields.chunk_id, chunk.chunk_id.as_str());
    doc.add_u64(fields.chunk_key, chunk_key(chunk.chunk_id.as_str()));
    doc.add_text(fields.document_id, chunk.document_id.as_str());
    doc.add_text(fields.filename, &chunk.filename);
    doc.add_text(fields.text, &chunk.text);
    if let Some(stems) = fields.stems {
        doc.add_text(stems, &chunk.text);
    }
    if let Some(headings) = fields.headings
        && !chunk.headings.is_empty()
    {
        doc.add_text(headings, chunk.headings.indexed_text());
    }
    if let (Some(field), Some(path)) = (fields.heading_path, chunk.headings.display()) {
        doc.add_text(field, path);
    }
    doc
}

/// Writes an index in the layout Colloquy made before exact words, stems and headings had
/// fields of their own (English stems in `text`, tokenizer `en_stem`), holding `chunks`' words:
/// what an upgrade finds on disk. For tests of the upgrade.
pub fn write_legacy_index(dir: &Path, chunks: &[IndexedChunk]) -> Result<(), IndexError> {
    let mut builder = Schema::builder();
    let chunk_id = builder.add_text_field("chunk_id", STRING | STORED);
    let chunk_key_field = builder.add_u64_field("chunk_key", FAST);
    let document_id = builder.add_text_field("document_id", STRING | STORED);
    let filename = builder.add_text_field("filename", STORED);
    let text = builder.add_text_field("text", indexed(OLD_TOKENIZER, true));
    fs::create_dir_all(dir)
        .map_err(|err| IndexError::during(format!("could not create {}", dir.display()), err))?;
    let index = Index::create(
        MmapDirectory::open(dir)?,
        builder.build(),
        IndexSettings::default(),
    )?;
    index
        .tokenizers()
        .register(OLD_TOKENIZER, analyzer::legacy_english());
    let mut writer: tantivy::IndexWriter = index.writer(15_000_000)?;
    for chunk in chunks {
        let mut doc = TantivyDocument::default();
        doc.add_text(chunk_id, chunk.chunk_id.as_str());
        doc.add_u64(chunk_key_field, chunk_key(chunk.chunk_id.as_str()));
        doc.add_text(document_id, chunk.document_id.as_str());
        doc.add_text(filename, &chunk.filename);
        doc.add_text(text, &chunk.text);
        writer.add_document(doc)?;
    }
    writer.commit()?;
    Ok(())
}
