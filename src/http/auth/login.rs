//! Logging in and managing credentials: the one-time login link (`GET /login?token=`),
//! password login and logout (`/auth/login`, `/auth/logout`), who am I (`/auth/me`), the
//! caller's API keys (`/auth/api-keys`) and, for admins, creating users (`/auth/users`).

use actix_web::cookie::{Cookie, SameSite, time::Duration as CookieDuration};
use actix_web::http::header::LOCATION;
use actix_web::{HttpRequest, HttpResponse, web};
use entities::ids::{ApiKeyId, UserId};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::{AuthError, NewUser, Principal, SESSION_COOKIE, ThrottledBy, check_same_origin};
use crate::error::{AppError, AppResult};
use crate::http::page::{PageQuery, paged};
use crate::state::AppState;

/// Longest API key name.
const MAX_KEY_NAME_CHARS: usize = 100;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/login", web::get().to(redeem_link))
        .route("/auth/login", web::post().to(login))
        .route("/auth/logout", web::post().to(logout))
        .route("/auth/me", web::get().to(me))
        .route("/auth/api-keys", web::get().to(list_keys))
        .route("/auth/api-keys", web::post().to(create_key))
        .route("/auth/api-keys/{id}", web::delete().to(revoke_key))
        .route("/auth/users", web::post().to(create_user));
}

fn session_cookie(state: &AppState, token: String) -> Cookie<'static> {
    let ttl = state.accounts.session_ttl();
    Cookie::build(SESSION_COOKIE, token)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.config().auth.secure_cookies)
        .max_age(CookieDuration::seconds(ttl.num_seconds()))
        .finish()
}

#[derive(Deserialize)]
struct LinkQuery {
    token: String,
}

/// Spends a one-time link, starts a session and sends the browser to the UI.
async fn redeem_link(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<LinkQuery>,
) -> AppResult<HttpResponse> {
    let user = match state.accounts.redeem_login_link(&query.token).await {
        Ok(user) => user,
        // A person who clicked a spent link gets the sign-in page saying so, not JSON.
        Err(err) if wants_html(&req) => {
            let reason = match err {
                AuthError::LinkSpent => "link_spent",
                AuthError::AccountDisabled => "account_disabled",
                _ => "link_failed",
            };
            return Ok(HttpResponse::SeeOther()
                .insert_header((LOCATION, format!("/?signin={reason}")))
                .finish());
        }
        Err(err) => return Err(err.into()),
    };
    let session = state
        .accounts
        .start_session_from(&user.id, super::account::user_agent(&req))
        .await?;
    tracing::info!(user = %user.username, "logged in with a one-time link");
    Ok(HttpResponse::SeeOther()
        .insert_header((LOCATION, "/"))
        .cookie(session_cookie(&state, session.secret))
        .finish())
}

/// A browser navigating (it asks for HTML), as opposed to a script.
fn wants_html(req: &HttpRequest) -> bool {
    req.headers()
        .get(actix_web::http::header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

#[derive(Deserialize)]
struct LoginRequest {
    username: String,
    password: String,
}

/// Password login. A browser posting from another origin is refused (login CSRF would sign the
/// victim into the attacker's account); clients that send no `Origin` at all may log in. Failed
/// attempts are limited per username and per client address (the TCP peer): while either is
/// spent every attempt, the right password too, gets 429 with `Retry-After`.
async fn login(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<LoginRequest>,
) -> AppResult<HttpResponse> {
    check_same_origin(&req, state.config().public_url.as_deref())?;
    let address = req.peer_addr().map(|peer| peer.ip());
    let attempt = state
        .login_throttle
        .begin(&body.username, address)
        .map_err(|throttled| {
            let limit = match throttled.by {
                ThrottledBy::Account => "account",
                ThrottledBy::Address => "address",
            };
            let client = address.map(|ip| ip.to_string()).unwrap_or_default();
            tracing::warn!(limit, %client, "password login refused: too many failures");
            AppError::RateLimited {
                retry_after_secs: throttled.retry_after_secs,
            }
        })?;
    let verified = state
        .accounts
        .verify_login(&body.username, &body.password)
        .await;
    let user = match verified {
        Ok(Some(user)) => {
            state.login_throttle.forgive(attempt);
            user
        }
        Ok(None) => return Err(AppError::Unauthenticated),
        Err(err) => {
            state.login_throttle.forgive(attempt);
            return Err(err.into());
        }
    };
    let session = state
        .accounts
        .start_session_from(&user.id, super::account::user_agent(&req))
        .await?;
    tracing::info!(user = %user.username, "logged in with a password");
    Ok(HttpResponse::Ok()
        .cookie(session_cookie(&state, session.secret))
        .json(json!({"id": user.id, "username": user.username, "is_admin": user.is_admin})))
}

async fn logout(
    principal: Principal,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> AppResult<HttpResponse> {
    if let Some(token) = crate::auth::session_token(&req) {
        state.accounts.end_session(&token).await?;
    }
    let mut expired = session_cookie(&state, String::new());
    expired.make_removal();
    let mut legacy = expired.clone();
    legacy.set_name(crate::auth::LEGACY_SESSION_COOKIE);
    tracing::info!(user = %principal.username(), "logged out");
    Ok(HttpResponse::Ok()
        .cookie(expired)
        .cookie(legacy)
        .json(json!({"logged_out": true})))
}

#[derive(Serialize)]
struct Me<'a> {
    id: &'a UserId,
    username: &'a str,
    is_admin: bool,
    /// The name the UI shows (set on the account page); `None`: the username.
    display_name: Option<String>,
}

async fn me(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let display_name = state
        .accounts
        .user(principal.user_id())
        .await?
        .and_then(|user| user.display_name);
    Ok(HttpResponse::Ok().json(Me {
        id: principal.user_id(),
        username: principal.username(),
        is_admin: principal.is_admin(),
        display_name,
    }))
}

#[derive(Serialize)]
struct ApiKeyView {
    id: ApiKeyId,
    name: String,
    prefix: String,
    created_at: chrono::DateTime<chrono::Utc>,
    last_used_at: Option<chrono::DateTime<chrono::Utc>>,
}

async fn list_keys(
    principal: Principal,
    state: web::Data<AppState>,
    query: web::Query<PageQuery>,
) -> AppResult<HttpResponse> {
    let page = query.page();
    let (keys, total) = state
        .accounts
        .list_api_keys(principal.user_id(), page)
        .await?;
    let data: Vec<ApiKeyView> = keys
        .into_iter()
        .map(|k| ApiKeyView {
            id: k.id,
            name: k.name,
            prefix: k.key_prefix,
            created_at: k.created_at,
            last_used_at: k.last_used_at,
        })
        .collect();
    let shown = data.len();
    Ok(HttpResponse::Ok().json(paged(json!({"data": data}), page, shown, total)))
}

#[derive(Deserialize)]
struct CreateKey {
    name: String,
}

async fn create_key(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<CreateKey>,
) -> AppResult<HttpResponse> {
    let name = body.name.trim();
    if name.is_empty() || name.chars().count() > MAX_KEY_NAME_CHARS {
        return Err(AppError::invalid(format!(
            "name must be 1-{MAX_KEY_NAME_CHARS} characters"
        )));
    }
    let issued = state
        .accounts
        .issue_api_key(principal.user_id(), name)
        .await?;
    Ok(HttpResponse::Created().json(json!({"id": issued.id, "name": name, "key": issued.secret})))
}

async fn revoke_key(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<ApiKeyId>,
) -> AppResult<HttpResponse> {
    let revoked = state
        .accounts
        .revoke_api_key(principal.user_id(), &path)
        .await?;
    if !revoked {
        return Err(AppError::NotFound("api key"));
    }
    Ok(HttpResponse::Ok().json(json!({"revoked": true, "id": path.into_inner()})))
}

#[derive(Deserialize)]
struct CreateUser {
    username: String,
    password: Option<String>,
    #[serde(default)]
    is_admin: bool,
}

async fn create_user(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<CreateUser>,
) -> AppResult<HttpResponse> {
    if !principal.is_admin() {
        return Err(AppError::Forbidden("only an admin can create users".into()));
    }
    let user = state
        .accounts
        .create_user(NewUser {
            username: &body.username,
            password: body.password.as_deref(),
            is_admin: body.is_admin,
        })
        .await?;
    Ok(HttpResponse::Created()
        .json(json!({"id": user.id, "username": user.username, "is_admin": user.is_admin})))
}
