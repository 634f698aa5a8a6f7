//! The GiftGenius widget: Leptos components that render tool results inside a chat host.
//!
//! The same components run in two places, which is why everything here takes plain data:
//! - in the browser as WebAssembly (`main.rs`, CSR): `bridge.rs` renders what the host has said
//!   (`hosted.rs`: the streamed arguments, the result, a cancellation, the host's context), as
//!   the packed document's runtime hands it over;
//! - natively on the server (`render_to_html`, SSR): the markup every tool result carries in its
//!   widget-only `_meta`, which the runtime paints first, shows where WebAssembly is refused and
//!   shows as the answer to every press; and what the snapshot tests pin down.
//!
//! Behaviour is decided once, in Rust: [`decide`] is the pure function from (screen, [`Action`])
//! to what happens next, which each control carries as its `data-call`. The runtime
//! (`runtime/*.js`, [`RUNTIME_JS`]) is the one executor: it speaks to the host (window.openai or MCP Apps
//! JSON-RPC), fills the decision's placeholders, makes the call and shows the answer's markup.
//!
//! Public API: [`ViewState`] (what to show), [`RenderContext`] (theme, locale, display mode),
//! [`Action`] (what the user asked for), [`decide`], [`hosted::read`] and [`render_to_html`]
//! (native only).

pub mod action;
/// The texts and money formatting live in `giftgenius-words` (the pages and ACP use them too).
pub use giftgenius_words::{field_text, format, i18n};
pub mod context;
pub mod decide;
#[cfg(not(target_arch = "wasm32"))]
pub mod fallback;
pub mod flow;
pub mod hosted;
pub mod runtime;
pub mod state;
#[cfg(test)]
mod test_fixtures;
pub mod view;

#[cfg(target_arch = "wasm32")]
pub mod bridge;

pub use action::Action;
pub use context::{DisplayMode, RenderContext, Theme};
pub use state::ViewState;

/// The widget's stylesheet, for hosts and fallbacks that inline it next to SSR HTML.
///
/// Native only: the wasm build gets its CSS from the packed HTML document, not from the binary.
#[cfg(not(target_arch = "wasm32"))]
pub const STYLE_CSS: &str = include_str!("../style.css");

/// The widget's runtime (`runtime/*.js`, one file per concern, each opening with what it is
/// for), for the packer that inlines them, in this order and inside one closure, into the
/// widget document next to the wasm glue (handed over by [`fallback::packer_input`]): (file
/// name, source). `main.js` is the entry; every other file is one function it calls.
/// Native only, like [`STYLE_CSS`].
#[cfg(not(target_arch = "wasm32"))]
pub const RUNTIME_JS: &[(&str, &str)] = &[
    ("main.js", include_str!("../runtime/main.js")),
    ("host.js", include_str!("../runtime/host.js")),
    ("keep.js", include_str!("../runtime/keep.js")),
    ("placeholders.js", include_str!("../runtime/placeholders.js")),
    ("screen.js", include_str!("../runtime/screen.js")),
    ("wasm.js", include_str!("../runtime/wasm.js")),
    ("executor.js", include_str!("../runtime/executor.js")),
];

/// Renders one state to HTML with the same components the browser uses.
///
/// The server puts this into widget-only `_meta`, so it must never panic: every `ViewState`
/// renders, and all data is text-escaped by Leptos. Each control carries its decision as
/// `data-call`, which the runtime executes.
#[cfg(not(target_arch = "wasm32"))]
pub fn render_to_html(state: &ViewState, ctx: &RenderContext) -> String {
    use leptos::prelude::*;
    Owner::new().with(|| view::static_root(state.clone(), ctx.clone()).to_html())
}
