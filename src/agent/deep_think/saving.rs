//! Deep Think's artifacts: the structured findings saved before the synthesis, and the
//! report saved when it is done.

use serde_json::json;

use super::plan::{self, Plan};
use super::report;
use super::subtask::Finding;
use super::{DeepThinkSpec, emit};
use crate::chat::artifacts::{self, ArtifactError, CreateArtifact, NewArtifact};
use crate::run::events::RunEvent;

/// Saves a structured artifact from the notes, and says so: a comparison table when the
/// sub-tasks give the same attributes of several things, else a findings list when the notes
/// hold enough bullet points.
pub(super) async fn save_structured(spec: &DeepThinkSpec, plan: &Plan, findings: &[Finding]) {
    let (kind, suffix, what, content) =
        if let Some(table) = report::comparison_table(&plan.title, findings) {
            (
                "comparison_table",
                "comparison",
                "a comparison table",
                table,
            )
        } else if let Some(list) = report::findings_list(&plan.title, findings, 3) {
            ("findings_list", "findings", "a list", list)
        } else {
            return;
        };
    let name = report::artifact_name(chrono::Utc::now()).replace(".md", &format!("-{suffix}.md"));
    let title = format!("{}: {suffix}", plan.title);
    if save_artifact(spec, &name, &title, &content).await.is_some() {
        emit(
            &spec.run.log,
            "artifact_created",
            json!({"artifact_type": kind, "artifact_title": title,
                   "message": format!("Saved the sub-tasks' findings as {what}.")}),
        );
    }
}

/// Saves `content` as a markdown artifact of the run's chat (a message part of its answer);
/// returns the identifier it got, `None` outside a chat or when it could not be saved.
pub(super) async fn save_artifact(
    spec: &DeepThinkSpec,
    name: &str,
    title: &str,
    content: &str,
) -> Option<String> {
    let run = &spec.run;
    let session = &run.chat.as_ref()?.session;
    let content = cut_to_bytes(content, spec.max_artifact_bytes);
    let title = plan::shorten(title, artifacts::MAX_TITLE_CHARS);
    let mut identifier = name.to_string();
    for attempt in 2..=5 {
        let saved = session
            .send(CreateArtifact(NewArtifact {
                identifier: identifier.clone(),
                title: title.clone(),
                mime_type: "text/markdown".into(),
                language: None,
                content: content.to_string(),
            }))
            .await;
        match saved {
            Ok(Ok(head)) => {
                run.log.push(RunEvent::Extension {
                    event_type: "x_artifact.created".into(),
                    payload: artifacts::event_payload(
                        json!({"identifier": head.identifier, "title": head.title,
                               "version": head.version}),
                        &head,
                        content,
                    ),
                });
                run.parts.upsert(artifacts::part(&head, content));
                return Some(head.identifier);
            }
            Ok(Err(ArtifactError::Exists(_))) => {
                identifier = name.replace(".md", &format!("-{attempt}.md"));
            }
            Ok(Err(err)) => {
                tracing::error!(run_id = %run.log.run_id, %err, "could not save a Deep Think artifact");
                return None;
            }
            Err(err) => {
                tracing::error!(run_id = %run.log.run_id, %err, "the chat went away before a Deep Think artifact was saved");
                return None;
            }
        }
    }
    None
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut_to_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
