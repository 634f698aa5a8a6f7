//! The agent platforms of `--acp-platforms` and their bearer keys.
//!
//! Keys are kept only as SHA-256. A request's bearer value is hashed and compared with every
//! platform's hash in constant time, without stopping at a match, so timing says nothing about
//! which platform matched or how many there are.

use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;
use sha2::{Digest, Sha256};

/// One line of the `--acp-platforms` file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlatformEntry {
    name: String,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default)]
    api_key_sha256: Option<String>,
    /// Where order events will go (not sent yet: issue 25 item 5).
    #[serde(default)]
    #[allow(dead_code)]
    webhook_url: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    webhook_secret: Option<String>,
}

/// A platform: its name (session owner, idempotency scope) and its key's hash.
#[derive(Clone)]
pub struct Platform {
    pub name: String,
    key_sha256: [u8; 32],
}

impl std::fmt::Debug for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Platform").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Every configured platform.
#[derive(Debug, Clone, Default)]
pub struct Platforms(Vec<Platform>);

impl Platforms {
    /// Reads the `--acp-platforms` file: a JSON list of platforms, each with a unique name and
    /// exactly one of `api_key` / `api_key_sha256` (64 hex digits).
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("--acp-platforms {}", path.display()))
    }

    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let entries: Vec<PlatformEntry> = serde_json::from_str(text).context("not a JSON list of platforms")?;
        let mut platforms = Vec::with_capacity(entries.len());
        for entry in entries {
            let name = entry.name.trim().to_string();
            if name.is_empty() || platforms.iter().any(|p: &Platform| p.name == name) {
                bail!("every platform needs a name of its own (empty or repeated: {name:?})");
            }
            let key_sha256 = match (entry.api_key, entry.api_key_sha256) {
                (Some(key), None) if !key.is_empty() => Sha256::digest(key.as_bytes()).into(),
                (None, Some(hash)) => {
                    let bytes = hex::decode(hash.trim()).ok().and_then(|b| <[u8; 32]>::try_from(b).ok());
                    bytes.with_context(|| format!("platform {name}: api_key_sha256 must be 64 hex digits"))?
                }
                _ => bail!("platform {name}: give exactly one of api_key and api_key_sha256"),
            };
            platforms.push(Platform { name, key_sha256 });
        }
        if platforms.is_empty() {
            bail!("the list names no platform");
        }
        Ok(Self(platforms))
    }

    /// The platform whose key is `bearer`, compared by hash with every platform in constant time.
    pub fn authenticate(&self, bearer: &str) -> Option<&Platform> {
        let presented: [u8; 32] = Sha256::digest(bearer.as_bytes()).into();
        let mut found = None;
        for platform in &self.0 {
            if constant_time_eq(&presented, &platform.key_sha256) {
                found = Some(platform);
            }
        }
        found
    }
}

fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_clear_or_hashed_find_their_platform() {
        let hash = hex::encode(Sha256::digest(b"second-key"));
        let platforms = Platforms::parse(&format!(
            r#"[{{"name": "one", "api_key": "first-key", "webhook_url": "https://one.example/hook", "webhook_secret": "s"}},
                {{"name": "two", "api_key_sha256": "{hash}"}}]"#
        ))
        .unwrap();
        assert_eq!(platforms.authenticate("first-key").map(|p| p.name.as_str()), Some("one"));
        assert_eq!(platforms.authenticate("second-key").map(|p| p.name.as_str()), Some("two"));
        assert!(platforms.authenticate("first-ke").is_none());
        assert!(platforms.authenticate("").is_none());
    }

    #[test]
    fn a_bad_file_is_refused() {
        assert!(Platforms::parse("[]").is_err());
        assert!(Platforms::parse(r#"[{"name": "a"}]"#).is_err(), "no key");
        assert!(Platforms::parse(r#"[{"name": "a", "api_key": "k", "api_key_sha256": "00"}]"#).is_err());
        assert!(Platforms::parse(r#"[{"name": "a", "api_key_sha256": "abc"}]"#).is_err());
        assert!(Platforms::parse(r#"[{"name": "a", "api_key": "k"}, {"name": "a", "api_key": "j"}]"#).is_err());
        assert!(Platforms::parse(r#"[{"name": "a", "api_key": "k", "extra": 1}]"#).is_err());
    }
}
