//! Images a tool's result refers to, generically: a tool names them (`Tool::images`) as
//! references under a scheme of its own (browser_action's `screenshot:shot_…`), and an
//! `ImageSource` for that scheme reads their bytes. The loop shows a model that reads images
//! what a round's tools returned, without knowing which tool returned it.

use entities::ids::ChatId;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

/// An image a tool's result refers to: a reference (`scheme:id`) that an `ImageSource` reads
/// just before each model call, so the loop's own messages stay small.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    pub url: String,
}

impl ImageRef {
    /// The model's content part for it, holding the reference until it is read.
    pub fn part(&self) -> Value {
        json!({"type": "image_url", "image_url": {"url": self.url}})
    }
}

/// Where the images under one reference scheme are read from (the browser's screenshot store).
pub trait ImageSource: Send + Sync + 'static {
    /// The scheme its references start with (`screenshot:`).
    fn scheme(&self) -> &'static str;
    /// What one of its images is, for the note a model that does not read images is given in
    /// its place (`a screenshot`).
    fn what(&self) -> &'static str;
    /// The bytes of the image `url` (a reference under `scheme`) names, if `chat` has it.
    fn read(&self, chat: &ChatId, url: &str) -> BoxFuture<'static, std::io::Result<Vec<u8>>>;
}
