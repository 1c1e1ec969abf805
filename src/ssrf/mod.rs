//! SSRF protection for page fetches: which addresses are off limits, how resolvers spell IPv4
//! hosts, the test-only allow-list, and the DNS resolver reqwest connects through, which hands
//! it only addresses that passed the check (so there is no window between checking a name and
//! connecting to it). Fetching itself is `tools::fetch::Fetcher`'s; configuration checks its
//! allow-list with `AllowList::parse`, so this sits on the lowest floor.
//!
//! Here: `Refusal`. Beside it: `forbidden` (which addresses are off limits, and why),
//! `host_ip` (a URL host as resolvers read it), `allow_list` (`AllowList`), `guard` (`Guard`,
//! the check of URLs and resolved addresses) and `resolver` (`HostResolver`, `SystemResolver`,
//! `CheckedResolver`).

mod allow_list;
mod forbidden;
mod guard;
mod host_ip;
mod resolver;

#[cfg(test)]
mod tests;

pub use allow_list::{AllowEntryError, AllowList};
pub use forbidden::{forbidden_reason, is_forbidden};
pub use guard::Guard;
pub use host_ip::parse_host_ip;
pub use resolver::{CheckedResolver, HostResolver, SystemResolver};

/// Why an address or URL may not be fetched, in words fit for the model: "refused: ...".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused: {0}")]
pub struct Refusal(String);
