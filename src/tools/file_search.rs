//! `file_search` (docs/spec.md#file_search): searches the chat's uploaded documents with the hybrid
//! index. Offered when the chat has searchable documents, or when a request's `x_tools` names
//! it (then, before any document, it answers that there is nothing to search). Emits
//! `response.file_search_call.in_progress`, `.searching` and `.completed`, each with the call's
//! `item_id` and `output_index`; `.completed` also carries `results_count` and `x_timings_ms`
//! (each stage's milliseconds: query embedding, lock wait, BM25, vectors, fusion, chunk texts,
//! artifact ids, total).

use entities::ids::ArtifactId;
use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::chat_context::ChatContext;
use super::schema::set_keyword;
use super::{ProgressKind, ToolError, ToolFuture, TypedTool, typed};
use crate::config::Config;
use crate::documents::{DocumentsError, SearchStages, Workspace};
use crate::llm::wire::ToolDefinition;
use crate::retrieval::index::SearchHit;
use crate::run::log::RunLog;
use entities::ids::ChatId;

/// What a search where there is nothing to search answers, beside its empty results.
pub const NO_DOCUMENTS: &str = "There are no searchable documents here yet, so nothing was \
    searched. The user can upload documents to this chat (or wait until their uploads finish \
    processing); until then, answer without them.";

/// Most results one call may ask for.
pub const MAX_RESULTS: usize = 20;
/// Longest query in characters.
pub const MAX_QUERY_CHARS: usize = 2_000;

/// What a Responses request's `file_search` tool asks of every call: at most
/// `max_num_results` passages (the default when the model names no number, and the cap when it
/// names more), none scoring under `score_threshold` (`ranking_options.score_threshold`).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileSearchLimits {
    pub max_num_results: Option<usize>,
    pub score_threshold: Option<f32>,
}

pub struct FileSearchTool {
    log: Arc<RunLog>,
    limits: FileSearchLimits,
    config: Arc<Config>,
    workspace: Workspace,
    /// The chats whose documents are searched: the run's own chat, or the vector stores a
    /// Responses request named (each a chat's documents).
    stores: Vec<ChatId>,
    /// Numbers this run's file_search calls (`output_index`).
    calls: AtomicUsize,
}

impl FileSearchTool {
    /// Searches the chat's own documents.
    pub fn new(ctx: Arc<ChatContext>, workspace: Workspace) -> Self {
        Self::over_stores(
            ctx.log.clone(),
            ctx.config.clone(),
            workspace,
            vec![ctx.chat_id.clone()],
        )
    }

    /// Searches the documents of `stores` (chats the caller owns), best passages first.
    pub fn over_stores(
        log: Arc<RunLog>,
        config: Arc<Config>,
        workspace: Workspace,
        stores: Vec<ChatId>,
    ) -> Self {
        Self {
            log,
            limits: FileSearchLimits::default(),
            config,
            workspace,
            stores,
            calls: AtomicUsize::new(0),
        }
    }

    /// This search with a request's limits on every call.
    pub fn limited(self, limits: FileSearchLimits) -> Self {
        Self { limits, ..self }
    }
}

/// The passages of `stores` best matching `query`, at most `limit`, each with its store, ranked
/// as one search (`Workspace::search_together`), and where the search's time went.
pub async fn search_stores(
    workspace: &Workspace,
    stores: &[ChatId],
    query: &str,
    limit: usize,
) -> Result<(Vec<(ChatId, SearchHit)>, SearchStages), DocumentsError> {
    if let [store] = stores {
        let found = workspace.search(store, query, limit).await?;
        let hits = found.hits.into_iter().map(|hit| (store.clone(), hit));
        return Ok((hits.collect(), found.stages));
    }
    let found = workspace.search_together(stores, query, limit).await?;
    Ok((found.hits, found.stages))
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to find in the uploaded documents.
    #[schemars(length(min = 1, max = MAX_QUERY_CHARS))]
    query: String,
    /// Most passages to return.
    #[schemars(range(min = 1, max = MAX_RESULTS))]
    max_results: Option<i64>,
}

/// The id of the output item (and events) of the model's file_search call `call_id`.
pub fn item_id(call_id: &str) -> String {
    format!("fs_{call_id}")
}

const FILE_SEARCH: &str = "file_search";
const DESCRIPTION: &str = "Search the content of the documents uploaded to this chat (PDFs, \
    code, text, HTML). Returns the most relevant passages with their file names.";

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

impl FileSearchTool {
    /// The definition, from the limits in `config` (for listing tools without a chat).
    pub fn describe(config: &Config) -> ToolDefinition {
        typed::definition::<Args>(FILE_SEARCH, DESCRIPTION, |derived| {
            search_parameters(derived, config)
        })
    }
}

impl TypedTool for FileSearchTool {
    type Args = Args;

    fn name(&self) -> &'static str {
        FILE_SEARCH
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

    /// `response.file_search_call.*`.
    fn requested(&self) -> Option<crate::tools::Requested> {
        // The chat's own documents without limits are the server's own copy.
        let own = self.log.chat_id.as_slice() == self.stores.as_slice()
            && self.limits == FileSearchLimits::default();
        (!own).then(|| crate::tools::Requested::FileSearch {
            stores: self.stores.clone(),
            limits: self.limits,
        })
    }

    fn own_events(&self) -> bool {
        true
    }

    fn call(&self, args: Args) -> ToolFuture {
        let call_id = format!("call_{}", uuid::Uuid::now_v7().simple());
        self.call_with_id(&call_id, args)
    }

    /// The call's events (and the Responses API's output item) are `fs_<call id>`.
    fn call_with_id(&self, call_id: &str, args: Args) -> ToolFuture {
        let item_id = item_id(call_id);
        let log = Arc::clone(&self.log);
        let stores = self.stores.clone();
        let workspace = self.workspace.clone();
        let output_index = self.calls.fetch_add(1, Ordering::Relaxed);
        let limits = self.limits;
        Box::pin(async move {
            let query = args.query.trim().to_string();
            if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
                return Err(ToolError::invalid_arguments(format!(
                    "query must be 1-{MAX_QUERY_CHARS} characters"
                )));
            }
            let limit = match args.max_results {
                None => limits
                    .max_num_results
                    .unwrap_or(workspace.limits().default_search_results),
                Some(n) if (1..=MAX_RESULTS as i64).contains(&n) => {
                    (n as usize).min(limits.max_num_results.unwrap_or(MAX_RESULTS))
                }
                Some(n) => {
                    return Err(ToolError::invalid_arguments(format!(
                        "max_results must be 1-{MAX_RESULTS} (got {n})"
                    )));
                }
            };
            let ids = json!({"item_id": item_id, "output_index": output_index});
            log.emit("response.file_search_call.in_progress", ids.clone());
            log.emit("response.file_search_call.searching", ids.clone());
            let started = std::time::Instant::now();
            // Offered before any document (named in x_tools), it says so instead of opening
            // an empty index; a store whose count cannot be read is searched anyway.
            let mut stores_with_documents = Vec::with_capacity(stores.len());
            for store in &stores {
                if workspace.has_searchable(store).await.unwrap_or(true) {
                    stores_with_documents.push(store.clone());
                }
            }
            if stores_with_documents.is_empty() {
                let mut completed = ids;
                completed["results_count"] = json!(0);
                completed["x_timings_ms"] = json!({"total": started.elapsed().as_secs_f64() * 1e3});
                log.emit("response.file_search_call.completed", completed);
                return Ok(json!({"results": [], "note": NO_DOCUMENTS}));
            }
            let stores = stores_with_documents;
            let (hits, stages) = search_stores(&workspace, &stores, &query, limit)
                .await
                .map_err(|err| {
                    ToolError::new(
                        "search_failed",
                        format!("the documents could not be searched: {err}"),
                        "Try again, or answer without the documents.",
                    )
                })?;
            let at = std::time::Instant::now();
            let artifact_ids = workspace.artifact_ids_of_hits(&hits).await;
            let artifact_lookup = at.elapsed();
            let threshold = limits.score_threshold.unwrap_or(0.0);
            let results: Vec<Value> = hits
                .into_iter()
                .filter(|(_, hit)| hit.relevance_score >= threshold)
                .map(|(_, hit)| {
                    let mut result = json!({
                        "filename": hit.filename,
                        "chunk_text": hit.text,
                        "relevance_score": (hit.relevance_score * 1000.0).round() / 1000.0,
                        "artifact_id": artifact_ids
                            .get(&hit.document_id)
                            .map(ArtifactId::as_str)
                            .unwrap_or_default(),
                    });
                    // Where in its document the passage is ("Guide › Install"), when the
                    // document has a title or headings.
                    if let Some(path) = hit.heading_path {
                        result["heading_path"] = json!(path);
                    }
                    result
                })
                .collect();
            let mut completed = ids;
            completed["results_count"] = json!(results.len());
            // Where the call's time went, for benchmarks and operators (not for the model).
            let mut timings = stages.to_json();
            let ms = |d: std::time::Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
            timings["artifact_ids"] = json!(ms(artifact_lookup));
            timings["total"] = json!(ms(started.elapsed()));
            completed["x_timings_ms"] = timings;
            log.emit("response.file_search_call.completed", completed);
            Ok(json!({ "results": results }))
        })
    }
}
