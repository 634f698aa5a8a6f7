//! The packed widget as an MCP resource: the HTML built by `cargo xtask widget`, served
//! byte-for-byte under a URI that carries its content hash (hosts cache widget HTML by URI),
//! with both hosts' `_meta` vocabularies (Apps SDK `openai/*` and MCP Apps `ui`).

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
    /// `ui://widget/giftgenius-v1-<hash>`; each variant appends its own suffix.
    uri_stem: String,
    /// The variant served to clients that do not declare the MCP Apps extension.
    mime: WidgetMime,
    /// Origin of our own server: the only place the widget may load images from.
    public_origin: String,
}

pub const WIDGET_DESCRIPTION: &str = "GiftGenius shows gift suggestions as cards with price, store and why each fits; the user can pick one and confirm a purchase.";

impl WidgetResource {
    /// Loads the packed artifact from disk.
    pub fn load(path: &Path, mime: WidgetMime, public_origin: &str) -> anyhow::Result<Self> {
        let html = std::fs::read_to_string(path).with_context(|| {
            format!(
                "the widget artifact {} is missing or unreadable; build it with `cargo xtask widget` (or run `cargo xtask serve`)",
                path.display()
            )
        })?;
        Ok(Self::from_html(html, mime, public_origin))
    }

    pub fn from_html(html: String, mime: WidgetMime, public_origin: &str) -> Self {
        let hash = hex::encode(Sha256::digest(html.as_bytes()));
        // `v1` is the contract version: a breaking change to structuredContent must change the URI.
        let uri_stem = format!("ui://widget/giftgenius-v{}-{}", giftgenius_types::CONTRACT_VERSION, &hash[..16]);
        Self { html: html.into(), uri_stem, mime, public_origin: public_origin.to_string() }
    }

    /// The default variant's URI.
    pub fn uri(&self) -> String {
        self.uri_for(self.mime)
    }

    /// Distinct URIs per variant, so a host never gets a cached copy of the other MIME type.
    pub fn uri_for(&self, mime: WidgetMime) -> String {
        match mime {
            WidgetMime::Skybridge => format!("{}.html", self.uri_stem),
            WidgetMime::McpApp => format!("{}.mcp-app.html", self.uri_stem),
        }
    }

    /// Which variant a URI names, if it is one of ours.
    pub fn variant_of(&self, uri: &str) -> Option<WidgetMime> {
        [WidgetMime::Skybridge, WidgetMime::McpApp].into_iter().find(|m| self.uri_for(*m) == uri)
    }

    /// The variant for clients that say nothing about MCP Apps.
    pub fn default_variant(&self) -> WidgetMime {
        self.mime
    }

    pub fn html(&self) -> &str {
        &self.html
    }

    /// `_meta` of the resource (and of its contents): CSP, domain, border, description.
    /// No wildcard anywhere: the widget talks to nothing but its host, and loads images from us.
    pub fn resource_meta(&self) -> Map<String, Value> {
        let origin = &self.public_origin;
        let mut meta = Map::new();
        meta.insert("openai/widgetCSP".into(), json!({ "connect_domains": [], "resource_domains": [origin] }));
        meta.insert("openai/widgetDomain".into(), json!(origin));
        meta.insert("openai/widgetPrefersBorder".into(), json!(true));
        meta.insert("openai/widgetDescription".into(), json!(WIDGET_DESCRIPTION));
        meta.insert(
            "ui".into(),
            json!({
                "csp": { "connectDomains": [], "resourceDomains": [origin] },
                "domain": origin,
                "prefersBorder": true
            }),
        );
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

    #[test]
    fn uri_changes_with_content() {
        let a = WidgetResource::from_html("<p>a</p>".into(), WidgetMime::Skybridge, "http://127.0.0.1:8000");
        let b = WidgetResource::from_html("<p>b</p>".into(), WidgetMime::Skybridge, "http://127.0.0.1:8000");
        assert_ne!(a.uri(), b.uri());
        assert!(a.uri().starts_with("ui://widget/giftgenius-v1-"));
    }

    #[test]
    fn csp_names_only_our_origin() {
        let w = WidgetResource::from_html(String::new(), WidgetMime::McpApp, "https://gifts.example.com");
        let meta = Value::Object(w.resource_meta()).to_string();
        assert!(!meta.contains('*'));
        assert!(meta.contains("https://gifts.example.com"));
        assert_eq!(w.variant_of(&w.uri()), Some(WidgetMime::McpApp));
        assert_ne!(w.uri_for(WidgetMime::Skybridge), w.uri_for(WidgetMime::McpApp));
    }

    #[test]
    fn origin_strips_path() {
        assert_eq!(origin_of("https://abc.trycloudflare.com/mcp").unwrap(), "https://abc.trycloudflare.com");
        assert!(origin_of("ftp://x").is_err());
    }
}
