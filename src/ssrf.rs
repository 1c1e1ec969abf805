//! SSRF protection for page fetches: which addresses are off limits, how resolvers spell IPv4
//! hosts, the test-only allow-list, and the DNS resolver reqwest connects through, which hands
//! it only addresses that passed the check (so there is no window between checking a name and
//! connecting to it). Fetching itself is `tools::fetch::Fetcher`'s; configuration checks its
//! allow-list with `AllowList::parse`, so this sits on the lowest floor.

use std::collections::{HashMap, HashSet};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use url::{Host, Url};

/// Why an address or URL may not be fetched, in words fit for the model: "refused: ...".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused: {0}")]
pub struct Refusal(String);

/// Whether `ip` must never be reached by a fetch (no allow-list applied).
pub fn is_forbidden(ip: IpAddr) -> bool {
    forbidden_reason(ip).is_some()
}

/// What kind of forbidden address `ip` is ("a loopback address"), or `None` when it is public.
pub fn forbidden_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let reason = match (a, b, c) {
        _ if ip.is_unspecified() => "an unspecified address",
        (0, _, _) => "in 0.0.0.0/8 (this network)",
        (127, _, _) => "a loopback address",
        (10, _, _) | (192, 168, _) => "a private address",
        (172, 16..=31, _) => "a private address",
        (169, 254, _) => "a link-local address",
        (100, 64..=127, _) => "a shared (carrier-grade NAT) address",
        (192, 0, 0) | (192, 88, 99) => "a reserved address",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (198, 18..=19, _) => "a benchmarking address",
        _ if ip.is_broadcast() => "a broadcast address",
        (224..=239, _, _) => "a multicast address",
        (240..=255, _, _) => "a reserved address",
        _ => return None,
    };
    Some(reason)
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    let embedded = |high: usize| {
        let [a, b] = segments[high].to_be_bytes();
        let [c, d] = segments[high + 1].to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    let reason = match segments {
        _ if ip.is_unspecified() => "an unspecified address",
        _ if ip.is_loopback() => "a loopback address",
        // ::ffff:a.b.c.d reaches a.b.c.d: judge that.
        [0, 0, 0, 0, 0, 0xffff, _, _] => return v4_reason(embedded(6)),
        // ::ffff:0:a.b.c.d (IPv4-translated, RFC 2765/6145) names an IPv4 host behind a
        // stateless translator; no public name resolves to one.
        [0, 0, 0, 0, 0xffff, 0, _, _] => "an IPv4-translated address",
        // ::a.b.c.d (deprecated IPv4-compatible): no legitimate use left.
        [0, 0, 0, 0, 0, 0, _, _] => "an IPv4-compatible address",
        // NAT64 translates to the embedded IPv4 address.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => return v4_reason(embedded(6)),
        [0x64, 0xff9b, 1, ..] => "a local-use NAT64 address",
        // 6to4 carries an IPv4 address in bits 16..48.
        [0x2002, ..] => return v4_reason(embedded(1)),
        [0x100, 0, 0, 0, ..] => "a discard-only address",
        [0x2001, 0x0db8, ..] => "a documentation address",
        [0x3fff, 0x0000..=0x0fff, ..] => "a documentation address",
        // IETF special-purpose block: Teredo, benchmarking, ORCHID.
        [0x2001, 0x0000..=0x01ff, ..] => "a special-purpose address",
        [first, ..] if first & 0xfe00 == 0xfc00 => "a unique-local address",
        [first, ..] if first & 0xffc0 == 0xfe80 => "a link-local address",
        [first, ..] if first & 0xffc0 == 0xfec0 => "a site-local address",
        [first, ..] if first & 0xff00 == 0xff00 => "a multicast address",
        // ISATAP (RFC 5214): a prefix not refused above, then an interface id of
        // [02]00:5efe:a.b.c.d, which a host's tunnel interface sends to a.b.c.d.
        [_, _, _, _, 0x0000 | 0x0200, 0x5efe, _, _] => return v4_reason(embedded(6)),
        _ => return None,
    };
    Some(reason)
}

/// Parses a URL host as an IP address the way resolvers do: IPv4 in inet_aton's spellings
/// (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`, mixed bases, a trailing dot) and IPv6 with
/// or without brackets. `None` means the host is a name.
pub fn parse_host_ip(host: &str) -> Option<IpAddr> {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    if let Ok(v6) = host.parse::<Ipv6Addr>() {
        return Some(IpAddr::V6(v6));
    }
    parse_inet_aton(host.strip_suffix('.').unwrap_or(host)).map(IpAddr::V4)
}

fn parse_inet_aton(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<u32> = host
        .split('.')
        .map(parse_aton_number)
        .collect::<Option<_>>()?;
    let (last, leading) = parts.split_last()?;
    if leading.len() > 3 || leading.iter().any(|&part| part > 255) {
        return None;
    }
    // The last part fills every byte the leading parts did not: `127.1` is 127.0.0.1.
    let last_bits = 8 * (4 - leading.len() as u32);
    if last_bits < 32 && *last >= 1 << last_bits {
        return None;
    }
    let high = leading
        .iter()
        .enumerate()
        .fold(0u32, |acc, (i, &part)| acc | part << (24 - 8 * i as u32));
    Some(Ipv4Addr::from(high | last))
}

fn parse_aton_number(part: &str) -> Option<u32> {
    if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
        return if hex.is_empty() {
            Some(0)
        } else {
            u32::from_str_radix(hex, 16).ok()
        };
    }
    if part.len() > 1
        && let Some(octal) = part.strip_prefix('0')
    {
        return u32::from_str_radix(octal, 8).ok();
    }
    if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    part.parse().ok()
}

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
    fn host_ports(&self, host: &str) -> Option<&HashSet<u16>> {
        self.hosts
            .get(host.trim_end_matches('.').to_ascii_lowercase().as_str())
    }

    fn allows_socket(&self, ip: IpAddr, port: u16) -> bool {
        self.sockets.contains(&SocketAddr::new(ip, port))
    }
}

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
            None if name.eq_ignore_ascii_case("localhost")
                || name.to_ascii_lowercase().ends_with(".localhost") =>
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn every_internal_ipv4_range_is_forbidden() {
        for address in [
            "127.0.0.1",
            "127.255.255.254",
            "10.0.0.5",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.0.1",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "198.19.255.255",
        ] {
            assert!(is_forbidden(ip(address)), "{address} must be forbidden");
        }
    }

    #[test]
    fn every_internal_ipv6_range_is_forbidden() {
        for address in [
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "ff0e::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "::8.8.8.8",
            "::ffff:0:7f00:1",
            "::ffff:0:a00:1",
            "::ffff:0:808:808",
            "::ffff:0:0",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "2002:7f00:1::",
            "2002:c0a8:101::1",
            "2002:a9fe:a9fe::1",
            "2606:4700::5efe:7f00:1",
            "2606:4700::200:5efe:a00:5",
            "fe80::5efe:808:808",
            "2001:db8::1",
            "3fff::1",
            "2001::1",
            "100::1",
        ] {
            assert!(is_forbidden(ip(address)), "{address} must be forbidden");
        }
    }

    #[test]
    fn public_addresses_are_allowed() {
        for address in [
            "8.8.8.8",
            "1.1.1.1",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "169.255.0.1",
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2606:4700::5efe:808:808",
        ] {
            assert!(!is_forbidden(ip(address)), "{address} must be allowed");
        }
    }

    #[test]
    fn ipv4_hosts_parse_in_every_resolver_spelling() {
        let loopback = Some(ip("127.0.0.1"));
        for spelling in [
            "127.0.0.1",
            "2130706433",
            "0x7f000001",
            "0x7f.1",
            "0177.0.0.1",
            "0177.0.0.01",
            "127.1",
            "127.0.1",
            "0x7f.0.0.1",
            "0x7F.000.0x0.1",
            "127.0.0.1.",
        ] {
            assert_eq!(parse_host_ip(spelling), loopback, "{spelling}");
        }
        assert_eq!(parse_host_ip("0"), Some(ip("0.0.0.0")));
        assert_eq!(parse_host_ip("0xa9fea9fe"), Some(ip("169.254.169.254")));
        assert_eq!(parse_host_ip("[::1]"), Some(ip("::1")));
        assert_eq!(
            parse_host_ip("[::ffff:127.0.0.1]"),
            Some(ip("::ffff:127.0.0.1"))
        );
        for name in [
            "example.com",
            "127.0.0.1.example.com",
            "256.0.0.1",
            "1.2.3.4.5",
            "0x1g",
            "08.0.0.1",
            "",
            "1..1",
            "127.16777216",
            "4294967296",
        ] {
            assert_eq!(parse_host_ip(name), None, "{name:?}");
        }
    }

    #[test]
    fn urls_naming_internal_addresses_are_refused_in_any_spelling() {
        let guard = Guard::default();
        for url in [
            "http://2130706433/",
            "http://0x7f.1/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::1]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://0.0.0.0/",
            "http://100.64.0.1/",
            "http://[fc00::1]/",
            "http://[fe80::1]/",
            "http://localhost:8080/",
        ] {
            let parsed = Url::parse(url).unwrap();
            let refusal = guard.check_url(&parsed).unwrap_err();
            assert!(refusal.to_string().starts_with("refused: "), "{refusal}");
        }
        let refusal = guard
            .check_url(&Url::parse("http://2130706433/").unwrap())
            .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "refused: 127.0.0.1 is a loopback address"
        );
        for url in [
            "https://example.com/",
            "http://8.8.8.8/",
            "http://[2606:4700::1]/",
        ] {
            assert_eq!(guard.check_url(&Url::parse(url).unwrap()), Ok(()), "{url}");
        }
    }

    #[test]
    fn the_allow_list_exempts_exactly_its_entries() {
        let guard = Guard::new(
            AllowList::parse(&[
                "127.0.0.1:1234".into(),
                "[::1]:8080".into(),
                "10.0.0.1:8080".into(),
                "Public.Test:443".into(),
                "localhost:9000".into(),
            ])
            .unwrap(),
        );
        let check = |url: &str| guard.check_url(&Url::parse(url).unwrap());
        assert_eq!(check("http://127.0.0.1:1234/"), Ok(()));
        assert_eq!(check("http://[::1]:8080/"), Ok(()));
        assert_eq!(check("http://10.0.0.1:8080/"), Ok(()));
        assert_eq!(check("http://localhost:9000/"), Ok(()));
        assert_eq!(check("https://public.test/"), Ok(()));
        for refused in [
            "http://127.0.0.1:1235/",
            "http://127.0.0.1/",
            "http://[::1]:8081/",
            "http://10.0.0.1:8081/",
            "http://127.0.0.2:1234/",
            "http://localhost:9001/",
        ] {
            assert!(check(refused).is_err(), "{refused}");
        }
        assert_eq!(
            check("http://public.test:8443/"),
            Err(Refusal(
                "public.test is allow-listed for port 443 only, not 8443".into()
            ))
        );
        assert_eq!(
            guard.filter_resolved("public.test", vec![ip("10.9.9.9")]),
            Ok(vec![ip("10.9.9.9")])
        );
        // An IP:port entry applies to URLs naming the address, not to names resolving to it.
        assert!(
            guard
                .filter_resolved("other.test", vec![ip("127.0.0.1")])
                .is_err()
        );
    }

    #[test]
    fn allow_list_entries_without_a_port_are_refused() {
        for entry in [
            "127.0.0.1",
            "::1",
            "[::1]",
            "public.test",
            "10.0.0.1:",
            ":80",
        ] {
            assert_eq!(
                AllowList::parse(&[entry.to_string()]).unwrap_err(),
                AllowEntryError::NoPort(entry.into()),
                "{entry}"
            );
        }
        for entry in [
            "127.0.0.1:0",
            "127.0.0.1:65536",
            "public.test:http",
            "host:0",
        ] {
            assert_eq!(
                AllowList::parse(&[entry.to_string()]).unwrap_err(),
                AllowEntryError::BadPort(entry.into()),
                "{entry}"
            );
        }
        let message = AllowList::parse(&["127.0.0.1".into()])
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("\"127.0.0.1\" has no port: write it as HOST:PORT"),
            "{message}"
        );
    }

    #[test]
    fn ipv4_translated_addresses_are_refused_whatever_they_embed() {
        let guard = Guard::default();
        for url in [
            "http://[::ffff:0:127.0.0.1]/",
            "http://[::ffff:0:10.0.0.1]/",
            "http://[::ffff:0:169.254.169.254]/",
            "http://[::ffff:0:8.8.8.8]/",
        ] {
            let refusal = guard.check_url(&Url::parse(url).unwrap()).unwrap_err();
            assert!(
                refusal
                    .to_string()
                    .ends_with("is an IPv4-translated address"),
                "{url}: {refusal}"
            );
        }
        assert_eq!(
            forbidden_reason(ip("::ffff:0:7f00:1")),
            Some("an IPv4-translated address")
        );
        // IPv4-mapped addresses, next door, are still judged by the address they map.
        assert_eq!(forbidden_reason(ip("::ffff:8.8.8.8")), None);
        assert_eq!(
            forbidden_reason(ip("::ffff:127.0.0.1")),
            Some("a loopback address")
        );
    }

    #[test]
    fn resolved_addresses_are_filtered_and_an_all_internal_name_is_refused() {
        let guard = Guard::default();
        assert_eq!(
            guard.filter_resolved("mixed.test", vec![ip("10.0.0.5"), ip("8.8.8.8")]),
            Ok(vec![ip("8.8.8.8")])
        );
        let refusal = guard
            .filter_resolved("internal.test", vec![ip("10.0.0.5")])
            .unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "refused: internal.test resolves to 10.0.0.5, which is a private address"
        );
    }
}
