//! Tool outputs the widget's unit tests share, in the contract's JSON.

use serde_json::{Value, json};

/// A `prepare_order` result: draft `d_1` for one $25 mug, $30 in all.
pub fn draft_output() -> Value {
    let mug = json!({"id":"g_1","title":"Mug","description":"A mug","price":{"amount_minor":2500,"currency":"USD"},
        "merchant":{"id":"m","name":"Shop"},"tags":[],"reasons":[],"in_stock":true,"image_url":"/i.png"});
    json!({"v":6,"ok":true,"tool":"prepare_order","draft":{
        "id":"d_1","quantity":1,"shipping":"standard",
        "lines":[{"gift":mug,"quantity":1,"subtotal":{"amount_minor":2500,"currency":"USD"}}],
        "subtotal":{"amount_minor":2500,"currency":"USD"},
        "shipping_cost":{"amount_minor":500,"currency":"USD"},
        "total":{"amount_minor":3000,"currency":"USD"},
        "expires_at":"2030-01-01T00:00:00Z",
        "gift":mug}})
}

/// A `suggest_gifts` result with one gift, `g_1`.
pub fn results_output() -> Value {
    json!({"v":6,"ok":true,"tool":"suggest_gifts","query":{"relationship_type":"friend","interests":[],
        "currency":"USD","limit":6},"gifts":[{"id":"g_1","title":"Mug","description":"A mug",
        "price":{"amount_minor":2500,"currency":"USD"},"merchant":{"id":"m","name":"Shop"},"tags":[],
        "reasons":[],"in_stock":true,"image_url":"/i.png"}]})
}
