//! `/chat/api/...`: chats and what lives in one (messages, runs, asks, artifacts,
//! memories, documents, attachments, uploads), export and import, and the model picker.

use std::fmt::Display;

use reqwest::{Method, RequestBuilder};

use super::Client;

/// The `chat_api` routes, with one client's credentials.
#[derive(Clone, Copy)]
pub struct ChatApi<'a>(pub(super) Client<'a>);

// Every route has its method, whether or not a test calls it yet.
#[allow(dead_code)]
impl ChatApi<'_> {
    /// `POST /chat/api/chats`: creates a chat.
    pub fn create_chat(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/chat/api/chats")
    }

    /// `GET /chat/api/chats`: lists the caller's chats.
    pub fn list_chats(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/chat/api/chats")
    }

    /// `GET /chat/api/chats/{chat}`: one chat.
    pub fn chat(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/chats/{chat}"))
    }

    /// `PATCH /chat/api/chats/{chat}`: changes a chat (title, agent, ...).
    pub fn update_chat(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::PATCH, &format!("/chat/api/chats/{chat}"))
    }

    /// `DELETE /chat/api/chats/{chat}`: deletes a chat.
    pub fn delete_chat(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/chat/api/chats/{chat}"))
    }

    /// `GET /chat/api/folders`: the caller's folders of chats.
    pub fn folders(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/chat/api/folders")
    }

    /// `POST /chat/api/folders`: creates a folder.
    pub fn create_folder(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/chat/api/folders")
    }

    /// `PATCH /chat/api/folders/{folder}`: renames a folder.
    pub fn rename_folder(&self, folder: impl Display) -> RequestBuilder {
        self.0
            .request(Method::PATCH, &format!("/chat/api/folders/{folder}"))
    }

    /// `DELETE /chat/api/folders/{folder}`: deletes a folder (its chats stay).
    pub fn delete_folder(&self, folder: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/chat/api/folders/{folder}"))
    }

    /// `GET /chat/api/export`: exports every chat of the caller.
    pub fn export_all(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/chat/api/export")
    }

    /// `POST /chat/api/import`: imports chats from an export.
    pub fn import(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/chat/api/import")
    }

    /// `GET /chat/api/{chat}/export`: exports one chat.
    pub fn export(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/{chat}/export"))
    }

    /// `GET /chat/api/{chat}/messages`: a chat's messages.
    pub fn messages(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/{chat}/messages"))
    }

    /// `POST /chat/api/{chat}/messages`: sends a message; the answer streams back.
    pub fn send_message(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/chat/api/{chat}/messages"))
    }

    /// `POST /chat/api/{chat}/messages/{message}/edit`: edits a message into a new branch.
    pub fn edit_message(&self, chat: impl Display, message: impl Display) -> RequestBuilder {
        self.0.request(
            Method::POST,
            &format!("/chat/api/{chat}/messages/{message}/edit"),
        )
    }

    /// `POST /chat/api/{chat}/messages/{message}/regenerate`: asks again for an answer.
    pub fn regenerate(&self, chat: impl Display, message: impl Display) -> RequestBuilder {
        self.0.request(
            Method::POST,
            &format!("/chat/api/{chat}/messages/{message}/regenerate"),
        )
    }

    /// `POST /chat/api/{chat}/messages/{message}/switch`: switches to another branch at a message.
    pub fn switch_branch(&self, chat: impl Display, message: impl Display) -> RequestBuilder {
        self.0.request(
            Method::POST,
            &format!("/chat/api/{chat}/messages/{message}/switch"),
        )
    }

    /// `GET /chat/api/{chat}/tree`: a chat's message tree.
    pub fn tree(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/{chat}/tree"))
    }

    /// `GET /chat/api/{chat}/runs/{run}/events`: a run's events, as a stream.
    pub fn run_events(&self, chat: impl Display, run: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/{chat}/runs/{run}/events"))
    }

    /// `POST /chat/api/{chat}/runs/{run}/cancel`: cancels a run.
    pub fn cancel_run(&self, chat: impl Display, run: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/chat/api/{chat}/runs/{run}/cancel"))
    }

    /// `POST /chat/api/{chat}/ask/{correlation}`: answers a question the model asked.
    pub fn answer_ask(&self, chat: impl Display, correlation: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/chat/api/{chat}/ask/{correlation}"))
    }

    /// `GET /chat/api/{chat}/asks`: a chat's questions to the user.
    pub fn asks(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/{chat}/asks"))
    }

    /// `GET /chat/api/{chat}/artifacts`: a chat's artifacts.
    pub fn artifacts(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/{chat}/artifacts"))
    }

    /// `GET /chat/api/{chat}/artifacts/{artifact}`: one artifact.
    pub fn artifact(&self, chat: impl Display, artifact: impl Display) -> RequestBuilder {
        self.0.request(
            Method::GET,
            &format!("/chat/api/{chat}/artifacts/{artifact}"),
        )
    }

    /// `DELETE /chat/api/{chat}/artifacts/{artifact}`: deletes an artifact.
    pub fn delete_artifact(&self, chat: impl Display, artifact: impl Display) -> RequestBuilder {
        self.0.request(
            Method::DELETE,
            &format!("/chat/api/{chat}/artifacts/{artifact}"),
        )
    }

    /// `GET /chat/api/{chat}/artifacts/{artifact}/raw`: an artifact's content as it is.
    pub fn artifact_raw(&self, chat: impl Display, artifact: impl Display) -> RequestBuilder {
        self.0.request(
            Method::GET,
            &format!("/chat/api/{chat}/artifacts/{artifact}/raw"),
        )
    }

    /// `GET /chat/api/{chat}/artifacts/{artifact}/preview`: an artifact rendered for viewing.
    pub fn artifact_preview(&self, chat: impl Display, artifact: impl Display) -> RequestBuilder {
        self.0.request(
            Method::GET,
            &format!("/chat/api/{chat}/artifacts/{artifact}/preview"),
        )
    }

    /// `GET /chat/api/{chat}/artifacts/{artifact}/versions/{version}`: one version of an artifact.
    pub fn artifact_version(
        &self,
        chat: impl Display,
        artifact: impl Display,
        version: impl Display,
    ) -> RequestBuilder {
        self.0.request(
            Method::GET,
            &format!("/chat/api/{chat}/artifacts/{artifact}/versions/{version}"),
        )
    }

    /// `GET /chat/api/{chat}/artifacts/{artifact}/versions/{version}/raw`: one version's content as it is.
    pub fn artifact_version_raw(
        &self,
        chat: impl Display,
        artifact: impl Display,
        version: impl Display,
    ) -> RequestBuilder {
        self.0.request(
            Method::GET,
            &format!("/chat/api/{chat}/artifacts/{artifact}/versions/{version}/raw"),
        )
    }

    /// `GET /chat/api/{chat}/artifacts/{artifact}/versions/{version}/preview`: one version rendered for viewing.
    pub fn artifact_version_preview(
        &self,
        chat: impl Display,
        artifact: impl Display,
        version: impl Display,
    ) -> RequestBuilder {
        self.0.request(
            Method::GET,
            &format!("/chat/api/{chat}/artifacts/{artifact}/versions/{version}/preview"),
        )
    }

    /// `GET /chat/api/{chat}/memories`: the memories a chat sees.
    pub fn memories(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/{chat}/memories"))
    }

    /// `POST /chat/api/{chat}/memories`: saves a memory.
    pub fn create_memory(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/chat/api/{chat}/memories"))
    }

    /// `PATCH /chat/api/{chat}/memories/{memory}`: changes a memory.
    pub fn update_memory(&self, chat: impl Display, memory: impl Display) -> RequestBuilder {
        self.0.request(
            Method::PATCH,
            &format!("/chat/api/{chat}/memories/{memory}"),
        )
    }

    /// `PUT /chat/api/{chat}/memories/{memory}`: changes a memory (PUT).
    pub fn replace_memory(&self, chat: impl Display, memory: impl Display) -> RequestBuilder {
        self.0
            .request(Method::PUT, &format!("/chat/api/{chat}/memories/{memory}"))
    }

    /// `DELETE /chat/api/{chat}/memories/{memory}`: forgets a memory.
    pub fn delete_memory(&self, chat: impl Display, memory: impl Display) -> RequestBuilder {
        self.0.request(
            Method::DELETE,
            &format!("/chat/api/{chat}/memories/{memory}"),
        )
    }

    /// `GET /chat/api/{chat}/documents`: a chat's documents.
    pub fn documents(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/{chat}/documents"))
    }

    /// `POST /chat/api/{chat}/documents`: adds a document to a chat.
    pub fn upload_document(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/chat/api/{chat}/documents"))
    }

    /// `DELETE /chat/api/{chat}/documents/{document}`: removes a document.
    pub fn delete_document(&self, chat: impl Display, document: impl Display) -> RequestBuilder {
        self.0.request(
            Method::DELETE,
            &format!("/chat/api/{chat}/documents/{document}"),
        )
    }

    /// `GET /chat/api/attachments/limits`: what an attachment may be.
    pub fn attachment_limits(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/chat/api/attachments/limits")
    }

    /// `GET /chat/api/{chat}/attachments`: a chat's attachments.
    pub fn attachments(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/chat/api/{chat}/attachments"))
    }

    /// `POST /chat/api/{chat}/attachments`: attaches a file to a chat.
    pub fn upload_attachment(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/chat/api/{chat}/attachments"))
    }

    /// `GET /chat/api/{chat}/attachments/{attachment}`: an attachment's content.
    pub fn attachment(&self, chat: impl Display, attachment: impl Display) -> RequestBuilder {
        self.0.request(
            Method::GET,
            &format!("/chat/api/{chat}/attachments/{attachment}"),
        )
    }

    /// `GET /chat/api/{chat}/screenshots/{screenshot}`: a browser screenshot.
    pub fn screenshot(&self, chat: impl Display, screenshot: impl Display) -> RequestBuilder {
        self.0.request(
            Method::GET,
            &format!("/chat/api/{chat}/screenshots/{screenshot}"),
        )
    }

    /// `OPTIONS /chat/api/{chat}/uploads`: what the resumable (tus) upload endpoint supports.
    pub fn upload_options(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::OPTIONS, &format!("/chat/api/{chat}/uploads"))
    }

    /// `POST /chat/api/{chat}/uploads`: starts a resumable (tus) upload.
    pub fn create_upload(&self, chat: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/chat/api/{chat}/uploads"))
    }

    /// `HEAD /chat/api/{chat}/uploads/{upload}`: how much of an upload has arrived.
    pub fn upload_offset(&self, chat: impl Display, upload: impl Display) -> RequestBuilder {
        self.0
            .request(Method::HEAD, &format!("/chat/api/{chat}/uploads/{upload}"))
    }

    /// `PATCH /chat/api/{chat}/uploads/{upload}`: sends more of an upload.
    pub fn upload_chunk(&self, chat: impl Display, upload: impl Display) -> RequestBuilder {
        self.0
            .request(Method::PATCH, &format!("/chat/api/{chat}/uploads/{upload}"))
    }

    /// `DELETE /chat/api/{chat}/uploads/{upload}`: abandons an upload.
    pub fn terminate_upload(&self, chat: impl Display, upload: impl Display) -> RequestBuilder {
        self.0.request(
            Method::DELETE,
            &format!("/chat/api/{chat}/uploads/{upload}"),
        )
    }

    /// `GET /chat/api/models`: the model picker's choices.
    pub fn models(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/chat/api/models")
    }

    /// `PUT /chat/api/models/default`: sets the caller's default model.
    pub fn set_default_model(&self) -> RequestBuilder {
        self.0.request(Method::PUT, "/chat/api/models/default")
    }
}
