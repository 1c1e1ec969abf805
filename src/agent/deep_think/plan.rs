//! The research plan: what the planner asks the model for (a title and 3–7 sub-tasks, each an
//! id, a focused query and its tools), how an answer is read — leniently: a plan in a code
//! fence, under another key, with numeric ids or unknown tools is repaired —, and the fallback
//! plan used when the model's answers cannot be read at all.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Longest plan title kept, in characters.
const MAX_TITLE_CHARS: usize = 120;
/// Longest sub-task query kept, in characters.
const MAX_QUERY_CHARS: usize = 400;

/// One sub-task of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedTask {
    pub id: String,
    pub query: String,
    pub tools: Vec<String>,
}

/// A research plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub title: String,
    pub subtasks: Vec<PlannedTask>,
    /// How many sub-tasks the model proposed, when more than were kept.
    #[serde(default)]
    pub proposed: Option<usize>,
    /// How the plan came to be: `model`, `repaired` (read from a malformed answer), `retried`
    /// (the second answer) or `fallback`.
    pub source: String,
}

/// The JSON schema of a plan, for upstreams that constrain output to one.
pub fn schema(tools: &[String], max: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "A short title for the research report."},
            "subtasks": {
                "type": "array",
                "minItems": 1,
                "maxItems": max,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "query": {"type": "string", "description": "One focused research question."},
                        "tools": {"type": "array", "items": {"type": "string", "enum": tools}}
                    },
                    "required": ["id", "query", "tools"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["title", "subtasks"],
        "additionalProperties": false
    })
}

/// The planner's instructions.
pub fn instructions(tools: &[String], min: usize, max: usize) -> String {
    format!(
        "You plan research. Break the user's question into {min} to {max} focused, \
         non-overlapping sub-tasks that together answer it. Each sub-task is researched \
         separately with these tools: {tools}. Answer with only a JSON object, no prose: \
         {{\"title\": \"a short report title\", \"subtasks\": [{{\"id\": \"1\", \"query\": \
         \"one focused research question\", \"tools\": [\"web_search\", \"fetch_url\"]}}]}}",
        tools = tools.join(", ")
    )
}

/// Reads a plan from the model's answer. `Ok` holds a plan with at least `min` sub-tasks (at
/// most `max`, the rest cut off), possibly repaired; `Err` says what was wrong, for asking
/// again.
pub fn parse(
    answer: &str,
    tools: &[String],
    min: usize,
    max: usize,
    question: &str,
) -> Result<Plan, String> {
    let (value, mut repaired) = json_of(answer)?;
    let (title, items) = match &value {
        Value::Array(items) => {
            repaired = true;
            (None, items.clone())
        }
        Value::Object(fields) => {
            let key = ["subtasks", "sub_tasks", "tasks", "steps", "plan", "queries"]
                .into_iter()
                .find(|key| fields.get(*key).is_some_and(Value::is_array))
                .ok_or("the plan has no \"subtasks\" list")?;
            repaired |= key != "subtasks";
            let title = ["title", "name", "topic"]
                .into_iter()
                .find_map(|key| fields.get(key).and_then(Value::as_str))
                .map(str::trim)
                .filter(|t| !t.is_empty());
            repaired |= title.is_none() || !fields.contains_key("title");
            let items = fields
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            (title.map(str::to_string), items)
        }
        _ => return Err("the plan is not a JSON object".into()),
    };
    let mut subtasks: Vec<PlannedTask> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let (task, task_repaired) = read_task(item, index, tools);
        repaired |= task_repaired;
        if let Some(mut task) = task {
            if subtasks.iter().any(|t| t.id == task.id) {
                task.id = format!("{}", index + 1);
                repaired = true;
            }
            subtasks.push(task);
        } else {
            repaired = true;
        }
    }
    if subtasks.len() < min {
        return Err(format!(
            "the plan has {} usable sub-tasks; it needs {min} to {max}, each with a query",
            subtasks.len()
        ));
    }
    let proposed = (subtasks.len() > max).then_some(subtasks.len());
    subtasks.truncate(max);
    Ok(Plan {
        title: shorten(
            title.as_deref().unwrap_or_else(|| question.trim()),
            MAX_TITLE_CHARS,
        ),
        subtasks,
        proposed,
        source: if repaired { "repaired" } else { "model" }.into(),
    })
}

/// The JSON in an answer: the whole answer, or the object inside a code fence or prose
/// (then `true`: it was repaired).
fn json_of(answer: &str) -> Result<(Value, bool), String> {
    let trimmed = answer.trim();
    if let Ok(value) = serde_json::from_str::<Value>(trimmed) {
        return Ok((value, false));
    }
    let starts = [trimmed.find('{'), trimmed.find('[')];
    let start = starts.into_iter().flatten().min();
    let end = [trimmed.rfind('}'), trimmed.rfind(']')]
        .into_iter()
        .flatten()
        .max();
    if let (Some(start), Some(end)) = (start, end)
        && start < end
        && let Ok(value) = serde_json::from_str::<Value>(&trimmed[start..=end])
    {
        return Ok((value, true));
    }
    Err("the answer is not a JSON object".into())
}

/// One sub-task from a plan item; `None` if it has no query. `true` if something was fixed.
fn read_task(item: &Value, index: usize, tools: &[String]) -> (Option<PlannedTask>, bool) {
    let mut repaired = false;
    let query = match item {
        Value::String(text) => {
            repaired = true;
            Some(text.as_str())
        }
        _ => {
            let key = [
                "query",
                "question",
                "search_query",
                "task",
                "description",
                "title",
            ]
            .into_iter()
            .find(|key| item[*key].as_str().is_some_and(|q| !q.trim().is_empty()));
            repaired |= key.is_some_and(|key| key != "query");
            key.and_then(|key| item[key].as_str())
        }
    };
    let Some(query) = query.map(str::trim).filter(|q| !q.is_empty()) else {
        return (None, true);
    };
    let id = match &item["id"] {
        Value::String(id) if !id.trim().is_empty() => id.trim().to_string(),
        Value::Number(n) => {
            repaired = true;
            n.to_string()
        }
        _ => {
            repaired = true;
            (index + 1).to_string()
        }
    };
    let named: Vec<String> = item["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let mut chosen: Vec<String> = named
        .iter()
        .filter(|name| tools.contains(name))
        .cloned()
        .collect();
    chosen.dedup();
    // Tools this server does not have are dropped; none left means every research tool.
    repaired |= chosen.len() != named.len();
    if chosen.is_empty() {
        chosen = tools.to_vec();
    }
    (
        Some(PlannedTask {
            id: shorten(&id, 40),
            query: shorten(query, MAX_QUERY_CHARS),
            tools: chosen,
        }),
        repaired,
    )
}

/// The plan used when the model gave none that could be read: the question from three sides.
pub fn fallback(question: &str, tools: &[String]) -> Plan {
    let topic = shorten(question.trim(), MAX_QUERY_CHARS - 60);
    let angles = [
        "background, definitions and key facts",
        "recent developments and current state",
        "evidence, comparisons and open questions",
    ];
    Plan {
        title: shorten(question.trim(), MAX_TITLE_CHARS),
        subtasks: angles
            .iter()
            .enumerate()
            .map(|(index, angle)| PlannedTask {
                id: (index + 1).to_string(),
                query: format!("{topic}: {angle}"),
                tools: tools.to_vec(),
            })
            .collect(),
        proposed: None,
        source: "fallback".into(),
    }
}

/// `text` cut to `max` characters.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
    }
}
