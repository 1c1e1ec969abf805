//! Unfinished (tus) uploads: who may work on one right now, and how one ends early. A PATCH
//! holds an upload's claim while it writes; a termination (DELETE, or the sweeper for expired
//! uploads) asks the holder to stop, waits for the claim, and only then removes the row's
//! document and the partial file — so a write never lands in, or is renamed from, a file that
//! termination removed, and a termination never deletes what a PATCH just completed. The tus
//! protocol itself is `http::uploads`'.

use entities::ids::UploadId;
use entities::uploads::UploadStatus;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use dashmap::DashMap;
use entities::{artifacts, documents, uploads};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, TransactionTrait};
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio_util::sync::CancellationToken;

use super::Workspace;

/// How long a termination waits for a PATCH to stop writing. A PATCH stops at once when asked,
/// unless it is finishing (a rename and two row updates): far less than this.
const TERMINATION_WAIT: Duration = Duration::from_secs(10);

/// The claims on uploads being written or terminated, by upload id. An entry exists only while
/// someone holds or waits for it.
#[derive(Clone, Default)]
pub struct UploadClaims {
    slots: Arc<DashMap<UploadId, Arc<Slot>>>,
}

#[derive(Default)]
struct Slot {
    turn: Arc<Mutex<()>>,
    /// Cancelled when a termination wants the upload: the writer stops.
    stop: CancellationToken,
}

/// The right to write (or terminate) one upload; released when dropped.
pub struct UploadClaim {
    claims: UploadClaims,
    upload_id: UploadId,
    slot: Option<Arc<Slot>>,
    turn: Option<OwnedMutexGuard<()>>,
}

impl UploadClaims {
    /// Claims `upload_id` for writing; `None` when another request holds it.
    pub fn try_claim(&self, upload_id: &UploadId) -> Option<UploadClaim> {
        let slot = self.slot(upload_id);
        match slot.turn.clone().try_lock_owned() {
            Ok(turn) => Some(self.claim(upload_id, slot, turn)),
            Err(_) => {
                self.release(upload_id, slot);
                None
            }
        }
    }

    /// Claims `upload_id` to end it: tells a writer holding it to stop, then waits for it, at
    /// most `wait`; `None` when it did not let go in time.
    async fn claim_to_terminate(
        &self,
        upload_id: &UploadId,
        wait: Duration,
    ) -> Option<UploadClaim> {
        let slot = self.slot(upload_id);
        slot.stop.cancel();
        match tokio::time::timeout(wait, slot.turn.clone().lock_owned()).await {
            Ok(turn) => Some(self.claim(upload_id, slot, turn)),
            Err(_) => {
                self.release(upload_id, slot);
                None
            }
        }
    }

    fn slot(&self, upload_id: &UploadId) -> Arc<Slot> {
        self.slots.entry(upload_id.clone()).or_default().clone()
    }

    fn claim(
        &self,
        upload_id: &UploadId,
        slot: Arc<Slot>,
        turn: OwnedMutexGuard<()>,
    ) -> UploadClaim {
        UploadClaim {
            claims: self.clone(),
            upload_id: upload_id.clone(),
            slot: Some(slot),
            turn: Some(turn),
        }
    }

    /// Lets go of `slot`; the entry goes once no one else holds or waits for it. The count is
    /// read under the map's lock, which every new holder takes to get the slot.
    fn release(&self, upload_id: &UploadId, slot: Arc<Slot>) {
        drop(slot);
        self.slots
            .remove_if(upload_id, |_, slot| Arc::strong_count(slot) == 1);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.slots.len()
    }
}

impl UploadClaim {
    /// Resolves when a termination asks the holder to stop writing.
    pub async fn stop_requested(&self) {
        if let Some(slot) = &self.slot {
            slot.stop.cancelled().await;
        }
    }
}

impl Drop for UploadClaim {
    fn drop(&mut self) {
        self.turn.take();
        if let Some(slot) = self.slot.take() {
            self.claims.release(&self.upload_id, slot);
        }
    }
}

/// How a termination ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// The upload, its document and its partial file are gone.
    Terminated,
    /// There is no such upload, or it was terminated already.
    NotFound,
    /// The upload completed first; its document is the chat's now.
    Complete,
    /// A write did not stop in time; nothing was changed.
    Busy,
}

/// A tus upload begun: its row, written by `Workspace::record_upload`.
pub struct NewUpload {
    pub id: UploadId,
    pub chat_id: entities::ids::ChatId,
    pub user_id: entities::ids::UserId,
    pub filename: String,
    pub length: u64,
    pub metadata: serde_json::Value,
    pub storage_path: std::path::PathBuf,
    pub document_id: entities::ids::DocumentId,
    /// How long it may stay unfinished.
    pub expires_in: Duration,
}

impl Workspace {
    /// Records an upload that was just begun (its document is made already).
    pub async fn record_upload(&self, new: NewUpload) -> Result<uploads::Model, DbErr> {
        use sea_orm::{ActiveModelTrait, Set};
        let now = Utc::now();
        uploads::ActiveModel {
            id: Set(new.id),
            chat_id: Set(new.chat_id),
            user_id: Set(new.user_id),
            filename: Set(new.filename),
            upload_length: Set(new.length as i64),
            upload_offset: Set(0),
            metadata: Set(Some(new.metadata)),
            storage_path: Set(new.storage_path.to_string_lossy().into_owned()),
            document_id: Set(Some(new.document_id)),
            status: Set(UploadStatus::Uploading),
            created_at: Set(now),
            updated_at: Set(now),
            expires_at: Set(now + chrono::Duration::from_std(new.expires_in).unwrap_or_default()),
        }
        .insert(&self.inner.db)
        .await
    }

    /// Records how many bytes of `upload` are written.
    pub async fn record_offset(&self, upload: &uploads::Model, written: u64) -> Result<(), DbErr> {
        use sea_orm::{ActiveModelTrait, Set};
        let mut row: uploads::ActiveModel = upload.clone().into();
        row.upload_offset = Set(written as i64);
        row.updated_at = Set(Utc::now());
        row.update(&self.inner.db).await?;
        Ok(())
    }

    /// Upload `upload_id` of `chat_id`, unless it was terminated.
    pub async fn upload_in(
        &self,
        chat_id: &entities::ids::ChatId,
        upload_id: &UploadId,
    ) -> Result<Option<uploads::Model>, DbErr> {
        Ok(uploads::Entity::find_by_id(upload_id.clone())
            .filter(uploads::Column::ChatId.eq(chat_id.clone()))
            .one(&self.inner.db)
            .await?
            .filter(|u| u.status != UploadStatus::Terminated))
    }

    /// Claims an upload for a PATCH; `None` while another request writes or terminates it.
    pub fn claim_upload(&self, upload_id: &UploadId) -> Option<UploadClaim> {
        self.inner.upload_claims.try_claim(upload_id)
    }

    /// Ends an unfinished upload: stops and waits out a PATCH writing it, then marks it
    /// terminated and deletes its document in one transaction, then removes its partial file.
    pub async fn terminate_upload(&self, upload_id: &UploadId) -> Result<Termination, DbErr> {
        // What turns keep of it is stale once this returns (`chat::turn_cache`).
        let _changed = crate::chat::turn_cache::Changed;
        let Some(_claim) = self
            .inner
            .upload_claims
            .claim_to_terminate(upload_id, TERMINATION_WAIT)
            .await
        else {
            return Ok(Termination::Busy);
        };
        let db = &self.inner.db;
        // Read under the claim: what a PATCH did before letting go counts.
        let Some(upload) = uploads::Entity::find_by_id(upload_id.clone())
            .one(db)
            .await?
        else {
            return Ok(Termination::NotFound);
        };
        match upload.status {
            UploadStatus::Terminated => return Ok(Termination::NotFound),
            UploadStatus::Complete => return Ok(Termination::Complete),
            UploadStatus::Uploading => {}
        }
        let txn = db.begin().await?;
        uploads::Entity::update_many()
            .col_expr(
                uploads::Column::Status,
                Expr::value(UploadStatus::Terminated),
            )
            .filter(uploads::Column::Id.eq(upload_id))
            .exec(&txn)
            .await?;
        if let Some(document_id) = &upload.document_id
            && let Some(document) = documents::Entity::find_by_id(document_id.clone())
                .one(&txn)
                .await?
        {
            documents::Entity::delete_by_id(document.id)
                .exec(&txn)
                .await?;
            artifacts::Entity::delete_by_id(document.artifact_id)
                .exec(&txn)
                .await?;
        }
        txn.commit().await?;
        if let Err(err) = tokio::fs::remove_file(&upload.storage_path).await
            && err.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(%upload_id, %err, "could not remove a terminated upload's file");
        }
        Ok(Termination::Terminated)
    }

    /// Terminates uploads whose resumption window passed: their partial files and documents go.
    /// Returns how many were terminated.
    pub async fn sweep_expired_uploads(&self) -> Result<usize, DbErr> {
        let expired = uploads::Entity::find()
            .filter(uploads::Column::Status.eq(UploadStatus::Uploading))
            .filter(uploads::Column::ExpiresAt.lte(Utc::now()))
            .all(&self.inner.db)
            .await?;
        let mut terminated = 0;
        for upload in &expired {
            if self.terminate_upload(&upload.id).await? == Termination::Terminated {
                terminated += 1;
            }
        }
        Ok(terminated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_claim_at_a_time_and_a_termination_stops_the_writer() {
        let claims = UploadClaims::default();
        let writer = claims
            .try_claim(&UploadId::from_string("u1"))
            .expect("free");
        assert!(
            claims.try_claim(&UploadId::from_string("u1")).is_none(),
            "a second writer is refused"
        );
        assert!(
            claims.try_claim(&UploadId::from_string("u2")).is_some(),
            "other uploads are not"
        );

        let terminator = {
            let claims = claims.clone();
            tokio::spawn(async move {
                claims
                    .claim_to_terminate(&UploadId::from_string("u1"), Duration::from_secs(30))
                    .await
                    .is_some()
            })
        };
        // The writer is told to stop, and lets go.
        tokio::time::timeout(Duration::from_secs(30), writer.stop_requested())
            .await
            .expect("the writer was asked to stop");
        drop(writer);
        assert!(terminator.await.unwrap(), "the termination got the claim");
        assert_eq!(claims.len(), 0, "released claims leave no entry");
    }

    #[tokio::test]
    async fn a_termination_gives_up_on_a_writer_that_does_not_stop() {
        let claims = UploadClaims::default();
        let writer = claims
            .try_claim(&UploadId::from_string("u1"))
            .expect("free");
        let gave_up = claims
            .claim_to_terminate(&UploadId::from_string("u1"), Duration::from_millis(20))
            .await;
        assert!(gave_up.is_none());
        drop(writer);
        assert_eq!(claims.len(), 0);
        assert!(
            claims.try_claim(&UploadId::from_string("u1")).is_some(),
            "free again"
        );
    }
}
