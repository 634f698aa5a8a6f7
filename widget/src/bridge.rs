//! The ChatGPT `window.openai` bridge and the wasm start-up (wasm32 only).
//!
//! Everything is feature-detected: when `window.openai` (or one of its methods) is missing the
//! widget shows Loading and waits for `openai:set_globals`, instead of branching on a product
//! name. The bridge implements [`Host`], so an MCP Apps (postMessage JSON-RPC) bridge can be a
//! second implementation without touching the controller or the components.

use std::cell::OnceCell;
use std::future::Future;
use std::rc::Rc;

use js_sys::{Function, JSON, Object, Promise, Reflect};
use leptos::prelude::*;
use serde_json::{Map, Value};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use crate::action::Action;
use crate::context::{RenderContext, Theme};
use crate::controller::{Controller, Host, ToolResult};
use crate::state::ViewState;
use crate::view::reactive_root;

/// The element the widget mounts into; created when the page does not have it.
const ROOT_ID: &str = "giftgenius-root";
const SET_GLOBALS_EVENT: &str = "openai:set_globals";

/// ChatGPT's Apps SDK host, reached through `window.openai`.
pub struct OpenAiBridge;

fn openai() -> Option<Object> {
    let window = web_sys::window()?;
    Reflect::get(&window, &JsValue::from_str("openai")).ok()?.dyn_into::<Object>().ok()
}

/// JS value → JSON through `JSON.stringify`; anything unreadable is `null`.
fn to_json(value: &JsValue) -> Value {
    if value.is_undefined() || value.is_null() {
        return Value::Null;
    }
    JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null)
}

fn to_js(value: &Value) -> JsValue {
    JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// One of the host's globals (`toolOutput`, `theme`, ...), or `null` when absent.
fn global(key: &str) -> Value {
    openai()
        .and_then(|o| Reflect::get(&o, &JsValue::from_str(key)).ok())
        .map(|v| to_json(&v))
        .unwrap_or(Value::Null)
}

fn method(name: &str) -> Option<(Object, Function)> {
    let openai = openai()?;
    let function = Reflect::get(&openai, &JsValue::from_str(name)).ok()?.dyn_into::<Function>().ok()?;
    Some((openai, function))
}

/// Awaits a value that may or may not be a Promise.
async fn settle(value: JsValue) -> Result<JsValue, JsValue> {
    JsFuture::from(Promise::resolve(&value)).await
}

impl Host for OpenAiBridge {
    fn tool_input(&self) -> Value {
        global("toolInput")
    }

    fn tool_response_metadata(&self) -> Value {
        global("toolResponseMetadata")
    }

    fn widget_state(&self) -> Value {
        global("widgetState")
    }

    fn set_widget_state(&self, state: Value) -> impl Future<Output = ()> {
        let pending = method("setWidgetState").and_then(|(o, f)| f.call1(&o, &to_js(&state)).ok());
        async move {
            if let Some(pending) = pending {
                let _ = settle(pending).await;
            }
        }
    }

    fn call_tool(&self, name: &str, arguments: Map<String, Value>) -> impl Future<Output = Result<ToolResult, String>> {
        let pending = method("callTool")
            .map(|(o, f)| f.call2(&o, &JsValue::from_str(name), &to_js(&Value::Object(arguments))));
        async move {
            let pending = pending
                .ok_or_else(|| "the host offers no callTool".to_string())?
                .map_err(|_| "callTool threw".to_string())?;
            let result = settle(pending).await.map_err(|_| "callTool failed".to_string())?;
            let result = to_json(&result);
            Ok(ToolResult {
                structured_content: result.get("structuredContent").cloned().unwrap_or(Value::Null),
                meta: result.get("_meta").cloned().unwrap_or(Value::Null),
            })
        }
    }

    fn random_bytes(&self) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        let filled = web_sys::window()
            .and_then(|w| w.crypto().ok())
            .is_some_and(|c| c.get_random_values_with_u8_array(&mut bytes).is_ok());
        if !filled {
            // No Web Crypto (never seen in a browser that runs wasm): still unique enough per
            // draft, and the key is only ever reused, never shared across drafts.
            for b in bytes.iter_mut() {
                *b = (js_sys::Math::random() * 256.0) as u8;
            }
        }
        bytes
    }
}

/// Theme and locale from the host, with safe defaults.
fn render_context() -> RenderContext {
    let theme = global("theme").as_str().map(Theme::parse).unwrap_or_default();
    let locale = global("locale").as_str().filter(|l| !l.is_empty()).unwrap_or(RenderContext::DEFAULT_LOCALE).to_string();
    RenderContext::new(theme, locale)
}

thread_local! {
    static CONTROLLER: OnceCell<Rc<Controller<OpenAiBridge>>> = const { OnceCell::new() };
}

/// Runs an action on the controller without blocking the click handler.
fn dispatch(action: Action) {
    if let Some(controller) = CONTROLLER.with(|c| c.get().cloned()) {
        wasm_bindgen_futures::spawn_local(async move { controller.handle(action).await });
    }
}

/// Mounts into `#giftgenius-root` (created if missing), replacing whatever placeholder it held.
fn mount(state: RwSignal<ViewState>, ctx: RwSignal<RenderContext>, on_action: Callback<Action>) -> Option<()> {
    let document = web_sys::window()?.document()?;
    let root = match document.get_element_by_id(ROOT_ID) {
        Some(root) => root,
        None => {
            let root = document.create_element("div").ok()?;
            root.set_id(ROOT_ID);
            document.body()?.append_child(&root).ok()?;
            root
        }
    };
    root.set_text_content(None);
    let root = root.dyn_into::<web_sys::HtmlElement>().ok()?;
    leptos::mount::mount_to(root, move || reactive_root(state, ctx, on_action)).forget();
    Some(())
}

/// Starts the widget: mount, show the current tool output, follow the host's changes.
pub fn start() {
    let state = RwSignal::new(ViewState::Loading);
    let ctx = RwSignal::new(render_context());
    let controller = Rc::new(Controller::new(OpenAiBridge, move |s: &ViewState| state.set(s.clone())));
    CONTROLLER.with(|c| {
        let _ = c.set(controller.clone());
    });
    let on_action = Callback::new(dispatch);
    if mount(state, ctx, on_action).is_none() {
        return;
    }
    controller.show_tool_output(&global("toolOutput"));

    // The host announces changed globals (theme, locale, toolOutput once the tool finished...);
    // we re-read them instead of trusting the event's partial `detail.globals`.
    let on_globals = Closure::<dyn Fn(web_sys::Event)>::new(move |_event: web_sys::Event| {
        let next = render_context();
        if ctx.with_untracked(|c| *c != next) {
            ctx.set(next);
        }
        if let Some(controller) = CONTROLLER.with(|c| c.get().cloned()) {
            controller.show_tool_output(&global("toolOutput"));
        }
    });
    if let Some(window) = web_sys::window() {
        let _ = window.add_event_listener_with_callback(SET_GLOBALS_EVENT, on_globals.as_ref().unchecked_ref());
    }
    // The listener lives as long as the page.
    on_globals.forget();
}
