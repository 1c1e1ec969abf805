//! Chats organised in the app (issue 50 point 4): `tests/browser/chat_organize.mjs` pins a
//! chat, makes a folder and moves chats into it (by its menu and by dragging), archives one
//! with the keyboard and restores it; then the server holds what the page did, so every
//! device sees the same list.

use serde_json::Value;

use crate::client::Call;

#[actix_web::test]
async fn chats_are_pinned_filed_by_menu_and_drag_archived_and_restored_in_the_sidebar() {
    let app = crate::browser::browser_app(|_| {}).await;
    for title in ["Alpha notes", "Beta plan", "Gamma ideas", "Delta list"] {
        app.create_chat(title).await;
    }
    crate::browser::run_scenario(&app, "chat_organize", &[]).await;

    let folders: Value = app.chat_api().folders().read_json().await;
    let folders = folders["data"].as_array().unwrap();
    assert_eq!(folders.len(), 1, "{folders:?}");
    assert_eq!(folders[0]["name"], "Work");
    let listed: Value = app.chat_api().list_chats().read_json().await;
    let by_title = |title: &str| -> Value {
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|chat| chat["title"] == title)
            .unwrap_or_else(|| panic!("{title} listed: {listed}"))
            .clone()
    };
    assert_eq!(listed["data"][0]["title"], "Alpha notes", "pinned first");
    assert_eq!(by_title("Alpha notes")["pinned"], true);
    for filed in ["Beta plan", "Gamma ideas"] {
        assert_eq!(by_title(filed)["folder_id"], folders[0]["id"], "{filed}");
    }
    let delta = by_title("Delta list");
    assert_eq!(
        (&delta["archived"], &delta["folder_id"]),
        (&Value::Bool(false), &Value::Null),
        "restored, in no folder"
    );
}
