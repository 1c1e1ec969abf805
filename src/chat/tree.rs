//! `BranchTree`: the in-memory tree of one chat's messages — branches from edits and
//! regenerations, the active leaf, and the paths between them. Plain data only: no I/O, no async,
//! no persistence. Every walk is iterative and bounded by the node count, so neither a deep chain
//! nor corrupt stored data (a cycle) can overflow the stack or loop forever.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use entities::ids::{MessageId, RunId};
use entities::messages::MessageRole;
use serde::Serialize;

/// One stored message of a chat, as a node of the branch tree.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageNode {
    /// The message's id, unique within the chat.
    pub id: MessageId,
    /// The message this one follows, or `None` for a root-level message.
    pub parent_id: Option<MessageId>,
    pub role: MessageRole,
    /// Plain-text content, if any.
    pub content: Option<String>,
    /// Structured content parts, if any.
    pub parts: Option<serde_json::Value>,
    /// Tool calls requested by an assistant message, if any.
    pub tool_calls: Option<serde_json::Value>,
    /// For a tool message: the id of the call it answers.
    pub tool_call_id: Option<String>,
    /// The generation run that produced this message, if any.
    pub run_id: Option<RunId>,
    /// Why generation stopped, for an assistant message.
    pub stop_reason: Option<String>,
    /// Creation order within the chat, strictly increasing.
    pub seq: i64,
    /// When the message was created.
    pub created_at: DateTime<Utc>,
}

/// Why a tree operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    /// No message with this id is in the tree.
    #[error("unknown message '{0}'")]
    UnknownMessage(MessageId),
    /// The message exists but is not a user message (only those can be edited).
    #[error("message '{0}' is not a user message")]
    NotAUserMessage(MessageId),
    /// The message exists but is not an assistant message (only those can be regenerated).
    #[error("message '{0}' is not an assistant message")]
    NotAnAssistantMessage(MessageId),
    /// A message with this id is already in the tree.
    #[error("duplicate message id '{0}'")]
    DuplicateId(MessageId),
    /// The message's parent is not in the tree; carries the missing parent's id.
    #[error("unknown parent message '{0}'")]
    UnknownParent(MessageId),
    /// The message is part of (or hangs below) a parent cycle; carries the message's id.
    #[error("message '{0}' is part of a parent cycle")]
    Cycle(MessageId),
}

/// The tree of a chat's messages and which branch is selected.
///
/// Root-level messages (no parent) are siblings of each other. Children are kept ordered by
/// `seq` (ties broken by id). The active path runs from a root down to the active leaf.
#[derive(Debug, Clone, Default)]
pub struct BranchTree {
    /// Every message, by id.
    nodes: HashMap<MessageId, MessageNode>,
    /// Children ids of each message that has any, ordered by seq.
    children: HashMap<MessageId, Vec<MessageId>>,
    /// Root-level message ids, ordered by seq.
    roots: Vec<MessageId>,
    /// The selected leaf, `None` only when the tree is empty.
    active_leaf: Option<MessageId>,
    /// Ids on the active path, kept in step with `active_leaf`.
    active_ids: HashSet<MessageId>,
    /// Highest seq in the tree, `None` when empty.
    max_seq: Option<i64>,
}

impl BranchTree {
    /// An empty tree.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rebuilds from stored rows (any order) and the stored active leaf; if the stored leaf is
    /// missing/dangling, falls back to the latest leaf of the whole tree (highest seq among
    /// leaves). Rejects duplicate ids, unknown parents and parent cycles.
    pub fn from_nodes(
        nodes: Vec<MessageNode>,
        active_leaf: Option<&MessageId>,
    ) -> Result<Self, TreeError> {
        let mut tree = Self::new();
        for node in nodes {
            if tree.nodes.contains_key(&node.id) {
                return Err(TreeError::DuplicateId(node.id));
            }
            tree.nodes.insert(node.id.clone(), node);
        }
        for node in tree.nodes.values() {
            match &node.parent_id {
                None => tree.roots.push(node.id.clone()),
                Some(parent) if parent == &node.id => {
                    return Err(TreeError::Cycle(node.id.clone()));
                }
                Some(parent) if !tree.nodes.contains_key(parent) => {
                    return Err(TreeError::UnknownParent(parent.clone()));
                }
                Some(parent) => tree
                    .children
                    .entry(parent.clone())
                    .or_default()
                    .push(node.id.clone()),
            }
        }
        let nodes_by_id = &tree.nodes;
        let by_seq = |a: &MessageId, b: &MessageId| compare_ids(nodes_by_id, a, b);
        tree.roots.sort_by(by_seq);
        for list in tree.children.values_mut() {
            list.sort_by(by_seq);
        }
        tree.check_all_reachable()?;
        tree.max_seq = tree.nodes.values().map(|n| n.seq).max();

        tree.active_leaf = match active_leaf {
            Some(id) if tree.nodes.contains_key(id) => Some(id.clone()),
            _ => tree.latest_leaf_of_tree(),
        };
        tree.refresh_active_ids();
        Ok(tree)
    }

    /// Number of messages in the tree.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no messages.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The message with this id, if present.
    pub fn get(&self, id: &MessageId) -> Option<&MessageNode> {
        self.nodes.get(id)
    }

    /// The selected leaf's id, `None` only when the tree is empty.
    pub fn active_leaf(&self) -> Option<&MessageId> {
        self.active_leaf.as_ref()
    }

    /// The seq for the next message: 1 + the highest seq, 1 for an empty tree.
    pub fn next_seq(&self) -> i64 {
        self.max_seq.map_or(1, |max| max.saturating_add(1))
    }

    /// Inserts a node (its parent must exist, or be None) and makes it the active leaf.
    pub fn insert(&mut self, node: MessageNode) -> Result<(), TreeError> {
        if self.nodes.contains_key(&node.id) {
            return Err(TreeError::DuplicateId(node.id));
        }
        if let Some(parent) = &node.parent_id
            && !self.nodes.contains_key(parent)
        {
            return Err(TreeError::UnknownParent(parent.clone()));
        }
        let id = node.id.clone();
        let parent = node.parent_id.clone();
        // Appending to the active leaf extends the active path; anything else starts a new one.
        let extends_active = parent.is_some() && parent == self.active_leaf;
        self.max_seq = Some(self.max_seq.map_or(node.seq, |max| max.max(node.seq)));
        self.nodes.insert(id.clone(), node);

        let nodes = &self.nodes;
        let list = match &parent {
            Some(p) => self.children.entry(p.clone()).or_default(),
            None => &mut self.roots,
        };
        let at = list.partition_point(|other| compare_ids(nodes, other, &id) == Ordering::Less);
        list.insert(at, id.clone());

        self.active_leaf = Some(id.clone());
        if extends_active {
            self.active_ids.insert(id);
        } else {
            self.refresh_active_ids();
        }
        Ok(())
    }

    /// The active path: root → active leaf, in order. Empty if the tree is empty.
    pub fn active_path(&self) -> Vec<&MessageNode> {
        match &self.active_leaf {
            Some(leaf) => self.path_to(leaf).unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// Path from root to `id`, in order (the last element is `id` itself).
    pub fn path_to(&self, id: &MessageId) -> Result<Vec<&MessageNode>, TreeError> {
        let mut node = self
            .nodes
            .get(id)
            .ok_or_else(|| TreeError::UnknownMessage(id.clone()))?;
        let mut path = vec![node];
        while let Some(parent) = &node.parent_id {
            // A path longer than the tree means a cycle; from_nodes/insert never build one.
            if path.len() >= self.nodes.len() {
                return Err(TreeError::Cycle(id.clone()));
            }
            node = self
                .nodes
                .get(parent)
                .ok_or_else(|| TreeError::UnknownParent(parent.clone()))?;
            path.push(node);
        }
        path.reverse();
        Ok(path)
    }

    /// Children of `id` (or the roots for None), ordered by seq. Empty for an unknown id.
    pub fn children(&self, id: Option<&MessageId>) -> Vec<&MessageNode> {
        self.child_ids(id)
            .iter()
            .filter_map(|c| self.nodes.get(c))
            .collect()
    }

    /// Siblings of `id` including itself, ordered by seq, and the index of `id` among them.
    pub fn siblings(&self, id: &MessageId) -> Result<(Vec<&MessageNode>, usize), TreeError> {
        let node = self
            .nodes
            .get(id)
            .ok_or_else(|| TreeError::UnknownMessage(id.clone()))?;
        let siblings = self.children(node.parent_id.as_ref());
        let index = siblings
            .iter()
            .position(|s| &s.id == id)
            .ok_or_else(|| TreeError::UnknownMessage(id.clone()))?;
        Ok((siblings, index))
    }

    /// The latest leaf under `id` (following, at each level, the child with the highest seq
    /// down to a leaf; `id` itself if it has no children).
    pub fn latest_leaf_under(&self, id: &MessageId) -> Result<&MessageId, TreeError> {
        let mut current = self
            .nodes
            .get_key_value(id)
            .map(|(k, _)| k)
            .ok_or_else(|| TreeError::UnknownMessage(id.clone()))?;
        // Each step goes one level deeper, so there are fewer steps than nodes.
        for _ in 0..self.nodes.len() {
            match self.child_ids(Some(current)).last() {
                Some(child) => current = child,
                None => return Ok(current),
            }
        }
        Err(TreeError::Cycle(id.clone()))
    }

    /// Selects the branch containing `id`: the active leaf becomes `latest_leaf_under(id)`.
    /// Returns the new leaf id.
    pub fn switch_to(&mut self, id: &MessageId) -> Result<MessageId, TreeError> {
        let leaf = self.latest_leaf_under(id)?.clone();
        self.active_leaf = Some(leaf.clone());
        self.refresh_active_ids();
        Ok(leaf)
    }

    /// For editing: checks `id` is a user message and returns its parent id (the new sibling's
    /// parent).
    pub fn edit_parent(&self, id: &MessageId) -> Result<Option<MessageId>, TreeError> {
        let node = self
            .nodes
            .get(id)
            .ok_or_else(|| TreeError::UnknownMessage(id.clone()))?;
        if node.role != MessageRole::User {
            return Err(TreeError::NotAUserMessage(id.clone()));
        }
        Ok(node.parent_id.clone())
    }

    /// For regenerating: checks `id` is an assistant message and returns its parent id (the user
    /// message the new answer replies to).
    pub fn regenerate_parent(&self, id: &MessageId) -> Result<Option<MessageId>, TreeError> {
        let node = self
            .nodes
            .get(id)
            .ok_or_else(|| TreeError::UnknownMessage(id.clone()))?;
        if node.role != MessageRole::Assistant {
            return Err(TreeError::NotAnAssistantMessage(id.clone()));
        }
        Ok(node.parent_id.clone())
    }

    /// Removes `id` and all its descendants (used to roll back); if the active leaf was removed,
    /// the active leaf becomes the removed node's parent (or the latest leaf of the tree if it
    /// had none). Returns the removed ids ordered by seq.
    pub fn remove_subtree(&mut self, id: &MessageId) -> Result<Vec<MessageId>, TreeError> {
        let parent = self
            .nodes
            .get(id)
            .ok_or_else(|| TreeError::UnknownMessage(id.clone()))?
            .parent_id
            .clone();

        let mut removed = Vec::new();
        let mut stack = vec![id.clone()];
        while let Some(current) = stack.pop() {
            if let Some(kids) = self.children.remove(&current) {
                stack.extend(kids);
            }
            if let Some(node) = self.nodes.remove(&current) {
                removed.push(node);
            }
        }
        removed.sort_by(compare_nodes);

        match &parent {
            Some(p) => {
                if let Some(list) = self.children.get_mut(p) {
                    list.retain(|c| c != id);
                    if list.is_empty() {
                        self.children.remove(p);
                    }
                }
            }
            None => self.roots.retain(|r| r != id),
        }

        let leaf_removed = self
            .active_leaf
            .as_ref()
            .is_some_and(|leaf| !self.nodes.contains_key(leaf));
        if leaf_removed {
            self.active_leaf = match parent {
                Some(p) => Some(p),
                None => self.latest_leaf_of_tree(),
            };
        }
        self.refresh_active_ids();
        self.max_seq = self.nodes.values().map(|n| n.seq).max();
        Ok(removed.into_iter().map(|n| n.id).collect())
    }

    /// Every node ordered by seq. Pair with [`children`](Self::children) and
    /// [`is_on_active_path`](Self::is_on_active_path) for a "tree" API response.
    pub fn nodes_in_order(&self) -> Vec<&MessageNode> {
        let mut all: Vec<&MessageNode> = self.nodes.values().collect();
        all.sort_by(|a, b| compare_nodes(a, b));
        all
    }

    /// Whether `id` is on the active path (root → active leaf). `false` for an unknown id.
    pub fn is_on_active_path(&self, id: &MessageId) -> bool {
        self.active_ids.contains(id)
    }

    /// Children ids of `id` (or the root ids for None), ordered by seq.
    fn child_ids(&self, id: Option<&MessageId>) -> &[MessageId] {
        match id {
            Some(id) => self.children.get(id).map_or(&[], Vec::as_slice),
            None => &self.roots,
        }
    }

    /// The leaf with the highest seq in the whole tree, `None` if the tree is empty.
    fn latest_leaf_of_tree(&self) -> Option<MessageId> {
        self.nodes
            .values()
            .filter(|n| !self.children.contains_key(&n.id))
            .max_by(|a, b| compare_nodes(a, b))
            .map(|n| n.id.clone())
    }

    /// Recomputes `active_ids` from `active_leaf`.
    fn refresh_active_ids(&mut self) {
        let ids: HashSet<MessageId> = self
            .active_path()
            .into_iter()
            .map(|n| n.id.clone())
            .collect();
        self.active_ids = ids;
    }

    /// Checks every node is reachable from a root (iteratively); a node that is not sits in or
    /// below a parent cycle.
    fn check_all_reachable(&self) -> Result<(), TreeError> {
        let mut seen: HashSet<&MessageId> = HashSet::with_capacity(self.nodes.len());
        let mut stack: Vec<&MessageId> = self.roots.iter().collect();
        while let Some(current) = stack.pop() {
            if seen.insert(current) {
                stack.extend(self.child_ids(Some(current)));
            }
        }
        if seen.len() == self.nodes.len() {
            return Ok(());
        }
        let culprit = self
            .nodes
            .values()
            .filter(|n| !seen.contains(&n.id))
            .min_by(|a, b| compare_nodes(a, b))
            .map(|n| n.id.clone());
        Err(TreeError::Cycle(
            culprit.unwrap_or_else(|| MessageId::from_string("")),
        ))
    }
}

/// Orders nodes by seq, then id (so equal seqs from bad data still sort deterministically).
fn compare_nodes(a: &MessageNode, b: &MessageNode) -> Ordering {
    a.seq.cmp(&b.seq).then_with(|| a.id.cmp(&b.id))
}

/// [`compare_nodes`] by id; an id missing from `nodes` sorts first.
fn compare_ids(nodes: &HashMap<MessageId, MessageNode>, a: &MessageId, b: &MessageId) -> Ordering {
    let seq = |id: &MessageId| nodes.get(id).map(|n| n.seq);
    seq(a).cmp(&seq(b)).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(id: &str) -> MessageId {
        MessageId::from_string(id)
    }

    fn node(id: &str, parent: Option<&str>, role: &str, seq: i64) -> MessageNode {
        MessageNode {
            id: m(id),
            parent_id: parent.map(m),
            role: match role {
                "system" => MessageRole::System,
                "user" => MessageRole::User,
                "assistant" => MessageRole::Assistant,
                _ => MessageRole::Tool,
            },
            content: Some(format!("content of {id}")),
            parts: None,
            tool_calls: None,
            tool_call_id: None,
            run_id: None,
            stop_reason: None,
            seq,
            created_at: DateTime::<Utc>::from_timestamp(1_700_000_000 + seq, 0)
                .expect("valid timestamp"),
        }
    }

    /// Appends a message to the active leaf, as sending does.
    fn send(tree: &mut BranchTree, id: &str, role: &str) {
        let parent = tree.active_leaf().cloned();
        let seq = tree.next_seq();
        tree.insert(node(id, parent.as_ref().map(MessageId::as_str), role, seq))
            .expect("insert");
    }

    fn ids(nodes: &[&MessageNode]) -> Vec<String> {
        nodes.iter().map(|n| n.id.to_string()).collect()
    }

    /// system → u1 → a1 → u2 → a2
    fn conversation() -> BranchTree {
        let mut tree = BranchTree::new();
        send(&mut tree, "sys", "system");
        send(&mut tree, "u1", "user");
        send(&mut tree, "a1", "assistant");
        send(&mut tree, "u2", "user");
        send(&mut tree, "a2", "assistant");
        tree
    }

    #[test]
    fn an_empty_tree_has_no_path_and_starts_seq_at_one() {
        let tree = BranchTree::new();
        assert!(tree.is_empty());
        assert_eq!(tree.len(), 0);
        assert_eq!(tree.next_seq(), 1);
        assert!(tree.active_path().is_empty());
        assert_eq!(tree.active_leaf(), None);
        assert!(tree.children(None).is_empty());
    }

    #[test]
    fn sending_appends_to_the_active_leaf() {
        let tree = conversation();
        assert_eq!(tree.len(), 5);
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a2"));
        assert_eq!(tree.next_seq(), 6);
        assert_eq!(ids(&tree.active_path()), ["sys", "u1", "a1", "u2", "a2"]);
        assert_eq!(
            tree.get(&m("u2"))
                .and_then(|n| n.parent_id.as_ref().map(MessageId::as_str)),
            Some("a1")
        );
        for id in ["sys", "u1", "a1", "u2", "a2"] {
            assert!(tree.is_on_active_path(&m(id)), "{id} should be active");
        }
    }

    #[test]
    fn edit_creates_a_sibling_and_the_active_path_contains_only_the_new_branch() {
        let mut tree = conversation();
        let parent = tree.edit_parent(&m("u2")).expect("u2 is a user message");
        assert_eq!(parent.as_ref().map(MessageId::as_str), Some("a1"));
        let seq = tree.next_seq();
        tree.insert(node(
            "u2b",
            parent.as_ref().map(MessageId::as_str),
            "user",
            seq,
        ))
        .expect("insert edit");
        send(&mut tree, "a2b", "assistant");

        assert_eq!(ids(&tree.active_path()), ["sys", "u1", "a1", "u2b", "a2b"]);
        assert!(!tree.is_on_active_path(&m("u2")));
        assert!(!tree.is_on_active_path(&m("a2")));
        let (siblings, index) = tree.siblings(&m("u2b")).expect("siblings");
        assert_eq!(ids(&siblings), ["u2", "u2b"]);
        assert_eq!(index, 1);
    }

    #[test]
    fn editing_the_first_message_creates_a_new_root() {
        let mut tree = BranchTree::new();
        send(&mut tree, "u1", "user");
        send(&mut tree, "a1", "assistant");
        let parent = tree.edit_parent(&m("u1")).expect("user");
        assert_eq!(parent, None);
        let seq = tree.next_seq();
        tree.insert(node("u1b", None, "user", seq)).expect("insert");
        assert_eq!(ids(&tree.active_path()), ["u1b"]);
        assert_eq!(ids(&tree.children(None)), ["u1", "u1b"]);
        assert!(!tree.is_on_active_path(&m("a1")));
    }

    #[test]
    fn edit_and_regenerate_check_the_role() {
        let tree = conversation();
        assert_eq!(
            tree.edit_parent(&m("a1")),
            Err(TreeError::NotAUserMessage(m("a1")))
        );
        assert_eq!(
            tree.regenerate_parent(&m("u1")),
            Err(TreeError::NotAnAssistantMessage(m("u1")))
        );
        assert_eq!(
            tree.edit_parent(&m("nope")),
            Err(TreeError::UnknownMessage(m("nope")))
        );
    }

    #[test]
    fn regenerate_creates_a_sibling_assistant_answer() {
        let mut tree = conversation();
        let parent = tree
            .regenerate_parent(&m("a2"))
            .expect("a2 is an assistant message");
        assert_eq!(parent.as_ref().map(MessageId::as_str), Some("u2"));
        let seq = tree.next_seq();
        tree.insert(node(
            "a2b",
            parent.as_ref().map(MessageId::as_str),
            "assistant",
            seq,
        ))
        .expect("insert regeneration");

        assert_eq!(ids(&tree.active_path()), ["sys", "u1", "a1", "u2", "a2b"]);
        assert!(!tree.is_on_active_path(&m("a2")));
        assert_eq!(ids(&tree.children(Some(&m("u2")))), ["a2", "a2b"]);
        let (siblings, index) = tree.siblings(&m("a2")).expect("siblings");
        assert_eq!(ids(&siblings), ["a2", "a2b"]);
        assert_eq!(index, 0);
    }

    #[test]
    fn switching_to_an_older_sibling_selects_its_latest_leaf() {
        let mut tree = conversation();
        // New branch from u1's answer: u2b → a2b.
        let seq = tree.next_seq();
        tree.insert(node("u2b", Some("a1"), "user", seq))
            .expect("insert");
        send(&mut tree, "a2b", "assistant");
        // Regenerate a2 on the old branch later on, so the old branch has two leaves.
        let seq = tree.next_seq();
        tree.insert(node("a2c", Some("u2"), "assistant", seq))
            .expect("insert");
        tree.switch_to(&m("u2b")).expect("switch");
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a2b"));

        let leaf = tree.switch_to(&m("u2")).expect("switch back");
        assert_eq!(leaf, "a2c");
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a2c"));
        assert_eq!(ids(&tree.active_path()), ["sys", "u1", "a1", "u2", "a2c"]);
        assert!(!tree.is_on_active_path(&m("u2b")));
        assert!(!tree.is_on_active_path(&m("a2")));

        // Switching to a leaf selects the leaf itself.
        assert_eq!(tree.switch_to(&m("a2")).expect("switch"), "a2");
        assert_eq!(
            tree.latest_leaf_under(&m("a2b")).map(MessageId::as_str),
            Ok("a2b")
        );
        assert_eq!(
            tree.switch_to(&m("nope")),
            Err(TreeError::UnknownMessage(m("nope")))
        );
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a2"));
    }

    #[test]
    fn from_nodes_rebuilds_any_order_and_keeps_the_stored_leaf() {
        let rows = vec![
            node("a2", Some("u1"), "assistant", 4),
            node("u1", None, "user", 1),
            node("a1", Some("u1"), "assistant", 2),
            node("u2", Some("a1"), "user", 3),
        ];
        let tree = BranchTree::from_nodes(rows, Some(&m("u2"))).expect("valid");
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("u2"));
        assert_eq!(ids(&tree.active_path()), ["u1", "a1", "u2"]);
        assert_eq!(ids(&tree.children(Some(&m("u1")))), ["a1", "a2"]);
        assert_eq!(tree.next_seq(), 5);
        assert_eq!(ids(&tree.nodes_in_order()), ["u1", "a1", "u2", "a2"]);
    }

    #[test]
    fn from_nodes_with_a_dangling_stored_leaf_falls_back_to_the_latest_leaf() {
        let rows = vec![
            node("u1", None, "user", 1),
            node("a1", Some("u1"), "assistant", 2),
            node("a1b", Some("u1"), "assistant", 5),
            node("u2", Some("a1"), "user", 3),
            node("a2", Some("u2"), "assistant", 4),
        ];
        let tree = BranchTree::from_nodes(rows.clone(), Some(&m("gone"))).expect("valid");
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a1b"));
        assert_eq!(ids(&tree.active_path()), ["u1", "a1b"]);

        let tree = BranchTree::from_nodes(rows, None).expect("valid");
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a1b"));

        let empty = BranchTree::from_nodes(Vec::new(), Some(&m("gone"))).expect("valid");
        assert_eq!(empty.active_leaf(), None);
        assert!(empty.active_path().is_empty());
    }

    #[test]
    fn from_nodes_rejects_unknown_parents_and_cycles() {
        let unknown = vec![
            node("u1", None, "user", 1),
            node("a1", Some("ghost"), "assistant", 2),
        ];
        assert_eq!(
            BranchTree::from_nodes(unknown, None).err(),
            Some(TreeError::UnknownParent(m("ghost")))
        );

        let self_loop = vec![node("u1", Some("u1"), "user", 1)];
        assert_eq!(
            BranchTree::from_nodes(self_loop, None).err(),
            Some(TreeError::Cycle(m("u1")))
        );

        // A two-node cycle next to a healthy root, with a node hanging below the cycle.
        let cycle = vec![
            node("root", None, "user", 1),
            node("x", Some("y"), "user", 2),
            node("y", Some("x"), "assistant", 3),
            node("z", Some("y"), "user", 4),
        ];
        assert_eq!(
            BranchTree::from_nodes(cycle, Some(&m("z"))).err(),
            Some(TreeError::Cycle(m("x")))
        );

        let duplicate = vec![node("u1", None, "user", 1), node("u1", None, "user", 2)];
        assert_eq!(
            BranchTree::from_nodes(duplicate, None).err(),
            Some(TreeError::DuplicateId(m("u1")))
        );
    }

    #[test]
    fn insert_rejects_duplicates_and_unknown_parents() {
        let mut tree = conversation();
        assert_eq!(
            tree.insert(node("u1", None, "user", 9)),
            Err(TreeError::DuplicateId(m("u1")))
        );
        assert_eq!(
            tree.insert(node("x", Some("ghost"), "user", 9)),
            Err(TreeError::UnknownParent(m("ghost")))
        );
        assert_eq!(tree.len(), 5);
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a2"));
    }

    #[test]
    fn remove_subtree_rolls_back() {
        let mut tree = conversation();
        // A failed turn: u3 → a3 appended, then rolled back from u3.
        send(&mut tree, "u3", "user");
        send(&mut tree, "a3", "assistant");
        let removed = tree.remove_subtree(&m("u3")).expect("remove");
        assert_eq!(removed, ["u3", "a3"]);
        assert_eq!(tree.len(), 5);
        assert!(tree.get(&m("u3")).is_none() && tree.get(&m("a3")).is_none());
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a2"));
        assert_eq!(ids(&tree.active_path()), ["sys", "u1", "a1", "u2", "a2"]);
        assert!(tree.children(Some(&m("a2"))).is_empty());
        assert!(!tree.is_on_active_path(&m("u3")));
        assert_eq!(tree.next_seq(), 6);

        // Removing a branch that is not active keeps the active leaf.
        let seq = tree.next_seq();
        tree.insert(node("a2b", Some("u2"), "assistant", seq))
            .expect("insert");
        tree.switch_to(&m("a2")).expect("switch");
        assert_eq!(tree.remove_subtree(&m("a2b")).expect("remove"), ["a2b"]);
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a2"));
        assert_eq!(ids(&tree.children(Some(&m("u2")))), ["a2"]);

        assert_eq!(
            tree.remove_subtree(&m("nope")),
            Err(TreeError::UnknownMessage(m("nope")))
        );
    }

    #[test]
    fn removing_an_active_root_falls_back_to_the_latest_leaf() {
        let mut tree = BranchTree::new();
        send(&mut tree, "u1", "user");
        send(&mut tree, "a1", "assistant");
        let seq = tree.next_seq();
        tree.insert(node("u1b", None, "user", seq)).expect("insert");
        send(&mut tree, "a1b", "assistant");
        assert_eq!(
            tree.remove_subtree(&m("u1b")).expect("remove"),
            ["u1b", "a1b"]
        );
        assert_eq!(tree.active_leaf().map(MessageId::as_str), Some("a1"));
        assert_eq!(ids(&tree.active_path()), ["u1", "a1"]);

        assert_eq!(tree.remove_subtree(&m("u1")).expect("remove"), ["u1", "a1"]);
        assert!(tree.is_empty());
        assert_eq!(tree.active_leaf(), None);
        assert!(tree.active_path().is_empty());
        assert_eq!(tree.next_seq(), 1);
    }

    #[test]
    fn siblings_and_children_are_ordered_by_seq() {
        // Stored out of order, and inserted out of order afterwards.
        let rows = vec![
            node("c", Some("p"), "assistant", 7),
            node("p", None, "user", 1),
            node("a", Some("p"), "assistant", 3),
            node("r2", None, "user", 5),
        ];
        let mut tree = BranchTree::from_nodes(rows, None).expect("valid");
        tree.insert(node("b", Some("p"), "assistant", 4))
            .expect("insert");

        assert_eq!(ids(&tree.children(Some(&m("p")))), ["a", "b", "c"]);
        assert_eq!(ids(&tree.children(None)), ["p", "r2"]);
        assert!(tree.children(Some(&m("a"))).is_empty());
        assert!(tree.children(Some(&m("nope"))).is_empty());

        let (siblings, index) = tree.siblings(&m("b")).expect("siblings");
        assert_eq!(ids(&siblings), ["a", "b", "c"]);
        assert_eq!(index, 1);
        let (roots, index) = tree.siblings(&m("r2")).expect("siblings");
        assert_eq!(ids(&roots), ["p", "r2"]);
        assert_eq!(index, 1);
        assert_eq!(
            tree.siblings(&m("nope")).err(),
            Some(TreeError::UnknownMessage(m("nope")))
        );

        assert_eq!(
            tree.latest_leaf_under(&m("p")).map(MessageId::as_str),
            Ok("c")
        );
        assert_eq!(ids(&tree.nodes_in_order()), ["p", "a", "b", "r2", "c"]);
    }

    #[test]
    fn path_to_walks_from_the_root() {
        let tree = conversation();
        let path = tree.path_to(&m("a1")).expect("path");
        assert_eq!(ids(&path), ["sys", "u1", "a1"]);
        assert_eq!(
            tree.path_to(&m("nope")).err(),
            Some(TreeError::UnknownMessage(m("nope")))
        );
    }

    #[test]
    fn a_deep_chain_of_ten_thousand_messages_builds_and_walks_without_stack_overflow() {
        const DEPTH: i64 = 10_000;
        let mut rows: Vec<MessageNode> = (1..=DEPTH)
            .map(|seq| {
                let parent = (seq > 1).then(|| format!("m{}", seq - 1));
                let role = if seq % 2 == 1 { "user" } else { "assistant" };
                node(&format!("m{seq}"), parent.as_deref(), role, seq)
            })
            .collect();
        rows.reverse();
        let tree = BranchTree::from_nodes(rows, None).expect("valid");
        let last = format!("m{DEPTH}");
        assert_eq!(
            tree.active_leaf().map(MessageId::as_str),
            Some(last.as_str())
        );
        assert_eq!(tree.active_path().len(), 10_000);
        assert_eq!(
            tree.latest_leaf_under(&m("m1")).map(MessageId::as_str),
            Ok(last.as_str())
        );
        assert!(tree.is_on_active_path(&m("m1")));

        let mut built = BranchTree::new();
        for i in 0..DEPTH {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            send(&mut built, &format!("n{i}"), role);
        }
        assert_eq!(built.path_to(&m("n9999")).expect("path").len(), 10_000);
        assert_eq!(
            built.remove_subtree(&m("n0")).expect("remove").len(),
            10_000
        );
        assert!(built.is_empty());
    }
}
