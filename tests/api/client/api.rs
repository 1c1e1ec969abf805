//! `/api/...`: agents, knowledge bases, schedules, workflows, the tool catalog and MCP
//! servers.

use std::fmt::Display;

use reqwest::{Method, RequestBuilder};

use super::Client;

/// The `api` routes, with one client's credentials.
#[derive(Clone, Copy)]
pub struct Api<'a>(pub(super) Client<'a>);

// Every route has its method, whether or not a test calls it yet.
#[allow(dead_code)]
impl Api<'_> {
    /// `GET /api/agents`: lists agents.
    pub fn agents(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/api/agents")
    }

    /// `POST /api/agents`: creates an agent.
    pub fn create_agent(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/api/agents")
    }

    /// `GET /api/agents/{agent}`: one agent.
    pub fn agent(&self, agent: impl Display) -> RequestBuilder {
        self.0.request(Method::GET, &format!("/api/agents/{agent}"))
    }

    /// `PATCH /api/agents/{agent}`: changes an agent.
    pub fn update_agent(&self, agent: impl Display) -> RequestBuilder {
        self.0
            .request(Method::PATCH, &format!("/api/agents/{agent}"))
    }

    /// `PUT /api/agents/{agent}`: changes an agent (PUT).
    pub fn replace_agent(&self, agent: impl Display) -> RequestBuilder {
        self.0.request(Method::PUT, &format!("/api/agents/{agent}"))
    }

    /// `DELETE /api/agents/{agent}`: deletes an agent.
    pub fn delete_agent(&self, agent: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/api/agents/{agent}"))
    }

    /// `GET /api/agents/{agent}/chat/tools`: the tools a chat with an agent offers.
    pub fn agent_tools(&self, agent: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/api/agents/{agent}/chat/tools"))
    }

    /// `GET /api/knowledge-bases`: lists knowledge bases.
    pub fn knowledge_bases(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/api/knowledge-bases")
    }

    /// `POST /api/knowledge-bases`: creates a knowledge base.
    pub fn create_knowledge_base(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/api/knowledge-bases")
    }

    /// `GET /api/knowledge-bases/{kb}`: one knowledge base.
    pub fn knowledge_base(&self, kb: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/api/knowledge-bases/{kb}"))
    }

    /// `PATCH /api/knowledge-bases/{kb}`: renames a knowledge base.
    pub fn rename_knowledge_base(&self, kb: impl Display) -> RequestBuilder {
        self.0
            .request(Method::PATCH, &format!("/api/knowledge-bases/{kb}"))
    }

    /// `DELETE /api/knowledge-bases/{kb}`: deletes a knowledge base.
    pub fn delete_knowledge_base(&self, kb: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/api/knowledge-bases/{kb}"))
    }

    /// `GET /api/knowledge-bases/{kb}/documents`: a knowledge base's documents.
    pub fn kb_documents(&self, kb: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/api/knowledge-bases/{kb}/documents"))
    }

    /// `POST /api/knowledge-bases/{kb}/documents`: adds a document to a knowledge base.
    pub fn add_kb_document(&self, kb: impl Display) -> RequestBuilder {
        self.0.request(
            Method::POST,
            &format!("/api/knowledge-bases/{kb}/documents"),
        )
    }

    /// `DELETE /api/knowledge-bases/{kb}/documents/{document}`: removes a document from a knowledge base.
    pub fn remove_kb_document(&self, kb: impl Display, document: impl Display) -> RequestBuilder {
        self.0.request(
            Method::DELETE,
            &format!("/api/knowledge-bases/{kb}/documents/{document}"),
        )
    }

    /// `OPTIONS /api/knowledge-bases/{kb}/uploads`: what a knowledge base's tus endpoint supports.
    pub fn kb_upload_options(&self, kb: impl Display) -> RequestBuilder {
        self.0.request(
            Method::OPTIONS,
            &format!("/api/knowledge-bases/{kb}/uploads"),
        )
    }

    /// `POST /api/knowledge-bases/{kb}/uploads`: starts a resumable (tus) upload into a knowledge base.
    pub fn create_kb_upload(&self, kb: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/api/knowledge-bases/{kb}/uploads"))
    }

    /// `HEAD /api/knowledge-bases/{kb}/uploads/{upload}`: how much of a knowledge base upload has arrived.
    pub fn kb_upload_offset(&self, kb: impl Display, upload: impl Display) -> RequestBuilder {
        self.0.request(
            Method::HEAD,
            &format!("/api/knowledge-bases/{kb}/uploads/{upload}"),
        )
    }

    /// `PATCH /api/knowledge-bases/{kb}/uploads/{upload}`: sends more of a knowledge base upload.
    pub fn kb_upload_chunk(&self, kb: impl Display, upload: impl Display) -> RequestBuilder {
        self.0.request(
            Method::PATCH,
            &format!("/api/knowledge-bases/{kb}/uploads/{upload}"),
        )
    }

    /// `DELETE /api/knowledge-bases/{kb}/uploads/{upload}`: abandons a knowledge base upload.
    pub fn terminate_kb_upload(&self, kb: impl Display, upload: impl Display) -> RequestBuilder {
        self.0.request(
            Method::DELETE,
            &format!("/api/knowledge-bases/{kb}/uploads/{upload}"),
        )
    }

    /// `GET /api/mcp/servers`: the configured MCP servers.
    pub fn mcp_servers(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/api/mcp/servers")
    }

    /// `GET /api/tools`: the tool catalog.
    pub fn tools(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/api/tools")
    }

    /// `GET /api/schedules`: lists schedules.
    pub fn schedules(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/api/schedules")
    }

    /// `POST /api/schedules`: creates a schedule.
    pub fn create_schedule(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/api/schedules")
    }

    /// `GET /api/schedules/{schedule}`: one schedule.
    pub fn schedule(&self, schedule: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/api/schedules/{schedule}"))
    }

    /// `PATCH /api/schedules/{schedule}`: changes a schedule.
    pub fn update_schedule(&self, schedule: impl Display) -> RequestBuilder {
        self.0
            .request(Method::PATCH, &format!("/api/schedules/{schedule}"))
    }

    /// `DELETE /api/schedules/{schedule}`: deletes a schedule.
    pub fn delete_schedule(&self, schedule: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/api/schedules/{schedule}"))
    }

    /// `POST /api/schedules/{schedule}/pause`: pauses a schedule.
    pub fn pause_schedule(&self, schedule: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/api/schedules/{schedule}/pause"))
    }

    /// `POST /api/schedules/{schedule}/resume`: resumes a schedule.
    pub fn resume_schedule(&self, schedule: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/api/schedules/{schedule}/resume"))
    }

    /// `GET /api/workflows`: lists workflows.
    pub fn workflows(&self) -> RequestBuilder {
        self.0.request(Method::GET, "/api/workflows")
    }

    /// `POST /api/workflows`: creates a workflow.
    pub fn create_workflow(&self) -> RequestBuilder {
        self.0.request(Method::POST, "/api/workflows")
    }

    /// `GET /api/workflows/{workflow}`: one workflow.
    pub fn workflow(&self, workflow: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/api/workflows/{workflow}"))
    }

    /// `PATCH /api/workflows/{workflow}`: changes a workflow (a new version).
    pub fn update_workflow(&self, workflow: impl Display) -> RequestBuilder {
        self.0
            .request(Method::PATCH, &format!("/api/workflows/{workflow}"))
    }

    /// `DELETE /api/workflows/{workflow}`: deletes a workflow.
    pub fn delete_workflow(&self, workflow: impl Display) -> RequestBuilder {
        self.0
            .request(Method::DELETE, &format!("/api/workflows/{workflow}"))
    }

    /// `GET /api/workflows/{workflow}/versions`: a workflow's versions.
    pub fn workflow_versions(&self, workflow: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/api/workflows/{workflow}/versions"))
    }

    /// `GET /api/workflows/{workflow}/runs`: a workflow's runs.
    pub fn workflow_runs(&self, workflow: impl Display) -> RequestBuilder {
        self.0
            .request(Method::GET, &format!("/api/workflows/{workflow}/runs"))
    }

    /// `POST /api/workflows/{workflow}/runs`: runs a workflow.
    pub fn run_workflow(&self, workflow: impl Display) -> RequestBuilder {
        self.0
            .request(Method::POST, &format!("/api/workflows/{workflow}/runs"))
    }
}
