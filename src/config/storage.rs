//! The `[storage]` section: where files live (uploaded documents, image attachments, browser
//! screenshots). Without a URL, in the data directory as always; with `s3://bucket/prefix`, in
//! any S3-compatible object store, so processes on several machines share nothing but
//! PostgreSQL and the store.

use secrecy::SecretString;
use serde::Deserialize;

/// Where files are kept.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StorageConfig {
    /// `s3://bucket` or `s3://bucket/prefix`; unset: the data directory.
    pub url: Option<String>,
    /// The store's endpoint when it is not AWS (`http://minio.internal:9000`).
    pub endpoint: Option<String>,
    /// The region (default `us-east-1`).
    pub region: Option<String>,
    /// Credentials. Secrets: they never print. Unset: the environment's (`AWS_*`), or the
    /// instance's.
    pub access_key_id: Option<SecretString>,
    pub secret_access_key: Option<SecretString>,
}

impl StorageConfig {
    /// The bucket and key prefix of an `s3://` URL, or why it is not one.
    pub fn bucket_and_prefix(&self) -> Option<Result<(String, String), String>> {
        let url = self.url.as_deref()?;
        let Some(rest) = url.strip_prefix("s3://") else {
            return Some(Err(format!(
                "storage.url must be s3://bucket or s3://bucket/prefix, not {url}"
            )));
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let bucket_ok = (3..=63).contains(&bucket.len())
            && bucket
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
        if !bucket_ok {
            return Some(Err(format!("storage.url names no valid bucket: {url}")));
        }
        let prefix = prefix.trim_matches('/');
        if prefix.split('/').any(|part| part == "." || part == "..") {
            return Some(Err(format!("storage.url has a bad prefix: {url}")));
        }
        Some(Ok((bucket.to_string(), prefix.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(url: &str) -> StorageConfig {
        StorageConfig {
            url: Some(url.into()),
            ..Default::default()
        }
    }

    #[test]
    fn an_s3_url_names_a_bucket_and_a_prefix() {
        assert_eq!(StorageConfig::default().bucket_and_prefix(), None);
        assert_eq!(
            at("s3://files").bucket_and_prefix(),
            Some(Ok(("files".into(), String::new())))
        );
        assert_eq!(
            at("s3://files/colloquy/one/").bucket_and_prefix(),
            Some(Ok(("files".into(), "colloquy/one".into())))
        );
        for bad in [
            "files",
            "http://x/y",
            "s3://A_B",
            "s3://x",
            "s3://files/a/../b",
        ] {
            assert!(matches!(at(bad).bucket_and_prefix(), Some(Err(_))), "{bad}");
        }
    }
}
