//! `Guard`: the SSRF check of a URL before it is requested (address hosts in any spelling,
//! allow-listed names on their ports, `localhost` names) and of the addresses a name resolves
//! to.

use std::net::IpAddr;

use url::{Host, Url};

use super::{AllowList, Refusal, forbidden_reason, parse_host_ip};

/// The SSRF check applied to every URL before it is requested and to every resolved address.
#[derive(Debug, Default)]
pub struct Guard {
    allow: AllowList,
}

impl Guard {
    pub fn new(allow: AllowList) -> Self {
        Self { allow }
    }

    /// Checks a URL's host before it is requested. An address host is judged here (reqwest
    /// does not resolve those); a name is judged by `CheckedResolver` when it is resolved.
    pub fn check_url(&self, url: &Url) -> Result<(), Refusal> {
        let port = url.port_or_known_default().unwrap_or(0);
        let ip = match url.host() {
            None => return Err(Refusal(format!("{url} has no host"))),
            Some(Host::Ipv4(v4)) => IpAddr::V4(v4),
            Some(Host::Ipv6(v6)) => IpAddr::V6(v6),
            Some(Host::Domain(name)) => match parse_host_ip(name) {
                Some(ip) => ip,
                None => return self.check_name(name, port),
            },
        };
        match forbidden_reason(ip) {
            Some(reason) if !self.allow.allows_socket(ip, port) => {
                Err(Refusal(format!("{ip} is {reason}")))
            }
            _ => Ok(()),
        }
    }

    /// A URL naming a host: an allow-listed name only on its listed ports (the resolver lets
    /// it reach anything, whatever the port); `localhost` names never, unless listed. Other
    /// names are judged when they are resolved.
    fn check_name(&self, name: &str, port: u16) -> Result<(), Refusal> {
        match self.allow.host_ports(name) {
            Some(ports) if ports.contains(&port) => Ok(()),
            Some(ports) => {
                let mut listed: Vec<String> = ports.iter().map(u16::to_string).collect();
                listed.sort();
                Err(Refusal(format!(
                    "{name} is allow-listed for port {} only, not {port}",
                    listed.join(", ")
                )))
            }
            // A fully qualified name (`localhost.`) is the same name.
            None if {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                name == "localhost" || name.ends_with(".localhost")
            } =>
            {
                Err(Refusal(format!("{name} is a loopback name")))
            }
            None => Ok(()),
        }
    }

    /// Keeps the addresses `host` may connect to; refuses when none is left. An allow-listed
    /// name keeps them all (`check_url` has held it to its ports).
    pub fn filter_resolved(&self, host: &str, ips: Vec<IpAddr>) -> Result<Vec<IpAddr>, Refusal> {
        if self.allow.host_ports(host).is_some() {
            return Ok(ips);
        }
        let mut refused = None;
        let allowed: Vec<IpAddr> = ips
            .into_iter()
            .filter(|&ip| match forbidden_reason(ip) {
                Some(reason) => {
                    refused.get_or_insert((ip, reason));
                    false
                }
                None => true,
            })
            .collect();
        match (allowed.is_empty(), refused) {
            (true, Some((ip, reason))) => Err(Refusal(format!(
                "{host} resolves to {ip}, which is {reason}"
            ))),
            (true, None) => Err(Refusal(format!("{host} resolves to no address"))),
            (false, _) => Ok(allowed),
        }
    }
}
