//! Hand-written JSON for the few contract values the widget sends or keeps: the recipient of a
//! `prepare_order` call and an order patched into a kept `list_orders` result.
//!
//! The server serializes with serde's derives; in the widget's wasm those (with serde_json's
//! value serializer behind them) weighed more than these lines. `tests/contract/read.rs`
//! checks that each writes exactly what serde writes.

use serde_json::{Map, Value};

use crate::delivery::{Address, Destination, Recipient};
use crate::money::{Currency, Money};
use crate::orders::{Adjustment, DeliveryWindow, Fulfillment, Order, OrderLine, OrderStep, Refund, ShippingSpeed};

/// A contract value as serde writes it.
pub trait WriteJson {
    fn write_json(&self) -> Value;
}

/// An object's fields; `None` ones left out (serde's `skip_serializing_if = "Option::is_none"`).
/// One insert at a time: collecting into the map would bring a sort routine (12 KB of wasm).
fn object(fields: &mut [(&str, Option<Value>)]) -> Value {
    let mut map = Map::new();
    for (key, value) in fields {
        if let Some(value) = value.take() {
            map.insert((*key).to_string(), value);
        }
    }
    Value::Object(map)
}

fn text(s: &str) -> Option<Value> {
    Some(Value::String(s.to_string()))
}

fn optional_text(s: &Option<String>) -> Option<Value> {
    s.as_deref().and_then(text)
}

/// A list left out when empty (serde's `skip_serializing_if = "Vec::is_empty"`).
fn list<T: WriteJson>(items: &[T]) -> Option<Value> {
    (!items.is_empty()).then(|| Value::Array(items.iter().map(WriteJson::write_json).collect()))
}

impl WriteJson for Currency {
    fn write_json(&self) -> Value {
        Value::String(self.code().to_string())
    }
}

impl WriteJson for ShippingSpeed {
    fn write_json(&self) -> Value {
        Value::String(self.as_str().to_string())
    }
}

impl WriteJson for Money {
    fn write_json(&self) -> Value {
        object(&mut [("amount_minor", Some(self.amount_minor.into())), ("currency", Some(self.currency.write_json()))])
    }
}

impl WriteJson for Address {
    fn write_json(&self) -> Value {
        object(&mut [
            ("line1", text(&self.line1)),
            ("line2", optional_text(&self.line2)),
            ("city", text(&self.city)),
            ("region", optional_text(&self.region)),
            ("postal_code", optional_text(&self.postal_code)),
            ("country", text(&self.country)),
        ])
    }
}

impl WriteJson for Recipient {
    fn write_json(&self) -> Value {
        object(&mut [("name", text(&self.name)), ("address", Some(self.address.write_json()))])
    }
}

impl WriteJson for Destination {
    fn write_json(&self) -> Value {
        object(&mut [("city", text(&self.city)), ("country", text(&self.country))])
    }
}

impl WriteJson for Refund {
    fn write_json(&self) -> Value {
        object(&mut [
            ("id", text(&self.id)),
            ("amount", Some(self.amount.write_json())),
            ("status", text(self.status.as_str())),
            ("created_at", text(&self.created_at)),
        ])
    }
}

impl WriteJson for Order {
    fn write_json(&self) -> Value {
        object(&mut [
            ("id", text(&self.id)),
            ("draft_id", text(&self.draft_id)),
            ("gift_id", text(&self.gift_id)),
            ("gift_title", text(&self.gift_title)),
            ("merchant", text(&self.merchant)),
            ("quantity", Some(self.quantity.into())),
            ("lines", Some(Value::Array(self.lines.iter().map(WriteJson::write_json).collect()))),
            ("total", Some(self.total.write_json())),
            ("status", text(self.status.as_str())),
            ("created_at", text(&self.created_at)),
            ("destination", self.destination.as_ref().map(WriteJson::write_json)),
            ("cancellable_until", optional_text(&self.cancellable_until)),
            ("refund", self.refund.as_ref().map(WriteJson::write_json)),
            ("fulfillment", self.fulfillment.as_ref().map(WriteJson::write_json)),
            ("timeline", list(&self.timeline)),
            ("adjustments", list(&self.adjustments)),
            ("amount_refunded", self.amount_refunded.as_ref().map(WriteJson::write_json)),
            ("gift_wrap_cost", self.gift_wrap_cost.as_ref().map(WriteJson::write_json)),
            ("gift_receipt", self.gift_receipt.then_some(Value::Bool(true))),
            ("arrives", self.arrives.as_ref().map(WriteJson::write_json)),
        ])
    }
}

impl WriteJson for OrderLine {
    fn write_json(&self) -> Value {
        object(&mut [
            ("gift_id", text(&self.gift_id)),
            ("gift_title", text(&self.gift_title)),
            ("merchant", text(&self.merchant)),
            ("quantity", Some(self.quantity.into())),
            ("subtotal", self.subtotal.as_ref().map(WriteJson::write_json)),
        ])
    }
}

impl WriteJson for DeliveryWindow {
    fn write_json(&self) -> Value {
        object(&mut [("earliest", text(&self.earliest)), ("latest", text(&self.latest))])
    }
}

impl WriteJson for Fulfillment {
    fn write_json(&self) -> Value {
        object(&mut [
            ("carrier", text(&self.carrier)),
            ("tracking_number", text(&self.tracking_number)),
            ("tracking_url", text(&self.tracking_url)),
        ])
    }
}

impl WriteJson for OrderStep {
    fn write_json(&self) -> Value {
        object(&mut [("status", text(self.status.as_str())), ("at", text(&self.at))])
    }
}

impl WriteJson for Adjustment {
    fn write_json(&self) -> Value {
        object(&mut [
            ("id", text(&self.id)),
            ("amount", Some(self.amount.write_json())),
            ("reason", text(&self.reason)),
            ("status", text(self.status.as_str())),
            ("created_at", text(&self.created_at)),
        ])
    }
}
