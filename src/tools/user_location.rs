//! `user_location` of a Responses `web_search_preview` tool (`{"type": "approximate",
//! "country", ...}`) and of Chat Completions' `web_search_options` (the same fields under
//! `approximate`): where the user roughly is, which narrows a search where the engine
//! can be told (Brave: its `country` parameter and `X-Loc-*` headers; SearXNG: a `language`
//! locale of the country; DuckDuckGo: its `kl` region, `web_search::locale`); what an engine
//! cannot be told (a city for SearXNG, a country none of its tables has) is accepted and
//! advisory. Checked as it arrives: a country is two letters, the other fields are short and
//! printable.

use serde::{Deserialize, Deserializer, Serialize};

/// Longest city, region or time zone accepted.
const MAX_FIELD_CHARS: usize = 100;

/// An approximate location (`{"type": "approximate", "country", "region", "city",
/// "timezone"}`, every field optional).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct UserLocation {
    /// ISO 3166-1 alpha-2, upper case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    /// IANA time zone, e.g. `Europe/Oslo`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Given {
    #[serde(rename = "type")]
    kind: Option<String>,
    country: Option<String>,
    region: Option<String>,
    city: Option<String>,
    timezone: Option<String>,
    /// Chat Completions' form: the fields one level down.
    approximate: Option<Inner>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Inner {
    country: Option<String>,
    region: Option<String>,
    city: Option<String>,
    timezone: Option<String>,
}

/// A field as given, trimmed; empty is none; refused past `MAX_FIELD_CHARS` or with control
/// characters (it may become a header).
fn field(name: &str, value: Option<String>) -> Result<Option<String>, String> {
    let Some(value) = value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
    else {
        return Ok(None);
    };
    if value.chars().count() > MAX_FIELD_CHARS || value.chars().any(char::is_control) {
        return Err(format!(
            "user_location.{name} must be at most {MAX_FIELD_CHARS} printable characters"
        ));
    }
    Ok(Some(value))
}

impl UserLocation {
    fn from_given(mut given: Given) -> Result<Self, String> {
        if given
            .kind
            .as_deref()
            .is_some_and(|kind| kind != "approximate")
        {
            return Err("user_location.type must be \"approximate\"".into());
        }
        if let Some(inner) = given.approximate.take() {
            given.country = given.country.or(inner.country);
            given.region = given.region.or(inner.region);
            given.city = given.city.or(inner.city);
            given.timezone = given.timezone.or(inner.timezone);
        }
        let country = match field("country", given.country)? {
            Some(code) if code.len() == 2 && code.chars().all(|c| c.is_ascii_alphabetic()) => {
                Some(code.to_ascii_uppercase())
            }
            Some(_) => {
                return Err("user_location.country must be a two-letter ISO 3166-1 code".into());
            }
            None => None,
        };
        Ok(Self {
            country,
            region: field("region", given.region)?,
            city: field("city", given.city)?,
            timezone: field("timezone", given.timezone)?,
        })
    }

    /// What tells two locations apart in the result cache's key.
    pub fn key(&self) -> String {
        [&self.country, &self.region, &self.city, &self.timezone]
            .map(|f| f.as_deref().unwrap_or_default())
            .join("|")
    }
}

impl<'de> Deserialize<'de> for UserLocation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let given = Given::deserialize(deserializer)?;
        Self::from_given(given).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_location_is_read_checked_and_normalised() {
        let location: UserLocation = serde_json::from_value(json!({"type": "approximate",
            "country": "gb", "city": " London ", "region": "", "timezone": "Europe/London"}))
        .unwrap();
        assert_eq!(location.country.as_deref(), Some("GB"));
        assert_eq!(location.city.as_deref(), Some("London"));
        assert_eq!(location.region, None);
        let nested: UserLocation = serde_json::from_value(
            json!({"type": "approximate", "approximate": {"country": "NO", "city": "Oslo"}}),
        )
        .unwrap();
        assert_eq!(nested.country.as_deref(), Some("NO"));
        assert_eq!(nested.city.as_deref(), Some("Oslo"));
        for bad in [
            json!({"country": "GBR"}),
            json!({"type": "exact"}),
            json!({"city": "x".repeat(101)}),
            json!({"city": "a\r\nb"}),
            json!({"planet": "Mars"}),
        ] {
            assert!(
                serde_json::from_value::<UserLocation>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
