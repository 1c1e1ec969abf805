//! Reasoning kept apart from the answer. `ThinkSplitter` reads a model's content as it streams
//! and takes a `<think>…</think>` block at its very start (DeepSeek-R1 style, after optional
//! whitespace) out of the answer, whatever the fragments' boundaries; an unterminated block is
//! all reasoning, and `<think>` later in the text is plain text. The upstream's own
//! `reasoning_content` / `reasoning` fields need no splitting: the accumulator reads them.

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// What a fragment of content held: reasoning (which always comes first), then answer text.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Split {
    pub reasoning: String,
    pub text: String,
}

impl Split {
    pub fn is_empty(&self) -> bool {
        self.reasoning.is_empty() && self.text.is_empty()
    }

    fn append(&mut self, other: Split) {
        self.reasoning.push_str(&other.reasoning);
        self.text.push_str(&other.text);
    }
}

#[derive(Debug)]
enum State {
    /// Only whitespace and a prefix of `<think>` so far: held until it is one or the other.
    Start { held: String },
    /// Inside the block. `held` is a tail that may yet be (whitespace and) the start of
    /// `</think>`; `begun` once the reasoning had something other than whitespace.
    Thinking { held: String, begun: bool },
    /// Just after `</think>`: the answer's leading whitespace is dropped.
    AfterThink,
    /// Everything else is answer text.
    Text,
}

/// Splits a content stream into reasoning and answer (see the module's header).
#[derive(Debug)]
pub struct ThinkSplitter {
    state: State,
}

impl Default for ThinkSplitter {
    fn default() -> Self {
        Self {
            state: State::Start {
                held: String::new(),
            },
        }
    }
}

impl ThinkSplitter {
    /// Takes in the next fragment; returns what can be told apart so far.
    pub fn push(&mut self, fragment: &str) -> Split {
        let mut out = Split::default();
        match &mut self.state {
            State::Start { held } => {
                held.push_str(fragment);
                let trimmed = held.trim_start();
                if let Some(rest) = trimmed.strip_prefix(OPEN) {
                    let rest = rest.to_string();
                    self.state = State::Thinking {
                        held: String::new(),
                        begun: false,
                    };
                    out.append(self.push(&rest));
                } else if !OPEN.starts_with(trimmed) {
                    out.text = std::mem::take(held);
                    self.state = State::Text;
                }
            }
            State::Thinking { held, begun } => {
                if *begun {
                    held.push_str(fragment);
                } else {
                    // The reasoning's leading whitespace (the newline after `<think>`) is dropped.
                    held.push_str(fragment.trim_start());
                    *begun = !held.is_empty();
                }
                if let Some(at) = held.find(CLOSE) {
                    out.reasoning = held[..at].trim_end().to_string();
                    let rest = held[at + CLOSE.len()..].to_string();
                    self.state = State::AfterThink;
                    out.append(self.push(&rest));
                } else {
                    let keep = undecided_tail(held);
                    out.reasoning = held[..held.len() - keep].to_string();
                    held.drain(..held.len() - keep);
                }
            }
            State::AfterThink => {
                let text = fragment.trim_start();
                if !text.is_empty() {
                    out.text = text.to_string();
                    self.state = State::Text;
                }
            }
            State::Text => out.text = fragment.to_string(),
        }
        out
    }

    /// The content ended: what was held back. Content that was only whitespace or part of
    /// `<think>` is text; an unterminated block is reasoning.
    pub fn finish(&mut self) -> Split {
        let mut out = Split::default();
        match std::mem::replace(&mut self.state, State::Text) {
            State::Start { held } => out.text = held,
            State::Thinking { held, .. } => out.reasoning = held.trim_end().to_string(),
            State::AfterThink | State::Text => {}
        }
        out
    }

    /// Splits a whole content at once (a non-streamed answer).
    pub fn split(content: &str) -> Split {
        let mut splitter = Self::default();
        let mut out = splitter.push(content);
        out.append(splitter.finish());
        out
    }
}

/// How many bytes at the end of `held` must wait: a proper prefix of `</think>` and the
/// whitespace before it (trimmed if the tag follows). Only ASCII is held, so the cut is on a
/// character boundary.
fn undecided_tail(held: &str) -> usize {
    let bytes = held.as_bytes();
    let tag = (1..CLOSE.len())
        .rev()
        .find(|&k| bytes.ends_with(&CLOSE.as_bytes()[..k]))
        .unwrap_or(0);
    let spaces = bytes[..bytes.len() - tag]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    tag + spaces
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `content` cut at every set of `cuts` and returns what came out in total.
    fn fed(content: &str, cuts: &[usize]) -> Split {
        let mut splitter = ThinkSplitter::default();
        let mut out = Split::default();
        let mut from = 0;
        for &cut in cuts.iter().chain(std::iter::once(&content.len())) {
            let piece = &content[from..cut];
            let got = splitter.push(piece);
            // Reasoning never follows text, within a fragment or across them.
            assert!(
                got.reasoning.is_empty() || out.text.is_empty(),
                "reasoning after text in {content:?} cut at {cuts:?}"
            );
            out.append(got);
            from = cut;
        }
        out.append(splitter.finish());
        out
    }

    /// Every way of cutting `content` in two and three pieces gives `expected`.
    fn splits_everywhere(content: &str, reasoning: &str, text: &str) {
        let bounds: Vec<usize> = (0..=content.len())
            .filter(|&i| content.is_char_boundary(i))
            .collect();
        for &a in &bounds {
            let got = fed(content, &[a]);
            assert_eq!(
                (got.reasoning.as_str(), got.text.as_str()),
                (reasoning, text),
                "cut at {a} of {content:?}"
            );
            for &b in bounds.iter().filter(|&&b| b >= a) {
                let got = fed(content, &[a, b]);
                assert_eq!(
                    (got.reasoning.as_str(), got.text.as_str()),
                    (reasoning, text),
                    "cut at {a} and {b} of {content:?}"
                );
            }
        }
        let whole = ThinkSplitter::split(content);
        assert_eq!(
            (whole.reasoning.as_str(), whole.text.as_str()),
            (reasoning, text)
        );
    }

    #[test]
    fn a_think_block_at_the_start_is_reasoning_wherever_the_tags_are_cut() {
        splits_everywhere(
            "<think>\nThe user greets me.\n</think>\n\nHello!",
            "The user greets me.",
            "Hello!",
        );
    }

    #[test]
    fn leading_whitespace_before_the_block_is_allowed() {
        splits_everywhere("\n  <think>hmm</think>Hi", "hmm", "Hi");
    }

    #[test]
    fn an_unterminated_block_at_the_end_is_all_reasoning() {
        splits_everywhere("<think>still going </th", "still going </th", "");
        splits_everywhere("<think>\nthinking about it\n\n", "thinking about it", "");
    }

    #[test]
    fn think_later_in_the_text_is_plain_text() {
        splits_everywhere(
            "Use <think> tags like <think>this</think>.",
            "",
            "Use <think> tags like <think>this</think>.",
        );
        splits_everywhere("Hi <think>no</think>", "", "Hi <think>no</think>");
    }

    #[test]
    fn content_without_a_block_is_text_unchanged() {
        splits_everywhere("  Hello, wörld", "", "  Hello, wörld");
        splits_everywhere("<thead> is HTML", "", "<thead> is HTML");
        splits_everywhere("<thin", "", "<thin");
        splits_everywhere("", "", "");
    }

    #[test]
    fn only_the_first_close_tag_ends_the_block() {
        splits_everywhere("<think>a < b, ü</think>x</think>", "a < b, ü", "x</think>");
    }

    #[test]
    fn an_empty_block_leaves_only_the_answer() {
        splits_everywhere("<think></think>\n\nAnswer", "", "Answer");
    }

    #[test]
    fn whitespace_inside_the_reasoning_streams_once_more_follows() {
        let mut splitter = ThinkSplitter::default();
        assert_eq!(splitter.push("<think>a").reasoning, "a");
        // Held: it may be the end of the reasoning.
        assert_eq!(splitter.push("\n\n").reasoning, "");
        assert_eq!(splitter.push("b").reasoning, "\n\nb");
        let end = splitter.push(" </think> ok");
        assert_eq!((end.reasoning.as_str(), end.text.as_str()), ("", "ok"));
    }
}
