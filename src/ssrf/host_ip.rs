//! A URL host read as an IP address the way resolvers read it: IPv4 in every inet_aton
//! spelling (decimal, octal, hex, fewer than four parts), IPv6 with or without brackets.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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
