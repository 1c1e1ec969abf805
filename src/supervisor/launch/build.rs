//! Building the `Launcher` from the configuration at start-up: the model servers, the embedder,
//! the supervisor (joined to the cluster, when there is one), the fetcher every outbound fetch
//! goes through, the tools (the built-in ones, a test's extra ones, and the MCP servers', whose
//! names may not shadow a built-in one), `execute_sql`'s databases, email and the browsers.

use std::sync::Arc;
use std::time::Duration;

use actix::Actor;
use anyhow::Context;
use entities::ids::RunId;
use sea_orm::DatabaseConnection;

use super::Launcher;
use crate::agent::rate_limit::ToolRateLimiter;
use crate::agent::tool_cache::new_tool_cache;
use crate::chat::Chats;
use crate::cluster::Cluster;
use crate::config::Config;
use crate::llm::LlmClient;
use crate::supervisor::ChatSupervisor;
use crate::tools::SharedTool;
use crate::tools::ask_user::AskUser;
use crate::tools::calculator::Calculator;
use crate::tools::code_search::CodeSearch;
use crate::tools::email::Mailer;
use crate::tools::fetch::Fetcher;
use crate::tools::fetch_url::FetchUrl;
use crate::tools::gitlab_code_search::GitlabCodeSearch;
use crate::tools::mcp::McpRegistry;
use crate::tools::web_search::{self, WebSearch};

impl Launcher {
    /// Builds every handle runs share (`metrics` already counts `db`'s statements). `continuing`: the Deep Think runs recovery continues
    /// (their chats' leases are taken for them). Call inside the actix system.
    pub fn build(
        config: Config,
        db: DatabaseConnection,
        metrics: Arc<crate::metrics::Metrics>,
        cluster: Option<&Cluster>,
        continuing: Vec<RunId>,
        extra_tools: Vec<SharedTool>,
    ) -> anyhow::Result<Launcher> {
        let llm = LlmClient::new(&config.llm).context("cannot build the upstream client")?;
        warn_of_unserved_role_models(&llm, &config.deep_think);
        let embedder = crate::retrieval::embed::from_config(&config, &llm)
            .context("cannot set up the embedder")?;
        // On SQLite, the turns' writes share commits on a connection of the writer's own.
        let group_commit = match crate::chat::group_commit::GroupCommit::start(
            &db,
            Duration::from_millis(config.database.busy_timeout_ms),
            Some(metrics.db_statements_counter()),
        ) {
            Ok(writer) => writer,
            Err(err) => {
                tracing::warn!(%err, "no group commit: turns write on their own");
                None
            }
        };
        let supervisor = ChatSupervisor::new(
            db.clone(),
            group_commit,
            Duration::from_secs(config.agent.chat_idle_secs),
            Duration::from_secs(config.agent.run_log_retention_secs),
            embedder.clone(),
        );
        let sessions = supervisor.registry();
        if let Some(cluster) = cluster {
            sessions.join(cluster.clone(), continuing.clone());
            tracing::info!(
                process = cluster.process_id(),
                address = cluster.address(),
                "clustered on PostgreSQL: this process owns chats through leases"
            );
        }
        // Every user's messages, searchable across their chats: the chats' writers report to it.
        let search = crate::chat::search::ChatSearch::start(
            db.clone(),
            &config.data_dir,
            config.documents.stemming.into(),
            &config.search,
        )
        .context("cannot start the chat search indexer")?;
        sessions.index_messages_in(search);
        let runs = supervisor.runs();
        // One fetcher for the research tools and the image URLs of `/v1` requests, so every
        // outbound fetch is SSRF-guarded alike.
        let fetcher = Arc::new(
            Fetcher::new(
                &config.tools,
                Duration::from_secs(config.agent.tool_cache_ttl_secs),
            )
            .context("cannot build the page fetcher")?,
        );
        let mut tools = research_tools(&config, fetcher.clone())?;
        tools.extend(extra_tools);
        // An MCP tool by a built-in tool's name (the table's, whatever this server configures)
        // or a test's extra tool's is offered prefixed with its server's id.
        let reserved = crate::tools::registry::reserved_names()
            .map(str::to_string)
            .chain(tools.iter().map(|tool| tool.name().to_string()))
            .collect();
        let mcp = McpRegistry::start(&config.mcp, reserved);
        let sql = crate::tools::sql::SqlDatabases::start(&config.sql);
        let config_ask_user = config.ask_user.clone();
        let rate_per_minute = config.tools.rate_limit_per_minute;
        let storage = crate::storage::Storage::from_config(&config.storage, &config.data_dir)
            .context("cannot set up the file storage")?;
        if !storage.is_directory() {
            tracing::info!(storage = %storage.describe(), "files are kept in an object store");
        }
        let workspace = crate::documents::Workspace::new(
            db.clone(),
            &config,
            embedder.clone(),
            storage.clone(),
        );
        if let Some(cluster) = sessions.cluster() {
            // A chat taken from another process has its index rebuilt from the database here.
            let taken = workspace.clone();
            sessions.on_taken(Box::new(move |chat| taken.refresh_index(&chat)));
            // A chat's document writes are fenced by its lease, taken as its session takes it.
            let registry = sessions.clone();
            workspace.join(
                cluster.clone(),
                Arc::new(move |chat| {
                    let registry = registry.clone();
                    Box::pin(async move { registry.own(&chat).await.is_ok() })
                }),
            );
        }
        let attachments = crate::chat::attachments::Attachments::new(
            db.clone(),
            storage.clone(),
            config.attachments.clone(),
        );
        let email = match &config.email {
            Some(email) => Some(Arc::new(
                Mailer::new(
                    email,
                    db.clone(),
                    Duration::from_secs(config.agent.tool_timeout_secs),
                )
                .context("cannot set up email")?,
            )),
            None => None,
        };
        let browsers = crate::tools::browser::Browsers::new(&config, storage.clone())
            .context("cannot set up the browser tools")?;
        if let Some(why) = browsers.unavailable() {
            tracing::info!(%why, "the browser tools are not offered");
        }
        let containers = crate::tools::code_interpreter::Containers::new(
            &config.code_interpreter,
            db.clone(),
            storage.clone(),
            workspace.clone(),
            metrics.clone(),
        );
        if let Some(why) = containers.unavailable() {
            tracing::info!(%why, "the code interpreter is not offered");
        }
        let remote_mcp = Arc::new(crate::tools::mcp::remote::RemoteMcp::new(
            &config.mcp,
            fetcher.clone(),
            Duration::from_secs(config.agent.tool_timeout_secs.clamp(1, 30)),
        ));
        // With several processes on the database, another may change what a turn reads.
        let turn_cache = match sessions.cluster() {
            Some(_) => crate::chat::turn_cache::TurnCache::disabled(),
            None => crate::chat::turn_cache::TurnCache::enabled(),
        };
        Ok(Launcher {
            turn_cache,
            remote_mcp,
            attachments,
            agents: crate::chat::agents::Agents::new(db.clone())
                .with_max_per_user(config.agent.max_agents_per_user),
            metrics,
            tool_cache: new_tool_cache(Duration::from_secs(config.agent.tool_cache_ttl_secs)),
            config: Arc::new(config),
            chats: Chats::new(db.clone()),
            db,
            llm,
            workspace,
            embedder,
            sessions,
            runs,
            supervisor: supervisor.start(),
            tools: Arc::new(tools),
            ask_user: Arc::new(AskUser::new(config_ask_user)),
            rate_limiter: Arc::new(ToolRateLimiter::new(rate_per_minute)),
            mcp,
            sql,
            email,
            browsers,
            containers,
            fetcher,
        })
    }
}

/// The research tools this configuration offers: the calculator, fetch_url and web_search
/// always (web_search asks `tools.web_search_provider`'s engine; with `none` it answers that
/// search is not configured, so a request naming it is never silently without it),
/// code_search with a GitHub token, gitlab_code_search with a GitLab URL. web_search and
/// fetch_url share one fetcher, so one's pages serve the other.
fn research_tools(config: &Config, fetcher: Arc<Fetcher>) -> anyhow::Result<Vec<SharedTool>> {
    let tools_config = &config.tools;
    let search_engine =
        web_search::provider(tools_config).context("cannot build the web search provider")?;
    let mut tools: Vec<SharedTool> = vec![
        Arc::new(Calculator::new(tools_config)),
        Arc::new(FetchUrl::new(fetcher.clone(), tools_config)),
        Arc::new(WebSearch::new(search_engine, fetcher, tools_config)),
    ];
    if tools_config.github_token.is_some() {
        tools.push(Arc::new(CodeSearch::new(tools_config)));
    }
    if let Some(gitlab) = GitlabCodeSearch::new(tools_config) {
        tools.push(Arc::new(gitlab));
    }
    Ok(tools)
}

/// Deep Think role models on providers that discover their models can only be checked against
/// the running servers (declared ones are checked in `Config::validate`): each one no provider
/// serves now is a warning naming the servers that did not answer, without holding up start-up.
fn warn_of_unserved_role_models(llm: &LlmClient, deep_think: &crate::config::DeepThinkConfig) {
    let roles: Vec<(&'static str, String)> = deep_think
        .role_models()
        .map(|(setting, model)| (setting, model.to_string()))
        .collect();
    if roles.is_empty() {
        return;
    }
    let llm = llm.clone();
    tokio::spawn(async move {
        for (setting, model) in roles {
            if let Err(err) = llm.check_model(&model).await {
                let down: Vec<String> = llm
                    .statuses()
                    .await
                    .into_iter()
                    .filter(|p| p.status != "ok")
                    .map(|p| p.id)
                    .collect();
                tracing::warn!(
                    setting,
                    %err,
                    unreachable_providers = %down.join(", "),
                    "a Deep Think role names a model no provider serves now; its runs fail \
                     until a server offers it"
                );
            }
        }
    });
}
