//! The agent platforms of `--acp-platforms`, their bearer keys and their webhooks (where the
//! outbox posts their orders' events: `giftgenius_commerce::outbox::receivers`).
//!
//! Keys are kept only as SHA-256. A request's bearer value is hashed and compared with every
//! platform's hash in constant time, without stopping at a match, so timing says nothing about
//! which platform matched or how many there are.

use std::path::Path;

use anyhow::{Context, bail};
use giftgenius_commerce::outbox::receivers::Webhook;
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
    /// Where its orders' events go (`outbox/`), signed with `webhook_secret`.
    #[serde(default)]
    webhook_url: Option<String>,
    #[serde(default)]
    webhook_secret: Option<String>,
}

/// A platform: its name (session owner, idempotency scope, webhook receiver) and its key's hash.
#[derive(Clone)]
pub struct Platform {
    pub name: String,
    key_sha256: [u8; 32],
    /// Where its orders' events go, if it takes them.
    pub webhook: Option<Webhook>,
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
                (Some(key), None) => {
                    strong(&key).with_context(|| format!("platform {name}: api_key"))?;
                    Sha256::digest(key.as_bytes()).into()
                }
                (None, Some(hash)) => {
                    let bytes = hex::decode(hash.trim()).ok().and_then(|b| <[u8; 32]>::try_from(b).ok());
                    bytes.with_context(|| format!("platform {name}: api_key_sha256 must be 64 hex digits"))?
                }
                _ => bail!("platform {name}: give exactly one of api_key and api_key_sha256"),
            };
            let webhook = match (entry.webhook_url, entry.webhook_secret) {
                (None, None) => None,
                (Some(url), Some(secret)) => {
                    strong(&secret).with_context(|| format!("platform {name}: webhook_secret"))?;
                    Some(Webhook::new(&url, secret, &format!("platform {name}: webhook_url"))?)
                }
                _ => bail!("platform {name}: give both webhook_url and webhook_secret, or neither"),
            };
            platforms.push(Platform { name, key_sha256, webhook });
        }
        if platforms.is_empty() {
            bail!("the list names no platform");
        }
        Ok(Self(platforms))
    }

    /// Every platform, in the file's order.
    pub fn iter(&self) -> impl Iterator<Item = &Platform> {
        self.0.iter()
    }

    /// Each platform's name and webhook, for those that take their orders' events.
    pub fn webhooks(&self) -> impl Iterator<Item = (String, Webhook)> + '_ {
        self.0.iter().filter_map(|p| Some((p.name.clone(), p.webhook.clone()?)))
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

/// A key or secret given in clear passes the rule every token of ours passes (at least 32
/// visible ASCII characters: `token::check_strength`); a short one is guessable, and a hashed
/// key (`api_key_sha256`) is the way to keep a long one out of the file.
fn strong(secret: &str) -> anyhow::Result<()> {
    giftgenius_pay_api::token::check_strength(secret).map_err(anyhow::Error::msg)
}

fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIRST_KEY: &str = "first-platform-key-0123456789abcdef";
    const SECRET: &str = "whsec_platform_secret_0123456789abcdef";

    #[test]
    fn keys_in_clear_or_hashed_find_their_platform() {
        let hash = hex::encode(Sha256::digest(b"second-key"));
        let platforms = Platforms::parse(&format!(
            r#"[{{"name": "one", "api_key": "{FIRST_KEY}", "webhook_url": "https://one.example/hook", "webhook_secret": "{SECRET}"}},
                {{"name": "two", "api_key_sha256": "{hash}"}}]"#
        ))
        .unwrap();
        assert_eq!(platforms.authenticate(FIRST_KEY).map(|p| p.name.as_str()), Some("one"));
        assert_eq!(platforms.authenticate("second-key").map(|p| p.name.as_str()), Some("two"));
        assert!(platforms.authenticate(&FIRST_KEY[1..]).is_none());
        assert!(platforms.authenticate("").is_none());
    }

    #[test]
    fn a_bad_file_is_refused() {
        let k = FIRST_KEY;
        assert!(Platforms::parse("[]").is_err());
        assert!(Platforms::parse(r#"[{"name": "a"}]"#).is_err(), "no key");
        assert!(Platforms::parse(&format!(r#"[{{"name": "a", "api_key": "{k}", "api_key_sha256": "00"}}]"#)).is_err());
        assert!(Platforms::parse(r#"[{"name": "a", "api_key_sha256": "abc"}]"#).is_err());
        let twice = format!(r#"[{{"name": "a", "api_key": "{k}"}}, {{"name": "a", "api_key": "{k}x"}}]"#);
        assert!(Platforms::parse(&twice).is_err());
        assert!(Platforms::parse(&format!(r#"[{{"name": "a", "api_key": "{k}", "extra": 1}}]"#)).is_err());
        let webhook = |url: &str, secret: &str| {
            Platforms::parse(&format!(
                r#"[{{"name": "a", "api_key": "{k}", "webhook_url": "{url}", "webhook_secret": "{secret}"}}]"#
            ))
        };
        assert!(webhook("https://a.example/hook", SECRET).is_ok());
        assert!(webhook("ftp://a.example/hook", SECRET).is_err(), "http(s) only");
        assert!(webhook("not a url", SECRET).is_err());
        assert!(webhook("https://a.example/hook", "").is_err(), "a secret to sign with");
        let no_secret = format!(r#"[{{"name": "a", "api_key": "{k}", "webhook_url": "https://a.example/"}}]"#);
        assert!(Platforms::parse(&no_secret).is_err());
    }

    /// The whole error chain, as start-up prints it.
    fn refusal(file: &str) -> String {
        format!("{:#}", Platforms::parse(file).expect_err("refused"))
    }

    #[test]
    fn a_short_or_unprintable_key_or_webhook_secret_is_refused_naming_the_setting_not_the_secret() {
        let short_key = refusal(r#"[{"name": "a", "api_key": "short-key-Zq7"}]"#);
        assert!(short_key.contains("platform a: api_key") && short_key.contains("at least 32"), "{short_key}");
        assert!(!short_key.contains("short-key-Zq7"), "{short_key}");
        let spaced = refusal(r#"[{"name": "a", "api_key": "a key with spaces in it, long enough to pass"}]"#);
        assert!(spaced.contains("platform a: api_key") && spaced.contains("printable ASCII"), "{spaced}");
        let short_secret = refusal(&format!(
            r#"[{{"name": "b", "api_key": "{FIRST_KEY}", "webhook_url": "https://b.example/", "webhook_secret": "w-Zq7"}}]"#
        ));
        assert!(short_secret.contains("platform b: webhook_secret"), "{short_secret}");
        assert!(short_secret.contains("at least 32") && !short_secret.contains("w-Zq7"), "{short_secret}");
        // A hashed key cannot be measured; it is the way to keep the key itself out of the file.
        let hash = hex::encode(Sha256::digest(b"k"));
        assert!(Platforms::parse(&format!(r#"[{{"name": "c", "api_key_sha256": "{hash}"}}]"#)).is_ok());
    }
}
