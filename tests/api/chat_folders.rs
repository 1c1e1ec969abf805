//! Chats organised (issue 50 point 4): pinned chats list first, folders (one level) hold chats
//! and give them back when deleted, archived chats leave the list until restored, all of it
//! stored on the server, each user's own, and bad input refused with a stable code.

use serde_json::{Value, json};

use crate::client::Call;
use crate::helpers::{TestApp, error_body, race_to_the_cap, spawn_app};

/// The titles of the caller's chat list (`query`: what follows `?`, or nothing).
async fn listed_titles(app: &TestApp, query: &str) -> Vec<String> {
    let listed: Value = app
        .chat_api()
        .list_chats()
        .with_query(query)
        .read_json()
        .await;
    listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|chat| chat["title"].as_str().unwrap().to_string())
        .collect()
}

/// PATCHes chat `id` with `body` and returns the answer's status and JSON.
async fn patch_chat(app: &TestApp, id: &str, body: Value) -> (u16, Value) {
    let response = app.chat_api().update_chat(id).json(&body).call().await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

async fn create_folder(app: &TestApp, name: &str) -> Value {
    let response = app
        .chat_api()
        .create_folder()
        .json(&json!({"name": name}))
        .call()
        .await;
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

fn id(value: &Value) -> &str {
    value["id"].as_str().unwrap()
}

#[actix_web::test]
async fn pinned_chats_list_first_latest_pin_first_until_unpinned() {
    let app = spawn_app().await;
    let oldest = app.create_chat("Oldest").await;
    let middle = app.create_chat("Middle").await;
    app.create_chat("Newest").await;
    assert_eq!(
        listed_titles(&app, "").await,
        ["Newest", "Middle", "Oldest"]
    );

    let (status, pinned) = patch_chat(&app, id(&oldest), json!({"pinned": true})).await;
    assert_eq!(status, 200);
    assert_eq!(pinned["pinned"], true);
    assert!(pinned["pinned_at"].is_string(), "{pinned}");
    patch_chat(&app, id(&middle), json!({"pinned": true})).await;
    assert_eq!(
        listed_titles(&app, "").await,
        ["Middle", "Oldest", "Newest"],
        "pinned first, the latest pin first"
    );
    // Pinning a pinned chat again keeps its place.
    let (_, again) = patch_chat(&app, id(&oldest), json!({"pinned": true})).await;
    assert_eq!(again["pinned_at"], pinned["pinned_at"]);

    let (_, unpinned) = patch_chat(&app, id(&middle), json!({"pinned": false})).await;
    assert_eq!(
        (&unpinned["pinned"], &unpinned["pinned_at"]),
        (&json!(false), &Value::Null)
    );
    assert_eq!(
        listed_titles(&app, "").await,
        ["Oldest", "Newest", "Middle"]
    );
    // The pin is the server's: a chat read on its own says so too.
    let fetched: Value = app.chat_api().chat(id(&oldest)).read_json().await;
    assert_eq!(fetched["pinned"], true);
}

#[actix_web::test]
async fn folders_are_made_renamed_and_deleted_and_their_chats_survive_them() {
    let app = spawn_app().await;
    let chat = app.create_chat("Quarterly report").await;
    let other = app.create_chat("Groceries").await;
    let work = create_folder(&app, "  Work ").await;
    assert_eq!(work["name"], "Work");
    assert!(id(&work).starts_with("fld_"), "{work}");
    let home = create_folder(&app, "Home").await;
    assert!(home["position"].as_i64() > work["position"].as_i64());

    let (status, moved) = patch_chat(&app, id(&chat), json!({"folder_id": id(&work)})).await;
    assert_eq!(status, 200);
    assert_eq!(moved["folder_id"], work["id"]);
    patch_chat(&app, id(&other), json!({"folder_id": id(&home)})).await;
    // Moving it on to another folder, then out of any.
    let (_, moved) = patch_chat(&app, id(&other), json!({"folder_id": id(&work)})).await;
    assert_eq!(moved["folder_id"], work["id"]);
    let (_, out) = patch_chat(&app, id(&other), json!({"folder_id": null})).await;
    assert_eq!(out["folder_id"], Value::Null);
    // A change without `folder_id` leaves the folder alone.
    let (_, renamed) = patch_chat(&app, id(&chat), json!({"title": "Q3 report"})).await;
    assert_eq!(renamed["folder_id"], work["id"]);

    let response = app
        .chat_api()
        .rename_folder(id(&work))
        .json(&json!({"name": "Office"}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    let listed: Value = app.chat_api().folders().read_json().await;
    let names: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|folder| folder["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Office", "Home"]);

    let response = app.chat_api().delete_folder(id(&work)).call().await;
    assert_eq!(response.status(), 200);
    let deleted: Value = response.json().await.unwrap();
    assert_eq!(deleted["chats_moved_out"], 1);
    let kept: Value = app.chat_api().chat(id(&chat)).read_json().await;
    assert_eq!(kept["title"], "Q3 report", "the folder's chat is kept");
    assert_eq!(kept["folder_id"], Value::Null, "and is in no folder");
    let listed: Value = app.chat_api().folders().read_json().await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
    let again = app.chat_api().delete_folder(id(&work)).call().await;
    assert_eq!(again.status(), 404);
    // A chat cannot be moved into a folder that is gone.
    let (status, body) = patch_chat(&app, id(&chat), json!({"folder_id": id(&work)})).await;
    assert_eq!((status, &body["error"]["code"]), (404, &json!("not_found")));
}

#[actix_web::test]
async fn an_archived_chat_leaves_the_list_stays_readable_and_comes_back_when_restored() {
    let app = spawn_app().await;
    let kept = app.create_chat("Kept").await;
    let old = app.create_chat("Old project").await;
    patch_chat(&app, id(&old), json!({"pinned": true})).await;

    let (status, archived) = patch_chat(&app, id(&old), json!({"archived": true})).await;
    assert_eq!(status, 200);
    assert_eq!(archived["archived"], true);
    assert!(archived["archived_at"].is_string());
    assert_eq!(listed_titles(&app, "").await, ["Kept"]);
    assert_eq!(listed_titles(&app, "archived=true").await, ["Old project"]);
    assert_eq!(listed_titles(&app, "archived=false").await, ["Kept"]);
    // Still there to read (and to search).
    let fetched: Value = app.chat_api().chat(id(&old)).read_json().await;
    assert_eq!(fetched["archived"], true);

    let (_, restored) = patch_chat(&app, id(&old), json!({"archived": false})).await;
    assert_eq!(restored["archived_at"], Value::Null);
    assert_eq!(
        listed_titles(&app, "").await,
        ["Old project", "Kept"],
        "restored where it was, pinned"
    );
    assert!(listed_titles(&app, "archived=true").await.is_empty());
    let _ = kept;
}

#[actix_web::test]
async fn another_users_folders_cannot_be_seen_changed_or_filled() {
    let app = spawn_app().await;
    let mine = create_folder(&app, "Private").await;
    let eve = app.create_user_with_key("eve").await;
    let as_eve = app.as_key(&eve).chat_api();

    let listed: Value = as_eve.folders().read_json().await;
    assert_eq!(listed["data"], json!([]));
    for request in [
        as_eve.rename_folder(id(&mine)),
        as_eve.delete_folder(id(&mine)),
    ] {
        let what = request.describe();
        let response = request.json(&json!({"name": "pwned"})).call().await;
        assert_eq!(response.status(), 404, "{what}");
        assert_eq!(error_body(response).await["code"], "not_found");
    }
    // Eve cannot file her chat in my folder, nor my chat in hers.
    let response = as_eve
        .create_chat()
        .json(&json!({"title": "Eve's"}))
        .call()
        .await;
    let eves_chat: Value = response.json().await.unwrap();
    let response = as_eve
        .update_chat(id(&eves_chat))
        .json(&json!({"folder_id": id(&mine), "pinned": true}))
        .call()
        .await;
    assert_eq!(response.status(), 404);
    assert_eq!(error_body(response).await["message"], "folder not found");
    let unchanged: Value = as_eve.chat(id(&eves_chat)).read_json().await;
    assert_eq!(
        (&unchanged["folder_id"], &unchanged["pinned"]),
        (&Value::Null, &json!(false)),
        "nothing of a refused change is applied"
    );
    let my_chat = app.create_chat("Mine").await;
    let response = as_eve
        .update_chat(id(&my_chat))
        .json(&json!({"archived": true}))
        .call()
        .await;
    assert_eq!(response.status(), 404);
    let listed: Value = app.chat_api().folders().read_json().await;
    assert_eq!(listed["data"][0]["name"], "Private");
    assert_eq!(listed_titles(&app, "").await, ["Mine"]);
}

#[actix_web::test]
async fn bad_folder_and_placement_input_is_refused_with_its_code() {
    let app = spawn_app().await;
    let chat = app.create_chat("Chat").await;
    let work = create_folder(&app, "Work").await;
    for (body, status, code) in [
        (json!({"name": "   "}), 400, "invalid_folder_name"),
        (json!({"name": "x".repeat(81)}), 400, "invalid_folder_name"),
        (json!({"name": "a\nb"}), 400, "invalid_folder_name"),
        (json!({"name": "WORK"}), 400, "folder_name_taken"),
        (json!({"name": "Work", "parent": "x"}), 400, "invalid_json"),
        (json!({}), 400, "invalid_json"),
    ] {
        let response = app.chat_api().create_folder().json(&body).call().await;
        assert_eq!(response.status(), status, "{body}");
        assert_eq!(error_body(response).await["code"], code, "{body}");
    }
    let home = create_folder(&app, "Home").await;
    let response = app
        .chat_api()
        .rename_folder(id(&home))
        .json(&json!({"name": "work"}))
        .call()
        .await;
    assert_eq!(response.status(), 400);
    assert_eq!(error_body(response).await["code"], "folder_name_taken");
    // Renaming a folder to its own name (another case) is fine.
    let response = app
        .chat_api()
        .rename_folder(id(&work))
        .json(&json!({"name": "WORK"}))
        .call()
        .await;
    assert_eq!(response.status(), 200);

    for body in [
        json!({"pinned": "yes"}),
        json!({"archived": 1}),
        json!({"folder_id": 7}),
    ] {
        let (status, answer) = patch_chat(&app, id(&chat), body.clone()).await;
        assert_eq!(
            (status, &answer["error"]["code"]),
            (400, &json!("invalid_json")),
            "{body}"
        );
    }
    let (status, answer) = patch_chat(&app, id(&chat), json!({})).await;
    assert_eq!(status, 400);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("folder_id"),
        "{answer}"
    );
    let (status, _) = patch_chat(&app, id(&chat), json!({"folder_id": "fld_nope"})).await;
    assert_eq!(status, 404);
}

#[actix_web::test]
async fn a_user_has_at_most_a_hundred_folders_even_when_creates_race() {
    let app = spawn_app().await;
    for i in 0..60 {
        create_folder(&app, &format!("Folder {i}")).await;
    }
    race_to_the_cap(40, "too_many_folders", |i| {
        app.chat_api()
            .create_folder()
            .json(&json!({"name": format!("Racer {i}")}))
    })
    .await;
    let listed: Value = app.chat_api().folders().read_json().await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 100);
}
