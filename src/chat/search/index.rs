//! `MessageIndex`: one user's messages as a tantivy index (plain Rust, no actors). Each
//! message is a document: its ids, role and time (stored), and its text twice, as exact words
//! (stored, for snippets) and as stems, with the document index's analyzers
//! (`retrieval::analyzer`), so "runs" finds "running" and an exact word counts for more. BM25
//! ranks; the snippet is the best fragment of the text with the query's words marked.
//!
//! Only the indexer (`super::indexer`) writes an index; searches read the last commit.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use entities::ids::{ChatId, MessageId};
use entities::messages::MessageRole;
use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::directory::MmapDirectory;
use tantivy::query::TermQuery;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
    TextOptions, Value,
};
use tantivy::snippet::SnippetGenerator;
use tantivy::{
    Index, IndexReader, IndexSettings, IndexWriter, ReloadPolicy, TantivyDocument, Term,
};

use crate::retrieval::Stemming;

/// Characters of a message a snippet shows at most.
const SNIPPET_CHARS: usize = 180;
/// The indexing memory of one commit: tantivy's floor per thread is 15 MB; a batch of
/// messages is far smaller than that.
const WRITER_MEMORY_BYTES: usize = 15_000_000;

/// Why the index could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum MessageIndexError {
    #[error(transparent)]
    Tantivy(#[from] tantivy::TantivyError),
    #[error(transparent)]
    Directory(#[from] tantivy::directory::error::OpenDirectoryError),
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
}

/// A message as indexed.
#[derive(Debug, Clone)]
pub struct IndexedMessage {
    pub id: MessageId,
    pub chat_id: ChatId,
    pub role: MessageRole,
    pub text: String,
    pub created_at: DateTime<Utc>,
}

/// A message that matched, best first.
#[derive(Debug, Clone)]
pub struct MessageHit {
    pub message_id: MessageId,
    pub chat_id: ChatId,
    pub role: String,
    pub created_at: DateTime<Utc>,
    pub score: f32,
    pub snippet: Snippet,
}

/// A fragment of a message's text and where the query's words are in it: ranges in UTF-16
/// code units (what a browser's strings index by), ascending and not overlapping.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Snippet {
    pub text: String,
    pub highlights: Vec<[usize; 2]>,
}

#[derive(Clone)]
struct Fields {
    message_id: Field,
    chat_id: Field,
    role: Field,
    created_at: Field,
    /// Exact words, stored: the snippet's source.
    text: Field,
    /// Stems; `None` without a stemming language.
    stems: Option<Field>,
}

fn indexed(tokenizer: &str) -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            .set_index_option(IndexRecordOption::WithFreqs),
    )
}

fn schema(stemming: Stemming) -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let message_id = builder.add_text_field("message_id", STRING | STORED);
    let chat_id = builder.add_text_field("chat_id", STRING | STORED);
    let role = builder.add_text_field("role", STORED);
    let created_at = builder.add_i64_field("created_at", INDEXED | STORED | FAST);
    let text = builder.add_text_field("text", indexed(&stemming.words_tokenizer()).set_stored());
    let stems = stemming
        .stems_tokenizer()
        .map(|name| builder.add_text_field("stems", indexed(&name)));
    let fields = Fields {
        message_id,
        chat_id,
        role,
        created_at,
        text,
        stems,
    };
    (builder.build(), fields)
}

/// One user's message index, opened; searches see its last commit (`reload`).
pub struct MessageIndex {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

impl MessageIndex {
    /// The index in `dir`, if there is one made with today's schema for `stemming`.
    pub fn open_existing(
        dir: &Path,
        stemming: Stemming,
    ) -> Result<Option<Self>, MessageIndexError> {
        if !dir.join("meta.json").exists() {
            return Ok(None);
        }
        let (schema, fields) = schema(stemming);
        let index = Index::open(MmapDirectory::open(dir)?)?;
        if index.schema() != schema {
            return Ok(None);
        }
        Ok(Some(Self::ready(dir, index, fields, stemming)?))
    }

    /// The index in `dir`, made (empty) when there is none or it has another schema (another
    /// stemming language); `true` beside it when it was made.
    pub fn open_or_create(
        dir: &Path,
        stemming: Stemming,
    ) -> Result<(Self, bool), MessageIndexError> {
        if let Some(index) = Self::open_existing(dir, stemming)? {
            return Ok((index, false));
        }
        if dir.exists() {
            fs::remove_dir_all(dir)
                .map_err(|err| MessageIndexError::Io(format!("removing {}", dir.display()), err))?;
        }
        fs::create_dir_all(dir)
            .map_err(|err| MessageIndexError::Io(format!("creating {}", dir.display()), err))?;
        let (schema, fields) = schema(stemming);
        let index = Index::create(MmapDirectory::open(dir)?, schema, IndexSettings::default())?;
        Ok((Self::ready(dir, index, fields, stemming)?, true))
    }

    fn ready(
        dir: &Path,
        index: Index,
        fields: Fields,
        stemming: Stemming,
    ) -> Result<Self, MessageIndexError> {
        // Tokenizers are not stored with an index: register the fields' analyzers.
        index
            .tokenizers()
            .register(&stemming.words_tokenizer(), stemming.words());
        if let (Some(name), Some(analyzer)) = (stemming.stems_tokenizer(), stemming.stems()) {
            index.tokenizers().register(&name, analyzer);
        }
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            dir: dir.to_path_buf(),
            index,
            reader,
            fields,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A writer for one batch (single-threaded: batches are small).
    pub fn writer(&self) -> Result<IndexWriter, MessageIndexError> {
        Ok(self.index.writer_with_num_threads(1, WRITER_MEMORY_BYTES)?)
    }

    /// Adds `message` to what `writer` commits next.
    pub fn add(
        &self,
        writer: &IndexWriter,
        message: &IndexedMessage,
    ) -> Result<(), MessageIndexError> {
        let mut doc = TantivyDocument::default();
        doc.add_text(self.fields.message_id, message.id.as_str());
        doc.add_text(self.fields.chat_id, message.chat_id.as_str());
        doc.add_text(self.fields.role, message.role.as_str());
        doc.add_i64(
            self.fields.created_at,
            message.created_at.timestamp_millis(),
        );
        doc.add_text(self.fields.text, &message.text);
        if let Some(stems) = self.fields.stems {
            doc.add_text(stems, &message.text);
        }
        writer.add_document(doc)?;
        Ok(())
    }

    /// Removes the message with `id` at `writer`'s next commit.
    pub fn remove_message(&self, writer: &IndexWriter, id: &MessageId) {
        writer.delete_term(Term::from_field_text(self.fields.message_id, id.as_str()));
    }

    /// Removes every message of `chat_id` at `writer`'s next commit.
    pub fn remove_chat(&self, writer: &IndexWriter, chat_id: &ChatId) {
        writer.delete_term(Term::from_field_text(self.fields.chat_id, chat_id.as_str()));
    }

    /// Makes searches see the last commit.
    pub fn reload(&self) -> Result<(), MessageIndexError> {
        Ok(self.reader.reload()?)
    }

    /// How many messages the last commit holds.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ids of `chat_id`'s messages in the last commit.
    pub fn messages_of_chat(
        &self,
        chat_id: &ChatId,
    ) -> Result<HashSet<MessageId>, MessageIndexError> {
        let searcher = self.reader.searcher();
        let query = TermQuery::new(
            Term::from_field_text(self.fields.chat_id, chat_id.as_str()),
            IndexRecordOption::Basic,
        );
        let addresses = searcher.search(&query, &DocSetCollector)?;
        let mut ids = HashSet::with_capacity(addresses.len());
        for address in addresses {
            let doc: TantivyDocument = searcher.doc(address)?;
            if let Some(id) = doc
                .get_first(self.fields.message_id)
                .and_then(|v| v.as_str())
            {
                ids.insert(MessageId::from_string(id));
            }
        }
        Ok(ids)
    }

    /// The `limit` messages BM25 ranks best for `query` (any of its words, stems included),
    /// each with a snippet. Query syntax is read leniently: what does not parse is searched as
    /// words.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<MessageHit>, MessageIndexError> {
        let searcher = self.reader.searcher();
        let mut searched = vec![self.fields.text];
        searched.extend(self.fields.stems);
        let parser = tantivy::query::QueryParser::for_index(&self.index, searched);
        let (query, _) = parser.parse_query_lenient(query);
        let top = searcher.search(&query, &TopDocs::with_limit(limit.max(1)).order_by_score())?;
        if top.is_empty() {
            return Ok(Vec::new());
        }
        let mut snippets = SnippetGenerator::create(&searcher, &*query, self.fields.text)?;
        snippets.set_max_num_chars(SNIPPET_CHARS);
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            let text = |field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            let created_at = doc
                .get_first(self.fields.created_at)
                .and_then(|v| v.as_i64())
                .and_then(DateTime::from_timestamp_millis)
                .unwrap_or_default();
            let snippet = snippets.snippet_from_doc(&doc);
            let snippet = if snippet.is_empty() {
                // Matched by stems only: the message's start, unmarked.
                Snippet {
                    text: text(self.fields.text).chars().take(SNIPPET_CHARS).collect(),
                    highlights: Vec::new(),
                }
            } else {
                snippet_of(snippet.fragment(), snippet.highlighted())
            };
            hits.push(MessageHit {
                message_id: MessageId::from_string(text(self.fields.message_id)),
                chat_id: ChatId::from_string(text(self.fields.chat_id)),
                role: text(self.fields.role),
                created_at,
                score,
                snippet,
            });
        }
        Ok(hits)
    }
}

/// `fragment` with its highlighted byte ranges as UTF-16 ranges.
fn snippet_of(fragment: &str, highlighted: &[std::ops::Range<usize>]) -> Snippet {
    let utf16 = |byte: usize| {
        fragment
            .get(..byte)
            .map_or(0, |prefix| prefix.encode_utf16().count())
    };
    Snippet {
        text: fragment.to_string(),
        highlights: highlighted
            .iter()
            .map(|range| [utf16(range.start), utf16(range.end)])
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(chat: &ChatId, text: &str) -> IndexedMessage {
        IndexedMessage {
            id: MessageId::generate(),
            chat_id: chat.clone(),
            role: MessageRole::User,
            text: text.to_string(),
            created_at: Utc::now(),
        }
    }

    fn indexed(messages: &[IndexedMessage]) -> (tempfile::TempDir, MessageIndex) {
        let dir = tempfile::tempdir().unwrap();
        let (index, created) =
            MessageIndex::open_or_create(dir.path(), Stemming::default()).unwrap();
        assert!(created);
        let mut writer = index.writer().unwrap();
        for message in messages {
            index.add(&writer, message).unwrap();
        }
        writer.commit().unwrap();
        index.reload().unwrap();
        (dir, index)
    }

    #[test]
    fn the_message_with_more_of_the_words_ranks_first_and_its_words_are_marked() {
        let chat = ChatId::generate();
        let one = message(&chat, "We talked about the harbour once.");
        let both = message(
            &chat,
            "The harbour lighthouse was red; the lighthouse still stands.",
        );
        let (_dir, index) = indexed(&[one.clone(), both.clone(), message(&chat, "nothing here")]);
        let hits = index.search("harbour lighthouse", 10).unwrap();
        let ids: Vec<_> = hits.iter().map(|hit| hit.message_id.clone()).collect();
        assert_eq!(ids, [both.id, one.id]);
        let snippet = &hits[0].snippet;
        let marked: Vec<String> = snippet
            .highlights
            .iter()
            .map(|[start, end]| snippet.text[*start..*end].to_string())
            .collect();
        assert!(marked.contains(&"harbour".to_string()), "{marked:?}");
        assert!(marked.contains(&"lighthouse".to_string()), "{marked:?}");
    }

    #[test]
    fn stems_find_other_forms_and_highlights_count_utf16_units() {
        let chat = ChatId::generate();
        let (_dir, index) = indexed(&[message(&chat, "Café ☕ — she was running late")]);
        assert_eq!(index.search("runs", 10).unwrap().len(), 1);
        let hit = &index.search("running", 10).unwrap()[0];
        let [start, end] = hit.snippet.highlights[0];
        let units: Vec<u16> = hit.snippet.text.encode_utf16().collect();
        assert_eq!(String::from_utf16(&units[start..end]).unwrap(), "running");
    }

    #[test]
    fn removed_messages_and_chats_are_no_longer_found() {
        let (chat, other) = (ChatId::generate(), ChatId::generate());
        let first = message(&chat, "zebra one");
        let second = message(&chat, "zebra two");
        let third = message(&other, "zebra three");
        let (_dir, index) = indexed(&[first.clone(), second.clone(), third.clone()]);
        assert_eq!(
            index.messages_of_chat(&chat).unwrap(),
            HashSet::from([first.id.clone(), second.id.clone()])
        );
        let mut writer = index.writer().unwrap();
        index.remove_message(&writer, &first.id);
        index.remove_chat(&writer, &other);
        writer.commit().unwrap();
        index.reload().unwrap();
        let found: Vec<_> = index
            .search("zebra", 10)
            .unwrap()
            .into_iter()
            .map(|hit| hit.message_id)
            .collect();
        assert_eq!(found, [second.id]);
    }

    #[test]
    fn query_syntax_that_does_not_parse_is_searched_as_words() {
        let chat = ChatId::generate();
        let (_dir, index) = indexed(&[message(&chat, "a quoted walrus")]);
        assert_eq!(index.search("\"walrus AND (", 10).unwrap().len(), 1);
        assert!(index.search("   ", 10).unwrap().is_empty());
    }
}
