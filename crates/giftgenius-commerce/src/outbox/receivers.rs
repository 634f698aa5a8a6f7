//! Who receives order events, by the name an event stores (docs/acp.md §10.2): `app` for app
//! orders (`--order-webhook-url`, signed with `--order-webhook-secret-file`) and
//! `acp:<platform>` for a platform's orders (its `webhook_url` / `webhook_secret` in
//! `--acp-platforms`). An event keeps the name, not the URL: the URL and secret are looked up
//! when it is posted, so a rotated secret or a moved receiver applies to retries and
//! redeliveries (after a restart with the new configuration).
//!
//! No address rule (unlike gift photos, `photos/address.rs`): these URLs come from the
//! operator's own configuration, never from a caller or a catalog row, and an app-order
//! receiver on the operator's own network is the expected case. What limits a webhook is in
//! `delivery.rs`: http(s) only, no redirects followed, a timeout, a bounded read.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, bail};

/// A webhook receiver: where events are posted and the secret that signs them.
#[derive(Clone)]
pub struct Webhook {
    pub url: url::Url,
    pub secret: String,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook").field("url", &self.url.as_str()).finish_non_exhaustive()
    }
}

impl Webhook {
    /// A receiver at `url` (http or https, with a host) signing with `secret` (not empty).
    /// `what` names the setting in the error.
    pub fn new(url: &str, secret: String, what: &str) -> anyhow::Result<Self> {
        let url = url::Url::parse(url.trim()).with_context(|| format!("{what}: not a URL"))?;
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
            bail!("{what}: an http(s) URL with a host is needed");
        }
        if secret.is_empty() {
            bail!("{what}: the webhook secret is empty");
        }
        Ok(Self { url, secret })
    }
}

/// The receiver of app orders' events.
pub const APP: &str = "app";

/// The receiver name of `platform`'s orders' events.
pub fn platform_receiver(platform: &str) -> String {
    format!("acp:{platform}")
}

/// Every configured receiver, by name.
#[derive(Debug, Clone, Default)]
pub struct Receivers(BTreeMap<String, Webhook>);

impl Receivers {
    /// From `--order-webhook-url` + `--order-webhook-secret-file` (both or neither) and the
    /// platforms' webhooks, by platform name.
    pub fn from_config(
        app_url: Option<&str>,
        app_secret_file: Option<&Path>,
        platforms: impl IntoIterator<Item = (String, Webhook)>,
    ) -> anyhow::Result<Self> {
        let mut receivers = BTreeMap::new();
        match (app_url, app_secret_file) {
            (None, None) => {}
            (Some(url), Some(file)) => {
                let secret = read_secret(file)?;
                receivers.insert(APP.to_string(), Webhook::new(url, secret, "--order-webhook-url")?);
            }
            (Some(_), None) => anyhow::bail!(
                "--order-webhook-url needs --order-webhook-secret-file: the file holding the secret that signs the events \
                 (create one with: openssl rand -hex 32 > order-webhook-secret)"
            ),
            (None, Some(_)) => anyhow::bail!("--order-webhook-secret-file goes with --order-webhook-url"),
        }
        for (platform, webhook) in platforms {
            receivers.insert(platform_receiver(&platform), webhook);
        }
        for (name, webhook) in &receivers {
            if webhook.url.scheme() == "http" && !is_loopback_host(&webhook.url) {
                tracing::warn!(
                    receiver = name,
                    "order events to {name} go over plain http: the signature proves who sent them, but anyone on \
                     the way can read them (gift messages included); use https"
                );
            }
        }
        Ok(Self(receivers))
    }

    /// The receiver called `name`, if configured here.
    pub fn get(&self, name: &str) -> Option<&Webhook> {
        self.0.get(name)
    }

    /// Who receives the events of an order placed by `subject`: its platform's webhook for an
    /// ACP order (`acp:<platform>`), the app receiver for any other; `None` when that receiver
    /// is not configured (the order then announces nothing).
    pub fn for_subject(&self, subject: &str) -> Option<String> {
        let name = match subject.strip_prefix("acp:") {
            Some(platform) => platform_receiver(platform),
            None => APP.to_string(),
        };
        self.0.contains_key(&name).then_some(name)
    }
}

/// A secret file's first line (trimmed).
fn read_secret(file: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("--order-webhook-secret-file: cannot read {}", file.display()))?;
    let secret = text.lines().next().unwrap_or("").trim().to_string();
    anyhow::ensure!(!secret.is_empty(), "--order-webhook-secret-file {}: the first line is empty", file.display());
    // The rule every shared secret passes (ACP platforms' webhook secrets too): a short one is
    // guessable, and whoever guesses it can sign order events the receiver trusts.
    giftgenius_pay_api::token::check_strength(&secret)
        .map_err(|why| anyhow::anyhow!("--order-webhook-secret-file {}: {why}", file.display()))?;
    Ok(secret)
}

/// Whether `url` goes to this machine (plain http there is not warned about).
pub fn is_loopback_host(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The app's own order-event secret in the tests: 32 characters or more, as every secret.
    const APP_SECRET: &str = "app-order-events-secret-0123456789";

    /// The platforms' webhooks: `chat` takes its events; `quiet` (not listed) takes none.
    fn platforms() -> Vec<(String, Webhook)> {
        let chat = Webhook::new("https://chat.example/hooks", "chat-webhook-secret-0123456789abcdef".into(), "chat");
        vec![("chat".to_string(), chat.unwrap())]
    }

    #[test]
    fn an_acp_order_goes_to_its_platform_and_an_app_order_to_the_app_receiver() {
        let secret = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(secret.path(), format!("{APP_SECRET}\nignored\n")).unwrap();
        let receivers =
            Receivers::from_config(Some("http://127.0.0.1:9/orders"), Some(secret.path()), platforms()).unwrap();
        assert_eq!(receivers.for_subject("acp:chat").as_deref(), Some("acp:chat"));
        assert_eq!(receivers.for_subject("acp:quiet"), None, "a platform without a webhook gets no events");
        assert_eq!(receivers.for_subject("acp:gone"), None);
        assert_eq!(receivers.for_subject("local").as_deref(), Some(APP));
        assert_eq!(receivers.for_subject("https://issuer.example#sub").as_deref(), Some(APP));
        let chat = receivers.get("acp:chat").unwrap();
        assert_eq!(
            (chat.url.as_str(), chat.secret.as_str()),
            ("https://chat.example/hooks", "chat-webhook-secret-0123456789abcdef")
        );
        assert_eq!(receivers.get(APP).unwrap().secret, APP_SECRET, "the file's first line");
    }

    #[test]
    fn without_the_app_flags_app_orders_announce_nothing() {
        let receivers = Receivers::from_config(None, None, platforms()).unwrap();
        assert_eq!(receivers.for_subject("local"), None);
        assert_eq!(receivers.for_subject("acp:chat").as_deref(), Some("acp:chat"));
        assert_eq!(Receivers::from_config(None, None, []).unwrap().for_subject("acp:chat"), None);
    }

    #[test]
    fn a_short_or_unprintable_app_secret_is_refused_naming_the_setting_not_the_secret() {
        for weak in ["app-secret", "has a space but is long enough 0123456789"] {
            let secret = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(secret.path(), format!("{weak}\n")).unwrap();
            let refused = Receivers::from_config(Some("http://127.0.0.1:9/orders"), Some(secret.path()), [])
                .err()
                .unwrap_or_else(|| panic!("{weak:?} was accepted"))
                .to_string();
            assert!(refused.starts_with("--order-webhook-secret-file"), "{refused}");
            assert!(!refused.contains(weak), "the secret is never in the message: {refused}");
        }
    }

    #[test]
    fn the_app_flags_go_together_and_need_a_secret() {
        let empty = tempfile::NamedTempFile::new().unwrap();
        assert!(Receivers::from_config(Some("https://o.example/"), None, []).is_err());
        assert!(Receivers::from_config(None, Some(empty.path()), []).is_err());
        assert!(Receivers::from_config(Some("https://o.example/"), Some(empty.path()), []).is_err(), "empty secret");
        std::fs::write(empty.path(), format!("{APP_SECRET}\n")).unwrap();
        assert!(Receivers::from_config(Some("file:///etc/passwd"), Some(empty.path()), []).is_err());
    }
}
