//! The widget's readers of what the host says (`hosted::read`: the context, the streamed and
//! complete arguments, the tool result's `structuredContent` and `_meta`, a cancellation), then
//! the server-side render of the view they make (`render_to_html`). Input: the JSON the runtime
//! hands over, or, when that is not an object, `structuredContent` alone.
//!
//! Properties: nothing panics (the server puts this render into every result); text from the
//! result never comes out as markup.
#![no_main]

use giftgenius_widget::state::ViewState;
use giftgenius_widget::{RenderContext, hosted, render_to_html};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

/// A tag no component writes: if it appears in the markup, input text became markup.
const MARKER: &str = "<fuzz-marker";

fuzz_target!(|data: &[u8]| {
    let Ok(told) = serde_json::from_slice::<Value>(data) else { return };
    let (state, ctx) = if told.is_object() {
        hosted::read(&told)
    } else {
        (ViewState::from_tool_result(&told, &json!({})), RenderContext::default())
    };
    let html = render_to_html(&state, &ctx);
    assert!(!html.contains(MARKER), "input became markup: {html}");
});
