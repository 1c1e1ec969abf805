//! send_email (issue 32) against a real SMTP server the tests start (`sink`): an email goes
//! out once after the user's yes and never after a no, never to a recipient outside the
//! allow-list, never with an injected header, at most `max_per_hour` per agent (across a
//! restart), per user (over all their agents, deleted ones too) and server-wide; without
//! confirmation it goes at once; an SMTP failure is an error result; the tool is offered only
//! where configured and named. Against a sink that keeps the raw DATA (`raw_sink`, issue 49): no
//! bare CR or LF reaches the wire, so a body cannot smuggle a second message.

mod raw_sink;
mod sink;

use colloquy::config::{Config, EmailConfig};
use secrecy::SecretString;
use serde_json::{Value, json};

use crate::client::{Call, Client};
use crate::fake_upstream::Reply;
use crate::helpers::{TestApp, captured_log, error_body, spawn_app, spawn_app_with};
use crate::sse::{Frame, content, finished, read_all};
use raw_sink::RawSmtpSink;
use sink::SmtpSink;

const FROM: &str = "Colloquy <colloquy@example.org>";

/// Per-user and server-wide limits no test of the per-agent one reaches.
const ROOMY: u32 = 1_000;

fn email_config(smtp_url: String, confirm: bool, max_per_hour: u32) -> EmailConfig {
    EmailConfig {
        smtp_url: SecretString::from(smtp_url),
        from: FROM.into(),
        allowed_recipients: vec!["*@example.org".into(), "ops@partner.net".into()],
        confirm,
        max_per_hour,
        user_max_per_hour: ROOMY,
        server_max_per_hour: ROOMY,
    }
}

async fn app_sending_to(smtp_url: String, confirm: bool, max_per_hour: u32) -> TestApp {
    spawn_app_with(|config: &mut Config| {
        config.email = Some(email_config(smtp_url, confirm, max_per_hour));
    })
    .await
}

/// An app sending without confirmation, with these per-agent, per-user and server-wide limits.
async fn app_with_limits(smtp_url: String, agent: u32, user: u32, server: u32) -> TestApp {
    spawn_app_with(|config: &mut Config| {
        config.email = Some(EmailConfig {
            user_max_per_hour: user,
            server_max_per_hour: server,
            ..email_config(smtp_url, false, agent)
        });
    })
    .await
}

/// A new agent that names send_email, and a chat with it.
async fn mailing_chat(app: &TestApp) -> (String, String) {
    mailing_chat_of(app.as_admin()).await
}

/// `mailing_chat` of the user `client` speaks for.
async fn mailing_chat_of(client: Client<'_>) -> (String, String) {
    let agent: Value = client
        .api()
        .create_agent()
        .json(&json!({"name": "Mailer", "enabled_tools": ["send_email"]}))
        .read_json()
        .await;
    let agent = agent["id"].as_str().expect("an agent id").to_string();
    let chat = client
        .new_chat_with(&json!({"agent_id": agent, "title": "Mail for ops"}))
        .await;
    (agent, chat)
}

/// Sends `text` to `chat` as the user `client` speaks for, and reads the whole stream.
async fn send_text_as(client: Client<'_>, chat: &str, text: &str) -> Vec<Frame> {
    let response = client
        .chat_api()
        .send_message(chat)
        .json(&json!({"content": text}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    read_all(response).await
}

fn send_call(id: &str, to: &str, subject: &str, body: &str) -> Reply {
    Reply::tool_call(
        id,
        "send_email",
        json!({"to": to, "subject": subject, "body": body}),
    )
}

fn question(frames: &[Frame]) -> Option<Value> {
    frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "x_ask_user.question")
}

/// The `tool_result` events of send_email calls.
fn results(frames: &[Frame]) -> Vec<Value> {
    frames
        .iter()
        .map(Frame::json)
        .filter(|j| j["type"] == "tool_result" && j["name"] == "send_email")
        .collect()
}

/// What the model was told each send_email call came to: the tool messages of upstream
/// request `index`, parsed.
fn fed_back(app: &TestApp, index: usize) -> Vec<Value> {
    let received = app.upstream.received();
    received[index].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

fn codes(results: &[Value]) -> Vec<String> {
    let mut codes: Vec<String> = results
        .iter()
        .map(|r| match r["code"].as_str() {
            Some(code) => code.to_string(),
            None if r["sent"] == true => "sent".to_string(),
            None => format!("unexpected: {r}"),
        })
        .collect();
    codes.sort();
    codes
}

async fn answer(app: &TestApp, chat: &str, correlation_id: &str, answer: &str) -> Vec<Frame> {
    let response = app
        .chat_api()
        .answer_ask(chat, correlation_id)
        .json(&json!({"answer": answer}))
        .call()
        .await;
    assert_eq!(response.status(), 200);
    read_all(response).await
}

/// The value of a Prometheus sample with these labels (0 when absent).
async fn metric(app: &TestApp, name: &str, labels: &[(&str, &str)]) -> f64 {
    let text = app.get("/metrics").await.text().await.unwrap();
    let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_string())))
        .expect("Prometheus text format");
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == name)
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(|s| match s.value {
            prometheus_parse::Value::Counter(v) | prometheus_parse::Value::Gauge(v) => v,
            _ => 0.0,
        })
        .sum()
}

#[actix_web::test]
async fn an_email_goes_out_once_after_the_user_says_yes() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.url(), true, 20).await;
    let (_, chat) = mailing_chat(&app).await;
    let body = "The disk on db-1 is full.\nPlease free some space.";
    app.upstream.script([
        send_call("mail_1", "ops@example.org", "Disk full on db-1", body),
        Reply::text("I sent the email."),
    ]);
    let frames = app.send_text(&chat, "Tell ops the disk is full").await;
    let asked = question(&frames).expect("the user is asked first");
    assert_eq!(asked["style"], "confirm");
    assert_eq!(asked["options"], json!(["Yes", "No"]));
    assert_eq!(asked["allow_free_text"], false);
    assert_eq!(asked["email"]["to"], "ops@example.org");
    assert_eq!(asked["email"]["subject"], "Disk full on db-1");
    assert_eq!(asked["email"]["body"], body);
    assert_eq!(asked["email"]["from"], FROM);
    assert_eq!(finished(&frames)["stop_reason"], "paused");
    assert!(sink.received().is_empty(), "nothing goes before the yes");
    let listed: Value = app.chat_api().asks(&chat).read_json().await;
    assert_eq!(
        listed["data"][0]["email"]["subject"], "Disk full on db-1",
        "a reloaded page shows the email on its card"
    );

    let correlation_id = asked["correlation_id"].as_str().unwrap();
    let frames = answer(&app, &chat, correlation_id, "Yes").await;
    let result = &results(&frames)[0];
    assert_eq!(result["toolCallId"], "mail_1");
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(result["result"]["sent"], true);
    assert_eq!(content(&frames), "I sent the email.");
    assert_eq!(finished(&frames)["stop_reason"], "completed");

    let received = sink.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let mail = &received[0];
    assert_eq!(mail["rcpt_tos"], json!(["ops@example.org"]));
    assert_eq!(mail["to"], "ops@example.org");
    assert_eq!(mail["from"], FROM);
    assert_eq!(mail["mail_from"], "colloquy@example.org");
    assert_eq!(mail["subject"], "Disk full on db-1");
    assert_eq!(mail["content_type"], "text/plain");
    // The parser ends the body with the line break SMTP's data ends with.
    let received_body = mail["body"].as_str().unwrap().replace("\r\n", "\n");
    assert_eq!(received_body.trim_end(), body);
    let told = fed_back(&app, 1);
    assert_eq!(
        told.last().unwrap()["sent"],
        true,
        "the model learns it went"
    );

    let again = app
        .chat_api()
        .answer_ask(&chat, correlation_id)
        .json(&json!({"answer": "Yes"}))
        .call()
        .await;
    assert_eq!(again.status(), 409);
    assert_eq!(sink.received().len(), 1, "a second yes sends nothing");
    let sent = [("tool", "send_email"), ("outcome", "success")];
    assert_eq!(metric(&app, "colloquy_tool_calls_total", &sent).await, 1.0);
    let log = captured_log();
    assert!(
        log.lines()
            .any(|l| l.contains("tool call") && l.contains("send_email")),
        "the per-call log line"
    );
}

#[actix_web::test]
async fn nothing_goes_out_after_the_user_says_no() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.url(), true, 20).await;
    let (_, chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call(
            "mail_1",
            "ops@partner.net",
            "Hello",
            "Hello from the assistant.",
        ),
        Reply::text("All right, I did not send it."),
    ]);
    let frames = app.send_text(&chat, "Greet the partner").await;
    let asked = question(&frames).expect("an exact allowed address is asked about");
    let frames = answer(&app, &chat, asked["correlation_id"].as_str().unwrap(), "No").await;
    let result = &results(&frames)[0];
    assert_eq!(result["success"], false);
    assert!(
        result["error"].as_str().unwrap().contains("declined"),
        "{result}"
    );
    assert_eq!(content(&frames), "All right, I did not send it.");
    assert_eq!(fed_back(&app, 1).last().unwrap()["code"], "declined");
    assert!(sink.received().is_empty(), "{:?}", sink.received());
}

#[actix_web::test]
async fn a_recipient_outside_the_allow_list_is_refused_before_anyone_is_asked() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.url(), true, 20).await;
    let (_, chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call("mail_1", "someone@evil.com", "Hi", "Secrets."),
        Reply::text("I may not send to that address."),
    ]);
    let frames = app.send_text(&chat, "Mail someone@evil.com").await;
    assert!(
        question(&frames).is_none(),
        "a forbidden recipient is never asked about"
    );
    assert_eq!(results(&frames)[0]["success"], false);
    assert_eq!(content(&frames), "I may not send to that address.");
    let told = &fed_back(&app, 1)[0];
    assert_eq!(told["code"], "recipient_not_allowed");
    assert!(
        told["error"].as_str().unwrap().contains("*@example.org"),
        "{told}"
    );
    // A subdomain is not the domain.
    app.upstream.script([
        send_call("mail_2", "someone@mail.example.org", "Hi", "Hello."),
        Reply::text("Not that one either."),
    ]);
    let frames = app.send_text(&chat, "Mail the subdomain").await;
    assert!(question(&frames).is_none());
    assert_eq!(
        fed_back(&app, 3).last().unwrap()["code"],
        "recipient_not_allowed"
    );
    assert!(sink.received().is_empty());
}

#[actix_web::test]
async fn without_confirmation_an_email_goes_at_once_and_no_header_can_be_injected() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.url(), false, 20).await;
    let (_, chat) = mailing_chat(&app).await;
    app.upstream.script([
        Reply::tool_call(
            "bad_to",
            "send_email",
            json!({"to": "ops@example.org\r\nBcc: spy@evil.com", "subject": "A", "body": "x"}),
        )
        .and_tool_call(
            "list_to",
            "send_email",
            json!({"to": "ops@example.org, spy@evil.com", "subject": "B", "body": "x"}),
        )
        .and_tool_call(
            "bad_subject",
            "send_email",
            json!({"to": "ops@example.org", "subject": "C\r\nBcc: spy@evil.com", "body": "x"}),
        )
        .and_tool_call(
            "good",
            "send_email",
            json!({"to": "ops@example.org", "subject": "Plain",
                   "body": "Bcc: spy@evil.com\r\n\r\nA body that looks like headers stays body."}),
        ),
        Reply::text("Sent the plain one."),
    ]);
    let frames = app.send_text(&chat, "Send them").await;
    assert!(question(&frames).is_none(), "confirm = false asks nobody");
    assert_eq!(
        codes(&fed_back(&app, 1)),
        [
            "invalid_recipient",
            "invalid_recipient",
            "invalid_subject",
            "sent"
        ]
    );
    let received = sink.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let mail = &received[0];
    assert_eq!(mail["rcpt_tos"], json!(["ops@example.org"]));
    assert_eq!(mail["subject"], "Plain");
    assert_eq!(mail["bcc"], Value::Null);
    let raw = mail["raw"].as_str().unwrap();
    let (headers, _) = raw.split_once("\r\n\r\n").unwrap();
    assert!(!headers.contains("spy@evil.com"), "{headers}");
}

#[actix_web::test]
async fn an_agents_hourly_limit_holds_across_a_restart_and_is_its_own() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.url(), false, 2).await;
    let (_, chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call("m1", "a@example.org", "One", "1")
            .and_tool_call(
                "m2",
                "send_email",
                json!({"to": "b@example.org", "subject": "Two", "body": "2"}),
            )
            .and_tool_call(
                "m3",
                "send_email",
                json!({"to": "c@example.org", "subject": "Three", "body": "3"}),
            ),
        Reply::text("Two went."),
    ]);
    app.send_text(&chat, "Send three").await;
    let told = fed_back(&app, 1);
    assert_eq!(codes(&told), ["rate_limited", "sent", "sent"]);
    let limited = told.iter().find(|r| r["code"] == "rate_limited").unwrap();
    assert!(
        limited["error"].as_str().unwrap().contains("2 emails"),
        "{limited}"
    );
    assert_eq!(sink.received().len(), 2);

    let app = app.restart().await;
    app.upstream.script([
        send_call("m4", "d@example.org", "Four", "4"),
        Reply::text("Still limited."),
    ]);
    app.send_text(&chat, "One more").await;
    assert_eq!(fed_back(&app, 3).last().unwrap()["code"], "rate_limited");
    assert_eq!(
        sink.received().len(),
        2,
        "a restart does not reset the limit"
    );

    let (_, other_chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call("m5", "e@example.org", "Five", "5"),
        Reply::text("Another agent's own limit."),
    ]);
    app.send_text(&other_chat, "From the other agent").await;
    assert_eq!(fed_back(&app, 5).last().unwrap()["sent"], true);
    assert_eq!(sink.received().len(), 3);
}

#[actix_web::test]
async fn an_smtp_failure_is_an_error_result_that_says_so_and_costs_no_slot() {
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.url(), false, 1).await;
    let (_, chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call("m1", "bounce@example.org", "Hi", "Anyone there?"),
        Reply::text("It bounced."),
        send_call("m2", "ops@example.org", "Hi", "Hello."),
        Reply::text("This one went."),
    ]);
    app.send_text(&chat, "Mail bounce").await;
    let told = &fed_back(&app, 1)[0];
    assert_eq!(told["code"], "smtp_failed");
    assert!(
        told["error"]
            .as_str()
            .unwrap()
            .contains("mailbox unavailable"),
        "the server's words: {told}"
    );
    app.send_text(&chat, "Mail ops").await;
    assert_eq!(
        fed_back(&app, 3).last().unwrap()["sent"],
        true,
        "a failed send does not count against the limit"
    );
    assert_eq!(sink.received().len(), 1);

    // A server that cannot be reached, with a password in its URL: the password is in no
    // result and no log line.
    let app = app_sending_to("smtp://mailer:hunter2-secret@127.0.0.1:9".into(), false, 5).await;
    let (_, chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call("m1", "ops@example.org", "Hi", "Hello."),
        Reply::text("The mail server is down."),
    ]);
    let frames = app.send_text(&chat, "Mail ops").await;
    let told = &fed_back(&app, 1)[0];
    assert_eq!(told["code"], "smtp_failed");
    assert!(!told.to_string().contains("hunter2"));
    assert!(!frames.iter().any(|f| f.data.contains("hunter2")));
    assert!(!captured_log().contains("hunter2"));
}

#[actix_web::test]
async fn send_email_is_offered_only_to_agents_naming_it_on_a_server_with_email() {
    let plain = spawn_app().await;
    let refused = plain
        .api()
        .create_agent()
        .json(&json!({"name": "Mailer", "enabled_tools": ["send_email", "calculator"]}))
        .call()
        .await;
    assert_eq!(refused.status(), 400);
    let error = error_body(refused).await;
    assert_eq!(error["code"], "unknown_tool");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("send_email is not configured"),
        "{message}"
    );
    assert!(message.contains("[email]"), "{message}");

    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.url(), true, 20).await;
    let (agent, chat) = mailing_chat(&app).await;
    let listed: Value = app.api().agent_tools(&agent).read_json().await;
    let tool = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "send_email")
        .expect("listed for the agent that names it")
        .clone();
    assert_eq!(tool["parameters"]["type"], "object");
    assert_eq!(
        tool["parameters"]["required"],
        json!(["to", "subject", "body"])
    );
    assert_eq!(tool["parameters"]["properties"]["to"]["type"], "string");
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .contains("ops@partner.net")
    );

    let calc: Value = app
        .api()
        .create_agent()
        .json(&json!({"name": "Calc", "enabled_tools": ["calculator"]}))
        .read_json()
        .await;
    let listed: Value = app
        .api()
        .agent_tools(calc["id"].as_str().unwrap())
        .read_json()
        .await;
    assert!(
        !listed["tools"].to_string().contains("send_email"),
        "an agent that does not name it"
    );

    // The agent's chat offers it to the model; the default agent's does not.
    app.upstream
        .script([Reply::text("Hi."), Reply::text("Hi.")]);
    app.send_text(&chat, "hello").await;
    let default_chat = app.new_chat().await;
    app.send(
        &default_chat,
        json!({"content": "hello", "enableTools": true}),
    )
    .await;
    let offered = |index: usize| app.upstream.received()[index].body["tools"].to_string();
    assert!(offered(0).contains("send_email"));
    assert!(!offered(1).contains("send_email"));
}

/// The user `agent` belongs to.
async fn owner(app: &TestApp, agent: &str) -> entities::ids::UserId {
    use sea_orm::EntityTrait;
    entities::agents::Entity::find_by_id(entities::ids::AgentId::from_string(agent))
        .one(&app.db)
        .await
        .unwrap()
        .expect("the agent")
        .user_id
}

async fn ask_status(app: &TestApp, correlation_id: &str) -> String {
    use sea_orm::{ActiveEnum, ColumnTrait, EntityTrait, QueryFilter};
    entities::pending_asks::Entity::find()
        .filter(entities::pending_asks::Column::CorrelationId.eq(correlation_id))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap()
        .status
        .to_value()
}

/// Pauses `chat` on a confirmation, then stores the user's yes as a process that died before
/// its continuation ran would have left it; returns the question's correlation id.
async fn yes_left_by_a_dead_process(app: &TestApp, chat: &str, subject: &str) -> String {
    app.upstream.script([send_call(
        "mail_1",
        "ops@example.org",
        subject,
        "After a restart.",
    )]);
    let frames = app.send_text(chat, "Mail ops").await;
    let correlation_id = question(&frames).expect("a confirmation")["correlation_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        colloquy::chat::asks::claim(
            &app.db,
            &entities::ids::AskCorrelationId::from_string(&correlation_id),
            &json!("Yes")
        )
        .await
        .unwrap()
    );
    correlation_id
}

#[actix_web::test]
async fn a_confirmed_email_whose_continuation_a_restart_cut_off_goes_out_at_most_once() {
    use sea_orm::ActiveModelTrait;
    let sink = SmtpSink::start().await;
    let app = app_sending_to(sink.url(), true, 20).await;
    let (agent, chat) = mailing_chat(&app).await;
    let first = yes_left_by_a_dead_process(&app, &chat, "Resumed").await;
    // A second confirmation whose send a dead process had begun: it may have gone out.
    let (_, other_chat) = mailing_chat(&app).await;
    let second = yes_left_by_a_dead_process(&app, &other_chat, "Cut off").await;
    entities::email_sends::ActiveModel {
        id: sea_orm::Set(entities::ids::EmailSendId::generate()),
        agent_id: sea_orm::Set(entities::ids::AgentId::from_string(&agent)),
        user_id: sea_orm::Set(owner(&app, &agent).await),
        correlation_id: sea_orm::Set(Some(second.clone())),
        recipient: sea_orm::Set("ops@example.org".into()),
        subject: sea_orm::Set("Cut off".into()),
        status: sea_orm::Set(entities::email_sends::EmailSendStatus::Sending),
        error: sea_orm::Set(None),
        created_at: sea_orm::Set(chrono::Utc::now()),
        finished_at: sea_orm::Set(None),
    }
    .insert(&app.db)
    .await
    .unwrap();
    app.upstream
        .script_for("Resumed", [Reply::text("Sent after the restart.")]);
    app.upstream
        .script_for("Cut off", [Reply::text("It may not have gone.")]);
    let app = app.restart().await;
    for correlation_id in [&first, &second] {
        crate::helpers::eventually(
            "the continuation",
            std::time::Duration::from_secs(10),
            || async { (ask_status(&app, correlation_id).await == "completed").then_some(()) },
        )
        .await;
    }
    let received = sink.received();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0]["subject"], "Resumed");
    let told: Vec<Value> = app
        .upstream
        .received()
        .iter()
        .filter_map(|r| r.body["messages"].as_array()?.last().cloned())
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(codes(&told), ["send_interrupted", "sent"]);
}

#[actix_web::test]
async fn the_browser_shows_the_email_on_its_confirmation_card_and_yes_sends_it() {
    let sink = SmtpSink::start().await;
    let url = sink.url();
    let app = crate::browser::browser_app(|config| {
        config.email = Some(email_config(url, true, 20));
    })
    .await;
    let (_, chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call(
            "mail_1",
            "ops@example.org",
            "Disk full on db-1",
            "The disk on db-1 is full.\nPlease free some space.",
        ),
        Reply::text("I sent the email."),
    ]);
    let frames = app.send_text(&chat, "Tell ops the disk is full").await;
    assert!(question(&frames).is_some());
    crate::browser::run_scenario(&app, "send_email", &[("CHAT_ID", chat)]).await;
    let received = sink.received();
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(received[0]["subject"], "Disk full on db-1");
}

/// Whether every CR in `bytes` starts a CRLF and every LF ends one.
fn only_crlf(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().all(|(i, byte)| match byte {
        b'\r' => bytes.get(i + 1) == Some(&b'\n'),
        b'\n' => i > 0 && bytes[i - 1] == b'\r',
        _ => true,
    })
}

#[actix_web::test]
async fn a_body_with_bare_line_breaks_cannot_smuggle_a_second_message_past_a_lenient_relay() {
    let sink = RawSmtpSink::start();
    let app = app_sending_to(sink.url(), false, 20).await;
    let (_, chat) = mailing_chat(&app).await;
    let smuggling =
        "hi\r.\rMAIL FROM:<x@ok.org>\rRCPT TO:<b@evil.com>\rDATA\rSmuggled.\n.\nbye\n.hidden";
    app.upstream.script([
        send_call("m1", "ops@example.org", "Hello", smuggling),
        Reply::text("Sent."),
    ]);
    app.send_text(&chat, "Say hi to ops").await;

    let received = sink.received();
    assert_eq!(
        received.len(),
        1,
        "one message, whatever its body says: {received:?}"
    );
    let mail = &received[0];
    assert_eq!(mail.rcpt_to, ["ops@example.org"], "{mail:?}");
    assert_eq!(mail.mail_from, "colloquy@example.org");
    let data = String::from_utf8_lossy(&mail.data);
    assert!(
        only_crlf(&mail.data),
        "a bare CR or LF on the wire: {data:?}"
    );
    // Every line break is CRLF, and a line that starts with a dot has it doubled.
    assert!(
        data.ends_with(
            "\r\n\r\nhi\r\n..\r\nMAIL FROM:<x@ok.org>\r\nRCPT TO:<b@evil.com>\r\nDATA\r\n\
             Smuggled.\r\n..\r\nbye\r\n..hidden"
        ),
        "{data:?}"
    );
    assert_eq!(fed_back(&app, 1)[0]["sent"], true, "the one message went");
}

#[actix_web::test]
async fn a_users_hourly_limit_counts_all_their_agents_and_deleting_one_frees_no_slot() {
    let sink = RawSmtpSink::start();
    let app = app_with_limits(sink.url(), 5, 2, ROOMY).await;
    let (first_agent, first_chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call("m1", "a@example.org", "One", "1").and_tool_call(
            "m2",
            "send_email",
            json!({"to": "b@example.org", "subject": "Two", "body": "2"}),
        ),
        Reply::text("Two went."),
    ]);
    app.send_text(&first_chat, "Send two").await;
    assert_eq!(codes(&fed_back(&app, 1)), ["sent", "sent"]);

    // A new agent has its own per-agent slots, but not its user's.
    let (_, second_chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call("m3", "c@example.org", "Three", "3"),
        Reply::text("Limited."),
    ]);
    app.send_text(&second_chat, "Send a third").await;
    let told = fed_back(&app, 3);
    let limited = told.last().unwrap();
    assert_eq!(limited["code"], "user_rate_limited", "{limited}");
    let error = limited["error"].as_str().unwrap();
    assert!(
        error.contains("2 emails") && error.contains("per-user limit"),
        "{limited}"
    );

    let deleted = app.api().delete_agent(&first_agent).call().await;
    assert!(deleted.status().is_success(), "{}", deleted.status());
    app.upstream.script([
        send_call("m4", "d@example.org", "Four", "4"),
        Reply::text("Still limited."),
    ]);
    app.send_text(&second_chat, "Try again").await;
    assert_eq!(
        fed_back(&app, 5).last().unwrap()["code"],
        "user_rate_limited",
        "deleting the agent that sent them frees none of its user's slots"
    );
    assert_eq!(sink.received().len(), 2);
}

#[actix_web::test]
async fn the_server_wide_hourly_limit_counts_every_users_sends() {
    let sink = RawSmtpSink::start();
    let app = app_with_limits(sink.url(), 5, 5, 2).await;
    let (_, admin_chat) = mailing_chat(&app).await;
    app.upstream.script([
        send_call("m1", "a@example.org", "One", "1"),
        Reply::text("Sent."),
        send_call("m2", "b@example.org", "Two", "2"),
        Reply::text("Sent."),
    ]);
    app.send_text(&admin_chat, "Send one").await;
    app.send_text(&admin_chat, "And another").await;
    assert_eq!(fed_back(&app, 1).last().unwrap()["sent"], true);
    assert_eq!(fed_back(&app, 3).last().unwrap()["sent"], true);

    let key = app.create_user_with_key("grace").await;
    let grace = app.as_key(&key);
    let (_, chat) = mailing_chat_of(grace).await;
    app.upstream.script([
        send_call("m3", "c@example.org", "Three", "3"),
        Reply::text("Limited."),
    ]);
    send_text_as(grace, &chat, "Send mine").await;
    let limited = fed_back(&app, 5).last().unwrap().clone();
    assert_eq!(limited["code"], "server_rate_limited", "{limited}");
    assert!(
        limited["error"]
            .as_str()
            .unwrap()
            .contains("server-wide limit"),
        "{limited}"
    );
    assert_eq!(sink.received().len(), 2);
}
