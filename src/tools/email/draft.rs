//! An email as the model asks for it, checked before anything else looks at it: one recipient
//! address, a one-line subject, a plain-text body. Nothing the model writes can become a
//! header of its own: `to` is a bare address (lettre's mailbox parser would ignore what
//! follows a first address, so none is used), and line breaks or control characters in the
//! subject are refused rather than folded. The body's line breaks are normalised (a bare CR or
//! LF becomes one line break, sent as CRLF), so no bare CR or LF reaches the SMTP server, where
//! a lenient relay could read `\r.\r` as the end of the message and what follows as commands.

use lettre::Address;
use lettre::message::header::ContentType;
use lettre::message::{Mailbox, Message};
use serde_json::{Value, json};

use super::EmailError;

/// Longest subject, in characters: a line a person reads in a list of emails.
pub const MAX_SUBJECT_CHARS: usize = 200;
/// Longest body, in characters: a long email, not a document (attach nothing, paste nothing
/// large).
pub const MAX_BODY_CHARS: usize = 20_000;
/// Longest address (RFC 5321's limit on a forward path).
pub const MAX_ADDRESS_CHARS: usize = 254;

/// A checked email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draft {
    pub to: Address,
    pub subject: String,
    pub body: String,
}

impl Draft {
    /// Checks the model's `to`, `subject` and `body`.
    pub fn parse(to: &str, subject: &str, body: &str) -> Result<Self, EmailError> {
        let to = to.trim();
        if to.is_empty()
            || to.chars().count() > MAX_ADDRESS_CHARS
            || to.chars().any(|c| c.is_whitespace() || c.is_control())
            || to.contains([',', ';', '<', '>'])
        {
            return Err(EmailError::InvalidRecipient(to.chars().take(100).collect()));
        }
        let to: Address = to
            .parse()
            .map_err(|_| EmailError::InvalidRecipient(to.to_string()))?;
        let subject = subject.trim();
        if subject.is_empty()
            || subject.chars().count() > MAX_SUBJECT_CHARS
            || subject.chars().any(char::is_control)
        {
            return Err(EmailError::InvalidSubject);
        }
        let body = normalised_line_breaks(body);
        let body_ok = !body.trim().is_empty()
            && body.chars().count() <= MAX_BODY_CHARS
            && !body
                .chars()
                .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'));
        if !body_ok {
            return Err(EmailError::InvalidBody);
        }
        Ok(Self {
            to,
            subject: subject.to_string(),
            body,
        })
    }

    /// The message from `from`, to this draft's one recipient (its envelope has no other),
    /// every line of its body ended by CRLF. (lettre's SMTP client doubles a `.` that starts a
    /// line, after a CRLF only: which is why no bare CR may reach it.)
    pub fn message(&self, from: &Mailbox) -> Result<Message, EmailError> {
        Message::builder()
            .from(from.clone())
            .to(Mailbox::new(None, self.to.clone()))
            .subject(self.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(self.body.replace('\n', "\r\n"))
            .map_err(|err| EmailError::Unbuildable(err.to_string()))
    }

    /// The draft as the confirmation card shows it and the stored question keeps it.
    pub fn to_json(&self) -> Value {
        json!({"to": self.to.to_string(), "subject": self.subject, "body": self.body})
    }
}

/// `body` with every line break one `\n`: CRLF, and a bare CR or LF, each end a line.
fn normalised_line_breaks(body: &str) -> String {
    body.replace("\r\n", "\n").replace('\r', "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from() -> Mailbox {
        "Colloquy <colloquy@example.org>".parse().unwrap()
    }

    fn formatted(draft: &Draft) -> String {
        String::from_utf8(draft.message(&from()).unwrap().formatted()).unwrap()
    }

    #[test]
    fn a_plain_email_has_one_recipient_its_subject_and_a_plain_text_body() {
        let draft = Draft::parse(
            "ops@example.org",
            "Disk full",
            "The disk is full.\nPlease look.",
        )
        .unwrap();
        let message = draft.message(&from()).unwrap();
        let recipients: Vec<String> = message
            .envelope()
            .to()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(recipients, ["ops@example.org"]);
        let text = formatted(&draft);
        assert!(text.contains("To: ops@example.org\r\n"), "{text}");
        assert!(text.contains("Subject: Disk full\r\n"), "{text}");
        assert!(
            text.contains("Content-Type: text/plain; charset=utf-8"),
            "{text}"
        );
        assert!(text.contains("The disk is full.\r\nPlease look."), "{text}");
    }

    #[test]
    fn headers_cannot_be_injected_through_to_or_subject() {
        for to in [
            "ops@example.org\r\nBcc: spy@evil.com",
            "ops@example.org\nBcc: spy@evil.com",
            "ops@example.org, spy@evil.com",
            "ops@example.org;spy@evil.com",
            "Ops <ops@example.org>",
            "ops@example.org spy@evil.com",
            "",
            "not an address",
        ] {
            let err = Draft::parse(to, "Hi", "Body").unwrap_err();
            assert_eq!(err.code(), "invalid_recipient", "{to:?}");
        }
        for subject in [
            "Hi\r\nBcc: spy@evil.com",
            "Hi\nBcc: spy@evil.com",
            "Hi\rBcc: spy@evil.com",
            "Hi\u{0}",
            "   ",
        ] {
            let err = Draft::parse("ops@example.org", subject, "Body").unwrap_err();
            assert_eq!(err.code(), "invalid_subject", "{subject:?}");
        }
        let err = Draft::parse("ops@example.org", "Hi", "a\u{0}b").unwrap_err();
        assert_eq!(err.code(), "invalid_body");
        let long = "x".repeat(MAX_SUBJECT_CHARS + 1);
        assert!(Draft::parse("ops@example.org", &long, "Body").is_err());
    }

    #[test]
    fn a_body_that_looks_like_headers_stays_body() {
        let draft =
            Draft::parse("ops@example.org", "Hi", "Bcc: spy@evil.com\r\n\r\nHello").unwrap();
        let message = draft.message(&from()).unwrap();
        assert_eq!(message.envelope().to().len(), 1);
        let text = formatted(&draft);
        let (headers, _) = text.split_once("\r\n\r\n").unwrap();
        assert!(!headers.contains("Bcc"), "{headers}");
    }

    #[test]
    fn a_non_ascii_subject_is_encoded_not_raw() {
        let draft = Draft::parse("ops@example.org", "Café ☕ ready", "Body").unwrap();
        let text = formatted(&draft);
        assert!(text.contains("Subject: =?utf-8?"), "{text}");
    }

    #[test]
    fn bare_carriage_returns_and_line_feeds_become_crlf_line_breaks() {
        let body = "hi\r.\rMAIL FROM:<x@ok.org>\rRCPT TO:<b@evil.com>\rDATA\r\nsmuggled\n.\nend";
        let draft = Draft::parse("ops@example.org", "Hi", body).unwrap();
        assert_eq!(
            draft.body,
            "hi\n.\nMAIL FROM:<x@ok.org>\nRCPT TO:<b@evil.com>\nDATA\nsmuggled\n.\nend"
        );
        let text = formatted(&draft);
        assert!(
            text.ends_with(
                "\r\n\r\nhi\r\n.\r\nMAIL FROM:<x@ok.org>\r\nRCPT TO:<b@evil.com>\r\nDATA\r\n\
                 smuggled\r\n.\r\nend"
            ),
            "{text:?}"
        );
        let bytes = text.as_bytes();
        for (i, byte) in bytes.iter().enumerate() {
            match byte {
                b'\r' => assert_eq!(bytes.get(i + 1), Some(&b'\n'), "a bare CR at {i}: {text:?}"),
                b'\n' => assert_eq!(bytes[i - 1], b'\r', "a bare LF at {i}: {text:?}"),
                _ => {}
            }
        }
        let again = Draft::parse("ops@example.org", "Hi", &draft.body).unwrap();
        assert_eq!(again, draft, "a stored draft reads back the same");
    }
}
