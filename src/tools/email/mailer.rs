//! `Mailer`: the SMTP transport and the rules every email passes — the allow-list, the hourly
//! limits per agent, per user and server-wide (counted in `email_sends` under one lock, so two
//! sends at once cannot both take the last slot) — and the send itself, recorded before and
//! after the SMTP exchange. The exchange runs in a task of its own: a call that times out or a
//! run that is cancelled does not cut it off half-way or leave its row unfinished.

use std::sync::Arc;
use std::time::Duration;

use entities::email_sends::EmailSendStatus;
use entities::ids::{AgentId, UserId};
use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use sea_orm::DatabaseConnection;
use secrecy::ExposeSecret;
use serde_json::{Value, json};

use super::draft::Draft;
use super::sends::{self, Counted};
use super::{Cap, EmailError};
use crate::config::{EmailConfig, RecipientPattern};

/// Who sends an email: an agent and the user it belongs to (each has an hourly limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    pub user: UserId,
    pub agent: AgentId,
}

pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    patterns: Vec<RecipientPattern>,
    /// The allow-list as configured, for the tool's description and its refusals.
    allowed: Vec<String>,
    confirm: bool,
    max_per_hour: u32,
    user_max_per_hour: u32,
    server_max_per_hour: u32,
    db: DatabaseConnection,
    /// Held while a send's slot is counted and taken.
    reserving: tokio::sync::Mutex<()>,
}

impl Mailer {
    /// The mailer of a validated `[email]` section; `timeout` bounds each SMTP command.
    pub fn new(
        config: &EmailConfig,
        db: DatabaseConnection,
        timeout: Duration,
    ) -> Result<Self, EmailError> {
        let unusable = |what: &str| EmailError::Misconfigured(what.to_string());
        let transport =
            AsyncSmtpTransport::<Tokio1Executor>::from_url(config.smtp_url.expose_secret())
                .map_err(|_| unusable("email.smtp_url"))?
                .timeout(Some(timeout))
                .build();
        let from = config.from.parse().map_err(|_| unusable("email.from"))?;
        Ok(Self {
            transport,
            from,
            patterns: config.recipient_patterns(),
            allowed: config.allowed_recipients.clone(),
            confirm: config.confirm,
            max_per_hour: config.max_per_hour,
            user_max_per_hour: config.user_max_per_hour,
            server_max_per_hour: config.server_max_per_hour,
            db,
            reserving: tokio::sync::Mutex::new(()),
        })
    }

    /// Whether each email waits for the user's yes.
    pub fn confirm(&self) -> bool {
        self.confirm
    }

    pub fn from(&self) -> &Mailbox {
        &self.from
    }

    pub fn max_per_hour(&self) -> u32 {
        self.max_per_hour
    }

    /// Emails all of one user's agents may send in an hour, together.
    pub fn user_max_per_hour(&self) -> u32 {
        self.user_max_per_hour
    }

    /// The configured allow-list, as written.
    pub fn allowed(&self) -> &[String] {
        &self.allowed
    }

    /// Refuses a recipient outside the allow-list.
    pub fn check_recipient(&self, draft: &Draft) -> Result<(), EmailError> {
        if self.patterns.iter().any(|p| p.matches(&draft.to)) {
            return Ok(());
        }
        Err(EmailError::RecipientNotAllowed {
            to: draft.to.to_string(),
            allowed: self.allowed.join(", "),
        })
    }

    /// Refuses a send `sender` has no slot for this hour: its agent's limit, its user's (all
    /// their agents together) or the server's, whichever is reached first.
    pub async fn check_limit(&self, sender: &Sender) -> Result<(), EmailError> {
        let limits = [
            (Cap::Agent, Counted::Agent(&sender.agent), self.max_per_hour),
            (
                Cap::User,
                Counted::User(&sender.user),
                self.user_max_per_hour,
            ),
            (Cap::Server, Counted::Server, self.server_max_per_hour),
        ];
        for (cap, whose, limit) in limits {
            let counted = sends::counted(&self.db, whose, limit)
                .await
                .map_err(not_recorded)?;
            if (counted.len() as u64) < u64::from(limit) {
                continue;
            }
            // The oldest counted send frees its slot an hour after it began.
            let minutes = counted.first().map_or(60, |oldest| {
                let free_at = *oldest + sends::WINDOW;
                (free_at - chrono::Utc::now()).num_minutes().clamp(0, 59) + 1
            });
            return Err(EmailError::RateLimited {
                cap,
                limit,
                minutes,
            });
        }
        Ok(())
    }

    /// Everything but the user's yes: the allow-list, that the message can be composed, and
    /// the limit (all checked again when it goes).
    pub async fn check(&self, sender: &Sender, draft: &Draft) -> Result<(), EmailError> {
        self.check_recipient(draft)?;
        draft.message(&self.from)?;
        self.check_limit(sender).await
    }

    /// Sends `draft` for `sender` (on the confirmation `correlation_id`, if any): checks it,
    /// takes a slot, and hands the message to the SMTP server.
    pub async fn send(
        self: &Arc<Self>,
        sender: &Sender,
        draft: &Draft,
        correlation_id: Option<&str>,
    ) -> Result<Value, EmailError> {
        self.check_recipient(draft)?;
        let message = draft.message(&self.from)?;
        let recipient = draft.to.to_string();
        let id = {
            let _one_at_a_time = self.reserving.lock().await;
            self.check_limit(sender).await?;
            sends::begin(
                &self.db,
                sends::Begun {
                    agent: &sender.agent,
                    user: &sender.user,
                    correlation_id,
                    recipient: &recipient,
                    subject: &draft.subject,
                },
            )
            .await
            .map_err(not_recorded)?
        };
        let mailer = Arc::clone(self);
        let exchange = tokio::spawn(async move {
            let sent = mailer.transport.send(message).await;
            let error = sent.as_ref().err().map(ToString::to_string);
            if let Err(err) = sends::finish(&mailer.db, &id, error.as_deref()).await {
                tracing::error!(%err, send_id = %id, "could not record how an email send ended");
            }
            sent.map(|_| ()).map_err(|err| err.to_string())
        });
        match exchange.await {
            Ok(Ok(())) => {
                tracing::info!(agent_id = %sender.agent, user_id = %sender.user, "email sent");
                Ok(sent(draft))
            }
            Ok(Err(cause)) => {
                tracing::warn!(
                    agent_id = %sender.agent,
                    %cause,
                    "the SMTP server did not take an email"
                );
                Err(EmailError::SmtpFailed(cause))
            }
            Err(join) => Err(EmailError::SmtpFailed(join.to_string())),
        }
    }

    /// What a send a confirmation already made came to (`None`: none was made), for a
    /// continuation resumed after a crash: a send goes out at most once.
    pub async fn earlier_send(
        &self,
        correlation_id: &str,
        draft: &Draft,
    ) -> Result<Option<Result<Value, EmailError>>, EmailError> {
        let earlier = sends::of_confirmation(&self.db, correlation_id)
            .await
            .map_err(not_recorded)?;
        Ok(earlier.map(|row| match row.status {
            EmailSendStatus::Sent => Ok(sent(draft)),
            EmailSendStatus::Failed => Err(EmailError::SmtpFailed(row.error.unwrap_or_default())),
            EmailSendStatus::Sending => Err(EmailError::Interrupted),
        }))
    }
}

/// A database failure around a send: logged with its cause, which the model is not shown.
fn not_recorded(err: sea_orm::DbErr) -> EmailError {
    tracing::error!(%err, "could not read or record email sends");
    EmailError::Record(err)
}

/// A sent email's result.
fn sent(draft: &Draft) -> Value {
    json!({"sent": true, "to": draft.to.to_string(), "subject": draft.subject})
}
