//! Screenshots: PNGs a browser session took, kept in the chat's storage
//! (`<data_dir>/screenshots/<chat>/<id>.png`, written to a temporary file and renamed), at most
//! `browser.max_screenshot_bytes` each, read back for `GET /chat/api/{chat}/screenshots/{id}`
//! (whose owner check is the chat's) and removed when their chat is gone (the sweep), as the
//! chat's other files are.

use std::path::PathBuf;

use entities::ids::ChatId;
use sea_orm::DatabaseConnection;

use super::BrowserError;
use crate::chat::attachments::ImageType;

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
    /// `<data_dir>/screenshots`.
    root: PathBuf,
    max_bytes: usize,
}

impl Screenshots {
    pub fn new(data_dir: &std::path::Path, max_bytes: usize) -> Self {
        Self {
            root: data_dir.join("screenshots"),
            max_bytes,
        }
    }

    fn path(&self, chat: &ChatId, id: &ScreenshotId) -> PathBuf {
        self.root.join(chat.as_str()).join(format!("{id}.png"))
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
        let target = self.path(chat, &id);
        let dir = self.root.join(chat.as_str());
        let temporary = dir.join(format!(".{id}.partial"));
        let write = async {
            tokio::fs::create_dir_all(&dir).await?;
            tokio::fs::write(&temporary, &png).await?;
            tokio::fs::rename(&temporary, &target).await
        };
        write
            .await
            .map_err(|err| BrowserError::Failed(format!("cannot store the screenshot: {err}")))?;
        Ok(id)
    }

    /// A screenshot's bytes, if `chat` has it.
    pub async fn read(&self, chat: &ChatId, id: &ScreenshotId) -> std::io::Result<Vec<u8>> {
        tokio::fs::read(self.path(chat, id)).await
    }

    /// Removes a deleted chat's screenshots.
    pub async fn forget(&self, chat: &ChatId) {
        let dir = self.root.join(chat.as_str());
        if let Err(err) = tokio::fs::remove_dir_all(&dir).await
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %dir.display(), %err, "could not remove a deleted chat's screenshots");
        }
    }

    /// Removes the screenshots of chats that no longer exist (deleted, or swept past their
    /// retention).
    pub async fn sweep(&self, db: &DatabaseConnection) {
        let Ok(mut entries) = tokio::fs::read_dir(&self.root).await else {
            return;
        };
        let mut chats = Vec::new();
        while let Ok(Some(entry)) = entries.next_entry().await {
            if let Some(name) = entry.file_name().to_str() {
                chats.push(ChatId::from_string(name));
            }
        }
        let Ok(existing) = super::pool::existing_chats(db, chats.clone()).await else {
            return;
        };
        for chat in chats.iter().filter(|c| !existing.contains(c)) {
            let dir = self.root.join(chat.as_str());
            if let Err(err) = tokio::fs::remove_dir_all(&dir).await {
                tracing::warn!(dir = %dir.display(), %err, "could not remove a gone chat's screenshots");
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
