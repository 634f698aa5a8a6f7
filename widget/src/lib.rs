//! The GiftGenius widget: Leptos components that render tool results inside a chat host.
//!
//! The same components run in two places, which is why everything here takes plain data:
//! - in the browser as WebAssembly (`main.rs`, CSR), bridged to the host by `bridge.rs`
//!   (ChatGPT's `window.openai` or the MCP Apps postMessage JSON-RPC, whose wire format is the
//!   pure, natively tested `rpc.rs`);
//! - natively on the server (`render_to_html`, SSR), whose HTML is the fallback a host shows
//!   when it refuses WebAssembly, and what the snapshot tests pin down.
//!
//! Public API: [`ViewState`] (what to show), [`RenderContext`] (theme, locale, display mode),
//! [`Action`] (what the user asked for), [`render_to_html`] (native only), the pure
//! [`controller`] that turns actions into tool calls behind the [`controller::Host`] trait, and
//! [`saved`], the screen a view keeps for a reload.

pub mod action;
pub mod context;
pub mod controller;
pub mod decide;
pub mod delivery_form;
#[cfg(not(target_arch = "wasm32"))]
pub mod fallback;
pub mod field_text;
pub mod flow;
pub mod format;
pub mod i18n;
pub mod rpc;
pub mod runtime;
pub mod saved;
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

/// The no-WebAssembly fallback runtime (`runtime/fallback.js`), for the packer that inlines it
/// into the widget document next to the wasm glue (handed over by [`fallback::packer_input`]).
/// Native only, like [`STYLE_CSS`].
#[cfg(not(target_arch = "wasm32"))]
pub const FALLBACK_JS: &str = include_str!("../runtime/fallback.js");

/// Renders one state to HTML with the same components the browser uses.
///
/// The server puts this into widget-only `_meta` as the no-WebAssembly fallback, so it must
/// never panic: every `ViewState` renders, and all data is text-escaped by Leptos.
/// Buttons carry `data-action` attributes so a tiny script can wire them without Leptos.
#[cfg(not(target_arch = "wasm32"))]
pub fn render_to_html(state: &ViewState, ctx: &RenderContext) -> String {
    use leptos::prelude::*;
    Owner::new().with(|| {
        let on_action = Callback::new(|_: crate::Action| {});
        view::static_root(state.clone(), ctx.clone(), on_action).to_html()
    })
}
