//! A chat export as Markdown: the title, then the branch the chat shows (from its root to its
//! active leaf), each user and assistant message under a heading, with the artifact versions
//! an answer delivered in fences. Tool calls and their results, reasoning and the other
//! branches are the JSON export's.

use std::collections::HashMap;

use entities::messages::MessageRole;

use super::{ChatExport, ExportedMessage};

/// The visible branch of `export` as a Markdown document.
pub fn to_markdown(export: &ChatExport) -> String {
    let mut out = String::new();
    out.push_str(&format!("# {}\n\n", one_line(&export.chat.title)));
    let mut about = format!(
        "Exported from Colloquy on {}",
        export.exported_at.format("%Y-%m-%d %H:%M UTC")
    );
    if let Some(agent) = &export.chat.agent {
        about.push_str(&format!(" · agent: {}", one_line(&agent.name)));
    }
    out.push_str(&format!("_{about}_\n\n"));
    for message in visible_branch(export) {
        let heading = match message.role {
            MessageRole::User => "User",
            MessageRole::Assistant => "Assistant",
            MessageRole::System => "System",
            MessageRole::Tool => continue,
        };
        let text = message.content.as_deref().unwrap_or_default().trim();
        let parts = message.parts.as_ref().and_then(|p| p.as_array());
        if text.is_empty() && parts.is_none_or(|p| p.is_empty()) {
            // A model turn that only called tools.
            continue;
        }
        match message.model.as_deref() {
            Some(model) if message.role == MessageRole::Assistant => {
                out.push_str(&format!("## {heading} · {}\n\n", one_line(model)));
            }
            _ => out.push_str(&format!("## {heading}\n\n")),
        }
        if !text.is_empty() {
            out.push_str(&format!("{text}\n\n"));
        }
        for part in parts.into_iter().flatten() {
            match part["type"].as_str() {
                Some("artifact") => {
                    let content = part["content"].as_str().unwrap_or_default();
                    let language = part["language"].as_str().unwrap_or_else(|| {
                        match part["mime_type"].as_str() {
                            Some("text/markdown") => "markdown",
                            Some("text/html") => "html",
                            Some("application/json") => "json",
                            Some("text/x-mermaid") => "mermaid",
                            Some("image/svg+xml") => "svg",
                            _ => "",
                        }
                    });
                    out.push_str(&format!(
                        "**Artifact: {}** (`{}`, version {})\n\n",
                        one_line(part["title"].as_str().unwrap_or_default()),
                        one_line(part["identifier"].as_str().unwrap_or_default()),
                        part["version"].as_i64().unwrap_or(1)
                    ));
                    let fence = fence_for(content);
                    out.push_str(&format!("{fence}{language}\n{content}\n{fence}\n\n"));
                }
                Some("image") => out.push_str("_(an image was attached)_\n\n"),
                _ => {}
            }
        }
    }
    out
}

/// The messages from the root to the active leaf (the newest leaf when it names none or one
/// that is not there). Bounded by the message count, so a cycle in imported data cannot loop.
fn visible_branch(export: &ChatExport) -> Vec<&ExportedMessage> {
    let by_id: HashMap<&str, &ExportedMessage> =
        export.messages.iter().map(|m| (m.id.as_str(), m)).collect();
    let leaf = export
        .chat
        .active_leaf_id
        .as_deref()
        .and_then(|id| by_id.get(id).copied())
        .or_else(|| {
            let parents: std::collections::HashSet<&str> = export
                .messages
                .iter()
                .filter_map(|m| m.parent_id.as_deref())
                .collect();
            export
                .messages
                .iter()
                .filter(|m| !parents.contains(m.id.as_str()))
                .max_by_key(|m| m.seq)
        });
    let mut branch = Vec::new();
    let mut next = leaf;
    while let Some(message) = next {
        if branch.len() == export.messages.len() {
            break;
        }
        branch.push(message);
        next = message
            .parent_id
            .as_deref()
            .and_then(|id| by_id.get(id).copied());
    }
    branch.reverse();
    branch
}

/// A code fence longer than any run of backticks in `content`, so nothing inside closes it.
fn fence_for(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// A title or name on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::export::{ExportedChat, FORMAT, VERSION};
    use chrono::Utc;
    use serde_json::json;

    fn message(
        id: &str,
        parent: Option<&str>,
        role: MessageRole,
        text: &str,
        seq: i64,
    ) -> ExportedMessage {
        ExportedMessage {
            id: id.into(),
            parent_id: parent.map(Into::into),
            role,
            content: Some(text.into()),
            parts: None,
            tool_calls: None,
            tool_call_id: None,
            stop_reason: None,
            reasoning: None,
            model: None,
            run_id: None,
            seq,
            created_at: Utc::now(),
        }
    }

    fn export(messages: Vec<ExportedMessage>, leaf: Option<&str>) -> ChatExport {
        ChatExport {
            format: FORMAT.into(),
            version: VERSION,
            exported_at: Utc::now(),
            chat: ExportedChat {
                id: "chat".into(),
                title: "Trip\nplans".into(),
                agent: None,
                context_strategy: None,
                model: None,
                metadata: None,
                active_leaf_id: leaf.map(Into::into),
                created_at: Utc::now(),
                updated_at: Utc::now(),
            },
            messages,
            artifacts: vec![],
            memories: vec![],
            runs: vec![],
        }
    }

    #[test]
    fn only_the_active_branch_is_written_in_order() {
        let messages = vec![
            message("u1", None, MessageRole::User, "Where to?", 1),
            message("a1", Some("u1"), MessageRole::Assistant, "Lisbon.", 2),
            message("a2", Some("u1"), MessageRole::Assistant, "Porto.", 3),
        ];
        let md = to_markdown(&export(messages, Some("a1")));
        assert!(md.starts_with("# Trip plans\n"), "{md}");
        let question = md.find("Where to?").unwrap();
        let answer = md.find("Lisbon.").unwrap();
        assert!(question < answer);
        assert!(!md.contains("Porto."), "{md}");
    }

    #[test]
    fn without_a_leaf_the_newest_branch_is_shown_and_a_cycle_ends() {
        let messages = vec![
            message("u1", None, MessageRole::User, "Hi", 1),
            message("a1", Some("u1"), MessageRole::Assistant, "Old", 2),
            message("a2", Some("u1"), MessageRole::Assistant, "New", 3),
        ];
        let md = to_markdown(&export(messages, None));
        assert!(md.contains("New") && !md.contains("Old"), "{md}");
        let cycle = vec![
            message("x", Some("y"), MessageRole::User, "x", 1),
            message("y", Some("x"), MessageRole::Assistant, "y", 2),
        ];
        let md = to_markdown(&export(cycle, Some("x")));
        assert_eq!(md.matches("## ").count(), 2, "{md}");
    }

    #[test]
    fn an_answer_names_the_model_that_wrote_it() {
        let mut answer = message("a1", Some("u1"), MessageRole::Assistant, "Lisbon.", 2);
        answer.model = Some("qwen3:8b".into());
        let mut question = message("u1", None, MessageRole::User, "Where to?", 1);
        question.model = Some("not shown".into());
        let md = to_markdown(&export(vec![question, answer], Some("a1")));
        assert!(md.contains("## Assistant · qwen3:8b\n\nLisbon."), "{md}");
        assert!(
            md.contains("## User\n\n") && !md.contains("not shown"),
            "{md}"
        );
    }

    #[test]
    fn an_artifact_is_fenced_past_its_own_backticks() {
        let mut answer = message("a1", None, MessageRole::Assistant, "Here it is.", 1);
        answer.parts = Some(
            json!([{"type": "artifact", "identifier": "notes", "title": "Notes",
            "mime_type": "text/markdown", "version": 2, "content": "```rust\nfn main() {}\n```"}]),
        );
        let md = to_markdown(&export(vec![answer], Some("a1")));
        assert!(
            md.contains("**Artifact: Notes** (`notes`, version 2)"),
            "{md}"
        );
        assert!(md.contains("````markdown\n```rust"), "{md}");
    }
}
