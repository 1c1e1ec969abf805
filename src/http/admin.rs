//! `/admin/api`: what the admin page does, for admins only (anyone else: 403). Users: list,
//! create (with a one-time login link to hand over), disable or enable, make or unmake admin,
//! a fresh login link, and delete with everything they own after the username is typed back.
//! Status: the model servers' and MCP servers' health, the version and the storage used.

use actix_web::{HttpRequest, HttpResponse, web};
use entities::ids::UserId;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::{AccountChange, NewUser, Principal};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Most files counted when measuring the data directory: the measure stays bounded on a
/// directory that grew huge (it then says it stopped early).
const MAX_COUNTED_FILES: usize = 1_000_000;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/admin/api/users", web::get().to(list_users))
        .route("/admin/api/users", web::post().to(create_user))
        .route("/admin/api/users/{id}", web::patch().to(change_user))
        .route("/admin/api/users/{id}", web::delete().to(delete_user))
        .route(
            "/admin/api/users/{id}/login-link",
            web::post().to(login_link),
        )
        .route("/admin/api/status", web::get().to(status));
}

/// The caller, if an admin; 403 otherwise.
fn admin(principal: &Principal) -> AppResult<()> {
    if principal.is_admin() {
        Ok(())
    } else {
        Err(AppError::Forbidden("only an admin may do this".into()))
    }
}

#[derive(Serialize)]
struct UserView {
    id: UserId,
    username: String,
    is_admin: bool,
    disabled: bool,
    created_at: chrono::DateTime<chrono::Utc>,
}

impl From<entities::users::Model> for UserView {
    fn from(user: entities::users::Model) -> Self {
        Self {
            id: user.id,
            username: user.username,
            is_admin: user.is_admin,
            disabled: user.disabled,
            created_at: user.created_at,
        }
    }
}

async fn list_users(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    admin(&principal)?;
    let users: Vec<UserView> = state
        .accounts
        .list_users()
        .await?
        .into_iter()
        .map(UserView::from)
        .collect();
    Ok(HttpResponse::Ok().json(json!({"data": users})))
}

/// The address people reach this server at: `public_url`, else what the request addressed.
fn public_base(state: &AppState, req: &HttpRequest) -> String {
    match &state.config().public_url {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => {
            let info = req.connection_info();
            format!("{}://{}", info.scheme(), info.host())
        }
    }
}

/// A new one-time login link for `user`, as a URL to hand over.
async fn link_for(state: &AppState, req: &HttpRequest, user: &UserId) -> AppResult<String> {
    let issued = state.accounts.issue_login_link(user).await?;
    Ok(format!(
        "{}/login?token={}",
        public_base(state, req),
        issued.secret
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateUser {
    username: String,
    #[serde(default)]
    is_admin: bool,
}

/// Creates a user without a password; the answer's `login_url` signs them in once.
async fn create_user(
    principal: Principal,
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Json<CreateUser>,
) -> AppResult<HttpResponse> {
    admin(&principal)?;
    let user = state
        .accounts
        .create_user(NewUser {
            username: body.username.trim(),
            password: None,
            is_admin: body.is_admin,
        })
        .await?;
    let login_url = link_for(&state, &req, &user.id).await?;
    tracing::info!(admin = %principal.username(), user = %user.username, "an admin created a user");
    Ok(HttpResponse::Created().json(json!({
        "user": UserView::from(user),
        "login_url": login_url,
        "expires_in_minutes": state.config().auth.login_link_ttl_minutes,
    })))
}

async fn login_link(
    principal: Principal,
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<UserId>,
) -> AppResult<HttpResponse> {
    admin(&principal)?;
    let user = state
        .accounts
        .user(&path)
        .await?
        .ok_or(AppError::NotFound("user"))?;
    let login_url = link_for(&state, &req, &user.id).await?;
    Ok(HttpResponse::Ok().json(json!({
        "login_url": login_url,
        "expires_in_minutes": state.config().auth.login_link_ttl_minutes,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeUser {
    disabled: Option<bool>,
    is_admin: Option<bool>,
}

async fn change_user(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<UserId>,
    body: web::Json<ChangeUser>,
) -> AppResult<HttpResponse> {
    admin(&principal)?;
    if body.disabled.is_none() && body.is_admin.is_none() {
        return Err(AppError::invalid("give disabled or is_admin to change"));
    }
    let user = state
        .accounts
        .change_account(
            principal.user_id(),
            &path,
            AccountChange {
                disabled: body.disabled,
                is_admin: body.is_admin,
            },
        )
        .await?;
    // A disabled account stops acting at once: its runs in progress are cancelled.
    let stopped = if user.disabled {
        state.launcher.stop_runs_of(&user.id)
    } else {
        0
    };
    tracing::info!(admin = %principal.username(), user = %user.username,
        disabled = user.disabled, is_admin = user.is_admin, stopped, "an admin changed an account");
    Ok(HttpResponse::Ok().json(UserView::from(user)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteUser {
    /// The user's username, typed back.
    confirm: String,
}

/// Deletes a user and everything they own: each chat is let go as a chat's deletion lets it go
/// (`Launcher::forget_chats_of`: runs, sessions, indexes, images, browser sessions), then the
/// account, from which the database cascades the rest.
async fn delete_user(
    principal: Principal,
    state: web::Data<AppState>,
    path: web::Path<UserId>,
    body: web::Json<DeleteUser>,
) -> AppResult<HttpResponse> {
    admin(&principal)?;
    state
        .accounts
        .check_deletion(principal.user_id(), &path, &body.confirm)
        .await?;
    let chats = state.launcher.forget_chats_of(&path).await?;
    let user = state
        .accounts
        .delete_account(principal.user_id(), &path, &body.confirm)
        .await?;
    tracing::info!(admin = %principal.username(), user = %user.username, chats,
        "an admin deleted a user and their data");
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "id": user.id, "chats": chats})))
}

/// Bytes of the files under `dir`, and whether counting stopped at `MAX_COUNTED_FILES`.
fn directory_bytes(dir: &std::path::Path) -> (u64, bool) {
    let mut total = 0u64;
    let mut files = 0usize;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                files += 1;
                if files > MAX_COUNTED_FILES {
                    return (total, true);
                }
                total += entry.metadata().map_or(0, |m| m.len());
            }
        }
    }
    (total, false)
}

async fn status(principal: Principal, state: web::Data<AppState>) -> AppResult<HttpResponse> {
    admin(&principal)?;
    let data_dir = state.config().data_dir.clone();
    let (data_dir_bytes, truncated) =
        tokio::task::spawn_blocking(move || directory_bytes(&data_dir))
            .await
            .map_err(AppError::internal)?;
    let providers: Vec<serde_json::Value> = state
        .llm()
        .statuses()
        .await
        .into_iter()
        .map(|p| json!({"id": p.id, "status": p.status, "models": p.models, "error": p.error}))
        .collect();
    Ok(HttpResponse::Ok().json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "providers": providers,
        "mcp_servers": state.mcp().health(),
        "storage": {
            "data_dir_bytes": data_dir_bytes,
            "data_dir_counted_in_full": !truncated,
            "database_bytes": crate::db::database_bytes(state.db()).await,
        },
        "users": state.accounts.count_users().await?,
    })))
}
