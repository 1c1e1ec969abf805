//! `Application`: binds the listener first (so port 0 works and the login link shows the real
//! port), connects and migrates the database, recovers what a previous process left
//! (`supervisor::recovery`, in its stated order), bootstraps the first admin, builds the state,
//! starts the background jobs (`supervisor::jobs`, only after recovery) and serves the routes.
//! It wires and serves; the work is below.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::{App, HttpServer, web};
use anyhow::Context;
use tracing_actix_web::TracingLogger;

use crate::auth::{Accounts, LoginThrottle, bootstrap_admin};
use crate::cluster::Cluster;
use crate::config::Config;
use crate::http::admission::{Admission, admit};
use crate::state::AppState;
use crate::supervisor::launch::Launcher;
use crate::telemetry::RequestSpan;
use crate::tools::SharedTool;

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
        let mut db = crate::db::connect(&config)
            .await
            .context("cannot open the database")?;
        // Before any clone: every statement of this process is counted (`/metrics`).
        let metrics = Arc::new(crate::metrics::Metrics::new());
        crate::db::count_statements(&mut db, metrics.db_statements_counter());
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
        // Recovery step 1, before any session exists.
        let continuations =
            crate::supervisor::recovery::recover_runs(&db, cluster.as_ref()).await?;
        let continuing: Vec<_> = continuations.iter().map(|c| c.run.id.clone()).collect();
        let accounts = Accounts::new(
            db.clone(),
            config.auth.session_ttl_hours,
            config.auth.login_link_ttl_minutes,
        )
        .with_max_api_keys_per_user(config.auth.max_api_keys_per_user);
        let public_url = config.public_url(address);
        let login_url = bootstrap_admin(&accounts, &config, &public_url)
            .await
            .context("cannot create the first admin")?;
        let login_throttle = Arc::new(LoginThrottle::new(&config.auth));
        let launcher = Launcher::build(
            config,
            db,
            metrics,
            cluster.as_ref(),
            continuing,
            extra_tools,
        )?;
        let state = AppState {
            launcher,
            accounts,
            login_throttle,
        };
        crate::supervisor::recovery::recover(&state.launcher, continuations).await;
        crate::supervisor::jobs::start(&state.launcher, &state.accounts);
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
    let open_files = crate::os_limits::check_open_files(config.http.max_in_flight);
    crate::os_limits::check_backlog(config.http.listen_backlog);
    // One count for the whole process, shared by every worker.
    let admission = Admission::new(config.http.max_in_flight, config.http.retry_after_secs);
    // Each worker accepts up to every request the process admits, and a few more, so that one
    // past `max_in_flight` is answered 503 by admission instead of waiting unaccepted; but no
    // more than the open-file limit holds (then the rest wait unaccepted in the backlog).
    let workers = config.workers.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get)
    });
    let max_connections = crate::os_limits::connections_per_worker(
        open_files,
        config.http.max_in_flight,
        workers,
        config
            .http
            .max_in_flight
            .saturating_add(MAX_CONNECTIONS_MARGIN),
    );
    tracing::info!(
        workers,
        max_connections,
        "connections each HTTP worker accepts"
    );
    let forwarding = crate::http::forward::Forwarding::new(
        state.sessions().cluster().cloned(),
        Duration::from_secs(config.cluster.forward_connect_timeout_secs),
        config.cluster.forward_timeout(),
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

/// Deletes the chats of `/v1` requests past their retention now (`Launcher::sweep_api_chats`;
/// the `API_CHAT_SWEEP` job does it hourly); returns how many.
pub async fn sweep_api_chats(state: &AppState) -> Result<usize, sea_orm::DbErr> {
    state.launcher.sweep_api_chats().await
}
