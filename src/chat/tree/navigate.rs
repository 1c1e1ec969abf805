//! Walking a `BranchTree`: the active path and the path to any message, children and siblings
//! in seq order, the latest leaf under a message and selecting its branch, the parent checks for
//! editing and regenerating, and every node in order.

use entities::ids::MessageId;
use entities::messages::MessageRole;

use super::{BranchTree, MessageNode, TreeError, compare_nodes};

impl BranchTree {
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

    /// The path to `id` as a turn's context. With a `budget`, the history is kept only as far
    /// back as a context of that many tokens could reach: from `id` back, messages are kept
    /// until their `tokens` pass the budget (that one included, so fitting still sees where
    /// the history overflows), and the leading system messages stay. Returns the kept nodes
    /// and those left out between them, in path order.
    pub fn context_path(
        &self,
        id: &MessageId,
        budget: Option<u64>,
        tokens: impl Fn(&MessageNode) -> u64,
    ) -> Result<(Vec<&MessageNode>, Vec<&MessageNode>), TreeError> {
        let Some(budget) = budget else {
            return Ok((self.path_to(id)?, Vec::new()));
        };
        if self.active_leaf.as_ref() == Some(id) {
            return Ok(self.active_context(budget, tokens));
        }
        let mut path = self.path_to(id)?;
        let leading = path
            .iter()
            .take_while(|node| node.role == MessageRole::System)
            .count();
        let start = history_start(path.len(), leading, budget, |i| tokens(path[i]));
        let left_out = path.drain(leading..start).collect();
        Ok((path, left_out))
    }

    /// `context_path` for the active leaf, from the ids in path order: only the messages kept
    /// and left out are looked up, not every message back to the root.
    fn active_context(
        &self,
        budget: u64,
        tokens: impl Fn(&MessageNode) -> u64,
    ) -> (Vec<&MessageNode>, Vec<&MessageNode>) {
        let node = |id: &MessageId| self.nodes.get(id);
        let leading = self
            .active_order
            .iter()
            .map_while(node)
            .take_while(|node| node.role == MessageRole::System)
            .count();
        let order = &self.active_order;
        let start = history_start(order.len(), leading, budget, |i| {
            node(&order[i]).map_or(0, &tokens)
        });
        let kept = order[..leading].iter().chain(&order[start..]);
        (
            kept.filter_map(node).collect(),
            order[leading..start].iter().filter_map(node).collect(),
        )
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
        // Staying on the same leaf (an answer appended where the user is) keeps the path.
        if self.active_leaf.as_ref() != Some(&leaf) {
            self.active_leaf = Some(leaf.clone());
            self.refresh_active_ids();
        }
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
    pub(super) fn child_ids(&self, id: Option<&MessageId>) -> &[MessageId] {
        match id {
            Some(id) => self.children.get(id).map_or(&[], Vec::as_slice),
            None => &self.roots,
        }
    }

    /// Recomputes `active_ids` and `active_order` from `active_leaf`.
    pub(super) fn refresh_active_ids(&mut self) {
        let order: Vec<MessageId> = self
            .active_path()
            .into_iter()
            .map(|n| n.id.clone())
            .collect();
        self.active_ids = order.iter().cloned().collect();
        self.active_order = order;
    }
}

/// Where a path of `len` messages is cut for a turn's context: the history after the `leading`
/// system messages is kept from the newest back until `tokens_at` of the kept pass `budget`
/// (that message included, so fitting still sees where the history overflows).
fn history_start(
    len: usize,
    leading: usize,
    budget: u64,
    tokens_at: impl Fn(usize) -> u64,
) -> usize {
    let mut total = 0;
    let mut start = len;
    while start > leading && total <= budget {
        start -= 1;
        total += tokens_at(start);
    }
    start
}
