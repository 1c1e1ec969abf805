//! An export checked in full before anything is written: the format and version, every count
//! and length, the tree (one id per message, parents that exist and come first), artifacts
//! numbered 1, 2, …, nesting no deeper than `MAX_JSON_DEPTH`; and every id mapped to a new one.
//! Plain Rust: no database, no async.

use std::collections::{HashMap, HashSet};

use entities::ids::{ArtifactId, MessageId};
use serde_json::Value;

use super::import::{ImportError, ImportLimits};
use super::{ChatExport, ExportedArtifact, ExportedMessage, FORMAT, VERSION};
use crate::chat::artifacts::{MAX_LANGUAGE_CHARS, check_identifier, check_type};
use crate::chat::persistence::MAX_TITLE_CHARS;
use crate::chat::tree::{BranchTree, MessageNode};
use crate::config::ContextStrategy;

/// Most messages (all branches) one import brings: far past a long chat, short of a flood.
pub const MAX_IMPORT_MESSAGES: usize = 10_000;
/// Most artifacts one import brings.
pub const MAX_IMPORT_ARTIFACTS: usize = 500;
/// Most artifact versions one import brings, all artifacts together.
pub const MAX_IMPORT_VERSIONS: usize = 5_000;
/// Deepest nesting of a message's `parts` or `tool_calls`, or the chat's `metadata`: what
/// Colloquy writes is a few levels deep.
pub const MAX_JSON_DEPTH: usize = 32;
/// Longest tool call id or memory category, in characters.
const MAX_SHORT_TEXT_CHARS: usize = 200;
/// Title of an imported chat whose export's title is not a valid one.
const FALLBACK_TITLE: &str = "Imported chat";

/// An export checked and given new ids, ready to write.
pub(super) struct Plan {
    pub(super) title: String,
    pub(super) context_strategy: Option<String>,
    pub(super) model: Option<String>,
    pub(super) metadata: Option<Value>,
    /// In `seq` order, so every parent comes before its children.
    pub(super) nodes: Vec<MessageNode>,
    pub(super) active_leaf: Option<MessageId>,
    pub(super) artifacts: Vec<NewArtifact>,
    pub(super) memories: Vec<super::ExportedMemory>,
    pub(super) images_left_out: usize,
}

#[derive(Clone)]
pub(super) struct NewArtifact {
    pub(super) id: ArtifactId,
    pub(super) exported: ExportedArtifact,
    pub(super) message_id: Option<MessageId>,
    pub(super) version_messages: Vec<Option<MessageId>>,
}

fn too_many(what: &'static str, limit: usize, found: usize) -> Result<(), ImportError> {
    if found > limit {
        return Err(ImportError::TooMany { what, limit, found });
    }
    Ok(())
}

fn invalid(message: impl Into<String>) -> ImportError {
    ImportError::Invalid(message.into())
}

/// Checks everything and maps every id to a new one; writes nothing.
pub(super) fn plan(export: ChatExport, limits: &ImportLimits) -> Result<Plan, ImportError> {
    if export.format != FORMAT {
        return Err(ImportError::Unsupported(format!(
            "its format is {:?}, not {FORMAT:?}",
            export.format.chars().take(50).collect::<String>()
        )));
    }
    if export.version != VERSION {
        return Err(ImportError::Unsupported(format!(
            "version {} is not the version this server reads, {VERSION}",
            export.version
        )));
    }
    too_many("messages", MAX_IMPORT_MESSAGES, export.messages.len())?;
    too_many("artifacts", MAX_IMPORT_ARTIFACTS, export.artifacts.len())?;
    let versions: usize = export.artifacts.iter().map(|a| a.versions.len()).sum();
    too_many("artifact versions", MAX_IMPORT_VERSIONS, versions)?;
    too_many("memories", limits.max_memories, export.memories.len())?;
    if let Some(metadata) = &export.chat.metadata {
        check_depth(metadata, "the chat's metadata")?;
    }

    let mut message_ids: HashMap<&str, MessageId> = HashMap::new();
    for message in &export.messages {
        if message_ids
            .insert(message.id.as_str(), MessageId::generate())
            .is_some()
        {
            return Err(invalid(format!(
                "two messages have the id {:?}",
                message.id
            )));
        }
    }
    let mut artifact_ids: HashMap<&str, ArtifactId> = HashMap::new();
    for artifact in &export.artifacts {
        if artifact_ids
            .insert(artifact.id.as_str(), ArtifactId::generate())
            .is_some()
        {
            return Err(invalid(format!(
                "two artifacts have the id {:?}",
                artifact.id
            )));
        }
    }

    let mut messages: Vec<&ExportedMessage> = export.messages.iter().collect();
    messages.sort_by_key(|m| m.seq);
    let seq_of: HashMap<&str, i64> = messages.iter().map(|m| (m.id.as_str(), m.seq)).collect();
    let mut seen_seqs = HashSet::new();
    let mut images_left_out = 0;
    let mut nodes = Vec::with_capacity(messages.len());
    for message in messages {
        let id = message_ids[message.id.as_str()].clone();
        if !seen_seqs.insert(message.seq) {
            return Err(invalid(format!(
                "two messages have the seq {}",
                message.seq
            )));
        }
        let parent_id = match message.parent_id.as_deref() {
            None => None,
            Some(parent) => {
                let Some(parent_seq) = seq_of.get(parent) else {
                    return Err(invalid(format!(
                        "message {:?} follows {parent:?}, which is not in the export",
                        message.id
                    )));
                };
                if *parent_seq >= message.seq {
                    return Err(invalid(format!(
                        "message {:?} comes before the message it follows",
                        message.id
                    )));
                }
                Some(message_ids[parent].clone())
            }
        };
        if let Some(content) = &message.content
            && content.chars().count() > limits.max_message_chars
        {
            return Err(invalid(format!(
                "message {:?} is longer than {} characters",
                message.id, limits.max_message_chars
            )));
        }
        if message
            .tool_call_id
            .as_ref()
            .is_some_and(|id| id.chars().count() > MAX_SHORT_TEXT_CHARS)
        {
            return Err(invalid(format!(
                "message {:?} has too long a tool_call_id",
                message.id
            )));
        }
        if let Some(calls) = &message.tool_calls {
            check_depth(calls, "a message's tool_calls")?;
        }
        let parts = match &message.parts {
            Some(parts) => {
                check_depth(parts, "a message's parts")?;
                let (kept, images) = carried_parts(parts, &artifact_ids);
                images_left_out += images;
                kept
            }
            None => None,
        };
        nodes.push(MessageNode {
            id,
            parent_id,
            role: message.role,
            content: message.content.clone(),
            parts,
            tool_calls: message.tool_calls.clone(),
            tool_call_id: message.tool_call_id.clone(),
            run_id: None,
            stop_reason: message.stop_reason,
            reasoning: message.reasoning.clone(),
            model: model_name(&message.model),
            seq: message.seq,
            created_at: message.created_at,
            tokens: Default::default(),
        });
    }
    let leaf = export
        .chat
        .active_leaf_id
        .as_deref()
        .and_then(|id| message_ids.get(id))
        .cloned();
    let tree = BranchTree::from_nodes(nodes.clone(), leaf.as_ref())
        .map_err(|err| invalid(err.to_string()))?;
    let active_leaf = tree.active_leaf().cloned();

    let message_of =
        |id: &Option<String>| id.as_deref().and_then(|id| message_ids.get(id)).cloned();
    let mut identifiers = HashSet::new();
    let mut artifacts = Vec::with_capacity(export.artifacts.len());
    for artifact in &export.artifacts {
        check_artifact(artifact, limits)?;
        if !identifiers.insert(artifact.identifier.as_str()) {
            return Err(invalid(format!(
                "two artifacts have the identifier {:?}",
                artifact.identifier
            )));
        }
        let mut exported = artifact.clone();
        exported.mime_type =
            check_type(&artifact.mime_type).map_err(|err| invalid(err.to_string()))?;
        artifacts.push(NewArtifact {
            id: artifact_ids[artifact.id.as_str()].clone(),
            message_id: message_of(&artifact.message_id),
            version_messages: artifact
                .versions
                .iter()
                .map(|v| message_of(&v.message_id))
                .collect(),
            exported,
        });
    }
    for memory in &export.memories {
        if memory.content.trim().is_empty()
            || memory.content.chars().count() > limits.max_memory_chars
            || memory.category.chars().count() > MAX_SHORT_TEXT_CHARS
        {
            return Err(invalid(format!(
                "a memory must have 1-{} characters and a category of at most {MAX_SHORT_TEXT_CHARS}",
                limits.max_memory_chars
            )));
        }
    }
    let title = crate::chat::persistence::parse_title(&export.chat.title)
        .unwrap_or_else(|_| FALLBACK_TITLE.to_string());
    debug_assert!(title.chars().count() <= MAX_TITLE_CHARS);
    let context_strategy = [ContextStrategy::Drop, ContextStrategy::Summarize]
        .into_iter()
        .find(|s| export.chat.context_strategy.as_deref() == Some(s.as_str()))
        .map(|s| s.as_str().to_string());
    Ok(Plan {
        title,
        context_strategy,
        model: model_name(&export.chat.model),
        metadata: export.chat.metadata,
        nodes,
        active_leaf,
        artifacts,
        memories: export.memories,
        images_left_out,
    })
}

/// A model name carried over as it was, or dropped when it cannot be one (blank or too long):
/// it names a choice, and a model this server does not serve is refused at the next turn.
fn model_name(model: &Option<String>) -> Option<String> {
    model
        .as_deref()
        .map(str::trim)
        .filter(|name| !name.is_empty() && name.chars().count() <= MAX_SHORT_TEXT_CHARS)
        .map(str::to_string)
}

fn check_artifact(artifact: &ExportedArtifact, limits: &ImportLimits) -> Result<(), ImportError> {
    check_identifier(&artifact.identifier, limits.max_identifier_chars)
        .map_err(|err| invalid(err.to_string()))?;
    let title_chars = artifact.title.chars().count();
    if title_chars == 0 || title_chars > crate::chat::artifacts::MAX_TITLE_CHARS {
        return Err(invalid(format!(
            "artifact {:?} needs a title of 1-{} characters",
            artifact.identifier,
            crate::chat::artifacts::MAX_TITLE_CHARS
        )));
    }
    if artifact
        .language
        .as_ref()
        .is_some_and(|l| l.chars().count() > MAX_LANGUAGE_CHARS)
    {
        return Err(invalid(format!(
            "artifact {:?} has too long a language",
            artifact.identifier
        )));
    }
    if artifact.versions.is_empty() {
        return Err(invalid(format!(
            "artifact {:?} has no versions",
            artifact.identifier
        )));
    }
    for (expected, version) in (1..).zip(&artifact.versions) {
        if version.version != expected {
            return Err(invalid(format!(
                "artifact {:?}'s versions must be numbered 1, 2, … in order",
                artifact.identifier
            )));
        }
        if version.content.len() > limits.max_artifact_bytes {
            return Err(invalid(format!(
                "artifact {:?} version {} is larger than {} bytes",
                artifact.identifier, version.version, limits.max_artifact_bytes
            )));
        }
    }
    Ok(())
}

/// `parts` as the new chat keeps them: artifact parts name the new artifact (those whose
/// artifact is not in the export are left out), image parts are left out (counted).
fn carried_parts(
    parts: &Value,
    artifact_ids: &HashMap<&str, ArtifactId>,
) -> (Option<Value>, usize) {
    let Some(list) = parts.as_array() else {
        return (Some(parts.clone()), 0);
    };
    let mut images = 0;
    let mut kept = Vec::with_capacity(list.len());
    for part in list {
        match part["type"].as_str() {
            Some("image") => images += 1,
            Some("artifact") => {
                let new_id = part["artifact_id"]
                    .as_str()
                    .and_then(|id| artifact_ids.get(id));
                if let Some(new_id) = new_id {
                    let mut part = part.clone();
                    part["artifact_id"] = Value::String(new_id.to_string());
                    kept.push(part);
                }
            }
            _ => kept.push(part.clone()),
        }
    }
    (Some(Value::Array(kept)), images)
}

/// Refuses a value nested deeper than `MAX_JSON_DEPTH`; walks with a stack of its own.
fn check_depth(value: &Value, what: &str) -> Result<(), ImportError> {
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        if depth > MAX_JSON_DEPTH {
            return Err(invalid(format!(
                "{what} is nested deeper than {MAX_JSON_DEPTH} levels"
            )));
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nesting_past_the_limit_is_refused_without_recursion() {
        let mut deep = json!(1);
        for _ in 0..MAX_JSON_DEPTH {
            deep = json!([deep]);
        }
        assert!(check_depth(&deep, "parts").is_err());
        assert!(check_depth(&json!([[1], {"a": [2]}]), "parts").is_ok());
    }

    #[test]
    fn artifact_parts_name_the_new_artifact_and_images_are_left_out() {
        let new_id = ArtifactId::generate();
        let ids: HashMap<&str, ArtifactId> = [("old", new_id.clone())].into_iter().collect();
        let parts = json!([
            {"type": "artifact", "artifact_id": "old", "version": 1},
            {"type": "artifact", "artifact_id": "gone", "version": 1},
            {"type": "image", "attachment_id": "att_1"},
            {"type": "text", "text": "kept"}
        ]);
        let (kept, images) = carried_parts(&parts, &ids);
        let kept = kept.unwrap();
        assert_eq!(images, 1);
        assert_eq!(kept.as_array().unwrap().len(), 2);
        assert_eq!(kept[0]["artifact_id"], new_id.as_str());
    }
}
