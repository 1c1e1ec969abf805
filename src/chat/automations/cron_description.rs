//! A cron expression in words, for people: "At 08:00 every day", "Every 15 minutes", "At 09:30
//! on weekdays". The common forms (every N minutes, hourly at :MM, daily at a time, weekdays,
//! days of the week, a day of the month) read as a sentence; anything else reads field by field
//! ("Minutes 5 to 10; hour 8; …"). It only words what `cron::CronTiming` already accepted: the
//! due times themselves always come from the parser, so the words and the scheduler cannot
//! disagree about when a schedule fires.

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// `expression` (five fields, or six with a leading seconds field) in words.
pub fn describe(expression: &str) -> String {
    let fields: Vec<&str> = expression.split_whitespace().collect();
    let (second, rest) = match fields.len() {
        5 => ("0", &fields[..]),
        6 => (fields[0], &fields[1..]),
        _ => return format!("The cron expression {expression:?}"),
    };
    let [minute, hour, day, month, weekday] = [rest[0], rest[1], rest[2], rest[3], rest[4]];
    sentence(second, minute, hour, day, month, weekday)
        .unwrap_or_else(|| field_by_field(fields.len() == 6, &fields))
}

/// The common forms as one sentence; `None` for anything else.
fn sentence(
    second: &str,
    minute: &str,
    hour: &str,
    day: &str,
    month: &str,
    weekday: &str,
) -> Option<String> {
    let every_day = day == "*" && month == "*" && weekday == "*";
    // Sub-minute forms (the test-only seconds field).
    if second != "0" {
        if minute != "*" || hour != "*" || !every_day {
            return None;
        }
        if second == "*" {
            return Some("Every second".into());
        }
        let step = every_n(second)?;
        return Some(format!("Every {step} seconds"));
    }
    if hour == "*" && every_day {
        if minute == "*" {
            return Some("Every minute".into());
        }
        if let Some(step) = every_n(minute) {
            return Some(format!("Every {step} minutes"));
        }
        let at = number(minute, 59)?;
        return Some(format!("Every hour at :{at:02}"));
    }
    let minute = number(minute, 59)?;
    if let Some(step) = every_n(hour) {
        if !every_day {
            return None;
        }
        return Some(format!("Every {step} hours at :{minute:02}"));
    }
    let hours = list(hour, 23)?;
    let times = join(
        &hours
            .iter()
            .map(|h| format!("{h:02}:{minute:02}"))
            .collect::<Vec<_>>(),
    );
    let when = match (day, month, weekday) {
        ("*", "*", "*") => "every day".to_string(),
        ("*", "*", days) => on_days(days)?,
        (day, month, "*") => {
            let day = number(day, 31).filter(|d| *d >= 1)?;
            if month == "*" {
                format!("on day {day} of every month")
            } else {
                let months = list(month, 12)?;
                let names: Option<Vec<String>> = months
                    .iter()
                    .map(|m| {
                        MONTHS
                            .get(m.checked_sub(1)? as usize)
                            .map(|n| n.to_string())
                    })
                    .collect();
                format!("on day {day} of {}", join(&names?))
            }
        }
        _ => return None,
    };
    Some(format!("At {times} {when}"))
}

/// The days-of-week field as "on weekdays", "on weekends", "on Monday and Thursday"…
fn on_days(field: &str) -> Option<String> {
    let mut days: Vec<u32> = Vec::new();
    for part in field.split(',') {
        match part.split_once('-') {
            Some((from, to)) => {
                let (from, to) = (weekday(from)?, weekday(to)?);
                if from > to {
                    return None;
                }
                days.extend(from..=to);
            }
            None => days.push(weekday(part)?),
        }
    }
    // 7 is Sunday too.
    let mut days: Vec<u32> = days.into_iter().map(|d| d % 7).collect();
    days.sort_unstable();
    days.dedup();
    Some(match days.as_slice() {
        [1, 2, 3, 4, 5] => "on weekdays".to_string(),
        [0, 6] => "on weekends".to_string(),
        [0, 1, 2, 3, 4, 5, 6] => "every day".to_string(),
        days => {
            // Monday first, as a week is read.
            let mut ordered: Vec<u32> = days.iter().copied().filter(|d| *d != 0).collect();
            if days.contains(&0) {
                ordered.push(0);
            }
            let names: Vec<String> = ordered
                .iter()
                .map(|d| DAYS[*d as usize].to_string())
                .collect();
            format!("on {}", join(&names))
        }
    })
}

/// A day of the week, as a number (0 or 7 is Sunday) or a three-letter name.
fn weekday(token: &str) -> Option<u32> {
    if let Some(n) = number(token, 7) {
        return Some(n);
    }
    DAYS.iter()
        .position(|d| d[..3].eq_ignore_ascii_case(token))
        .map(|d| d as u32)
}

/// `*/N` as N.
fn every_n(field: &str) -> Option<u32> {
    let step: u32 = field.strip_prefix("*/")?.parse().ok()?;
    (step > 1).then_some(step)
}

/// A plain number no greater than `max`.
fn number(field: &str, max: u32) -> Option<u32> {
    if field.is_empty() || !field.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    field.parse().ok().filter(|n| *n <= max)
}

/// A comma-separated list of plain numbers (at most four: more read better field by field).
fn list(field: &str, max: u32) -> Option<Vec<u32>> {
    let items: Option<Vec<u32>> = field.split(',').map(|part| number(part, max)).collect();
    items.filter(|items| !items.is_empty() && items.len() <= 4)
}

/// "a", "a and b", "a, b and c".
fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [head @ .., last] => format!("{} and {last}", head.join(", ")),
    }
}

/// The fallback: each field in words, in the expression's order.
fn field_by_field(seconds: bool, fields: &[&str]) -> String {
    let mut names = vec![
        ("minute", "minutes"),
        ("hour", "hours"),
        ("day of the month", "days of the month"),
        ("month", "months"),
        ("day of the week", "days of the week"),
    ];
    if seconds {
        names.insert(0, ("second", "seconds"));
    }
    let parts: Vec<String> = fields
        .iter()
        .zip(names)
        .map(|(field, (one, many))| field_words(field, one, many))
        .collect();
    let text = parts.join("; ");
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

/// One field in words: "every minute", "every 5 minutes", "hours 8 to 17", "month 1, 6"…
fn field_words(field: &str, one: &str, many: &str) -> String {
    if field == "*" || field == "?" {
        return format!("every {one}");
    }
    if let Some(step) = every_n(field) {
        return format!("every {step} {many}");
    }
    let parts: Vec<String> = field
        .split(',')
        .map(|part| match part.split_once('-') {
            Some((from, to)) if !to.contains('/') => format!("{from} to {to}"),
            _ => part.to_string(),
        })
        .collect();
    if parts.len() == 1 && !field.contains('-') {
        format!("{one} {}", parts[0])
    } else {
        format!("{many} {}", join(&parts))
    }
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn the_common_forms_read_as_sentences() {
        for (cron, words) in [
            ("* * * * *", "Every minute"),
            ("*/15 * * * *", "Every 15 minutes"),
            ("5 * * * *", "Every hour at :05"),
            ("0 */2 * * *", "Every 2 hours at :00"),
            ("0 8 * * *", "At 08:00 every day"),
            ("30 9 * * 1-5", "At 09:30 on weekdays"),
            ("0 10 * * 0,6", "At 10:00 on weekends"),
            ("0 10 * * SAT,SUN", "At 10:00 on weekends"),
            ("0 7 * * 1,3,5", "At 07:00 on Monday, Wednesday and Friday"),
            ("0 7 * * 0,1", "At 07:00 on Monday and Sunday"),
            ("0 8,12,18 * * *", "At 08:00, 12:00 and 18:00 every day"),
            ("0 6 1 * *", "At 06:00 on day 1 of every month"),
            ("15 6 1 1,7 *", "At 06:15 on day 1 of January and July"),
            ("* * * * * *", "Every second"),
            ("*/5 * * * * *", "Every 5 seconds"),
            ("0 0 9 * * *", "At 09:00 every day"),
        ] {
            assert_eq!(describe(cron), words, "{cron}");
        }
    }

    #[test]
    fn anything_else_reads_field_by_field() {
        assert_eq!(
            describe("5-10 8 * 1 *"),
            "Minutes 5 to 10; hour 8; every day of the month; month 1; every day of the week"
        );
        assert_eq!(
            describe("0 9 1 * 1"),
            "Minute 0; hour 9; day of the month 1; every month; day of the week 1"
        );
        assert_eq!(
            describe("0 9 * * 1#2"),
            "Minute 0; hour 9; every day of the month; every month; day of the week 1#2"
        );
        assert_eq!(
            describe("10 * * * * *"),
            "Second 10; every minute; every hour; every day of the month; every month; every day of the week"
        );
    }
}
