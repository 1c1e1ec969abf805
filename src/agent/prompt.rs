//! Prompt assembly: the model is sent exactly the active path of the chat (nothing from other
//! branches), after the configured system prompt. Run metadata and an answer's parts (artifacts)
//! are never sent (metadata does not reach the model: docs/spec.md#metadata-and-parts); a user
//! message's images are, as `image_url` parts naming their attachments, which the run reads into
//! `data:` URLs just before each model call (`agent::images`).

use entities::documents::DocumentStatus;
use entities::messages::MessageRole;

use crate::chat::attachments::ImagePart;
use crate::chat::tree::MessageNode;
use crate::llm::wire::{ChatMessage, MessageContent, Role};

/// What the model is told when the iteration cap is reached.
pub const FINAL_ANSWER_INSTRUCTION: &str = "You have used every tool-call round allowed for \
this request. Do not call any more tools. Answer the user now, using the information gathered \
so far, and say briefly if something could not be verified.";

/// The system prompt with the chat's relevant memories appended (passive injection), so the
/// model follows saved preferences without calling recall_memory.
/// A document passage injected into the context.
#[derive(Debug, Clone)]
pub struct Passage {
    pub filename: String,
    pub text: String,
}

/// The chat's files named in the system prompt: the most recent ones, and how many more
/// there are (the prompt's size must not grow with the chat's documents).
#[derive(Debug, Clone, Default)]
pub struct FileList {
    pub listed: Vec<crate::documents::DocumentView>,
    /// Documents the chat has beyond `listed`.
    pub more: u64,
}

pub fn system_with_context(
    system_prompt: Option<&str>,
    memories: &[crate::chat::memory::Memory],
    files: &FileList,
    passages: &[Passage],
) -> Option<String> {
    let mut system = system_prompt
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_default();
    if !memories.is_empty() {
        if !system.is_empty() {
            system.push_str("\n\n");
        }
        system
            .push_str("Saved memories for this chat (follow them unless the user says otherwise):");
        for memory in memories {
            system.push_str(&format!("\n- [{}] {}", memory.category, memory.content));
        }
    }
    if !files.listed.is_empty() {
        if !system.is_empty() {
            system.push_str("\n\n");
        }
        system.push_str("Documents uploaded to this chat (search them with file_search):");
        for file in &files.listed {
            let searchable = if file.searchable || file.status != DocumentStatus::Processed {
                ""
            } else {
                ", content not searchable"
            };
            system.push_str(&format!(
                "\n- {} ({}, {}{searchable})",
                file.filename,
                file.content_type,
                file.status.as_str()
            ));
        }
        if files.more > 0 {
            system.push_str(&format!(
                "\n- and {} more, not listed here (the most recent are above); \
                 file_search searches them all",
                files.more
            ));
        }
    }
    if !passages.is_empty() {
        system.push_str("\n\nPassages from the documents relevant to the user's message:");
        for passage in passages {
            system.push_str(&format!("\n\n[{}]\n{}", passage.filename, passage.text));
        }
    }
    (!system.is_empty()).then_some(system)
}

/// The messages for the model: the system prompt (if any), then the path, root first. User
/// messages in a row (a turn that failed without an answer, then another question) are sent
/// as one, so roles alternate as the templates of Gemma, Mistral and Llama 2 require.
pub fn assemble(system_prompt: Option<&str>, path: &[MessageNode]) -> Vec<ChatMessage> {
    let mut messages: Vec<ChatMessage> = Vec::with_capacity(path.len() + 1);
    if let Some(system) = system_prompt.filter(|s| !s.trim().is_empty()) {
        messages.push(ChatMessage::system(system));
    }
    for node in path {
        let content = node.content.clone().unwrap_or_default();
        match node.role {
            MessageRole::User => {
                let images = ImagePart::of_parts(node.parts.as_ref());
                let next = user_content(content, &images);
                match messages.last_mut() {
                    Some(ChatMessage {
                        role: Role::User,
                        content: Some(previous),
                        ..
                    }) => merge(previous, next),
                    _ => messages.push(ChatMessage {
                        content: Some(next),
                        ..ChatMessage::user("")
                    }),
                }
            }
            MessageRole::Assistant => {
                // The pictures an answer made (generate_image), by the image_id that changes
                // one in a later turn.
                let pictures: Vec<String> = ImagePart::of_parts(node.parts.as_ref())
                    .into_iter()
                    .map(|image| image.attachment_id.to_string())
                    .collect();
                let content = if pictures.is_empty() {
                    content
                } else {
                    format!(
                        "{content}\n\n[Pictures shown with this answer, by image_id: {}]",
                        pictures.join(", ")
                    )
                };
                messages.push(ChatMessage::assistant(content));
            }
            MessageRole::System => messages.push(ChatMessage::system(content)),
            // Tool exchanges are run-internal; a stored one without its call is meaningless.
            MessageRole::Tool => {}
        }
    }
    messages
}

/// How many messages [`assemble`] makes of a path with these roles: user messages in a row
/// are sent as one, tool messages not at all.
fn sent_messages(roles: impl IntoIterator<Item = MessageRole>) -> usize {
    let mut sent = 0;
    let mut last = None;
    for role in roles {
        match role {
            MessageRole::Tool => continue,
            MessageRole::User if last == Some(MessageRole::User) => {}
            _ => sent += 1,
        }
        last = Some(role);
    }
    sent
}

/// How many of the messages the whole path would send are not sent because messages with
/// the roles `left_out` were cut from before `kept`'s history (its leading system messages
/// stay): what fitting reports as dropped, counted as it counts.
pub fn left_out_messages(kept: &[MessageNode], left_out: &[MessageRole]) -> usize {
    if left_out.is_empty() {
        return 0;
    }
    let roles = || kept.iter().map(|node| node.role);
    let leading = roles()
        .take_while(|role| *role == MessageRole::System)
        .count();
    let whole = roles()
        .take(leading)
        .chain(left_out.iter().copied())
        .chain(roles().skip(leading));
    sent_messages(whole) - sent_messages(roles())
}

/// A user message's content: its text alone, or (with images) a text part and one
/// `image_url` part per image, as OpenAI's vision messages are.
fn user_content(text: String, images: &[ImagePart]) -> MessageContent {
    if images.is_empty() {
        return MessageContent::Text(text);
    }
    let mut parts = Vec::with_capacity(images.len() + 1);
    if !text.trim().is_empty() {
        parts.push(serde_json::json!({"type": "text", "text": text}));
    }
    parts.extend(images.iter().map(ImagePart::reference));
    MessageContent::Parts(parts)
}

/// Appends `next` to `previous` (two user messages in a row sent as one): texts joined by a
/// blank line, parts one after the other.
fn merge(previous: &mut MessageContent, next: MessageContent) {
    match (previous, next) {
        (MessageContent::Text(previous), MessageContent::Text(next)) => {
            previous.push_str("\n\n");
            previous.push_str(&next);
        }
        (previous, next) => {
            let as_parts = |content: MessageContent| match content {
                MessageContent::Text(text) if text.is_empty() => Vec::new(),
                MessageContent::Text(text) => {
                    vec![serde_json::json!({"type": "text", "text": text})]
                }
                MessageContent::Parts(parts) => parts,
            };
            let mut parts = as_parts(std::mem::replace(
                previous,
                MessageContent::Text(String::new()),
            ));
            parts.extend(as_parts(next));
            *previous = MessageContent::Parts(parts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, role: &str, content: &str) -> MessageNode {
        let role = match role {
            "system" => MessageRole::System,
            "user" => MessageRole::User,
            "assistant" => MessageRole::Assistant,
            _ => MessageRole::Tool,
        };
        MessageNode {
            parts: Some(serde_json::json!([{"type": "artifact"}])),
            ..MessageNode::plain(id, None, role, content, 1)
        }
    }

    #[test]
    fn user_messages_in_a_row_are_sent_as_one_so_roles_alternate() {
        let path = [
            node("1", "user", "first question"),
            node("2", "user", "asked again"),
            node("3", "assistant", "an answer"),
            node("4", "user", "next"),
        ];
        let json = serde_json::to_value(assemble(None, &path)).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"role": "user", "content": "first question\n\nasked again"},
                {"role": "assistant", "content": "an answer"},
                {"role": "user", "content": "next"}
            ])
        );
    }

    #[test]
    fn a_user_message_with_images_is_sent_as_text_and_image_parts() {
        let image = ImagePart {
            attachment_id: entities::ids::AttachmentId::generate(),
            mime_type: "image/png".into(),
            detail: None,
        };
        let mut with_image = node("1", "user", "what is this?");
        with_image.parts = ImagePart::parts_of(std::slice::from_ref(&image));
        let mut image_only = node("2", "user", "");
        image_only.parts = with_image.parts.clone();
        let path = [with_image, image_only, node("3", "assistant", "a cat")];
        let json = serde_json::to_value(assemble(None, &path)).unwrap();
        let reference = image.reference();
        assert_eq!(
            json,
            serde_json::json!([
                {"role": "user", "content": [
                    {"type": "text", "text": "what is this?"},
                    reference,
                    reference,
                ]},
                {"role": "assistant", "content": "a cat"}
            ]),
            "the second question, an image alone, joins the first"
        );
    }

    #[test]
    fn the_path_follows_the_system_prompt_without_parts() {
        let path = [node("1", "user", "hi"), node("2", "assistant", "hello")];
        let messages = assemble(Some("Be brief."), &path);
        let json = serde_json::to_value(&messages).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"}
            ])
        );
    }

    #[test]
    fn an_answers_reasoning_is_never_sent_back() {
        let mut answer = node("2", "assistant", "hello");
        answer.reasoning = Some(crate::chat::tree::Reasoning {
            text: "greet them back".into(),
            duration_ms: 900,
        });
        let path = [node("1", "user", "hi"), answer, node("3", "user", "again")];
        let json = serde_json::to_value(assemble(None, &path)).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "again"}
            ])
        );
    }

    #[test]
    fn the_file_list_names_the_files_given_and_counts_the_rest() {
        use entities::documents::DocumentStatus;
        use entities::ids::ArtifactId;
        let file = |name: &str| crate::documents::DocumentView {
            artifact_id: ArtifactId::from_string(format!("a-{name}")),
            filename: name.into(),
            size: 10,
            content_type: "text/plain".into(),
            uploaded_at: chrono::Utc::now(),
            status: DocumentStatus::Processed,
            searchable: true,
            error: None,
            warning: None,
        };
        let files = FileList {
            listed: vec![file("a.txt"), file("b.txt")],
            more: 5_181,
        };
        let system = system_with_context(None, &[], &files, &[]).unwrap();
        assert!(
            system.contains("- a.txt (text/plain, processed)"),
            "{system}"
        );
        assert!(system.contains("- b.txt"), "{system}");
        assert!(system.contains("and 5181 more"), "{system}");
        assert_eq!(system.lines().count(), 4, "{system}");
        let all = FileList {
            listed: vec![file("a.txt")],
            more: 0,
        };
        let system = system_with_context(None, &[], &all, &[]).unwrap();
        assert!(!system.contains("more"), "{system}");
    }
}
