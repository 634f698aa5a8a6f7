//! Hand-written readers of the contract's JSON, for the widget's wasm.
//!
//! The server writes and reads the contract with serde's derives (and its schemas come from
//! schemars). The widget only reads the results, from a `serde_json::Value` its bridge has
//! already walked out of the host's JS values; serde's derived `Deserialize` for that took most
//! of the contract's 87 KB of wasm (visitors, field enums, error messages per type), while these
//! readers are a few lines per type and say no with `None` instead of a formatted error.
//!
//! They read exactly the contract's wire forms, as serde reads them: `deny_unknown_fields`
//! (an unknown key refuses the value), `Option` fields absent or `null`, `#[serde(default)]`
//! fields absent, unit enums by their (renamed) names, [`Why`] tagged by `kind`, integers in
//! their type's range, and the [`Envelope`]'s mixed shapes refused. The test
//! `tests/read_matches_serde.rs` proves it: generated contract values and mutations of them
//! read the same here as through serde. Two forms serde also accepts and no server writes are
//! refused here on purpose (a struct as an array of its fields, a unit variant as
//! `{"name": null}`); that test pins them too.

use serde_json::{Map, Value};

use crate::delivery::{Address, DeliveryDetails, Destination, Recipient};
use crate::envelope::{Envelope, FailedSource, Notice, NoticeCode, Partial, Suggestion, ToolName};
use crate::error::{ErrorCategory, ErrorCode, ToolError};
use crate::gifts::{
    GiftCard, MatchVia, Merchant, Occasion, Reason, RelationshipType, SuggestGiftsData, SuggestGiftsQuery, Why,
};
use crate::money::{Currency, Money};
use crate::orders::{
    Adjustment, CheckoutData, CheckoutSession, DeleteMyDataData, DeliveryOption, DeliveryWindow, DraftLine,
    Fulfillment, ListOrdersData, Order, OrderData, OrderDraft, OrderLine, OrderStatus, OrderStep, PrepareOrderData,
    Refund, RefundStatus, ShippingSpeed,
};
use crate::{CONTRACT_VERSION, FieldError, FieldRule};

/// A contract value read from its JSON; `None` when the JSON is not one.
pub trait ReadJson: Sized {
    fn read_json(value: &Value) -> Option<Self>;
}

/// An object's fields, read one by one; [`Fields::done`] refuses keys no reader asked for
/// (serde's `deny_unknown_fields`). Keys are unique in a `Map`, so counting the ones read is enough.
pub struct Fields<'a> {
    map: &'a Map<String, Value>,
    read: usize,
}

impl<'a> Fields<'a> {
    fn get(&mut self, key: &str) -> Option<&'a Value> {
        let value = self.map.get(key);
        self.read += usize::from(value.is_some());
        value
    }

    /// A field serde requires.
    fn req<T: ReadJson>(&mut self, key: &str) -> Option<T> {
        T::read_json(self.get(key)?)
    }

    /// A field that may be absent: `#[serde(default)]`, or an `Option` (absent or `null` is `None`).
    fn or_default<T: ReadJson + Default>(&mut self, key: &str) -> Option<T> {
        match self.get(key) {
            None => Some(T::default()),
            Some(value) => T::read_json(value),
        }
    }

    fn done<T>(self, value: T) -> Option<T> {
        (self.read == self.map.len()).then_some(value)
    }
}

/// A struct: read from an object's fields (in place, so an envelope's data needs no copy).
pub trait ReadFields: Sized {
    fn read_fields(f: &mut Fields<'_>) -> Option<Self>;
}

fn read_object<T: ReadFields>(value: &Value, already_read: usize) -> Option<T> {
    let mut fields = Fields { map: value.as_object()?, read: already_read };
    let read = T::read_fields(&mut fields)?;
    fields.done(read)
}

impl ReadJson for String {
    fn read_json(value: &Value) -> Option<Self> {
        value.as_str().map(str::to_string)
    }
}

impl ReadJson for bool {
    fn read_json(value: &Value) -> Option<Self> {
        value.as_bool()
    }
}

impl ReadJson for u8 {
    fn read_json(value: &Value) -> Option<Self> {
        u8::try_from(value.as_u64()?).ok()
    }
}

impl ReadJson for u32 {
    fn read_json(value: &Value) -> Option<Self> {
        u32::try_from(value.as_u64()?).ok()
    }
}

impl ReadJson for u64 {
    fn read_json(value: &Value) -> Option<Self> {
        value.as_u64()
    }
}

impl ReadJson for i64 {
    fn read_json(value: &Value) -> Option<Self> {
        value.as_i64()
    }
}

impl ReadJson for Value {
    fn read_json(value: &Value) -> Option<Self> {
        Some(value.clone())
    }
}

impl ReadJson for Map<String, Value> {
    fn read_json(value: &Value) -> Option<Self> {
        value.as_object().cloned()
    }
}

impl<T: ReadJson> ReadJson for Option<T> {
    fn read_json(value: &Value) -> Option<Self> {
        match value {
            Value::Null => Some(None),
            value => T::read_json(value).map(Some),
        }
    }
}

impl<T: ReadJson> ReadJson for Vec<T> {
    fn read_json(value: &Value) -> Option<Self> {
        // A plain loop: `collect::<Option<Vec<_>>>()` costs an iterator adapter per element type.
        let items = value.as_array()?;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            out.push(T::read_json(item)?);
        }
        Some(out)
    }
}

/// Unit enums whose names the type already spells (`as_str`, `code`) for every variant in `ALL`.
macro_rules! named_enums {
    ($($ty:ty => $name:ident),* $(,)?) => {$(
        impl ReadJson for $ty {
            fn read_json(value: &Value) -> Option<Self> {
                let name = value.as_str()?;
                <$ty>::ALL.iter().copied().find(|v| v.$name() == name)
            }
        }
    )*};
}

named_enums! {
    ToolName => as_str,
    ErrorCode => as_str,
    Currency => code,
    RelationshipType => as_str,
    Occasion => as_str,
}

/// Unit enums with their serde names listed here.
macro_rules! listed_enums {
    ($($ty:ident { $($name:literal => $variant:ident),* $(,)? })*) => {$(
        impl ReadJson for $ty {
            fn read_json(value: &Value) -> Option<Self> {
                match value.as_str()? {
                    $($name => Some($ty::$variant),)*
                    _ => None,
                }
            }
        }
    )*};
}

listed_enums! {
    ErrorCategory {
        "transient" => Transient, "validation" => Validation, "business" => Business,
        "permission" => Permission, "other" => Other,
    }
    NoticeCode { "NO_MATCHES" => NoMatches, "FEW_MATCHES" => FewMatches }
    MatchVia { "tag" => Tag, "title" => Title, "description" => Description }
    ShippingSpeed { "standard" => Standard, "express" => Express }
    OrderStatus {
        "pending_payment" => PendingPayment, "awaiting_authentication" => AwaitingAuthentication,
        "paid" => Paid, "processing" => Processing, "shipped" => Shipped,
        "completed" => Completed, "payment_declined" => PaymentDeclined, "cancelled" => Cancelled,
    }
    RefundStatus { "pending" => Pending, "succeeded" => Succeeded }
}

/// Structs (all `deny_unknown_fields`): `req` for a required field, `or_default` for an
/// `Option` or `#[serde(default)]` one.
macro_rules! structs {
    ($($ty:ident { $($field:ident: $how:ident),* $(,)? })*) => {$(
        impl ReadFields for $ty {
            fn read_fields(f: &mut Fields<'_>) -> Option<Self> {
                Some($ty { $($field: f.$how(stringify!($field))?,)* })
            }
        }

        impl ReadJson for $ty {
            fn read_json(value: &Value) -> Option<Self> {
                read_object(value, 0)
            }
        }
    )*};
}

structs! {
    Money { amount_minor: req, currency: req }
    FieldError { field: req, message: req, rule: or_default }
    ToolError {
        code: req, category: req, message: req, retryable: req, field_errors: or_default,
        attempted: or_default, partial_results: or_default, retry_after_ms: or_default, reference: req,
    }
    Suggestion { message: req, set_arguments: req, matches: req }
    Notice { code: req, message: req, suggestions: or_default }
    FailedSource { source: req, code: req, message: req }
    Partial { message: req, failed_sources: req }
    SuggestGiftsQuery {
        relationship_type: req, age: or_default, interests: or_default, budget_min: or_default,
        budget_max: or_default, occasion: or_default, currency: req, limit: req,
    }
    Merchant { id: req, name: req }
    GiftCard {
        id: req, title: req, description: req, price: req, merchant: req, tags: req, reasons: req,
        in_stock: req, image_url: req,
    }
    Reason { text: req, why: req }
    SuggestGiftsData { query: req, gifts: req }
    Destination { city: req, country: req }
    Address { line1: req, line2: or_default, city: req, region: or_default, postal_code: or_default, country: req }
    Recipient { name: req, address: req }
    DeliveryDetails { recipient: req, gift_message: or_default, save_address: or_default, from_saved_address: or_default }
    OrderDraft {
        id: req, gift: req, quantity: req, lines: req, shipping: req, subtotal: req, shipping_cost: req, total: req,
        expires_at: req, destination: or_default, has_gift_message: or_default, needed_by: or_default,
        delivery_options: or_default, gift_wrap_price: or_default, gift_wrap_cost: or_default,
        gift_receipt: or_default,
    }
    DraftLine { gift: req, quantity: req, subtotal: req, gift_wrap_cost: or_default }
    OrderLine { gift_id: req, gift_title: req, merchant: req, quantity: req, subtotal: or_default }
    DeliveryOption { shipping: req, cost: req, earliest: req, latest: req, in_time: or_default }
    PrepareOrderData { draft: req }
    Refund { id: req, amount: req, status: req, created_at: req }
    Order {
        id: req, draft_id: req, gift_id: req, gift_title: req, merchant: req, quantity: req, lines: req, total: req,
        status: req, created_at: req, destination: or_default, cancellable_until: or_default, refund: or_default,
        fulfillment: or_default, timeline: or_default, adjustments: or_default, amount_refunded: or_default,
        gift_wrap_cost: or_default, gift_receipt: or_default, arrives: or_default,
    }
    DeliveryWindow { earliest: req, latest: req }
    Fulfillment { carrier: req, tracking_number: req, tracking_url: req }
    OrderStep { status: req, at: req }
    Adjustment { id: req, amount: req, reason: req, status: req, created_at: req }
    OrderData { order: req }
    ListOrdersData { orders: req, next_cursor: or_default }
    DeleteMyDataData {
        saved_addresses_deleted: req, drafts_deleted: req, idempotency_keys_deleted: req,
        checkout_sessions_deleted: req, orders_anonymized: req, financial_records_kept: req,
        financial_records_retention_days: req,
    }
    CheckoutSession { id: req, gift_id: req, amount: req, checkout_url: req, expires_at: req }
    CheckoutData { checkout: req }
}

/// `Why` is tagged by `kind` (serde's `tag = "kind"`), its variants' fields beside it.
impl ReadJson for Why {
    fn read_json(value: &Value) -> Option<Self> {
        let map = value.as_object()?;
        let mut f = Fields { map, read: 1 };
        let why = match map.get("kind")?.as_str()? {
            "interest" => Why::Interest { interest: f.req("interest")?, via: f.req("via")?, term: f.req("term")? },
            "nearest" => Why::Nearest { interest: f.req("interest")?, via: f.req("via")?, term: f.req("term")? },
            "budget" => Why::Budget { price: f.req("price")?, budget_max: f.req("budget_max")?, left: f.req("left")? },
            "age" => Why::Age { age_min: f.req("age_min")?, age_max: f.req("age_max")? },
            "relationship" => Why::Relationship { relationship: f.req("relationship")? },
            "occasion" => Why::Occasion { occasion: f.req("occasion")? },
            "popular" => Why::Popular { tag: f.req("tag")? },
            "only_tag" => Why::OnlyTag { tag: f.req("tag")? },
            "price" => Why::Price { price: f.req("price")? },
            _ => return None,
        };
        f.done(why)
    }
}

/// `FieldRule` is tagged by `code` and, unlike `Why`, takes unknown keys (serde ignores them:
/// it has no `deny_unknown_fields`), so a newer server's extra parts never hide the sentence.
impl ReadJson for FieldRule {
    fn read_json(value: &Value) -> Option<Self> {
        let map = value.as_object()?;
        let mut f = Fields { map, read: 1 };
        Some(match map.get("code")?.as_str()? {
            "required" => FieldRule::Required,
            "too_long" => FieldRule::TooLong { max: f.req("max")? },
            "one_line" => FieldRule::OneLine,
            "country_code" => FieldRule::CountryCode,
            "region_required" => FieldRule::RegionRequired { country: f.req("country")?, example: f.req("example")? },
            "region_unknown" => FieldRule::RegionUnknown { country: f.req("country")?, example: f.req("example")? },
            "postal_code_required" => FieldRule::PostalCodeRequired { country: f.req("country")? },
            "postal_code_shape" => {
                FieldRule::PostalCodeShape { country: f.req("country")?, example: f.req("example")? }
            }
            "postal_code_chars" => FieldRule::PostalCodeChars,
            "too_many_lines" => FieldRule::TooManyLines { max: f.req("max")? },
            "plain_text" => FieldRule::PlainText,
            "recipient_missing" => FieldRule::RecipientMissing,
            _ => return None,
        })
    }
}

/// The envelope's own keys; an `ok` result's data is every other key.
const ENVELOPE_KEYS: [&str; 5] = ["v", "ok", "tool", "notice", "partial"];

/// What `Envelope`'s hand-written `Deserialize` accepts: this contract version, a boolean `ok`,
/// a known `tool`; `ok: true` with the data's fields and no `error`, `ok: false` with an
/// `error` and nothing else.
impl<T: ReadFields> ReadJson for Envelope<T> {
    fn read_json(value: &Value) -> Option<Self> {
        let map = value.as_object()?;
        if map.get("v")?.as_u64()? != u64::from(CONTRACT_VERSION) {
            return None;
        }
        let ok = map.get("ok")?.as_bool()?;
        let tool = ToolName::read_json(map.get("tool")?)?;
        if !ok {
            let error = map.get("error")?;
            let error = ToolError::read_json(error).filter(|_| map.len() == 4)?;
            return Some(Envelope::Err { tool, error });
        }
        if map.contains_key("error") {
            return None;
        }
        let notice: Option<Notice> = optional(map, "notice")?;
        let partial: Option<Partial> = optional(map, "partial")?;
        let own = ENVELOPE_KEYS.iter().filter(|k| map.contains_key(**k)).count();
        let data = read_object(value, own)?;
        Some(Envelope::Ok { tool, data, notice, partial })
    }
}

/// An envelope's `notice` or `partial`: absent or `null` is `None`.
fn optional<T: ReadJson>(map: &Map<String, Value>, key: &str) -> Option<Option<T>> {
    map.get(key).map_or(Some(None), ReadJson::read_json)
}
