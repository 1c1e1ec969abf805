//! `LoginThrottle`: failed password logins are limited per account (the username tried, whether
//! it exists or not) and per client address, each with a token bucket that refills over a
//! window. Every attempt takes a token from both before the password is checked, so concurrent
//! guesses cannot outrun the limit; a successful login gives its tokens back. Plain Rust, no
//! HTTP; memory is bounded by `MAX_TRACKED_KEYS`.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::config::AuthConfig;

/// Most accounts, and most addresses, whose failures are remembered at once. A bucket that has
/// refilled carries no information and is dropped first; past this many, the fullest bucket
/// goes (the one closest to being forgiven anyway). ~10,000 short keys is well under a megabyte.
const MAX_TRACKED_KEYS: usize = 10_000;
/// Usernames longer than this cannot exist (see `accounts`); longer tries share a key rather
/// than let a flood of huge usernames fill memory.
const MAX_KEY_CHARS: usize = 65;

/// Which allowance ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottledBy {
    Account,
    Address,
}

/// Too many failed logins: wait this long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Throttled {
    pub by: ThrottledBy,
    pub retry_after_secs: u64,
}

/// An attempt that took a token from its account and address; hand it back on success.
#[derive(Debug)]
pub struct LoginAttempt {
    account: String,
    address: Option<AddressKey>,
}

/// An IPv4 address, or an IPv6 address's /64: one host usually holds a whole /64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum AddressKey {
    V4(u32),
    V6Prefix(u64),
}

impl From<IpAddr> for AddressKey {
    fn from(ip: IpAddr) -> Self {
        match ip.to_canonical() {
            IpAddr::V4(v4) => Self::V4(u32::from(v4)),
            IpAddr::V6(v6) => Self::V6Prefix((u128::from(v6) >> 64) as u64),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Limit {
    /// Failures allowed in a burst (the bucket's size).
    burst: f64,
    /// Seconds to regain one token: the whole bucket refills over the window.
    secs_per_token: f64,
}

impl Limit {
    fn new(burst: u32, window: Duration) -> Self {
        let burst = f64::from(burst.max(1));
        Self {
            burst,
            secs_per_token: window.as_secs_f64().max(1.0) / burst,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn level(&self, limit: Limit, now: Instant) -> f64 {
        let regained = now.saturating_duration_since(self.at).as_secs_f64() / limit.secs_per_token;
        (self.tokens + regained).min(limit.burst)
    }

    fn retry_after_secs(level: f64, limit: Limit) -> u64 {
        ((1.0 - level) * limit.secs_per_token).ceil().max(1.0) as u64
    }
}

/// Buckets of one kind (accounts or addresses).
struct Buckets<K> {
    limit: Limit,
    map: HashMap<K, Bucket>,
}

impl<K: Eq + Hash + Clone> Buckets<K> {
    fn new(limit: Limit) -> Self {
        Self {
            limit,
            map: HashMap::new(),
        }
    }

    fn level(&self, key: &K, now: Instant) -> f64 {
        self.map
            .get(key)
            .map_or(self.limit.burst, |bucket| bucket.level(self.limit, now))
    }

    fn set(&mut self, key: K, tokens: f64, now: Instant) {
        if !self.map.contains_key(&key) && self.map.len() >= MAX_TRACKED_KEYS {
            self.make_room(now);
        }
        self.map.insert(key, Bucket { tokens, at: now });
    }

    fn make_room(&mut self, now: Instant) {
        let limit = self.limit;
        self.map
            .retain(|_, bucket| bucket.level(limit, now) < limit.burst);
        if self.map.len() >= MAX_TRACKED_KEYS {
            let fullest = self
                .map
                .iter()
                .max_by(|a, b| a.1.level(limit, now).total_cmp(&b.1.level(limit, now)))
                .map(|(key, _)| key.clone());
            if let Some(key) = fullest {
                self.map.remove(&key);
            }
        }
    }
}

struct State {
    accounts: Buckets<String>,
    addresses: Buckets<AddressKey>,
}

pub struct LoginThrottle {
    state: Mutex<State>,
}

impl LoginThrottle {
    pub fn new(config: &AuthConfig) -> Self {
        let window = Duration::from_secs(config.login_failure_window_secs);
        Self {
            state: Mutex::new(State {
                accounts: Buckets::new(Limit::new(config.login_failures_per_account, window)),
                addresses: Buckets::new(Limit::new(config.login_failures_per_address, window)),
            }),
        }
    }

    /// Takes one token from the account's and the address's buckets, or — taking nothing —
    /// says which ran out and in how many seconds it has a token again.
    pub fn begin(
        &self,
        username: &str,
        address: Option<IpAddr>,
    ) -> Result<LoginAttempt, Throttled> {
        self.begin_at(username, address, Instant::now())
    }

    /// An attempt that did not fail — a successful login, or our own error — does not count:
    /// its tokens go back.
    pub fn forgive(&self, attempt: LoginAttempt) {
        self.forgive_at(attempt, Instant::now());
    }

    fn begin_at(
        &self,
        username: &str,
        address: Option<IpAddr>,
        now: Instant,
    ) -> Result<LoginAttempt, Throttled> {
        let account: String = username.chars().take(MAX_KEY_CHARS).collect();
        let address = address.map(AddressKey::from);
        // A poisoned lock still holds consistent numbers: each update is one insert.
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let account_level = state.accounts.level(&account, now);
        if account_level < 1.0 {
            return Err(Throttled {
                by: ThrottledBy::Account,
                retry_after_secs: Bucket::retry_after_secs(account_level, state.accounts.limit),
            });
        }
        let address_level = address.map(|key| (key, state.addresses.level(&key, now)));
        if let Some((_, level)) = address_level
            && level < 1.0
        {
            return Err(Throttled {
                by: ThrottledBy::Address,
                retry_after_secs: Bucket::retry_after_secs(level, state.addresses.limit),
            });
        }
        state
            .accounts
            .set(account.clone(), account_level - 1.0, now);
        if let Some((key, level)) = address_level {
            state.addresses.set(key, level - 1.0, now);
        }
        Ok(LoginAttempt { account, address })
    }

    fn forgive_at(&self, attempt: LoginAttempt, now: Instant) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let level = state.accounts.level(&attempt.account, now);
        state.accounts.set(attempt.account, level + 1.0, now);
        if let Some(key) = attempt.address {
            let level = state.addresses.level(&key, now);
            state.addresses.set(key, level + 1.0, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle(per_account: u32, per_address: u32, window_secs: u64) -> LoginThrottle {
        LoginThrottle::new(&AuthConfig {
            login_failures_per_account: per_account,
            login_failures_per_address: per_address,
            login_failure_window_secs: window_secs,
            ..AuthConfig::default()
        })
    }

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn an_account_gets_its_burst_then_one_try_per_refill() {
        let throttle = throttle(3, 100, 300);
        let start = Instant::now();
        for _ in 0..3 {
            throttle.begin_at("ada", ip("10.0.0.1"), start).unwrap();
        }
        let refused = throttle.begin_at("ada", ip("10.0.0.2"), start).unwrap_err();
        assert_eq!(refused.by, ThrottledBy::Account);
        assert_eq!(refused.retry_after_secs, 100, "one token per 300/3 s");
        assert!(throttle.begin_at("bob", ip("10.0.0.1"), start).is_ok());
        let later = start + Duration::from_secs(100);
        assert!(throttle.begin_at("ada", ip("10.0.0.1"), later).is_ok());
        assert!(throttle.begin_at("ada", ip("10.0.0.1"), later).is_err());
    }

    #[test]
    fn an_address_is_limited_across_accounts() {
        let throttle = throttle(100, 2, 60);
        let now = Instant::now();
        throttle.begin_at("a", ip("10.0.0.1"), now).unwrap();
        throttle.begin_at("b", ip("10.0.0.1"), now).unwrap();
        let refused = throttle.begin_at("c", ip("10.0.0.1"), now).unwrap_err();
        assert_eq!(refused.by, ThrottledBy::Address);
        assert_eq!(refused.retry_after_secs, 30);
        assert!(throttle.begin_at("c", ip("10.0.0.2"), now).is_ok());
        let same_v6_host = throttle.begin_at("c", ip("2001:db8::1"), now);
        assert!(same_v6_host.is_ok());
        throttle.begin_at("d", ip("2001:db8::2"), now).unwrap();
        assert!(
            throttle.begin_at("e", ip("2001:db8::ffff"), now).is_err(),
            "one /64 is one address"
        );
    }

    #[test]
    fn a_refusal_takes_nothing_and_a_success_gives_back() {
        let throttle = throttle(2, 100, 60);
        let now = Instant::now();
        for _ in 0..5 {
            let attempt = throttle.begin_at("ada", ip("10.0.0.1"), now).unwrap();
            throttle.forgive_at(attempt, now);
        }
        throttle.begin_at("ada", ip("10.0.0.1"), now).unwrap();
        throttle.begin_at("ada", ip("10.0.0.1"), now).unwrap();
        assert!(throttle.begin_at("ada", ip("10.0.0.1"), now).is_err());
        let state = throttle.state.lock().unwrap();
        assert_eq!(
            state.addresses.level(
                &AddressKey::from("10.0.0.1".parse::<IpAddr>().unwrap()),
                now
            ),
            98.0,
            "the refused attempt took nothing from the address"
        );
    }

    #[test]
    fn memory_stays_bounded_under_a_flood_of_usernames() {
        let throttle = throttle(5, u32::MAX, 60);
        let now = Instant::now();
        for n in 0..(MAX_TRACKED_KEYS + 500) {
            throttle.begin_at(&format!("user{n}"), None, now).unwrap();
        }
        let huge = "x".repeat(100_000);
        throttle.begin_at(&huge, None, now).unwrap();
        let state = throttle.state.lock().unwrap();
        assert!(state.accounts.map.len() <= MAX_TRACKED_KEYS);
        assert!(state.accounts.map.keys().all(|k| k.len() <= MAX_KEY_CHARS));
    }
}
