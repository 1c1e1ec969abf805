//! The caller's own account (the account page, `/settings`): who they are with their display
//! name and time zone (`GET`/`PATCH /auth/account`; a PATCH changes only the fields it
//! names), a password change that needs the current password and signs every other session
//! out (`POST /auth/account/password`), and their login sessions (`GET /auth/sessions`,
//! `DELETE /auth/sessions/{id}`). API keys are `auth`'s.

use actix_web::cookie::Cookie;
use actix_web::{HttpRequest, HttpResponse, web};
use entities::ids::LoginSessionId;
use serde::Deserialize;
use serde_json::json;

use crate::auth::{Principal, ThrottledBy, session_token};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/auth/account", web::get().to(get))
        .route("/auth/account", web::patch().to(update))
        .route("/auth/account/password", web::post().to(change_password))
        .route("/auth/sessions", web::get().to(sessions))
        .route("/auth/sessions/{id}", web::delete().to(end_session));
}

/// The session the request came with: none for an API key (a bearer token wins over a cookie).
async fn current_session(
    state: &AppState,
    principal: &Principal,
    req: &HttpRequest,
) -> AppResult<Option<LoginSessionId>> {
    if principal.api_key_id().is_some() {
        return Ok(None);
    }
    match session_token(req) {
        Some(token) => Ok(state.accounts.session_id(&token).await?),
        None => Ok(None),
    }
}

async fn get(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    let user = state
        .accounts
        .user(principal.user_id())
        .await?
        .ok_or(AppError::Unauthenticated)?;
    Ok(HttpResponse::Ok().json(json!({
        "id": user.id,
        "username": user.username,
        "display_name": user.display_name,
        "time_zone": user.time_zone.as_deref().unwrap_or("UTC"),
        "is_admin": user.is_admin,
        "has_password": user.password_hash.is_some(),
        "created_at": user.created_at,
    })))
}

/// What a PATCH changes: a field left out stays as it is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateAccount {
    /// `null` or blank: none (the username is shown).
    #[serde(default, deserialize_with = "present")]
    display_name: Option<Option<String>>,
    /// An IANA name (`Europe/Paris`); `null` or blank: UTC. Schedules created without a zone
    /// take it.
    #[serde(default, deserialize_with = "present")]
    time_zone: Option<Option<String>>,
}

/// A field that is present, `null` included (`Some(None)`), as opposed to left out (`None`).
fn present<'de, D>(deserializer: D) -> Result<Option<Option<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<String>::deserialize(deserializer).map(Some)
}

async fn update(
    principal: Principal,
    state: web::Data<AppState>,
    body: web::Json<UpdateAccount>,
) -> AppResult<HttpResponse> {
    let body = body.into_inner();
    // The zone is checked before anything is stored, so a refused PATCH changes nothing.
    if let Some(zone) = &body.time_zone {
        crate::auth::parse_time_zone(zone.as_deref())?;
    }
    if let Some(name) = &body.display_name {
        state
            .accounts
            .set_display_name(principal.user_id(), name.as_deref())
            .await?;
    }
    if let Some(zone) = &body.time_zone {
        state
            .accounts
            .set_time_zone(principal.user_id(), zone.as_deref())
            .await?;
    }
    let user = state
        .accounts
        .user(principal.user_id())
        .await?
        .ok_or(AppError::Unauthenticated)?;
    Ok(HttpResponse::Ok().json(json!({
        "display_name": user.display_name,
        "time_zone": user.time_zone.as_deref().unwrap_or("UTC"),
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangePassword {
    current_password: String,
    new_password: String,
}

/// A wrong current password counts as a failed login (the same per-account and per-address
/// limits), so a stolen session cannot be used to guess the password.
async fn change_password(
    principal: Principal,
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<ChangePassword>,
) -> AppResult<HttpResponse> {
    let address = req.peer_addr().map(|peer| peer.ip());
    let attempt = state
        .login_throttle
        .begin(principal.username(), address)
        .map_err(|throttled| {
            let limit = match throttled.by {
                ThrottledBy::Account => "account",
                ThrottledBy::Address => "address",
            };
            tracing::warn!(limit, "password change refused: too many failures");
            AppError::RateLimited {
                retry_after_secs: throttled.retry_after_secs,
            }
        })?;
    let keep = current_session(&state, &principal, &req).await?;
    let changed = state
        .accounts
        .change_password(
            principal.user_id(),
            &body.current_password,
            &body.new_password,
            keep.as_ref(),
        )
        .await;
    match changed {
        // Not forgiven: it counts as a failed login.
        Err(crate::auth::AuthError::WrongPassword) => {
            Err(crate::auth::AuthError::WrongPassword.into())
        }
        Err(err) => {
            state.login_throttle.forgive(attempt);
            Err(err.into())
        }
        Ok(signed_out) => {
            state.login_throttle.forgive(attempt);
            tracing::info!(user = %principal.username(), signed_out, "password changed");
            Ok(
                HttpResponse::Ok()
                    .json(json!({"changed": true, "signed_out_sessions": signed_out})),
            )
        }
    }
}

async fn sessions(
    principal: Principal,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> AppResult<HttpResponse> {
    let current = current_session(&state, &principal, &req).await?;
    let data = state
        .accounts
        .list_sessions(principal.user_id(), current.as_ref())
        .await?;
    Ok(HttpResponse::Ok().json(json!({"data": data})))
}

/// Signs one of the caller's sessions out; signing out the current one also clears its cookie.
async fn end_session(
    principal: Principal,
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<LoginSessionId>,
) -> AppResult<HttpResponse> {
    let current = current_session(&state, &principal, &req).await?;
    let ended = state
        .accounts
        .end_session_by_id(principal.user_id(), &path)
        .await?;
    if !ended {
        return Err(AppError::NotFound("session"));
    }
    let mut response = HttpResponse::Ok();
    if current.as_ref() == Some(&*path) {
        let mut expired = Cookie::new(crate::auth::SESSION_COOKIE, "");
        expired.set_path("/");
        expired.make_removal();
        response.cookie(expired);
    }
    Ok(response.json(json!({"signed_out": true, "id": path.into_inner()})))
}

/// The browser's `User-Agent`, kept with a session it starts.
pub(in crate::http) fn user_agent(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(actix_web::http::header::USER_AGENT)
        .and_then(|value| value.to_str().ok())
}
