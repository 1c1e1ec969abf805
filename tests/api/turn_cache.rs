//! What a turn reads before it begins is kept between a chat's turns (issue 48:
//! `chat::turn_cache`), and every change to what is kept shows in the very next turn: the
//! agent's prompt edited, the chat's model or agent changed, a document added or deleted, the
//! chat's agent deleted. Each step is checked in what the upstream model was sent, through the
//! chat API and through `/v1`.

use serde_json::{Value, json};

use crate::client::Call;
use crate::documents::{settled, upload};
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, spawn_app};

/// The last chat completion the upstream was sent (not an embedding request).
fn last_completion(app: &TestApp) -> Value {
    app.upstream
        .received()
        .into_iter()
        .rev()
        .find(|r| r.path.ends_with("/chat/completions"))
        .expect("a completion request")
        .body
}

/// The system prompt of the last completion, or "" when it had none.
fn last_system_prompt(app: &TestApp) -> String {
    let body = last_completion(app);
    let first = &body["messages"][0];
    if first["role"] == "system" {
        first["content"].as_str().unwrap_or_default().to_string()
    } else {
        String::new()
    }
}

/// A turn through the chat API.
async fn turn(app: &TestApp, chat: &str, text: &str) {
    app.upstream.script([Reply::text("Answered.")]);
    app.send_text(chat, text).await;
}

async fn patch(response: reqwest::Response) -> Value {
    let status = response.status();
    let body: Value = response.json().await.unwrap();
    assert!(status.is_success(), "{status}: {body}");
    body
}

#[actix_web::test]
async fn every_change_to_what_a_turn_reads_shows_in_the_next_turn() {
    let app = spawn_app().await;
    let agent = patch(
        app.api()
            .create_agent()
            .json(&json!({"name": "First", "system_prompt": "Prompt one."}))
            .call()
            .await,
    )
    .await;
    let agent_id = agent["id"].as_str().unwrap().to_string();
    let chat: Value = app
        .chat_api()
        .create_chat()
        .json(&json!({"agent_id": agent_id}))
        .read_json()
        .await;
    let chat = chat["id"].as_str().unwrap().to_string();

    turn(&app, &chat, "one").await;
    assert!(last_system_prompt(&app).starts_with("Prompt one."));
    // Kept now: the same again without a change.
    turn(&app, &chat, "two").await;
    assert!(last_system_prompt(&app).starts_with("Prompt one."));

    // The agent's prompt edited.
    patch(
        app.api()
            .update_agent(&agent_id)
            .json(&json!({"system_prompt": "Prompt two."}))
            .call()
            .await,
    )
    .await;
    turn(&app, &chat, "three").await;
    assert!(
        last_system_prompt(&app).starts_with("Prompt two."),
        "{}",
        last_system_prompt(&app)
    );
    // And through /v1, in the same chat.
    app.upstream.script([Reply::text("Via v1.")]);
    let response = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "x_chat_id": chat,
                      "messages": [{"role": "user", "content": "four"}]}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    assert!(last_system_prompt(&app).starts_with("Prompt two."));

    // The chat's model changed.
    patch(
        app.chat_api()
            .update_chat(&chat)
            .json(&json!({"model": "other-model"}))
            .call()
            .await,
    )
    .await;
    turn(&app, &chat, "five").await;
    assert_eq!(last_completion(&app)["model"], "other-model");

    // A document added, then deleted.
    let uploaded = upload(
        &app,
        &chat,
        "field-notes.txt",
        b"Notes on the field.".to_vec(),
    )
    .await;
    assert!(uploaded.status().is_success(), "{}", uploaded.status());
    let list = settled(&app, &chat).await;
    turn(&app, &chat, "six").await;
    assert!(
        last_system_prompt(&app).contains("field-notes.txt"),
        "the new document is listed: {}",
        last_system_prompt(&app)
    );
    let document = list["documents"][0]["artifact_id"]
        .as_str()
        .expect("the uploaded document's id")
        .to_string();
    let deleted = app
        .chat_api()
        .delete_document(&chat, &document)
        .call()
        .await;
    assert!(deleted.status().is_success(), "{}", deleted.status());
    turn(&app, &chat, "seven").await;
    assert!(
        !last_system_prompt(&app).contains("field-notes.txt"),
        "the deleted document is no longer listed"
    );

    // The chat moved to another agent, which is then deleted: the owner's default follows.
    let second = patch(
        app.api()
            .create_agent()
            .json(&json!({"name": "Second", "system_prompt": "Prompt three."}))
            .call()
            .await,
    )
    .await;
    let second_id = second["id"].as_str().unwrap().to_string();
    patch(
        app.chat_api()
            .update_chat(&chat)
            .json(&json!({"agent_id": second_id}))
            .call()
            .await,
    )
    .await;
    turn(&app, &chat, "eight").await;
    assert!(last_system_prompt(&app).starts_with("Prompt three."));
    let removed = app.api().delete_agent(&second_id).call().await;
    assert!(removed.status().is_success(), "{}", removed.status());
    turn(&app, &chat, "nine").await;
    let prompt = last_system_prompt(&app);
    assert!(
        !prompt.contains("Prompt three.") && !prompt.contains("Prompt two."),
        "the default agent's prompt, not a deleted agent's: {prompt}"
    );
}

#[actix_web::test]
async fn a_new_chats_default_agent_edited_between_turns_is_read_again() {
    let app = spawn_app().await;
    app.upstream
        .script([Reply::text("First."), Reply::text("Second.")]);
    let first = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model",
                      "messages": [{"role": "user", "content": "Hello"}]}))
        .call()
        .await;
    assert_eq!(first.status(), 200);
    let first: Value = first.json().await.unwrap();
    let chat = first["x_chat_id"].as_str().unwrap().to_string();
    assert!(!last_system_prompt(&app).contains("Be brief."));

    // The owner's default agent (the new chat's) gets a prompt.
    let agents: Value = app.api().agents().read_json().await;
    let default = agents["agents"]
        .as_array()
        .expect("a list of agents")
        .iter()
        .find(|a| a["is_default"] == true)
        .expect("the default agent")["id"]
        .as_str()
        .unwrap()
        .to_string();
    patch(
        app.api()
            .update_agent(&default)
            .json(&json!({"system_prompt": "Be brief."}))
            .call()
            .await,
    )
    .await;
    let second = app
        .openai()
        .chat_completions()
        .json(&json!({"model": "fake-model", "x_chat_id": chat,
                      "messages": [{"role": "user", "content": "Again"}]}))
        .call()
        .await;
    assert_eq!(second.status(), 200);
    assert!(last_system_prompt(&app).starts_with("Be brief."));
}

/// A chat the chat API just made keeps what its first turn would read back (its row, its
/// agent, no documents) and starts its session empty: a document uploaded and its agent
/// edited before that first turn still show in it, and so does everything the turn stored.
#[actix_web::test]
async fn a_chat_just_made_sees_what_changed_before_its_first_turn() {
    let app = spawn_app().await;
    let agent = patch(
        app.api()
            .create_agent()
            .json(&json!({"name": "Early", "system_prompt": "Before the edit."}))
            .call()
            .await,
    )
    .await;
    let agent_id = agent["id"].as_str().unwrap().to_string();
    let chat = patch(
        app.chat_api()
            .create_chat()
            .json(&json!({"title": "Just made", "agent_id": agent_id}))
            .call()
            .await,
    )
    .await;
    let chat = chat["id"].as_str().unwrap().to_string();
    patch(
        app.api()
            .update_agent(&agent_id)
            .json(&json!({"system_prompt": "After the edit."}))
            .call()
            .await,
    )
    .await;
    let uploaded = upload(&app, &chat, "early-notes.txt", b"Notes.".to_vec()).await;
    assert!(uploaded.status().is_success(), "{}", uploaded.status());
    settled(&app, &chat).await;

    turn(&app, &chat, "first").await;
    let prompt = last_system_prompt(&app);
    assert!(prompt.contains("After the edit."), "{prompt}");
    assert!(prompt.contains("early-notes.txt"), "{prompt}");

    turn(&app, &chat, "second").await;
    let said: Vec<String> = last_completion(&app)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(said, ["first", "Answered.", "second"]);
}
