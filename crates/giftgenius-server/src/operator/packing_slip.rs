//! The packing slip the merchant puts in the parcel: `GET /operator/orders/{id}/packing-slip`
//! (the operator's token, as every operator route), a printable HTML page.
//!
//! It says who the parcel is for and where it goes, what is in it, whether to gift-wrap each
//! gift, and the gift message. The recipient reads it, so a **gift receipt** leaves every price
//! out (the total paid, the wrap's cost); without one it shows what was paid, as an invoice in
//! the box does. It is in English: it is printed by the merchant's staff, before anyone knows
//! who opens the parcel. An order whose delivery details were erased (delete_my_data) or that
//! was never paid has no slip: 409, with what happened.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use giftgenius_commerce::clock::rfc3339;
use giftgenius_commerce::order::Order;
use giftgenius_types::Money;
use serde_json::json;

use super::service::{Operator, OperatorError};
use crate::checkout::delivery_of;
use crate::html::escape;

/// Why an order has no packing slip (yet, or any more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoSlip {
    /// Not paid (pending, declined) or cancelled: nothing is packed.
    NotToShip,
    /// Its delivery details were erased at the buyer's request.
    Erased,
}

impl Operator {
    /// The packing slip of order `order_id`, as HTML.
    pub async fn packing_slip(&self, order_id: &str) -> Result<Result<String, NoSlip>, OperatorError> {
        let facts = self.facts(order_id).await?;
        Ok(slip(&facts.order))
    }
}

/// The slip's page for `order`, or why it has none.
pub fn slip(order: &Order) -> Result<String, NoSlip> {
    if !order.status.is_paid() {
        return Err(NoSlip::NotToShip);
    }
    let delivery = delivery_of(order.delivery.as_deref()).ok().flatten().ok_or(NoSlip::Erased)?;
    let recipient = &delivery.recipient;
    let address = &recipient.address;
    let lines: Vec<&str> = [
        Some(recipient.name.as_str()),
        Some(address.line1.as_str()),
        address.line2.as_deref(),
        Some(address.city.as_str()),
        address.region.as_deref(),
        address.postal_code.as_deref(),
        Some(address.country.as_str()),
    ]
    .into_iter()
    .flatten()
    .collect();
    let ship_to = lines.iter().map(|l| escape(l)).collect::<Vec<_>>().join("<br>");
    let lines = order.lines();
    let units: i64 = lines.iter().map(|line| line.quantity).sum();
    let wrap = if order.gift_wrap_minor.is_some() {
        format!("<p class=\"wrap\"><strong>Gift-wrap each of the {units} gifts.</strong></p>")
    } else {
        String::new()
    };
    let rows: String = lines
        .iter()
        .map(|line| {
            format!(
                "<tr><td>{} <small>({})</small></td><td>{}</td></tr>",
                escape(&line.gift_title),
                escape(&line.gift_id),
                line.quantity
            )
        })
        .collect();
    // A basket may hold several merchants' gifts: each named once, first seen first.
    let mut merchants: Vec<&str> = Vec::new();
    for line in &lines {
        if !merchants.contains(&line.merchant.as_str()) {
            merchants.push(&line.merchant);
        }
    }
    let message = match &delivery.gift_message {
        Some(text) => format!(
            "<h2>Gift message</h2><blockquote class=\"message\">{}</blockquote>",
            escape(text).replace('\n', "<br>")
        ),
        None => String::new(),
    };
    let prices = if order.gift_receipt != 0 {
        "<p class=\"receipt\">Gift receipt: prices left out.</p>".to_string()
    } else {
        let currency = order.currency.into();
        let wrap = order
            .gift_wrap_minor
            .map(|minor| format!("<dt>Gift wrap</dt><dd>{}</dd>", escape(&Money::new(minor, currency).display())))
            .unwrap_or_default();
        format!("<dl class=\"prices\">{wrap}<dt>Total paid</dt><dd>{}</dd></dl>", escape(&order.total().display()))
    };
    Ok(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Packing slip {id}</title>\
         <meta name=\"robots\" content=\"noindex\"><style>{STYLE}</style></head><body>\
         <h1>Packing slip</h1><p>Order <code>{id}</code>, placed {placed}, from {merchant}.</p>\
         <h2>Ship to</h2><address>{ship_to}</address>\
         <h2>In this parcel</h2><table><thead><tr><th>Gift</th><th>Quantity</th></tr></thead>\
         <tbody>{rows}</tbody></table>\
         {wrap}{message}{prices}</body></html>",
        id = escape(&order.id),
        placed = escape(rfc3339(order.created_at_ms).get(..10).unwrap_or_default()),
        merchant = escape(&merchants.join(", ")),
    ))
}

/// Plain print styles; the page has no script and loads nothing.
const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;max-width:40em;margin:2em auto}\
    table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #999;padding:.3em;text-align:left}\
    blockquote{border:1px solid #999;padding:1em;white-space:normal}dt{font-weight:600}";

/// The HTTP answer: the page (not cached, not indexed; no script may run on it), or 409 with why.
pub fn answer(result: Result<Result<String, NoSlip>, OperatorError>) -> Response {
    match result {
        Ok(Ok(page)) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
                (header::CONTENT_SECURITY_POLICY, "default-src 'none'; style-src 'unsafe-inline'"),
            ],
            page,
        )
            .into_response(),
        Ok(Err(why)) => {
            let (code, message) = match why {
                NoSlip::NotToShip => ("not_to_ship", "the order is not paid, or was cancelled: nothing to pack"),
                NoSlip::Erased => {
                    ("delivery_details_erased", "the order's delivery details were erased at the buyer's request")
                }
            };
            (
                StatusCode::CONFLICT,
                [(header::CACHE_CONTROL, "no-store")],
                axum::Json(json!({"error": {"code": code, "message": message}})),
            )
                .into_response()
        }
        Err(e) => super::routes::answer(Err(e)),
    }
}

#[cfg(test)]
mod tests {
    use giftgenius_commerce::store::{CurrencyColumn, Lines, OrderLineRow, OrderStatusColumn};
    use giftgenius_types::delivery::{Address, DeliveryDetails, Recipient};

    use super::*;

    fn paid(gift_receipt: bool, wrap: Option<i64>) -> Order {
        let delivery = DeliveryDetails {
            recipient: Recipient {
                name: "Ana <Silva>".into(),
                address: Address {
                    line1: "Rua Augusta 1".into(),
                    line2: None,
                    city: "Lisboa".into(),
                    region: None,
                    postal_code: Some("1100-048".into()),
                    country: "PT".into(),
                },
            },
            gift_message: Some("Feliz aniversário!\nCom amor".into()),
            save_address: false,
            from_saved_address: false,
        };
        Order {
            id: "ord_1".into(),
            subject: "local".into(),
            draft_id: "drf_1".into(),
            gift_id: "hh-010".into(),
            gift_title: "Tea set".into(),
            merchant: "Hearth & Home".into(),
            quantity: 2,
            currency: CurrencyColumn::Eur,
            total_minor: 8400,
            status: OrderStatusColumn::Paid,
            charge_id: Some("ch_1".into()),
            created_at_ms: 1_797_000_000_000,
            delivery: Some(serde_json::to_string(&delivery).unwrap()),
            destination_city: Some("Lisboa".into()),
            destination_country: Some("PT".into()),
            cancelled_at_ms: None,
            anonymized_at_ms: None,
            payment_ref: None,
            authentication_until_ms: None,
            gift_wrap_minor: wrap,
            gift_receipt: i64::from(gift_receipt),
            arrives_earliest: None,
            arrives_latest: None,
            stored_lines: Lines::default(),
            fulfilment: Default::default(),
        }
    }

    #[test]
    fn a_baskets_slip_lists_every_line_and_wraps_every_unit() {
        let line = |gift_id: &str, title: &str, merchant: &str, quantity: i64| OrderLineRow {
            gift_id: gift_id.into(),
            gift_title: title.into(),
            merchant: merchant.into(),
            quantity,
            subtotal_minor: Some(1000),
            gift_wrap_minor: Some(599),
        };
        let basket = Order {
            stored_lines: Lines(vec![
                line("hh-010", "Tea set", "Hearth & Home", 2),
                line("pp-001", "Notebook <A5>", "Page & Pixel", 1),
                line("hh-011", "Tea cups", "Hearth & Home", 3),
            ]),
            ..paid(true, Some(1198))
        };
        let page = slip(&basket).unwrap();
        assert!(page.contains("<tr><td>Tea set <small>(hh-010)</small></td><td>2</td></tr>"), "{page}");
        assert!(page.contains("<tr><td>Notebook &lt;A5&gt; <small>(pp-001)</small></td><td>1</td></tr>"), "{page}");
        assert!(page.contains("<tr><td>Tea cups <small>(hh-011)</small></td><td>3</td></tr>"), "{page}");
        assert!(page.contains("from Hearth &amp; Home, Page &amp; Pixel."), "{page}");
        assert!(page.contains("Gift-wrap each of the 6 gifts."), "{page}");
    }

    #[test]
    fn a_gift_receipt_leaves_every_price_out() {
        let page = slip(&paid(true, Some(1198))).unwrap();
        assert!(page.contains("Gift receipt: prices left out."), "{page}");
        assert!(!page.contains("€") && !page.contains("84") && !page.contains("11.98"), "{page}");
        assert!(page.contains("Gift-wrap each of the 2 gifts."));
    }

    #[test]
    fn without_one_the_slip_shows_what_was_paid() {
        let page = slip(&paid(false, Some(1198))).unwrap();
        assert!(page.contains("<dt>Total paid</dt><dd>€84.00</dd>"), "{page}");
        assert!(page.contains("<dt>Gift wrap</dt><dd>€11.98</dd>"), "{page}");
        let plain = slip(&paid(false, None)).unwrap();
        assert!(!plain.contains("Gift wrap") && !plain.contains("Gift-wrap"), "{plain}");
    }

    #[test]
    fn what_people_wrote_is_escaped_and_the_message_keeps_its_lines() {
        let page = slip(&paid(false, None)).unwrap();
        assert!(page.contains("Ana &lt;Silva&gt;<br>Rua Augusta 1<br>Lisboa<br>1100-048<br>PT"), "{page}");
        assert!(page.contains("Feliz aniversário!<br>Com amor"), "{page}");
    }

    #[test]
    fn unpaid_cancelled_and_erased_orders_have_no_slip() {
        let pending = Order { status: OrderStatusColumn::PendingPayment, ..paid(false, None) };
        let cancelled = Order { status: OrderStatusColumn::Cancelled, ..paid(false, None) };
        let erased = Order { delivery: None, ..paid(false, None) };
        assert_eq!(slip(&pending), Err(NoSlip::NotToShip));
        assert_eq!(slip(&cancelled), Err(NoSlip::NotToShip));
        assert_eq!(slip(&erased), Err(NoSlip::Erased));
    }
}
