//! Screenshots: PNGs a browser session took, kept in the files' `Storage` at
//! `screenshots/<chat>/<id>.png` (the data directory, or an object store), at most
//! `browser.max_screenshot_bytes` each, read back for `GET /chat/api/{chat}/screenshots/{id}`
//! (whose owner check is the chat's) and removed when their chat is gone (the sweep), as the
//! chat's other files are.

use entities::ids::ChatId;
use sea_orm::DatabaseConnection;

use super::BrowserError;
use crate::chat::attachments::ImageType;
use crate::storage::Storage;

/// The key prefix of every screenshot.
const ROOT: &str = "screenshots";

/// A screenshot's id: `shot_` and a UUID without hyphens.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct ScreenshotId(String);

impl ScreenshotId {
    pub fn generate() -> Self {
        Self(format!("shot_{}", uuid::Uuid::new_v4().simple()))
    }

    /// Only the shape of one, so a path never names anything else.
    pub fn parse(raw: &str) -> Option<Self> {
        let hex = raw.strip_prefix("shot_")?;
        (hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| Self(raw.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ScreenshotId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a model request carries in place of a screenshot shown to the model until it is sent
/// (`screenshot:shot_…`), as `attachment:` stands for a user's image: the run reads the bytes
/// just before each model call.
pub const REFERENCE_SCHEME: &str = "screenshot:";

/// The screenshot a `screenshot:` URL names, if it is one.
pub fn referenced(url: &str) -> Option<ScreenshotId> {
    url.strip_prefix(REFERENCE_SCHEME)
        .and_then(ScreenshotId::parse)
}

/// The stored screenshots.
#[derive(Clone)]
pub struct Screenshots {
    /// Files at `screenshots/<chat>/<id>.png`.
    storage: Storage,
    max_bytes: usize,
}

impl Screenshots {
    pub fn new(storage: Storage, max_bytes: usize) -> Self {
        Self { storage, max_bytes }
    }

    fn key(chat: &ChatId, id: &ScreenshotId) -> String {
        format!("{ROOT}/{chat}/{id}.png")
    }

    /// The URL the chat API serves a screenshot at.
    pub fn url(chat: &ChatId, id: &ScreenshotId) -> String {
        format!("/chat/api/{chat}/screenshots/{id}")
    }

    /// Keeps `png` as a screenshot of `chat`: refused when it is not a PNG or too large.
    pub async fn store(&self, chat: &ChatId, png: Vec<u8>) -> Result<ScreenshotId, BrowserError> {
        if png.len() > self.max_bytes {
            return Err(BrowserError::ScreenshotTooLarge {
                size: png.len(),
                limit: self.max_bytes,
            });
        }
        if ImageType::sniff(&png) != Some(ImageType::Png) {
            return Err(BrowserError::Failed(
                "Chromium's screenshot is not a PNG".into(),
            ));
        }
        let id = ScreenshotId::generate();
        self.storage
            .put(&Self::key(chat, &id), png.into())
            .await
            .map_err(|err| BrowserError::Failed(format!("cannot store the screenshot: {err}")))?;
        Ok(id)
    }

    /// A screenshot's bytes, if `chat` has it.
    pub async fn read(&self, chat: &ChatId, id: &ScreenshotId) -> std::io::Result<Vec<u8>> {
        self.storage.get(&Self::key(chat, id)).await
    }

    /// Removes a deleted chat's screenshots.
    pub async fn forget(&self, chat: &ChatId) {
        if let Err(err) = self.storage.delete_all(&format!("{ROOT}/{chat}")).await {
            tracing::warn!(%chat, %err, "could not remove a deleted chat's screenshots");
        }
    }

    /// Removes the screenshots of chats that no longer exist (deleted, or swept past their
    /// retention).
    pub async fn sweep(&self, db: &DatabaseConnection) {
        let Ok(names) = self.storage.children(ROOT).await else {
            return;
        };
        let chats: Vec<ChatId> = names
            .iter()
            .map(|name| ChatId::from_string(name.as_str()))
            .collect();
        let Ok(existing) = super::pool::existing_chats(db, chats.clone()).await else {
            return;
        };
        for chat in chats.iter().filter(|c| !existing.contains(c)) {
            if let Err(err) = self.storage.delete_all(&format!("{ROOT}/{chat}")).await {
                tracing::warn!(%chat, %err, "could not remove a gone chat's screenshots");
            }
        }
    }
}

/// Screenshots are the images browser_action's results refer to (`Tool::images`).
impl crate::tools::images::ImageSource for Screenshots {
    fn scheme(&self) -> &'static str {
        REFERENCE_SCHEME
    }

    fn what(&self) -> &'static str {
        "a screenshot"
    }

    fn read(
        &self,
        chat: &ChatId,
        url: &str,
    ) -> futures_util::future::BoxFuture<'static, std::io::Result<Vec<u8>>> {
        let (store, chat, id) = (self.clone(), chat.clone(), referenced(url));
        Box::pin(async move {
            match id {
                Some(id) => store.read(&chat, &id).await,
                None => Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a screenshot reference",
                )),
            }
        })
    }
}
