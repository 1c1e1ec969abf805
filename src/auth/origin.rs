//! The cross-site check for browser sessions: a request that changes data with the session
//! cookie must come from one of Colloquy's own pages, as the browser reports it (`Origin`, else
//! `Sec-Fetch-Site`). SameSite=Lax alone lets a page on another port of the same host through.
//! A request that carries neither header is not a page's: every browser in use sends `Origin`
//! with a cross-origin POST, PUT, PATCH or DELETE, so such a request comes from a script or `curl`
//! holding the cookie (as the spec's documents API examples do) and passes — the rule of Go's
//! `net/http.CrossOriginProtection`. API-key requests are never checked here: a browser does not
//! attach a bearer token by itself.

use actix_web::HttpRequest;
use actix_web::http::header::{HOST, HeaderMap, ORIGIN};

/// The fetch-metadata header modern browsers send with every request.
const SEC_FETCH_SITE: &str = "sec-fetch-site";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CrossSiteError {
    /// The browser says the request comes from a page of another origin.
    #[error(
        "cross-site request refused: a browser session may only change data from Colloquy's own \
         pages, and this request comes from {0} (use an API key for other clients)"
    )]
    ForeignOrigin(String),
    /// No `Origin`, and `Sec-Fetch-Site` says the page was not this server's.
    #[error(
        "cross-site request refused: the browser reports Sec-Fetch-Site: {0}; a browser session \
         may only change data from Colloquy's own pages"
    )]
    ForeignSite(String),
}

/// Refuses a request whose page is not one of Colloquy's own origins: the configured
/// `public_url`'s origin, or the origin the request itself addressed — the connection's scheme
/// with the `Host` header (the URI authority on HTTP/2). `X-Forwarded-*` and `Forwarded` are not
/// consulted: behind a proxy that terminates TLS or rewrites `Host`, set `public_url`.
pub fn check_same_origin(
    req: &HttpRequest,
    public_url: Option<&str>,
) -> Result<(), CrossSiteError> {
    let headers = req.headers();
    let mut own: Vec<String> = public_url.and_then(origin_of).into_iter().collect();
    own.extend(addressed_origin(req));
    decide(
        header_text(headers, ORIGIN.as_str()),
        header_text(headers, SEC_FETCH_SITE),
        &own,
    )
}

/// The decision itself, on header values; `own` holds serialized origins.
fn decide(
    origin: Option<&str>,
    fetch_site: Option<&str>,
    own: &[String],
) -> Result<(), CrossSiteError> {
    if let Some(origin) = origin {
        // `Origin: null` (sandboxed frames, some redirects) parses to no origin: refused.
        return match origin_of(origin) {
            Some(origin) if own.contains(&origin) => Ok(()),
            _ => Err(CrossSiteError::ForeignOrigin(
                origin.chars().take(200).collect(),
            )),
        };
    }
    match fetch_site.map(str::to_ascii_lowercase).as_deref() {
        // `none`: the person typed the address or used a bookmark, no page sent it. No header
        // at all: not a browser's page (see the module's comment).
        Some("same-origin" | "none") | None => Ok(()),
        Some(other) => Err(CrossSiteError::ForeignSite(
            other.chars().take(40).collect(),
        )),
    }
}

/// The serialized origin (`scheme://host[:port]`, default ports left out, lowercase host) of a
/// URL, or `None` for one that has no tuple origin (`null`, `file:`, garbage).
pub fn origin_of(url: &str) -> Option<String> {
    let origin = url::Url::parse(url).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// The origin this request was sent to, as the server sees the connection.
fn addressed_origin(req: &HttpRequest) -> Option<String> {
    let host = header_text(req.headers(), HOST.as_str())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()))?;
    let scheme = if req.app_config().secure() {
        "https"
    } else {
        "http"
    };
    origin_of(&format!("{scheme}://{host}"))
}

/// A header's single value. Browsers send these once; a repeated one is not believed (a
/// second `Origin` must not vouch for the first), nor is one that is not text.
fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name);
    let first = values.next()?;
    if values.next().is_some() {
        return Some("(repeated)");
    }
    Some(first.to_str().unwrap_or("(not text)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own() -> Vec<String> {
        vec![
            "http://127.0.0.1:8080".into(),
            "https://chat.example".into(),
        ]
    }

    #[test]
    fn origins_are_normalised_before_they_are_compared() {
        assert_eq!(
            origin_of("https://Chat.Example:443/some/path"),
            Some("https://chat.example".into())
        );
        assert_eq!(
            origin_of("http://127.0.0.1:8080"),
            Some("http://127.0.0.1:8080".into())
        );
        assert_eq!(origin_of("null"), None);
        assert_eq!(origin_of("file:///etc/passwd"), None);
    }

    #[test]
    fn only_our_own_origins_pass() {
        let own = own();
        assert!(decide(Some("http://127.0.0.1:8080"), None, &own).is_ok());
        assert!(decide(Some("https://chat.example"), None, &own).is_ok());
        for foreign in [
            "http://127.0.0.1:8081",
            "http://chat.example",
            "https://chat.example.evil",
            "null",
            "",
        ] {
            assert!(
                matches!(
                    decide(Some(foreign), Some("same-origin"), &own),
                    Err(CrossSiteError::ForeignOrigin(_))
                ),
                "{foreign:?} passed"
            );
        }
    }

    #[test]
    fn without_an_origin_sec_fetch_site_decides() {
        let own = own();
        assert!(decide(None, Some("same-origin"), &own).is_ok());
        assert!(decide(None, Some("none"), &own).is_ok());
        assert_eq!(
            decide(None, Some("cross-site"), &own),
            Err(CrossSiteError::ForeignSite("cross-site".into()))
        );
        assert!(decide(None, Some("same-site"), &own).is_err());
    }

    #[test]
    fn a_request_that_says_nothing_is_not_a_pages_and_passes() {
        assert!(decide(None, None, &own()).is_ok());
    }
}
