//! The layout of every page in a real browser (issue 50 point 1): `tests/browser/layout.mjs`
//! walks each page at 320, 375, 768, 1280 and 1920 px and fails on sideways scrolling,
//! covered controls, text cut off in buttons, a header of more than one row and serious axe
//! findings. The walk runs for each theme in two groups of widths, each run signed in with a
//! login link of its own.

use serde_json::{Value, json};

use crate::browser::{browser_app, run_scenario};
use crate::client::Call;
use crate::fake_upstream::Reply;
use crate::helpers::TestApp;

/// An answer long enough to fill a phone's screen, with a table and code, as a real one would.
const ANSWER: &str = "# This week\n\nHere is a plan that keeps the mornings free for deep work.\n\n\
    | Day | Morning | Afternoon |\n|---|---|---|\n| Monday | Writing | Meetings |\n\
    | Tuesday | Reading | Reviews |\n| Wednesday | Writing | Errands |\n\n\
    ```text\nmon  writing  meetings\ntue  reading  reviews\n```\n\n\
    1. Block the mornings in your calendar.\n2. Batch the meetings after lunch.\n\
    3. Keep Friday afternoon for what slipped.\n\nThat is the whole plan.";

/// A one-time login link for the first-start admin, past the one the server printed.
async fn admin_login_link(app: &TestApp) -> String {
    let users: Value = app.admin().users().read_json().await;
    let admin = users["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "admin")
        .and_then(|u| u["id"].as_str())
        .expect("the admin is listed")
        .to_string();
    let made: Value = app.admin().login_link(&admin).read_json().await;
    made["login_url"].as_str().unwrap().to_string()
}

#[actix_web::test]
async fn every_page_holds_its_layout_at_every_width_in_both_themes() {
    let app = browser_app(|_| {}).await;
    // Each of the four runs (two themes, two groups of widths) starts a chat of its own.
    app.upstream.script([ANSWER; 4].map(Reply::text));
    // The admin page lists several users, one with a long name and one disabled.
    for (username, is_admin) in [
        ("carol", true),
        ("dan", false),
        ("margaret.hamilton-apollo", false),
    ] {
        let made = app
            .admin()
            .create_user()
            .json(&json!({"username": username, "is_admin": is_admin}))
            .call()
            .await;
        assert_eq!(made.status(), 201, "{username}");
    }
    let users: Value = app.admin().users().read_json().await;
    let dan = users["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "dan")
        .and_then(|u| u["id"].as_str())
        .unwrap()
        .to_string();
    let disabled = app
        .admin()
        .update_user(&dan)
        .json(&json!({"disabled": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(disabled.status(), 200);

    for theme in ["light", "dark"] {
        for widths in ["320,375,768", "1280,1920"] {
            let link = admin_login_link(&app).await;
            run_scenario(
                &app,
                "layout",
                &[
                    ("LAYOUT_THEME", theme.to_string()),
                    ("LAYOUT_WIDTHS", widths.to_string()),
                    ("COLLOQUY_LOGIN_URL", link),
                ],
            )
            .await;
        }
    }
}
