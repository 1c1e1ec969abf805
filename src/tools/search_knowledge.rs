//! `search_knowledge` (docs/spec.md#tool-aliases): searches the agent's knowledge bases and the
//! chat's own documents together, with one ranking (`Workspace::search_together`: the hybrid
//! ranking `file_search` uses, its BM25 on one scale across the indexes), and returns
//! file_search's result shape plus where each passage came from: a knowledge base, by name, or
//! the chat.
//! Which knowledge bases exist is read at each call (one deleted meanwhile is skipped), and
//! only the owner's are ever searched.

use std::borrow::Cow;
use std::sync::Arc;

use entities::ids::{ArtifactId, ChatId, UserId};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::schema::set_keyword;
use super::{ProgressKind, ToolError, ToolFuture, TypedTool, typed};
use crate::chat::knowledge_bases::{KnowledgeBaseId, KnowledgeBases};
use crate::config::Config;
use crate::documents::Workspace;
use crate::llm::wire::ToolDefinition;

/// The tool's name, among those an agent's `enabled_tools` may name.
pub const SEARCH_KNOWLEDGE: &str = "search_knowledge";

/// What a search with nothing to search answers, beside its empty results.
pub const NOTHING_TO_SEARCH: &str = "There are no searchable documents in this agent's \
    knowledge bases or in this chat yet, so nothing was searched. Answer without them, and say \
    that the knowledge base is empty if the question needs it.";

/// Most results one call may ask for.
pub const MAX_RESULTS: usize = 20;
/// Longest query in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;

const DESCRIPTION: &str = "Search the knowledge base for relevant information: the documents \
    of this agent's knowledge bases and those uploaded to this chat, ranked together. Returns \
    the most relevant passages, each with its file name and where it came from (`source`: \
    \"knowledge_base\" with the knowledge base's name, or \"chat\" for this chat's own uploads).";

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to look for.
    #[schemars(length(min = 1, max = MAX_QUERY_CHARS))]
    query: String,
    /// Most passages to return.
    #[schemars(range(min = 1, max = MAX_RESULTS))]
    max_results: Option<i64>,
}

/// Where the passages of one searched index came from.
#[derive(Debug, Clone)]
enum Source {
    KnowledgeBase { id: KnowledgeBaseId, name: String },
    Chat,
}

impl Source {
    fn describe(&self, result: &mut Value) {
        match self {
            Self::KnowledgeBase { id, name } => {
                result["source"] = json!("knowledge_base");
                result["knowledge_base"] = json!(name);
                result["knowledge_base_id"] = json!(id);
            }
            Self::Chat => {
                result["source"] = json!("chat");
                result["knowledge_base"] = Value::Null;
            }
        }
    }
}

pub struct SearchKnowledgeTool {
    config: Arc<Config>,
    workspace: Workspace,
    knowledge_bases: KnowledgeBases,
    owner: UserId,
    /// The agent's knowledge bases, in its order.
    bases: Vec<KnowledgeBaseId>,
    /// The chat whose own documents are searched beside them (none outside a stored chat).
    chat: Option<ChatId>,
}

impl SearchKnowledgeTool {
    pub fn new(
        config: Arc<Config>,
        workspace: Workspace,
        knowledge_bases: KnowledgeBases,
        owner: UserId,
        bases: Vec<KnowledgeBaseId>,
        chat: Option<ChatId>,
    ) -> Self {
        Self {
            config,
            workspace,
            knowledge_bases,
            owner,
            bases,
            chat,
        }
    }

    /// The definition, from the limits in `config` (for listing tools without a chat).
    pub fn describe(config: &Config) -> ToolDefinition {
        typed::definition::<Args>(SEARCH_KNOWLEDGE, DESCRIPTION, |derived| {
            search_parameters(derived, config)
        })
    }
}

/// The parameters derived from `Args` with the configured default number of results.
fn search_parameters(mut parameters: Value, config: &Config) -> Value {
    let default = config.documents.default_search_results;
    set_keyword(
        &mut parameters,
        "/properties/max_results",
        "default",
        default,
    );
    parameters
}

impl TypedTool for SearchKnowledgeTool {
    type Args = Args;

    fn name(&self) -> &'static str {
        SEARCH_KNOWLEDGE
    }

    fn description(&self) -> Cow<'_, str> {
        DESCRIPTION.into()
    }

    fn parameters(&self, derived: Value) -> Value {
        search_parameters(derived, &self.config)
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    fn call_message(&self, args: Option<&Args>) -> String {
        match args {
            Some(Args { query, .. }) => {
                let shown: String = query.chars().take(80).collect();
                format!("Searching the knowledge base for “{shown}”")
            }
            None => "Searching the knowledge base".into(),
        }
    }

    fn call(&self, args: Args) -> ToolFuture {
        let workspace = self.workspace.clone();
        let knowledge_bases = self.knowledge_bases.clone();
        let owner = self.owner.clone();
        let bases = self.bases.clone();
        let chat = self.chat.clone();
        let default_results = self.config.documents.default_search_results;
        Box::pin(async move {
            let query = args.query.trim().to_string();
            if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
                return Err(ToolError::invalid_arguments(format!(
                    "query must be 1-{MAX_QUERY_CHARS} characters"
                )));
            }
            let limit = match args.max_results {
                None => default_results,
                Some(n) if (1..=MAX_RESULTS as i64).contains(&n) => n as usize,
                Some(n) => {
                    return Err(ToolError::invalid_arguments(format!(
                        "max_results must be 1-{MAX_RESULTS} (got {n})"
                    )));
                }
            };
            let failed = |err: &dyn std::fmt::Display| {
                ToolError::new(
                    "search_failed",
                    format!("the knowledge base could not be searched: {err}"),
                    "Try again, or answer without it.",
                )
            };
            // The knowledge bases as they are now: the owner's, in the agent's order.
            let chats: Vec<ChatId> = bases.iter().map(|b| b.chat_id().clone()).collect();
            let found = knowledge_bases
                .owned_among(&owner, &chats)
                .await
                .map_err(|err| failed(&err))?;
            let mut sources: Vec<(ChatId, Source)> = found
                .into_iter()
                .map(|kb| {
                    let source = Source::KnowledgeBase {
                        id: KnowledgeBaseId::of(&kb.id),
                        name: kb.title,
                    };
                    (kb.id, source)
                })
                .collect();
            if let Some(chat) = chat {
                sources.push((chat, Source::Chat));
            }
            // Only indexes with something in them are opened; one whose count cannot be read
            // is searched anyway.
            let mut searched = Vec::with_capacity(sources.len());
            for (chat_id, source) in sources {
                if workspace.has_searchable(&chat_id).await.unwrap_or(true) {
                    searched.push((chat_id, source));
                }
            }
            if searched.is_empty() {
                return Ok(json!({"results": [], "note": NOTHING_TO_SEARCH}));
            }
            let chats: Vec<ChatId> = searched.iter().map(|(c, _)| c.clone()).collect();
            let hits = workspace
                .search_together(&chats, &query, limit)
                .await
                .map_err(|err| failed(&err))?
                .hits;
            let artifacts = workspace.artifact_ids_of_hits(&hits).await;
            let results: Vec<Value> = hits
                .into_iter()
                .map(|(chat_id, hit)| {
                    let mut result = json!({
                        "filename": hit.filename,
                        "chunk_text": hit.text,
                        "relevance_score": (f64::from(hit.relevance_score) * 1000.0).round() / 1000.0,
                        "artifact_id": artifacts
                            .get(&hit.document_id)
                            .map(ArtifactId::as_str)
                            .unwrap_or_default(),
                    });
                    if let Some(path) = hit.heading_path {
                        result["heading_path"] = json!(path);
                    }
                    if let Some((_, source)) = searched.iter().find(|(c, _)| *c == chat_id) {
                        source.describe(&mut result);
                    }
                    result
                })
                .collect();
            Ok(json!({ "results": results }))
        })
    }
}
