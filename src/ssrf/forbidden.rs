//! Which addresses a fetch must never reach, and why: IPv4's private, loopback, link-local,
//! shared, reserved, documentation, benchmarking, broadcast and multicast ranges, and IPv6's,
//! with the IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, ISATAP) judged by that
//! address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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
