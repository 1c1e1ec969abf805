//! `AllowList`: the configured `HOST:PORT` entries exempt from the SSRF rules (for tests' fake
//! servers), parsed strictly (`AllowEntryError`), each exempting one port, never a whole host.

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};

use super::parse_host_ip;

/// Addresses and hosts exempt from the SSRF rules (config `tools.ssrf_allow_list`), so tests
/// can reach fake servers on 127.0.0.1. Every entry is `HOST:PORT` and exempts that port only,
/// never a whole host (a bare `127.0.0.1` would open the server itself and everything else on
/// loopback): `IP:PORT` (IPv6 as `[::1]:PORT`) exempts URLs naming that address and port; a
/// `name:PORT` lets that name resolve to any address, and URLs naming it on another port are
/// refused, since the resolver never sees a port.
#[derive(Debug, Default, Clone)]
pub struct AllowList {
    sockets: HashSet<SocketAddr>,
    hosts: HashMap<String, HashSet<u16>>,
}

/// Why an allow-list entry is not `HOST:PORT`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowEntryError {
    #[error(
        "tools.ssrf_allow_list entry {0:?} has no port: write it as HOST:PORT (IPv6 as \
         [ADDRESS]:PORT); an entry exempts one port, never a whole host"
    )]
    NoPort(String),
    #[error("tools.ssrf_allow_list entry {0:?} has an invalid port: use 1 to 65535")]
    BadPort(String),
}

impl AllowList {
    /// Parses the configured entries; any entry that is not `HOST:PORT` is an error.
    pub fn parse(entries: &[String]) -> Result<Self, AllowEntryError> {
        let mut list = Self::default();
        for raw in entries {
            let entry = raw.trim().to_ascii_lowercase();
            if let Ok(socket) = entry.parse::<SocketAddr>() {
                list.insert_socket(socket, raw)?;
                continue;
            }
            let Some((host, port)) = entry.rsplit_once(':') else {
                return Err(AllowEntryError::NoPort(raw.clone()));
            };
            // `::1` or `[::1]` split at their own colons: an address with no port.
            if host.is_empty() || port.is_empty() || host.contains(':') || host.starts_with('[') {
                return Err(AllowEntryError::NoPort(raw.clone()));
            }
            let port: u16 = port
                .parse()
                .map_err(|_| AllowEntryError::BadPort(raw.clone()))?;
            match parse_host_ip(host) {
                Some(ip) => list.insert_socket(SocketAddr::new(ip, port), raw)?,
                None if port == 0 => return Err(AllowEntryError::BadPort(raw.clone())),
                None => {
                    list.hosts
                        .entry(host.trim_end_matches('.').to_string())
                        .or_default()
                        .insert(port);
                }
            }
        }
        Ok(list)
    }

    fn insert_socket(&mut self, socket: SocketAddr, raw: &str) -> Result<(), AllowEntryError> {
        if socket.port() == 0 {
            return Err(AllowEntryError::BadPort(raw.to_string()));
        }
        self.sockets.insert(socket);
        Ok(())
    }

    /// The ports `host` is listed with, if it is listed.
    pub(super) fn host_ports(&self, host: &str) -> Option<&HashSet<u16>> {
        self.hosts
            .get(host.trim_end_matches('.').to_ascii_lowercase().as_str())
    }

    pub(super) fn allows_socket(&self, ip: IpAddr, port: u16) -> bool {
        self.sockets.contains(&SocketAddr::new(ip, port))
    }
}
