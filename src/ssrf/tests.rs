//! Unit tests of the SSRF rules: the forbidden IPv4 and IPv6 ranges, public addresses, host
//! spellings, URLs refused in any spelling, the allow-list and its entries, IPv4-translated
//! addresses, filtering resolved addresses.

use std::net::IpAddr;

use url::Url;

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
        "http://localhost.:8080/",
        "http://api.localhost./",
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
