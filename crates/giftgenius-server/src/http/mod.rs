//! The plain HTTP routes next to `/mcp`: what the links in tool results point at.
//!
//! - `GET /healthz`: `ok` while the server runs.
//! - `GET /images/{id}.svg`: gift pictures (`images.rs`).
//! - `GET /checkout/{id}`: the sandbox hosted checkout page (`checkout_page.rs`).
//! - `/preview…`: the local host emulator, only with `--preview` (`preview.rs`).

pub mod checkout_page;
pub mod images;
pub mod preview;

use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use giftgenius_types::wire::{CHECKOUT_PATH, IMAGES_PATH};

use crate::config::Config;
use crate::state::AppState;

/// Every route but `/mcp`.
pub fn router(config: &Config, app: Arc<AppState>) -> Router {
    Router::new()
        .route(&format!("{IMAGES_PATH}{{file}}"), get(images::gift_image))
        .route(&format!("{CHECKOUT_PATH}{{id}}"), get(checkout_page::checkout_page))
        .route("/healthz", get(|| async { "ok" }))
        .with_state(app.clone())
        .merge(preview::router(config, app))
}

/// Text made safe for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_becomes_text() {
        assert_eq!(
            super::escape(r#"<img src=x onerror="a('b')">&"#),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
    }
}
