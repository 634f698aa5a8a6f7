//! Who receives the product feed's changes (`--feed-receivers FILE`, docs/feed.md): a JSON
//! list of `{name, url, feed_id, token_file}`. Each change is pushed as
//! `PATCH {url}/feeds/{feed_id}/products` with the token as a bearer token. A row of
//! `feed_pushes` keeps the receiver's name, not its URL: a moved receiver or a rotated token
//! applies to what is still pending (after a restart with the new file).
//!
//! As for order-event receivers (`giftgenius_commerce::outbox::receivers`), the URLs come from
//! the operator's own file, never from a caller, so no address rule applies; plain http is
//! allowed with a warning (the token travels in it), to loopback without one.

use std::path::Path;

use anyhow::{Context, bail, ensure};
use giftgenius_commerce::outbox::receivers::is_loopback_host;
use serde::Deserialize;

/// One feed receiver.
#[derive(Clone)]
pub struct FeedReceiver {
    /// Its name in the file: the key of its rows.
    pub name: String,
    pub feed_id: String,
    /// `{url}/feeds/{feed_id}/products`, the feed id percent-encoded as one path segment.
    pub products_url: url::Url,
    pub token: String,
}

impl std::fmt::Debug for FeedReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedReceiver")
            .field("name", &self.name)
            .field("products_url", &self.products_url.as_str())
            .finish_non_exhaustive()
    }
}

/// A receiver as the file writes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    url: String,
    feed_id: String,
    /// Its first line is the token; relative to the receivers file's folder.
    token_file: std::path::PathBuf,
}

/// Every configured receiver, in the file's order.
#[derive(Debug, Clone, Default)]
pub struct FeedReceivers(Vec<FeedReceiver>);

impl FeedReceivers {
    /// From `--feed-receivers`; none without it.
    pub fn from_config(file: Option<&Path>) -> anyhow::Result<Self> {
        let Some(file) = file else { return Ok(Self::default()) };
        let what = format!("--feed-receivers {}", file.display());
        let text = std::fs::read_to_string(file).with_context(|| format!("{what}: cannot read it"))?;
        let entries: Vec<Entry> = serde_json::from_str(&text)
            .with_context(|| format!("{what}: not a JSON list of {{name, url, feed_id, token_file}}"))?;
        let folder = file.parent().unwrap_or(Path::new("."));
        let mut receivers = Vec::new();
        for entry in entries {
            let receiver = FeedReceiver::new(entry, folder).with_context(|| what.clone())?;
            ensure!(
                !receivers.iter().any(|r: &FeedReceiver| r.name == receiver.name),
                "{what}: the name {} is used twice",
                receiver.name
            );
            if receiver.products_url.scheme() == "http" && !is_loopback_host(&receiver.products_url) {
                tracing::warn!(
                    receiver = receiver.name,
                    "feed changes to {} go over plain http, with its token: use https",
                    receiver.name
                );
            }
            receivers.push(receiver);
        }
        Ok(Self(receivers))
    }

    pub fn iter(&self) -> impl Iterator<Item = &FeedReceiver> {
        self.0.iter()
    }

    pub fn get(&self, name: &str) -> Option<&FeedReceiver> {
        self.0.iter().find(|r| r.name == name)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Receivers made in code (the tests').
    pub fn of(receivers: Vec<FeedReceiver>) -> Self {
        Self(receivers)
    }
}

impl FeedReceiver {
    fn new(entry: Entry, folder: &Path) -> anyhow::Result<Self> {
        let name = entry.name;
        ensure!(
            (1..=64).contains(&name.len())
                && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_'),
            "a receiver's name is 1 to 64 of a-z, 0-9, - and _ (got {name:?})"
        );
        ensure!(
            (1..=128).contains(&entry.feed_id.len()) && entry.feed_id.bytes().all(|b| b.is_ascii_graphic()),
            "receiver {name}: feed_id must be 1 to 128 printable characters"
        );
        let token_file = folder.join(&entry.token_file);
        let token = std::fs::read_to_string(&token_file)
            .with_context(|| format!("receiver {name}: cannot read its token_file {}", token_file.display()))?;
        let token = token.lines().next().unwrap_or("").trim().to_string();
        ensure!(
            !token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic()),
            "receiver {name}: the first line of {} must be the token (printable, no spaces)",
            token_file.display()
        );
        Ok(Self { products_url: products_url(&entry.url, &entry.feed_id, &name)?, name, feed_id: entry.feed_id, token })
    }

    /// A receiver made in code (the tests').
    pub fn at(name: &str, url: &str, feed_id: &str, token: &str) -> anyhow::Result<Self> {
        Ok(Self {
            products_url: products_url(url, feed_id, name)?,
            name: name.to_string(),
            feed_id: feed_id.to_string(),
            token: token.to_string(),
        })
    }
}

/// `{url}/feeds/{feed_id}/products`.
fn products_url(base: &str, feed_id: &str, name: &str) -> anyhow::Result<url::Url> {
    let mut url = url::Url::parse(base.trim()).with_context(|| format!("receiver {name}: url is not a URL"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        bail!("receiver {name}: url must be http(s) with a host");
    }
    ensure!(url.query().is_none() && url.fragment().is_none(), "receiver {name}: url takes no query or fragment");
    url.path_segments_mut()
        .map_err(|()| anyhow::anyhow!("receiver {name}: url cannot take a path"))?
        .pop_if_empty()
        .extend(["feeds", feed_id, "products"]);
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_receiver_patches_its_feed_s_products_with_its_token_read_beside_the_file() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "chatgpt.token", "tok_live_0123\nignored\n");
        let file = write(
            dir.path(),
            "receivers.json",
            r#"[{"name": "chatgpt", "url": "https://feeds.example/v1/", "feed_id": "feed/8f?3", "token_file": "chatgpt.token"}]"#,
        );
        let receivers = FeedReceivers::from_config(Some(&file)).unwrap();
        let chatgpt = receivers.get("chatgpt").unwrap();
        assert_eq!(chatgpt.products_url.as_str(), "https://feeds.example/v1/feeds/feed%2F8f%3F3/products");
        assert_eq!(chatgpt.token, "tok_live_0123");
        assert!(!format!("{chatgpt:?}").contains("tok_live"), "the token is not in Debug");
        assert!(FeedReceivers::from_config(None).unwrap().is_empty());
    }

    #[test]
    fn a_bad_file_is_refused_naming_the_setting_and_the_receiver() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "t", "tok\n");
        let refused = |text: &str| {
            let file = write(dir.path(), "r.json", text);
            format!("{:#}", FeedReceivers::from_config(Some(&file)).unwrap_err())
        };
        let entry = |name: &str, url: &str, token_file: &str| {
            format!(r#"{{"name": "{name}", "url": "{url}", "feed_id": "f", "token_file": "{token_file}"}}"#)
        };
        let ok = entry("a", "https://x.example", "t");
        assert!(refused(&format!("[{ok}, {ok}]")).contains("used twice"));
        assert!(refused(&format!("[{}]", entry("A b", "https://x.example", "t"))).contains("name"));
        assert!(refused(&format!("[{}]", entry("a", "ftp://x.example", "t"))).contains("http(s)"));
        assert!(refused(&format!("[{}]", entry("a", "https://x.example/?q=1", "t"))).contains("query"));
        assert!(refused(&format!("[{}]", entry("a", "https://x.example", "missing"))).contains("token_file"));
        assert!(refused(r#"[{"name": "a"}]"#).starts_with("--feed-receivers"));
        write(dir.path(), "blank", "\n");
        assert!(refused(&format!("[{}]", entry("a", "https://x.example", "blank"))).contains("first line"));
    }
}
