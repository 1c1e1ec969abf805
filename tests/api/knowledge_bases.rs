//! Knowledge bases over real HTTP: the REST API (create, list, rename, delete, documents by
//! upload, tus or copied from a chat, limits), the same object on `/v1/vector_stores`, agents
//! naming them, `search_knowledge` ranking two knowledge bases and the chat's documents as one
//! (checked in the tool results the fake upstream was sent), and another user's knowledge base
//! a 404 through every surface.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::client::Call;
use crate::documents::{metadata, settled, tus, upload};
use crate::fake_upstream::Reply;
use crate::helpers::{
    TestApp, error_body, eventually, race_to_the_cap, read_every_page, spawn_app, spawn_app_with,
};

async fn create_kb(app: &TestApp, name: &str) -> Value {
    let response = app
        .api()
        .create_knowledge_base()
        .json(&json!({"name": name}))
        .call()
        .await;
    assert_eq!(response.status(), 201, "{:?}", response.text().await);
    response.json().await.unwrap()
}

async fn upload_to_kb(app: &TestApp, kb: &str, filename: &str, text: &str) -> reqwest::Response {
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(text.as_bytes().to_vec()).file_name(filename.to_string()),
    );
    app.api()
        .add_kb_document(kb)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

/// The knowledge base's documents once none is uploading or processing.
async fn kb_settled(app: &TestApp, kb: &str) -> Value {
    eventually(
        "the knowledge base's documents settling",
        Duration::from_secs(90),
        || async {
            let list: Value = app.api().kb_documents(kb).call().await.json().await.ok()?;
            let busy = list["documents"]
                .as_array()?
                .iter()
                .any(|d| d["status"] == "processing" || d["status"] == "uploading");
            (!busy).then_some(list)
        },
    )
    .await
}

fn statuses(list: &Value) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = list["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["filename"].as_str().unwrap().to_string(),
                d["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    found
}

/// What `GET /api/agents/{id}/chat/tools` answers.
async fn tools(app: &TestApp, agent: String) -> Value {
    app.api().agent_tools(&agent).read_json().await
}

/// The tool message the model was sent for `call_id`, as JSON.
fn tool_result(app: &TestApp, call_id: &str) -> Value {
    let received = app.upstream.received();
    let message = received
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool result for {call_id}"));
    serde_json::from_str(message["content"].as_str().unwrap()).unwrap()
}

#[actix_web::test]
async fn search_knowledge_ranks_two_knowledge_bases_and_the_chats_documents_as_one() {
    let app = spawn_app().await;
    let policies = create_kb(&app, "Policies").await;
    let engineering = create_kb(&app, "Engineering").await;
    let policies = policies["id"].as_str().unwrap();
    let engineering = engineering["id"].as_str().unwrap();
    for (kb, filename, text) in [
        (
            policies,
            "travel.md",
            "Travel policy: employees book economy class flights. Business class flights need \
             the approval of a director.",
        ),
        (
            policies,
            "expenses.md",
            "Expense reports are due within thirty days of the purchase, with every receipt \
             attached.",
        ),
        (
            engineering,
            "deploy.md",
            "Production deployments happen on Tuesdays, once the change review board has \
             approved the release.",
        ),
        (
            engineering,
            "oncall.md",
            "The on-call engineer answers pages within fifteen minutes and escalates after an \
             hour.",
        ),
    ] {
        let response = upload_to_kb(&app, kb, filename, text).await;
        assert_eq!(response.status(), 201, "{:?}", response.text().await);
    }
    for kb in [policies, engineering] {
        let list = kb_settled(&app, kb).await;
        assert!(
            statuses(&list)
                .iter()
                .all(|(_, status)| status == "processed"),
            "{list}"
        );
    }
    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Handbook", "knowledge_base_ids": [policies, engineering]}))
        .read_json()
        .await;
    assert_eq!(agent["knowledge_base_ids"], json!([policies, engineering]));
    let chat = app.new_chat_with(&json!({"agent_id": agent["id"]})).await;
    let notes = upload(
        &app,
        &chat,
        "notes.txt",
        b"Meeting notes: the team discussed the quarterly roadmap and the hiring plans.".to_vec(),
    )
    .await;
    assert_eq!(notes.status(), 201);
    settled(&app, &chat).await;

    app.upstream.script([
        Reply::tool_call(
            "tc_deploy",
            "search_knowledge",
            json!({"query": "when do production deployments happen"}),
        )
        .and_tool_call(
            "tc_travel",
            "search_knowledge",
            json!({"query": "approval for business class flights"}),
        )
        .and_tool_call(
            "tc_roadmap",
            "search_knowledge",
            json!({"query": "quarterly roadmap and hiring"}),
        ),
        Reply::text("Found them."),
    ]);
    app.send_text(&chat, "What do our documents say?").await;
    let offered: Vec<String> = app.upstream.received()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        offered.contains(&"search_knowledge".to_string()),
        "{offered:?}"
    );

    let first = |call: &str| tool_result(&app, call)["results"][0].clone();
    let deploy = first("tc_deploy");
    assert_eq!(deploy["filename"], "deploy.md", "{deploy}");
    assert_eq!(deploy["source"], "knowledge_base");
    assert_eq!(deploy["knowledge_base"], "Engineering");
    assert_eq!(deploy["knowledge_base_id"], engineering);
    let travel = first("tc_travel");
    assert_eq!(travel["filename"], "travel.md", "{travel}");
    assert_eq!(travel["knowledge_base"], "Policies");
    let roadmap = first("tc_roadmap");
    assert_eq!(roadmap["filename"], "notes.txt", "{roadmap}");
    assert_eq!(roadmap["source"], "chat");
    assert_eq!(roadmap["knowledge_base"], Value::Null);
    // file_search's shape: the passage, its score in [0, 1], the document's artifact.
    for result in [&deploy, &travel, &roadmap] {
        assert!(result["chunk_text"].as_str().unwrap().len() > 20);
        let score = result["relevance_score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&score), "{result}");
        assert!(result["artifact_id"].as_str().unwrap().starts_with("doc_"));
    }
    // One ranking over every source: the results of a call come from more than one index,
    // best first.
    let all = tool_result(&app, "tc_deploy")["results"].clone();
    let scores: Vec<f64> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["relevance_score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    let sources: Vec<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["knowledge_base"].as_str().unwrap_or("chat"))
        .collect();
    for source in ["Engineering", "Policies", "chat"] {
        assert!(sources.contains(&source), "{sources:?}");
    }
    // Counted like every tool.
    let metrics = app.get("/metrics").await.text().await.unwrap();
    let counted = metrics.lines().find(|line| {
        line.starts_with("colloquy_tool_calls_total{")
            && line.contains("tool=\"search_knowledge\"")
            && line.contains("outcome=\"success\"")
    });
    assert_eq!(
        counted.and_then(|line| line.rsplit(' ').next()),
        Some("3"),
        "{metrics}"
    );
}

#[actix_web::test]
async fn another_users_knowledge_base_is_a_404_through_rest_vector_stores_and_agents() {
    let app = spawn_app().await;
    let kb = create_kb(&app, "Private").await;
    let kb_id = kb["id"].as_str().unwrap().to_string();
    let store_id = kb["vector_store_id"].as_str().unwrap().to_string();
    assert_eq!(store_id, kb_id.replacen("kb_", "vs_", 1));
    assert_eq!(
        upload_to_kb(&app, &kb_id, "secret.md", "The launch code is tangerine.")
            .await
            .status(),
        201
    );
    kb_settled(&app, &kb_id).await;
    let key = app.create_user_with_key("eve").await;
    let as_eve = app.as_key(&key);
    // REST, under either id.
    for id in [&kb_id, &store_id] {
        for request in [
            as_eve.api().knowledge_base(id),
            as_eve.api().delete_knowledge_base(id),
            as_eve.api().kb_documents(id),
            as_eve.api().kb_upload_options(id),
        ] {
            let what = request.describe();
            let response = request.call().await;
            assert_eq!(response.status(), 404, "{what}");
        }
    }
    let renamed = as_eve
        .api()
        .rename_knowledge_base(&kb_id)
        .json(&json!({"name": "Mine now"}))
        .send()
        .await
        .unwrap();
    assert_eq!(renamed.status(), 404);
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"x".to_vec()).file_name("x.txt"),
    );
    let uploaded = as_eve
        .api()
        .add_kb_document(&kb_id)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status(), 404);
    let tus_create = tus(as_eve.api().create_kb_upload(&kb_id))
        .header("Upload-Length", "1")
        .header("Upload-Metadata", metadata("x.txt"))
        .send()
        .await
        .unwrap();
    assert_eq!(tus_create.status(), 404);
    let listed: Value = as_eve.api().knowledge_bases().read_json().await;
    assert_eq!(listed["knowledge_bases"], json!([]));

    // Vector stores.
    for request in [
        as_eve.openai().vector_store(&store_id),
        as_eve.openai().vector_store_files(&store_id),
        as_eve.openai().delete_vector_store(&store_id),
    ] {
        let what = request.describe();
        let response = request.call().await;
        assert_eq!(response.status(), 404, "{what}");
    }
    let searched = as_eve
        .openai()
        .search_vector_store(&store_id)
        .json(&json!({"query": "launch code"}))
        .send()
        .await
        .unwrap();
    assert_eq!(searched.status(), 404);

    // Agents: naming it is refused on create and update, and nothing is stored.
    let refused = as_eve
        .api()
        .create_agent()
        .json(&json!({"name": "Thief", "knowledge_base_ids": [kb_id]}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 404);
    let error = error_body(refused).await;
    assert_eq!(error["code"], "not_found");
    assert!(
        error["message"].as_str().unwrap().contains(&kb_id),
        "{error}"
    );
    let agents: Value = as_eve.api().agents().read_json().await;
    assert!(
        agents["agents"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["name"] != "Thief")
    );
    let default = agents["agents"][0]["id"].as_str().unwrap().to_string();
    let patched = as_eve
        .api()
        .update_agent(&default)
        .json(&json!({"knowledge_base_ids": [store_id]}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 404);
    // A malformed id is a 400 that says what an id looks like.
    let malformed = as_eve
        .api()
        .update_agent(&default)
        .json(&json!({"knowledge_base_ids": ["not-an-id"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), 400);
    assert!(
        error_body(malformed).await["message"]
            .as_str()
            .unwrap()
            .contains("not a knowledge base id")
    );

    // The owner still has all of it.
    let mine = app.api().knowledge_base(&kb_id).call().await;
    assert_eq!(mine.status(), 200);
    let mine: Value = mine.json().await.unwrap();
    assert_eq!(
        (mine["name"].clone(), mine["document_count"].clone()),
        (json!("Private"), json!(1))
    );
    // An ordinary chat is not a knowledge base, even its owner's.
    let chat = app.new_chat().await;
    let not_kb = app.api().knowledge_base(format!("kb_{chat}")).call().await;
    assert_eq!(not_kb.status(), 404);
    let refused = app
        .api()
        .create_agent()
        .json(&json!({"name": "Chatty", "knowledge_base_ids": [format!("kb_{chat}")]}))
        .call()
        .await;
    assert_eq!(refused.status(), 404);
}

#[actix_web::test]
async fn a_knowledge_base_is_renamed_and_deleted_on_both_surfaces_and_leaves_its_agents() {
    let app = spawn_app().await;
    let kb = create_kb(&app, "Drafts").await;
    let kb_id = kb["id"].as_str().unwrap().to_string();
    let store_id = kb["vector_store_id"].as_str().unwrap().to_string();
    let other = create_kb(&app, "Kept").await;
    let other_id = other["id"].as_str().unwrap().to_string();

    // Renamed here, seen there; renamed there, seen here.
    let renamed = app
        .api()
        .rename_knowledge_base(&kb_id)
        .json(&json!({"name": "  Final  "}))
        .send()
        .await
        .unwrap();
    assert_eq!(renamed.status(), 200);
    assert_eq!(renamed.json::<Value>().await.unwrap()["name"], "Final");
    let store: Value = app.openai().vector_store(&store_id).read_json().await;
    assert_eq!(store["name"], "Final");
    // The Vector Stores API takes the kb_ id too, for the same store.
    let same: Value = app.openai().vector_store(&kb_id).read_json().await;
    assert_eq!(same["id"], store_id.as_str());
    app.openai()
        .update_vector_store(&store_id)
        .json(&json!({"name": "Final v2"}))
        .call()
        .await;
    let kb: Value = app.api().knowledge_base(&store_id).read_json().await;
    assert_eq!(
        (kb["id"].as_str(), kb["name"].as_str()),
        (Some(kb_id.as_str()), Some("Final v2"))
    );
    let empty = app
        .api()
        .rename_knowledge_base(&kb_id)
        .json(&json!({"name": "   "}))
        .send()
        .await
        .unwrap();
    assert_eq!(empty.status(), 400);

    let agent: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Writer", "knowledge_base_ids": [kb_id, other_id, kb_id]}))
        .read_json()
        .await;
    assert_eq!(
        agent["knowledge_base_ids"],
        json!([kb_id, other_id]),
        "named once each"
    );
    let agent_id = agent["id"].as_str().unwrap();

    let deleted = app
        .api()
        .delete_knowledge_base(&kb_id)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(app.api().knowledge_base(&kb_id).call().await.status(), 404);
    assert_eq!(
        app.openai().vector_store(&store_id).call().await.status(),
        404
    );
    let listed: Value = app.api().knowledge_bases().read_json().await;
    let names: Vec<&str> = listed["knowledge_bases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kb| kb["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Kept"]);
    let agent: Value = app.api().agent(agent_id).read_json().await;
    assert_eq!(agent["knowledge_base_ids"], json!([other_id]));
    // Deleted through the Vector Stores API: gone from REST too.
    let gone = app
        .openai()
        .delete_vector_store(format!("vs_{}", &other_id[3..]))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 200);
    assert_eq!(
        app.api().knowledge_base(&other_id).call().await.status(),
        404
    );
}

#[actix_web::test]
async fn documents_are_added_from_a_chat_and_by_tus_and_removed() {
    let app = spawn_app().await;
    let kb = create_kb(&app, "Collected").await;
    let kb_id = kb["id"].as_str().unwrap().to_string();
    let chat = app.new_chat().await;
    let uploaded = upload(
        &app,
        &chat,
        "minutes.md",
        b"Minutes: the board approved the new office in Lisbon.".to_vec(),
    )
    .await;
    assert_eq!(uploaded.status(), 201);
    let artifact = uploaded.json::<Value>().await.unwrap()["artifact_id"]
        .as_str()
        .unwrap()
        .to_string();
    settled(&app, &chat).await;

    let copied = app
        .api()
        .add_kb_document(&kb_id)
        .json(&json!({"chat_id": chat, "artifact_id": artifact}))
        .call()
        .await;
    assert_eq!(copied.status(), 201, "{:?}", copied.text().await);
    let copy: Value = copied.json().await.unwrap();
    assert_eq!(copy["filename"], "minutes.md");
    assert_ne!(
        copy["artifact_id"],
        artifact.as_str(),
        "a document of its own"
    );

    // tus, with its URLs under the knowledge base.
    let body = b"Handbook: the office in Lisbon opens at nine.".to_vec();
    let created = tus(app.api().create_kb_upload(&kb_id))
        .header("Upload-Length", body.len().to_string())
        .header("Upload-Metadata", metadata("handbook.txt"))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);
    let location = created.headers()["location"].to_str().unwrap().to_string();
    assert!(
        location.starts_with(&format!("/api/knowledge-bases/{kb_id}/uploads/")),
        "{location}"
    );
    let patched = tus(app.request(Method::PATCH, &location))
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 204);

    let list = kb_settled(&app, &kb_id).await;
    assert_eq!(
        statuses(&list),
        [
            ("handbook.txt".to_string(), "processed".to_string()),
            ("minutes.md".to_string(), "processed".to_string())
        ]
    );
    assert_eq!(list["knowledge_base_id"], kb_id.as_str());
    // The copy left the chat's own document where it was.
    let chat_docs = settled(&app, &chat).await;
    assert_eq!(chat_docs["total"], 1);
    // Searchable through the vector store too.
    let found: Value = app
        .openai()
        .search_vector_store(kb["vector_store_id"].as_str().unwrap())
        .json(&json!({"query": "board approved office"}))
        .read_json()
        .await;
    assert_eq!(found["data"][0]["filename"], "minutes.md", "{found}");

    // Copies of what is not there, or not the caller's, are refused.
    let missing = app
        .api()
        .add_kb_document(&kb_id)
        .json(&json!({"chat_id": chat, "artifact_id": "doc_nope"}))
        .call()
        .await;
    assert_eq!(missing.status(), 404);
    let key = app.create_user_with_key("mallory").await;
    let theirs = app
        .as_key(&key)
        .api()
        .create_knowledge_base()
        .json(&json!({"name": "Theirs"}))
        .send()
        .await
        .unwrap();
    let theirs: Value = theirs.json().await.unwrap();
    let stolen = app
        .as_key(&key)
        .api()
        .add_kb_document(theirs["id"].as_str().unwrap())
        .json(&json!({"chat_id": chat, "artifact_id": artifact}))
        .send()
        .await
        .unwrap();
    assert_eq!(stolen.status(), 404, "another user's chat");

    // Removing a document takes it out of the list (and of search).
    let doc = list["documents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["filename"] == "handbook.txt")
        .unwrap()["artifact_id"]
        .as_str()
        .unwrap()
        .to_string();
    let removed = app
        .api()
        .remove_kb_document(&kb_id, &doc)
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 200);
    let list = kb_settled(&app, &kb_id).await;
    assert_eq!(list["total"], 1);
    let again = app
        .api()
        .remove_kb_document(&kb_id, &doc)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
}

#[actix_web::test]
async fn knowledge_bases_and_their_documents_are_limited_with_clear_errors() {
    let app = spawn_app_with(|config| {
        config.documents.max_knowledge_bases_per_user = 2;
        config.documents.max_files_per_knowledge_base = 1;
    })
    .await;
    let first = create_kb(&app, "One").await;
    create_kb(&app, "Two").await;
    let third = app
        .api()
        .create_knowledge_base()
        .json(&json!({"name": "Three"}))
        .call()
        .await;
    assert_eq!(third.status(), 409);
    let error = error_body(third).await;
    assert_eq!(error["code"], "too_many_knowledge_bases");
    assert!(
        error["message"].as_str().unwrap().contains("at most 2"),
        "{error}"
    );
    // The same limit holds for vector stores: they are knowledge bases.
    let store = app
        .openai()
        .create_vector_store()
        .json(&json!({"name": "Four"}))
        .call()
        .await;
    assert_eq!(store.status(), 409);
    let unnamed = app
        .api()
        .create_knowledge_base()
        .json(&json!({"title": "wrong field"}))
        .call()
        .await;
    assert_eq!(unnamed.status(), 400);

    let kb = first["id"].as_str().unwrap();
    assert_eq!(upload_to_kb(&app, kb, "a.txt", "alpha").await.status(), 201);
    let full = upload_to_kb(&app, kb, "b.txt", "beta").await;
    assert_eq!(full.status(), 409);
    let error = error_body(full).await;
    assert_eq!(error["code"], "too_many_documents");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("this knowledge base already holds 1 documents"),
        "{error}"
    );
    let listed: Value = app.api().knowledge_bases().read_json().await;
    assert_eq!(listed["limits"]["max_knowledge_bases"], 2);
    assert_eq!(listed["limits"]["max_files"], 1);
    // A chat keeps its own limit (50 by default): not the knowledge base's.
    let chat = app.new_chat().await;
    for name in ["c.txt", "d.txt"] {
        assert_eq!(
            upload(&app, &chat, name, b"gamma".to_vec()).await.status(),
            201
        );
    }
}

#[actix_web::test]
async fn an_agent_with_a_knowledge_base_lists_search_knowledge_and_one_without_does_not() {
    let app = spawn_app().await;
    let agents: Value = app.api().agents().read_json().await;
    let default = agents["agents"][0]["id"].as_str().unwrap().to_string();
    let names = |listed: Value| -> Vec<String> {
        listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let before = names(tools(&app, default.clone()).await);
    assert!(
        !before.contains(&"search_knowledge".to_string()),
        "{before:?}"
    );

    let kb = create_kb(&app, "Manuals").await;
    let patched = app
        .api()
        .update_agent(&default)
        .json(&json!({"knowledge_base_ids": [kb["id"]]}))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), 200);
    let listed = tools(&app, default.clone()).await;
    let search = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "search_knowledge")
        .expect("search_knowledge once the agent has a knowledge base")
        .clone();
    assert_eq!(search["parameters"]["required"], json!(["query"]));
    assert_eq!(
        search["parameters"]["properties"]["query"]["type"],
        "string"
    );

    // An agent that names its tools without search_knowledge does not get it.
    let picky: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Picky", "enabled_tools": ["calculator"],
                    "knowledge_base_ids": [kb["id"]]}))
        .read_json()
        .await;
    let picky_tools = names(tools(&app, picky["id"].as_str().unwrap().to_string()).await);
    // Its research tool and every chat's own, without search_knowledge.
    assert_eq!(
        picky_tools,
        [
            "calculator",
            "create_artifact",
            "update_artifact",
            "save_memory",
            "recall_memory",
            "ask_user",
            "file_search"
        ]
    );

    // Its chat offers the tool to the model, and a knowledge base with nothing in it yet says so.
    let chat = app.new_chat().await;
    app.upstream.script([
        Reply::tool_call("tc_1", "search_knowledge", json!({"query": "manual"})),
        Reply::text("Nothing yet."),
    ]);
    app.send_text(&chat, "Check the manuals").await;
    let result = tool_result(&app, "tc_1");
    assert_eq!(result["results"], json!([]));
    assert!(
        result["note"]
            .as_str()
            .unwrap()
            .contains("nothing was searched")
    );
}

#[actix_web::test]
async fn creates_racing_for_the_last_knowledge_bases_stop_at_the_cap_and_the_list_pages_past_it() {
    let app = spawn_app_with(|config| config.documents.max_knowledge_bases_per_user = 5).await;
    race_to_the_cap(5, "too_many_knowledge_bases", |i| {
        app.api()
            .create_knowledge_base()
            .json(&json!({"name": format!("racer {i}")}))
    })
    .await;
    let ids = read_every_page(|| app.api().knowledge_bases(), "knowledge_bases").await;
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "{ids:?}");
    // The refused creates left no chat behind either.
    let chats = sea_orm::PaginatorTrait::count(
        <entities::chats::Entity as sea_orm::EntityTrait>::find(),
        &app.db,
    )
    .await
    .unwrap();
    assert_eq!(chats, 5);
}
