//! `file_search` (seed 000, seed 002): searches the chat's uploaded documents with the hybrid
//! index. Offered only when the chat has searchable documents. Emits
//! `response.file_search_call.in_progress`, `.searching` and `.completed`, each with the call's
//! `item_id` and `output_index`; `.completed` also carries `results_count` and `x_timings_ms`
//! (each stage's milliseconds: query embedding, lock wait, BM25, vectors, fusion, chunk texts,
//! artifact ids, total).

use entities::ids::{ArtifactId, DocumentId};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::chat_context::ChatContext;
use super::schema::{parameters_for, set_keyword};
use super::{ProgressKind, Tool, ToolError, ToolFuture, parse_arguments};
use crate::documents::Workspace;
use crate::llm::wire::ToolDefinition;

/// Most results one call may ask for.
pub const MAX_RESULTS: usize = 20;
/// Longest query in characters.
pub const MAX_QUERY_CHARS: usize = 2_000;

pub struct FileSearchTool {
    ctx: Arc<ChatContext>,
    workspace: Workspace,
    /// Numbers this run's file_search calls (`output_index`).
    calls: AtomicUsize,
}

impl FileSearchTool {
    pub fn new(ctx: Arc<ChatContext>, workspace: Workspace) -> Self {
        Self {
            ctx,
            workspace,
            calls: AtomicUsize::new(0),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
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

impl FileSearchTool {
    /// The definition, from the limits in `config` (for listing tools without a chat).
    pub fn describe(config: &crate::config::Config) -> ToolDefinition {
        let mut parameters = parameters_for::<Args>();
        let default = config.documents.default_search_results;
        set_keyword(
            &mut parameters,
            "/properties/max_results",
            "default",
            default,
        );
        ToolDefinition::function(
            "file_search",
            "Search the content of the documents uploaded to this chat (PDFs, code, text, HTML). \
             Returns the most relevant passages with their file names.",
            parameters,
        )
    }
}

impl Tool for FileSearchTool {
    fn name(&self) -> &'static str {
        "file_search"
    }

    fn definition(&self) -> ToolDefinition {
        Self::describe(&self.ctx.config)
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    fn run(&self, arguments: Value) -> ToolFuture {
        let call_id = format!("call_{}", uuid::Uuid::now_v7().simple());
        self.run_call(&call_id, arguments)
    }

    /// The call's events (and the Responses API's output item) are `fs_<call id>`.
    fn run_call(&self, call_id: &str, arguments: Value) -> ToolFuture {
        let item_id = item_id(call_id);
        let ctx = Arc::clone(&self.ctx);
        let workspace = self.workspace.clone();
        let output_index = self.calls.fetch_add(1, Ordering::Relaxed);
        Box::pin(async move {
            let args: Args = parse_arguments(arguments)?;
            let query = args.query.trim().to_string();
            if query.is_empty() || query.chars().count() > MAX_QUERY_CHARS {
                return Err(ToolError::invalid_arguments(format!(
                    "query must be 1-{MAX_QUERY_CHARS} characters"
                )));
            }
            let limit = match args.max_results {
                None => workspace.limits().default_search_results,
                Some(n) if (1..=MAX_RESULTS as i64).contains(&n) => n as usize,
                Some(n) => {
                    return Err(ToolError::invalid_arguments(format!(
                        "max_results must be 1-{MAX_RESULTS} (got {n})"
                    )));
                }
            };
            let ids = json!({"item_id": item_id, "output_index": output_index});
            ctx.emit("response.file_search_call.in_progress", ids.clone());
            ctx.emit("response.file_search_call.searching", ids.clone());
            let started = std::time::Instant::now();
            let found = workspace
                .search(&ctx.chat_id, &query, limit)
                .await
                .map_err(|err| {
                    ToolError::new(
                        "search_failed",
                        format!("the documents could not be searched: {err}"),
                        "Try again, or answer without the documents.",
                    )
                })?;
            let at = std::time::Instant::now();
            let mut documents: Vec<DocumentId> = Vec::with_capacity(found.hits.len());
            for hit in &found.hits {
                if !documents.contains(&hit.document_id) {
                    documents.push(hit.document_id.clone());
                }
            }
            let artifact_ids = workspace
                .artifact_ids(&ctx.chat_id, &documents)
                .await
                .unwrap_or_default();
            let artifact_lookup = at.elapsed();
            let results: Vec<Value> = found
                .hits
                .into_iter()
                .map(|hit| {
                    json!({
                        "filename": hit.filename,
                        "chunk_text": hit.text,
                        "relevance_score": (hit.relevance_score * 1000.0).round() / 1000.0,
                        "artifact_id": artifact_ids
                            .get(&hit.document_id)
                            .map(ArtifactId::as_str)
                            .unwrap_or_default(),
                    })
                })
                .collect();
            let mut completed = ids;
            completed["results_count"] = json!(results.len());
            // Where the call's time went, for benchmarks and operators (not for the model).
            let mut timings = found.stages.to_json();
            let ms = |d: std::time::Duration| (d.as_secs_f64() * 1e6).round() / 1e3;
            timings["artifact_ids"] = json!(ms(artifact_lookup));
            timings["total"] = json!(ms(started.elapsed()));
            completed["x_timings_ms"] = timings;
            ctx.emit("response.file_search_call.completed", completed);
            Ok(json!({ "results": results }))
        })
    }
}
