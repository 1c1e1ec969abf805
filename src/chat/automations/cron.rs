//! A schedule's timing: a standard five-field cron expression (parsed by `croner`) in an IANA
//! time zone (`chrono-tz`). The due times are computed in the zone (so "9 every morning"
//! follows daylight saving) and stored in UTC. A sixth, leading seconds field is accepted only
//! under the test-only `schedules.test_only_seconds_field`.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

use super::AutomationError;

/// Longest cron expression taken.
pub const MAX_CRON_CHARS: usize = 200;
/// Due times counted when looking back over a downtime: past this many, the rest are counted
/// as one more (a per-minute schedule down for a week need not be walked minute by minute).
pub const MAX_DUE_TIMES_COUNTED: usize = 10_000;

/// A parsed cron expression in its time zone.
#[derive(Debug, Clone)]
pub struct CronTiming {
    cron: Cron,
    zone: Tz,
}

impl CronTiming {
    /// Parses `expression` in `zone` (`seconds`: the test-only seconds field is allowed).
    pub fn parse(expression: &str, zone: &str, seconds: bool) -> Result<Self, AutomationError> {
        let invalid = |message: String| AutomationError::InvalidSchedule(message);
        if expression.len() > MAX_CRON_CHARS {
            return Err(invalid(format!(
                "cron expressions have at most {MAX_CRON_CHARS} characters"
            )));
        }
        let zone: Tz = zone.parse().map_err(|_| {
            invalid(format!(
                "{zone:?} is not an IANA time zone name (such as \"UTC\" or \"Europe/Paris\")"
            ))
        })?;
        let fields = expression.split_whitespace().count();
        let wanted = if seconds {
            fields == 5 || fields == 6
        } else {
            fields == 5
        };
        if !wanted || expression.trim_start().starts_with('@') {
            return Err(invalid(format!(
                "{expression:?} is not a five-field cron expression (minute hour day-of-month month day-of-week, such as \"0 9 * * 1-5\")"
            )));
        }
        let parser = CronParser::builder()
            .seconds(if seconds {
                Seconds::Optional
            } else {
                Seconds::Disallowed
            })
            .year(Year::Disallowed)
            .build();
        let cron = parser.parse(expression).map_err(|err| {
            invalid(format!(
                "{expression:?} is not a valid cron expression: {err}"
            ))
        })?;
        Ok(Self { cron, zone })
    }

    /// The first due time strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = after.with_timezone(&self.zone);
        self.cron
            .find_next_occurrence(&local, false)
            .ok()
            .map(|at| at.with_timezone(&Utc))
    }

    /// The next `count` due times after `after`.
    pub fn upcoming(&self, after: DateTime<Utc>, count: usize) -> Vec<DateTime<Utc>> {
        let mut times = Vec::with_capacity(count);
        let mut at = after;
        while times.len() < count {
            let Some(next) = self.next_after(at) else {
                break;
            };
            times.push(next);
            at = next;
        }
        times
    }

    /// The due times from `first` (itself due) up to `now`: how many, and the latest.
    pub fn due_between(&self, first: DateTime<Utc>, now: DateTime<Utc>) -> (usize, DateTime<Utc>) {
        let mut count = 1;
        let mut latest = first;
        while let Some(next) = self.next_after(latest) {
            if next > now {
                break;
            }
            count += 1;
            latest = next;
            if count >= MAX_DUE_TIMES_COUNTED {
                // The latest due time before now, without walking the rest.
                let local = now.with_timezone(&self.zone);
                if let Ok(last) = self.cron.find_previous_occurrence(&local, true) {
                    latest = last.with_timezone(&Utc);
                }
                break;
            }
        }
        (count, latest)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn five_fields_parse_and_six_only_in_test_mode() {
        assert!(CronTiming::parse("0 9 * * 1-5", "UTC", false).is_ok());
        assert!(CronTiming::parse("* * * * * *", "UTC", false).is_err());
        assert!(CronTiming::parse("* * * * * *", "UTC", true).is_ok());
        assert!(CronTiming::parse("0 9 * *", "UTC", false).is_err());
        assert!(CronTiming::parse("61 * * * *", "UTC", false).is_err());
        assert!(CronTiming::parse("0 9 * * *", "Mars/Olympus", false).is_err());
    }

    #[test]
    fn due_times_follow_the_time_zone() {
        let timing = CronTiming::parse("0 9 * * *", "Europe/Paris", false).unwrap();
        let after = Utc.with_ymd_and_hms(2026, 1, 10, 12, 0, 0).unwrap();
        // 09:00 in Paris in winter is 08:00 UTC.
        assert_eq!(
            timing.next_after(after),
            Some(Utc.with_ymd_and_hms(2026, 1, 11, 8, 0, 0).unwrap())
        );
        let summer = Utc.with_ymd_and_hms(2026, 7, 10, 12, 0, 0).unwrap();
        assert_eq!(
            timing.next_after(summer),
            Some(Utc.with_ymd_and_hms(2026, 7, 11, 7, 0, 0).unwrap())
        );
    }

    #[test]
    fn due_times_over_a_downtime_are_counted_with_the_latest() {
        let timing = CronTiming::parse("*/10 * * * *", "UTC", false).unwrap();
        let first = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let now = Utc.with_ymd_and_hms(2026, 1, 1, 1, 5, 0).unwrap();
        assert_eq!(
            timing.due_between(first, now),
            (7, Utc.with_ymd_and_hms(2026, 1, 1, 1, 0, 0).unwrap())
        );
    }
}
