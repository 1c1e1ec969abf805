//! Making one paused request through the checked client (`Gate::forward`): its method, headers
//! (the session's cookies added, which the paused request does not carry), body; the response
//! capped at `browser.max_response_bytes`, a document that would be a download refused, and
//! the response's headers and body handed back to fulfil the paused request.

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    EventRequestPaused, FulfillRequestParams, HeaderEntry,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, GetCookiesParams, ResourceType};
use url::Url;

use super::Gate;
use crate::ssrf::Refusal;

/// Request headers not passed on: the client sets its own framing and host, asks for no
/// encoding it would have to undo, and never lets a cached copy answer `304`.
const DROPPED_REQUEST_HEADERS: [&str; 8] = [
    "host",
    "content-length",
    "connection",
    "accept-encoding",
    "if-none-match",
    "if-modified-since",
    "transfer-encoding",
    "upgrade",
];
/// Response headers not passed back: the body handed to Chromium is whole and decoded.
const DROPPED_RESPONSE_HEADERS: [&str; 4] = [
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "connection",
];

impl Gate {
    /// Makes the request through the checked client.
    pub(super) async fn forward(
        &self,
        page: &Page,
        event: &EventRequestPaused,
    ) -> Result<Fulfil, Failure> {
        let request = &event.request;
        let url = Url::parse(&request.url).map_err(|err| Failure::Refused(err.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Failure::Refused(format!(
                "{} requests are not made",
                url.scheme()
            )));
        }
        self.guard
            .check_url(&url)
            .map_err(|r: Refusal| Failure::Refused(r.to_string()))?;
        let method = reqwest::Method::from_bytes(request.method.as_bytes())
            .map_err(|err| Failure::Refused(err.to_string()))?;
        let mut outgoing = self.client.request(method, url.clone());
        let mut has_cookie = false;
        if let Some(headers) = request.headers.inner().as_object() {
            for (name, value) in headers {
                let lower = name.to_ascii_lowercase();
                if DROPPED_REQUEST_HEADERS.contains(&lower.as_str()) {
                    continue;
                }
                has_cookie |= lower == "cookie";
                if let Some(value) = value.as_str() {
                    outgoing = outgoing.header(name.as_str(), value);
                }
            }
        }
        if !has_cookie && let Some(cookie) = cookie_header(page, &url).await {
            outgoing = outgoing.header("cookie", cookie);
        }
        if let Some(entries) = &request.post_data_entries {
            let mut body = Vec::new();
            for entry in entries {
                if let Some(bytes) = &entry.bytes {
                    let encoded: &str = bytes.as_ref();
                    let decoded = base64::engine::general_purpose::STANDARD
                        .decode(encoded)
                        .map_err(|err| Failure::Failed(err.to_string()))?;
                    body.extend(decoded);
                }
            }
            outgoing = outgoing.body(body);
        }
        let mut response = outgoing.send().await.map_err(|err| {
            // The resolver's refusal arrives wrapped in reqwest's connect error.
            let text = error_chain(&err);
            match text.find("refused: ") {
                Some(at) => Failure::Refused(text[at..].to_string()),
                None => Failure::Failed(text),
            }
        })?;
        if event.resource_type == ResourceType::Document && is_download(response.headers()) {
            return Err(Failure::Refused(format!(
                "{url} is a download, and downloads are refused"
            )));
        }
        let status = response.status();
        let headers: Vec<HeaderEntry> = response
            .headers()
            .iter()
            .filter(|(name, _)| !DROPPED_RESPONSE_HEADERS.contains(&name.as_str()))
            .filter_map(|(name, value)| {
                value
                    .to_str()
                    .ok()
                    .map(|value| HeaderEntry::new(name.as_str(), value))
            })
            .collect();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| Failure::Failed(err.to_string()))?
        {
            if body.len() + chunk.len() > self.max_response_bytes {
                return Err(Failure::Failed(format!(
                    "{url} is larger than {} bytes",
                    self.max_response_bytes
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fulfil {
            status: status.as_u16(),
            phrase: status.canonical_reason().unwrap_or("").to_string(),
            headers,
            body,
        })
    }
}

/// Whether a document response would be saved rather than shown: an attachment, or a type a
/// browser does not render (Chromium would wait on a download that is denied).
fn is_download(headers: &reqwest::header::HeaderMap) -> bool {
    let header = |name: reqwest::header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    if header(reqwest::header::CONTENT_DISPOSITION).starts_with("attachment") {
        return true;
    }
    let kind = header(reqwest::header::CONTENT_TYPE);
    let media = kind.split(';').next().unwrap_or("").trim();
    let shown = media.is_empty()
        || media.starts_with("text/")
        || media.starts_with("image/")
        || media.ends_with("+xml")
        || matches!(
            media,
            "application/xml" | "application/json" | "application/javascript"
        );
    !shown
}

/// The cookies the session's profile holds for `url`, as a `Cookie` header: the paused
/// request's headers do not carry them.
async fn cookie_header(page: &Page, url: &Url) -> Option<String> {
    let cookies = page
        .execute(GetCookiesParams {
            urls: Some(vec![url.to_string()]),
        })
        .await
        .ok()?;
    let pairs: Vec<String> = cookies
        .result
        .cookies
        .iter()
        .map(|c| format!("{}={}", c.name, c.value))
        .collect();
    (!pairs.is_empty()).then(|| pairs.join("; "))
}

/// An error with its causes, one line.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A response to hand back to the paused request.
pub(super) struct Fulfil {
    status: u16,
    phrase: String,
    headers: Vec<HeaderEntry>,
    body: Vec<u8>,
}

impl Fulfil {
    pub(super) fn into_params(
        self,
        request_id: chromiumoxide::cdp::browser_protocol::fetch::RequestId,
    ) -> FulfillRequestParams {
        let mut params = FulfillRequestParams::new(request_id, i64::from(self.status));
        params.response_headers = Some(self.headers);
        params.body = Some(
            base64::engine::general_purpose::STANDARD
                .encode(&self.body)
                .into(),
        );
        if !self.phrase.is_empty() {
            params.response_phrase = Some(self.phrase);
        }
        params
    }
}

/// Why a paused request was not fulfilled.
pub(super) enum Failure {
    /// The SSRF guard refused it.
    Refused(String),
    /// It was allowed but did not succeed.
    Failed(String),
}

impl Failure {
    pub(super) fn reason(&self) -> ErrorReason {
        match self {
            Failure::Refused(_) => ErrorReason::BlockedByClient,
            Failure::Failed(_) => ErrorReason::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{CONTENT_DISPOSITION, CONTENT_TYPE, HeaderMap, HeaderValue};

    fn headers(pairs: &[(reqwest::header::HeaderName, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| (name.clone(), HeaderValue::from_static(value)))
            .collect()
    }

    #[test]
    fn attachments_and_types_a_browser_does_not_show_are_downloads() {
        assert!(is_download(&headers(&[(
            CONTENT_DISPOSITION,
            "attachment; filename=a.txt"
        )])));
        assert!(is_download(&headers(&[(CONTENT_TYPE, "application/zip")])));
        assert!(is_download(&headers(&[(
            CONTENT_TYPE,
            "application/octet-stream"
        )])));
        for shown in [
            "text/html; charset=utf-8",
            "image/png",
            "image/svg+xml",
            "application/json",
        ] {
            assert!(!is_download(&headers(&[(CONTENT_TYPE, shown)])), "{shown}");
        }
        assert!(
            !is_download(&HeaderMap::new()),
            "no type: sniffed and shown"
        );
    }
}
