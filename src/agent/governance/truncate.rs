//! Truncation of long tool results for the model: `truncate_result`, cut at a character
//! boundary (`char_boundary_after`, which the preview uses too), with a marker stating the total.

/// The longest tool result, in characters, handed to the model. Spec: "tool results over
/// 10,000 characters truncated": about 2,500 tokens, room for a useful page excerpt without
/// one result crowding the rest of the conversation out of the context window.
pub const MAX_RESULT_CHARS: usize = 10_000;

/// Truncates a tool result (already serialised for the model) to its first `max_chars`
/// characters (Unicode scalar values, never splitting a char), appending the marker
/// `"\n[truncated: {total} characters, showing the first {max_chars}]"`. Returns
/// (text, was_truncated).
///
/// The marker is added after the kept `max_chars` characters, so a truncated text is longer
/// than `max_chars` by the marker's length (about 60 characters); `max_chars` counts the
/// result's own content, which the marker's wording then states exactly. A text of at most
/// `max_chars` characters is returned unchanged.
pub fn truncate_result(text: &str, max_chars: usize) -> (String, bool) {
    let Some(cut) = char_boundary_after(text, max_chars) else {
        return (text.to_owned(), false);
    };
    let total = max_chars + text[cut..].chars().count();
    let mut out = String::with_capacity(cut + 64);
    out.push_str(&text[..cut]);
    out.push_str(&format!(
        "\n[truncated: {total} characters, showing the first {max_chars}]"
    ));
    (out, true)
}

/// The byte index where `text`'s character number `n` (0-based) starts, or `None` when `text`
/// has at most `n` characters (nothing to cut).
pub(super) fn char_boundary_after(text: &str, n: usize) -> Option<usize> {
    if text.len() <= n {
        // At most `len` bytes means at most `len` characters.
        return None;
    }
    text.char_indices().nth(n).map(|(index, _)| index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_returned_untouched() {
        assert_eq!(truncate_result("hello", 10), ("hello".to_owned(), false));
        assert_eq!(truncate_result("", 0), (String::new(), false));
        // Exactly at the limit, counted in characters, not bytes.
        let exact = "é".repeat(10);
        assert_eq!(truncate_result(&exact, 10), (exact.clone(), false));
    }

    #[test]
    fn long_text_is_cut_at_a_char_boundary_and_the_marker_states_the_total() {
        let text = format!("{}{}", "é😀".repeat(6), "abc");
        // 15 characters; keep 7: "é😀é😀é😀é".
        let (out, truncated) = truncate_result(&text, 7);
        assert!(truncated);
        assert_eq!(
            out,
            "é😀é😀é😀é\n[truncated: 15 characters, showing the first 7]"
        );
    }

    #[test]
    fn a_truncated_result_is_longer_than_the_limit_by_exactly_the_marker() {
        let text = "x".repeat(MAX_RESULT_CHARS + 5_000);
        let (out, truncated) = truncate_result(&text, MAX_RESULT_CHARS);
        assert!(truncated);
        let marker = "\n[truncated: 15000 characters, showing the first 10000]";
        assert!(out.ends_with(marker));
        assert_eq!(
            out.chars().count(),
            MAX_RESULT_CHARS + marker.chars().count()
        );
        assert_eq!(&out[..MAX_RESULT_CHARS], &text[..MAX_RESULT_CHARS]);
    }

    #[test]
    fn a_zero_limit_keeps_only_the_marker() {
        let (out, truncated) = truncate_result("abc", 0);
        assert!(truncated);
        assert_eq!(out, "\n[truncated: 3 characters, showing the first 0]");
    }
}
