//! Whether a new memory says nothing an existing one does not (`save_memory`'s near-duplicate
//! check). Cosine similarity alone cannot tell: "the thesis is due May 20, 2027" and "… 2028"
//! are closer (0.99 with all-MiniLM-L6-v2) than most paraphrases. So a pair whose similarity
//! reaches the threshold is also read word by word, and it is a different fact when:
//!
//! - its numbers differ (digits and number words: "7" and "seven" agree, "9:15" and "9:45" not);
//! - the new one leaves out someone the existing one was about ("wife", "she") and brings no
//!   word in its place;
//! - one is negated and the other not ("not", "never", "n't", …, or a word that is the other's
//!   with "un", "dis", "in", "im" or "non" in front: "able" / "unable");
//! - the new one holds content words the existing one lacks (other than misspellings of words
//!   it dropped: edit distance ≤ 2 on words of 5 letters or more), and either it dropped none
//!   (it adds to the fact) or the embedder finds the words it brings, as one phrase, less alike
//!   than `SYNONYM_SIMILARITY` to those it dropped: "son" → "nephew", "mobile app" → "web app"
//!   are new facts; "kid" → "child", "NYC" → "New York City" are not.
//!
//! "she" and "he" count as content words; the user's own pronouns ("I", "my", "they"), and
//! filler ("note", "FYI", "keep in mind") do not. English only.
//! `tests/data/memory-duplicates/` measures it (`colloquy eval-duplicates`).

use std::collections::HashSet;

use super::embed::{EmbedError, Embedder, cosine};

/// How close (cosine) a word the new memory brings must be to one it dropped to count as the
/// same word said otherwise.
pub const SYNONYM_SIMILARITY: f32 = 0.9;

/// Words that carry no fact of their own here: articles, auxiliaries, prepositions, the user
/// named in the first or third person.
const STOP: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "it", "its", "this",
    "that", "these", "those", "there", "here", "i", "me", "my", "mine", "we", "us", "our", "ours",
    "you", "your", "yours", "user", "users", "has", "have", "had", "do", "does", "did", "will",
    "would", "can", "could", "should", "shall", "may", "might", "must", "also", "just", "very",
    "really", "about", "into", "than", "then", "so", "such", "s", "they", "them", "their",
    "theirs", "they're", "i'm", "i've", "i'd", "we're", "what", "where", "who", "which",
];
/// Words that frame a memory without adding to it.
const FILLER: &[&str] = &[
    "note",
    "noted",
    "reference",
    "keep",
    "mind",
    "context",
    "fyi",
    "mentioned",
    "mention",
    "mentions",
    "seems",
    "seem",
    "apparently",
    "detail",
    "remember",
    "worth",
    "noting",
    "said",
    "says",
    "told",
    "info",
    "information",
    "important",
    "btw",
    "memory",
    "reminder",
    "future",
    "conversations",
    "stated",
    "fact",
    "preference",
];
/// Words that negate a statement.
const NEGATIONS: &[&str] = &[
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot", "n't",
];
/// Number words, read as their digits.
const NUMBER_WORDS: &[(&str, &str)] = &[
    ("zero", "0"),
    ("one", "1"),
    ("two", "2"),
    ("three", "3"),
    ("four", "4"),
    ("five", "5"),
    ("six", "6"),
    ("seven", "7"),
    ("eight", "8"),
    ("nine", "9"),
    ("ten", "10"),
    ("eleven", "11"),
    ("twelve", "12"),
    ("first", "1"),
    ("second", "2"),
    ("third", "3"),
    ("fourth", "4"),
    ("fifth", "5"),
    ("once", "1"),
    ("twice", "2"),
    ("dozen", "12"),
];
/// Words naming someone other than the user: a memory that drops one is about someone else
/// ("the user's wife is vegetarian" / "the user is vegetarian").
const PEOPLE: &[&str] = &[
    "she",
    "her",
    "hers",
    "he",
    "him",
    "his",
    "wife",
    "husband",
    "partner",
    "spouse",
    "son",
    "daughter",
    "child",
    "children",
    "kid",
    "kids",
    "mother",
    "mom",
    "mum",
    "father",
    "dad",
    "brother",
    "sister",
    "sibling",
    "parent",
    "parents",
    "grandmother",
    "grandfather",
    "aunt",
    "uncle",
    "cousin",
    "nephew",
    "niece",
    "friend",
    "boss",
    "manager",
    "colleague",
    "coworker",
    "client",
    "neighbor",
    "neighbour",
    "roommate",
    "girlfriend",
    "boyfriend",
    "fiance",
    "fiancee",
    "team",
];
/// Prefixes that turn a word into its opposite.
const NEGATING_PREFIXES: &[&str] = &["un", "dis", "in", "im", "non"];

/// A memory read word by word.
#[derive(Debug, Default)]
struct Reading {
    /// Lowercased words, "n't" split off, apostrophe-s dropped.
    words: Vec<String>,
    numbers: HashSet<String>,
    negated: bool,
}

fn read(text: &str) -> Reading {
    let lower = text.to_lowercase().replace(['’', '‘'], "'");
    let mut words = Vec::new();
    let mut numbers = HashSet::new();
    for raw in lower.split(|c: char| !(c.is_alphanumeric() || matches!(c, '\'' | '.' | ',' | ':')))
    {
        let raw = raw.trim_matches(|c: char| matches!(c, '\'' | '.' | ',' | ':'));
        if raw.is_empty() {
            continue;
        }
        if raw.starts_with(|c: char| c.is_ascii_digit()) {
            // "1,500", "9:15", "3rd", "22.04": the digits and separators, ordinal ending dropped.
            let number: String = raw
                .trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .chars()
                .filter(|c| *c != ',')
                .collect();
            numbers.insert(number);
            continue;
        }
        for piece in raw.split(['.', ',', ':']) {
            let piece = piece.strip_suffix("'s").unwrap_or(piece);
            let (word, negation) = match piece.strip_suffix("n't") {
                Some(stem) => (stem, true),
                None => (piece, false),
            };
            let word = word.trim_matches('\'');
            if let Some((_, digits)) = NUMBER_WORDS.iter().find(|(name, _)| *name == word) {
                numbers.insert((*digits).to_string());
            } else if !word.is_empty() {
                words.push(word.to_string());
            }
            if negation {
                words.push("n't".to_string());
            }
        }
    }
    let negated = words.iter().any(|w| NEGATIONS.contains(&w.as_str()));
    Reading {
        words,
        numbers,
        negated,
    }
}

/// A word's rough stem, so "likes" and "like", "started" and "start" agree.
fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "es", "s"] {
        if word.len() > suffix.len() + 2
            && let Some(stem) = word.strip_suffix(suffix)
        {
            return stem;
        }
    }
    word
}

/// The words that say something (not stop words, filler or negations), each with its stem.
fn content(reading: &Reading) -> Vec<(&str, &str)> {
    reading
        .words
        .iter()
        .map(String::as_str)
        .filter(|w| !STOP.contains(w) && !FILLER.contains(w) && !NEGATIONS.contains(w))
        .map(|w| (w, stem(w)))
        .collect()
}

/// Levenshtein distance, giving up (returning `limit + 1`) past `limit`.
fn edit_distance(a: &str, b: &str, limit: usize) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > limit {
        return limit + 1;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(previous + usize::from(ca != cb));
            previous = here;
        }
    }
    row[b.len()]
}

/// What reading the two memories word by word says, before any word is embedded.
#[derive(Debug, PartialEq, Eq)]
enum Lexical {
    /// A different fact: numbers or negation differ.
    Different,
    /// Content words the new memory brings, each with the words it dropped it might stand for.
    Brings(Vec<String>, Vec<String>),
}

fn compare(existing: &str, new: &str) -> Lexical {
    let (old, new) = (read(existing), read(new));
    if old.numbers != new.numbers || old.negated != new.negated {
        return Lexical::Different;
    }
    let (old_words, new_words) = (content(&old), content(&new));
    let stems = |words: &[(&str, &str)]| -> Vec<String> {
        words.iter().map(|(_, stem)| stem.to_string()).collect()
    };
    let (old_stems, new_stems) = (stems(&old_words), stems(&new_words));
    // A word that is the other's with a negating prefix ("able" / "unable") flips it.
    let flips = |a: &[String], b: &[String]| {
        a.iter().any(|w| {
            NEGATING_PREFIXES.iter().any(|prefix| {
                w.strip_prefix(prefix)
                    .is_some_and(|rest| rest.len() >= 3 && b.iter().any(|o| o == rest))
            })
        })
    };
    if flips(&new_stems, &old_stems) || flips(&old_stems, &new_stems) {
        return Lexical::Different;
    }
    let dropped: Vec<&str> = old_words
        .iter()
        .filter(|(_, stem)| !new_stems.iter().any(|s| s == stem))
        .map(|(word, _)| *word)
        .collect();
    let brought: Vec<String> = new_words
        .iter()
        .filter(|(_, stem)| !old_stems.iter().any(|s| s == stem))
        .map(|(word, _)| *word)
        // A misspelling of a dropped word is that word.
        .filter(|w| {
            w.chars().count() < 5
                || !dropped
                    .iter()
                    .any(|d| d.chars().count() >= 5 && edit_distance(w, d, 2) <= 2)
        })
        .map(str::to_string)
        .collect();
    if brought.is_empty() && dropped.iter().any(|w| PEOPLE.contains(w)) {
        return Lexical::Different;
    }
    let dropped = dropped.into_iter().map(str::to_string).collect();
    Lexical::Brings(brought, dropped)
}

/// What reading the pair word by word found, for reports: "different numbers or negation",
/// or the words the new memory brings and those it dropped.
pub fn explain(existing: &str, new: &str) -> String {
    match compare(existing, new) {
        Lexical::Different => "numbers or negation differ".to_string(),
        Lexical::Brings(brought, dropped) => format!("brings {brought:?}, dropped {dropped:?}"),
    }
}

/// What reading a pair word by word, and embedding the words that differ, found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Evidence {
    /// Numbers or negation differ, or the new memory brings words where it dropped none.
    Different,
    /// The new memory brings no content word.
    Same,
    /// The cosine similarity of the words the new memory brings with those it dropped, each
    /// taken as one phrase ("new york city" / "nyc").
    Reworded(f32),
}

impl Evidence {
    /// Whether it shows the same fact, rewordings counting when their words are at least
    /// `synonym_similarity` alike.
    pub fn same(self, synonym_similarity: f32) -> bool {
        match self {
            Self::Different => false,
            Self::Same => true,
            Self::Reworded(similarity) => similarity >= synonym_similarity,
        }
    }
}

/// Reads `existing` and `new` word by word and embeds the words that differ: see the module's
/// comment.
pub async fn evidence(
    embedder: &dyn Embedder,
    existing: &str,
    new: &str,
) -> Result<Evidence, EmbedError> {
    let (brought, dropped) = match compare(existing, new) {
        Lexical::Different => return Ok(Evidence::Different),
        Lexical::Brings(brought, dropped) => (brought, dropped),
    };
    if brought.is_empty() {
        return Ok(Evidence::Same);
    }
    if dropped.is_empty() {
        return Ok(Evidence::Different);
    }
    let vectors = embedder
        .embed(vec![brought.join(" "), dropped.join(" ")])
        .await?;
    Ok(match vectors.as_slice() {
        [brought, dropped] => Evidence::Reworded(cosine(brought, dropped)),
        _ => Evidence::Different,
    })
}

/// Whether `new` says the same fact as `existing` (their sentence similarity having already
/// reached the threshold), rewordings counting at `SYNONYM_SIMILARITY`.
pub async fn same_fact(
    embedder: &dyn Embedder,
    existing: &str,
    new: &str,
) -> Result<bool, EmbedError> {
    Ok(evidence(embedder, existing, new)
        .await?
        .same(SYNONYM_SIMILARITY))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brings(existing: &str, new: &str) -> Vec<String> {
        match compare(existing, new) {
            Lexical::Brings(brought, _) => brought,
            Lexical::Different => panic!("{existing:?} / {new:?} read as different"),
        }
    }

    #[test]
    fn numbers_and_negation_make_a_different_fact() {
        for (a, b) in [
            (
                "The thesis is due May 20, 2027.",
                "The thesis is due May 20, 2028.",
            ),
            ("Standup is at 9:15.", "Standup is at 9:45."),
            ("User has two cats.", "User has three cats."),
            ("User likes coffee.", "User does not like coffee."),
            ("User wants emojis.", "User doesn't want emojis."),
            (
                "User is able to work on weekends.",
                "User is unable to work on weekends.",
            ),
        ] {
            assert_eq!(compare(a, b), Lexical::Different, "{a} / {b}");
        }
        assert!(brings("User's son Leo is 7.", "Leo, the user's son, is seven.").is_empty());
        assert!(
            brings(
                "User's kid is in 3rd grade.",
                "User's kid is in third grade."
            )
            .is_empty()
        );
    }

    #[test]
    fn reordering_filler_and_the_users_person_bring_nothing() {
        assert!(
            brings(
                "Project deadline is March 3.",
                "March 3 is the project deadline."
            )
            .is_empty()
        );
        assert!(
            brings(
                "User prefers metric units.",
                "Note: the user prefers metric units."
            )
            .is_empty()
        );
        assert!(
            brings(
                "My favorite language is Rust.",
                "The user's favorite language is Rust."
            )
            .is_empty()
        );
        assert!(
            brings(
                "User is learning the violin.",
                "User is learnign the violine."
            )
            .is_empty()
        );
        assert_eq!(
            brings(
                "User's son has an allergy.",
                "User's nephew has an allergy."
            ),
            ["nephew"]
        );
        assert_eq!(
            brings("Pronouns are he/him.", "Pronouns are she/her."),
            ["she", "her"]
        );
        assert_eq!(
            compare("The user's wife is vegetarian.", "The user is vegetarian."),
            Lexical::Different
        );
    }

    #[test]
    fn edit_distance_counts_and_gives_up_early() {
        assert_eq!(edit_distance("learnign", "learning", 2), 2);
        assert_eq!(edit_distance("kitten", "sitting", 3), 3);
        assert_eq!(edit_distance("a", "abcdef", 2), 3);
    }

    #[tokio::test]
    async fn a_word_brought_must_be_close_to_one_dropped() {
        let hash = crate::retrieval::embed::hash::HashEmbedder::default();
        assert!(
            same_fact(&hash, "Deadline is March 3.", "March 3 is the deadline.")
                .await
                .unwrap()
        );
        assert!(
            !same_fact(
                &hash,
                "User's son has an allergy.",
                "User's nephew has an allergy."
            )
            .await
            .unwrap()
        );
        assert!(
            !same_fact(
                &hash,
                "User is allergic to cats.",
                "User's daughter is allergic to cats."
            )
            .await
            .unwrap()
        );
    }
}
