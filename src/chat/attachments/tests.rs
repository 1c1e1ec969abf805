//! `Attachments` over a real migrated SQLite file and a temporary data directory: what is
//! kept and refused, whose images a lookup finds, linking, sweeping and forgetting.

use entities::ids::{ChatId, MessageId, UserId};
use sea_orm::{DatabaseConnection, EntityTrait};

use super::*;
use crate::config::Config;

const PNG: &[u8] = image::TEST_PNG;

struct Fixture {
    dir: tempfile::TempDir,
    db: DatabaseConnection,
    attachments: Attachments,
    user: UserId,
    other: UserId,
    chat: ChatId,
}

async fn fixture(limits: AttachmentsConfig) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let db = crate::db::connect(&config).await.unwrap();
    crate::db::migrate(&db).await.unwrap();
    let accounts = crate::auth::Accounts::new(db.clone(), 1, 1);
    let mut users = Vec::new();
    for name in ["owner", "other"] {
        let user = accounts
            .create_user(crate::auth::NewUser {
                username: name,
                password: None,
                is_admin: false,
            })
            .await
            .unwrap();
        users.push(user.id);
    }
    let chat = crate::chat::Chats::new(db.clone())
        .create(&users[0], None, false)
        .await
        .unwrap()
        .id;
    Fixture {
        attachments: Attachments::new(
            db.clone(),
            crate::storage::Storage::directory(dir.path()),
            limits,
        ),
        dir,
        db,
        other: users.pop().unwrap(),
        user: users.pop().unwrap(),
        chat,
    }
}

#[tokio::test]
async fn an_image_is_kept_whole_with_its_type_size_and_digest() {
    let f = fixture(AttachmentsConfig::default()).await;
    let row = f
        .attachments
        .store(&f.chat, &f.user, PNG.to_vec())
        .await
        .unwrap();
    assert!(row.id.as_str().starts_with("att_"));
    assert_eq!(row.mime_type, "image/png");
    assert_eq!(row.size, PNG.len() as i64);
    assert_eq!(row.sha256.len(), 64);
    assert_eq!(row.message_id, None);
    assert_eq!(f.attachments.read(&f.chat, &row.id).await.unwrap(), PNG);
    // Only the finished file is in the chat's directory.
    let names: Vec<String> =
        std::fs::read_dir(f.dir.path().join("attachments").join(f.chat.as_str()))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
    assert_eq!(names, [row.id.to_string()]);
}

#[tokio::test]
async fn too_large_or_not_an_image_is_refused_and_nothing_is_kept() {
    let f = fixture(AttachmentsConfig {
        max_image_bytes: 40,
        ..AttachmentsConfig::default()
    })
    .await;
    let large = f.attachments.store(&f.chat, &f.user, PNG.to_vec()).await;
    assert!(matches!(
        large,
        Err(AttachmentError::TooLarge { limit: 40, .. })
    ));
    let text = f
        .attachments
        .store(&f.chat, &f.user, b"just some text".to_vec())
        .await;
    assert!(matches!(text, Err(AttachmentError::NotAnImage { .. })));
    assert!(f.attachments.list(&f.chat).await.unwrap().is_empty());
    assert!(
        !f.dir
            .path()
            .join("attachments")
            .join(f.chat.as_str())
            .exists()
    );
}

#[tokio::test]
async fn only_the_owner_finds_an_image_and_only_in_its_chat() {
    let f = fixture(AttachmentsConfig::default()).await;
    let row = f
        .attachments
        .store(&f.chat, &f.user, PNG.to_vec())
        .await
        .unwrap();
    assert!(
        f.attachments
            .get_owned(&f.user, &f.chat, &row.id)
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        f.attachments
            .get_owned(&f.other, &f.chat, &row.id)
            .await
            .unwrap()
            .is_none()
    );
    let parts = f
        .attachments
        .parts_of(&f.user, &f.chat, &[row.id.clone(), row.id.clone()])
        .await
        .unwrap();
    assert_eq!(parts.len(), 1, "an id named twice counts once");
    assert_eq!(parts[0].mime_type, "image/png");
    let theirs = f
        .attachments
        .parts_of(&f.other, &f.chat, std::slice::from_ref(&row.id))
        .await;
    assert!(matches!(theirs, Err(AttachmentError::NotFound(_))));
    let elsewhere = f
        .attachments
        .parts_of(&f.user, &ChatId::generate(), &[row.id])
        .await;
    assert!(matches!(elsewhere, Err(AttachmentError::NotFound(_))));
}

#[tokio::test]
async fn more_images_than_a_message_may_carry_are_refused() {
    let f = fixture(AttachmentsConfig {
        max_images_per_message: 1,
        ..AttachmentsConfig::default()
    })
    .await;
    let a = f
        .attachments
        .store(&f.chat, &f.user, PNG.to_vec())
        .await
        .unwrap();
    let b = f
        .attachments
        .store(&f.chat, &f.user, PNG.to_vec())
        .await
        .unwrap();
    let refused = f
        .attachments
        .parts_of(&f.user, &f.chat, &[a.id, b.id])
        .await;
    assert!(matches!(
        refused,
        Err(AttachmentError::TooMany { count: 2, max: 1 })
    ));
}

#[tokio::test]
async fn a_sent_image_is_linked_to_its_first_message_and_never_swept() {
    let f = fixture(AttachmentsConfig {
        unsent_retention_hours: 0,
        ..AttachmentsConfig::default()
    })
    .await;
    let sent = f
        .attachments
        .store(&f.chat, &f.user, PNG.to_vec())
        .await
        .unwrap();
    let unsent = f
        .attachments
        .store(&f.chat, &f.user, PNG.to_vec())
        .await
        .unwrap();
    let parts = ImagePart::parts_of(
        &f.attachments
            .parts_of(&f.user, &f.chat, std::slice::from_ref(&sent.id))
            .await
            .unwrap(),
    )
    .unwrap();
    let first = MessageId::generate();
    link_parts(&f.db, &f.chat, &parts, &first).await.unwrap();
    // Sent again with an edit: it keeps the message it was first sent with.
    link_parts(&f.db, &f.chat, &parts, &MessageId::generate())
        .await
        .unwrap();
    let row = entities::attachments::Entity::find_by_id(sent.id.clone())
        .one(&f.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.message_id, Some(first));
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    assert_eq!(f.attachments.sweep_unsent().await.unwrap(), 1);
    let left: Vec<_> = f.attachments.list(&f.chat).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, sent.id);
    assert!(f.attachments.read(&f.chat, &unsent.id).await.is_err());
    assert!(f.attachments.read(&f.chat, &sent.id).await.is_ok());
}

#[tokio::test]
async fn forgetting_a_chat_removes_its_files() {
    let f = fixture(AttachmentsConfig::default()).await;
    let row = f
        .attachments
        .store(&f.chat, &f.user, PNG.to_vec())
        .await
        .unwrap();
    f.attachments.forget(&f.chat).await;
    assert!(f.attachments.read(&f.chat, &row.id).await.is_err());
    // Forgetting twice (or a chat without images) is fine.
    f.attachments.forget(&f.chat).await;
}
