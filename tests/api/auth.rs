use reqwest::Method;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};

use crate::client::Call;
use crate::helpers::{
    ADMIN_KEY, error_body, race_to_the_cap, read_every_page, session_cookie, spawn_app,
    spawn_app_with,
};

#[actix_web::test]
async fn requests_without_credentials_get_a_401_json_error_everywhere() {
    let app = spawn_app().await;
    let nobody = app.as_anonymous();
    for request in [
        nobody.openai().models(),
        nobody.chat_api().list_chats(),
        nobody.chat_api().create_chat(),
        nobody.auth().me(),
        nobody.auth().api_keys(),
    ] {
        let what = request.describe();
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401, "{what}");
        assert!(response.headers().contains_key("www-authenticate"));
        let error = error_body(response).await;
        assert_eq!(error["code"], "unauthenticated", "{what}");
        assert_eq!(error["type"], "authentication_error");
    }
}

#[actix_web::test]
async fn a_wrong_or_malformed_bearer_token_is_refused() {
    let app = spawn_app().await;
    for header in [
        "Bearer nope",
        "Bearer ",
        "Basic YWRtaW46YWRtaW4=",
        "garbage",
    ] {
        let response = app
            .as_anonymous()
            .openai()
            .models()
            .header("authorization", header)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{header}");
    }
}

#[actix_web::test]
async fn the_bootstrap_key_authenticates_the_openai_api_and_upstream_gets_its_own_key() {
    let app = spawn_app().await;
    let response = app.openai().models().call().await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["object"], "list");
    assert_eq!(body["data"][0]["id"], "fake-model");
    let received = app.upstream.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].path, "/v1/models");
    assert_eq!(
        received[0].authorization.as_deref(),
        Some("Bearer upstream-secret"),
        "the client's key is never forwarded upstream"
    );
}

#[actix_web::test]
async fn first_start_prints_a_one_time_login_link_that_logs_in_once() {
    let app = spawn_app().await;
    let link = app
        .login_url
        .clone()
        .expect("first start creates a login link");
    assert!(link.starts_with(&app.address), "{link}");
    let path = link.strip_prefix(&app.address).unwrap();

    let response = app.anonymous(Method::GET, path).send().await.unwrap();
    assert_eq!(response.status(), 303);
    assert_eq!(response.headers()["location"], "/");
    let set_cookie = response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(set_cookie.contains("HttpOnly"), "{set_cookie}");
    assert!(set_cookie.contains("SameSite=Lax"), "{set_cookie}");
    let cookie = session_cookie(&response).unwrap();

    // The cookie's old name is still read, so an upgrade signs nobody out.
    let me = app
        .as_anonymous()
        .auth()
        .me()
        .header("cookie", format!("colloquy_session={cookie}"))
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 200);
    let me: Value = me.json().await.unwrap();
    assert_eq!(me["username"], "admin");
    assert_eq!(me["is_admin"], true);

    let again = app.anonymous(Method::GET, path).send().await.unwrap();
    assert_eq!(again.status(), 410, "a login link works once");
    let forged = app
        .anonymous(Method::GET, "/login?token=cql_forged")
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 410);
}

#[actix_web::test]
async fn password_login_sets_a_session_that_logout_ends() {
    let app = spawn_app().await;
    let created = app
        .auth()
        .create_user()
        .json(&json!({"username": "ada", "password": "analytical engine"}))
        .call()
        .await;
    assert_eq!(created.status(), 201);

    let wrong = app
        .as_anonymous()
        .auth()
        .login()
        .json(&json!({"username": "ada", "password": "difference engine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);

    let login = app
        .as_anonymous()
        .auth()
        .login()
        .json(&json!({"username": "ada", "password": "analytical engine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
    // The spec's documents API examples send the cookie as `session`.
    let cookie = format!("session={}", session_cookie(&login).unwrap());
    let chats = app
        .as_anonymous()
        .chat_api()
        .list_chats()
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(
        chats.status(),
        200,
        "the session cookie works on the chat API"
    );

    let logout = app
        .as_anonymous()
        .auth()
        .logout()
        .header("cookie", &cookie)
        .header("origin", &app.address)
        .send()
        .await
        .unwrap();
    assert_eq!(logout.status(), 200);
    let after = app
        .as_anonymous()
        .auth()
        .me()
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 401);
}

#[actix_web::test]
async fn api_keys_are_stored_hashed_and_revocable() {
    let app = spawn_app().await;
    let created = app
        .auth()
        .create_api_key()
        .json(&json!({"name": "laptop"}))
        .call()
        .await;
    assert_eq!(created.status(), 201);
    let body: Value = created.json().await.unwrap();
    let key = body["key"].as_str().unwrap().to_string();
    let id = body["id"].as_str().unwrap().to_string();

    let rows = entities::api_keys::Entity::find()
        .all(&app.db)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2, "the bootstrap key and the new one");
    for row in &rows {
        assert_ne!(row.key_hash, key);
        assert_ne!(row.key_hash, ADMIN_KEY);
        assert_eq!(row.key_hash.len(), 64);
    }

    let with_new_key = app.as_key(&key).auth().me().send().await.unwrap();
    assert_eq!(with_new_key.status(), 200);

    let listed: Value = app.auth().api_keys().read_json().await;
    let names: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["bootstrap", "laptop"]);
    assert!(
        !listed.to_string().contains(&key),
        "keys are never shown again"
    );

    let revoked = app.auth().revoke_api_key(&id).send().await.unwrap();
    assert_eq!(revoked.status(), 200);
    let with_revoked = app.as_key(&key).auth().me().send().await.unwrap();
    assert_eq!(with_revoked.status(), 401);
}

#[actix_web::test]
async fn only_admins_create_users_and_usernames_are_unique() {
    let app = spawn_app().await;
    let bob_key = app.create_user_with_key("bob").await;
    let by_bob = app
        .as_key(&bob_key)
        .auth()
        .create_user()
        .json(&json!({"username": "mallory", "password": "a long password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(by_bob.status(), 403);
    assert_eq!(error_body(by_bob).await["code"], "forbidden");

    let duplicate = app
        .auth()
        .create_user()
        .json(&json!({"username": "bob", "password": "another password"}))
        .call()
        .await;
    assert_eq!(duplicate.status(), 409);
    let short = app
        .auth()
        .create_user()
        .json(&json!({"username": "eve", "password": "short"}))
        .call()
        .await;
    assert_eq!(short.status(), 400);
    let bad_name = app
        .auth()
        .create_user()
        .json(&json!({"username": "../etc", "password": "a long password"}))
        .call()
        .await;
    assert_eq!(bad_name.status(), 400);
    let users = entities::users::Entity::find()
        .count(&app.db)
        .await
        .unwrap();
    assert_eq!(users, 2, "admin and bob only");
}

#[actix_web::test]
async fn creates_racing_for_the_last_api_keys_stop_at_the_cap_and_the_list_pages_past_it() {
    let app = spawn_app_with(|config| config.auth.max_api_keys_per_user = 5).await;
    // The admin's bootstrap key is one of the five.
    let before: Value = app.auth().api_keys().read_json().await;
    assert_eq!(before["total"], 1, "{before}");
    race_to_the_cap(4, "too_many_api_keys", |i| {
        app.auth()
            .create_api_key()
            .json(&json!({"name": format!("racer {i}")}))
    })
    .await;
    let ids = read_every_page(|| app.auth().api_keys(), "data").await;
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 5, "{ids:?}");
    // A revoked key frees its place.
    let revoked = app.auth().revoke_api_key(&ids[4]).call().await;
    assert!(revoked.status().is_success(), "{}", revoked.status());
    let again = app
        .auth()
        .create_api_key()
        .json(&json!({"name": "again"}))
        .call()
        .await;
    assert_eq!(again.status(), 201);
}
