//! A gift's page, `GET /gifts/{id}`: the canonical URL the product feed (`feed.rs`) gives each
//! product. It shows what a shopper who followed the feed needs to decide: the photo, the title,
//! the merchant, the description, the price and whether it is in stock (the catalog's units less
//! those in live orders, as checkout counts them), and how to buy it (ask GiftGenius in a chat;
//! agents buy it by its id through ACP). In the browser's language (English, Spanish,
//! Portuguese); no script, our own styles only, everything written by a merchant escaped.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use giftgenius_types::{Currency, Money};
use giftgenius_words::format::format_money;
use giftgenius_words::i18n::Lang;

use super::checkout_page::browser_locale;
use super::escape;
use crate::checkout::LOW_STOCK;
use crate::context::new_reference;
use crate::state::AppState;

/// The page's words, per language (kept here, not in the widget's catalogs: the widget's wasm
/// carries every string of those).
struct Words {
    by: &'static str,
    in_stock: &'static str,
    only_left: &'static str,
    sold_out: &'static str,
    how_to_buy: &'static str,
    missing: &'static str,
    failed: &'static str,
}

const EN: Words = Words {
    by: "Sold and shipped by",
    in_stock: "In stock",
    only_left: "Only {n} left",
    sold_out: "Sold out",
    how_to_buy: "To buy it, ask GiftGenius in your chat (for example \u{201c}buy {title}\u{201d}); agents buy it by its id, {id}.",
    missing: "There is no such gift.",
    failed: "Something went wrong on our side (reference {reference}).",
};

const ES: Words = Words {
    by: "Vendido y enviado por",
    in_stock: "En stock",
    only_left: "Solo quedan {n}",
    sold_out: "Agotado",
    how_to_buy: "Para comprarlo, pídeselo a GiftGenius en tu chat (por ejemplo \u{201c}compra {title}\u{201d}); los agentes lo compran por su id, {id}.",
    missing: "Este regalo no existe.",
    failed: "Algo salió mal de nuestro lado (referencia {reference}).",
};

const PT: Words = Words {
    by: "Vendido e enviado por",
    in_stock: "Em estoque",
    only_left: "Só restam {n}",
    sold_out: "Esgotado",
    how_to_buy: "Para comprá-lo, peça ao GiftGenius no seu chat (por exemplo \u{201c}comprar {title}\u{201d}); agentes o compram pelo id, {id}.",
    missing: "Este presente não existe.",
    failed: "Algo deu errado do nosso lado (referência {reference}).",
};

fn words(lang: Lang) -> &'static Words {
    match lang {
        Lang::Es => &ES,
        Lang::Pt => &PT,
        _ => &EN,
    }
}

/// `GET /gifts/{id}`
pub async fn gift_page(State(app): State<Arc<AppState>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let locale = browser_locale(&headers);
    let lang = Lang::from_locale(&locale);
    let w = words(lang);
    let Some(gift) = app.catalog.get(&id) else {
        return page(StatusCode::NOT_FOUND, lang, w.missing, &format!("<p>{}</p>", escape(w.missing)));
    };
    let sold = match app.checkout.store.units_sold(&gift.id).await {
        Ok(sold) => sold,
        Err(e) => {
            let reference = new_reference();
            tracing::error!(reference, error = %e, "gift page failed");
            let text = w.failed.replace("{reference}", &reference);
            return page(StatusCode::INTERNAL_SERVER_ERROR, lang, &text, &format!("<p>{}</p>", escape(&text)));
        }
    };
    let left = i64::from(gift.stock) - sold;
    let (stock_class, stock) = match left {
        ..=0 => ("sold-out", w.sold_out.to_string()),
        1..=LOW_STOCK => ("few", w.only_left.replace("{n}", &left.to_string())),
        _ => ("in-stock", w.in_stock.to_string()),
    };
    let photo = gift
        .photo_url(&app.public_url)
        .map(|url| format!("<img src=\"{}\" alt=\"\" width=\"320\" height=\"320\">", escape(&url)))
        .unwrap_or_default();
    let price = format_money(&Money::new(gift.price_cents, Currency::USD), &locale);
    let how = w.how_to_buy.replace("{title}", &gift.title).replace("{id}", &gift.id);
    let body = format!(
        "{photo}<h1>{title}</h1><p class=\"by\">{by} {merchant}</p><p class=\"price\" data-price>{price}</p>\
         <p class=\"{stock_class}\" data-stock=\"{stock_class}\">{stock}</p><p>{description}</p><p class=\"how\">{how}</p>",
        title = escape(&gift.title),
        by = escape(w.by),
        merchant = escape(&gift.merchant.name),
        price = escape(&price),
        stock = escape(&stock),
        description = escape(&gift.description),
        how = escape(&how),
    );
    page(StatusCode::OK, lang, &gift.title, &body)
}

/// The page around `body` (already escaped), with the headers every public page carries.
fn page(status: StatusCode, lang: Lang, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"{}\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <meta name=\"viewport\" content=\"width=device-width\"><style>{STYLE}</style></head><body>{body}</body></html>",
        lang.code(),
        escape(title),
    );
    let mut response = (status, html).into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::CONTENT_SECURITY_POLICY, "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"),
        (header::REFERRER_POLICY, "strict-origin-when-cross-origin"),
        // Stock changes with every order: a minute's cache at most.
        (header::CACHE_CONTROL, "public, max-age=60"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}\
    img{max-width:100%;height:auto;border-radius:8px}.price{font-size:1.4rem;font-weight:600}\
    .sold-out{color:#a40000}.few{color:#8a5a00}.how,.by{color:#555}";
