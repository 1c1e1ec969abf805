//! The `Principal` extractor: who is making a request, from `Authorization: Bearer <api key>` or
//! the session cookie. A request with neither, or with ones that match nothing, is refused with
//! 401 before any handler runs. A bad bearer token never falls back to the cookie. A cookie
//! request that changes data must come from Colloquy's own pages (`auth::check_same_origin`),
//! or it is refused with 403.

use std::future::Future;
use std::pin::Pin;

use actix_web::http::header::AUTHORIZATION;
use actix_web::{FromRequest, HttpRequest, dev::Payload, web};

use crate::auth::{Principal, check_same_origin, session_token};
use crate::error::AppError;
use crate::state::AppState;

impl FromRequest for Principal {
    type Error = AppError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().cloned();
        let bearer = req
            .headers()
            .get(AUTHORIZATION)
            .map(|value| value.to_str().unwrap_or_default().to_string());
        let cookie = session_token(req);
        // Checked before the session is looked up: a forged request costs no query.
        let cross_site = match (&state, &bearer, &cookie) {
            (Some(state), None, Some(_)) if !req.method().is_safe() => {
                check_same_origin(req, state.config().public_url.as_deref()).err()
            }
            _ => None,
        };
        Box::pin(async move {
            if let Some(err) = cross_site {
                return Err(err.into());
            }
            let state = state.ok_or_else(|| AppError::internal(anyhow::anyhow!("no app state")))?;
            let accounts = &state.accounts;
            let principal = match (bearer, cookie) {
                (Some(header), _) => {
                    let token = header
                        .strip_prefix("Bearer ")
                        .or_else(|| header.strip_prefix("bearer "))
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .ok_or(AppError::Unauthenticated)?;
                    accounts.authenticate_api_key(token).await?
                }
                (None, Some(token)) => accounts.authenticate_session(&token).await?,
                (None, None) => None,
            };
            principal.ok_or(AppError::Unauthenticated)
        })
    }
}
