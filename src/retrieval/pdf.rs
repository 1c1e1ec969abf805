//! The readable text of a PDF through `pdf-extract`, made safe for files from anywhere.
//! `pdf-extract` recurses into form XObjects (`Do`) and up `Parent` chains, and lopdf's page
//! walk multiplies at every shared `Kids` entry, so a file whose objects loop would overflow
//! the stack or run forever: the object graph is checked first, iteratively. Its panics become
//! errors, it runs on a thread with a roomy stack, and the deadline is checked as text comes.

use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};

use pdf_extract::{
    ColorSpace, Dictionary, Document, MediaBox, Object, ObjectId, OutputDev, OutputError, Path,
    PlainTextOutput, Transform,
};

use super::text::{Deadline, ExtractionError, tidy_lines};

/// Longest `Parent` chain, and deepest page tree, accepted. Real files have a handful of
/// levels; lopdf itself stops descending at 256.
const MAX_TREE_DEPTH: usize = 64;
/// Deepest nesting of form XObjects drawn inside each other that is accepted. Each level is a
/// recursive call inside `pdf-extract`.
const MAX_FORM_DEPTH: usize = 32;
/// Stack for the thread that runs `pdf-extract`: its recursion is bounded by the checks above,
/// with frames far larger than a worker thread's 2 MiB allows at those depths.
const EXTRACTION_STACK_BYTES: usize = 64 * 1024 * 1024;

/// The readable text of a PDF, one line per text line, blank lines between blocks.
pub fn pdf_to_text(body: &[u8], deadline: &Deadline) -> Result<String, ExtractionError> {
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("pdf-extract".into())
            .stack_size(EXTRACTION_STACK_BYTES)
            .spawn_scoped(scope, || {
                catch_unwind(AssertUnwindSafe(|| read(body, deadline)))
            })
            .map(|thread| thread.join())
    });
    match outcome {
        Ok(Ok(Ok(result))) => result,
        Ok(_) => Err(unreadable("the PDF reader failed on this file")),
        Err(err) => Err(unreadable(&format!("no thread to read it on: {err}"))),
    }
}

fn unreadable(reason: &str) -> ExtractionError {
    ExtractionError(format!("could not read the PDF: {reason}"))
}

fn read(body: &[u8], deadline: &Deadline) -> Result<String, ExtractionError> {
    let mut doc = Document::load_mem(body).map_err(|err| unreadable(&err.to_string()))?;
    if doc.is_encrypted() {
        // Files "encrypted" with an empty user password open in every reader; others cannot
        // be read without the password we do not have.
        doc.decrypt("")
            .map_err(|_| unreadable("it is encrypted with a password"))?;
    }
    deadline.check()?;
    check_structure(&doc).map_err(|reason| unreadable(&reason))?;
    deadline.check()?;
    let mut text = String::new();
    {
        let mut output = TimedOutput {
            inner: PlainTextOutput::new(&mut text),
            deadline,
        };
        if let Err(err) = pdf_extract::output_doc(&doc, &mut output) {
            deadline.check()?;
            return Err(unreadable(&err.to_string()));
        }
    }
    Ok(tidy_lines(&text))
}

/// Refuses object graphs that `pdf-extract` would follow for ever or too deep: `Parent`
/// loops, page trees that loop or share nodes, and form XObjects that draw themselves.
fn check_structure(doc: &Document) -> Result<(), String> {
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

/// `PlainTextOutput` with the deadline checked at every page and character.
struct TimedOutput<'a, W: pdf_extract::ConvertToFmt> {
    inner: PlainTextOutput<W>,
    deadline: &'a Deadline,
}

impl<W: pdf_extract::ConvertToFmt> TimedOutput<'_, W> {
    fn check(&self) -> Result<(), OutputError> {
        self.deadline
            .check()
            .map_err(|err| OutputError::IoError(std::io::Error::other(err.to_string())))
    }
}

impl<W: pdf_extract::ConvertToFmt> OutputDev for TimedOutput<'_, W> {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.check()?;
        self.inner.begin_page(page_num, media_box, art_box)
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        self.inner.end_page()
    }
    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        self.check()?;
        self.inner
            .output_character(trm, width, spacing, font_size, char)
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.inner.begin_word()
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        self.inner.end_word()
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        self.inner.end_line()
    }
    fn stroke(
        &mut self,
        ctm: &Transform,
        colorspace: &ColorSpace,
        color: &[f64],
        path: &Path,
    ) -> Result<(), OutputError> {
        self.check()?;
        self.inner.stroke(ctm, colorspace, color, path)
    }
    fn fill(
        &mut self,
        ctm: &Transform,
        colorspace: &ColorSpace,
        color: &[f64],
        path: &Path,
    ) -> Result<(), OutputError> {
        self.check()?;
        self.inner.fill(ctm, colorspace, color, path)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn generous() -> Deadline {
        Deadline::after(Duration::from_secs(60))
    }

    #[test]
    fn a_pdf_becomes_its_text() {
        // A one-page PDF (Helvetica text, two lines), as a browser would download it.
        let pdf = include_bytes!("../../tests/fixtures/fetch/report.pdf");
        let text = pdf_to_text(pdf, &generous()).unwrap();
        assert!(text.contains("Quarterly report"), "{text:?}");
        assert!(text.contains("Revenue grew by 12 percent."), "{text:?}");
        let err = pdf_to_text(b"%PDF-1.4 not really", &generous()).unwrap_err();
        assert!(err.to_string().contains("PDF"), "{err}");
    }

    #[test]
    fn pdfs_whose_objects_loop_are_refused_before_they_are_read() {
        let corpus = |name: &str| {
            std::fs::read(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/hostile")
                    .join(name),
            )
            .unwrap()
        };
        for (file, reason) in [
            ("pdf-form-draws-itself.pdf", "draws itself"),
            ("pdf-forms-draw-each-other.pdf", "draws itself"),
            ("pdf-kids-loop.pdf", "page tree loops"),
            ("pdf-parent-loop.pdf", "Parent entries form a loop"),
        ] {
            let err = pdf_to_text(&corpus(file), &generous()).unwrap_err();
            assert_eq!(err.code(), "extraction_failed");
            assert!(err.to_string().contains(reason), "{file}: {err}");
        }
    }

    #[test]
    fn forms_nested_deeper_than_the_limit_are_refused_and_shallow_ones_read() {
        let pdf = |depth: usize| {
            // Page → form 1 → form 2 → … → form `depth`, each with its own resources.
            let mut objects = vec![
                "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
                "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
                 /Resources << /XObject << /X 5 0 R >> >> >>"
                    .to_string(),
                "<< /Length 5 >>\nstream\n/X Do\nendstream".to_string(),
            ];
            for level in 0..depth {
                let number = 5 + level;
                let (content, resources) = if level + 1 < depth {
                    (
                        "/X Do",
                        format!("/Resources << /XObject << /X {} 0 R >> >>", number + 1),
                    )
                } else {
                    ("", String::new())
                };
                objects.push(format!(
                    "<< /Type /XObject /Subtype /Form /BBox [0 0 1 1] {resources} /Length {} >>\n\
                     stream\n{content}\nendstream",
                    content.len()
                ));
            }
            let mut out = b"%PDF-1.4\n".to_vec();
            let mut offsets = Vec::new();
            for (i, body) in objects.iter().enumerate() {
                offsets.push(out.len());
                out.extend(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
            }
            let xref = out.len();
            out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
            for offset in offsets {
                out.extend(format!("{offset:010} 00000 n \n").as_bytes());
            }
            out.extend(
                format!(
                    "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
                    objects.len() + 1
                )
                .as_bytes(),
            );
            out
        };
        let shallow = pdf_to_text(&pdf(4), &generous());
        assert!(shallow.is_ok(), "{shallow:?}");
        let err = pdf_to_text(&pdf(MAX_FORM_DEPTH + 5), &generous()).unwrap_err();
        assert!(err.to_string().contains("nest more than"), "{err}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// A real PDF with bytes overwritten and its end cut: every outcome is text or an
        /// error, never a panic or a hang.
        #[test]
        fn a_damaged_pdf_is_text_or_an_error(
            edits in proptest::collection::vec((0usize..4096, proptest::num::u8::ANY), 0..24),
            keep in 0usize..4096,
        ) {
            let mut pdf = include_bytes!("../../tests/fixtures/fetch/report.pdf").to_vec();
            for (at, byte) in edits {
                let at = at % pdf.len();
                pdf[at] = byte;
            }
            pdf.truncate(keep.max(16).min(pdf.len()));
            let _ = pdf_to_text(&pdf, &Deadline::after(Duration::from_secs(10)));
        }

        #[test]
        fn arbitrary_bytes_after_a_pdf_header_are_text_or_an_error(
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..2048),
        ) {
            let mut pdf = b"%PDF-1.4\n".to_vec();
            pdf.extend(body);
            let _ = pdf_to_text(&pdf, &Deadline::after(Duration::from_secs(10)));
        }
    }
}
