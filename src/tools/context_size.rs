//! `search_context_size` (`low`, `medium`, `high`; docs/spec.md#search_context_size): how much page
//! text a web search brings back. `medium` is the configured budget
//! (`tools.web_search_fetch_budget_chars`, 12,000 characters by default); `low` is a third of it
//! and `high` twice it (4,000 and 24,000 by default). Only web_search's auto-fetched pages change:
//! fetch_url reads what the model asks for, and snippets are short anyway.

use serde::{Deserialize, Serialize};

/// How much context a request wants its searches to bring back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchContextSize {
    Low,
    #[default]
    Medium,
    High,
}

impl SearchContextSize {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }

    /// The character budget of a search's fetched pages at this size, `medium` being the
    /// configured one. A third and twice: three steps far enough apart for the choice to
    /// matter, and `high` still well inside a small model's context (24,000 characters are
    /// about 6,000 tokens).
    pub fn budget(self, medium: usize) -> usize {
        match self {
            Self::Low => medium / 3,
            Self::Medium => medium,
            Self::High => medium.saturating_mul(2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sizes_scale_the_configured_budget_by_a_third_and_twice() {
        assert_eq!(SearchContextSize::Low.budget(12_000), 4_000);
        assert_eq!(SearchContextSize::Medium.budget(12_000), 12_000);
        assert_eq!(SearchContextSize::High.budget(12_000), 24_000);
        assert_eq!(SearchContextSize::default(), SearchContextSize::Medium);
    }

    #[test]
    fn sizes_are_read_by_their_seed_names_and_nothing_else() {
        let read = |text: &str| serde_json::from_value::<SearchContextSize>(text.into());
        assert_eq!(read("low").unwrap(), SearchContextSize::Low);
        assert_eq!(read("high").unwrap(), SearchContextSize::High);
        assert!(read("huge").is_err());
        assert!(read("HIGH").is_err());
    }
}
