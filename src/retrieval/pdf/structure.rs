//! The object-graph checks made before `pdf-extract` reads a file, all iterative: `Parent`
//! chains that loop or run too deep, page trees that loop or share a node, and form XObjects
//! that draw themselves or nest too deep (found by the names their content draws with `Do`).

use std::collections::{HashMap, HashSet};

use pdf_extract::{Dictionary, Document, Object, ObjectId};

use super::{MAX_FORM_DEPTH, MAX_TREE_DEPTH};

/// Refuses object graphs that `pdf-extract` would follow for ever or too deep: `Parent`
/// loops, page trees that loop or share nodes, and form XObjects that draw themselves.
pub(super) fn check_structure(doc: &Document) -> Result<(), String> {
    check_parent_chains(doc)?;
    check_page_tree(doc)?;
    check_forms(doc)
}

fn reference(object: &Object) -> Option<ObjectId> {
    object.as_reference().ok()
}

fn dictionary_of(object: &Object) -> Option<&Dictionary> {
    match object {
        Object::Dictionary(dict) => Some(dict),
        Object::Stream(stream) => Some(&stream.dict),
        _ => None,
    }
}

/// The dictionary `object` is or refers to (one reference deep, as `pdf-extract` looks).
fn resolve_dictionary<'a>(doc: &'a Document, object: &'a Object) -> Option<&'a Dictionary> {
    match object {
        Object::Reference(id) => doc.objects.get(id).and_then(dictionary_of),
        other => dictionary_of(other),
    }
}

fn check_parent_chains(doc: &Document) -> Result<(), String> {
    // Chains already walked to their end need not be walked again.
    let mut finite: HashSet<ObjectId> = HashSet::new();
    for (&start, object) in &doc.objects {
        let Some(mut dict) = dictionary_of(object) else {
            continue;
        };
        let mut walked = vec![start];
        while let Ok(parent) = dict.get(b"Parent").and_then(Object::as_reference) {
            if finite.contains(&parent) {
                break;
            }
            if walked.contains(&parent) || walked.len() > MAX_TREE_DEPTH {
                return Err("its Parent entries form a loop or a chain too deep to follow".into());
            }
            walked.push(parent);
            match doc.objects.get(&parent).and_then(dictionary_of) {
                Some(next) => dict = next,
                None => break,
            }
        }
        finite.extend(walked);
    }
    Ok(())
}

fn check_page_tree(doc: &Document) -> Result<(), String> {
    let Some(root) = doc
        .trailer
        .get(b"Root")
        .ok()
        .and_then(|root| resolve_dictionary(doc, root))
        .and_then(|catalog| catalog.get(b"Pages").ok())
        .and_then(reference)
    else {
        return Ok(());
    };
    let mut seen: HashSet<ObjectId> = HashSet::from([root]);
    let mut stack = vec![(root, 0usize)];
    while let Some((id, depth)) = stack.pop() {
        if depth > MAX_TREE_DEPTH {
            return Err("its page tree is too deep".into());
        }
        let Some(kids) = doc
            .objects
            .get(&id)
            .and_then(dictionary_of)
            .and_then(|node| node.get(b"Kids").ok())
            .and_then(|kids| match kids {
                Object::Reference(kids_id) => doc.objects.get(kids_id),
                direct => Some(direct),
            })
            .and_then(|kids| kids.as_array().ok())
        else {
            continue;
        };
        for kid in kids.iter().filter_map(reference) {
            if !seen.insert(kid) {
                return Err("its page tree loops or shares a node".into());
            }
            stack.push((kid, depth + 1));
        }
    }
    Ok(())
}

/// Form XObjects drawn inside each other. A form's content draws XObjects by name (`/X Do`);
/// a name is looked up in the form's own resources or, for a form without them, in its
/// caller's, which always name the form itself. So the edges run from a form to the XObjects
/// its content names in its own resources, or in every resource dictionary that names it. The
/// graph must be acyclic and shallow.
fn check_forms(doc: &Document) -> Result<(), String> {
    // Every XObject dictionary in the file, as (name, id) pairs.
    let mut xobject_sets: Vec<Vec<(Vec<u8>, ObjectId)>> = Vec::new();
    // The XObject set of each object's own resources.
    let mut own_set: HashMap<ObjectId, usize> = HashMap::new();
    for (&id, object) in &doc.objects {
        let Some(dict) = dictionary_of(object) else {
            continue;
        };
        let Some(xobjects) = dict
            .get(b"Resources")
            .ok()
            .and_then(|resources| resolve_dictionary(doc, resources))
            .and_then(|resources| resources.get(b"XObject").ok())
            .and_then(|xobjects| resolve_dictionary(doc, xobjects))
        else {
            continue;
        };
        let named = xobjects
            .iter()
            .filter_map(|(name, target)| Some((name.clone(), reference(target)?)))
            .collect();
        own_set.insert(id, xobject_sets.len());
        xobject_sets.push(named);
    }
    let mut named_in: HashMap<ObjectId, Vec<usize>> = HashMap::new();
    for (set, entries) in xobject_sets.iter().enumerate() {
        for (_, id) in entries {
            named_in.entry(*id).or_default().push(set);
        }
    }
    let has_own_resources = |id: &ObjectId| {
        doc.objects
            .get(id)
            .and_then(dictionary_of)
            .and_then(|dict| dict.get(b"Resources").ok())
            .and_then(|resources| resolve_dictionary(doc, resources))
            .is_some()
    };
    let successors = |id: ObjectId| -> Vec<ObjectId> {
        let Some(Object::Stream(stream)) = doc.objects.get(&id) else {
            return Vec::new();
        };
        let content = stream
            .decompressed_content()
            .unwrap_or_else(|_| stream.content.clone());
        let drawn = drawn_names(&content);
        if drawn.is_empty() {
            return Vec::new();
        }
        let sets: Vec<usize> = if has_own_resources(&id) {
            own_set.get(&id).copied().into_iter().collect()
        } else {
            named_in.get(&id).cloned().unwrap_or_default()
        };
        let mut next: Vec<ObjectId> = sets
            .into_iter()
            .flat_map(|set| xobject_sets[set].iter())
            .filter(|(name, _)| {
                drawn
                    .iter()
                    .any(|d| d.is_none() || d.as_deref() == Some(name))
            })
            .map(|(_, target)| *target)
            .collect();
        next.sort_unstable();
        next.dedup();
        next
    };

    // Longest path by depth-first search with an explicit stack: `height` is known once a
    // node is finished; meeting a node still on the stack is a cycle.
    let mut height: HashMap<ObjectId, usize> = HashMap::new();
    let mut on_stack: HashSet<ObjectId> = HashSet::new();
    for &start in named_in.keys() {
        if height.contains_key(&start) {
            continue;
        }
        let first = successors(start);
        let mut stack: Vec<(ObjectId, Vec<ObjectId>, Vec<ObjectId>)> =
            vec![(start, first.clone(), first)];
        on_stack.insert(start);
        while let Some((node, pending, all)) = stack.last_mut() {
            if let Some(next) = pending.pop() {
                if on_stack.contains(&next) {
                    return Err("a form XObject draws itself".into());
                }
                if !height.contains_key(&next) {
                    on_stack.insert(next);
                    let next_successors = successors(next);
                    stack.push((next, next_successors.clone(), next_successors));
                }
                continue;
            }
            let node = *node;
            let node_height = 1 + all
                .iter()
                .map(|next| height.get(next).copied().unwrap_or(0))
                .max()
                .unwrap_or(0);
            if node_height > MAX_FORM_DEPTH {
                return Err(format!(
                    "its form XObjects nest more than {MAX_FORM_DEPTH} deep"
                ));
            }
            height.insert(node, node_height);
            on_stack.remove(&node);
            stack.pop();
        }
    }
    Ok(())
}

/// The names a content stream draws with `Do`, in order; `None` for a `Do` whose operand is
/// not a plain name (it could draw anything). Strings and comments are skipped.
fn drawn_names(content: &[u8]) -> Vec<Option<Vec<u8>>> {
    let is_space = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0');
    let is_delimiter = |b: u8| b"()<>[]{}/%".contains(&b);
    let mut names = Vec::new();
    let mut last_name: Option<&[u8]> = None;
    let mut i = 0;
    while i < content.len() {
        let byte = content[i];
        if byte == b'(' {
            let mut depth = 0usize;
            while i < content.len() {
                match content[i] {
                    b'\\' => i += 1,
                    b'(' => depth += 1,
                    b')' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            i += 1;
            last_name = None;
            continue;
        }
        if byte == b'%' {
            while i < content.len() && !matches!(content[i], b'\r' | b'\n') {
                i += 1;
            }
            continue;
        }
        if is_space(byte) || (is_delimiter(byte) && byte != b'/') {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < content.len() && !is_space(content[i]) && !is_delimiter(content[i]) {
            i += 1;
        }
        let token = &content[start..i];
        if let Some(name) = token.strip_prefix(b"/") {
            last_name = Some(name);
            continue;
        }
        if token == b"Do" {
            // A name with `#xx` escapes is compared undecoded: treat it as unknown.
            names.push(last_name.filter(|n| !n.contains(&b'#')).map(<[u8]>::to_vec));
        }
        last_name = None;
    }
    names
}
