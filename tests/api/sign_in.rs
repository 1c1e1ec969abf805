//! Password sign-in: failed attempts are limited per account and per address, and an unknown
//! username costs as much time as a wrong password.

use std::time::{Duration, Instant};

use reqwest::Response;
use serde_json::json;

use crate::client::Call;
use crate::helpers::{TestApp, error_body, spawn_app_with};

const PASSWORD: &str = "analytical engine";

async fn create_user(app: &TestApp, username: &str, password: Option<&str>) {
    let response = app
        .auth()
        .create_user()
        .json(&json!({"username": username, "password": password}))
        .call()
        .await;
    assert_eq!(response.status(), 201, "{:?}", response.text().await);
}

async fn login(app: &TestApp, username: &str, password: &str) -> Response {
    app.as_anonymous()
        .auth()
        .login()
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap()
}

/// Checks a 429 and returns its `Retry-After` in seconds.
async fn assert_rate_limited(response: Response) -> u64 {
    assert_eq!(response.status(), 429);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let error = error_body(response).await;
    assert_eq!(error["code"], "rate_limited");
    retry_after
}

#[actix_web::test]
async fn after_too_many_wrong_passwords_the_account_is_refused_even_the_right_one() {
    let app = spawn_app_with(|config| {
        config.auth.login_failures_per_account = 3;
        config.auth.login_failures_per_address = 100;
        config.auth.login_failure_window_secs = 3_600;
    })
    .await;
    create_user(&app, "ada", Some(PASSWORD)).await;
    create_user(&app, "bob", Some(PASSWORD)).await;

    for _ in 0..5 {
        let ok = login(&app, "ada", PASSWORD).await;
        assert_eq!(ok.status(), 200, "successful logins take nothing");
    }
    for _ in 0..3 {
        assert_eq!(login(&app, "ada", "difference engine").await.status(), 401);
    }
    let refused = login(&app, "ada", PASSWORD).await;
    let retry_after = assert_rate_limited(refused).await;
    assert!(
        (1..=1_200).contains(&retry_after),
        "one try comes back every 3600/3 s: {retry_after}"
    );
    assert_eq!(
        login(&app, "bob", PASSWORD).await.status(),
        200,
        "another account from the same address is not affected"
    );
}

#[actix_web::test]
async fn after_too_many_failures_from_one_address_every_account_is_refused() {
    let app = spawn_app_with(|config| {
        config.auth.login_failures_per_account = 100;
        config.auth.login_failures_per_address = 3;
        config.auth.login_failure_window_secs = 60;
    })
    .await;
    create_user(&app, "ada", Some(PASSWORD)).await;
    create_user(&app, "carol", Some(PASSWORD)).await;

    assert_eq!(login(&app, "ada", "wrong password").await.status(), 401);
    assert_eq!(login(&app, "nobody", "wrong password").await.status(), 401);
    assert_eq!(login(&app, "bob", "wrong password").await.status(), 401);
    let refused = login(&app, "carol", PASSWORD).await;
    let retry_after = assert_rate_limited(refused).await;
    assert!((1..=20).contains(&retry_after), "{retry_after}");
}

/// The median of `samples`.
fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

async fn time_login(app: &TestApp, username: &str, password: &str) -> Duration {
    let start = Instant::now();
    let response = login(app, username, password).await;
    let elapsed = start.elapsed();
    assert_eq!(response.status(), 401, "{username}");
    elapsed
}

#[actix_web::test]
async fn an_unknown_username_takes_as_long_as_a_wrong_password() {
    let app = spawn_app_with(|config| {
        config.auth.login_failures_per_account = 1_000;
        config.auth.login_failures_per_address = 1_000;
    })
    .await;
    create_user(&app, "ada", Some(PASSWORD)).await;
    create_user(&app, "linkonly", None).await;

    let (mut wrong, mut unknown, mut no_password) = (Vec::new(), Vec::new(), Vec::new());
    // The first round warms up (the dummy hash is made on first use) and is not counted.
    for round in 0..8 {
        let w = time_login(&app, "ada", "difference engine").await;
        let u = time_login(&app, &format!("nobody{round}"), "difference engine").await;
        let n = time_login(&app, "linkonly", "difference engine").await;
        if round > 0 {
            wrong.push(w);
            unknown.push(u);
            no_password.push(n);
        }
    }
    let wrong = median(wrong).as_secs_f64();
    for (what, samples) in [
        ("unknown user", unknown),
        ("user without password", no_password),
    ] {
        let ratio = median(samples).as_secs_f64() / wrong;
        // Without the dummy hash the ratio was about 0.02 (0.9 ms against 52 ms).
        assert!(
            ratio > 0.3,
            "{what}: answered in {ratio:.2} of a wrong password's time"
        );
    }
}
