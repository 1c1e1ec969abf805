//! Start-up recovers before any sweep starts (`supervisor::recovery`, then `supervisor::jobs`):
//! a tus upload whose bytes were all written when the process died, and whose resumption window
//! passed while it was down, is committed at start-up, not swept as expired.

use chrono::Utc;
use sea_orm::{ActiveModelTrait, EntityTrait, Set};
use serde_json::Value;

use crate::client::Call;
use crate::documents::{metadata, settled, tus};
use crate::helpers::spawn_app;

#[actix_web::test]
async fn a_complete_upload_that_expired_while_down_is_committed_not_swept() {
    let app = spawn_app().await;
    let chat = app.new_chat().await;
    let whole = b"every byte arrived before the crash";
    let created = tus(app.chat_api().create_upload(&chat))
        .header("Upload-Length", whole.len().to_string())
        .header("Upload-Metadata", metadata("expired.txt"))
        .call()
        .await;
    assert_eq!(created.status(), 201);
    let location = created.headers()["location"].to_str().unwrap().to_string();
    let upload_id = location.rsplit('/').next().unwrap().to_string();
    // The PATCH wrote every byte, then the process died before committing; the upload's
    // window ended while it was down.
    let uploads_dir = app.state.workspace().uploads_dir();
    std::fs::write(uploads_dir.join(format!("{upload_id}.part")), whole).unwrap();
    let row = entities::uploads::Entity::find_by_id(entities::ids::UploadId::from_string(
        upload_id.clone(),
    ))
    .one(&app.db)
    .await
    .unwrap()
    .expect("the upload's row");
    let mut expired: entities::uploads::ActiveModel = row.into();
    expired.expires_at = Set(Utc::now() - chrono::Duration::hours(1));
    expired.update(&app.db).await.unwrap();

    let app = app.restart().await;
    let list: Value = settled(&app, &chat).await;
    let documents = list["documents"].as_array().unwrap();
    let document = documents
        .iter()
        .find(|d| d["filename"] == "expired.txt")
        .unwrap_or_else(|| panic!("the upload's document is still there: {list}"));
    assert_eq!(document["status"], "processed", "{document}");
    let upload =
        entities::uploads::Entity::find_by_id(entities::ids::UploadId::from_string(upload_id))
            .one(&app.db)
            .await
            .unwrap()
            .expect("the upload's row");
    assert_eq!(
        upload.status,
        entities::uploads::UploadStatus::Complete,
        "committed, not terminated"
    );
}
