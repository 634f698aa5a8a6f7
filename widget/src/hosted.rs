//! What the wasm view shows: everything the host has said so far, as the packed document's
//! runtime (`runtime/wasm.js`) hands it over, made into the state and context to render.
//!
//! The runtime is the one side that speaks to the host (window.openai, or MCP Apps JSON-RPC):
//! it takes the host's notifications and makes every call a control decides (`data-call`, see
//! `decide.rs`). The wasm renders what the host brings: the arguments as the model streams
//! them, the result, a cancellation, and the host's theme, locale and display mode. A press is
//! the runtime's: it puts the result's server markup (the same components, each call's decision
//! on its control) in place of the wasm's view, with what was typed, follows the pressed
//! control's twin there and shows the answers' markup.
//!
//! Pure and natively tested: the wasm side (`bridge.rs`) only turns the runtime's object into
//! a [`serde_json::Value`] and mounts the view of what [`read`] gives.

use giftgenius_types::ToolName;
use serde_json::{Map, Value};

use crate::context::{DisplayMode, RenderContext, Theme};
use crate::state::ViewState;

/// The longest cancellation reason the view shows (the host's free text).
pub const MAX_REASON: usize = 200;

/// The state and the render context for what the host has said (`told`, the runtime's object):
/// - `context`: the host context as MCP Apps merges it (`theme`, `locale`, `displayMode`,
///   `availableDisplayModes`, `toolInfo`); the runtime gives window.openai's globals that shape;
/// - `checkout`: the host has a payment sheet (window.openai's `requestCheckout`);
/// - `input`: the complete arguments of the call the view is for; `partial`: as they stream;
/// - `result`: `{structuredContent, _meta}` of that call; `cancelled`: `{reason}`.
///
/// A result wins; then a cancellation ("Try again" only with the tool and its complete
/// arguments known: partial arguments are never acted upon); else loading, with what is known.
pub fn read(told: &Value) -> (ViewState, RenderContext) {
    let context = told.get("context").unwrap_or(&Value::Null);
    let checkout = told.get("checkout").and_then(Value::as_bool).unwrap_or(false);
    let ctx = render_context(context).with_host_checkout(checkout);
    let input = told.get("input").filter(|i| i.is_object());
    let result = told
        .get("result")
        .filter(|r| r.is_object())
        .map(|r| {
            let field = |key: &str| r.get(key).unwrap_or(&Value::Null);
            ViewState::from_tool_result(field("structuredContent"), field("_meta"))
        })
        .filter(|state| !state.is_loading());
    let state = match (result, told.get("cancelled").filter(|c| c.is_object())) {
        (Some(state), _) => state,
        (None, Some(cancelled)) => ViewState::ToolCancelled {
            reason: cancelled.get("reason").and_then(Value::as_str).and_then(clip_reason),
            retry: tool_name(context).filter(|_| input.is_some()),
        },
        (None, None) => match input.or_else(|| told.get("partial")) {
            Some(Value::Object(arguments)) => ViewState::loading_with(arguments),
            _ => ViewState::loading_with(&Map::new()),
        },
    };
    (state, ctx)
}

/// Theme, locale and display mode, with safe defaults. The full-screen toggle needs the host
/// to list `fullscreen` among its `availableDisplayModes` (we declare it among ours).
fn render_context(context: &Value) -> RenderContext {
    let text = |key: &str| context.get(key).and_then(Value::as_str);
    let theme = text("theme").map(Theme::parse).unwrap_or_default();
    let locale = text("locale").filter(|l| !l.is_empty()).unwrap_or(RenderContext::DEFAULT_LOCALE);
    let mode = text("displayMode").and_then(DisplayMode::parse).unwrap_or_default();
    let fullscreen = context
        .get("availableDisplayModes")
        .and_then(Value::as_array)
        .is_some_and(|modes| modes.iter().any(|m| m.as_str() == Some(DisplayMode::Fullscreen.as_str())));
    RenderContext::new(theme, locale).with_display(mode, fullscreen)
}

/// The tool whose call opened this view (`toolInfo.tool.name`), if the host says and it is ours.
fn tool_name(context: &Value) -> Option<ToolName> {
    context.pointer("/toolInfo/tool/name")?.as_str().and_then(ToolName::parse)
}

fn clip_reason(reason: &str) -> Option<String> {
    let clipped: String = reason.trim().chars().filter(|c| !c.is_control()).take(MAX_REASON).collect();
    (!clipped.is_empty()).then_some(clipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures::{draft_output, results_output};
    use serde_json::json;

    #[test]
    fn nothing_said_yet_is_loading_in_the_default_context() {
        let (state, ctx) = read(&Value::Null);
        assert_eq!(state, ViewState::Loading);
        assert_eq!(ctx, RenderContext::new(Theme::Light, RenderContext::DEFAULT_LOCALE));
    }

    #[test]
    fn streamed_arguments_show_loading_with_what_is_known() {
        let (state, _) = read(&json!({ "partial": { "relationship_type": "friend", "interests": ["hiking"] } }));
        assert_eq!(state.kind(), "loading");
        assert!(matches!(state, ViewState::LoadingWith { .. }), "{state:?}");
    }

    #[test]
    fn a_result_wins_over_arguments_and_a_later_cancellation() {
        let told = json!({
            "input": { "interests": ["hiking"] },
            "result": { "structuredContent": results_output(), "_meta": {} },
            "cancelled": { "reason": "stopped" },
        });
        assert_eq!(read(&told).0.kind(), "results");
        // A result not there yet (window.openai's toolOutput is null while the tool runs).
        let running = json!({ "input": { "interests": ["hiking"] }, "result": { "structuredContent": null } });
        assert!(read(&running).0.is_loading());
    }

    #[test]
    fn a_draft_the_host_brings_is_the_confirm_card_with_what_its_meta_adds() {
        let meta = json!({ "giftgenius/payment_card": { "saved": { "brand": "visa", "last4": "4242" }, "add_url": "/pay/card/x" } });
        let told = json!({ "result": { "structuredContent": draft_output(), "_meta": meta } });
        let (state, _) = read(&told);
        assert_eq!(state, ViewState::from_tool_result(&draft_output(), &meta));
        assert!(matches!(state, ViewState::ConfirmPurchase { ref draft, .. } if draft.id == "d_1"), "{state:?}");
    }

    #[test]
    fn a_cancellation_offers_try_again_only_with_the_tool_and_its_complete_arguments() {
        let tool = json!({ "toolInfo": { "tool": { "name": "suggest_gifts" } } });
        let partial_only = json!({ "context": tool, "partial": { "interests": ["hiking"] }, "cancelled": { "reason": "  the user\u{7}stopped  " } });
        assert_eq!(
            read(&partial_only).0,
            ViewState::ToolCancelled { reason: Some("the userstopped".into()), retry: None }
        );
        let complete = json!({ "context": tool, "input": { "interests": ["hiking"] }, "cancelled": {} });
        assert_eq!(read(&complete).0, ViewState::ToolCancelled { reason: None, retry: Some(ToolName::SuggestGifts) });
        let unknown_tool =
            json!({ "context": { "toolInfo": { "tool": { "name": "rm_rf" } } }, "input": {}, "cancelled": {} });
        assert_eq!(read(&unknown_tool).0, ViewState::ToolCancelled { reason: None, retry: None });
        let long = json!({ "cancelled": { "reason": "x".repeat(500) } });
        assert!(matches!(read(&long).0, ViewState::ToolCancelled { reason: Some(r), .. } if r.len() == MAX_REASON));
    }

    #[test]
    fn the_context_follows_the_host_with_safe_defaults() {
        let told = json!({
            "context": { "theme": "dark", "locale": "pt-BR", "displayMode": "fullscreen", "availableDisplayModes": ["inline", "fullscreen"] },
            "checkout": true,
        });
        let want = RenderContext::new(Theme::Dark, "pt-BR")
            .with_host_checkout(true)
            .with_display(DisplayMode::Fullscreen, true);
        assert_eq!(read(&told).1, want);
        let odd = json!({ "context": { "theme": 7, "locale": "", "displayMode": "sideways", "availableDisplayModes": "fullscreen" } });
        assert_eq!(read(&odd).1, RenderContext::new(Theme::Light, RenderContext::DEFAULT_LOCALE));
    }
}
