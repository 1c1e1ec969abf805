//! With `email.confirm`, an email goes out only on the user's yes: `send_email` pauses the run
//! on an ask_user `confirm` question that carries the email (`question`), and when the answer
//! comes the continuation sends exactly what the card showed (`deliver`) — or nothing, on a
//! no. The send is recorded against the confirmation, so a continuation resumed after a crash
//! never sends it twice.

use std::sync::Arc;

use entities::ids::{AgentId, UserId};
use serde_json::{Value, json};

use super::EmailError;
use super::draft::Draft;
use super::mailer::{Mailer, Sender};

/// The option that approves the send.
pub const YES: &str = "Yes";
/// The option that declines it.
pub const NO: &str = "No";

/// The confirmation question for `draft` (ask_user's shape, style `confirm`, with the email it
/// asks about under `email`: what the card shows and what is sent).
pub fn question(mailer: &Mailer, agent: &AgentId, draft: &Draft) -> Value {
    let mut email = draft.to_json();
    email["from"] = json!(mailer.from().to_string());
    email["agent_id"] = json!(agent);
    json!({
        "question": format!("Send this email to {}?", draft.to),
        "options": [YES, NO],
        "allow_free_text": false,
        "multi_select": false,
        "style": "confirm",
        "fields": [],
        "email": email,
    })
}

/// An email a stored question asks the user to confirm.
#[derive(Debug)]
pub struct Confirmation {
    sender: Sender,
    draft: Result<Draft, EmailError>,
}

impl Confirmation {
    /// The email `question`, asked of `user` (the ask's owner, whose agent it is), asks about;
    /// `None` for any other question (ask_user's own, which never has an `email`).
    pub fn of(question: &Value, user: &UserId) -> Option<Self> {
        let email = question.get("email")?;
        let text = |field: &str| email[field].as_str().unwrap_or_default();
        Some(Self {
            sender: Sender {
                user: user.clone(),
                agent: AgentId::from_string(text("agent_id")),
            },
            draft: Draft::parse(text("to"), text("subject"), text("body")),
        })
    }
}

/// Whether `answer` (checked against the question's options) is the user's yes.
pub fn approves(answer: &Value) -> bool {
    answer == &Value::Bool(true) || answer.as_str() == Some(YES)
}

/// The result of a confirmation's answer: declined, or the email sent through `mailer` (`None`
/// when `[email]` is gone from the configuration since it was asked) — unless the
/// confirmation `correlation_id` already sent it, whose outcome is given again.
pub async fn deliver(
    mailer: Option<&Arc<Mailer>>,
    confirmation: Confirmation,
    answer: &Value,
    correlation_id: &str,
) -> Result<Value, EmailError> {
    if !approves(answer) {
        return Err(EmailError::Declined);
    }
    let mailer = mailer.ok_or(EmailError::Unavailable)?;
    let draft = confirmation.draft?;
    if let Some(outcome) = mailer.earlier_send(correlation_id, &draft).await? {
        return outcome;
    }
    mailer
        .send(&confirmation.sender, &draft, Some(correlation_id))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_yes_approves() {
        assert!(approves(&json!("Yes")));
        assert!(approves(&json!(true)));
        for other in [json!("No"), json!(false), json!("yes please"), json!(null)] {
            assert!(!approves(&other), "{other}");
        }
    }

    #[test]
    fn an_ask_user_question_is_no_confirmation() {
        let question = json!({"question": "Which?", "style": "confirm", "options": ["Yes", "No"]});
        let user = UserId::from_string("user_1");
        assert!(Confirmation::of(&question, &user).is_none());
        let email = json!({"email": {"to": "ops@example.org", "subject": "S", "body": "B",
            "agent_id": "agent_1"}});
        let confirmation = Confirmation::of(&email, &user).unwrap();
        assert_eq!(confirmation.sender.agent, "agent_1");
        assert_eq!(confirmation.sender.user, user);
        assert_eq!(confirmation.draft.unwrap().subject, "S");
    }
}
