//! Reading SSE responses in tests: frames with their `id`, `event` and parsed `data`.

use futures_util::StreamExt;
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct Frame {
    pub id: Option<usize>,
    pub event: Option<String>,
    pub data: String,
}

impl Frame {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or(Value::Null)
    }

    pub fn kind(&self) -> String {
        let json = self.json();
        if let Some(kind) = json["type"].as_str() {
            return kind.to_string();
        }
        if self.data == "[DONE]" {
            return "[DONE]".into();
        }
        if json["choices"][0]["delta"]["content"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
        {
            return "content".into();
        }
        "chunk".into()
    }
}

/// Parses complete frames out of `buffer`, leaving any partial frame in it.
pub fn drain_frames(buffer: &mut String) -> Vec<Frame> {
    let mut frames = Vec::new();
    while let Some(end) = buffer.find("\n\n") {
        let block: String = buffer.drain(..end + 2).collect();
        let mut frame = Frame {
            id: None,
            event: None,
            data: String::new(),
        };
        let mut has_data = false;
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id:") {
                frame.id = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("event:") {
                frame.event = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("data:") {
                if has_data {
                    frame.data.push('\n');
                }
                frame.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                has_data = true;
            }
        }
        if has_data {
            frames.push(frame);
        }
    }
    frames
}

/// Reads a whole SSE response.
pub async fn read_all(response: reqwest::Response) -> Vec<Frame> {
    let text = response.text().await.expect("SSE body");
    let mut buffer = text;
    drain_frames(&mut buffer)
}

/// Reads frames until `stop` says so, then drops the connection.
pub async fn read_until(
    response: reqwest::Response,
    mut stop: impl FnMut(&Frame) -> bool,
) -> Vec<Frame> {
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    let mut frames = Vec::new();
    while let Some(bytes) = stream.next().await {
        buffer.push_str(&String::from_utf8_lossy(&bytes.expect("bytes")));
        for frame in drain_frames(&mut buffer) {
            let done = stop(&frame);
            frames.push(frame);
            if done {
                return frames;
            }
        }
    }
    frames
}

/// The text content of a run's frames.
pub fn content(frames: &[Frame]) -> String {
    frames
        .iter()
        .filter_map(|f| {
            f.json()["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

/// The run.finished frame.
pub fn finished(frames: &[Frame]) -> Value {
    frames
        .iter()
        .map(Frame::json)
        .find(|j| j["type"] == "run.finished")
        .expect("a run.finished event")
}
