//! `[[llm.providers]]`: the model servers Colloquy routes to by model name. Each is an
//! OpenAI-compatible server with its own URL, key, models (declared, or discovered from its
//! `/v1/models`), context windows and timeouts; what a provider leaves unset comes from `[llm]`.
//! Without any, the `[llm]` section itself is the one provider (`LlmConfig::providers_or_llm`).

use std::collections::HashMap;

use secrecy::SecretString;
use serde::Deserialize;

use super::LlmConfig;
use super::lenient;

/// Most providers one server may declare: each is asked for its models and health.
pub const MAX_PROVIDERS: usize = 32;
/// Longest provider id: it prefixes colliding model ids (`provider/model`).
pub const MAX_PROVIDER_ID_CHARS: usize = 40;
/// The provider id the `[llm]` section gets when no `[[llm.providers]]` are declared.
pub const LLM_SECTION_PROVIDER: &str = "default";

/// One model server.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Its name in model lists, health and prefixed ids: a slug of lowercase letters, digits,
    /// `-` and `_`.
    pub id: String,
    /// Base URL of its OpenAI-compatible API, ending in `/v1`.
    pub base_url: String,
    /// Bearer token, if the server needs one.
    #[serde(default, deserialize_with = "lenient::secret")]
    pub api_key: Option<SecretString>,
    /// The models it serves; empty: whatever its `/v1/models` lists.
    #[serde(default)]
    pub models: Vec<String>,
    /// The context window of all its models, when set; overrides discovery.
    pub context_length: Option<u32>,
    /// Context windows by model name.
    #[serde(default)]
    pub context_lengths: HashMap<String, u32>,
    /// Seconds to connect; `[llm]`'s when unset.
    pub connect_timeout_secs: Option<u64>,
    /// Seconds an answer's first byte may take for a short prompt; `[llm]`'s when unset.
    pub first_byte_timeout_secs: Option<u64>,
    /// Seconds between an answer's chunks; `[llm]`'s when unset.
    pub read_timeout_secs: Option<u64>,
}

impl ProviderConfig {
    /// This provider as a whole `[llm]` section: its own settings over `defaults`.
    pub fn as_llm(&self, defaults: &LlmConfig) -> LlmConfig {
        let mut llm = defaults.clone();
        llm.base_url = self.base_url.clone();
        llm.api_key = self.api_key.clone();
        llm.context_length = self.context_length;
        llm.context_lengths = self.context_lengths.clone();
        llm.connect_timeout_secs = self
            .connect_timeout_secs
            .unwrap_or(llm.connect_timeout_secs);
        llm.first_byte_timeout_secs = self
            .first_byte_timeout_secs
            .unwrap_or(llm.first_byte_timeout_secs);
        llm.read_timeout_secs = self.read_timeout_secs.unwrap_or(llm.read_timeout_secs);
        llm.providers = Vec::new();
        llm
    }
}

impl LlmConfig {
    /// The declared providers, or the `[llm]` section as the one provider (its models
    /// discovered, so any model name goes to it, as before providers existed).
    pub fn providers_or_llm(&self) -> Vec<ProviderConfig> {
        if !self.providers.is_empty() {
            return self.providers.clone();
        }
        vec![ProviderConfig {
            id: LLM_SECTION_PROVIDER.into(),
            base_url: self.base_url.clone(),
            api_key: self.api_key.clone(),
            models: Vec::new(),
            context_length: self.context_length,
            context_lengths: self.context_lengths.clone(),
            connect_timeout_secs: None,
            first_byte_timeout_secs: None,
            read_timeout_secs: None,
        }]
    }

    /// When every provider declares its models: why `model` (set by `setting`) names none of
    /// them, if it does not. `None` too when some provider discovers its models (only the
    /// running server can tell; start-up warns then) or none is declared (any name goes).
    pub fn undeclared_model(&self, setting: &str, model: &str) -> Option<String> {
        if self.providers.is_empty() || self.providers.iter().any(|p| p.models.is_empty()) {
            return None;
        }
        let declared =
            |provider: &ProviderConfig, name: &str| provider.models.iter().any(|m| m == name);
        let served = self.providers.iter().any(|p| declared(p, model))
            || model.split_once('/').is_some_and(|(prefix, name)| {
                self.providers
                    .iter()
                    .any(|p| p.id == prefix && declared(p, name))
            });
        if served {
            return None;
        }
        let available: Vec<&str> = self
            .providers
            .iter()
            .flat_map(|p| p.models.iter().map(String::as_str))
            .collect();
        Some(format!(
            "{setting} {model:?} is not a model any of llm.providers declares (available: {})",
            available.join(", ")
        ))
    }

    /// What is wrong with the providers, if anything.
    pub(super) fn providers_problem(&self) -> Option<String> {
        if self.providers.len() > MAX_PROVIDERS {
            return Some(format!("llm.providers: at most {MAX_PROVIDERS}"));
        }
        let mut seen = std::collections::HashSet::new();
        for provider in &self.providers {
            let slug = !provider.id.is_empty()
                && provider.id.chars().count() <= MAX_PROVIDER_ID_CHARS
                && provider
                    .id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
            if !slug {
                return Some(format!(
                    "llm.providers: id {:?} must be 1 to {MAX_PROVIDER_ID_CHARS} lowercase \
                     letters, digits, - or _",
                    provider.id
                ));
            }
            if !seen.insert(provider.id.as_str()) {
                return Some(format!(
                    "llm.providers: id {:?} is declared twice",
                    provider.id
                ));
            }
            if url::Url::parse(&provider.base_url).is_err() {
                return Some(format!(
                    "llm.providers: {}'s base_url must be a URL",
                    provider.id
                ));
            }
            if provider.models.iter().any(|m| m.trim().is_empty()) {
                return Some(format!(
                    "llm.providers: {} names an empty model",
                    provider.id
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use secrecy::ExposeSecret;

    #[test]
    fn providers_are_read_from_the_file_over_the_llm_sections_defaults() {
        let config = Config::from_toml_str(
            "[llm]\nmodel = \"small\"\nread_timeout_secs = 7\n\
             [[llm.providers]]\nid = \"local\"\nbase_url = \"http://127.0.0.1:11434/v1\"\n\
             models = [\"small\"]\n\
             [[llm.providers]]\nid = \"big\"\nbase_url = \"http://10.0.0.2:8000/v1\"\n\
             api_key = \"k\"\nread_timeout_secs = 300\n",
        )
        .unwrap();
        let providers = config.llm.providers_or_llm();
        assert_eq!(providers.len(), 2);
        assert_eq!(providers[0].models, ["small"]);
        assert!(providers[1].models.is_empty(), "discovered");
        let big = providers[1].as_llm(&config.llm);
        assert_eq!(big.read_timeout_secs, 300);
        assert_eq!(big.api_key.as_ref().unwrap().expose_secret(), "k");
        let local = providers[0].as_llm(&config.llm);
        assert_eq!(
            local.read_timeout_secs, 7,
            "[llm]'s when the provider sets none"
        );
        assert!(local.api_key.is_none());
    }

    #[test]
    fn without_providers_the_llm_section_is_the_one() {
        let config = Config::default();
        let providers = config.llm.providers_or_llm();
        assert_eq!(providers.len(), 1);
        assert_eq!(providers[0].id, super::LLM_SECTION_PROVIDER);
        assert_eq!(providers[0].base_url, config.llm.base_url);
    }

    #[test]
    fn a_deep_think_role_naming_no_declared_model_is_refused_at_start_up() {
        let providers = "[[llm.providers]]\nid = \"a\"\nbase_url = \"http://x/v1\"\n\
                         models = [\"alpha\"]\n\
                         [[llm.providers]]\nid = \"b\"\nbase_url = \"http://y/v1\"\n\
                         models = [\"beta\"]\n";
        for role in ["planner_model", "subtask_model", "synthesis_model"] {
            let err =
                Config::from_toml_str(&format!("{providers}[deep_think]\n{role} = \"gamma\"\n"))
                    .unwrap_err()
                    .to_string();
            assert!(
                err.contains(&format!("deep_think.{role}"))
                    && err.contains("gamma")
                    && err.contains("alpha, beta"),
                "{err}"
            );
            for known in ["beta", "b/beta"] {
                Config::from_toml_str(&format!("{providers}[deep_think]\n{role} = \"{known}\"\n"))
                    .unwrap();
            }
        }
        // A provider that discovers its models: only the running server can tell (a warning).
        Config::from_toml_str(
            "[[llm.providers]]\nid = \"a\"\nbase_url = \"http://x/v1\"\n\
             [deep_think]\nsubtask_model = \"gamma\"\n",
        )
        .unwrap();
    }

    #[test]
    fn bad_providers_are_refused_with_the_reason() {
        for (toml, says) in [
            (
                "[[llm.providers]]\nid = \"Big One\"\nbase_url = \"http://x/v1\"\n",
                "lowercase",
            ),
            (
                "[[llm.providers]]\nid = \"a\"\nbase_url = \"http://x/v1\"\n\
                 [[llm.providers]]\nid = \"a\"\nbase_url = \"http://y/v1\"\n",
                "declared twice",
            ),
            (
                "[[llm.providers]]\nid = \"a\"\nbase_url = \"not a url\"\n",
                "must be a URL",
            ),
            (
                "[[llm.providers]]\nid = \"a\"\nbase_url = \"http://x/v1\"\nmodels = [\" \"]\n",
                "empty model",
            ),
        ] {
            let err = Config::from_toml_str(toml).unwrap_err().to_string();
            assert!(err.contains(says), "{toml}: {err}");
        }
    }
}
