//! `Application`: binds the listener first (so port 0 works and the login link shows the real
//! port), connects and migrates the database, records runs a previous process left unfinished
//! as interrupted, bootstraps the first admin, and mounts the routes.
//!
//! At start-up it also delivers answers a dead process left unfinished, continues the Deep
//! Think runs it left with a checkpoint, repairs half-committed uploads and resumes document
//! processing. Sweepers then run for good: expired uploads (every 10 minutes), the chats of
//! plain `/v1` requests past `http.v1_chat_retention_days` that nobody opened in the UI
//! (hourly, `sweep_api_chats`), unsent image attachments (hourly), idle chats' open indexes
//! (every minute), idle browser sessions (`tools::browser::Browsers`, every few seconds), and
//! the heap passivated chats freed (`os_limits::start_heap_trimmer`, every 30 s).

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use actix::Actor;

use actix_web::dev::Server;
use actix_web::{App, HttpServer, web};
use anyhow::Context;
use tracing_actix_web::TracingLogger;

use crate::agent::rate_limit::ToolRateLimiter;
use crate::agent::tool_round::new_tool_cache;
use crate::auth::{Accounts, LoginThrottle, bootstrap_admin};
use crate::chat::Chats;
use crate::cluster::Cluster;
use crate::config::{Config, MAX_CUT_OFF_ATTEMPTS};
use crate::http::admission::{Admission, admit};
use crate::llm::LlmClient;
use crate::state::AppState;
use crate::supervisor::ChatSupervisor;
use crate::supervisor::launch::Launcher;
use crate::telemetry::RequestSpan;
use crate::tools::SharedTool;
use crate::tools::ask_user::AskUser;
use crate::tools::calculator::Calculator;
use crate::tools::code_search::CodeSearch;
use crate::tools::email::{Mailer, SEND_EMAIL};
use crate::tools::fetch::Fetcher;
use crate::tools::fetch_url::FetchUrl;
use crate::tools::gitlab_code_search::GitlabCodeSearch;
use crate::tools::mcp::McpRegistry;
use crate::tools::web_search::{self, WebSearch};
use entities::ids::ChatId;

pub struct Application {
    address: SocketAddr,
    server: Server,
    state: AppState,
    login_url: Option<String>,
}

impl Application {
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        Self::build_with_tools(config, Vec::new()).await
    }

    /// Builds with extra tools beside the built-in ones (tests add slow or failing tools to
    /// exercise the loop's governance).
    pub async fn build_with_tools(
        config: Config,
        extra_tools: Vec<SharedTool>,
    ) -> anyhow::Result<Self> {
        // Configurations built in code (tests, embedders) are held to the same rules as loaded ones.
        config.validate()?;
        let listener = crate::os_limits::listen(&config.bind, config.http.listen_backlog)
            .with_context(|| format!("cannot listen on {}", config.bind))?;
        let address = listener.local_addr()?;
        let db = crate::db::connect(&config)
            .await
            .context("cannot open the database")?;
        crate::db::migrate(&db)
            .await
            .context("cannot migrate the database")?;
        // Several processes on one PostgreSQL: chats are owned through leases.
        let cluster = config.is_clustered().then(|| {
            Cluster::new(
                db.clone(),
                Cluster::new_process_id(),
                config.advertise_url(address),
                Duration::from_secs(config.cluster.lease_secs),
            )
        });
        // This process's own lease first: others tell by it that its chats are not abandoned.
        if let Some(cluster) = &cluster {
            cluster.announce().await?;
        }
        // Chats a live process holds: their runs and answers are that process's, not ours.
        let live = match &cluster {
            Some(cluster) => cluster.live_chat_keys().await?,
            None => Default::default(),
        };
        let orphaned = |chat_id: &entities::ids::ChatId| {
            !live.contains(&crate::cluster::chat_key(chat_id.as_str()))
        };
        // Deep Think runs with a checkpoint continue instead of being marked interrupted.
        let continuations: Vec<_> = crate::supervisor::continuation::continuable(&db)
            .await?
            .into_iter()
            .filter(|c| orphaned(&c.run.chat_id))
            .collect();
        let continuing: Vec<_> = continuations.iter().map(|c| c.run.id.clone()).collect();
        let interrupted = match &cluster {
            Some(cluster) => {
                crate::chat::recovery::recover_orphaned_runs(&db, cluster, &continuing).await?
            }
            None => crate::chat::recovery::recover_interrupted_runs(&db, &continuing).await?,
        };
        if interrupted > 0 {
            tracing::warn!(
                interrupted,
                "runs left unfinished by the previous process were marked interrupted, \
                 keeping the text they had streamed"
            );
        }
        let accounts = Accounts::new(
            db.clone(),
            config.auth.session_ttl_hours,
            config.auth.login_link_ttl_minutes,
        );
        let public_url = config.public_url(address);
        let login_url = bootstrap_admin(&accounts, &config, &public_url)
            .await
            .context("cannot create the first admin")?;
        let llm = LlmClient::new(&config.llm).context("cannot build the upstream client")?;
        warn_of_unserved_role_models(&llm, &config.deep_think);
        let embedder = crate::retrieval::embed::from_config(&config, &llm)
            .context("cannot set up the embedder")?;
        let supervisor = ChatSupervisor::new(
            db.clone(),
            Duration::from_secs(config.agent.chat_idle_secs),
            Duration::from_secs(config.agent.run_log_retention_secs),
            embedder.clone(),
        );
        let sessions = supervisor.registry();
        if let Some(cluster) = &cluster {
            sessions.join(cluster.clone(), continuing.clone());
            tracing::info!(
                process = cluster.process_id(),
                address = cluster.address(),
                "clustered on PostgreSQL: this process owns chats through leases"
            );
        }
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
        // MCP tools whose names are taken by these (or by a chat's own tools) are offered
        // prefixed with their server's id.
        let reserved = tools
            .iter()
            .map(|tool| tool.name().to_string())
            .chain(crate::supervisor::launch::CHAT_TOOL_NAMES.map(str::to_string))
            .chain(crate::supervisor::automations::AUTOMATION_TOOL_NAMES.map(str::to_string))
            .chain(config.email.is_some().then(|| SEND_EMAIL.to_string()))
            .chain(crate::tools::browser::BROWSER_TOOLS.map(str::to_string))
            .collect();
        let mcp = McpRegistry::start(&config.mcp, reserved);
        let sql = crate::tools::sql::SqlDatabases::start(&config.sql);
        let config_ask_user = config.ask_user.clone();
        let rate_per_minute = config.tools.rate_limit_per_minute;
        let workspace = crate::documents::Workspace::new(db.clone(), &config, embedder.clone());
        let login_throttle = Arc::new(LoginThrottle::new(&config.auth));
        let attachments = crate::chat::attachments::Attachments::new(
            db.clone(),
            &config.data_dir,
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
        let browsers = crate::tools::browser::Browsers::new(&config)
            .context("cannot set up the browser tools")?;
        if let Some(why) = browsers.unavailable() {
            tracing::info!(%why, "the browser tools are not offered");
        }
        browsers.start_sweeper(db.clone());
        let launcher = Launcher {
            attachments,
            agents: crate::chat::agents::Agents::new(db.clone()),
            metrics: Arc::new(crate::metrics::Metrics::new()),
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
            fetcher,
        };
        let state = AppState {
            launcher,
            accounts,
            login_throttle,
        };
        resume_unfinished_answers(&state).await;
        for continuation in continuations {
            let run = continuation.run.clone();
            match crate::supervisor::continuation::continue_run(&state.launcher, continuation).await
            {
                Ok(_) => {
                    tracing::info!(run_id = %run.id, "continued a Deep Think run from its checkpoint")
                }
                Err(err) => {
                    tracing::error!(run_id = %run.id, %err, "cannot continue a Deep Think run; it is recovered as interrupted");
                    if let Err(err) = crate::chat::recovery::recover_run(state.db(), &run).await {
                        tracing::error!(run_id = %run.id, %err, "cannot mark a run interrupted");
                    }
                }
            }
        }
        start_api_chat_sweeper(state.clone(), Duration::from_secs(3600));
        crate::os_limits::start_heap_trimmer();
        if let Some(cluster) = state.sessions().cluster().cloned() {
            // A chat taken from a process that died: the uploads it was committing and the
            // documents it was processing there are this process's now.
            let workspace = state.workspace().clone();
            state.sessions().on_takeover(Box::new(move |chat| {
                let workspace = workspace.clone();
                tokio::spawn(async move { take_over_documents(&workspace, &chat).await });
            }));
            start_orphan_recovery(state.clone(), cluster);
        }
        crate::supervisor::automations::scheduler::start(
            state.launcher.clone(),
            state.accounts.clone(),
        );
        // With several processes, the holder of `job:retention` sweeps.
        let cluster = state.sessions().cluster().cloned();
        state
            .workspace()
            .start_upload_sweeper(Duration::from_secs(600), cluster.clone());
        state
            .launcher
            .attachments
            .start_sweeper(Duration::from_secs(3600), cluster);
        // A chat's index is closed when the chat goes idle, as its session is.
        state.workspace().start_index_sweeper(
            Duration::from_secs(60),
            Duration::from_secs(state.config().agent.chat_idle_secs),
        );
        // With several processes, a chat's documents are resumed by the process that takes
        // the chat (a live owner is processing them).
        let mut ours = std::collections::HashSet::new();
        match state.workspace().chats_with_unfinished().await {
            Ok(chats) => {
                for chat in chats {
                    if state.sessions().claim(&chat).await.is_ok() {
                        ours.insert(chat);
                    }
                }
            }
            Err(err) => tracing::error!(%err, "could not look for unfinished documents"),
        }
        // Before the upload sweeper and the processing queue: what a dead process left between
        // moving an upload's bytes and recording them is completed, or marked error.
        match state
            .workspace()
            .recover_uncommitted(|chat| ours.contains(chat))
            .await
        {
            Ok(recovered) if recovered != crate::documents::Recovered::default() => {
                tracing::warn!(
                    completed = recovered.completed,
                    failed = recovered.failed,
                    "repaired uploads left half-committed"
                );
            }
            Ok(_) => {}
            Err(err) => tracing::error!(%err, "could not repair half-committed uploads"),
        }
        match state
            .workspace()
            .resume_unfinished(|chat| ours.contains(chat))
            .await
        {
            Ok(resumed) => {
                if resumed.requeued > 0 {
                    tracing::info!(count = resumed.requeued, "resumed processing of documents");
                }
                if resumed.failed > 0 {
                    tracing::warn!(
                        count = resumed.failed,
                        "documents whose processing was cut off repeatedly were marked error"
                    );
                }
            }
            Err(err) => tracing::error!(%err, "could not resume document processing"),
        }
        let server = serve(listener, state.clone())?;
        Ok(Self {
            address,
            server,
            state,
            login_url,
        })
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The one-time login link, when this start created the first admin.
    pub fn login_url(&self) -> Option<&str> {
        self.login_url.as_deref()
    }

    /// A handle that stops the server gracefully.
    pub fn handle(&self) -> actix_web::dev::ServerHandle {
        self.server.handle()
    }

    /// Serves until SIGINT/SIGTERM (or `handle().stop(true)`); in-flight requests get
    /// `shutdown_timeout_secs` to finish.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let served = self.server.await;
        // Stopped with its requests finished: its chats go to the other processes at once.
        if let Some(cluster) = self.state.sessions().cluster() {
            match cluster.release_all().await {
                Ok(released) => tracing::info!(released, "gave up this process's leases"),
                Err(err) => {
                    tracing::warn!(%err, "could not give up this process's leases; they expire")
                }
            }
        }
        served
    }
}

/// Connections a worker accepts beyond `http.max_in_flight`: room for the overflow to be told
/// `503 overloaded` and for health probes, which admission always lets through.
const MAX_CONNECTIONS_MARGIN: usize = 1_024;

fn serve(listener: TcpListener, state: AppState) -> anyhow::Result<Server> {
    let config = state.config().clone();
    let max_json_body_bytes = config.http.max_json_body_bytes;
    let max_v1_body_bytes = config.http.max_v1_body_bytes;
    let metrics = state.launcher.metrics.clone();
    crate::os_limits::check_open_files(config.http.max_in_flight);
    crate::os_limits::check_backlog(config.http.listen_backlog);
    // One count for the whole process, shared by every worker.
    let admission = Admission::new(config.http.max_in_flight, config.http.retry_after_secs);
    // Each worker accepts up to every request the process admits, and a few more, so that one
    // past `max_in_flight` is answered 503 by admission instead of waiting unaccepted.
    let max_connections = config
        .http
        .max_in_flight
        .saturating_add(MAX_CONNECTIONS_MARGIN);
    let forwarding = crate::http::forward::Forwarding::new(
        state.sessions().cluster().cloned(),
        Duration::from_secs(config.cluster.forward_connect_timeout_secs),
        max_v1_body_bytes.max(max_json_body_bytes),
    )
    .context("cannot build the client that forwards requests to a chat's owner")?;
    let data = web::Data::new(state);
    let mut server = HttpServer::new(move || {
        let (metrics, admission) = (metrics.clone(), admission.clone());
        App::new()
            // Innermost: a request forwarded to its chat's owner is admitted and counted here
            // like any other, for as long as its answer streams.
            .wrap(forwarding.clone())
            .wrap_fn(move |req, service| admit(admission.clone(), req, service))
            .wrap_fn(move |req, service| crate::http::count_request(metrics.clone(), req, service))
            .wrap_fn(crate::http::request_id_header)
            .wrap(TracingLogger::<RequestSpan>::new())
            .app_data(data.clone())
            .configure(|cfg| crate::http::configure(cfg, max_json_body_bytes, max_v1_body_bytes))
    })
    .shutdown_timeout(config.shutdown_timeout_secs)
    .max_connections(max_connections)
    // Without it, Nagle's algorithm holds a stream's second small write until the first is
    // acknowledged (~40 ms with delayed ACKs): measured by benches/overhead.rs.
    .tcp_nodelay(true)
    // HTTP/1.1, and HTTP/2 with prior knowledge (h2c) for a fronting proxy that multiplexes
    // many clients' streams over a few connections (Caddy's `versions h2c`, Envoy).
    .listen_auto_h2c(listener)?;
    if let Some(workers) = config.workers {
        server = server.workers(workers);
    }
    Ok(server.run())
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

/// Resumes the runs of questions that were answered while a previous process was running but
/// whose continuation never finished: the stored answer is delivered, once.
async fn resume_unfinished_answers(state: &AppState) {
    let unfinished = match crate::chat::asks::unfinished(state.db()).await {
        Ok(unfinished) => unfinished,
        Err(err) => {
            tracing::error!(%err, "cannot look for unfinished answers");
            return;
        }
    };
    for ask in unfinished {
        let Some(answer) = ask.answer.clone() else {
            continue;
        };
        // With several processes, only the process that takes the chat resumes it (a live
        // owner is running it).
        if state.sessions().claim(&ask.chat_id).await.is_err() {
            continue;
        }
        let correlation_id = ask.correlation_id.clone();
        // The continuation ran once when the answer came, then once per earlier start.
        let cut_offs = ask.resume_attempts + 1;
        if cut_offs >= MAX_CUT_OFF_ATTEMPTS {
            let reason = format!(
                "the run's continuation after this answer was cut off {cut_offs} times \
                 (a crash or restart); it is not resumed again"
            );
            match crate::chat::asks::fail_unresumable(state.db(), &ask, &reason).await {
                Ok(()) => {
                    tracing::warn!(%correlation_id, cut_offs, "gave up on an answered question")
                }
                Err(err) => {
                    tracing::error!(%correlation_id, %err, "cannot fail an answered question")
                }
            }
            continue;
        }
        if let Err(err) = crate::chat::asks::record_resumption(state.db(), &correlation_id).await {
            tracing::error!(%correlation_id, %err, "cannot record a resumption; not resuming");
            continue;
        }
        match crate::supervisor::resume::resume_answered(&state.launcher, ask, answer, None).await {
            Ok(log) => {
                tracing::info!(%correlation_id, run_id = %log.run_id, "resumed an answered question")
            }
            Err(err) => {
                tracing::error!(%correlation_id, %err, "cannot resume an answered question")
            }
        }
    }
}

/// Deletes chats made by `/v1` requests that nobody opened in the UI and nobody used for
/// `http.v1_chat_retention_days`, with their sessions and indexes; returns how many.
pub async fn sweep_api_chats(state: &AppState) -> Result<usize, sea_orm::DbErr> {
    let days = i64::try_from(state.config().http.v1_chat_retention_days).unwrap_or(i64::MAX);
    let before = chrono::Utc::now() - chrono::Duration::days(days.min(36_500));
    let mut swept = 0;
    loop {
        let ids = state.chats().unused_api_chats(before, 100).await?;
        if ids.is_empty() {
            return Ok(swept);
        }
        for id in ids {
            state.launcher.forget_any_chat(&id).await?;
            swept += 1;
        }
    }
}

fn start_api_chat_sweeper(state: AppState, every: Duration) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        loop {
            ticks.tick().await;
            if !crate::cluster::is_mine(state.sessions().cluster(), "retention").await {
                continue;
            }
            match sweep_api_chats(&state).await {
                Ok(0) => {}
                Ok(count) => {
                    tracing::info!(count, "swept chats of /v1 requests past their retention")
                }
                Err(err) => tracing::warn!(%err, "could not sweep the chats of /v1 requests"),
            }
        }
    });
}

/// With several processes: every lease time, the holder of `job:recovery` marks interrupted
/// the runs of chats whose owner died (their leases expired), keeping their drafts, as a
/// restart would; a chat someone opens first is recovered by the process taking it.
/// A chat's documents left unfinished by a process that died (the chat is this process's
/// now): half-committed uploads are repaired, cut-off processing resumed.
async fn take_over_documents(workspace: &crate::documents::Workspace, chat: &ChatId) {
    match workspace.recover_uncommitted(|c| c == chat).await {
        Ok(recovered) if recovered != crate::documents::Recovered::default() => {
            tracing::warn!(%chat, completed = recovered.completed, failed = recovered.failed,
                "repaired uploads a dead process left half-committed");
        }
        Ok(_) => {}
        Err(err) => tracing::error!(%chat, %err, "could not repair half-committed uploads"),
    }
    match workspace.resume_unfinished(|c| c == chat).await {
        Ok(resumed) if resumed.requeued + resumed.failed > 0 => {
            tracing::info!(%chat, requeued = resumed.requeued, failed = resumed.failed,
                "resumed the documents a dead process was processing");
        }
        Ok(_) => {}
        Err(err) => tracing::error!(%chat, %err, "could not resume document processing"),
    }
}

/// Every lease time, the holder of `job:recovery` recovers what dead processes left in chats
/// nobody opens: their runs (interrupted, drafts kept), and their documents (the chat is
/// taken, which hands them to `take_over_documents`).
fn start_orphan_recovery(state: AppState, cluster: Cluster) {
    let db = state.db().clone();
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(cluster.lease());
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let key = crate::cluster::job_key("recovery");
            match cluster.claim(&key).await {
                Ok(crate::cluster::Claim::Mine { .. }) => {}
                Ok(crate::cluster::Claim::Elsewhere { .. }) => continue,
                Err(err) => {
                    tracing::warn!(%err, "cannot take the recovery job's lease");
                    continue;
                }
            }
            match crate::chat::recovery::recover_orphaned_runs(&db, &cluster, &[]).await {
                Ok(0) => {}
                Ok(count) => tracing::warn!(
                    count,
                    "runs of a process that stopped renewing its chats were marked interrupted, \
                     keeping the text they had streamed"
                ),
                Err(err) => tracing::warn!(%err, "could not recover the runs of a dead process"),
            }
            let chats = match state.workspace().chats_with_unfinished().await {
                Ok(chats) => chats,
                Err(err) => {
                    tracing::warn!(%err, "could not look for unfinished documents");
                    continue;
                }
            };
            for chat in chats {
                let key = crate::cluster::chat_key(chat.as_str());
                if matches!(cluster.abandoned(&key).await, Ok(true))
                    && let Err(err) = state.sessions().claim(&chat).await
                {
                    tracing::warn!(%chat, %err, "could not take a dead process's documents");
                }
            }
        }
    });
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
