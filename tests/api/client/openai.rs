//! `/v1/...`: the OpenAI-compatible API (chat completions, responses, conversations,
//! files, vector stores, models, embeddings).

use std::fmt::Display;

use reqwest::{Method, RequestBuilder};

use super::Client;

/// The `openai` routes, with one client's credentials.
#[derive(Clone, Copy)]
pub struct OpenAi<'a>(pub(super) Client<'a>);

// Every route has its method, whether or not a test calls it yet.
#[allow(dead_code)]
impl OpenAi<'_> {
    /// `POST /v1/chat/completions`: chat completions.
    pub fn chat_completions(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/v1/chat/completions")
    }

    /// `POST /v1/responses`: creates a response.
    pub fn create_response(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/v1/responses")
    }

    /// `GET /v1/responses/{id}`: a stored response.
    pub fn response(&self, id: impl Display) -> RequestBuilder {
        self.0.request(Method::GET, &format!("/v1/responses/{id}"))
    }

    /// `DELETE /v1/responses/{id}`: deletes a stored response.
    pub fn delete_response(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/v1/responses/{id}"))
    }

    /// `GET /v1/responses/{id}/input_items`: a response's input items.
    pub fn response_input_items(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/v1/responses/{id}/input_items"))
    }

    /// `POST /v1/conversations`: creates a conversation.
    pub fn create_conversation(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/v1/conversations")
    }

    /// `GET /v1/conversations/{id}`: one conversation.
    pub fn conversation(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/v1/conversations/{id}"))
    }

    /// `POST /v1/conversations/{id}`: changes a conversation's metadata.
    pub fn update_conversation(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/v1/conversations/{id}"))
    }

    /// `DELETE /v1/conversations/{id}`: deletes a conversation.
    pub fn delete_conversation(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/v1/conversations/{id}"))
    }

    /// `GET /v1/conversations/{id}/items`: a conversation's items.
    pub fn conversation_items(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/v1/conversations/{id}/items"))
    }

    /// `POST /v1/conversations/{id}/items`: adds items to a conversation.
    pub fn add_conversation_items(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/v1/conversations/{id}/items"))
    }

    /// `GET /v1/conversations/{id}/items/{item}`: one item of a conversation.
    pub fn conversation_item(&self, id: impl Display, item: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/v1/conversations/{id}/items/{item}"))
    }

    /// `DELETE /v1/conversations/{id}/items/{item}`: deletes an item of a conversation.
    pub fn delete_conversation_item(&self, id: impl Display, item: impl Display) -> RequestBuilder {
        self.0.request(
            Method::DELETE,
            &format!("/v1/conversations/{id}/items/{item}"),
        )
    }

    /// `POST /v1/files`: uploads a file.
    pub fn upload_file(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/v1/files")
    }

    /// `GET /v1/files`: lists files.
    pub fn files(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/v1/files")
    }

    /// `GET /v1/files/{id}`: one file.
    pub fn file(&self, id: impl Display) -> RequestBuilder {
        self.0.request(Method::GET, &format!("/v1/files/{id}"))
    }

    /// `DELETE /v1/files/{id}`: deletes a file.
    pub fn delete_file(&self, id: impl Display) -> RequestBuilder {
        self.0.request(Method::DELETE, &format!("/v1/files/{id}"))
    }

    /// `GET /v1/files/{id}/content`: a file's content.
    pub fn file_content(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/v1/files/{id}/content"))
    }

    /// `POST /v1/vector_stores`: creates a vector store.
    pub fn create_vector_store(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/v1/vector_stores")
    }

    /// `GET /v1/vector_stores`: lists vector stores.
    pub fn vector_stores(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/v1/vector_stores")
    }

    /// `GET /v1/vector_stores/{id}`: one vector store.
    pub fn vector_store(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/v1/vector_stores/{id}"))
    }

    /// `POST /v1/vector_stores/{id}`: changes a vector store.
    pub fn update_vector_store(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/v1/vector_stores/{id}"))
    }

    /// `DELETE /v1/vector_stores/{id}`: deletes a vector store.
    pub fn delete_vector_store(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/v1/vector_stores/{id}"))
    }

    /// `POST /v1/vector_stores/{id}/files`: adds a file to a vector store.
    pub fn add_vector_store_file(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/v1/vector_stores/{id}/files"))
    }

    /// `GET /v1/vector_stores/{id}/files`: a vector store's files.
    pub fn vector_store_files(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/v1/vector_stores/{id}/files"))
    }

    /// `GET /v1/vector_stores/{id}/files/{file}`: one file of a vector store.
    pub fn vector_store_file(&self, id: impl Display, file: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/v1/vector_stores/{id}/files/{file}"))
    }

    /// `DELETE /v1/vector_stores/{id}/files/{file}`: removes a file from a vector store.
    pub fn delete_vector_store_file(&self, id: impl Display, file: impl Display) -> RequestBuilder {
        self.0.request(
            Method::DELETE,
            &format!("/v1/vector_stores/{id}/files/{file}"),
        )
    }

    /// `POST /v1/vector_stores/{id}/search`: searches a vector store.
    pub fn search_vector_store(&self, id: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/v1/vector_stores/{id}/search"))
    }

    /// `GET /v1/models`: lists models.
    pub fn models(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/v1/models")
    }

    /// `GET /v1/models/{id}`: one model.
    pub fn model(&self, id: impl Display) -> RequestBuilder {
        self.0.request(Method::GET, &format!("/v1/models/{id}"))
    }

    /// `POST /v1/embeddings`: embeddings.
    pub fn embeddings(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/v1/embeddings")
    }
}
