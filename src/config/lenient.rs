//! Environment variables carry no types: `COLLOQUY_LLM__API_KEY=12345` arrives as a number.
//! String settings accept any scalar and keep its text.

use secrecy::SecretString;
use serde::{Deserialize, Deserializer};

#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    fn into_text(self) -> String {
        match self {
            Self::Text(text) => text,
            Self::Unsigned(n) => n.to_string(),
            Self::Signed(n) => n.to_string(),
            Self::Float(n) => n.to_string(),
            Self::Bool(b) => b.to_string(),
        }
    }
}

pub fn string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Scalar::deserialize(deserializer).map(Scalar::into_text)
}

pub fn secret<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<SecretString>, D::Error> {
    let value = Option::<Scalar>::deserialize(deserializer)?;
    Ok(value
        .map(Scalar::into_text)
        .filter(|text| !text.is_empty())
        .map(SecretString::from))
}
