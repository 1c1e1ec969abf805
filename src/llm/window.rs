//! What Colloquy knows of each model's context window: configured sizes first, then what the
//! server said (llama.cpp's `/props`, vLLM's `max_model_len`, Ollama's `/api/show`), then what
//! a context-overflow error revealed. A server that says nothing is asked again after a while.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long "the server did not say" is remembered before asking again.
const UNKNOWN_TTL: Duration = Duration::from_secs(300);

#[derive(Debug, Default)]
pub(crate) struct ContextWindows {
    /// `llm.context_length`: every model's window.
    everywhere: Option<u32>,
    /// `llm.context_lengths`.
    configured: HashMap<String, u32>,
    /// Learnt windows (`Some`), or when a server last failed to say (`None`).
    learnt: Mutex<HashMap<String, (Option<u32>, Instant)>>,
}

/// What the windows say of a model.
pub(crate) enum Known {
    Size(u32),
    /// Asked recently; the server did not say.
    Unknown,
    /// Not asked yet (or long ago).
    Ask,
}

impl ContextWindows {
    pub(crate) fn new(everywhere: Option<u32>, configured: HashMap<String, u32>) -> Self {
        Self {
            everywhere,
            configured,
            learnt: Mutex::default(),
        }
    }

    pub(crate) fn known(&self, model: &str) -> Known {
        if let Some(size) = self.configured.get(model).copied().or(self.everywhere) {
            return Known::Size(size);
        }
        let learnt = self.learnt.lock().unwrap_or_else(|e| e.into_inner());
        match learnt.get(model) {
            Some((Some(size), _)) => Known::Size(*size),
            Some((None, when)) if when.elapsed() < UNKNOWN_TTL => Known::Unknown,
            _ => Known::Ask,
        }
    }

    /// Remembers what the server said (or that it said nothing). A configured size wins.
    pub(crate) fn learn(&self, model: &str, size: Option<u32>) {
        let mut learnt = self.learnt.lock().unwrap_or_else(|e| e.into_inner());
        learnt.insert(model.to_string(), (size.filter(|&s| s > 0), Instant::now()));
    }
}

/// The window in llama.cpp's `GET /props`.
pub(crate) fn from_props(props: &Value) -> Option<u32> {
    props
        .pointer("/default_generation_settings/n_ctx")
        .or_else(|| props.get("n_ctx"))
        .and_then(as_u32)
}

/// The window vLLM gives in `GET /v1/models` (`max_model_len` of the model's entry).
pub(crate) fn from_model_list(list: &Value, model: &str) -> Option<u32> {
    list.get("data")?
        .as_array()?
        .iter()
        .find(|entry| entry.get("id").and_then(Value::as_str) == Some(model))?
        .get("max_model_len")
        .and_then(as_u32)
}

/// The window in Ollama's `POST /api/show`: the model's `num_ctx` parameter when it sets one,
/// else its architecture's `*.context_length`.
pub(crate) fn from_ollama_show(show: &Value) -> Option<u32> {
    let parameter = show
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|text| {
            text.lines().find_map(|line| {
                let mut fields = line.split_whitespace();
                (fields.next() == Some("num_ctx")).then(|| fields.next()?.parse().ok())?
            })
        });
    parameter.or_else(|| {
        show.get("model_info")?
            .as_object()?
            .iter()
            .find(|(key, _)| key.ends_with(".context_length"))
            .and_then(|(_, value)| as_u32(value))
    })
}

/// Whether an upstream's 400 says the request outgrew the context, and the window's size if
/// it says that too. Knows llama.cpp's server (`exceed_context_size_error` with `n_ctx`),
/// llama-cpp-python ("exceed context window of N"), vLLM and OpenAI ("maximum context length
/// is N tokens").
pub(crate) fn overflow(body: &Value, message: &str) -> Option<Option<u32>> {
    let error = body.get("error").unwrap_or(body);
    if error.get("type").and_then(Value::as_str) == Some("exceed_context_size_error") {
        return Some(error.get("n_ctx").and_then(as_u32));
    }
    let lower = message.to_ascii_lowercase();
    for marker in ["context window of", "maximum context length is"] {
        if let Some(at) = lower.find(marker) {
            return Some(leading_number(&lower[at + marker.len()..]));
        }
    }
    let says_context = lower.contains("context size")
        || lower.contains("context length")
        || lower.contains("context window");
    (says_context && (lower.contains("exceed") || lower.contains("too long"))).then_some(None)
}

fn leading_number(text: &str) -> Option<u32> {
    let digits: String = text
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

fn as_u32(value: &Value) -> Option<u32> {
    value
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_servers_description_gives_its_window() {
        assert_eq!(
            from_props(&json!({"default_generation_settings": {"n_ctx": 4096}})),
            Some(4096)
        );
        assert_eq!(
            from_model_list(
                &json!({"data": [{"id": "a", "max_model_len": 8192}, {"id": "b", "max_model_len": 2048}]}),
                "b"
            ),
            Some(2048)
        );
        assert_eq!(from_model_list(&json!({"data": [{"id": "a"}]}), "a"), None);
        assert_eq!(
            from_ollama_show(&json!({
                "parameters": "stop \"<|eot_id|>\"\nnum_ctx                        8192",
                "model_info": {"llama.context_length": 131072}
            })),
            Some(8192)
        );
        assert_eq!(
            from_ollama_show(&json!({"model_info": {"llama.context_length": 131072}})),
            Some(131072)
        );
    }

    #[test]
    fn overflow_errors_of_each_server_are_recognised() {
        let llama_server = json!({"error": {"code": 400, "type": "exceed_context_size_error",
            "message": "the request exceeds the available context size, try increasing it",
            "n_prompt_tokens": 6800, "n_ctx": 4096}});
        assert_eq!(
            overflow(
                &llama_server,
                "the request exceeds the available context size"
            ),
            Some(Some(4096))
        );
        assert_eq!(
            overflow(
                &json!({}),
                "Requested tokens (6800) exceed context window of 4096"
            ),
            Some(Some(4096))
        );
        assert_eq!(
            overflow(
                &json!({}),
                "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens"
            ),
            Some(Some(8192))
        );
        assert_eq!(
            overflow(
                &json!({}),
                "the request exceeds the available context size, try increasing it"
            ),
            Some(None)
        );
        assert_eq!(overflow(&json!({}), "model 'nope' not found"), None);
    }

    #[test]
    fn configured_sizes_win_and_unknowns_are_asked_again_later() {
        let windows = ContextWindows::new(None, HashMap::from([("big".to_string(), 32_768)]));
        assert!(matches!(windows.known("big"), Known::Size(32_768)));
        assert!(matches!(windows.known("small"), Known::Ask));
        windows.learn("small", None);
        assert!(matches!(windows.known("small"), Known::Unknown));
        windows.learn("small", Some(2_048));
        assert!(matches!(windows.known("small"), Known::Size(2_048)));
        let everywhere = ContextWindows::new(Some(4_096), HashMap::new());
        assert!(matches!(everywhere.known("any"), Known::Size(4_096)));
    }
}
