//! `/chat/api/...`: the chat API the browser UI and programs use — chats, their messages and
//! runs (streamed over SSE), asks, artifacts, memories, documents (multipart and tus uploads),
//! attachments, screenshots, exports, the model picker, folders of chats (`folders`), and a
//! chat's read-only links (`shares`). One file per resource, each with its `configure`;
//! handlers parse, call one function below, and respond.

pub(in crate::http) mod artifacts;
pub(in crate::http) mod asks;
pub(in crate::http) mod attachments;
pub(in crate::http) mod chats;
pub(in crate::http) mod documents;
pub(in crate::http) mod export;
pub(in crate::http) mod folders;
pub(in crate::http) mod memories;
pub(in crate::http) mod messages;
pub(in crate::http) mod model_picker;
pub(in crate::http) mod runs;
pub(in crate::http) mod screenshots;
pub(in crate::http) mod search;
pub(in crate::http) mod shares;
pub(in crate::http) mod uploads;

use actix_web::web;

/// Mounts the chat API's routes (in this order: a resource's fixed paths come before
/// another's `{chat_id}` ones).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.configure(model_picker::configure)
        .configure(shares::configure)
        .configure(chats::configure)
        .configure(folders::configure)
        .configure(export::configure)
        .configure(messages::configure)
        .configure(runs::configure)
        .configure(asks::configure)
        .configure(artifacts::configure)
        .configure(memories::configure)
        .configure(documents::configure)
        .configure(attachments::configure)
        .configure(screenshots::configure)
        .configure(search::configure)
        .configure(uploads::configure);
}
