use super::*;

#[test]
fn metadata_pairs_are_base64_decoded() {
    let map =
        parse_metadata("filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential").unwrap();
    assert_eq!(map["filename"], "world_domination_plan.pdf");
    assert_eq!(map["is_confidential"], "");
    assert!(parse_metadata("filename !!!").is_err());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    #[test]
    fn any_upload_metadata_header_parses_or_is_refused_without_panicking(
        raw in "([a-zA-Z0-9_ ,=+/]|\\PC){0,300}",
    ) {
        let _ = parse_metadata(&raw);
    }

    #[test]
    fn encoded_metadata_pairs_come_back_as_they_were_sent(
        pairs in proptest::collection::btree_map("[a-z][a-z0-9_-]{0,15}", "\\PC{0,40}", 0..8),
    ) {
        use base64::Engine;
        let header: Vec<String> = pairs
            .iter()
            .map(|(key, value)| {
                format!("{key} {}", base64::engine::general_purpose::STANDARD.encode(value))
            })
            .collect();
        let parsed = parse_metadata(&header.join(",")).unwrap();
        for (key, value) in &pairs {
            proptest::prop_assert_eq!(parsed[key].as_str(), Some(value.as_str()));
        }
    }
}
