//! `GET {base}/models`: the model list, with the fields servers leave out defaulted.

use serde::{Deserialize, Serialize};

/// `GET {base}/models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelList {
    #[serde(default = "list_object")]
    pub object: String,
    pub data: Vec<Model>,
}

fn list_object() -> String {
    "list".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    pub id: String,
    #[serde(default = "model_object")]
    pub object: String,
    #[serde(default)]
    pub created: i64,
    #[serde(default)]
    pub owned_by: String,
}

fn model_object() -> String {
    "model".into()
}
