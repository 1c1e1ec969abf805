//! Round-trips the migrations (up, seed + cascade checks, down, up) on a fresh SQLite
//! database, and on PostgreSQL when `COLLOQUY_TEST_POSTGRES_URL` is set.

use std::collections::BTreeSet;
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{Duration, Utc};
use entities::ids::{
    AgentId, ApiKeyId, ArtifactId, ArtifactVersionId, AskId, ChatId, ChunkId, DocumentId,
    LoginSessionId, LoginTokenId, MemoryId, MessageId, RunId, UploadId, UserId,
};
use entities::messages::MessageRole;
use entities::{
    agent_knowledge_bases, agents, api_keys, artifact_versions, artifacts, chats, document_chunks,
    documents, login_sessions, login_tokens, memories, messages, pending_asks, prelude::*, runs,
    uploads, users,
};
use migration::{Migrator, MigratorTrait, TABLES};
use sea_orm_migration::sea_orm::{
    ActiveModelTrait, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr, EntityTrait,
    ModelTrait, PaginatorTrait, Set, Statement,
};
use serde_json::json;

const POSTGRES_URL_VAR: &str = "COLLOQUY_TEST_POSTGRES_URL";

#[tokio::test]
async fn sqlite_up_down_up() -> Result<(), DbErr> {
    let dir = tempfile::tempdir().expect("create temp dir");
    let path = dir.path().join("colloquy-test.db");
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let db = Database::connect(&url).await?;

    let fk = db
        .query_one_raw(Statement::from_string(
            DbBackend::Sqlite,
            "PRAGMA foreign_keys",
        ))
        .await?
        .expect("PRAGMA foreign_keys returns a row");
    assert_eq!(
        fk.try_get_by_index::<i32>(0)?,
        1,
        "foreign keys must be enforced"
    );

    round_trip(&db, "sqlite").await?;
    db.close().await
}

#[tokio::test]
async fn postgres_up_down_up() -> Result<(), DbErr> {
    let Ok(url) = std::env::var(POSTGRES_URL_VAR) else {
        println!("skipped: {POSTGRES_URL_VAR} is not set");
        return Ok(());
    };
    let db = Database::connect(&url).await?;
    let suffix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos()
        .to_string();
    round_trip(&db, &suffix).await?;
    // Leave the database as we found it.
    Migrator::down(&db, None).await?;
    assert_no_tables(&db).await?;
    db.close().await
}

/// up → check tables → seed + cascade checks → down → check gone → up → up (no-op).
async fn round_trip(db: &DatabaseConnection, suffix: &str) -> Result<(), DbErr> {
    Migrator::up(db, None).await?;
    assert_all_tables(db).await?;

    seed_and_check_cascades(db, suffix).await?;

    Migrator::down(db, None).await?;
    assert_no_tables(db).await?;

    Migrator::up(db, None).await?;
    assert_all_tables(db).await?;
    // A second `up` with nothing pending is a no-op.
    Migrator::up(db, None).await?;
    assert!(Migrator::get_pending_migrations(db).await?.is_empty());
    assert_all_tables(db).await
}

async fn table_names(db: &DatabaseConnection) -> Result<BTreeSet<String>, DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table'",
        _ => {
            "SELECT table_name::text FROM information_schema.tables \
             WHERE table_schema = current_schema()"
        }
    };
    let rows = db
        .query_all_raw(Statement::from_string(backend, sql))
        .await?;
    rows.iter()
        .map(|row| row.try_get_by_index::<String>(0))
        .collect()
}

async fn assert_all_tables(db: &DatabaseConnection) -> Result<(), DbErr> {
    let names = table_names(db).await?;
    for table in TABLES {
        assert!(
            names.contains(table),
            "table {table} missing; have {names:?}"
        );
    }
    Ok(())
}

async fn assert_no_tables(db: &DatabaseConnection) -> Result<(), DbErr> {
    let names = table_names(db).await?;
    for table in TABLES {
        assert!(
            !names.contains(table),
            "table {table} left after down; have {names:?}"
        );
    }
    Ok(())
}

/// Inserts a row into every table through the entities, then checks ON DELETE
/// behaviour: message subtree cascade, agent SET NULL, chat cascade, user cascade.
async fn seed_and_check_cascades(db: &DatabaseConnection, suffix: &str) -> Result<(), DbErr> {
    let now = Utc::now();
    let later = now + Duration::hours(1);
    let id = |name: &str| format!("{name}-{suffix}");

    let user = users::ActiveModel {
        id: Set(UserId::from_string(id("user"))),
        username: Set(id("alice")),
        password_hash: Set(None),
        created_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    assert!(!user.is_admin, "is_admin defaults to false");
    assert!(!user.disabled, "disabled defaults to false (000034)");
    assert_eq!(user.default_model, None);

    api_keys::ActiveModel {
        id: Set(ApiKeyId::from_string(id("key"))),
        user_id: Set(user.id.clone()),
        name: Set("laptop".to_owned()),
        key_hash: Set(id("key-hash")),
        key_prefix: Set("cq_abcd".to_owned()),
        created_at: Set(now),
        last_used_at: Set(None),
        revoked_at: Set(None),
    }
    .insert(db)
    .await?;
    login_sessions::ActiveModel {
        id: Set(LoginSessionId::from_string(id("session"))),
        user_id: Set(user.id.clone()),
        token_hash: Set(id("session-hash")),
        created_at: Set(now),
        expires_at: Set(later),
        last_seen_at: Set(None),
        user_agent: Set(None),
    }
    .insert(db)
    .await?;
    login_tokens::ActiveModel {
        id: Set(LoginTokenId::from_string(id("token"))),
        user_id: Set(user.id.clone()),
        token_hash: Set(id("token-hash")),
        created_at: Set(now),
        expires_at: Set(later),
        used_at: Set(None),
    }
    .insert(db)
    .await?;

    let agent = agents::ActiveModel {
        id: Set(AgentId::from_string(id("agent"))),
        user_id: Set(user.id.clone()),
        name: Set("helper".to_owned()),
        system_prompt: Set(Some("Be brief.".to_owned())),
        model: Set(None),
        enabled_tools: Set(Some(json!(["search"]))),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    assert!(agent.tools_enabled, "tools_enabled defaults to true");

    let chat = chats::ActiveModel {
        id: Set(ChatId::from_string(id("chat"))),
        user_id: Set(user.id.clone()),
        agent_id: Set(Some(agent.id.clone())),
        title: Set("First chat".to_owned()),
        active_leaf_id: Set(None),
        embedder: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    assert!(!chat.ephemeral, "ephemeral defaults to false");
    assert_eq!(
        chat.model, None,
        "a chat's model is the agent's until picked (000033)"
    );

    let message = |name: &str, parent: Option<MessageId>, seq: i64| messages::ActiveModel {
        id: Set(MessageId::from_string(id(name))),
        chat_id: Set(chat.id.clone()),
        parent_id: Set(parent),
        role: Set(MessageRole::User),
        content: Set(Some("hello".to_owned())),
        parts: Set(None),
        tool_calls: Set(None),
        tool_call_id: Set(None),
        run_id: Set(None),
        stop_reason: Set(None),
        reasoning: Set(Some("a thought".to_owned())),
        reasoning_ms: Set(Some(1_250)),
        model: Set(Some("small".to_owned())),
        seq: Set(seq),
        created_at: Set(now),
    };
    let root = message("msg-root", None, 1).insert(db).await?;
    // The reasoning columns (000023) keep what they were given.
    let stored = Messages::find_by_id(root.id.clone())
        .one(db)
        .await?
        .expect("the root message");
    assert_eq!(
        (stored.reasoning.as_deref(), stored.reasoning_ms),
        (Some("a thought"), Some(1_250))
    );
    assert_eq!(stored.model.as_deref(), Some("small"), "000033");
    message("msg-child", Some(root.id.clone()), 2)
        .insert(db)
        .await?;
    message(
        "msg-grandchild",
        Some(MessageId::from_string(id("msg-child"))),
        3,
    )
    .insert(db)
    .await?;

    // Foreign keys are enforced: a message in a missing chat is rejected.
    let orphan = messages::ActiveModel {
        chat_id: Set(ChatId::from_string(id("no-such-chat"))),
        ..message("msg-orphan", None, 4)
    }
    .insert(db)
    .await;
    assert!(orphan.is_err(), "insert with dangling chat_id must fail");

    // Deleting a message deletes its whole subtree.
    let other_root = message("msg-other", None, 5).insert(db).await?;
    root.delete(db).await?;
    let left: Vec<MessageId> = Messages::find()
        .all(db)
        .await?
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(left, vec![other_root.id.clone()]);

    let run = runs::ActiveModel {
        id: Set(RunId::from_string(id("run"))),
        chat_id: Set(chat.id.clone()),
        user_id: Set(user.id.clone()),
        status: Set(entities::runs::RunStatus::Paused),
        stop_reason: Set(None),
        user_message_id: Set(Some(other_root.id.clone())),
        assistant_message_id: Set(None),
        error: Set(None),
        options: Set(Some(json!({"stream": true}))),
        created_at: Set(now),
        finished_at: Set(None),
        draft: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    assert_eq!(
        (run.iterations, run.input_tokens, run.output_tokens),
        (0, 0, 0)
    );

    pending_asks::ActiveModel {
        id: Set(AskId::from_string(id("ask"))),
        correlation_id: Set(entities::ids::AskCorrelationId::from_string(id("corr"))),
        chat_id: Set(chat.id.clone()),
        run_id: Set(run.id.clone()),
        user_id: Set(user.id.clone()),
        tool_call_id: Set("call_1".to_owned()),
        question: Set(json!({"text": "Which one?"})),
        checkpoint: Set(json!({"messages": []})),
        status: Set(pending_asks::AskStatus::Pending),
        answer: Set(None),
        created_at: Set(now),
        expires_at: Set(later),
        answered_at: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;

    let embedding = vec![0_u8, 1, 2, 127, 128, 255];
    memories::ActiveModel {
        id: Set(MemoryId::from_string(id("memory"))),
        chat_id: Set(chat.id.clone()),
        content: Set("Likes tea".to_owned()),
        category: Set("preference".to_owned()),
        embedding: Set(Some(embedding.clone())),
        embedder: Set(Some("test-embedder".to_owned())),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(db)
    .await?;
    let memory = Memories::find_by_id(MemoryId::from_string(id("memory")))
        .one(db)
        .await?
        .expect("memory row");
    assert_eq!(memory.embedding.as_deref(), Some(embedding.as_slice()));

    let artifact = artifacts::ActiveModel {
        id: Set(ArtifactId::from_string(id("artifact"))),
        chat_id: Set(chat.id.clone()),
        identifier: Set("notes".to_owned()),
        title: Set("Notes".to_owned()),
        mime_type: Set("text/markdown".to_owned()),
        language: Set(None),
        kind: Set("document".to_owned()),
        latest_version: Set(1),
        message_id: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        deleted_at: Set(None),
    }
    .insert(db)
    .await?;
    artifact_versions::ActiveModel {
        id: Set(ArtifactVersionId::from_string(id("artifact-v1"))),
        artifact_id: Set(artifact.id.clone()),
        version: Set(1),
        content: Set("# Notes".to_owned()),
        message_id: Set(None),
        created_at: Set(now),
    }
    .insert(db)
    .await?;

    let document = documents::ActiveModel {
        id: Set(DocumentId::from_string(id("document"))),
        chat_id: Set(chat.id.clone()),
        artifact_id: Set(artifact.id.clone()),
        filename: Set("notes.md".to_owned()),
        size_bytes: Set(7),
        content_type: Set("text/markdown".to_owned()),
        storage_path: Set("uploads/notes.md".to_owned()),
        status: Set(entities::documents::DocumentStatus::Processed),
        error: Set(None),
        warning: Set(None),
        uploaded_at: Set(now),
        processed_at: Set(Some(now)),
        deleted_at: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    assert!(!document.searchable, "searchable defaults to false");
    assert_eq!(document.char_count, 0);
    assert_eq!(document.processing_attempts, 0, "attempts start at 0");

    document_chunks::ActiveModel {
        id: Set(ChunkId::from_string(id("chunk-0"))),
        document_id: Set(document.id.clone()),
        chat_id: Set(chat.id.clone()),
        chunk_index: Set(0),
        text: Set("# Notes".to_owned()),
        token_count: Set(2),
        embedding: Set(Some(embedding.clone())),
        embedder: Set(Some("test-embedder".to_owned())),
        headings: Set(Some(r#"{"path":["Notes"]}"#.to_owned())),
        created_at: Set(now),
    }
    .insert(db)
    .await?;

    let upload = uploads::ActiveModel {
        id: Set(UploadId::from_string(id("upload"))),
        chat_id: Set(chat.id.clone()),
        user_id: Set(user.id.clone()),
        filename: Set("big.pdf".to_owned()),
        upload_length: Set(1 << 33),
        metadata: Set(Some(json!({"filename": "big.pdf"}))),
        storage_path: Set("uploads/big.pdf.part".to_owned()),
        document_id: Set(None),
        status: Set(entities::uploads::UploadStatus::Uploading),
        created_at: Set(now),
        updated_at: Set(now),
        expires_at: Set(later),
        ..Default::default()
    }
    .insert(db)
    .await?;
    assert_eq!(upload.upload_offset, 0);

    // An agent's knowledge base link goes with the agent, and with the knowledge base's chat.
    agent_knowledge_bases::ActiveModel {
        agent_id: Set(agent.id.clone()),
        chat_id: Set(chat.id.clone()),
        position: Set(0),
    }
    .insert(db)
    .await?;
    assert_eq!(AgentKnowledgeBases::find().count(db).await?, 1);

    // Deleting the agent detaches the chat instead of deleting it.
    agent.delete(db).await?;
    assert_eq!(AgentKnowledgeBases::find().count(db).await?, 0);
    let second = agents::ActiveModel {
        id: Set(AgentId::from_string(id("agent-2"))),
        user_id: Set(user.id.clone()),
        name: Set("reader".to_owned()),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    agent_knowledge_bases::ActiveModel {
        agent_id: Set(second.id.clone()),
        chat_id: Set(chat.id.clone()),
        position: Set(0),
    }
    .insert(db)
    .await?;
    let chat_after = Chats::find_by_id(chat.id.clone())
        .one(db)
        .await?
        .expect("chat survives agent deletion");
    assert_eq!(chat_after.agent_id, None);

    // Deleting the chat removes everything that belongs to it.
    chat_after.delete(db).await?;
    assert_eq!(Messages::find().count(db).await?, 0);
    assert_eq!(Runs::find().count(db).await?, 0);
    assert_eq!(PendingAsks::find().count(db).await?, 0);
    assert_eq!(Memories::find().count(db).await?, 0);
    assert_eq!(Artifacts::find().count(db).await?, 0);
    assert_eq!(ArtifactVersions::find().count(db).await?, 0);
    assert_eq!(Documents::find().count(db).await?, 0);
    assert_eq!(DocumentChunks::find().count(db).await?, 0);
    assert_eq!(Uploads::find().count(db).await?, 0);
    assert_eq!(AgentKnowledgeBases::find().count(db).await?, 0);

    // Deleting the user removes its credentials and sessions.
    assert_eq!(ApiKeys::find().count(db).await?, 1);
    user.delete(db).await?;
    assert_eq!(ApiKeys::find().count(db).await?, 0);
    assert_eq!(LoginSessions::find().count(db).await?, 0);
    assert_eq!(LoginTokens::find().count(db).await?, 0);
    assert_eq!(Users::find().count(db).await?, 0);
    Ok(())
}

/// Chats made before agents belonged to one get their owner's default agent, made for the
/// owner by the migration.
#[tokio::test]
async fn existing_chats_get_their_owners_default_agent() -> Result<(), DbErr> {
    let dir = tempfile::tempdir().expect("create temp dir");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("before.db").display()
    );
    let db = Database::connect(&url).await?;
    let before_agents = Migrator::migrations()
        .iter()
        .position(|m| m.name().contains("agent_defaults"))
        .expect("the agent defaults migration") as u32;
    Migrator::up(&db, Some(before_agents)).await?;
    for sql in [
        "INSERT INTO users (id, username, is_admin, created_at) \
         VALUES ('u1', 'ada', false, '2026-11-20T10:00:00+00:00')",
        "INSERT INTO chats (id, user_id, title, ephemeral, created_at, updated_at) \
         VALUES ('c1', 'u1', 'Old chat', false, '2026-11-20T10:00:00+00:00', '2026-11-20T10:00:00+00:00')",
    ] {
        db.execute_raw(Statement::from_string(DbBackend::Sqlite, sql))
            .await?;
    }
    Migrator::up(&db, None).await?;
    let chat = Chats::find_by_id(ChatId::from_string("c1"))
        .one(&db)
        .await?
        .expect("the chat");
    assert_eq!(chat.agent_id, Some(AgentId::from_string("agent_u1")));
    let agent = Agents::find_by_id(AgentId::from_string("agent_u1"))
        .one(&db)
        .await?
        .expect("the default agent");
    assert!(agent.is_default && agent.tools_enabled);
    assert_eq!(agent.user_id, UserId::from_string("u1"));
    Ok(())
}

/// Sends recorded before `email_sends` had a user get their agent's; from then on a send
/// outlives its agent (its user's hourly limit still counts it) and goes with its user.
#[tokio::test]
async fn email_sends_keep_their_user_and_outlive_their_agent() -> Result<(), DbErr> {
    let dir = tempfile::tempdir().expect("create temp dir");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("sends.db").display()
    );
    let db = Database::connect(&url).await?;
    let by_user = Migrator::migrations()
        .iter()
        .position(|m| m.name().contains("email_sends_by_user"))
        .expect("the email sends by user migration") as u32;
    Migrator::up(&db, Some(by_user)).await?;
    for sql in [
        "INSERT INTO users (id, username, is_admin, created_at) \
         VALUES ('u1', 'ada', false, '2026-11-20T10:00:00+00:00')",
        "INSERT INTO agents (id, user_id, name, created_at, updated_at) \
         VALUES ('a1', 'u1', 'Mailer', '2026-11-20T10:00:00+00:00', '2026-11-20T10:00:00+00:00')",
        "INSERT INTO email_sends (id, agent_id, recipient, subject, status, created_at) \
         VALUES ('s1', 'a1', 'ops@example.org', 'Hi', 'sent', '2026-11-20T10:00:00+00:00')",
    ] {
        db.execute_raw(Statement::from_string(DbBackend::Sqlite, sql))
            .await?;
    }
    Migrator::up(&db, None).await?;
    let kept = the_send(&db).await?.expect("the send");
    assert_eq!(kept.user_id, UserId::from_string("u1"));
    assert_eq!(kept.subject, "Hi");

    Agents::delete_by_id(AgentId::from_string("a1"))
        .exec(&db)
        .await?;
    assert!(
        the_send(&db).await?.is_some(),
        "deleting the agent keeps it"
    );
    Users::delete_by_id(UserId::from_string("u1"))
        .exec(&db)
        .await?;
    assert!(the_send(&db).await?.is_none(), "it goes with its user");
    db.close().await
}

/// The send `email_sends_keep_their_user_and_outlive_their_agent` recorded.
async fn the_send(db: &DatabaseConnection) -> Result<Option<entities::email_sends::Model>, DbErr> {
    entities::email_sends::Entity::find_by_id(entities::ids::EmailSendId::from_string("s1"))
        .one(db)
        .await
}
