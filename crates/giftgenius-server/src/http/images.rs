//! Gift pictures, drawn as small SVGs by the server itself so the widget's CSP only ever
//! needs our own origin (no third-party image hosts).

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use std::sync::Arc;

use super::escape;
use crate::state::AppState;
use crate::suggest::catalog::CatalogGift;

const PALETTE: [(&str, &str); 8] = [
    ("#fde68a", "#92400e"),
    ("#bbf7d0", "#166534"),
    ("#bfdbfe", "#1e40af"),
    ("#fbcfe8", "#9d174d"),
    ("#ddd6fe", "#5b21b6"),
    ("#fed7aa", "#9a3412"),
    ("#a5f3fc", "#155e75"),
    ("#e5e7eb", "#374151"),
];

/// A 160×120 picture: a tile coloured by the gift's first tag, its initials and that tag.
pub fn svg_for(gift: &CatalogGift) -> String {
    let tag = gift.tags.first().map(String::as_str).unwrap_or("gift");
    let index = tag.bytes().fold(0usize, |acc, b| acc.wrapping_mul(31).wrapping_add(b as usize)) % PALETTE.len();
    let (bg, fg) = PALETTE[index];
    let initials: String = gift
        .title
        .split_whitespace()
        .filter(|w| w.chars().next().is_some_and(char::is_alphanumeric))
        .take(2)
        .filter_map(|w| w.chars().next())
        .flat_map(char::to_uppercase)
        .collect();
    format!(
        concat!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="160" height="120" viewBox="0 0 160 120" role="img" aria-label="{title}">"#,
            r#"<rect width="160" height="120" rx="12" fill="{bg}"/>"#,
            r#"<text x="80" y="66" text-anchor="middle" font-family="sans-serif" font-size="40" font-weight="700" fill="{fg}">{initials}</text>"#,
            r#"<text x="80" y="100" text-anchor="middle" font-family="sans-serif" font-size="13" fill="{fg}">{tag}</text>"#,
            "</svg>"
        ),
        title = escape(&gift.title),
        bg = bg,
        fg = fg,
        initials = escape(&initials),
        tag = escape(tag),
    )
}

/// `GET /images/{id}.svg`
pub async fn gift_image(State(app): State<Arc<AppState>>, Path(file): Path<String>) -> Response {
    let Some(gift) = file.strip_suffix(".svg").and_then(|id| app.catalog.get(id)) else {
        return (StatusCode::NOT_FOUND, "no such image").into_response();
    };
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
            (header::HeaderName::from_static("x-content-type-options"), "nosniff"),
        ],
        svg_for(&gift),
    )
        .into_response()
}
