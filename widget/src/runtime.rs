//! What the packed document's runtime (`runtime/*.js`) reads from its data block, from
//! the crates that define it, so the runtime spells none of it: the contract's `_meta`, storage
//! and widget-state keys, and the MCP Apps `ui/initialize` it sends.

/// The widget-state key under which the runtime keeps its screen on a host that hands widget
/// state back (window.openai, whose frame may have no storage): the markup and the view's id.
pub const SCREEN_STATE_KEY: &str = "screen";

/// The widget-state key (and, after the checkout storage prefix, the storage key) of the
/// basket the view keeps: the id of the last draft it showed, which the results' Add adds to.
pub const BASKET_STATE_KEY: &str = "basket";

/// How many views' screens an origin's storage keeps; the oldest go first.
pub const MAX_SAVED_VIEWS: usize = 50;

/// The storage key of the index of kept screens: a JSON array of storage keys, oldest first.
pub const VIEW_INDEX_KEY: &str = "giftgenius/views";

/// The MCP Apps protocol version the runtime speaks (SEP-1865).
pub const PROTOCOL_VERSION: &str = "2026-01-26";

/// The view's name in `appInfo`.
pub const APP_NAME: &str = "giftgenius-widget";

/// `params` of the runtime's `ui/initialize` request: who we are, and that we can be shown in
/// full screen (the wasm's "Compare all" asks for it).
#[cfg(not(target_arch = "wasm32"))]
pub fn initialize_params() -> serde_json::Value {
    serde_json::json!({
        "appInfo": { "name": APP_NAME, "version": env!("CARGO_PKG_VERSION") },
        "appCapabilities": { "availableDisplayModes": ["inline", "fullscreen"] },
        "protocolVersion": PROTOCOL_VERSION,
    })
}

/// The `wire` object of the data block: `_meta` keys, storage and widget-state keys, limits.
#[cfg(not(target_arch = "wasm32"))]
pub fn wire() -> serde_json::Value {
    use giftgenius_types::wire;
    serde_json::json!({
        "html": wire::META_HTML,
        "viewUuid": wire::META_VIEW_UUID,
        "viewStore": wire::VIEW_STORAGE_PREFIX,
        "viewIndex": VIEW_INDEX_KEY,
        "maxViews": MAX_SAVED_VIEWS,
        "store": wire::CHECKOUT_STORAGE_PREFIX,
        "checkout": crate::flow::CHECKOUT_STATE_KEY,
        "basket": BASKET_STATE_KEY,
        "screen": SCREEN_STATE_KEY,
    })
}
