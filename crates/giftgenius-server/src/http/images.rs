//! Gift pictures from our own origin, so the widget's CSP only ever needs us (no third-party
//! image hosts, and the buyer's browser never talks to a merchant's):
//!
//! - `GET /images/{id}.svg`: the lettered tile, drawn by the server.
//! - `GET /images/{id}.jpg` and `/images/{id}@2x.jpg`: the gift's own photo, fetched from the
//!   catalog's URL, resized and kept (`photos/`). When there is none or it cannot be had, these
//!   answer the tile itself (`image/svg+xml`, kept by browsers for a minute only) rather than
//!   a redirect to the `.svg`: an `<img>` goes by the content type, not the name, so the card
//!   needs no script and no second round trip, and a later request tries the photo again.
//!
//! Gifts are looked up in the local catalog, then in the last answers of the HTTP catalogs.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use giftgenius_types::wire::{PHOTO_2X_SUFFIX, PHOTO_SUFFIX};

use std::sync::Arc;

use super::escape;
use crate::photos::Size;
use crate::state::AppState;
use giftgenius_catalog::{CatalogGift, plain_id};

/// How long browsers keep a picture that will not change soon.
const KEEP: &str = "public, max-age=86400";

/// How long browsers keep the tile given in place of a photo that failed.
const KEEP_FALLBACK: &str = "public, max-age=60";

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
    let tag = gift.tags.first().map(|t| &**t).unwrap_or("gift");
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

/// What a file name under `/images/` asks for.
enum Picture<'a> {
    Tile(&'a str),
    Photo(&'a str, Size),
}

fn parse(file: &str) -> Option<Picture<'_>> {
    let picture = if let Some(id) = file.strip_suffix(".svg") {
        Picture::Tile(id)
    } else if let Some(id) = file.strip_suffix(PHOTO_2X_SUFFIX) {
        Picture::Photo(id, Size::Large)
    } else if let Some(id) = file.strip_suffix(PHOTO_SUFFIX) {
        Picture::Photo(id, Size::Small)
    } else {
        return None;
    };
    let (Picture::Tile(id) | Picture::Photo(id, _)) = picture;
    plain_id(id).then_some(picture)
}

/// `GET /images/{file}`
pub async fn gift_image(State(app): State<Arc<AppState>>, Path(file): Path<String>) -> Response {
    let Some(picture) = parse(&file) else {
        return not_found();
    };
    let (Picture::Tile(id) | Picture::Photo(id, _)) = picture;
    let Some(gift) = app.catalog.get(id).or_else(|| app.suggester.sources.remote_gift(id)) else {
        return not_found();
    };
    let size = match picture {
        Picture::Tile(_) => return tile(&gift, KEEP),
        Picture::Photo(_, size) => size,
    };
    let Some(url) = &gift.image else {
        return tile(&gift, KEEP_FALLBACK);
    };
    match app.photos.jpeg(url, size).await {
        Ok(jpeg) => (
            [
                (header::CONTENT_TYPE, "image/jpeg"),
                (header::CACHE_CONTROL, KEEP),
                (header::HeaderName::from_static("x-content-type-options"), "nosniff"),
            ],
            jpeg,
        )
            .into_response(),
        Err(_) => tile(&gift, KEEP_FALLBACK),
    }
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "no such image").into_response()
}

fn tile(gift: &CatalogGift, cache_control: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, cache_control),
            (header::HeaderName::from_static("x-content-type-options"), "nosniff"),
        ],
        svg_for(gift),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_a_plain_id_and_a_known_ending() {
        assert!(matches!(parse("hh-001.svg"), Some(Picture::Tile("hh-001"))));
        assert!(matches!(parse("hh-001.jpg"), Some(Picture::Photo("hh-001", Size::Small))));
        assert!(matches!(parse("hh-001@2x.jpg"), Some(Picture::Photo("hh-001", Size::Large))));
        for bad in
            ["../etc/passwd.jpg", "..%2F.jpg", "a/b.svg", ".jpg", "@2x.jpg", "hh-001.png", "hh-001", "hh 001.jpg", ""]
        {
            assert!(parse(bad).is_none(), "{bad}");
        }
        assert!(parse(&format!("{}.jpg", "a".repeat(65))).is_none());
    }
}
