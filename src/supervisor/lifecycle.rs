//! A chat's end. `forget_chat` is the only code that deletes a chat, whichever surface asks (the
//! chat API, a `/v1` conversation, a vector store or knowledge base, an admin deleting a user, the
//! retention sweep (`sweep_api_chats`), a refused request's fresh chat): its live runs are cancelled, its session
//! stopped (its lease let go), the row deleted (messages, runs, artifacts, memories, asks and
//! document records go with it through foreign keys), and what lives beside the database let go:
//! the document index and files, the attachments, the browser sessions and their screenshots, its
//! messages in the chat search index (an account's whole index with its last chat). A
//! new per-chat resource is added here, once. And an account switched off: `stop_runs_of`
//! cancels every live run it owns, whatever started it (a request, a workflow, a schedule).

use entities::ids::{ChatId, UserId};
use sea_orm::DbErr;

use super::launch::Launcher;
use crate::chat::persistence::ChatStoreError;

impl Launcher {
    /// Deletes `owner`'s chat and everything of it; another user's chat is `NotFound`.
    pub async fn forget_chat(
        &self,
        owner: &UserId,
        chat_id: &ChatId,
    ) -> Result<(), ChatStoreError> {
        self.chats.get_owned(owner, chat_id).await?;
        self.forget(chat_id).await?;
        Ok(())
    }

    /// Deletes a chat whoever owns it (the retention sweep, an account's deletion).
    pub async fn forget_any_chat(&self, chat_id: &ChatId) -> Result<(), DbErr> {
        self.forget(chat_id).await
    }

    /// Deletes every chat of `user` (an account about to be deleted); returns how many.
    pub async fn forget_chats_of(&self, user: &UserId) -> Result<usize, DbErr> {
        let chats = self.chats.ids_of(user).await?;
        for chat_id in &chats {
            self.forget(chat_id).await?;
        }
        if let Some(search) = self.sessions.search() {
            search.user_deleted(user);
        }
        Ok(chats.len())
    }

    /// Deletes the chats made by `/v1` requests that nobody opened in the UI and nobody used for
    /// `http.v1_chat_retention_days`; returns how many.
    pub async fn sweep_api_chats(&self) -> Result<usize, DbErr> {
        let days = i64::try_from(self.config.http.v1_chat_retention_days).unwrap_or(i64::MAX);
        let before = chrono::Utc::now() - chrono::Duration::days(days.min(36_500));
        let mut swept = 0;
        loop {
            let ids = self.chats.unused_api_chats(before, 100).await?;
            if ids.is_empty() {
                return Ok(swept);
            }
            for id in ids {
                self.forget(&id).await?;
                swept += 1;
            }
        }
    }

    /// Cancels every live run of `user` (an account just disabled); returns how many. Each ends
    /// as a cancelled run, saving what it had, as if its owner had stopped it.
    pub fn stop_runs_of(&self, user: &UserId) -> usize {
        let mut stopped = 0;
        for log in self.runs.live() {
            if &log.owner_id == user {
                log.cancel.cancel();
                stopped += 1;
            }
        }
        stopped
    }

    async fn forget(&self, chat_id: &ChatId) -> Result<(), DbErr> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        // Its containers' ids before the row takes their rows with it.
        let containers = self.containers.ids_of_chat(chat_id).await?;
        let search = self.sessions.search();
        let owner = match search {
            Some(search) => search.owner_of(chat_id).await?,
            None => None,
        };
        // The row first: if the database fails, nothing else is let go.
        self.chats.delete_row(chat_id).await?;
        self.turn_cache.forget(chat_id);
        if let (Some(search), Some(owner)) = (search, owner) {
            search.chat_deleted(&owner, chat_id);
        }
        for log in self.runs.live_in_chat(chat_id) {
            log.cancel.cancel();
        }
        self.sessions.deactivate(chat_id);
        self.workspace.forget(chat_id).await;
        self.attachments.forget(chat_id).await;
        self.browsers.forget(chat_id).await;
        self.containers.forget(&containers).await;
        Ok(())
    }
}
