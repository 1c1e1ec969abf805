//! `create_artifact` and `update_artifact` (docs/spec.md#artifacts): versioned deliverables. The
//! chat's session writes them; each write emits `x_artifact.created` / `x_artifact.updated` and
//! puts the version in the answer's message parts, so it shows in history on every reload.

use std::borrow::Cow;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::chat_context::{ChatContext, session_gone};
use super::schema::{add_to_description, set_keyword};
use super::{ProgressKind, ToolError, ToolFuture, TypedTool, typed};
use crate::chat::artifacts::{
    self, ArtifactError, CreateArtifact, MAX_LANGUAGE_CHARS, MAX_TITLE_CHARS, NewArtifact,
    UpdateArtifact,
};
use crate::llm::wire::ToolDefinition;

fn tool_error(err: ArtifactError) -> ToolError {
    match err {
        ArtifactError::Invalid(message) => ToolError::invalid_arguments(message),
        ArtifactError::Exists(identifier) => ToolError::new(
            "artifact_exists",
            format!("an artifact with identifier {identifier:?} already exists in this chat"),
            format!(
                "Use update_artifact with identifier {identifier:?} to change it, or choose a \
                 new identifier."
            ),
        ),
        ArtifactError::NotFound(identifier) => ToolError::new(
            "artifact_not_found",
            format!("there is no artifact with identifier {identifier:?} in this chat"),
            "Create it with create_artifact first, or use the identifier of an existing artifact.",
        ),
        ArtifactError::Database(db) => ToolError::new(
            "storage_failed",
            format!("the artifact could not be saved: {db}"),
            "Try again, or give the content in your answer.",
        ),
    }
}

fn check_content(content: &str, max_bytes: usize) -> Result<(), ToolError> {
    if content.len() > max_bytes {
        return Err(ToolError::new(
            "content_too_large",
            format!(
                "the content is {} bytes; an artifact holds at most {max_bytes} bytes",
                content.len()
            ),
            "Split the content into several artifacts, or shorten it.",
        ));
    }
    Ok(())
}

/// What `check_identifier` accepts, for servers that constrain arguments by the schema.
const IDENTIFIER_PATTERN: &str = "^[A-Za-z0-9._-]+$";
/// A code type `check_type` accepts: `text/x-{language}`.
const CODE_TYPE_PATTERN: &str = "^text/x-[A-Za-z0-9+#._-]{1,32}$";

/// The parameters derived from the arguments with the configured limits of an identifier and
/// of the content.
fn artifact_parameters(mut parameters: Value, config: &crate::config::Config) -> Value {
    let limits = &config.artifacts;
    let identifier = "/properties/identifier";
    set_keyword(
        &mut parameters,
        identifier,
        "maxLength",
        limits.max_identifier_chars,
    );
    let length = format!("1-{} characters.", limits.max_identifier_chars);
    add_to_description(&mut parameters, identifier, &length);
    // Characters are at most as many as bytes: the byte limit is checked when the tool runs.
    let content = "/properties/content";
    set_keyword(
        &mut parameters,
        content,
        "maxLength",
        limits.max_content_bytes,
    );
    let size = format!("At most {} bytes.", limits.max_content_bytes);
    add_to_description(&mut parameters, content, &size);
    parameters
}

pub struct CreateArtifactTool(pub Arc<ChatContext>);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArgs {
    /// Stable slug: ASCII letters, digits, '-', '_' and '.' (e.g. "fibonacci.py"). Unique in the
    /// chat; reuse it with update_artifact.
    #[schemars(length(min = 1), regex(pattern = IDENTIFIER_PATTERN))]
    identifier: String,
    /// Human-readable title.
    #[schemars(length(min = 1, max = MAX_TITLE_CHARS))]
    title: String,
    /// MIME type: text/markdown, text/html, text/plain, image/svg+xml, text/x-mermaid,
    /// application/json, or text/x-{language} for code (e.g. text/x-python).
    #[serde(rename = "type")]
    #[schemars(extend("anyOf" = [{"enum": artifacts::FIXED_TYPES}, {"pattern": CODE_TYPE_PATTERN}]))]
    mime_type: String,
    /// Programming language for syntax highlighting (e.g. python). Omit for non-code artifacts.
    #[schemars(length(max = MAX_LANGUAGE_CHARS))]
    language: Option<String>,
    /// The full content.
    content: String,
}

const CREATE_ARTIFACT: &str = "create_artifact";
const CREATE_DESCRIPTION: &str = "Create a persistent artifact (a code file, document, HTML page, \
    SVG image or Mermaid diagram) stored in this chat, where the user can view, download and \
    later see it updated. Use it for substantial deliverables rather than pasting them.";

impl CreateArtifactTool {
    /// The definition, from the limits in `config` (for listing tools without a chat).
    pub fn describe(config: &crate::config::Config) -> ToolDefinition {
        typed::definition::<CreateArgs>(CREATE_ARTIFACT, CREATE_DESCRIPTION, |derived| {
            artifact_parameters(derived, config)
        })
    }
}

impl TypedTool for CreateArtifactTool {
    type Args = CreateArgs;

    fn name(&self) -> &'static str {
        CREATE_ARTIFACT
    }

    fn description(&self) -> Cow<'_, str> {
        CREATE_DESCRIPTION.into()
    }

    fn parameters(&self, derived: Value) -> Value {
        artifact_parameters(derived, &self.0.config)
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    /// `x_artifact.created` / `x_artifact.updated`.
    fn own_events(&self) -> bool {
        true
    }

    fn call(&self, args: CreateArgs) -> ToolFuture {
        let ctx = Arc::clone(&self.0);
        Box::pin(async move {
            let limits = &ctx.config.artifacts;
            artifacts::check_identifier(&args.identifier, limits.max_identifier_chars)
                .map_err(tool_error)?;
            let mime_type = artifacts::check_type(&args.mime_type).map_err(tool_error)?;
            let title = args.title.trim().to_string();
            if title.is_empty() || title.chars().count() > MAX_TITLE_CHARS {
                return Err(ToolError::invalid_arguments(format!(
                    "title must be 1-{MAX_TITLE_CHARS} characters"
                )));
            }
            let language = args
                .language
                .map(|l| l.trim().to_ascii_lowercase())
                .filter(|l| !l.is_empty());
            check_content(&args.content, limits.max_content_bytes)?;
            let content = args.content.clone();
            let head = ctx
                .session()?
                .send(CreateArtifact(NewArtifact {
                    identifier: args.identifier,
                    title,
                    mime_type,
                    language,
                    content: args.content,
                }))
                .await
                .map_err(session_gone)?
                .map_err(tool_error)?;
            ctx.emit(
                "x_artifact.created",
                artifacts::event_payload(
                    json!({"identifier": head.identifier, "title": head.title,
                           "version": head.version}),
                    &head,
                    &content,
                ),
            );
            ctx.parts.upsert(artifacts::part(&head, &content));
            Ok(json!({
                "status": "created",
                "artifact_id": head.id,
                "identifier": head.identifier,
                "title": head.title,
                "type": head.mime_type,
                "version": head.version,
            }))
        })
    }
}

pub struct UpdateArtifactTool(pub Arc<ChatContext>);

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArgs {
    /// The identifier of an artifact created earlier in this chat.
    #[schemars(length(min = 1), regex(pattern = IDENTIFIER_PATTERN))]
    identifier: String,
    /// The complete updated content.
    content: String,
}

const UPDATE_ARTIFACT: &str = "update_artifact";
const UPDATE_DESCRIPTION: &str = "Replace the whole content of an artifact created earlier in \
    this chat, making a new version (earlier versions are kept). Send the complete new content, \
    not a diff.";

impl UpdateArtifactTool {
    /// The definition, from the limits in `config` (for listing tools without a chat).
    pub fn describe(config: &crate::config::Config) -> ToolDefinition {
        typed::definition::<UpdateArgs>(UPDATE_ARTIFACT, UPDATE_DESCRIPTION, |derived| {
            artifact_parameters(derived, config)
        })
    }
}

impl TypedTool for UpdateArtifactTool {
    type Args = UpdateArgs;

    fn name(&self) -> &'static str {
        UPDATE_ARTIFACT
    }

    fn description(&self) -> Cow<'_, str> {
        UPDATE_DESCRIPTION.into()
    }

    fn parameters(&self, derived: Value) -> Value {
        artifact_parameters(derived, &self.0.config)
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    /// `x_artifact.created` / `x_artifact.updated`.
    fn own_events(&self) -> bool {
        true
    }

    fn call(&self, args: UpdateArgs) -> ToolFuture {
        let ctx = Arc::clone(&self.0);
        Box::pin(async move {
            artifacts::check_identifier(
                &args.identifier,
                ctx.config.artifacts.max_identifier_chars,
            )
            .map_err(tool_error)?;
            check_content(&args.content, ctx.config.artifacts.max_content_bytes)?;
            let content = args.content.clone();
            let head = ctx
                .session()?
                .send(UpdateArtifact {
                    identifier: args.identifier,
                    content: args.content,
                })
                .await
                .map_err(session_gone)?
                .map_err(tool_error)?;
            ctx.emit(
                "x_artifact.updated",
                artifacts::event_payload(
                    json!({"identifier": head.identifier, "version": head.version}),
                    &head,
                    &content,
                ),
            );
            ctx.parts.upsert(artifacts::part(&head, &content));
            Ok(json!({
                "status": "updated",
                "artifact_id": head.id,
                "identifier": head.identifier,
                "version": head.version,
            }))
        })
    }
}
