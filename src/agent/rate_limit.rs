//! The research tool rate limit (docs/spec.md#rate-limit-and-cache): 45 calls per minute per
//! project — the API key a request came with, or the user in a browser — kept by `governor`.

use std::num::NonZeroU32;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

pub struct ToolRateLimiter {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
}

impl ToolRateLimiter {
    /// `per_minute` calls per project; 0 is treated as 1 (a limit of nothing is a mistake).
    pub fn new(per_minute: u32) -> Self {
        let per_minute = NonZeroU32::new(per_minute).unwrap_or(NonZeroU32::MIN);
        Self {
            limiter: RateLimiter::keyed(Quota::per_minute(per_minute)),
            clock: DefaultClock::default(),
        }
    }

    /// Takes one call from `project`'s allowance, or says in how many seconds to retry.
    pub fn check(&self, project: &str) -> Result<(), u64> {
        match self.limiter.check_key(&project.to_string()) {
            Ok(()) => Ok(()),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                Err(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_project_gets_its_own_allowance() {
        let limiter = ToolRateLimiter::new(3);
        for _ in 0..3 {
            assert!(limiter.check("a").is_ok());
        }
        let retry = limiter.check("a").unwrap_err();
        assert!((1..=20).contains(&retry), "{retry}");
        assert!(
            limiter.check("b").is_ok(),
            "another project is not affected"
        );
    }
}
