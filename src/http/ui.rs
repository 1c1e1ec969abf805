//! The browser UI: the files `build.rs` bundled from `static/`, embedded in the binary. `/` and
//! the UI's own routes (`/c/{chatId}`, `/knowledge`, `/knowledge/{kbId}`, `/settings`, `/agents`,
//! `/automations`, `/admin`) get `index.html` (and a shared link's `/s/{token}`, through
//! `http::shared`, which calls `shell`);
//! `/assets/*` are content-hashed and cached for good, sent precompressed (brotli or gzip)
//! when the browser takes it. Every page carries a Content-Security-Policy that allows only
//! Colloquy's own scripts, styles and fonts.
//! The shell is public (it holds no data); everything it shows comes from the authenticated API.
//! With `static_dir` set, a build on disk is served instead, for UI work.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::AppError;
use crate::state::AppState;

/// One bundled file; `gzip` and `brotli` are the same bytes, precompressed.
pub struct Asset {
    pub path: &'static str,
    pub body: &'static [u8],
    pub gzip: Option<&'static [u8]>,
    pub brotli: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));

/// No inline script or style, no other origin, no framing of the app. Style *properties* set
/// from script (KaTeX's layout) are not style attributes parsed from markup, so `style-src
/// 'self'` holds. Frames are Colloquy's own artifact previews, sandboxed by their own policy.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; \
     frame-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(shell))
        .route("/c/{chat_id}", web::get().to(shell))
        .route("/knowledge", web::get().to(shell))
        .route("/knowledge/{kb_id}", web::get().to(shell))
        .route("/settings", web::get().to(shell))
        .route("/agents", web::get().to(shell))
        .route("/automations", web::get().to(shell))
        .route("/admin", web::get().to(shell))
        .route("/assets/{file:.+}", web::get().to(asset));
}

fn find(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|asset| asset.path == path)
}

/// `index.html`, never cached, so a new build's assets are picked up on the next load.
pub(in crate::http) async fn shell(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if let Some(dir) = &state.config().static_dir {
        return from_dir(&req, dir, "/index.html", "no-cache").await;
    }
    let index = find("/index.html").ok_or(AppError::NotFound("page"))?;
    Ok(respond(
        &req,
        Encodings::of(index),
        "text/html; charset=utf-8",
        "no-cache",
    ))
}

async fn asset(req: HttpRequest, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    if let Some(dir) = &state.config().static_dir {
        return from_dir(&req, dir, req.path(), "no-cache").await;
    }
    let asset = find(req.path()).ok_or(AppError::NotFound("asset"))?;
    let content_type = content_type(asset.path);
    Ok(respond(
        &req,
        Encodings::of(asset),
        content_type,
        "public, max-age=31536000, immutable",
    ))
}

/// A file of a UI build on disk (`static_dir`). Only plain names below the directory are
/// served: no `..`, no hidden files.
async fn from_dir(
    req: &HttpRequest,
    dir: &std::path::Path,
    path: &str,
    cache: &'static str,
) -> Result<HttpResponse, AppError> {
    let relative = path.trim_start_matches('/');
    let safe = relative
        .split('/')
        .all(|part| !part.is_empty() && !part.starts_with('.') && !part.contains('\\'));
    if !safe {
        return Err(AppError::NotFound("asset"));
    }
    let file = dir.join(relative);
    let body = tokio::fs::read(&file)
        .await
        .map_err(|_| AppError::NotFound("asset"))?;
    let sibling = |ext: &str| {
        let mut name = file.clone().into_os_string();
        name.push(ext);
        std::fs::read(name).ok().map(bytes::Bytes::from)
    };
    let encodings = Encodings {
        plain: bytes::Bytes::from(body),
        gzip: sibling(".gz"),
        brotli: sibling(".br"),
    };
    Ok(respond(req, encodings, content_type(path), cache))
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or_default() {
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "html" => "text/html; charset=utf-8",
        "svg" => "image/svg+xml",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "json" => "application/json",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// A file's bytes, and the same precompressed when the build made them.
struct Encodings {
    plain: bytes::Bytes,
    gzip: Option<bytes::Bytes>,
    brotli: Option<bytes::Bytes>,
}

impl Encodings {
    fn of(asset: &'static Asset) -> Self {
        Self {
            plain: bytes::Bytes::from_static(asset.body),
            gzip: asset.gzip.map(bytes::Bytes::from_static),
            brotli: asset.brotli.map(bytes::Bytes::from_static),
        }
    }
}

/// The best encoding the browser accepts: brotli, then gzip, then the plain bytes.
fn respond(
    req: &HttpRequest,
    asset: Encodings,
    content_type: &'static str,
    cache: &'static str,
) -> HttpResponse {
    let accepts = |coding: &str| {
        req.headers()
            .get_all(header::ACCEPT_ENCODING)
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|item| {
                let mut parts = item.split(';');
                let name = parts.next().unwrap_or_default().trim();
                let refused = parts.any(|p| matches!(p.trim(), "q=0" | "q=0.0" | "q=0.00"));
                name.eq_ignore_ascii_case(coding) && !refused
            })
    };
    let (body, encoding) = match (asset.brotli, asset.gzip) {
        (Some(br), _) if accepts("br") => (br, Some("br")),
        (_, Some(gz)) if accepts("gzip") => (gz, Some("gzip")),
        _ => (asset.plain, None),
    };
    let mut response = HttpResponse::Ok();
    response
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::CACHE_CONTROL, cache))
        .insert_header((header::VARY, "Accept-Encoding"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ));
    if let Some(encoding) = encoding {
        response.insert_header((header::CONTENT_ENCODING, encoding));
    }
    response.body(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_has_a_page_whose_scripts_and_styles_are_all_embedded() {
        let index = find("/index.html").expect("index.html is embedded");
        let html = std::str::from_utf8(index.body).expect("UTF-8");
        let referenced: Vec<&str> = html
            .split(['"', '\''])
            .filter(|piece| piece.starts_with("/assets/"))
            .collect();
        assert!(referenced.iter().any(|p| p.ends_with(".js")), "{html}");
        assert!(referenced.iter().any(|p| p.ends_with(".css")), "{html}");
        for path in referenced {
            assert!(
                find(path).is_some(),
                "{path} is referenced but not embedded"
            );
        }
        assert!(!html.contains("<script>"), "no inline script: {html}");
    }
}
