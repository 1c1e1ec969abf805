//! The `[attachments]` section: images attached to user messages (the chat API's uploads, and
//! `image_url` / `input_image` parts of `/v1` requests in a stored chat).

use serde::Deserialize;

/// Limits on the images a message may carry.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct AttachmentsConfig {
    /// Largest image in bytes. 10 MiB holds any photo a phone takes (OpenAI's own limit is
    /// 20 MB per image, but its base64 in a `/v1` body counts a third more against
    /// `http.max_v1_body_bytes`), and every image is read again, as base64, into each model
    /// request that replays it.
    pub max_image_bytes: usize,
    /// Most images one message may carry: vision models take a handful per turn (llama.cpp
    /// and vLLM limit images per prompt), and each costs a fixed slice of the context.
    pub max_images_per_message: usize,
    /// Most images one `/v1` request may carry in all: it may replay a whole conversation,
    /// and each image in it is decoded or fetched, and stored, before the run starts.
    pub max_images_per_request: usize,
    /// Seconds fetching one `http(s)` image URL of a `/v1` request may take (through the
    /// SSRF-guarded fetcher), longer than a page fetch because an image is larger than text.
    pub fetch_timeout_secs: u64,
    /// Hours an uploaded image nobody sent with a message is kept (a composer closed before
    /// sending) before it is swept.
    pub unsent_retention_hours: u64,
    /// Most images uploaded to one chat and not yet sent with a message: a composer holds at
    /// most `max_images_per_message`, so a few composers' worth is room enough, and a client
    /// that uploads without sending cannot fill the disk before the sweep.
    pub max_unsent_per_chat: usize,
}

impl Default for AttachmentsConfig {
    fn default() -> Self {
        Self {
            max_image_bytes: 10 * 1024 * 1024,
            max_images_per_message: 8,
            max_images_per_request: 32,
            fetch_timeout_secs: 20,
            unsent_retention_hours: 24,
            max_unsent_per_chat: 32,
        }
    }
}
