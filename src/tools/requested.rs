//! What a request asked of a tool beyond the server's own copy of it: a Responses
//! `file_search` tool's vector stores and limits, an `image_generation` tool's fields. A copy
//! built for a request says so (`Tool::requested`), so that a paused run keeps it in its
//! checkpoint and, when it resumes, gets the same copy back (`supervisor::launch::plan`
//! builds both from this).

use entities::ids::ChatId;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::file_search::FileSearchLimits;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "tool", rename_all = "snake_case")]
pub enum Requested {
    /// file_search over `stores` (chats whose documents it searches), within `limits`.
    FileSearch {
        stores: Vec<ChatId>,
        #[serde(default)]
        limits: FileSearchLimits,
    },
    /// generate_image with a Responses `image_generation` tool's fields.
    ImageGeneration { fields: Map<String, Value> },
    /// code_interpreter in a Responses tool's `container` (an id, or `auto` with files).
    CodeInterpreter { container: Value },
}
