//! `/v1/...`: OpenAI's API — models, Chat Completions, Responses, conversations, files,
//! vector stores, and image generation passed through to `[images]` — over the same chats and runs as the chat API. `shared`: what the resources
//! share (OpenAI's list objects and their paging, metadata, vector store ids), so none of them
//! imports another for it.

pub(in crate::http) mod completions;
pub(in crate::http) mod containers;
pub(in crate::http) mod conversations;
pub(in crate::http) mod files;
pub(in crate::http) mod images;
pub(in crate::http) mod models;
pub(in crate::http) mod responses;
pub(in crate::http) mod shared;
pub(in crate::http) mod vector_stores;

use actix_web::web;

/// Mounts `/v1`; `max_body_bytes` is the JSON limit of the routes that take inline images.
pub fn configure(cfg: &mut web::ServiceConfig, max_body_bytes: usize) {
    cfg.configure(models::configure)
        .configure(|cfg| completions::configure(cfg, max_body_bytes))
        .configure(|cfg| responses::configure(cfg, max_body_bytes))
        .configure(conversations::configure)
        .configure(files::configure)
        .configure(containers::configure)
        .configure(|cfg| images::configure(cfg, max_body_bytes))
        .configure(vector_stores::configure);
}
