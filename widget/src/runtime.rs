//! The strings the no-WebAssembly runtime (`runtime/fallback.js`) reads from the packed
//! document's data block, from the crates that define them, so the runtime spells none.

/// The widget-state key under which the runtime keeps its screen on a host that hands widget
/// state back (window.openai, whose frame may have no storage): the markup and the view's id.
pub const SCREEN_STATE_KEY: &str = "screen";

/// The `wire` object of the data block: `_meta` keys, storage and widget-state keys, limits.
#[cfg(not(target_arch = "wasm32"))]
pub fn wire() -> serde_json::Value {
    use giftgenius_types::wire;
    serde_json::json!({
        "html": wire::META_HTML,
        "viewUuid": wire::META_VIEW_UUID,
        "viewStore": wire::VIEW_STORAGE_PREFIX,
        "viewIndex": crate::saved::INDEX_KEY,
        "maxViews": crate::saved::MAX_SAVED_VIEWS,
        "store": wire::CHECKOUT_STORAGE_PREFIX,
        "checkout": crate::flow::CHECKOUT_STATE_KEY,
        "screen": SCREEN_STATE_KEY,
        "wasmView": crate::saved::WIDGET_STATE_KEY,
    })
}
