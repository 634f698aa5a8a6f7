//! The packed widget as an MCP resource: the HTML built by `cargo xtask widget`, served
//! byte-for-byte under a URI that carries its content hash (hosts cache widget HTML by URI),
//! with both hosts' `_meta` vocabularies (MCP Apps `ui` and Apps SDK `openai/*`).
//!
//! ONE resource for every client: `resources/list` and `tools/list` must not vary per
//! connection, so the MIME type is a global setting (`--widget-mime`, default
//! `text/html;profile=mcp-app`, which ChatGPT reads too; `text/html+skybridge` on request).
//! `ui.domain` is left out unless `--widget-domain` names one: hosts validate it (Claude shows no
//! view at all when it is not the domain Claude derives for the server).

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::config::WidgetMime;

/// The packed widget and the facts hosts need to sandbox it.
#[derive(Debug, Clone)]
pub struct WidgetResource {
    html: Arc<str>,
    /// `ui://widget/giftgenius-v<contract>-<hash>[.skybridge].html`.
    uri: String,
    mime: WidgetMime,
    /// Origin of our own server: the only place the widget loads images from, and where its
    /// links (the hosted checkout) go.
    public_origin: String,
    /// The sandbox domain to ask hosts for (`--widget-domain`), if any.
    domain: Option<String>,
}

pub const WIDGET_DESCRIPTION: &str = "GiftGenius shows gift suggestions as cards with price, store and why each fits; the user can pick one and confirm a purchase.";

impl WidgetResource {
    /// Loads the packed artifact from disk.
    pub fn load(path: &Path, mime: WidgetMime, public_origin: &str, domain: Option<String>) -> anyhow::Result<Self> {
        let html = std::fs::read_to_string(path).with_context(|| {
            format!(
                "the widget artifact {} is missing or unreadable; build it with `cargo xtask widget` (or run `cargo xtask serve`)",
                path.display()
            )
        })?;
        Ok(Self::from_html(html, mime, public_origin, domain))
    }

    pub fn from_html(html: String, mime: WidgetMime, public_origin: &str, domain: Option<String>) -> Self {
        let hash = hex::encode(Sha256::digest(html.as_bytes()));
        // `v3` is the contract version: a breaking change to structuredContent must change the
        // URI. The variant is in it too, so a host never has one MIME type cached for the other.
        let variant = match mime {
            WidgetMime::McpApp => "",
            WidgetMime::Skybridge => ".skybridge",
        };
        let uri =
            format!("ui://widget/giftgenius-v{}-{}{variant}.html", giftgenius_types::CONTRACT_VERSION, &hash[..16]);
        Self { html: html.into(), uri, mime, public_origin: public_origin.to_string(), domain }
    }

    /// The one URI of the widget.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    pub fn mime(&self) -> WidgetMime {
        self.mime
    }

    pub fn html(&self) -> &str {
        &self.html
    }

    /// `_meta` of the resource (and of its contents): CSP, border, description, and the domain
    /// only when configured. No wildcard anywhere: the widget talks to nothing but its host,
    /// loads images from us and links only to us (the hosted checkout).
    pub fn resource_meta(&self) -> Map<String, Value> {
        let origin = &self.public_origin;
        let mut meta = Map::new();
        meta.insert(
            "openai/widgetCSP".into(),
            json!({ "connect_domains": [], "resource_domains": [origin], "redirect_domains": [origin] }),
        );
        meta.insert("openai/widgetPrefersBorder".into(), json!(true));
        meta.insert("openai/widgetDescription".into(), json!(WIDGET_DESCRIPTION));
        let mut ui = json!({
            "csp": { "connectDomains": [], "resourceDomains": [origin] },
            "prefersBorder": true
        });
        if let Some(domain) = &self.domain {
            meta.insert("openai/widgetDomain".into(), json!(domain));
            ui["domain"] = json!(domain);
        }
        meta.insert("ui".into(), ui);
        meta
    }
}

/// The origin (scheme://host[:port]) of a public URL, without path or trailing slash.
pub fn origin_of(public_url: &str) -> anyhow::Result<String> {
    let url = url::Url::parse(public_url).with_context(|| format!("--public-url {public_url:?} is not a URL"))?;
    anyhow::ensure!(matches!(url.scheme(), "http" | "https"), "--public-url must be http or https");
    Ok(url.origin().ascii_serialization())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORIGIN: &str = "https://gifts.example.com";

    #[test]
    fn uri_changes_with_content_and_variant() {
        let a = WidgetResource::from_html("<p>a</p>".into(), WidgetMime::McpApp, ORIGIN, None);
        let b = WidgetResource::from_html("<p>b</p>".into(), WidgetMime::McpApp, ORIGIN, None);
        let sky = WidgetResource::from_html("<p>a</p>".into(), WidgetMime::Skybridge, ORIGIN, None);
        assert_ne!(a.uri(), b.uri());
        assert_ne!(a.uri(), sky.uri());
        assert!(a.uri().starts_with("ui://widget/giftgenius-v6-") && a.uri().ends_with(".html"));
    }

    #[test]
    fn csp_names_only_our_origin_and_the_domain_only_when_configured() {
        let w = WidgetResource::from_html(String::new(), WidgetMime::McpApp, ORIGIN, None);
        let meta = Value::Object(w.resource_meta());
        assert!(!meta.to_string().contains('*'));
        assert_eq!(meta["openai/widgetCSP"]["redirect_domains"], json!([ORIGIN]));
        assert!(meta["ui"].get("domain").is_none() && meta.get("openai/widgetDomain").is_none());
        let with = WidgetResource::from_html(String::new(), WidgetMime::McpApp, ORIGIN, Some("gg.example".into()));
        let meta = Value::Object(with.resource_meta());
        assert_eq!((&meta["ui"]["domain"], &meta["openai/widgetDomain"]), (&json!("gg.example"), &json!("gg.example")));
    }

    #[test]
    fn origin_strips_path() {
        assert_eq!(origin_of("https://abc.trycloudflare.com/mcp").unwrap(), "https://abc.trycloudflare.com");
        assert!(origin_of("ftp://x").is_err());
    }
}
