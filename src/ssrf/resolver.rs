//! Resolving names: `HostResolver` (injectable, so tests can map names to any address), the
//! system's through tokio, and `CheckedResolver`, the one reqwest connects through, which hands
//! it only addresses the `Guard` passed.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use futures_util::future::BoxFuture;

use super::Guard;

/// Resolves host names to addresses; injectable so tests can map names to any address.
pub trait HostResolver: Send + Sync + 'static {
    fn resolve(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>>;
}

/// The system resolver, through tokio.
pub struct SystemResolver;

impl HostResolver for SystemResolver {
    fn resolve(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        let host = host.to_string();
        Box::pin(async move {
            let addresses = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addresses.map(|socket| socket.ip()).collect())
        })
    }
}

/// The resolver reqwest connects through: resolves once and returns only checked addresses.
pub struct CheckedResolver {
    pub inner: Arc<dyn HostResolver>,
    pub guard: Arc<Guard>,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let lookup = self.inner.resolve(&host);
        let guard = Arc::clone(&self.guard);
        Box::pin(async move {
            let ips = lookup.await?;
            let allowed = guard.filter_resolved(&host, ips)?;
            // Port 0 is replaced by the URL's port.
            let addresses: reqwest::dns::Addrs =
                Box::new(allowed.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addresses)
        })
    }
}
