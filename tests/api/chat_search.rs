//! `GET /chat/api/search`: the caller's messages across all their chats, ranked by BM25, with
//! snippets whose matching words are marked; kept up to date as messages are stored and chats
//! deleted, never showing another user's messages, and caught up from the database after the
//! index is lost (or a message is written by another process). And in the browser: the
//! sidebar's search finds a word from an old message and opens its chat at it.

use std::time::Duration;

use serde_json::{Value, json};

use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, error_body, eventually, spawn_app, spawn_app_with};

/// The longest an indexed message may take to be found: the indexer batches within 50 ms and
/// catches up from the database every 2 s; a loaded test machine stretches both.
const INDEXED_WITHIN: Duration = Duration::from_secs(15);

async fn search_as(app: &TestApp, key: &str, query: &str) -> reqwest::Response {
    app.http
        .get(app.url(&format!("/chat/api/search?{query}")))
        .bearer_auth(key)
        .send()
        .await
        .expect("search")
}

/// The results of searching `q` as the admin.
async fn search(app: &TestApp, q: &str) -> Vec<Value> {
    // The tests' queries are plain words.
    let query = format!("q={}", q.replace(' ', "+"));
    let response = search_as(app, &app.api_key, &query).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    body["data"].as_array().unwrap().clone()
}

/// Waits until searching `q` finds `count` messages, and returns them.
async fn found(app: &TestApp, q: &str, count: usize) -> Vec<Value> {
    let what = format!("{count} result(s) for {q:?}");
    eventually(&what, INDEXED_WITHIN, || async {
        let hits = search(app, q).await;
        (hits.len() == count).then_some(hits)
    })
    .await
}

/// A chat titled `title` where the admin said `said` and the model answered `answered`.
async fn chat_with(app: &TestApp, title: &str, said: &str, answered: &str) -> String {
    let chat = app.create_chat(title).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.upstream.script([Reply::text(answered)]);
    app.send_text(&chat, said).await;
    chat
}

/// The marked words of a hit's snippet (`highlights` count UTF-16 units).
fn marked(hit: &Value) -> Vec<String> {
    let units: Vec<u16> = hit["snippet"]["text"]
        .as_str()
        .unwrap()
        .encode_utf16()
        .collect();
    hit["snippet"]["highlights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|range| {
            let (start, end) = (range[0].as_u64().unwrap(), range[1].as_u64().unwrap());
            String::from_utf16(&units[start as usize..end as usize]).unwrap()
        })
        .collect()
}

#[actix_web::test]
async fn a_word_from_an_old_message_is_found_in_every_chat_with_its_title_and_marked() {
    let app = spawn_app().await;
    let trip = chat_with(
        &app,
        "Trip planning",
        "Remember: the ferry leaves from the old pier at dawn.",
        "Noted — the pier by the fish market.",
    )
    .await;
    let recipes = chat_with(
        &app,
        "Recipes",
        "Grandma's soup, as cooked on the pier in summer",
        "A lovely soup.",
    )
    .await;
    chat_with(&app, "Unrelated", "Nothing about that here", "Indeed.").await;

    let hits = found(&app, "pier", 3).await;
    let chats: Vec<&str> = hits
        .iter()
        .map(|hit| hit["chat_id"].as_str().unwrap())
        .collect();
    assert!(
        chats.contains(&trip.as_str()) && chats.contains(&recipes.as_str()),
        "{hits:?}"
    );
    for hit in &hits {
        assert_eq!(marked(hit), ["pier"], "{hit}");
        assert!(hit["message_id"].is_string(), "{hit}");
        assert!(hit["created_at"].is_string(), "{hit}");
    }
    let answer = hits
        .iter()
        .find(|hit| hit["role"] == "assistant")
        .expect("the model's answer is found too");
    assert_eq!(answer["chat_title"], "Trip planning");
    let snippet = answer["snippet"]["text"].as_str().unwrap();
    assert!(
        snippet.starts_with("Noted — the pier by the fish market"),
        "{snippet}"
    );
    // The message's id is the one the chat lists.
    let messages: Value = app.chat_api().messages(&trip).read_json().await;
    let ids: Vec<&str> = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(
        ids.contains(&answer["message_id"].as_str().unwrap()),
        "{messages}"
    );
}

#[actix_web::test]
async fn the_message_with_more_of_the_words_ranks_first_and_forms_of_a_word_match() {
    let app = spawn_app().await;
    chat_with(&app, "One", "the lighthouse keeper", "ok").await;
    chat_with(&app, "Two", "a lighthouse", "ok").await;
    chat_with(&app, "Three", "the keeper was running", "ok").await;

    let hits = found(&app, "lighthouse keeper", 3).await;
    assert_eq!(hits[0]["chat_title"], "One", "{hits:?}");
    assert!(hits[0]["score"].as_f64() > hits[1]["score"].as_f64());
    // Stems: "runs" finds "running".
    let runs = found(&app, "runs", 1).await;
    assert_eq!(runs[0]["chat_title"], "Three");
    // A limit holds.
    let query = "q=lighthouse+keeper&limit=1";
    let one: Value = search_as(&app, &app.api_key, query)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(one["data"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn a_deleted_chat_is_no_longer_found() {
    let app = spawn_app().await;
    let kept = chat_with(&app, "Kept", "a walrus on the beach", "ok").await;
    let gone = chat_with(&app, "Gone", "another walrus", "ok").await;
    found(&app, "walrus", 2).await;

    let deleted = app.chat_api().delete_chat(&gone).call().await;
    assert!(deleted.status().is_success(), "{}", deleted.status());
    // At once (a search checks its hits against the database) and in the index itself.
    let hits = search(&app, "walrus").await;
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["chat_id"], kept.as_str());
    let index_dir = app
        .data_dir
        .path()
        .join("chat_search/users")
        .read_dir()
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    eventually(
        "the deleted chat's messages leave the index",
        INDEXED_WITHIN,
        || async {
            let index = colloquy::chat::search::MessageIndex::open_existing(
                &index_dir,
                colloquy::retrieval::Stemming::default(),
            )
            .unwrap()
            .unwrap();
            let left = index.search("walrus", 10).unwrap();
            (left.len() == 1).then_some(())
        },
    )
    .await;
}

#[actix_web::test]
async fn another_user_never_sees_my_messages() {
    let app = spawn_app().await;
    chat_with(&app, "Mine", "my secret word is quokka", "ok").await;
    found(&app, "quokka", 1).await;

    let bea = app.create_user_with_key("bea").await;
    let chat = app
        .as_key(&bea)
        .new_chat_with(&json!({"title": "Bea's"}))
        .await;
    app.upstream.script([Reply::text("fine")]);
    let sent = app
        .as_key(&bea)
        .chat_api()
        .send_message(&chat)
        .json(&json!({"content": "bea also says quokka"}))
        .call()
        .await;
    assert_eq!(sent.status(), 200);
    crate::sse::read_all(sent).await;

    let bea_hits = eventually("Bea finds her own message", INDEXED_WITHIN, || async {
        let body: Value = search_as(&app, &bea, "q=quokka")
            .await
            .json()
            .await
            .unwrap();
        let hits = body["data"].as_array().unwrap().clone();
        (!hits.is_empty()).then_some(hits)
    })
    .await;
    assert_eq!(bea_hits.len(), 1, "{bea_hits:?}");
    assert_eq!(bea_hits[0]["chat_title"], "Bea's");
    let mine = search(&app, "quokka").await;
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["chat_title"], "Mine");
    // Signed out, nothing.
    let anonymous = app
        .http
        .get(app.url("/chat/api/search?q=quokka"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);

    // Bea's account deleted: her index goes with it; mine stays.
    let users: Value = app.admin().users().read_json().await;
    let bea_id = users["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|user| user["username"] == "bea")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let bea_dir = app.data_dir.path().join("chat_search/users").join(&bea_id);
    assert!(bea_dir.exists());
    let deleted = app
        .admin()
        .delete_user(&bea_id)
        .json(&json!({"confirm": "bea"}))
        .call()
        .await;
    assert!(deleted.status().is_success(), "{}", deleted.status());
    eventually("Bea's index removed", INDEXED_WITHIN, || async {
        (!bea_dir.exists()).then_some(())
    })
    .await;
    assert_eq!(search(&app, "quokka").await.len(), 1);
}

#[actix_web::test]
async fn bad_queries_are_refused_with_stable_codes() {
    let app = spawn_app().await;
    let too_long = format!("q={}", "a".repeat(201));
    for (query, code) in [
        ("q=", "empty_query"),
        ("q=%20%20", "empty_query"),
        ("limit=5", "empty_query"),
        (too_long.as_str(), "query_too_long"),
        ("q=pier&limit=0", "invalid_limit"),
        ("q=pier&limit=51", "invalid_limit"),
    ] {
        let response = search_as(&app, &app.api_key, query).await;
        assert_eq!(response.status(), 400, "{query}");
        assert_eq!(error_body(response).await["code"], code, "{query}");
    }
    let not_a_number = search_as(&app, &app.api_key, "q=pier&limit=many").await;
    assert_eq!(not_a_number.status(), 400);
    // Nothing indexed yet: an empty list, not an error.
    assert!(search(&app, "pier").await.is_empty());
}

#[actix_web::test]
async fn a_lost_index_and_a_message_another_process_wrote_are_caught_up_from_the_database() {
    let app = spawn_app().await;
    let chat = chat_with(&app, "Old", "the capybara from last year", "ok").await;
    found(&app, "capybara", 1).await;

    // The index directory is lost; after a restart the messages are found again.
    std::fs::remove_dir_all(app.data_dir.path().join("chat_search")).unwrap();
    let app = app.restart().await;
    let hits = found(&app, "capybara", 1).await;
    assert_eq!(hits[0]["chat_id"], chat.as_str());

    // A message written straight to the database, as another process would (its chat's
    // `updated_at` moves with it), is found without this process being told.
    written_elsewhere(&app, &chat, "and then an okapi", chrono::Utc::now()).await;
    let okapi = found(&app, "okapi", 1).await;
    assert_eq!(okapi[0]["chat_title"], "Old");
}

/// The catch-up interval of a test that needs several catch-ups.
const CATCH_UP_MS: u64 = 200;

/// A message written straight to the database with `text`, after the last message of `chat`,
/// its chat's `updated_at` set to `updated_at`: as another process would write it.
async fn written_elsewhere(
    app: &TestApp,
    chat: &str,
    text: &str,
    updated_at: chrono::DateTime<chrono::Utc>,
) {
    use sea_orm::{ActiveModelTrait, EntityTrait, Set};
    let messages: Value = app.chat_api().messages(chat).read_json().await;
    let last = messages["data"].as_array().unwrap().last().unwrap().clone();
    entities::messages::ActiveModel {
        id: Set(entities::ids::MessageId::generate()),
        chat_id: Set(entities::ids::ChatId::from_string(chat)),
        parent_id: Set(Some(entities::ids::MessageId::from_string(
            last["id"].as_str().unwrap(),
        ))),
        role: Set(entities::messages::MessageRole::User),
        content: Set(Some(text.into())),
        parts: Set(None),
        tool_calls: Set(None),
        tool_call_id: Set(None),
        run_id: Set(None),
        stop_reason: Set(None),
        reasoning: Set(None),
        reasoning_ms: Set(None),
        model: Set(None),
        seq: Set(100),
        created_at: Set(chrono::Utc::now()),
    }
    .insert(&app.db)
    .await
    .unwrap();
    let mut stored: entities::chats::ActiveModel =
        entities::chats::Entity::find_by_id(entities::ids::ChatId::from_string(chat))
            .one(&app.db)
            .await
            .unwrap()
            .unwrap()
            .into();
    stored.updated_at = Set(updated_at);
    stored.update(&app.db).await.unwrap();
}

#[actix_web::test]
async fn a_message_another_process_committed_late_is_found_once_the_mark_has_passed_it() {
    let app = spawn_app_with(|config| config.search.catch_up_interval_ms = CATCH_UP_MS).await;
    let late = chat_with(&app, "Late", "the first words", "ok").await;
    let ahead = chat_with(&app, "Ahead", "other words", "ok").await;
    found(&app, "words", 2).await;
    // A few catch-ups, so the indexer has a mark and reads from just before it, not from the
    // start as its first catch-ups do.
    tokio::time::sleep(Duration::from_millis(CATCH_UP_MS * 8)).await;

    // A write whose transaction committed half a minute after the time it stamped: each
    // catch-up looks back only a little way before the newest change it has seen.
    let now = chrono::Utc::now();
    written_elsewhere(
        &app,
        &late,
        "a tardy tapir",
        now - chrono::TimeDelta::seconds(30),
    )
    .await;
    // Later changes move the newest seen a minute past it (here, a process whose clock runs
    // ahead): the settling read goes over that stretch of time once more and finds it.
    written_elsewhere(
        &app,
        &ahead,
        "more words",
        now + chrono::TimeDelta::seconds(31),
    )
    .await;
    let hits = found(&app, "tapir", 1).await;
    assert_eq!(hits[0]["chat_title"], "Late");
    // Nothing was indexed twice on the way.
    found(&app, "words", 3).await;
}

#[actix_web::test]
async fn in_the_browser_search_finds_a_word_from_an_old_message_and_opens_the_chat_at_it() {
    let app = crate::browser::browser_app(|_| {}).await;
    // An old chat with the word far up, under many later messages, and another chat.
    let old = app.create_chat("Garden notes").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.upstream.script([Reply::text("Tulips want sun.")]);
    app.send_text(&old, "Plant the marigolds beside the shed.")
        .await;
    for n in 0..12 {
        app.upstream.script([Reply::text(&format!(
            "Answer {n}: water weekly.\n\nMore text."
        ))]);
        app.send_text(
            &old,
            &format!("Question {n} about watering, at some length."),
        )
        .await;
    }
    chat_with(&app, "Newer chat", "Something else entirely", "Right.").await;
    let hits = found(&app, "marigolds", 1).await;
    let message = hits[0]["message_id"].as_str().unwrap().to_string();
    crate::browser::run_scenario(
        &app,
        "chat_search",
        &[("CHAT_ID", old), ("MESSAGE_ID", message)],
    )
    .await;
}
