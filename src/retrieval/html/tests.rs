//! Unit tests of the HTML extractor: readable structure, nested lists and tables, links, pages
//! nested thousands deep on a small stack, the deadline, and tag soup and arbitrary bytes
//! (proptest) that never panic.

use std::time::Duration;

use super::*;

fn page() -> Url {
    Url::parse("https://docs.example.com/guide/start.html").unwrap()
}

fn generous() -> Deadline {
    Deadline::after(Duration::from_secs(60))
}

fn text_of(html: &str) -> String {
    html_to_text(html, &page(), &generous()).unwrap().0
}

#[test]
fn html_keeps_readable_structure_and_drops_code_and_chrome() {
    let html = r#"<!doctype html><html><head><title>T</title>
            <style>body { color: red }</style><script>var secret = 1;</script></head>
            <body>
              <header><a href="/">Home</a> Site header</header>
              <nav><ul><li><a href="/guide/a">Menu A</a></li></ul></nav>
              <main>
                <h1>Getting   Started</h1>
                <p>Install the <b>SDK</b> with <code>npm install</code>.<br>Then run it.</p>
                <noscript>Enable JavaScript</noscript>
                <ul><li>First</li><li>Second <em>item</em></li></ul>
                <ol><li>One</li><li>Two</li></ol>
                <table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
                <pre>line 1
  indented</pre>
                <div hidden>invisible</div>
              </main>
              <aside>Related posts</aside>
              <footer>Copyright</footer>
            </body></html>"#;
    let text = text_of(html);
    assert_eq!(
        text,
        "Getting Started\n\n\
         Install the SDK with npm install.\nThen run it.\n\n\
         - First\n- Second item\n\n\
         1. One\n2. Two\n\n\
         Name | Value\na | 1\n\n\
         line 1\n  indented"
    );
    for hidden in [
        "secret",
        "color",
        "Site header",
        "Menu A",
        "Enable",
        "invisible",
        "Related",
        "Copyright",
    ] {
        assert!(!text.contains(hidden), "{hidden} leaked into {text:?}");
    }
}

#[test]
fn nested_lists_and_tables_keep_their_layout() {
    let html = "<ul><li>a<ul><li>b<ol><li>c</li></ol></li></ul></li></ul>\
                <table><tr><td>x<table><tr><td>in1</td><td>in2</td></tr></table></td>\
                <td>y</td></tr></table>";
    assert_eq!(
        text_of(html),
        "- a\n\n  - b\n\n    1. c\n\nx\n\nin1 | in2\n\ny"
    );
}

#[test]
fn links_are_absolute_deduplicated_http_urls_with_their_text() {
    let html = r##"<html><body>
            <nav><a href="/guide/auth">Authentication</a></nav>
            <a href="advanced.html#retries">Advanced   Usage</a>
            <a href="https://docs.example.com/guide/auth"><img alt="">x</a>
            <a href="advanced.html">again</a>
            <a href="mailto:a@example.com">Mail</a>
            <a href="javascript:void(0)">Nothing</a>
            <a href="#top">Top</a>
            <a href="//other.example.org/p" title="Other"></a>
            </body></html>"##;
    let (_, links) = html_to_text(html, &page(), &generous()).unwrap();
    let pairs: Vec<(&str, &str)> = links
        .iter()
        .map(|l| (l.url.as_str(), l.text.as_str()))
        .collect();
    assert_eq!(
        pairs,
        vec![
            ("https://docs.example.com/guide/auth", "Authentication"),
            (
                "https://docs.example.com/guide/advanced.html",
                "Advanced Usage"
            ),
            ("https://other.example.org/p", "Other"),
        ]
    );
}

/// Runs `f` on a thread with a small stack, as a worker thread has: recursion on the
/// page's depth would overflow it and abort the test binary.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn pages_nested_thousands_deep_give_their_text_on_a_small_stack() {
    for (open, close) in [
        ("<span>", "</span>"),
        ("<div>", "</div>"),
        ("<table><tr><td>", "</td></tr></table>"),
        ("<ul><li>", "</li></ul>"),
        ("<blockquote>", "</blockquote>"),
    ] {
        // 4,000 spans overflowed a 2 MiB worker stack when the walk recursed; this
        // stack is an eighth of that.
        let depth = 5_000;
        let html = format!(
            "<html><body>{}deep text{}</body></html>",
            open.repeat(depth),
            close.repeat(depth)
        );
        let text = on_small_stack(move || text_of(&html));
        assert!(text.contains("deep text"), "{open}: {:?}", &text[..100]);
        assert!(text.len() < 40 * depth, "{open}: {} bytes", text.len());
    }
}

#[test]
fn a_page_that_takes_longer_than_its_budget_is_an_extraction_error() {
    // html5ever spends O(depth) per start tag here: far beyond a 50 ms budget.
    let html = "<div>".repeat(100_000);
    let started = std::time::Instant::now();
    let err =
        html_to_text(&html, &page(), &Deadline::after(Duration::from_millis(50))).unwrap_err();
    assert_eq!(err.code(), "extraction_failed");
    assert!(err.to_string().contains("budget"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "gave up after {:?}",
        started.elapsed()
    );
}

/// Pieces of tag soup: every element kind the writer treats specially, unbalanced.
fn soup_piece() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        Just("<div>".to_string()),
        Just("</div>".to_string()),
        Just("<span>".to_string()),
        Just("<p>".to_string()),
        Just("<table>".to_string()),
        Just("<tr>".to_string()),
        Just("<td>".to_string()),
        Just("</tr>".to_string()),
        Just("<ul><li>".to_string()),
        Just("<ol>".to_string()),
        Just("</li>".to_string()),
        Just("<pre>".to_string()),
        Just("<script>".to_string()),
        Just("</script>".to_string()),
        Just("<nav hidden>".to_string()),
        Just("<a href=\"/x\">".to_string()),
        Just("</a>".to_string()),
        Just("<br>".to_string()),
        Just("<b><i>".to_string()),
        Just("&amp;&#x0;&bogus;".to_string()),
        "[ -~]{0,12}",
        "\\PC{0,6}",
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    #[test]
    fn any_tag_soup_gives_text_without_panicking(
        pieces in proptest::collection::vec(soup_piece(), 0..400),
    ) {
        let html = pieces.concat();
        let result = on_small_stack(move || html_to_text(&html, &page(), &generous()));
        proptest::prop_assert!(result.is_ok());
    }

    #[test]
    fn any_nesting_depth_gives_text_on_a_small_stack(
        piece in soup_piece(),
        depth in 1usize..6_000,
    ) {
        let html = format!("{}marker", piece.repeat(depth));
        let (text, _) = on_small_stack(move || html_to_text(&html, &page(), &generous()))
            .unwrap();
        proptest::prop_assert!(text.len() <= 64 * (depth + 10));
    }

    #[test]
    fn arbitrary_bytes_decoded_as_html_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..4096)) {
        let html = String::from_utf8_lossy(&bytes).into_owned();
        proptest::prop_assert!(html_to_text(&html, &page(), &generous()).is_ok());
    }
}
