//! What an ACP checkout session is made of and how it is shown (docs/acp.md §4.2, §5, §6, §13).
//!
//! A session stores only what the platform asked for ([`SessionState`]); prices, stock,
//! fulfilment options, totals, messages and the status are computed from the catalog every
//! time the session is answered, so an answer always shows today's stock and today's rules.
//! Problems the buyer can fix are `messages[]` inside the session; problems no session can
//! carry (an unknown item, an unsupported currency) are [`AcpFailure`]s.

use giftgenius_types::acp::{
    ACP_API_VERSION, ACP_CARD_HANDLER, ACP_MAX_QUANTITY, AcpAddress, AcpAvailability, AcpBuyer, AcpCapabilities,
    AcpCheckoutSession, AcpCodedMessage, AcpContentType, AcpDiscountErrorCode, AcpDiscounts, AcpFulfillmentDetails,
    AcpFulfillmentOption, AcpFulfillmentType, AcpIntentTrace, AcpItem, AcpItemRef, AcpLineItem, AcpLink, AcpLinkType,
    AcpMessage, AcpMessageCode, AcpPaymentCapability, AcpPaymentHandler, AcpProtocol, AcpRejectedDiscount,
    AcpResolution, AcpSelectedFulfillmentOption, AcpSeller, AcpSessionStatus, AcpTotal, AcpTotalType, AcpWarningCode,
    GIFT_WRAP_ITEM,
};
use giftgenius_types::delivery::{Address, Recipient, check_gift_message};
use giftgenius_types::{Currency, FieldError, FieldRule, ShippingSpeed};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::AcpFailure;
use super::words::{Lang, Word, field_problem, session_lang, text, text_with};
use crate::checkout::{LOW_STOCK, shipping_cost, wrap_price};
use giftgenius_catalog::{CatalogGift, price_in};
use giftgenius_commerce::arrival;

/// The fulfilment options we offer, by id.
const OPTIONS: [(&str, ShippingSpeed, Word); 2] = [
    ("fo_standard", ShippingSpeed::Standard, Word::OptionStandard),
    ("fo_express", ShippingSpeed::Express, Word::OptionExpress),
];

/// What the platform asked for: the `state` column of `acp_checkout_sessions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    pub currency: Currency,
    /// As sent (one entry per unit); [`lines`] groups them.
    pub items: Vec<AcpItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fulfillment_details: Option<AcpFulfillmentDetails>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer: Option<AcpBuyer>,
    /// The option the platform chose, if any (else `fo_standard` once an address is valid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_option: Option<String>,
    /// Selections of kinds we do not offer, answered with a message until replaced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_fulfillment: Vec<OtherFulfillment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_notes: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// The language the session speaks (`en`, `es`, `pt`), chosen at create from `locale` or
    /// `Accept-Language` and kept (docs/acp.md §13.4). Absent in sessions stored before it:
    /// those speak their `locale`'s language, else English.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Codes of `discounts.codes`, then of the deprecated `coupons`, as sent: none is honoured,
    /// each is answered `discount_code_invalid`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discount_codes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coupon_codes: Vec<String>,
    /// Why the platform canceled (for the operator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_trace: Option<AcpIntentTrace>,
    /// The session as shown when its payment was last attempted: a completed session answers
    /// with it, so it shows the prices that were charged, whatever the catalog says later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_payment: Option<Box<AcpCheckoutSession>>,
}

impl SessionState {
    /// The language of the session's human text.
    pub fn lang(&self) -> Lang {
        match &self.language {
            Some(code) => Lang::from_locale(code),
            None => session_lang(self.locale.as_deref(), None),
        }
    }
}

/// Who sells: what every session shows of the merchant.
pub struct Merchant<'a> {
    /// `--acp-merchant-id`.
    pub id: &'a str,
    pub public_url: &'a str,
    pub tax_rates: &'a TaxRates,
}

/// Our one payment handler (docs/acp.md §4.2): a card, tokenized by delegated payment at our
/// sandbox provider, for `merchant_id`.
pub fn capabilities(merchant_id: &str) -> AcpCapabilities {
    let config = serde_json::json!({
        "merchant_id": merchant_id,
        "psp": "giftgenius_sandbox",
        "accepted_brands": ["visa", "mastercard", "amex"],
        "accepted_funding_types": ["credit", "debit", "prepaid"],
        "supports_3ds": false,
        "environment": "sandbox",
    });
    AcpCapabilities {
        payment: AcpPaymentCapability {
            handlers: vec![AcpPaymentHandler {
                id: ACP_CARD_HANDLER.into(),
                name: "dev.acp.tokenized.card".into(),
                display_name: "Card".into(),
                version: "2026-01-22".into(),
                spec: "https://acp.dev/handlers/tokenized.card".into(),
                requires_delegate_payment: true,
                requires_pci_compliance: false,
                psp: "giftgenius_sandbox".into(),
                config_schema: "https://acp.dev/schemas/handlers/tokenized.card/config.json".into(),
                instrument_schemas: vec!["https://acp.dev/schemas/handlers/tokenized.card/instrument.json".into()],
                config: match config {
                    Value::Object(map) => map,
                    _ => Map::new(),
                },
            }],
        },
    }
}

/// The shipping speed of one of our fulfilment option ids (`fo_standard`, `fo_express`).
pub fn speed_of(option_id: &str) -> Option<ShippingSpeed> {
    OPTIONS.iter().find(|(id, ..)| *id == option_id).map(|(_, speed, _)| *speed)
}

/// One line: a catalog id, how many units, and where it first appeared in `line_items`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub gift_id: String,
    pub quantity: u32,
    pub first_index: usize,
    /// The `unit_amount`s the platform believed in, if any.
    pub claimed_amounts: Vec<i64>,
}

impl Line {
    pub fn line_id(&self) -> String {
        line_id(&self.gift_id)
    }
}

fn line_id(gift_id: &str) -> String {
    format!("li_{gift_id}")
}

/// The gifts grouped into lines, in order of first appearance (gift wrap is no gift: see
/// [`wrap_asked`]).
pub fn lines(items: &[AcpItem]) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    for (index, item) in items.iter().enumerate().filter(|(_, item)| item.id != GIFT_WRAP_ITEM) {
        let line = match lines.iter_mut().position(|l| l.gift_id == item.id) {
            Some(at) => &mut lines[at],
            None => {
                lines.push(Line {
                    gift_id: item.id.clone(),
                    quantity: 0,
                    first_index: index,
                    claimed_amounts: Vec::new(),
                });
                let last = lines.len() - 1;
                &mut lines[last]
            }
        };
        line.quantity = line.quantity.saturating_add(1);
        line.claimed_amounts.extend(item.unit_amount);
    }
    lines
}

/// How many gifts the request asks to be wrapped ([`GIFT_WRAP_ITEM`] items), and where the first
/// such item is; `None`: no wrap.
pub fn wrap_asked(items: &[AcpItem]) -> Option<(u32, usize)> {
    let first = items.iter().position(|item| item.id == GIFT_WRAP_ITEM)?;
    let units = items.iter().filter(|item| item.id == GIFT_WRAP_ITEM).count();
    Some((u32::try_from(units).unwrap_or(u32::MAX), first))
}

/// The session currency named by a request (`usd`, lowercase ISO 4217), or 400 `invalid`.
pub fn currency(code: &str) -> Result<Currency, AcpFailure> {
    Currency::ALL.into_iter().find(|c| c.code().eq_ignore_ascii_case(code) && code == code.to_lowercase()).ok_or_else(
        || AcpFailure::field("invalid", "$.currency", "currency must be one of usd, eur, gbp, cad, aud, jpy"),
    )
}

/// 400 unless there is at least one gift and every id is in `known` (or asks for gift wrap).
pub fn check_items(items: &[AcpItem], known: impl Fn(&str) -> bool) -> Result<(), AcpFailure> {
    if items.is_empty() {
        return Err(AcpFailure::field("invalid", "$.line_items", "line_items needs at least one item"));
    }
    if items.iter().all(|item| item.id == GIFT_WRAP_ITEM) {
        return Err(AcpFailure::field("invalid", "$.line_items", "gift_wrap wraps a gift: add the gift's item too"));
    }
    match items.iter().position(|item| item.id != GIFT_WRAP_ITEM && !known(&item.id)) {
        Some(i) => Err(AcpFailure::field(
            "invalid",
            format!("$.line_items[{i}].id"),
            "There is no item with this id in our catalog.",
        )),
        None => Ok(()),
    }
}

/// The most codes a request may send, and the longest code: far more than any promotion needs,
/// and what we echo stays small.
const MAX_CODES: usize = 20;
const MAX_CODE_CHARS: usize = 64;

/// 400 unless `codes` (found at `path`, e.g. `$.discounts.codes`) are at most [`MAX_CODES`]
/// printable codes of 1 to [`MAX_CODE_CHARS`] characters; the codes, trimmed.
pub fn check_codes(codes: Vec<String>, path: &str) -> Result<Vec<String>, AcpFailure> {
    if codes.len() > MAX_CODES {
        return Err(AcpFailure::field("invalid", path, format!("At most {MAX_CODES} codes.")));
    }
    codes
        .into_iter()
        .enumerate()
        .map(|(i, code)| {
            let code = code.trim().to_string();
            let fine = (1..=MAX_CODE_CHARS).contains(&code.chars().count()) && !code.chars().any(char::is_control);
            match fine {
                true => Ok(code),
                false => Err(AcpFailure::field(
                    "invalid",
                    format!("{path}[{i}]"),
                    format!("A code has 1 to {MAX_CODE_CHARS} printable characters."),
                )),
            }
        })
        .collect()
}

/// A selection of a kind of fulfilment we do not offer (pickup, digital, local delivery): kept
/// with its place in the request, and answered with a message until another selection replaces
/// it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherFulfillment {
    pub at: usize,
    pub kind: AcpFulfillmentType,
}

/// What a selection asks: the shipping option applied to the session (we apply one option to
/// every line), and the selections of kinds we do not offer.
pub type Selection = (Option<String>, Vec<OtherFulfillment>);

/// 400 unless every shipping selection names an option we offer and lines of the session; a
/// selection of another kind is no error (the spec defines it): it is answered in the session's
/// messages ([`OtherFulfillment`]).
pub fn check_selection(selected: &[AcpSelectedFulfillmentOption], lines: &[Line]) -> Result<Selection, AcpFailure> {
    let mut chosen: Option<&str> = None;
    let mut others = Vec::new();
    for (i, option) in selected.iter().enumerate() {
        if option.kind != AcpFulfillmentType::Shipping {
            others.push(OtherFulfillment { at: i, kind: option.kind });
            continue;
        }
        if !OPTIONS.iter().any(|(id, ..)| *id == option.option_id) {
            return Err(AcpFailure::field(
                "invalid",
                format!("$.selected_fulfillment_options[{i}].option_id"),
                "option_id must be one of the session's fulfillment_options (fo_standard, fo_express)",
            ));
        }
        if chosen.is_some_and(|c| c != option.option_id) {
            return Err(AcpFailure::field(
                "invalid",
                format!("$.selected_fulfillment_options[{i}]"),
                "one fulfillment option applies to the whole session",
            ));
        }
        chosen = Some(&option.option_id);
        for (j, item_id) in option.item_ids.iter().enumerate() {
            if !lines.iter().any(|l| l.line_id() == *item_id || l.gift_id == *item_id) {
                return Err(AcpFailure::field(
                    "invalid",
                    format!("$.selected_fulfillment_options[{i}].item_ids[{j}]"),
                    "item_ids must name line items of this session",
                ));
            }
        }
    }
    Ok((chosen.map(str::to_string), others))
}

/// The stored facts a session is shown from.
pub struct Stored<'a> {
    pub id: &'a str,
    pub status: AcpSessionStatus,
    pub state: &'a SessionState,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub expires_at_ms: i64,
}

/// A catalog gift with the units still for sale.
pub struct Offer {
    pub gift: CatalogGift,
    pub available: i64,
}

/// Shows `stored` at `now_ms`: `offers[i]` is the catalog's offer for line `i` (None: gone
/// from the catalog since).
/// An option's `earliest_delivery_time` and `latest_delivery_time` (`arrival`); none, logged,
/// if the tables cannot say (they name only zones the bundled database knows).
fn delivery_times(
    merchant_id: &str,
    country: &str,
    speed: ShippingSpeed,
    now_ms: i64,
) -> (Option<String>, Option<String>) {
    let window = arrival::window(arrival::handling_of(merchant_id), arrival::transit_to(country), speed, now_ms)
        .and_then(|window| arrival::bounds(&window, country));
    match window {
        Ok((earliest, latest)) => (Some(earliest), Some(latest)),
        Err(e) => {
            tracing::error!(error = %e, "ACP delivery times not computed");
            (None, None)
        }
    }
}

pub fn show(stored: &Stored<'_>, offers: &[Option<Offer>], merchant: &Merchant<'_>, now_ms: i64) -> AcpCheckoutSession {
    let (tax_rates, public_url) = (merchant.tax_rates, merchant.public_url);
    let state = stored.state;
    let lang = state.lang();
    let currency = state.currency;
    let lines = lines(&state.items);
    let mut messages = Vec::new();
    let mut address_messages = Vec::new();
    let (fulfillment_details, address_ok) =
        check_address(state.fulfillment_details.as_ref(), lang, &mut address_messages);
    let tax_bps = fulfillment_details
        .as_ref()
        .and_then(|d| d.address.as_ref())
        .filter(|_| address_ok)
        .and_then(|a| tax_rates.0.get(&a.country))
        .copied();
    // `base` and its tax (when configured for the destination), as totals ending in `total`.
    let taxed = |first: Vec<AcpTotal>, base: i64| {
        let mut totals = first;
        let tax = tax_bps.map(|bps| tax_of(base, bps));
        if let Some(tax) = tax {
            totals.push(total(lang, AcpTotalType::Tax, tax));
        }
        totals.push(total(lang, AcpTotalType::Total, base.saturating_add(tax.unwrap_or(0))));
        totals
    };
    let mut line_items = Vec::new();
    let mut items_base: i64 = 0;
    for (i, (line, offer)) in lines.iter().zip(offers).enumerate() {
        let param = format!("$.line_items[{}]", line.first_index);
        let Some(Offer { gift, available }) = offer else {
            messages.push(error(AcpMessageCode::OutOfStock, Some(&param), text(lang, Word::NoLongerSold)));
            continue;
        };
        if i > 0 {
            messages.push(error(AcpMessageCode::Unsupported, Some(&param), text(lang, Word::OneGiftPerSession)));
        }
        let unit = price_in(gift.price_cents, currency).amount_minor;
        let base = unit.saturating_mul(i64::from(line.quantity));
        items_base = items_base.saturating_add(base);
        let availability = if *available < i64::from(line.quantity) {
            let left = (*available).max(0).to_string();
            let content = text_with(lang, Word::OnlyLeftOf, &[("available", &left), ("title", &gift.title)]);
            messages.push(error(AcpMessageCode::OutOfStock, Some(&param), &content));
            AcpAvailability::OutOfStock
        } else if *available <= LOW_STOCK {
            let content = text_with(lang, Word::OnlyLeft, &[("available", &available.to_string())]);
            messages.push(warning(AcpWarningCode::LowStock, Some(&param), &content));
            AcpAvailability::LowStock
        } else {
            AcpAvailability::InStock
        };
        if line.quantity > ACP_MAX_QUANTITY {
            let content = text_with(lang, Word::AtMostPerOrder, &[("max", &ACP_MAX_QUANTITY.to_string())]);
            messages.push(error(AcpMessageCode::QuantityExceeded, Some(&param), &content));
        }
        if line.claimed_amounts.iter().any(|&claimed| claimed != unit) {
            messages.push(warning(AcpWarningCode::PriceChange, Some(&param), text(lang, Word::PriceIsCurrent)));
        }
        line_items.push(AcpLineItem {
            id: line.line_id(),
            item: AcpItemRef { id: gift.id.to_string() },
            quantity: line.quantity,
            name: gift.title.to_string(),
            description: gift.description.to_string(),
            images: gift.photo_url(public_url).into_iter().collect(),
            unit_amount: unit,
            product_id: gift.id.to_string(),
            marketplace_seller_details: AcpSeller { name: gift.merchant.name.clone() },
            availability_status: availability,
            max_quantity_per_order: ACP_MAX_QUANTITY,
            parent_id: None,
            totals: taxed(
                vec![total(lang, AcpTotalType::ItemsBaseAmount, base), total(lang, AcpTotalType::Subtotal, base)],
                base,
            ),
        });
    }

    // Gift wrap: a child line of the session's gift (one gift per session), at its merchant's
    // price per gift, for at most as many gifts as the session buys.
    let mut wrap_total: Option<i64> = None;
    let gift_line = line_items.first().map(|l| (l.id.clone(), l.quantity));
    let wrapped_gift = offers.iter().flatten().next().map(|offer| &offer.gift);
    if let (Some((units, first)), Some((parent, gift_units)), Some(gift)) =
        (wrap_asked(&state.items), gift_line, wrapped_gift)
    {
        let param = format!("$.line_items[{first}]");
        let merchant = gift.merchant.name.as_str();
        match wrap_price(gift, currency) {
            None => {
                let content = text_with(lang, Word::WrapNotOffered, &[("merchant", merchant)]);
                messages.push(error(AcpMessageCode::Unsupported, Some(&param), &content));
            }
            Some(_) if units > gift_units => {
                let content = text_with(lang, Word::WrapMoreThanGifts, &[("quantity", &gift_units.to_string())]);
                messages.push(error(AcpMessageCode::Invalid, Some(&param), &content));
            }
            Some(price) => {
                let unit = price.amount_minor;
                let base = unit.saturating_mul(i64::from(units));
                wrap_total = Some(base);
                line_items.push(AcpLineItem {
                    id: line_id(GIFT_WRAP_ITEM),
                    item: AcpItemRef { id: GIFT_WRAP_ITEM.to_string() },
                    quantity: units,
                    name: text(lang, Word::GiftWrap).to_string(),
                    description: text_with(lang, Word::WrapDescription, &[("merchant", merchant)]),
                    images: Vec::new(),
                    unit_amount: unit,
                    product_id: GIFT_WRAP_ITEM.to_string(),
                    marketplace_seller_details: AcpSeller { name: merchant.to_string() },
                    availability_status: AcpAvailability::InStock,
                    max_quantity_per_order: gift_units,
                    parent_id: Some(parent),
                    totals: taxed(
                        vec![
                            total(lang, AcpTotalType::ItemsBaseAmount, base),
                            total(lang, AcpTotalType::Subtotal, base),
                        ],
                        base,
                    ),
                });
            }
        }
    }

    messages.extend(address_messages);
    if let Some(notes) = &state.order_notes {
        let mut problems = Vec::new();
        check_gift_message("order_notes", notes, &mut problems);
        for problem in problems {
            let content = field_problem(lang, "order_notes", &problem);
            messages.push(error(AcpMessageCode::Invalid, Some("$.order_notes"), &content));
        }
    }

    let discounts = discounts(state, lang, &mut messages);
    for other in &state.other_fulfillment {
        let param = format!("$.selected_fulfillment_options[{}].type", other.at);
        let content = text_with(lang, Word::OnlyShipping, &[("kind", other.kind.as_str())]);
        messages.push(error(AcpMessageCode::Unsupported, Some(&param), &content));
    }

    // Where it goes and who ships it, for each option's delivery window.
    let country = fulfillment_details.as_ref().and_then(|d| d.address.as_ref()).map(|a| a.country.clone());
    let merchant_id = offers.iter().flatten().next().map(|offer| offer.gift.merchant.id.clone());
    let fulfillment_options: Vec<AcpFulfillmentOption> = if address_ok {
        OPTIONS
            .iter()
            .map(|(id, speed, word)| {
                let cost = shipping_cost(*speed, currency).amount_minor;
                let (earliest, latest) = match (&merchant_id, &country) {
                    (Some(merchant), Some(country)) => delivery_times(merchant, country, *speed, now_ms),
                    _ => (None, None),
                };
                AcpFulfillmentOption {
                    kind: AcpFulfillmentType::Shipping,
                    id: id.to_string(),
                    title: text(lang, *word).to_string(),
                    description: None,
                    earliest_delivery_time: earliest,
                    latest_delivery_time: latest,
                    totals: taxed(vec![total(lang, AcpTotalType::Fulfillment, cost)], cost),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let selected = fulfillment_options
        .iter()
        .find(|o| state.selected_option.as_deref() == Some(o.id.as_str()))
        .or_else(|| fulfillment_options.first());

    let mut totals =
        vec![total(lang, AcpTotalType::ItemsBaseAmount, items_base), total(lang, AcpTotalType::Subtotal, items_base)];
    let mut taxable = items_base;
    if let Some(wrap) = wrap_total {
        totals.push(total(lang, AcpTotalType::GiftWrap, wrap));
        taxable = taxable.saturating_add(wrap);
    }
    if let Some(option) = selected {
        let cost = option.totals.first().map_or(0, |t| t.amount);
        totals.push(total(lang, AcpTotalType::Fulfillment, cost));
        taxable = taxable.saturating_add(cost);
    }
    let totals = taxed(totals, taxable);

    let status = match stored.status {
        AcpSessionStatus::Canceled => AcpSessionStatus::Canceled,
        _ if stored.status == AcpSessionStatus::Expired || now_ms >= stored.expires_at_ms => {
            messages.push(AcpMessage::Error(AcpCodedMessage {
                code: AcpMessageCode::Expired,
                content_type: AcpContentType::Plain,
                content: text(lang, Word::SessionExpired).into(),
                param: None,
                resolution: Some(AcpResolution::Recoverable),
            }));
            AcpSessionStatus::Expired
        }
        _ if selected.is_some() && !messages.iter().any(|m| matches!(m, AcpMessage::Error(_))) => {
            AcpSessionStatus::ReadyForPayment
        }
        _ => AcpSessionStatus::NotReadyForPayment,
    };

    let link = |kind, path: &str| AcpLink { kind, url: format!("{public_url}{path}") };
    AcpCheckoutSession {
        id: stored.id.to_string(),
        protocol: AcpProtocol { version: ACP_API_VERSION.to_string() },
        capabilities: capabilities(merchant.id),
        status,
        currency: currency.code().to_lowercase(),
        selected_fulfillment_options: selected
            .map(|option| AcpSelectedFulfillmentOption {
                kind: AcpFulfillmentType::Shipping,
                option_id: option.id.clone(),
                item_ids: line_items.iter().map(|l| l.id.clone()).collect(),
            })
            .into_iter()
            .collect(),
        line_items,
        fulfillment_details,
        fulfillment_options,
        totals,
        messages,
        links: vec![
            link(AcpLinkType::TermsOfUse, "/terms"),
            link(AcpLinkType::PrivacyPolicy, "/privacy"),
            link(AcpLinkType::Support, "/support"),
        ],
        buyer: state.buyer.clone(),
        locale: state.locale.clone(),
        created_at: giftgenius_commerce::clock::rfc3339(stored.created_at_ms),
        updated_at: giftgenius_commerce::clock::rfc3339(stored.updated_at_ms),
        expires_at: giftgenius_commerce::clock::rfc3339(stored.expires_at_ms),
        metadata: state.metadata.clone(),
        discounts,
        order: None,
    }
}

/// The session's `discounts` (absent when no code was sent), each code rejected with a
/// `discount_code_invalid` warning at its place in the request: we run no promotions, and a
/// code silently ignored would let the buyer believe it applied.
fn discounts(state: &SessionState, lang: Lang, messages: &mut Vec<AcpMessage>) -> Option<AcpDiscounts> {
    let sent = state.discount_codes.iter().enumerate().map(|(i, code)| (code, format!("$.discounts.codes[{i}]")));
    let sent: Vec<(&String, String)> =
        sent.chain(state.coupon_codes.iter().enumerate().map(|(i, code)| (code, format!("$.coupons[{i}]")))).collect();
    if sent.is_empty() {
        return None;
    }
    let mut rejected = Vec::new();
    for (code, param) in sent {
        let content = text_with(lang, Word::CodeInvalid, &[("code", code)]);
        messages.push(warning(AcpWarningCode::DiscountCodeInvalid, Some(&param), &content));
        rejected.push(AcpRejectedDiscount {
            code: code.clone(),
            reason: AcpDiscountErrorCode::DiscountCodeInvalid,
            message: content,
        });
    }
    let codes = state.discount_codes.iter().chain(&state.coupon_codes).cloned().collect();
    Some(AcpDiscounts { codes, rejected })
}

/// Checks the address with our per-country rules (one message per problem, `param` its
/// JSONPath); the details normalized as we keep them, and whether the address is valid.
fn check_address(
    details: Option<&AcpFulfillmentDetails>,
    lang: Lang,
    messages: &mut Vec<AcpMessage>,
) -> (Option<AcpFulfillmentDetails>, bool) {
    let Some(address) = details.and_then(|d| d.address.as_ref()) else {
        messages.push(AcpMessage::Error(AcpCodedMessage {
            code: AcpMessageCode::Missing,
            content_type: AcpContentType::Plain,
            content: text(lang, Word::AddressNeeded).into(),
            param: Some("$.fulfillment_details.address".into()),
            resolution: Some(AcpResolution::RequiresBuyerInput),
        }));
        return (details.cloned(), false);
    };
    let recipient = Recipient {
        name: address.name.clone(),
        address: Address {
            line1: address.line_one.clone(),
            line2: address.line_two.clone(),
            city: address.city.clone(),
            region: Some(address.state.clone()),
            postal_code: Some(address.postal_code.clone()),
            country: address.country.clone(),
        },
    };
    let mut problems = Vec::new();
    recipient.check("r", &mut problems);
    for problem in &problems {
        messages.push(address_message(problem, lang));
    }
    let normalized = recipient.normalized();
    let a = normalized.address;
    let address = AcpAddress {
        name: normalized.name,
        line_one: a.line1,
        line_two: a.line2,
        city: a.city,
        state: a.region.unwrap_or_default(),
        country: a.country,
        postal_code: a.postal_code.unwrap_or_default(),
        company: None,
    };
    let details = details.cloned().map(|d| AcpFulfillmentDetails { address: Some(address), ..d });
    (details, problems.is_empty())
}

/// A field error of [`Recipient::check`] (fields under `r.`) as an ACP message on the address.
fn address_message(problem: &FieldError, lang: Lang) -> AcpMessage {
    let field = match problem.field.trim_start_matches("r.").trim_start_matches("address.") {
        "line1" => "line_one",
        "line2" => "line_two",
        "region" => "state",
        other => other,
    };
    let missing = matches!(
        problem.rule,
        Some(FieldRule::Required | FieldRule::RegionRequired { .. } | FieldRule::PostalCodeRequired { .. })
    );
    AcpMessage::Error(AcpCodedMessage {
        code: if missing { AcpMessageCode::Missing } else { AcpMessageCode::Invalid },
        content_type: AcpContentType::Plain,
        content: field_problem(lang, field, problem),
        param: Some(format!("$.fulfillment_details.address.{field}")),
        resolution: Some(AcpResolution::RequiresBuyerInput),
    })
}

/// `--acp-tax-bps`: tax in basis points by destination country (ISO 3166-1 alpha-2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaxRates(std::collections::BTreeMap<String, u32>);

impl TaxRates {
    /// `US=725,DE=1900`: a country code and 0–10000 basis points per entry.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut rates = std::collections::BTreeMap::new();
        for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (country, bps) = entry.split_once('=').ok_or_else(|| format!("{entry:?} is not COUNTRY=BPS"))?;
            let country = country.trim().to_uppercase();
            if !giftgenius_types::delivery::is_country_code(&country) {
                return Err(format!("{country:?} is not an ISO 3166-1 alpha-2 country code"));
            }
            let bps: u32 =
                bps.trim().parse().ok().filter(|b| *b <= 10_000).ok_or_else(|| {
                    format!("the rate of {country} must be basis points from 0 to 10000 (7.25 % is 725)")
                })?;
            rates.insert(country, bps);
        }
        Ok(Self(rates))
    }
}

/// `amount × bps / 10000`, rounded half up (amounts are never negative).
fn tax_of(amount: i64, bps: u32) -> i64 {
    let tax = (i128::from(amount) * i128::from(bps) + 5_000) / 10_000;
    i64::try_from(tax).unwrap_or(i64::MAX)
}

/// A total of `kind` with its display text in `lang` (the order's totals use it too).
pub(crate) fn total(lang: Lang, kind: AcpTotalType, amount: i64) -> AcpTotal {
    let word = match kind {
        AcpTotalType::ItemsBaseAmount => Word::Items,
        AcpTotalType::Subtotal => Word::Subtotal,
        AcpTotalType::Fulfillment => Word::Shipping,
        AcpTotalType::Tax => Word::Tax,
        AcpTotalType::Total => Word::Total,
        AcpTotalType::AmountRefunded => Word::Refunded,
        AcpTotalType::GiftWrap => Word::GiftWrap,
    };
    AcpTotal { kind, display_text: text(lang, word).into(), amount }
}

fn error(code: AcpMessageCode, param: Option<&str>, content: &str) -> AcpMessage {
    AcpMessage::Error(AcpCodedMessage {
        code,
        content_type: AcpContentType::Plain,
        content: content.into(),
        param: param.map(str::to_string),
        resolution: Some(AcpResolution::RequiresBuyerInput),
    })
}

fn warning(code: AcpWarningCode, param: Option<&str>, content: &str) -> AcpMessage {
    AcpMessage::Warning(AcpCodedMessage {
        code,
        content_type: AcpContentType::Plain,
        content: content.into(),
        param: param.map(str::to_string),
        resolution: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str) -> AcpItem {
        AcpItem { id: id.into(), name: None, unit_amount: None }
    }

    #[test]
    fn repeated_ids_are_one_line() {
        let grouped = lines(&[item("a"), item("b"), item("a")]);
        assert_eq!(grouped.len(), 2);
        assert_eq!((grouped[0].gift_id.as_str(), grouped[0].quantity, grouped[0].first_index), ("a", 2, 0));
        assert_eq!((grouped[1].gift_id.as_str(), grouped[1].quantity, grouped[1].first_index), ("b", 1, 1));
    }

    #[test]
    fn tax_rates_parse_and_round_half_up() {
        let rates = TaxRates::parse("us=725, DE=1900").unwrap();
        assert_eq!(rates.0.get("US"), Some(&725));
        assert_eq!(rates.0.get("DE"), Some(&1900));
        assert_eq!(TaxRates::parse(""), Ok(TaxRates::default()));
        assert!(TaxRates::parse("US").is_err());
        assert!(TaxRates::parse("USA=1").is_err());
        assert!(TaxRates::parse("US=10001").is_err());
        assert!(TaxRates::parse("US=-1").is_err());
        assert_eq!(tax_of(6800, 725), 493);
        assert_eq!(tax_of(1, 5000), 1, "half a minor unit rounds up");
        assert_eq!(tax_of(1, 4999), 0);
    }

    #[test]
    fn currencies_are_lowercase_codes() {
        assert_eq!(currency("usd"), Ok(Currency::USD));
        assert!(currency("USD").is_err());
        assert!(currency("chf").is_err());
    }
}
