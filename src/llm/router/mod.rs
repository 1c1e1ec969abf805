//! `LlmClient`: the model servers (`[[llm.providers]]`, or the `[llm]` section as the one
//! provider) behind one client that routes each request by its model name. A model is served
//! by the first provider that declares it or lists it in its `/v1/models`; `provider/model`
//! names one provider where two serve the same name. A lone provider that declares no models
//! takes every name (the server decides, as before providers existed). An unknown model is
//! `LlmError::UnknownModel`, naming the ones there are. Embeddings go to the `[llm]` section's
//! server whatever the providers are.
//!
//! Here: routing and delegation; `listing` keeps each provider's model list and health.

mod listing;

use std::time::Duration;

use super::LlmError;
use super::client::{ChatStream, Upstream};
use super::wire::{ChatCompletion, ChatRequest, Model, ModelList};
use crate::config::LlmConfig;
use listing::Listing;

pub use listing::ProviderStatus;

/// How old a provider's model list may be when routing a name it does not hold: a model
/// loaded on a server since then is found within this long.
const DISCOVERY_MAX_AGE: Duration = Duration::from_secs(60);
/// How old the lists may be for `GET /v1/models` and the picker.
const CATALOGUE_MAX_AGE: Duration = Duration::from_secs(5);
/// How old a provider's health may be in `/health/ready` (probed often by load balancers).
const HEALTH_MAX_AGE: Duration = Duration::from_secs(10);
/// Models remembered as not reading images: each was learnt from a real refusal, and names
/// come from requests, so the set is bounded.
const MAX_TEXT_ONLY_MODELS: usize = 1_024;

/// One model server and what it serves.
struct Provider {
    id: String,
    upstream: Upstream,
    /// The models the configuration names; empty: whatever the server lists.
    declared: Vec<String>,
    listing: Listing,
}

impl Provider {
    /// Whether this provider serves `model`, as far as is known now.
    fn serves(&self, model: &str) -> bool {
        if self.declared.is_empty() {
            self.listing.models().iter().any(|m| m == model)
        } else {
            self.declared.iter().any(|m| m == model)
        }
    }

    /// The names it serves, as far as is known now.
    fn models(&self) -> Vec<String> {
        if self.declared.is_empty() {
            self.listing.models()
        } else {
            self.declared.clone()
        }
    }
}

/// A model as the API lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CatalogueEntry {
    /// The name requests use: the server's own, or `provider/model` where two collide.
    pub id: String,
    pub provider: String,
    /// Whether its provider answered its last check.
    pub available: bool,
}

struct Router {
    providers: Vec<Provider>,
    default_model: String,
    /// The `[llm]` section's server, for `/embeddings`.
    embeddings: Upstream,
    /// Whether the configuration declared providers (else the `[llm]` section is the one).
    declared: bool,
    /// The models whose servers said they cannot read images (learnt from their errors).
    text_only: std::sync::Mutex<std::collections::HashSet<String>>,
}

#[derive(Clone)]
pub struct LlmClient {
    router: std::sync::Arc<Router>,
}

impl LlmClient {
    pub fn new(config: &LlmConfig) -> Result<Self, LlmError> {
        let providers = config
            .providers_or_llm()
            .into_iter()
            .map(|provider| {
                Ok(Provider {
                    upstream: Upstream::new(&provider.as_llm(config))?,
                    id: provider.id,
                    declared: provider.models,
                    listing: Listing::default(),
                })
            })
            .collect::<Result<Vec<_>, LlmError>>()?;
        let default_model = default_model(config, &providers);
        Ok(Self {
            router: std::sync::Arc::new(Router {
                providers,
                default_model,
                embeddings: Upstream::new(config)?,
                declared: !config.providers.is_empty(),
                text_only: Default::default(),
            }),
        })
    }

    /// The model used when a request names none.
    pub fn default_model(&self) -> &str {
        &self.router.default_model
    }

    /// The provider serving `model` and the name it knows the model by, from what is known
    /// now.
    fn route(&self, model: &str) -> Option<(&Provider, String)> {
        let providers = &self.router.providers;
        if let [only] = providers.as_slice()
            && only.declared.is_empty()
        {
            return Some((only, model.to_string()));
        }
        if let Some(provider) = providers.iter().find(|p| p.serves(model)) {
            return Some((provider, model.to_string()));
        }
        let (prefix, rest) = model.split_once('/')?;
        providers
            .iter()
            .find(|p| p.id == prefix && !rest.is_empty())
            .map(|p| (p, rest.to_string()))
    }

    /// `route`, after asking the providers that discover their models again when the name is
    /// not known; `UnknownModel` when none serves it.
    async fn route_fresh(&self, model: &str) -> Result<(&Provider, String), LlmError> {
        if let Some(found) = self.route(model) {
            return Ok(found);
        }
        self.refresh(DISCOVERY_MAX_AGE).await;
        if let Some(found) = self.route(model) {
            return Ok(found);
        }
        Err(LlmError::UnknownModel {
            model: model.to_string(),
            available: self.known().into_iter().map(|e| e.id).collect(),
        })
    }

    /// Checks that some provider serves `model` (`UnknownModel` otherwise).
    pub async fn check_model(&self, model: &str) -> Result<(), LlmError> {
        self.route_fresh(model).await.map(drop)
    }

    /// Asks every provider whose list or health is older than `max_age`, all at once.
    async fn refresh(&self, max_age: Duration) {
        let checks = self
            .router
            .providers
            .iter()
            .map(|p| p.listing.refresh(&p.upstream, max_age));
        futures_util::future::join_all(checks).await;
    }

    /// Every model known now, colliding names prefixed with their provider.
    fn known(&self) -> Vec<CatalogueEntry> {
        let per_provider: Vec<(&Provider, Vec<String>)> = self
            .router
            .providers
            .iter()
            .map(|p| (p, p.models()))
            .collect();
        let mut counts = std::collections::HashMap::<&str, usize>::new();
        for (_, models) in &per_provider {
            for model in models {
                *counts.entry(model.as_str()).or_default() += 1;
            }
        }
        per_provider
            .iter()
            .flat_map(|(provider, models)| {
                models.iter().map(|model| CatalogueEntry {
                    id: if counts.get(model.as_str()).copied().unwrap_or(0) > 1 {
                        format!("{}/{model}", provider.id)
                    } else {
                        model.clone()
                    },
                    provider: provider.id.clone(),
                    available: provider.listing.reachable(),
                })
            })
            .collect()
    }

    /// Every provider's models, fresh within a few seconds, with whether each is reachable.
    pub async fn catalogue(&self) -> Vec<CatalogueEntry> {
        self.refresh(CATALOGUE_MAX_AGE).await;
        self.known()
    }

    /// Each provider's health, fresh within a few seconds.
    pub async fn statuses(&self) -> Vec<ProviderStatus> {
        self.refresh(HEALTH_MAX_AGE).await;
        self.router
            .providers
            .iter()
            .map(|p| p.listing.status(&p.id, p.models().len()))
            .collect()
    }

    /// `GET /v1/models`: the `[llm]` section's server's list as it gives it; with providers,
    /// every provider's models (`owned_by`: the provider), an error only when none answers.
    pub async fn models(&self) -> Result<ModelList, LlmError> {
        if !self.router.declared
            && let [only] = self.router.providers.as_slice()
        {
            return only.upstream.models().await;
        }
        let catalogue = self.catalogue().await;
        let mut failures = self.router.providers.iter().map(|p| p.listing.error());
        if let Some(Some(first)) = failures.next()
            && failures.all(|f| f.is_some())
        {
            return Err(first);
        }
        Ok(ModelList {
            object: "list".into(),
            data: catalogue
                .into_iter()
                .map(|entry| Model {
                    id: entry.id,
                    object: "model".into(),
                    created: 0,
                    owned_by: entry.provider,
                })
                .collect(),
        })
    }

    /// One non-streaming completion, from the provider serving its model.
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatCompletion, LlmError> {
        let (provider, name) = self.route_fresh(&request.model).await?;
        if name == request.model {
            return provider.upstream.chat(request).await;
        }
        let mut renamed = request.clone();
        renamed.model = name;
        provider.upstream.chat(&renamed).await
    }

    /// A streaming completion, from the provider serving its model.
    pub async fn chat_stream(&self, request: &ChatRequest) -> Result<ChatStream, LlmError> {
        let (provider, name) = self.route_fresh(&request.model).await?;
        if name == request.model {
            return provider.upstream.chat_stream(request).await;
        }
        let mut renamed = request.clone();
        renamed.model = name;
        provider.upstream.chat_stream(&renamed).await
    }

    /// The context window of `model`, if configured or its server says it.
    pub async fn context_length(&self, model: &str) -> Option<u32> {
        let (provider, name) = self.route_fresh(model).await.ok()?;
        provider.upstream.context_length(&name).await
    }

    /// The context window of `model` if it is already known, without asking its server.
    pub fn known_context_length(&self, model: &str) -> Option<u32> {
        let (provider, name) = self.route(model)?;
        provider.upstream.known_context_length(&name)
    }

    /// Whether `model`'s server has said it cannot read images (a model that takes them, or
    /// one not yet asked, has not).
    pub fn refuses_images(&self, model: &str) -> bool {
        let text_only = self.router.text_only.lock();
        text_only
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(model)
    }

    /// Remembers that `model`'s server refused a request's images.
    pub fn learn_refuses_images(&self, model: &str) {
        let mut text_only = self
            .router
            .text_only
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // A full set starts again: each model it held refuses once more.
        if text_only.len() >= MAX_TEXT_ONLY_MODELS {
            text_only.clear();
        }
        text_only.insert(model.to_string());
    }

    /// Remembers a window an overflow error revealed.
    pub fn learn_context_length(&self, model: &str, size: u32) {
        if let Some((provider, name)) = self.route(model) {
            provider.upstream.learn_context_length(&name, size);
        }
    }

    /// The model named in `/embeddings` requests.
    pub fn embedding_model(&self) -> &str {
        self.router.embeddings.embedding_model()
    }

    /// Embeds `inputs` with the configured embedding model, in input order.
    pub async fn embeddings(&self, inputs: &[String]) -> Result<Vec<Vec<f32>>, LlmError> {
        self.router.embeddings.embeddings(inputs).await
    }
}

/// `llm.model` when a provider declares it (or none declares any); else the first model the
/// first provider declares.
fn default_model(config: &LlmConfig, providers: &[Provider]) -> String {
    let declared: Vec<&String> = providers.iter().flat_map(|p| &p.declared).collect();
    if declared.is_empty() || declared.iter().any(|m| **m == config.model) {
        return config.model.clone();
    }
    providers
        .iter()
        .find_map(|p| p.declared.first())
        .cloned()
        .unwrap_or_else(|| config.model.clone())
}

#[cfg(test)]
mod tests;
