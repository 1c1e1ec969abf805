//! `send_email {to, subject, body}` (issue 32): a plain-text email to one allowed recipient,
//! over SMTP (`lettre`), from the `[email]` configuration only. `draft` checks what the model
//! wrote (no header can be injected, the body's line breaks are normalised to CRLF), `mailer`
//! holds the transport, the allow-list and the hourly limits per agent, per user and
//! server-wide (`sends`, in the database), `confirm` the ask-first path: with
//! `email.confirm` the call pauses the run on a `confirm` question and the answer's
//! continuation sends. Every refusal is an error result with a stable code, checked before the
//! user is asked.

pub mod confirm;
pub mod draft;
pub mod mailer;
mod sends;

use std::borrow::Cow;
use std::convert::identity;
use std::sync::Arc;

use entities::ids::{AgentId, UserId};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ProgressKind, ToolError, ToolFuture, TypedTool, typed};
use crate::llm::wire::ToolDefinition;
use draft::{Draft, MAX_ADDRESS_CHARS, MAX_BODY_CHARS, MAX_SUBJECT_CHARS};
pub use mailer::{Mailer, Sender};

/// The tool's name.
pub const SEND_EMAIL: &str = "send_email";
/// What a server needs to offer it, for refusing an agent that names it without.
pub const NEEDS: &str = "an [email] section: smtp_url, from and allowed_recipients";

/// Why an email was not sent, each with its stable code.
#[derive(Debug, thiserror::Error)]
pub enum EmailError {
    #[error("{0:?} is not one email address (user@domain, nothing else)")]
    InvalidRecipient(String),
    #[error(
        "the subject must be one line of 1-{MAX_SUBJECT_CHARS} characters, without line breaks or control characters"
    )]
    InvalidSubject,
    #[error(
        "the body must be 1-{MAX_BODY_CHARS} characters of plain text, without control characters but line breaks and tabs"
    )]
    InvalidBody,
    #[error("the email could not be composed: {0}")]
    Unbuildable(String),
    #[error("{to} is not an allowed recipient: email goes only to {allowed}")]
    RecipientNotAllowed { to: String, allowed: String },
    #[error("{}; the next can go in {minutes} minutes", .cap.reached(*.limit))]
    RateLimited { cap: Cap, limit: u32, minutes: i64 },
    #[error("the SMTP server did not take the email: {0}")]
    SmtpFailed(String),
    #[error("the user declined: the email was not sent")]
    Declined,
    #[error("sending this email was cut off by a restart: it may or may not have gone out")]
    Interrupted,
    #[error("email is no longer configured on this server: the email was not sent")]
    Unavailable,
    #[error("{0} is not usable")]
    Misconfigured(String),
    #[error("the email could not be recorded, so it was not sent")]
    Record(#[source] sea_orm::DbErr),
}

impl EmailError {
    /// The stable code of the error result.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidRecipient(_) => "invalid_recipient",
            Self::InvalidSubject => "invalid_subject",
            Self::InvalidBody => "invalid_body",
            Self::Unbuildable(_) => "invalid_email",
            Self::RecipientNotAllowed { .. } => "recipient_not_allowed",
            Self::RateLimited { cap, .. } => cap.code(),
            Self::SmtpFailed(_) => "smtp_failed",
            Self::Declined => "declined",
            Self::Interrupted => "send_interrupted",
            Self::Unavailable | Self::Misconfigured(_) => "email_unavailable",
            Self::Record(_) => "email_record_failed",
        }
    }

    fn suggestion(&self) -> &'static str {
        match self {
            Self::InvalidRecipient(_)
            | Self::InvalidSubject
            | Self::InvalidBody
            | Self::Unbuildable(_) => {
                "Fix the arguments as the message says and call send_email again."
            }
            Self::RecipientNotAllowed { .. } => {
                "Do not retry with this address: tell the user it is not an allowed recipient."
            }
            Self::RateLimited { .. } => "Tell the user the email could not be sent now.",
            Self::SmtpFailed(_) | Self::Record(_) | Self::Unavailable | Self::Misconfigured(_) => {
                "Tell the user the email was not sent, and why."
            }
            Self::Declined => "Do not send it again unless the user asks; say it was not sent.",
            Self::Interrupted => "Tell the user; ask before sending it again.",
        }
    }
}

/// Which hourly limit a send reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// `email.max_per_hour`: one agent's.
    Agent,
    /// `email.user_max_per_hour`: one user's, all their agents together.
    User,
    /// `email.server_max_per_hour`: everyone's together.
    Server,
}

impl Cap {
    /// The stable code of a send refused by this limit.
    pub fn code(self) -> &'static str {
        match self {
            Self::Agent => "rate_limited",
            Self::User => "user_rate_limited",
            Self::Server => "server_rate_limited",
        }
    }

    /// That this limit of `limit` emails is reached, naming it.
    fn reached(self, limit: u32) -> String {
        match self {
            Self::Agent => format!(
                "this agent has sent its {limit} emails for this hour (the per-agent limit)"
            ),
            Self::User => format!(
                "this user's agents together have sent the {limit} emails a user may send in \
                 an hour (the per-user limit)"
            ),
            Self::Server => format!(
                "this server has sent the {limit} emails it may send in an hour, all users \
                 together (the server-wide limit)"
            ),
        }
    }
}

impl From<EmailError> for ToolError {
    fn from(err: EmailError) -> Self {
        ToolError::new(err.code(), err.to_string(), err.suggestion())
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    /// The one recipient's address (user@domain), one the description allows.
    #[schemars(length(min = 1, max = MAX_ADDRESS_CHARS))]
    to: String,
    /// The subject: one line.
    #[schemars(length(min = 1, max = MAX_SUBJECT_CHARS))]
    subject: String,
    /// The message, as plain text.
    #[schemars(length(min = 1, max = MAX_BODY_CHARS))]
    body: String,
}

/// `send_email` for one agent's runs (its limits are the agent's, its user's and the
/// server's).
pub struct SendEmail {
    mailer: Arc<Mailer>,
    sender: Sender,
}

impl SendEmail {
    pub fn new(mailer: Arc<Mailer>, user: UserId, agent: AgentId) -> Self {
        Self {
            mailer,
            sender: Sender { user, agent },
        }
    }

    /// The definition, which needs no agent (for listing an agent's tools).
    pub fn describe(mailer: &Mailer) -> ToolDefinition {
        typed::definition::<Arguments>(SEND_EMAIL, &description(mailer), identity)
    }
}

/// What the model is told: the allowed recipients, whether the user confirms, the hourly limit.
fn description(mailer: &Mailer) -> String {
    let confirm = if mailer.confirm() {
        " The user is asked to confirm each email before it is sent."
    } else {
        ""
    };
    format!(
        "Send a plain-text email to one recipient. Allowed recipients (nothing else is \
         accepted): {}.{confirm} At most {} emails an hour from this agent, and {} from all \
         of this user's agents together.",
        mailer.allowed().join(", "),
        mailer.max_per_hour(),
        mailer.user_max_per_hour()
    )
}

impl TypedTool for SendEmail {
    type Args = Arguments;

    fn name(&self) -> &'static str {
        SEND_EMAIL
    }

    fn description(&self) -> Cow<'_, str> {
        description(&self.mailer).into()
    }

    fn progress(&self) -> Option<ProgressKind> {
        None
    }

    /// With confirmation, the call is announced by its question (`x_ask_user.*`).
    fn own_events(&self) -> bool {
        self.mailer.confirm()
    }

    fn call_message(&self, args: Option<&Arguments>) -> String {
        match args {
            Some(Arguments { to, .. }) => format!("Sending an email to {to}"),
            None => "Sending an email".into(),
        }
    }

    /// With confirmation, a successful call is the question; the answer's continuation sends.
    fn pauses(&self) -> bool {
        self.mailer.confirm()
    }

    fn call(&self, args: Arguments) -> ToolFuture {
        let mailer = Arc::clone(&self.mailer);
        let sender = self.sender.clone();
        Box::pin(async move {
            let draft = Draft::parse(&args.to, &args.subject, &args.body)?;
            if mailer.confirm() {
                mailer.check(&sender, &draft).await?;
                return Ok(confirm::question(&mailer, &sender.agent, &draft));
            }
            Ok(mailer.send(&sender, &draft, None).await?)
        })
    }
}
