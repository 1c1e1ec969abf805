//! The `[images]` section: the server that makes pictures, one speaking OpenAI's
//! `/v1/images/generations` (LocalAI, a stable-diffusion server with an OpenAI front, OpenAI).
//! No section, no images: `/v1/images/generations` answers `images_not_configured`.

use secrecy::SecretString;
use serde::Deserialize;

/// Where pictures are made, and the limits on asking for them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImagesConfig {
    /// The provider's OpenAI-style base, e.g. `http://127.0.0.1:8080/v1`: requests go to
    /// `{base_url}/images/generations`.
    pub base_url: String,
    /// Sent as `Authorization: Bearer …` to the provider (never the caller's own key).
    #[serde(default)]
    pub api_key: Option<SecretString>,
    /// The model asked for when a request names none.
    pub model: String,
    /// How long one generation may take, streamed or not.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// Longest prompt accepted, in characters (OpenAI's own limit for its image models).
    #[serde(default = "default_max_prompt_chars")]
    pub max_prompt_chars: usize,
    /// Most images one request may ask for (`n`).
    #[serde(default = "default_max_images")]
    pub max_images: u32,
    /// Largest answer passed back, in bytes: a few full-size PNGs in base64.
    #[serde(default = "default_max_response_bytes")]
    pub max_response_bytes: usize,
}

fn default_timeout_secs() -> u64 {
    180
}

fn default_max_prompt_chars() -> usize {
    32_000
}

fn default_max_images() -> u32 {
    4
}

fn default_max_response_bytes() -> usize {
    64 * 1024 * 1024
}
