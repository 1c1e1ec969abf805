//! The `[email]` section: the SMTP server `send_email` sends through, the sender, and the only
//! recipients it may ever write to (`RecipientPattern`), checked at start-up. No section, no
//! `send_email`.

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

/// Most recipient patterns: an allow-list is a short list an operator reads, not a directory.
pub const MAX_RECIPIENT_PATTERNS: usize = 1_000;
/// Most emails any of the hourly limits may allow: a sending limit, not a mailing list.
pub const MAX_PER_HOUR_CEILING: u32 = 10_000;

/// `send_email`'s SMTP server and rules.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmailConfig {
    /// `smtp://host:port` (no TLS: only sensible to a relay on this machine), `smtp://host:587?tls=required`
    /// (STARTTLS), or `smtps://user:password@host:465` (TLS from the start); credentials in the
    /// URL, percent-encoded. A secret: it never prints.
    pub smtp_url: SecretString,
    /// The sender, as an address or `Name <address>`.
    pub from: String,
    /// Who may receive: exact addresses (`ops@partner.net`) and whole domains
    /// (`*@example.org`). Nothing else is ever sent to.
    pub allowed_recipients: Vec<String>,
    /// Ask the user (an ask_user `confirm` card) before each email goes out.
    #[serde(default = "yes")]
    pub confirm: bool,
    /// Emails one agent may send in any hour (counted in the database, so a restart does not
    /// reset it).
    #[serde(default = "default_max_per_hour")]
    pub max_per_hour: u32,
    /// Emails one user may send in any hour, through all their agents together (deleted ones
    /// too): any user can create agents, so the agent's limit alone bounds nobody.
    #[serde(default = "default_user_max_per_hour")]
    pub user_max_per_hour: u32,
    /// Emails the whole server may send in any hour, all users together: what the operator's
    /// SMTP account and reputation can bear, whoever signs up.
    #[serde(default = "default_server_max_per_hour")]
    pub server_max_per_hour: u32,
}

fn yes() -> bool {
    true
}

fn default_max_per_hour() -> u32 {
    20
}

/// Two agents' worth: a user with a few agents still sends a few dozen emails an hour at most.
fn default_user_max_per_hour() -> u32 {
    40
}

/// Ten users' worth of the per-user limit: a small team's server, not a bulk sender.
fn default_server_max_per_hour() -> u32 {
    400
}

/// One entry of `allowed_recipients`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecipientPattern {
    /// `*@domain`: anyone at exactly this domain (lowercase).
    Domain(String),
    /// One address (lowercase).
    Address(String),
}

impl RecipientPattern {
    /// Reads `*@domain` or an exact address; anything else (`*`, `ops@*`, a name, two
    /// addresses) is refused.
    pub fn parse(pattern: &str) -> Result<Self, String> {
        let refused = || {
            format!(
                "email.allowed_recipients entry {pattern:?} must be an address \
                 (ops@partner.net) or *@ and a domain (*@example.org)"
            )
        };
        if pattern.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(refused());
        }
        if let Some(domain) = pattern.strip_prefix("*@") {
            // A domain is valid when an address at it is.
            return match format!("x@{domain}").parse::<lettre::Address>() {
                Ok(_) if !domain.contains('*') => Ok(Self::Domain(domain.to_lowercase())),
                _ => Err(refused()),
            };
        }
        match pattern.parse::<lettre::Address>() {
            Ok(_) if !pattern.contains('*') => Ok(Self::Address(pattern.to_lowercase())),
            _ => Err(refused()),
        }
    }

    /// Whether `address` (already parsed as one) is this pattern's.
    pub fn matches(&self, address: &lettre::Address) -> bool {
        match self {
            Self::Domain(domain) => address.domain().to_lowercase() == *domain,
            Self::Address(exact) => address.to_string().to_lowercase() == *exact,
        }
    }
}

impl EmailConfig {
    /// The allow-list, read; validation has refused a malformed entry, so none is dropped.
    pub fn recipient_patterns(&self) -> Vec<RecipientPattern> {
        self.allowed_recipients
            .iter()
            .filter_map(|p| RecipientPattern::parse(p).ok())
            .collect()
    }

    /// What is wrong with this section, if anything: a URL lettre cannot use, credentials sent
    /// in the clear to another machine, a sender that is not one mailbox, a malformed or empty
    /// allow-list, a limit out of range. The message never shows the URL (it may hold a
    /// password).
    pub fn problem(&self) -> Option<String> {
        if let Some(problem) = smtp_url_problem(self.smtp_url.expose_secret()) {
            return Some(problem);
        }
        if !is_one_mailbox(&self.from) {
            return Some(format!(
                "email.from {:?} must be one address, or Name <address>",
                self.from
            ));
        }
        if self.allowed_recipients.is_empty()
            || self.allowed_recipients.len() > MAX_RECIPIENT_PATTERNS
        {
            return Some(format!(
                "email.allowed_recipients must name 1 to {MAX_RECIPIENT_PATTERNS} addresses or \
                 *@domain patterns: nothing is sent to anyone else"
            ));
        }
        if let Some(problem) = self
            .allowed_recipients
            .iter()
            .find_map(|p| RecipientPattern::parse(p).err())
        {
            return Some(problem);
        }
        let limits = [
            ("max_per_hour", self.max_per_hour),
            ("user_max_per_hour", self.user_max_per_hour),
            ("server_max_per_hour", self.server_max_per_hour),
        ];
        if let Some((name, _)) = limits
            .iter()
            .find(|(_, limit)| !(1..=MAX_PER_HOUR_CEILING).contains(limit))
        {
            return Some(format!(
                "email.{name} must be between 1 and {MAX_PER_HOUR_CEILING}"
            ));
        }
        None
    }
}

/// Whether `text` is exactly one mailbox: lettre's single-mailbox parser ignores what follows
/// the first, so the list parser must find one and only one.
pub fn is_one_mailbox(text: &str) -> bool {
    !text.chars().any(char::is_control)
        && text
            .parse::<lettre::message::Mailboxes>()
            .is_ok_and(|all| all.iter().count() == 1)
        && text.parse::<lettre::message::Mailbox>().is_ok()
}

/// Why lettre cannot use `url`, or would send a password unencrypted to another machine.
fn smtp_url_problem(url: &str) -> Option<String> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Some("email.smtp_url must be a URL: smtp://host:port or smtps://host:port".into());
    };
    let tls = parsed
        .query_pairs()
        .find(|(key, _)| key == "tls")
        .map(|(_, value)| value.into_owned());
    let encrypted = match (parsed.scheme(), tls.as_deref()) {
        ("smtps", None) => true,
        ("smtp", Some("required")) => true,
        ("smtp", None | Some("opportunistic")) => false,
        _ => {
            return Some(
                "email.smtp_url must be smtp://host:port (with ?tls=required for STARTTLS, or \
                 ?tls=opportunistic) or smtps://host:port"
                    .into(),
            );
        }
    };
    let Some(host) = parsed.host() else {
        return Some("email.smtp_url must name a host".into());
    };
    // `smtp` is not a scheme the URL standard knows, so its host comes as text, IPs too.
    let loopback = match host {
        url::Host::Domain(name) => {
            name.eq_ignore_ascii_case("localhost")
                || name
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    if parsed.password().is_some() && !encrypted && !loopback {
        return Some(
            "email.smtp_url sends its password to another machine without TLS: use smtps:// or \
             ?tls=required"
                .into(),
        );
    }
    if lettre::AsyncSmtpTransport::<lettre::Tokio1Executor>::from_url(url).is_err() {
        return Some("email.smtp_url cannot be used as an SMTP connection".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(toml: &str) -> Result<super::super::Config, super::super::ConfigError> {
        super::super::Config::from_toml_str(toml)
    }

    const VALID: &str = "[email]\nsmtp_url = \"smtp://127.0.0.1:2525\"\n\
        from = \"Colloquy <colloquy@example.org>\"\n\
        allowed_recipients = [\"*@example.org\", \"ops@partner.net\"]\n";

    #[test]
    fn a_valid_section_has_its_defaults() {
        let email = config(VALID).unwrap().email.unwrap();
        assert!(email.confirm);
        assert_eq!(email.max_per_hour, 20);
        assert_eq!(email.user_max_per_hour, 40);
        assert_eq!(email.server_max_per_hour, 400);
        assert_eq!(
            email.recipient_patterns(),
            [
                RecipientPattern::Domain("example.org".into()),
                RecipientPattern::Address("ops@partner.net".into())
            ]
        );
        assert!(config("").unwrap().email.is_none(), "no section, no email");
    }

    #[test]
    fn the_smtp_url_never_prints() {
        let toml = VALID.replace("smtp://127.0.0.1", "smtps://me:hunter2@mail.example.org");
        let loaded = config(&toml).unwrap();
        assert!(!format!("{loaded:?}").contains("hunter2"));
    }

    #[test]
    fn malformed_settings_are_refused_at_start_up_saying_which() {
        let cases = [
            (
                VALID.replace("smtp://127.0.0.1:2525", "http://x"),
                "smtp_url",
            ),
            (
                VALID.replace("smtp://127.0.0.1:2525", "not a url"),
                "smtp_url",
            ),
            (
                VALID.replace(
                    "smtp://127.0.0.1:2525",
                    "smtp://me:hunter2@mail.example.org",
                ),
                "without TLS",
            ),
            (
                VALID.replace("Colloquy <colloquy@example.org>", "nobody"),
                "email.from",
            ),
            (
                VALID.replace(
                    "Colloquy <colloquy@example.org>",
                    "a@example.org, b@example.org",
                ),
                "email.from",
            ),
            (VALID.replace("*@example.org", "*"), "allowed_recipients"),
            (
                VALID.replace("*@example.org", "ops@*"),
                "allowed_recipients",
            ),
            (
                VALID.replace("*@example.org", "*@*.example.org"),
                "allowed_recipients",
            ),
            (
                VALID.replace("*@example.org", "a@x.org, b@y.org"),
                "allowed_recipients",
            ),
            (
                VALID.replace("[\"*@example.org\", \"ops@partner.net\"]", "[]"),
                "allowed_recipients",
            ),
            (format!("{VALID}max_per_hour = 0\n"), "max_per_hour"),
            (
                format!("{VALID}user_max_per_hour = 0\n"),
                "email.user_max_per_hour",
            ),
            (
                format!("{VALID}server_max_per_hour = 10001\n"),
                "email.server_max_per_hour",
            ),
            (format!("{VALID}bcc = \"x@y.org\"\n"), "bcc"),
        ];
        for (toml, says) in cases {
            let err = config(&toml).unwrap_err().to_string();
            assert!(err.contains(says), "{toml}: {err}");
            assert!(!err.contains("hunter2"), "{err}");
        }
        let local_password = VALID.replace("smtp://127.0.0.1", "smtp://me:pw@127.0.0.1");
        let local = config(&local_password);
        assert!(local.is_ok(), "a relay on this machine: {:?}", local.err());
        let starttls = VALID.replace(
            "smtp://127.0.0.1:2525",
            "smtp://me:pw@mail.example.org:587?tls=required",
        );
        assert!(config(&starttls).is_ok());
    }

    #[test]
    fn patterns_match_their_domain_or_address_whatever_the_case() {
        let domain = RecipientPattern::parse("*@Example.org").unwrap();
        let exact = RecipientPattern::parse("Ops@partner.net").unwrap();
        let address = |a: &str| a.parse::<lettre::Address>().unwrap();
        assert!(domain.matches(&address("anyone@EXAMPLE.org")));
        assert!(!domain.matches(&address("anyone@sub.example.org")));
        assert!(!domain.matches(&address("anyone@example.org.evil.com")));
        assert!(exact.matches(&address("ops@Partner.net")));
        assert!(!exact.matches(&address("ops2@partner.net")));
    }
}
