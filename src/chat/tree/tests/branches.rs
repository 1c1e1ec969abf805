//! Unit tests of `BranchTree`'s branches: editing and regenerating (siblings, new roots, the
//! role checks), switching branches, the order of children and siblings, paths from the root.

use super::*;

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
