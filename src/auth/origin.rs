//! The cross-site check for browser sessions: a request that changes data with the session
//! cookie must come from one of Colloquy's own pages, as the browser reports it (`Origin`, else
//! `Sec-Fetch-Site`). SameSite=Lax alone lets a page on another port of the same host through.
//! API-key requests are never checked here: a browser does not attach a bearer token by itself.

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
    /// A session-cookie request that changes data but says nothing about where it comes from.
    #[error(
        "cross-site request refused: a request that changes data with a session cookie must send \
         an Origin header (browsers do; other clients should use an API key)"
    )]
    Unattributed,
}

/// What to do with a request that carries neither `Origin` nor `Sec-Fetch-Site`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unattributed {
    /// Session-cookie requests: every browser in use sends `Origin` on POST/PUT/PATCH/DELETE,
    /// so a request without one is not from a page we can vouch for.
    Refuse,
    /// Password login: it carries no session yet, so a client without a browser (curl, scripts)
    /// may log in; a browser always sends `Origin`, which is what login CSRF would need.
    Allow,
}

/// Refuses a request whose page is not one of Colloquy's own origins: the configured
/// `public_url`'s origin, or the origin the request itself addressed — the connection's scheme
/// with the `Host` header (the URI authority on HTTP/2). `X-Forwarded-*` and `Forwarded` are not
/// consulted: behind a proxy that terminates TLS or rewrites `Host`, set `public_url`.
pub fn check_same_origin(
    req: &HttpRequest,
    public_url: Option<&str>,
    unattributed: Unattributed,
) -> Result<(), CrossSiteError> {
    let headers = req.headers();
    let mut own: Vec<String> = public_url.and_then(origin_of).into_iter().collect();
    own.extend(addressed_origin(req));
    decide(
        header_text(headers, ORIGIN.as_str()),
        header_text(headers, SEC_FETCH_SITE),
        &own,
        unattributed,
    )
}

/// The decision itself, on header values; `own` holds serialized origins.
fn decide(
    origin: Option<&str>,
    fetch_site: Option<&str>,
    own: &[String],
    unattributed: Unattributed,
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
        // `none`: the person typed the address or used a bookmark, no page sent it.
        Some("same-origin" | "none") => Ok(()),
        Some(other) => Err(CrossSiteError::ForeignSite(
            other.chars().take(40).collect(),
        )),
        None => match unattributed {
            Unattributed::Refuse => Err(CrossSiteError::Unattributed),
            Unattributed::Allow => Ok(()),
        },
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
        let strict = Unattributed::Refuse;
        assert!(decide(Some("http://127.0.0.1:8080"), None, &own, strict).is_ok());
        assert!(decide(Some("https://chat.example"), None, &own, strict).is_ok());
        for foreign in [
            "http://127.0.0.1:8081",
            "http://chat.example",
            "https://chat.example.evil",
            "null",
            "",
        ] {
            assert!(
                matches!(
                    decide(Some(foreign), Some("same-origin"), &own, strict),
                    Err(CrossSiteError::ForeignOrigin(_))
                ),
                "{foreign:?} passed"
            );
        }
    }

    #[test]
    fn without_an_origin_sec_fetch_site_decides() {
        let own = own();
        let strict = Unattributed::Refuse;
        assert!(decide(None, Some("same-origin"), &own, strict).is_ok());
        assert!(decide(None, Some("none"), &own, strict).is_ok());
        assert_eq!(
            decide(None, Some("cross-site"), &own, Unattributed::Allow),
            Err(CrossSiteError::ForeignSite("cross-site".into()))
        );
        assert!(decide(None, Some("same-site"), &own, strict).is_err());
    }

    #[test]
    fn a_request_that_says_nothing_is_refused_only_when_asked_to() {
        assert_eq!(
            decide(None, None, &own(), Unattributed::Refuse),
            Err(CrossSiteError::Unattributed)
        );
        assert!(decide(None, None, &own(), Unattributed::Allow).is_ok());
    }
}
