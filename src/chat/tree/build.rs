//! Building and changing a `BranchTree`: rebuilding it from stored rows (with the checks for
//! duplicate ids, unknown parents and parent cycles), inserting a message, and removing a
//! subtree to roll back, each keeping the active leaf and the active path in step.

use std::cmp::Ordering;
use std::collections::HashSet;

use entities::ids::MessageId;

use super::{BranchTree, MessageNode, TreeError, compare_ids, compare_nodes};

impl BranchTree {
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
            self.active_ids.insert(id.clone());
            self.active_order.push(id);
        } else {
            self.refresh_active_ids();
        }
        Ok(())
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

    /// The leaf with the highest seq in the whole tree, `None` if the tree is empty.
    fn latest_leaf_of_tree(&self) -> Option<MessageId> {
        self.nodes
            .values()
            .filter(|n| !self.children.contains_key(&n.id))
            .max_by(|a, b| compare_nodes(a, b))
            .map(|n| n.id.clone())
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
