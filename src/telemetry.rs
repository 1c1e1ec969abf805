//! Logging: a `tracing` subscriber, as text or JSON lines, filtered by `log.filter`. Each HTTP
//! request runs in a span carrying its request id (see `http::request_id`).

use tracing_subscriber::EnvFilter;

use crate::config::{LogConfig, LogFormat};

/// Installs the global subscriber. A second call (tests start many apps) is a no-op.
pub fn init(config: &LogConfig) {
    let filter = EnvFilter::try_new(&config.filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match config.format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
