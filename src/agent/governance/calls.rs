//! Call identity and loop detection: `canonical_json`, `CallKey` (tool name + canonical
//! arguments, for caching and loop detection) and `LoopDetector` (the same call at most
//! `MAX_REPEATS` times in the last `LOOP_WINDOW` calls).

use std::collections::VecDeque;

use serde_json::Value;

/// How many of the most recent calls loop detection remembers. Spec: "loop detection over the
/// last 10 calls": long enough to catch a model cycling through two or three calls, short
/// enough that a legitimate repeat much later in a long run is allowed again.
pub const LOOP_WINDOW: usize = 10;

/// How many times the same call may run within [`LOOP_WINDOW`]. Spec: "the same call allowed at
/// most twice": one identical retry (e.g. after a transient failure) is legitimate, a third is a
/// loop.
pub const MAX_REPEATS: usize = 2;

/// Canonical JSON text of a value: object keys sorted recursively (by their UTF-8 bytes), no
/// insignificant whitespace, numbers as written (so `1` and `1.0` stay different). Two argument
/// objects that differ only in key order or spacing give the same text; arrays keep their
/// order. This is `serde_json`'s compact text: its objects are sorted maps (the crate's
/// `preserve_order` feature is off, which the test of sorted keys below holds), and values parsed
/// by it are at most 128 levels deep.
pub fn canonical_json(value: &Value) -> String {
    value.to_string()
}

/// The identity of a tool call for caching and loop detection: name + canonical arguments.
///
/// The text is the canonical JSON of the pair `[name, arguments]`, e.g.
/// `["web_search",{"query":"rust"}]`: readable in logs, and two different calls can never share
/// a key, whatever characters the name holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallKey(String);

impl CallKey {
    /// The key of a call to `tool_name` with `arguments`.
    pub fn new(tool_name: &str, arguments: &Value) -> Self {
        Self(format!(
            "[{},{}]",
            Value::from(tool_name),
            canonical_json(arguments)
        ))
    }

    /// The key of a call to `tool_name` with `arguments` where its result also depends on
    /// `scope` (`Tool::cache_scope`, such as a sized web_search's size): `[name, scope,
    /// arguments]`, the plain key when `scope` is empty.
    pub fn scoped(tool_name: &str, scope: &str, arguments: &Value) -> Self {
        if scope.is_empty() {
            return Self::new(tool_name, arguments);
        }
        Self(format!(
            "[{},{},{}]",
            Value::from(tool_name),
            Value::from(scope),
            canonical_json(arguments)
        ))
    }

    /// The key's text (see the type's documentation for its shape).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Remembers the last `window` calls of a run; a call seen `max_repeats` times already in the
/// window is refused.
///
/// A `window` of 0 remembers nothing (every call is allowed unless `max_repeats` is 0); a
/// `max_repeats` of 0 refuses every call.
#[derive(Debug, Clone)]
pub struct LoopDetector {
    /// The most recent calls, oldest first; never longer than `window`.
    recent: VecDeque<CallKey>,
    /// How many calls `recent` holds at most.
    window: usize,
    /// How many times a call may already be in `recent` for it to be refused.
    max_repeats: usize,
}

impl LoopDetector {
    /// A detector over the last `window` calls that allows each call `max_repeats` times.
    pub fn new(window: usize, max_repeats: usize) -> Self {
        Self {
            recent: VecDeque::with_capacity(window),
            window,
            max_repeats,
        }
    }

    /// Records the call and says whether it may run. A refused call is still recorded (so the
    /// window moves on). Returns Ok(()) or Err(times_seen_before), counted within the window.
    pub fn check(&mut self, key: &CallKey) -> Result<(), usize> {
        let seen = self.recent.iter().filter(|k| *k == key).count();
        if self.window > 0 {
            if self.recent.len() == self.window {
                self.recent.pop_front();
            }
            self.recent.push_back(key.clone());
        }
        if seen >= self.max_repeats {
            Err(seen)
        } else {
            Ok(())
        }
    }
}

impl Default for LoopDetector {
    /// The spec's detector: [`LOOP_WINDOW`] calls, each allowed [`MAX_REPEATS`] times.
    fn default() -> Self {
        Self::new(LOOP_WINDOW, MAX_REPEATS)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("test JSON parses")
    }

    // canonical_json and CallKey

    #[test]
    fn canonical_json_sorts_keys_recursively_and_ignores_whitespace() {
        let a = parse(r#"{"b": 1, "a": {"y": [1, {"q": 2, "p": 3}], "x": null}}"#);
        let b = parse(r#"{"a":{"x":null,"y":[1,{"p":3,"q":2}]},"b":1}"#);
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"p":3,"q":2}]},"b":1}"#
        );
    }

    #[test]
    fn canonical_json_keeps_array_order() {
        assert_ne!(
            canonical_json(&json!([1, 2, 3])),
            canonical_json(&json!([3, 2, 1]))
        );
        assert_eq!(canonical_json(&json!(["b", "a"])), r#"["b","a"]"#);
    }

    #[test]
    fn canonical_json_writes_scalars_and_escapes_like_serde_json() {
        let value = json!({
            "a": "quote \" backslash \\ newline \n tab \t bell \u{07} del \u{7f} é 😀 /",
            "b": [true, false, null, -1, 1.5, 1e300, 18446744073709551615u64],
            "c": {},
            "d": [],
            "e": ""
        });
        // Keys are given in sorted order, so serde_json's own output is canonical too.
        let expected = serde_json::to_string(&value).expect("serialises");
        assert_eq!(canonical_json(&value), expected);
    }

    #[test]
    fn call_keys_ignore_argument_key_order_and_spacing() {
        let a = CallKey::new(
            "web_search",
            &parse(r#"{"query": "rust", "opts": {"n": 5, "lang": "en"}}"#),
        );
        let b = CallKey::new(
            "web_search",
            &parse(r#"{"opts":{"lang":"en","n":5},"query":"rust"}"#),
        );
        assert_eq!(a, b);
        assert_eq!(
            a.as_str(),
            r#"["web_search",{"opts":{"lang":"en","n":5},"query":"rust"}]"#
        );
    }

    #[test]
    fn call_keys_differ_by_name_argument_values_and_array_order() {
        let args = json!({"q": [1, 2]});
        let key = CallKey::new("search", &args);
        assert_ne!(key, CallKey::new("fetch", &args));
        assert_ne!(key, CallKey::new("search", &json!({"q": [2, 1]})));
        assert_ne!(key, CallKey::new("search", &json!({"q": [1, 2, 3]})));
        assert_ne!(key, CallKey::new("search", &json!({"q": "[1,2]"})));
    }

    #[test]
    fn a_scope_makes_another_key_and_no_scope_the_plain_one() {
        let args = json!({"query": "rust"});
        let plain = CallKey::new("web_search", &args);
        assert_eq!(CallKey::scoped("web_search", "", &args), plain);
        let high = CallKey::scoped("web_search", "high", &args);
        assert_ne!(high, plain);
        assert_ne!(high, CallKey::scoped("web_search", "low", &args));
        assert_eq!(high.as_str(), r#"["web_search","high",{"query":"rust"}]"#);
    }

    // LoopDetector

    #[test]
    fn the_same_call_is_allowed_twice_and_the_third_is_refused() {
        let mut detector = LoopDetector::new(10, 2);
        let key = CallKey::new("search", &json!({"q": "rust"}));
        assert_eq!(detector.check(&key), Ok(()));
        assert_eq!(detector.check(&key), Ok(()));
        assert_eq!(detector.check(&key), Err(2));
        assert_eq!(detector.check(&key), Err(3));
    }

    #[test]
    fn the_same_call_with_reordered_arguments_counts_as_a_repeat() {
        let mut detector = LoopDetector::default();
        for _ in 0..MAX_REPEATS {
            assert_eq!(
                detector.check(&CallKey::new("s", &json!({"a": 1, "b": 2}))),
                Ok(())
            );
        }
        let reordered = CallKey::new("s", &parse(r#"{ "b": 2, "a": 1 }"#));
        assert_eq!(detector.check(&reordered), Err(MAX_REPEATS));
    }

    #[test]
    fn calls_with_different_arguments_are_different_calls() {
        let mut detector = LoopDetector::new(10, 2);
        for i in 0..10 {
            let key = CallKey::new("search", &json!({"q": i}));
            assert_eq!(detector.check(&key), Ok(()));
            assert_eq!(detector.check(&key), Ok(()));
        }
    }

    #[test]
    fn a_call_that_fell_out_of_the_window_is_allowed_again() {
        let mut detector = LoopDetector::new(10, 2);
        let repeated = CallKey::new("search", &json!({"q": "rust"}));
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Ok(()));
        // Eight other calls: both earlier calls are still among the last ten.
        for i in 0..8 {
            assert_eq!(detector.check(&CallKey::new("fetch", &json!(i))), Ok(()));
        }
        // Refused, and recorded: the window is now repeated, fetch 0..8, repeated.
        assert_eq!(detector.check(&repeated), Err(2));
        // One more call pushes the oldest `repeated` out, leaving one in the window.
        assert_eq!(detector.check(&CallKey::new("fetch", &json!(8))), Ok(()));
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Err(2));
    }

    #[test]
    fn a_call_outside_a_window_of_ten_is_forgotten_entirely() {
        let mut detector = LoopDetector::default();
        let repeated = CallKey::new("search", &json!({}));
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Ok(()));
        for i in 0..LOOP_WINDOW {
            assert_eq!(detector.check(&CallKey::new("other", &json!(i))), Ok(()));
        }
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Ok(()));
        assert_eq!(detector.check(&repeated), Err(2));
    }

    #[test]
    fn degenerate_limits_behave_as_documented() {
        let key = CallKey::new("t", &json!(null));
        let mut no_memory = LoopDetector::new(0, 1);
        for _ in 0..5 {
            assert_eq!(no_memory.check(&key), Ok(()));
        }
        let mut refuse_all = LoopDetector::new(10, 0);
        assert_eq!(refuse_all.check(&key), Err(0));
    }
}
