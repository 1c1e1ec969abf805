//! The admin REST API (`/admin/api`): users made with a one-time login link, disabled,
//! promoted and deleted with their data; the servers' status. Admins only: a non-admin gets a
//! 403 from every route and changes nothing.

use reqwest::{Method, RequestBuilder};
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};

use crate::client::{Admin, Call};
use crate::helpers::{TestApp, error_body, session_cookie, spawn_app};

/// Every admin route as `admin` calls it, with a body that would be valid for an admin.
fn admin_routes(admin: Admin<'_>, user_id: &str) -> Vec<(RequestBuilder, Option<Value>)> {
    vec![
        (admin.users(), None),
        (admin.create_user(), Some(json!({"username": "mallory"}))),
        (admin.update_user(user_id), Some(json!({"is_admin": true}))),
        (admin.delete_user(user_id), Some(json!({"confirm": "bob"}))),
        (admin.login_link(user_id), None),
        (admin.status(), None),
    ]
}

async fn user_id(app: &TestApp, username: &str) -> String {
    let users: Value = app.admin().users().read_json().await;
    users["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == username)
        .and_then(|u| u["id"].as_str())
        .expect("the user is listed")
        .to_string()
}

#[actix_web::test]
async fn every_admin_route_is_403_for_a_non_admin_and_401_without_credentials() {
    let app = spawn_app().await;
    let bob_key = app.create_user_with_key("bob").await;
    let bob = user_id(&app, "bob").await;
    let as_bob = admin_routes(app.as_key(&bob_key).admin(), &bob);
    let nobody = admin_routes(app.as_anonymous().admin(), &bob);
    for ((mut request, body), (anonymous, _)) in as_bob.into_iter().zip(nobody) {
        let what = request.describe();
        if let Some(body) = &body {
            request = request.json(body);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 403, "{what}");
        assert_eq!(error_body(response).await["code"], "forbidden");
        let anonymous = anonymous.send().await.unwrap();
        assert_eq!(anonymous.status(), 401, "{what}");
    }
    let users = entities::users::Entity::find()
        .count(&app.db)
        .await
        .unwrap();
    assert_eq!(users, 2, "bob made nobody and deleted nobody");
    let listed: Value = app.admin().users().read_json().await;
    let bob_row = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "bob")
        .unwrap()
        .clone();
    assert_eq!(bob_row["is_admin"], false, "bob did not promote himself");
}

#[actix_web::test]
async fn an_admin_makes_a_user_whose_link_signs_them_in_once() {
    let app = spawn_app().await;
    let made = app
        .admin()
        .create_user()
        .json(&json!({"username": "carol"}))
        .call()
        .await;
    assert_eq!(made.status(), 201);
    let made: Value = made.json().await.unwrap();
    assert_eq!(made["user"]["username"], "carol");
    assert_eq!(made["user"]["is_admin"], false);
    let link = made["login_url"].as_str().unwrap();
    assert!(link.starts_with(&app.address), "{link}");
    let path = &link[link.find("/login?").unwrap()..];

    let redeemed = app.anonymous(Method::GET, path).send().await.unwrap();
    assert_eq!(redeemed.status(), 303);
    let cookie = session_cookie(&redeemed).expect("a session");
    let me: Value = app.as_session(&cookie).auth().me().read_json().await;
    assert_eq!(me["username"], "carol");
    let again = app.anonymous(Method::GET, path).send().await.unwrap();
    assert_eq!(again.status(), 410, "the link works once");

    let duplicate = app
        .admin()
        .create_user()
        .json(&json!({"username": "carol"}))
        .call()
        .await;
    assert_eq!(duplicate.status(), 409);
}

#[actix_web::test]
async fn a_disabled_users_login_link_says_the_account_is_disabled_not_that_it_expired() {
    let app = spawn_app().await;
    let made: Value = app
        .admin()
        .create_user()
        .json(&json!({"username": "dora"}))
        .call()
        .await
        .json()
        .await
        .unwrap();
    let dora = made["user"]["id"].as_str().unwrap().to_string();
    let link_path = |made: &Value| {
        let link = made["login_url"].as_str().unwrap();
        link[link.find("/login?").unwrap()..].to_string()
    };
    let first = link_path(&made);
    let second: Value = app.admin().login_link(&dora).read_json().await;
    let second = link_path(&second);
    let disabled = app
        .admin()
        .update_user(&dora)
        .json(&json!({"disabled": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(disabled.status(), 200);

    let refused = app.anonymous(Method::GET, &first).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    assert!(
        session_cookie(&refused).is_none(),
        "no session for a disabled account"
    );
    let error = error_body(refused).await;
    assert_eq!(error["code"], "account_disabled");
    assert!(
        error["message"].as_str().unwrap().contains("disabled"),
        "{error}"
    );

    // A browser following the link lands on the sign-in page, which words the reason.
    let in_browser = app
        .anonymous(Method::GET, &second)
        .header("accept", "text/html")
        .send()
        .await
        .unwrap();
    assert_eq!(in_browser.status(), 303);
    assert_eq!(
        in_browser.headers()["location"],
        "/?signin=account_disabled"
    );
}

#[actix_web::test]
async fn a_disabled_user_is_shut_out_until_enabled_and_deletion_takes_the_typed_name() {
    let app = spawn_app().await;
    let bob_key = app.create_user_with_key("bob").await;
    let bob = user_id(&app, "bob").await;
    let as_bob = app.as_key(&bob_key);
    let chat = as_bob.chat_api().list_chats().send().await.unwrap();
    assert_eq!(chat.status(), 200);
    let created = app
        .as_key(&bob_key)
        .chat_api()
        .create_chat()
        .json(&json!({"title": "Bob's"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201);

    let disable = |disabled: bool| {
        app.admin()
            .update_user(&bob)
            .json(&json!({"disabled": disabled}))
            .send()
    };
    let disabled: Value = disable(true).await.unwrap().json().await.unwrap();
    assert_eq!(disabled["disabled"], true);
    assert_eq!(
        as_bob
            .chat_api()
            .list_chats()
            .send()
            .await
            .unwrap()
            .status(),
        401,
        "a disabled account's key stops working at once"
    );
    let login = app
        .as_anonymous()
        .auth()
        .login()
        .json(&json!({"username": "bob", "password": "a long password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 401);
    disable(false).await.unwrap();
    assert_eq!(
        as_bob
            .chat_api()
            .list_chats()
            .send()
            .await
            .unwrap()
            .status(),
        200
    );

    let wrong = app
        .admin()
        .delete_user(&bob)
        .json(&json!({"confirm": "Bob"}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 400);
    assert!(
        error_body(wrong).await["message"]
            .as_str()
            .unwrap()
            .contains("bob")
    );
    assert_eq!(
        entities::chats::Entity::find()
            .count(&app.db)
            .await
            .unwrap(),
        1
    );

    let deleted = app
        .admin()
        .delete_user(&bob)
        .json(&json!({"confirm": "bob"}))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    assert_eq!(deleted.json::<Value>().await.unwrap()["chats"], 1);
    assert_eq!(
        entities::chats::Entity::find()
            .count(&app.db)
            .await
            .unwrap(),
        0,
        "the user's chats went with them"
    );
    assert_eq!(
        entities::api_keys::Entity::find()
            .count(&app.db)
            .await
            .unwrap(),
        1,
        "only the admin's key is left"
    );
    assert_eq!(
        as_bob
            .chat_api()
            .list_chats()
            .send()
            .await
            .unwrap()
            .status(),
        401
    );
}

#[actix_web::test]
async fn an_admin_cannot_disable_demote_or_delete_themselves_but_can_promote_others() {
    let app = spawn_app().await;
    let me: Value = app.auth().me().read_json().await;
    let me = me["id"].as_str().unwrap().to_string();
    for body in [json!({"disabled": true}), json!({"is_admin": false})] {
        let response = app
            .admin()
            .update_user(&me)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 409, "{body}");
    }
    let admin_name: Value = app.auth().me().read_json().await;
    let response = app
        .admin()
        .delete_user(&me)
        .json(&json!({"confirm": admin_name["username"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 409);

    let bob_key = app.create_user_with_key("bob").await;
    let bob = user_id(&app, "bob").await;
    let promoted: Value = app
        .admin()
        .update_user(&bob)
        .json(&json!({"is_admin": true}))
        .read_json()
        .await;
    assert_eq!(promoted["is_admin"], true);
    let as_admin = app.as_key(&bob_key).admin().users().send().await.unwrap();
    assert_eq!(
        as_admin.status(),
        200,
        "the new admin's key carries the new rights"
    );
}

#[actix_web::test]
async fn the_status_names_the_version_the_model_servers_and_the_storage() {
    let app = spawn_app().await;
    let status: Value = app.admin().status().read_json().await;
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(status["providers"][0]["id"], "default");
    assert_eq!(status["providers"][0]["status"], "ok");
    assert!(status["mcp_servers"].as_array().unwrap().is_empty());
    assert!(
        status["storage"]["data_dir_bytes"].as_u64().unwrap() > 0,
        "the SQLite database is in the data directory: {status}"
    );
}
