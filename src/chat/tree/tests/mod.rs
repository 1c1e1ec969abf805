//! Unit tests of `BranchTree`: an empty tree, sending, rebuilding from stored rows (order,
//! dangling leaves, unknown parents, cycles, duplicates), inserting, rolling back, and a chain
//! ten thousand deep. Editing, regenerating, switching and the orderings are in `branches`.

mod branches;

use super::*;

fn m(id: &str) -> MessageId {
    MessageId::from_string(id)
}

fn node(id: &str, parent: Option<&str>, role: &str, seq: i64) -> MessageNode {
    let role = match role {
        "system" => MessageRole::System,
        "user" => MessageRole::User,
        "assistant" => MessageRole::Assistant,
        _ => MessageRole::Tool,
    };
    MessageNode::plain(id, parent, role, &format!("content of {id}"), seq)
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

/// The active leaf's context, each message counted as one token.
fn context(tree: &BranchTree, budget: u64) -> (Vec<String>, Vec<String>) {
    let leaf = tree.active_leaf().expect("a leaf").clone();
    let (kept, left_out) = tree
        .context_path(&leaf, Some(budget), |_| 1)
        .expect("the path");
    (ids(&kept), ids(&left_out))
}

#[test]
fn a_turns_context_keeps_the_leading_system_message_and_the_newest_history_on_any_branch() {
    let owned = |ids: &[&str]| ids.iter().map(|id| id.to_string()).collect::<Vec<_>>();
    let mut tree = conversation();
    send(&mut tree, "u3", "user");
    // Past the budget by one message, so fitting sees where the history overflows.
    assert_eq!(
        context(&tree, 2),
        (owned(&["sys", "u2", "a2", "u3"]), owned(&["u1", "a1"]))
    );
    assert_eq!(
        context(&tree, 100),
        (owned(&["sys", "u1", "a1", "u2", "a2", "u3"]), owned(&[]))
    );
    // Another branch (an edit of u2), then back: the context follows the active path.
    let seq = tree.next_seq();
    tree.insert(node("u2b", Some("a1"), "user", seq))
        .expect("insert");
    send(&mut tree, "a2b", "assistant");
    assert_eq!(
        context(&tree, 1),
        (owned(&["sys", "u2b", "a2b"]), owned(&["u1", "a1"]))
    );
    tree.switch_to(&m("u3")).expect("switch");
    assert_eq!(
        context(&tree, 1),
        (owned(&["sys", "a2", "u3"]), owned(&["u1", "a1", "u2"]))
    );
    tree.remove_subtree(&m("u3")).expect("remove");
    assert_eq!(
        context(&tree, 0),
        (owned(&["sys", "a2"]), owned(&["u1", "a1", "u2"]))
    );
    // A message off the active path is walked to the same way.
    let (kept, left_out) = tree
        .context_path(&m("a2b"), Some(1), |_| 1)
        .expect("the path");
    assert_eq!(
        (ids(&kept), ids(&left_out)),
        (owned(&["sys", "u2b", "a2b"]), owned(&["u1", "a1"]))
    );
}
