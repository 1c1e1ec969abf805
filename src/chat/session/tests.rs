//! `ChatSession` over a real migrated SQLite file: turns start and end on the right branch,
//! edits and regenerations branch, refusals change nothing, a finished turn outside the active
//! branch leaves the selection alone, and a new session sees everything a stopped one stored.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use entities::ids::{ChatId, MessageId, RunId, UserId};
use entities::messages::MessageRole;
use entities::runs::RunStatus;
use sea_orm::{DatabaseConnection, EntityTrait};

use super::*;
use crate::config::Config;
use crate::llm::wire::Usage;
use crate::retrieval::embed::hash::HashEmbedder;
use crate::run::events::StopReason;

struct Fixture {
    _dir: tempfile::TempDir,
    db: DatabaseConnection,
    user: UserId,
    chat: ChatId,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let db = crate::db::connect(&config).await.unwrap();
    crate::db::migrate(&db).await.unwrap();
    let user = crate::auth::Accounts::new(db.clone(), 1, 1)
        .create_user(crate::auth::NewUser {
            username: "writer",
            password: None,
            is_admin: false,
        })
        .await
        .unwrap()
        .id;
    let chat = crate::chat::Chats::new(db.clone())
        .create(&user, None, false)
        .await
        .unwrap()
        .id;
    Fixture {
        _dir: dir,
        db,
        user,
        chat,
    }
}

/// A registry of sessions on the fixture's database, on this arbiter.
fn registry(fixture: &Fixture) -> ChatRegistry {
    registry_counting(fixture, None)
}

/// `registry`, its group commit's writer counting each statement it runs on `statements`.
fn registry_counting(
    fixture: &Fixture,
    statements: Option<prometheus::IntCounter>,
) -> ChatRegistry {
    ChatRegistry::new(
        vec![Arbiter::current()],
        fixture.db.clone(),
        crate::chat::group_commit::GroupCommit::start(
            &fixture.db,
            Duration::from_secs(5),
            statements,
        )
        .unwrap(),
        Duration::from_secs(600),
        Arc::new(HashEmbedder::default()),
    )
}

fn start(fixture: &Fixture) -> Addr<ChatSession> {
    registry(fixture).session_unclustered(&fixture.chat)
}

async fn begin(
    session: &Addr<ChatSession>,
    fixture: &Fixture,
    turn: Turn,
) -> Result<(RunId, TurnStarted), ChatError> {
    begin_recalling(session, fixture, turn, None).await
}

/// `turn` begun by the fixture's user in a new run, with nothing else asked: what a test
/// asks besides is set over it (`BeginTurn { recall, ..begin_message(…) }`).
fn begin_message(fixture: &Fixture, turn: Turn) -> BeginTurn {
    BeginTurn {
        turn,
        run_id: RunId::generate(),
        user_id: fixture.user.clone(),
        options: None,
        history_budget: None,
        new_chat: None,
        recall: None,
        taken: None,
        on_accepted: None,
    }
}

/// Sends `message` to `session`: its run and how its turn started.
async fn begin_sending(
    session: &Addr<ChatSession>,
    message: BeginTurn,
) -> Result<(RunId, TurnStarted), ChatError> {
    let run_id = message.run_id.clone();
    let started = session.send(message).await.unwrap()?;
    Ok((run_id, started))
}

/// `begin`, recalling the chat's memories as `recall` asks.
async fn begin_recalling(
    session: &Addr<ChatSession>,
    fixture: &Fixture,
    turn: Turn,
    recall: Option<Recall>,
) -> Result<(RunId, TurnStarted), ChatError> {
    let message = BeginTurn {
        recall,
        ..begin_message(fixture, turn)
    };
    begin_sending(session, message).await
}

async fn answer(
    session: &Addr<ChatSession>,
    run_id: RunId,
    started: &TurnStarted,
    content: &str,
) -> Option<MessageId> {
    session
        .send(completion(run_id, &started.user_message_id, content))
        .await
        .unwrap()
        .unwrap()
}

/// A run's completed answer `content` to `user_message_id`.
fn completion(run_id: RunId, user_message_id: &MessageId, content: &str) -> CompleteTurn {
    CompleteTurn {
        run_id,
        user_message_id: user_message_id.clone(),
        content: content.into(),
        parts: None,
        reasoning: None,
        model: None,
        stop_reason: StopReason::Completed,
        usage: Usage::default(),
        iterations: 1,
        error: None,
        completes_ask: None,
        stored: None,
    }
}

fn send(content: &str) -> Turn {
    Turn::Send {
        parent_id: None,
        content: content.into(),
        images: Vec::new(),
    }
}

/// The active path's contents, root first.
async fn path(session: &Addr<ChatSession>) -> Vec<String> {
    session
        .send(GetActivePath)
        .await
        .unwrap()
        .into_iter()
        .map(|node| node.content.unwrap_or_default())
        .collect()
}

#[actix::test]
async fn a_turn_stores_the_question_and_the_run_then_the_answer_on_its_branch() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let (run_id, started) = begin(&session, &fixture, send("What is 2+2?"))
        .await
        .unwrap();
    assert_eq!(started.context.len(), 1);
    assert_eq!(started.context[0].role, MessageRole::User);
    let run = entities::runs::Entity::find_by_id(run_id.clone())
        .one(&fixture.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.status, RunStatus::Running);

    let answer_id = answer(&session, run_id.clone(), &started, "4").await;
    assert!(answer_id.is_some());
    assert_eq!(path(&session).await, ["What is 2+2?", "4"]);
    let run = entities::runs::Entity::find_by_id(run_id)
        .one(&fixture.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.status, RunStatus::Completed);
    assert_eq!(run.assistant_message_id, answer_id);
}

#[actix::test]
async fn an_empty_message_or_an_unknown_parent_is_refused_and_nothing_is_stored() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let empty = begin(&session, &fixture, send("   ")).await;
    assert!(matches!(empty, Err(ChatError::EmptyContent)));
    let orphan = begin(
        &session,
        &fixture,
        Turn::Send {
            parent_id: Some(MessageId::from_string("nowhere")),
            content: "hello".into(),
            images: Vec::new(),
        },
    )
    .await;
    assert!(matches!(
        orphan,
        Err(ChatError::Tree(TreeError::UnknownMessage(_)))
    ));
    assert!(path(&session).await.is_empty());
    let runs = entities::runs::Entity::find()
        .all(&fixture.db)
        .await
        .unwrap();
    assert!(runs.is_empty(), "no run was recorded for a refused turn");
}

#[actix::test]
async fn an_edit_branches_and_switching_back_restores_the_old_branch() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let (run, first) = begin(&session, &fixture, send("first question"))
        .await
        .unwrap();
    answer(&session, run, &first, "first answer").await;
    let (run, edited) = begin(
        &session,
        &fixture,
        Turn::Edit {
            message_id: first.user_message_id.clone(),
            content: "edited question".into(),
            images: Vec::new(),
        },
    )
    .await
    .unwrap();
    answer(&session, run, &edited, "edited answer").await;
    assert_eq!(path(&session).await, ["edited question", "edited answer"]);

    let leaf = session
        .send(SwitchBranch {
            message_id: first.user_message_id.clone(),
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(path(&session).await, ["first question", "first answer"]);
    let tree = session.send(GetTree).await.unwrap();
    assert_eq!(tree.len(), 4);
    let active: Vec<&MessageId> = tree
        .iter()
        .filter(|(_, on_path)| *on_path)
        .map(|(node, _)| &node.id)
        .collect();
    assert_eq!(active.last(), Some(&&leaf));
}

#[actix::test]
async fn regenerating_answers_the_same_question_and_refuses_a_user_message() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let (run, first) = begin(&session, &fixture, send("question")).await.unwrap();
    let answer_id = answer(&session, run, &first, "answer one").await.unwrap();
    let refused = begin(
        &session,
        &fixture,
        Turn::Regenerate {
            message_id: first.user_message_id.clone(),
        },
    )
    .await;
    assert!(matches!(
        refused,
        Err(ChatError::Tree(TreeError::NotAnAssistantMessage(_)))
    ));
    let (run, again) = begin(
        &session,
        &fixture,
        Turn::Regenerate {
            message_id: answer_id,
        },
    )
    .await
    .unwrap();
    assert_eq!(again.user_message_id, first.user_message_id);
    answer(&session, run, &again, "answer two").await;
    assert_eq!(path(&session).await, ["question", "answer two"]);
}

#[actix::test]
async fn an_answer_that_arrives_after_the_user_moved_to_another_branch_does_not_move_them() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let (run, first) = begin(&session, &fixture, send("one")).await.unwrap();
    answer(&session, run, &first, "one answered").await;
    // A second turn starts; before it ends, the user edits the first question.
    let (slow_run, slow) = begin(&session, &fixture, send("two")).await.unwrap();
    let (run, edited) = begin(
        &session,
        &fixture,
        Turn::Edit {
            message_id: first.user_message_id.clone(),
            content: "one, edited".into(),
            images: Vec::new(),
        },
    )
    .await
    .unwrap();
    answer(&session, run, &edited, "edited answered").await;
    answer(&session, slow_run, &slow, "two answered").await;
    assert_eq!(path(&session).await, ["one, edited", "edited answered"]);
    let tree = session.send(GetTree).await.unwrap();
    assert!(
        tree.iter()
            .any(|(node, _)| node.content.as_deref() == Some("two answered")),
        "the late answer is kept on its own branch"
    );
}

#[actix::test]
async fn a_new_session_loads_everything_the_stopped_one_stored() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let (run, first) = begin(&session, &fixture, send("remember me"))
        .await
        .unwrap();
    answer(&session, run, &first, "remembered").await;
    session
        .send(ImportHistory {
            messages: vec![
                ImportedMessage::text(MessageRole::User, "imported question".into()),
                ImportedMessage::text(MessageRole::Assistant, "imported answer".into()),
            ],
        })
        .await
        .unwrap()
        .unwrap();
    let before = path(&session).await;
    assert_eq!(before.len(), 4);

    let restarted = start(&fixture);
    assert_eq!(path(&restarted).await, before);
    let tree = restarted.send(GetTree).await.unwrap();
    let roles: Vec<MessageRole> = tree.iter().map(|(node, _)| node.role).collect();
    assert_eq!(
        roles,
        [
            MessageRole::User,
            MessageRole::Assistant,
            MessageRole::User,
            MessageRole::Assistant
        ]
    );
}

#[actix::test]
async fn a_message_may_be_images_alone_and_its_parts_name_them() {
    use crate::chat::attachments::{Attachments, ImagePart, image::TEST_PNG};
    let fixture = fixture().await;
    let attachments = Attachments::new(
        fixture.db.clone(),
        crate::storage::Storage::directory(fixture._dir.path()),
        crate::config::AttachmentsConfig::default(),
    );
    let row = attachments
        .store(&fixture.chat, &fixture.user, TEST_PNG.to_vec())
        .await
        .unwrap();
    let images = attachments
        .parts_of(&fixture.user, &fixture.chat, std::slice::from_ref(&row.id))
        .await
        .unwrap();
    let session = start(&fixture);
    let (_, started) = begin(
        &session,
        &fixture,
        Turn::Send {
            parent_id: None,
            content: String::new(),
            images: images.clone(),
        },
    )
    .await
    .unwrap();
    let stored = &started.context[0];
    assert_eq!(ImagePart::of_parts(stored.parts.as_ref()), images);
    let linked = entities::attachments::Entity::find_by_id(row.id)
        .one(&fixture.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(linked.message_id, Some(started.user_message_id));
}

#[actix::test]
async fn an_answers_reasoning_is_stored_beside_it_and_a_new_session_loads_it() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let (run, started) = begin(&session, &fixture, send("think first"))
        .await
        .unwrap();
    let thought = crate::chat::tree::Reasoning {
        text: "The user wants me to think.".into(),
        duration_ms: 2_400,
    };
    session
        .send(CompleteTurn {
            reasoning: Some(thought.clone()),
            ..completion(run, &started.user_message_id, "Done thinking.")
        })
        .await
        .unwrap()
        .unwrap();

    let restarted = start(&fixture);
    let active = restarted.send(GetActivePath).await.unwrap();
    let answer = active.last().unwrap();
    assert_eq!(answer.content.as_deref(), Some("Done thinking."));
    assert_eq!(answer.reasoning.as_ref(), Some(&thought));
}

/// A turn is given its chat's memories like its user message (the message a regenerated answer
/// replies to) as it asks, from the one `BeginTurn`; a turn that asks for none gets none.
#[actix::test]
async fn a_turn_recalls_the_memories_like_its_message_as_it_asks() {
    use crate::chat::memory::{Embedded, SaveMemory};
    use crate::retrieval::embed::Embedder;
    let fixture = fixture().await;
    let session = start(&fixture);
    let recall = Some(Recall {
        limit: 5,
        min_relevance: 0.3,
    });
    let question = "What do I like to cook on Sundays?";
    let (_, before) = begin_recalling(&session, &fixture, send(question), recall)
        .await
        .unwrap();
    assert!(before.memories.is_empty(), "no memory yet");
    let embedder = HashEmbedder::default();
    for fact in [
        "The user likes to cook risotto on Sundays",
        "The staging database password rotates every Monday",
    ] {
        let vector = embedder
            .embed(vec![fact.to_string()])
            .await
            .unwrap()
            .remove(0);
        session
            .send(SaveMemory {
                content: fact.into(),
                category: "fact".into(),
                embedded: Embedded {
                    vector,
                    embedder: embedder.id().to_string(),
                },
                duplicate_threshold: 0.99,
                distinct: Vec::new(),
                max_per_chat: 10,
            })
            .await
            .unwrap()
            .unwrap();
    }
    let contents = |started: &TurnStarted| -> Vec<String> {
        started.memories.iter().map(|m| m.content.clone()).collect()
    };
    let (run, sent) = begin_recalling(&session, &fixture, send(question), recall)
        .await
        .unwrap();
    assert_eq!(
        contents(&sent),
        ["The user likes to cook risotto on Sundays"]
    );
    let (_, unasked) = begin(&session, &fixture, send(question)).await.unwrap();
    assert!(unasked.memories.is_empty());
    let answer_id = answer(&session, run, &sent, "Risotto.").await.unwrap();
    let (_, regenerated) = begin_recalling(
        &session,
        &fixture,
        Turn::Regenerate {
            message_id: answer_id,
        },
        recall,
    )
    .await
    .unwrap();
    assert_eq!(contents(&regenerated), contents(&sent));
    let (_, none_kept) = begin_recalling(
        &session,
        &fixture,
        send(question),
        Some(Recall {
            limit: 0,
            min_relevance: 0.0,
        }),
    )
    .await
    .unwrap();
    assert!(none_kept.memories.is_empty());
}

/// A caller told a turn's start before its write (`taken`) gets what the write then confirms;
/// a write that fails after the turn was taken takes it back: the branch is as it was, and
/// nothing of the turn is stored.
#[actix::test]
async fn a_turn_taken_before_its_write_is_taken_back_if_the_write_fails() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let contents = |started: &TurnStarted| -> Vec<String> {
        started
            .context
            .iter()
            .map(|node| node.content.clone().unwrap_or_default())
            .collect()
    };
    let begin_taken = |content: &str, new_chat: Option<entities::chats::Model>| {
        let (taken, on_taken) = tokio::sync::oneshot::channel();
        let begun = session.send(BeginTurn {
            new_chat,
            taken: Some(taken),
            ..begin_message(&fixture, send(content))
        });
        async move { (begun.await.unwrap(), on_taken.await) }
    };
    let (written, taken) = begin_taken("first", None).await;
    let written = written.unwrap();
    let taken = taken.expect("told before the write");
    assert_eq!(contents(&taken), ["first"]);
    assert_eq!(contents(&written), contents(&taken));
    assert_eq!(written.user_message_id, taken.user_message_id);
    // The chat's own row again: the write fails on its key, after the turn was taken.
    let chat = entities::chats::Entity::find_by_id(fixture.chat.clone())
        .one(&fixture.db)
        .await
        .unwrap()
        .unwrap();
    let (failed, taken) = begin_taken("second", Some(chat)).await;
    assert!(matches!(failed, Err(ChatError::Database(_))), "{failed:?}");
    assert_eq!(contents(&taken.unwrap()), ["first", "second"]);
    assert_eq!(path(&session).await, ["first"]);
    let (_, next) = begin(&session, &fixture, send("third")).await.unwrap();
    assert_eq!(contents(&next), ["first", "third"]);
    let stored: Vec<String> = entities::messages::Entity::find()
        .all(&fixture.db)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|message| message.content)
        .collect();
    assert!(
        !stored.iter().any(|content| content == "second"),
        "{stored:?}"
    );
    assert_eq!(stored.len(), 2, "{stored:?}");
}

/// A run waiting on `stored` is told by the writer that its answer is durable, with the id the
/// session then answers with; a write that fails tells it why and leaves the branch alone.
#[actix::test]
async fn a_run_is_told_by_the_writer_that_its_answer_is_stored() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let (run, started) = begin(&session, &fixture, send("hello")).await.unwrap();
    let (told, stored) = tokio::sync::oneshot::channel();
    let replied = session
        .send(CompleteTurn {
            stored: Some(told),
            ..completion(run.clone(), &started.user_message_id, "hi")
        })
        .await
        .unwrap()
        .unwrap();
    let id = stored
        .await
        .unwrap()
        .unwrap()
        .expect("an answer was stored");
    assert_eq!(replied.as_ref(), Some(&id));
    let row = entities::messages::Entity::find_by_id(id.clone())
        .one(&fixture.db)
        .await
        .unwrap()
        .expect("durable when told");
    assert_eq!(row.content.as_deref(), Some("hi"));
    assert_eq!(path(&session).await, ["hello", "hi"]);

    // An answer to a message that does not exist: its write fails on the parent's key.
    let (told, stored) = tokio::sync::oneshot::channel();
    let failed = session
        .send(CompleteTurn {
            stored: Some(told),
            ..completion(run, &MessageId::generate(), "lost")
        })
        .await
        .unwrap();
    assert!(matches!(failed, Err(ChatError::Database(_))), "{failed:?}");
    let why = stored.await.unwrap().unwrap_err();
    assert!(why.contains("FOREIGN KEY"), "{why}");
    assert_eq!(path(&session).await, ["hello", "hi"]);
}

/// A new chat's opening message, made by its caller, starts the turn the caller foretold from
/// it alone (`opening_start`): the same message, context and nothing recalled or cancelled. A
/// chat that has a message refuses one and keeps what it has.
#[actix::test]
async fn an_opening_message_starts_the_turn_its_caller_foretold_and_only_in_an_empty_chat() {
    let fixture = fixture().await;
    let session = start(&fixture);
    let run_id = RunId::generate();
    let node = opening_message("What is 2+2?", &[], &run_id).unwrap();
    assert!(!node.tokens.is_counted());
    let (node, foretold) = opening_start(node, Some(1_000)).await.unwrap();
    // Counted once, by the caller: the session takes the count with the node.
    assert!(node.tokens.is_counted());
    let opening = Turn::Opening {
        node: Box::new(node.clone()),
    };
    let message = BeginTurn {
        run_id: run_id.clone(),
        history_budget: Some(1_000),
        ..begin_message(&fixture, opening)
    };
    let (_, started) = begin_sending(&session, message).await.unwrap();
    let ids = |context: &[MessageNode]| context.iter().map(|n| n.id.clone()).collect::<Vec<_>>();
    assert_eq!(started.user_message_id, node.id);
    assert_eq!(foretold.user_message_id, node.id);
    assert_eq!(ids(&started.context), ids(&foretold.context));
    assert_eq!(ids(&started.context), std::slice::from_ref(&node.id));
    assert_eq!(started.left_out, foretold.left_out);
    assert!(foretold.memories.is_empty() && foretold.cancelled_asks.is_empty());
    let stored = entities::messages::Entity::find_by_id(node.id.clone())
        .one(&fixture.db)
        .await
        .unwrap()
        .expect("the opening message is stored");
    assert_eq!(
        (stored.seq, stored.run_id),
        (node.seq, Some(run_id.clone()))
    );
    answer(&session, run_id, &started, "4").await;
    assert_eq!(path(&session).await, ["What is 2+2?", "4"]);

    let late = opening_message("Hello?", &[], &RunId::generate()).unwrap();
    let refused = begin(
        &session,
        &fixture,
        Turn::Opening {
            node: Box::new(late.clone()),
        },
    )
    .await;
    assert!(matches!(refused, Err(ChatError::NotNew)), "{refused:?}");
    let kept = entities::messages::Entity::find_by_id(late.id)
        .one(&fixture.db)
        .await
        .unwrap();
    assert!(kept.is_none());
    assert_eq!(path(&session).await, ["What is 2+2?", "4"]);
    assert!(matches!(
        opening_message("   ", &[], &RunId::generate()),
        Err(ChatError::EmptyContent)
    ));
}

/// A new chat's first turn stores the chat in the turn's own transaction with its active leaf
/// (the user's message) and `updated_at` already set: durable as soon as the turn is begun,
/// with no update of the chat before the answer.
#[actix::test]
async fn a_new_chats_first_turn_stores_the_chat_already_on_its_message() {
    let fixture = fixture().await;
    let registry = registry(&fixture);
    let (draft, _agent) = crate::chat::Chats::new(fixture.db.clone())
        .draft_for(&fixture.user, None, false, None, None, None)
        .await
        .unwrap();
    assert!(draft.active_leaf_id.is_none());
    let session = registry.new_session(&draft.id).await.unwrap();
    let message = BeginTurn {
        new_chat: Some(draft.clone()),
        ..begin_message(&fixture, send("first words"))
    };
    let (run_id, started) = begin_sending(&session, message).await.unwrap();
    let stored = entities::chats::Entity::find_by_id(draft.id.clone())
        .one(&fixture.db)
        .await
        .unwrap()
        .expect("the chat is stored with its first turn");
    assert_eq!(stored.active_leaf_id, Some(started.user_message_id.clone()));
    assert!(stored.updated_at >= draft.created_at);
    assert_eq!(
        (&stored.user_id, &stored.title, &stored.agent_id),
        (&draft.user_id, &draft.title, &draft.agent_id)
    );
    let run = entities::runs::Entity::find_by_id(run_id.clone())
        .one(&fixture.db)
        .await
        .unwrap()
        .expect("the run is stored with it");
    assert_eq!(run.user_message_id, Some(started.user_message_id.clone()));
    let reply = answer(&session, run_id, &started, "hello back")
        .await
        .unwrap();
    let stored = entities::chats::Entity::find_by_id(draft.id.clone())
        .one(&fixture.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.active_leaf_id, Some(reply));
    assert_eq!(path(&session).await, ["first words", "hello back"]);
}

#[actix::test]
async fn a_runs_draft_and_the_chats_summary_are_written_by_the_group_commits_writer() {
    let fixture = fixture().await;
    let on_writer = prometheus::IntCounter::new("statements", "on the writer").unwrap();
    let session =
        registry_counting(&fixture, Some(on_writer.clone())).session_unclustered(&fixture.chat);
    let (run_id, started) = begin(&session, &fixture, send("a long answer, please"))
        .await
        .unwrap();
    let before = on_writer.get();

    // A streaming run's draft (every second, for each of thousands of streams) and the chat's
    // summary join the writer's batches: one statement each there, none through the pool.
    session
        .send(SaveDraft {
            run_id: run_id.clone(),
            content: "Half of the answer".into(),
        })
        .await
        .unwrap();
    assert_eq!(on_writer.get(), before + 1);
    let summary = persistence::HistorySummary {
        from: 0,
        covers: 1,
        digest: "d1".into(),
        text: "The user asked for a long answer.".into(),
    };
    session
        .send(StoreHistorySummary(summary.clone()))
        .await
        .unwrap();
    assert_eq!(on_writer.get(), before + 2);

    let run = entities::runs::Entity::find_by_id(run_id.clone())
        .one(&fixture.db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.draft.as_deref(), Some("Half of the answer"));
    assert_eq!(
        persistence::history_summary(&fixture.db, &fixture.chat)
            .await
            .unwrap(),
        Some(summary)
    );

    // The draft of a run that has ended is not written over its answer.
    answer(&session, run_id.clone(), &started, "The whole answer").await;
    session
        .send(SaveDraft {
            run_id: run_id.clone(),
            content: "a late draft".into(),
        })
        .await
        .unwrap();
    let run = entities::runs::Entity::find_by_id(run_id)
        .one(&fixture.db)
        .await
        .unwrap()
        .unwrap();
    assert_ne!(run.draft.as_deref(), Some("a late draft"));
}
