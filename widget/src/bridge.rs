//! The host bridges and the wasm start-up (wasm32 only).
//!
//! Two implementations of [`Host`], chosen by feature detection, never by product name:
//! - `window.openai` present → [`OpenAiBridge`] (ChatGPT's Apps SDK globals and methods);
//! - else, embedded in a parent frame → [`McpAppsBridge`] (MCP Apps: JSON-RPC 2.0 over
//!   `postMessage` to `window.parent`; the wire format is in `rpc.rs`, unit-tested natively);
//! - else (a top-level page with nothing injected yet) → `OpenAiBridge`, which shows Loading
//!   and waits for `openai:set_globals`.
//!
//! The controller and the components never learn which one they got. Both bridges also mirror
//! the checkout entry (draft id → idempotency key) into `localStorage`/`sessionStorage` when the
//! sandbox allows it, because a host may not give widget state back after a reload. Both keep
//! the screen there under the result's `viewUUID` (see `saved.rs`); the ChatGPT bridge also keeps
//! it in widget state, which that host hands back on a re-mount even where the frame has no
//! storage. The MCP Apps bridge applies the host's styling (CSS variables, fonts, safe-area
//! insets) to the document.

use std::cell::{Cell, OnceCell, RefCell};
use std::future::Future;
use std::rc::Rc;

use js_sys::{Function, JSON, Object, Promise, Reflect};
use leptos::prelude::*;
use serde_json::{Map, Value, json};
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;
use wasm_bindgen_futures::JsFuture;

use crate::action::Action;
use crate::context::{DisplayMode, RenderContext, Theme};
use crate::controller::{Controller, Host, ToolResult};
use crate::flow;
use crate::rpc::{self, HostContext, Incoming, LogLevel, Pending, Presentation};
use crate::saved::{self, SavedView};
use crate::state::ViewState;
use crate::view::reactive_root;

/// The element the widget mounts into; created when the page does not have it.
const ROOT_ID: &str = "giftgenius-root";
const SET_GLOBALS_EVENT: &str = "openai:set_globals";

/// How deep [`to_json`] follows nested arrays and objects; anything deeper is `null`, so a
/// cyclic or hostile value cannot recurse without end.
const MAX_JSON_DEPTH: usize = 64;

/// JS value → JSON, walked through js-sys the way `JSON.stringify` would see it (functions and
/// `undefined` members left out, `NaN` and the infinities `null`), without ever becoming text:
/// the wasm then carries no JSON parser. Whole numbers stay integers, as the contract's typed
/// readers (`u32` counts, minor units) need.
fn to_json(value: &JsValue) -> Value {
    to_json_at(value, 0)
}

fn to_json_at(value: &JsValue, depth: usize) -> Value {
    if let Some(b) = value.as_bool() {
        return Value::Bool(b);
    }
    if let Some(n) = value.as_f64() {
        return number(n);
    }
    if let Some(s) = value.as_string() {
        return Value::String(s);
    }
    if depth >= MAX_JSON_DEPTH || !value.is_object() || value.is_function() {
        return Value::Null;
    }
    if js_sys::Array::is_array(value) {
        let array = js_sys::Array::from(value);
        return Value::Array(array.iter().map(|item| to_json_at(&item, depth + 1)).collect());
    }
    let object: &Object = value.unchecked_ref();
    let mut map = Map::new();
    for key in Object::keys(object).iter() {
        let (Some(name), Ok(member)) = (key.as_string(), Reflect::get(object, &key)) else { continue };
        if member.is_undefined() || member.is_function() {
            continue;
        }
        map.insert(name, to_json_at(&member, depth + 1));
    }
    Value::Object(map)
}

/// A JS number as JSON: an integer when it is a whole one that `f64` holds exactly.
fn number(n: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if n.fract() == 0.0 && n.abs() <= EXACT {
        return if n < 0.0 { Value::from(n as i64) } else { Value::from(n as u64) };
    }
    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// JSON → JS value, built with js-sys (the inverse of [`to_json`]).
fn to_js(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => n.as_f64().map_or(JsValue::NULL, JsValue::from_f64),
        Value::String(s) => JsValue::from_str(s),
        Value::Array(items) => items.iter().map(to_js).collect::<js_sys::Array>().into(),
        Value::Object(map) => {
            let object = Object::new();
            for (key, member) in map {
                let _ = Reflect::set(&object, &JsValue::from_str(key), &to_js(member));
            }
            object.into()
        }
    }
}

/// Text from storage → JSON, through the browser's `JSON.parse`; unreadable text is `None`.
fn parse_stored(text: &str) -> Option<Value> {
    JSON::parse(text).ok().map(|v| to_json(&v))
}

/// JSON → text for storage, through the browser's `JSON.stringify`.
fn to_text(value: &Value) -> Option<String> {
    JSON::stringify(&to_js(value)).ok().and_then(|s| s.as_string())
}

/// Awaits a value that may or may not be a Promise.
async fn settle(value: JsValue) -> Result<JsValue, JsValue> {
    JsFuture::from(Promise::resolve(&value)).await
}

/// How long a request to the host may stay unanswered before it fails (and the view shows a
/// retryable error instead of disabled buttons). The document's URL may shorten it with
/// `?gg-call-timeout-ms=N` (the preview does, for its tests); real hosts never pass it.
const DEFAULT_CALL_TIMEOUT_MS: i32 = 20_000;
const CALL_TIMEOUT_PARAM: &str = "gg-call-timeout-ms";
const TIMED_OUT: &str = "the host did not answer in time";

fn call_timeout_ms() -> i32 {
    let search = web_sys::window()
        .and_then(|w| Reflect::get(&w, &JsValue::from_str("location")).ok())
        .and_then(|l| Reflect::get(&l, &JsValue::from_str("search")).ok())
        .and_then(|s| s.as_string())
        .unwrap_or_default();
    search
        .trim_start_matches('?')
        .split('&')
        .find_map(|pair| pair.strip_prefix(CALL_TIMEOUT_PARAM)?.strip_prefix('=')?.parse::<i32>().ok())
        .filter(|ms| *ms >= 100)
        .unwrap_or(DEFAULT_CALL_TIMEOUT_MS)
}

/// Runs `f` once after `ms` milliseconds.
fn after(ms: i32, f: impl FnOnce() + 'static) {
    if let Some(window) = web_sys::window() {
        let callback = Closure::once_into_js(f);
        let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(callback.unchecked_ref(), ms);
    }
}

/// Awaits a value that may be a Promise, failing with [`TIMED_OUT`] after the call timeout.
async fn settle_in_time(value: JsValue) -> Result<JsValue, JsValue> {
    let timer = Promise::new(&mut |_resolve, reject: Function| {
        after(call_timeout_ms(), move || {
            let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(TIMED_OUT));
        });
    });
    JsFuture::from(Promise::race(&js_sys::Array::of2(&Promise::resolve(&value), &timer))).await
}

/// Browser storage for the checkout entry and the saved screen. Every access is fallible: a
/// sandboxed iframe without `allow-same-origin` throws on `localStorage`, a browser that blocks
/// third-party storage throws in a cross-site frame, and storage may be full or disabled.
mod storage {
    use serde_json::Value;

    use crate::flow;
    use crate::rpc::checkout_storage_key;
    use crate::saved;

    fn stores() -> Vec<web_sys::Storage> {
        let Some(window) = web_sys::window() else { return Vec::new() };
        [window.local_storage(), window.session_storage()].into_iter().filter_map(|s| s.ok().flatten()).collect()
    }

    pub fn load(draft_id: &str) -> Option<String> {
        let key = checkout_storage_key(draft_id);
        stores().iter().find_map(|s| s.get_item(&key).ok().flatten().filter(|v| !v.is_empty()))
    }

    /// The screen saved for this view before a reload, if any store has a readable one.
    pub fn load_view(view_id: &str) -> Option<saved::SavedView> {
        let key = saved::storage_key(view_id);
        stores().iter().find_map(|s| {
            s.get_item(&key).ok().flatten().and_then(|text| saved::SavedView::from_value(&super::parse_stored(&text)?))
        })
    }

    /// Keeps the screen for this view, and forgets the oldest views beyond the index's limit.
    pub fn save_view(view_id: &str, view: &saved::SavedView) {
        let key = saved::storage_key(view_id);
        let Some(text) = super::to_text(&view.to_value()) else { return };
        for store in stores() {
            let index = store.get_item(saved::INDEX_KEY).ok().flatten().and_then(|t| super::parse_stored(&t));
            let (index, evicted) = saved::remember(index.as_ref(), &key);
            for old in evicted {
                let _ = store.remove_item(&old);
            }
            let _ = store.set_item(&key, &text);
            if let Some(index) = super::to_text(&serde_json::json!(index)) {
                let _ = store.set_item(saved::INDEX_KEY, &index);
            }
        }
    }

    /// Forgets every view's saved screen, the index and every checkout entry (Delete my data).
    pub fn forget_all() {
        use giftgenius_types::wire::{CHECKOUT_STORAGE_PREFIX, VIEW_STORAGE_PREFIX};
        for store in stores() {
            let n = store.length().unwrap_or(0);
            let ours: Vec<String> = (0..n)
                .filter_map(|i| store.key(i).ok().flatten())
                .filter(|k| {
                    k.starts_with(VIEW_STORAGE_PREFIX)
                        || k.starts_with(CHECKOUT_STORAGE_PREFIX)
                        || k == saved::INDEX_KEY
                })
                .collect();
            for key in ours {
                let _ = store.remove_item(&key);
            }
        }
    }

    /// Mirrors a widget-state change into storage (see [`flow::storage_changes`]).
    pub fn sync(previous: &Value, next: &Value) {
        let (forget, keep) = flow::storage_changes(previous, next);
        for store in stores() {
            if let Some(draft_id) = &forget {
                let _ = store.remove_item(&checkout_storage_key(draft_id));
            }
            if let Some((draft_id, key)) = &keep {
                let _ = store.set_item(&checkout_storage_key(draft_id), key);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ChatGPT: window.openai
// ---------------------------------------------------------------------------------------------

/// ChatGPT's Apps SDK host, reached through `window.openai`.
#[derive(Default)]
pub struct OpenAiBridge {
    /// The widget state we last asked the host to keep: it wins over `window.openai.widgetState`,
    /// which a host may update only later, so two quick writes never undo each other.
    written: RefCell<Option<Value>>,
}

fn openai() -> Option<Object> {
    let window = web_sys::window()?;
    Reflect::get(&window, &JsValue::from_str("openai")).ok()?.dyn_into::<Object>().ok()
}

/// One of the host's globals (`toolOutput`, `theme`, ...), or `null` when absent.
fn global(key: &str) -> Value {
    openai().and_then(|o| Reflect::get(&o, &JsValue::from_str(key)).ok()).map(|v| to_json(&v)).unwrap_or(Value::Null)
}

fn method(name: &str) -> Option<(Object, Function)> {
    let openai = openai()?;
    let function = Reflect::get(&openai, &JsValue::from_str(name)).ok()?.dyn_into::<Function>().ok()?;
    Some((openai, function))
}

impl OpenAiBridge {
    /// Posts a follow-up message into the conversation (`sendFollowUpMessage`).
    pub fn send_message(&self, text: &str) -> impl Future<Output = Result<(), String>> + 'static {
        let pending = method("sendFollowUpMessage").map(|(o, f)| f.call1(&o, &to_js(&json!({ "prompt": text }))));
        async move {
            let pending =
                pending.ok_or("the host offers no sendFollowUpMessage")?.map_err(|_| "sendFollowUpMessage threw")?;
            settle(pending).await.map(|_| ()).map_err(|_| "sendFollowUpMessage failed".to_string())
        }
    }
}

impl Host for OpenAiBridge {
    fn tool_input(&self) -> Value {
        global("toolInput")
    }

    fn tool_response_metadata(&self) -> Value {
        global("toolResponseMetadata")
    }

    fn widget_state(&self) -> Value {
        self.written.borrow().clone().unwrap_or_else(|| global("widgetState"))
    }

    fn set_widget_state(&self, state: Value) -> impl Future<Output = ()> {
        self.write_widget_state(state)
    }

    fn stored_idempotency_key(&self, draft_id: &str) -> Option<String> {
        flow::stored_idempotency_key(&self.widget_state(), draft_id).or_else(|| storage::load(draft_id))
    }

    fn call_tool(&self, name: &str, arguments: Map<String, Value>) -> impl Future<Output = Result<ToolResult, String>> {
        let pending =
            method("callTool").map(|(o, f)| f.call2(&o, &JsValue::from_str(name), &to_js(&Value::Object(arguments))));
        async move {
            let pending = pending
                .ok_or_else(|| "the host offers no callTool".to_string())?
                .map_err(|_| "callTool threw".to_string())?;
            let result = settle_in_time(pending).await.map_err(|_| "callTool failed or timed out".to_string())?;
            Ok(rpc::tool_result_from(&to_json(&result)))
        }
    }

    fn open_link(&self, url: &str) -> impl Future<Output = Result<(), String>> {
        let pending = method("openExternal").map(|(o, f)| f.call1(&o, &to_js(&json!({ "href": url }))));
        async move {
            let pending = pending
                .ok_or_else(|| "the host offers no openExternal".to_string())?
                .map_err(|_| "openExternal threw".to_string())?;
            settle_in_time(pending).await.map(|_| ()).map_err(|_| "openExternal failed".to_string())
        }
    }

    fn request_checkout(&self, session: Value) -> impl Future<Output = Result<Value, String>> {
        let pending = method("requestCheckout").map(|(o, f)| f.call1(&o, &to_js(&session)));
        async move {
            let pending = pending
                .ok_or_else(|| "the host offers no requestCheckout".to_string())?
                .map_err(|_| "requestCheckout threw".to_string())?;
            settle(pending).await.map(|answer| to_json(&answer)).map_err(|_| "the payment sheet closed".to_string())
        }
    }

    fn save_view(&self, view: &SavedView) {
        if let Some(view_id) = saved::view_id(&global("toolResponseMetadata")) {
            storage::save_view(&view_id, view);
        }
        let entry = saved::widget_state_entry(view, &global("toolOutput"));
        let current = self.widget_state();
        if current.get(saved::WIDGET_STATE_KEY) != entry.as_ref() {
            wasm_bindgen_futures::spawn_local(self.write_widget_state(saved::with_widget_state_entry(&current, entry)));
        }
    }

    fn forget_saved_views(&self) {
        storage::forget_all();
    }

    /// `requestDisplayMode({mode})`; the mode in effect then comes back through the
    /// `displayMode` global (`openai:set_globals`), which is what the view follows.
    fn request_display_mode(&self, mode: DisplayMode) -> impl Future<Output = Result<DisplayMode, String>> {
        let pending = method("requestDisplayMode").map(|(o, f)| f.call1(&o, &to_js(&json!({ "mode": mode.as_str() }))));
        async move {
            let pending = pending
                .ok_or_else(|| "the host offers no requestDisplayMode".to_string())?
                .map_err(|_| "requestDisplayMode threw".to_string())?;
            let answer = settle_in_time(pending).await.map_err(|_| "requestDisplayMode failed".to_string())?;
            Ok(rpc::display_mode_of(&to_json(&answer)).unwrap_or(mode))
        }
    }
}

impl OpenAiBridge {
    /// `setWidgetState`, mirrored into storage and memory at once; the future waits for the host.
    fn write_widget_state(&self, state: Value) -> impl Future<Output = ()> + use<> {
        storage::sync(&self.widget_state(), &state);
        let pending = method("setWidgetState").and_then(|(o, f)| f.call1(&o, &to_js(&state)).ok());
        *self.written.borrow_mut() = Some(state);
        async move {
            if let Some(pending) = pending {
                let _ = settle_in_time(pending).await;
            }
        }
    }

    /// The screen saved before a reload or re-mount of a view opened for `output`: the one in
    /// storage under the result's viewUUID (complete), else the one in widget state.
    fn saved_view(&self, output: &Value) -> Option<SavedView> {
        saved::view_id(&global("toolResponseMetadata"))
            .and_then(|id| storage::load_view(&id))
            .or_else(|| saved::from_widget_state(&global("widgetState"), output))
    }
}

/// Theme, locale and display mode from `window.openai`, with safe defaults. Full screen is
/// offered where the host has `requestDisplayMode`.
fn openai_render_context() -> RenderContext {
    let theme = global("theme").as_str().map(Theme::parse).unwrap_or_default();
    let locale =
        global("locale").as_str().filter(|l| !l.is_empty()).unwrap_or(RenderContext::DEFAULT_LOCALE).to_string();
    let mode = global("displayMode").as_str().and_then(DisplayMode::parse).unwrap_or_default();
    RenderContext::new(theme, locale)
        .with_host_links(method("openExternal").is_some())
        .with_host_checkout(method("requestCheckout").is_some())
        .with_display(mode, method("requestDisplayMode").is_some())
}

// ---------------------------------------------------------------------------------------------
// MCP Apps: JSON-RPC 2.0 over postMessage
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct McpState {
    /// Requests we sent, waiting for their response: the Promise's (resolve, reject).
    pending: RefCell<Pending<(Function, Function)>>,
    /// `ui/notifications/tool-input` arguments; null until (unless) they arrive.
    tool_input: RefCell<Value>,
    /// `_meta` of the last `ui/notifications/tool-result`.
    meta: RefCell<Value>,
    /// What we last sent with `ui/update-model-context` (the host never hands it back).
    widget_state: RefCell<Value>,
    context: RefCell<HostContext>,
    /// The `ui/initialize` result offered `openLinks`.
    opens_links: Cell<bool>,
    /// The `ui/initialize` result offered `logging`: errors go to the host as `notifications/message`.
    logs: Cell<bool>,
    /// The `viewUUID` of the first tool result: the key of this view's saved screen.
    view_id: RefCell<Option<String>>,
    /// The render context the components read; the bridge updates it when the host's changes.
    render: Cell<Option<RwSignal<RenderContext>>>,
    /// Names of the host's CSS variables set on the root, so a later context can remove them.
    applied_variables: RefCell<Vec<String>>,
}

/// An MCP Apps host (SEP-1865): the parent frame, spoken to in JSON-RPC over `postMessage`.
#[derive(Clone, Default)]
pub struct McpAppsBridge(Rc<McpState>);

fn parent_window() -> Option<web_sys::Window> {
    web_sys::window()?.parent().ok().flatten()
}

/// True inside a frame (`window.parent !== window`).
fn embedded() -> bool {
    match (web_sys::window(), parent_window()) {
        (Some(window), Some(parent)) => !Object::is(&window, &parent),
        _ => false,
    }
}

impl McpAppsBridge {
    fn post(&self, message: &Value) {
        if let Some(parent) = parent_window() {
            // The host's origin is not known to the view (it may sit behind a sandbox proxy).
            let _ = parent.post_message(&to_js(message), "*");
        }
    }

    /// Sends a request; resolves with its `result`, or `Err` with the error's message (also when
    /// the host has not answered within the call timeout: a late answer is then dropped).
    pub fn request(&self, method: &str, params: Value) -> impl Future<Output = Result<Value, String>> + 'static {
        let mut id = 0;
        let promise = Promise::new(&mut |resolve, reject| {
            id = self.0.pending.borrow_mut().add((resolve, reject));
        });
        self.post(&rpc::request(id, method, params));
        let state = self.0.clone();
        after(call_timeout_ms(), move || {
            let waiter = state.pending.borrow_mut().take(id);
            if let Some((_, reject)) = waiter {
                let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(TIMED_OUT));
            }
        });
        async move {
            JsFuture::from(promise)
                .await
                .map(|v| to_json(&v))
                .map_err(|e| e.as_string().unwrap_or_else(|| "request failed".to_string()))
        }
    }

    /// Hands a response to whoever waits for it; responses to ids we never sent are dropped.
    fn answer(&self, id: u64, outcome: Result<Value, String>) {
        let Some((resolve, reject)) = self.0.pending.borrow_mut().take(id) else { return };
        let _ = match outcome {
            Ok(result) => resolve.call1(&JsValue::NULL, &to_js(&result)),
            Err(message) => reject.call1(&JsValue::NULL, &JsValue::from_str(&message)),
        };
    }

    /// Posts a follow-up message into the conversation (`ui/message`).
    pub fn send_message(&self, text: &str) -> impl Future<Output = Result<(), String>> + 'static {
        let pending = self.request(rpc::MESSAGE, rpc::message_params(text));
        async move { pending.await.map(|_| ()) }
    }

    fn render_context(&self) -> RenderContext {
        self.0.context.borrow().render_context().with_host_links(self.0.opens_links.get())
    }

    /// Merges a (partial) host context and applies it: styling to the document, theme, locale
    /// and display mode to the components.
    fn take_context(&self, partial: &Value) {
        self.0.context.borrow_mut().merge(partial);
        let presentation = self.0.context.borrow().presentation();
        apply_presentation(&presentation, &mut self.0.applied_variables.borrow_mut());
        if let Some(ctx) = self.0.render.get() {
            set_if_changed(ctx, self.render_context());
        }
    }
}

/// Applies the host's styling to the document: each variable as a custom property on `<html>`
/// (removing the ones a newer context dropped), the insets as `--gg-safe-*` (the stylesheet pads
/// the root by them), and the font CSS as the text of one `<style>` element (text, never markup).
fn apply_presentation(presentation: &Presentation, applied: &mut Vec<String>) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
    let Some(root) = document.document_element().and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) else {
        return;
    };
    let style = root.style();
    for old in applied.iter() {
        if !presentation.variables.iter().any(|(name, _)| name == old) {
            let _ = style.remove_property(old);
        }
    }
    applied.clear();
    for (name, value) in &presentation.variables {
        if style.set_property(name, value).is_ok() {
            applied.push(name.clone());
        }
    }
    let inset = presentation.safe_area;
    for (name, px) in [
        ("--gg-safe-top", inset.top),
        ("--gg-safe-right", inset.right),
        ("--gg-safe-bottom", inset.bottom),
        ("--gg-safe-left", inset.left),
    ] {
        let _ = style.set_property(name, &format!("{px}px"));
    }
    const FONTS_ID: &str = "gg-host-fonts";
    let element = match (document.get_element_by_id(FONTS_ID), &presentation.fonts_css) {
        (Some(element), _) => Some(element),
        (None, Some(_)) => document.create_element("style").ok().and_then(|element| {
            element.set_id(FONTS_ID);
            let parent = document.query_selector("head").ok().flatten().or_else(|| document.document_element())?;
            parent.append_child(&element).ok()?;
            Some(element)
        }),
        (None, None) => None,
    };
    if let Some(element) = element {
        element.set_text_content(presentation.fonts_css.as_deref());
    }
}

impl Host for McpAppsBridge {
    fn tool_input(&self) -> Value {
        self.0.tool_input.borrow().clone()
    }

    fn tool_response_metadata(&self) -> Value {
        self.0.meta.borrow().clone()
    }

    fn widget_state(&self) -> Value {
        self.0.widget_state.borrow().clone()
    }

    fn set_widget_state(&self, state: Value) -> impl Future<Output = ()> {
        let previous = self.0.widget_state.replace(state.clone());
        storage::sync(&previous, &state);
        let pending = self.request(rpc::UPDATE_MODEL_CONTEXT, rpc::model_context_params(&state));
        async move {
            // A host that refuses the update still leaves the key in memory and storage.
            let _ = pending.await;
        }
    }

    fn stored_idempotency_key(&self, draft_id: &str) -> Option<String> {
        flow::stored_idempotency_key(&self.widget_state(), draft_id).or_else(|| storage::load(draft_id))
    }

    fn call_tool(&self, name: &str, arguments: Map<String, Value>) -> impl Future<Output = Result<ToolResult, String>> {
        let pending = self.request(rpc::TOOLS_CALL, rpc::tools_call_params(name, arguments));
        async move { pending.await.map(|result| rpc::tool_result_from(&result)) }
    }

    fn open_link(&self, url: &str) -> impl Future<Output = Result<(), String>> {
        let pending = self.request(rpc::OPEN_LINK, rpc::open_link_params(url));
        async move { pending.await.map(|_| ()) }
    }

    fn request_display_mode(&self, mode: DisplayMode) -> impl Future<Output = Result<DisplayMode, String>> {
        let pending = self.request(rpc::REQUEST_DISPLAY_MODE, rpc::display_mode_params(mode));
        let bridge = self.clone();
        async move {
            let result = pending.await?;
            let now = rpc::display_mode_of(&result).ok_or_else(|| "the host answered no display mode".to_string())?;
            // The host also announces it with host-context-changed; the answer is enough.
            bridge.take_context(&json!({ "displayMode": now.as_str() }));
            Ok(now)
        }
    }

    fn log(&self, level: LogLevel, data: Value) {
        if self.0.logs.get() {
            self.post(&rpc::notification(rpc::LOG_MESSAGE, rpc::log_params(level, data)));
        }
    }

    fn save_view(&self, view: &SavedView) {
        if let Some(view_id) = self.0.view_id.borrow().as_deref() {
            storage::save_view(view_id, view);
        }
    }

    fn forget_saved_views(&self) {
        storage::forget_all();
    }
}

// ---------------------------------------------------------------------------------------------
// One host type for the controller
// ---------------------------------------------------------------------------------------------

/// Whichever bridge the page offers, as ONE `Host` type: the controller and everything generic
/// over its host are compiled once instead of once per bridge (about 27 KB of wasm before
/// wasm-opt). Each host call's future is the one of the bridge in use, started when awaited (the
/// controller awaits every call at once).
enum AnyBridge {
    OpenAi(OpenAiBridge),
    McpApps(McpAppsBridge),
}

impl Host for AnyBridge {
    fn tool_input(&self) -> Value {
        match self {
            Self::OpenAi(b) => b.tool_input(),
            Self::McpApps(b) => b.tool_input(),
        }
    }

    fn tool_response_metadata(&self) -> Value {
        match self {
            Self::OpenAi(b) => b.tool_response_metadata(),
            Self::McpApps(b) => b.tool_response_metadata(),
        }
    }

    fn widget_state(&self) -> Value {
        match self {
            Self::OpenAi(b) => b.widget_state(),
            Self::McpApps(b) => b.widget_state(),
        }
    }

    async fn set_widget_state(&self, state: Value) {
        match self {
            Self::OpenAi(b) => b.set_widget_state(state).await,
            Self::McpApps(b) => b.set_widget_state(state).await,
        }
    }

    fn stored_idempotency_key(&self, draft_id: &str) -> Option<String> {
        match self {
            Self::OpenAi(b) => b.stored_idempotency_key(draft_id),
            Self::McpApps(b) => b.stored_idempotency_key(draft_id),
        }
    }

    async fn call_tool(&self, name: &str, arguments: Map<String, Value>) -> Result<ToolResult, String> {
        match self {
            Self::OpenAi(b) => b.call_tool(name, arguments).await,
            Self::McpApps(b) => b.call_tool(name, arguments).await,
        }
    }

    async fn open_link(&self, url: &str) -> Result<(), String> {
        match self {
            Self::OpenAi(b) => b.open_link(url).await,
            Self::McpApps(b) => b.open_link(url).await,
        }
    }

    async fn request_display_mode(&self, mode: DisplayMode) -> Result<DisplayMode, String> {
        match self {
            Self::OpenAi(b) => b.request_display_mode(mode).await,
            Self::McpApps(b) => b.request_display_mode(mode).await,
        }
    }

    async fn request_checkout(&self, session: Value) -> Result<Value, String> {
        match self {
            Self::OpenAi(b) => b.request_checkout(session).await,
            Self::McpApps(_) => Err("an MCP Apps host has no payment sheet".to_string()),
        }
    }

    fn log(&self, level: LogLevel, data: Value) {
        match self {
            Self::OpenAi(b) => b.log(level, data),
            Self::McpApps(b) => b.log(level, data),
        }
    }

    fn save_view(&self, saved: &SavedView) {
        match self {
            Self::OpenAi(b) => b.save_view(saved),
            Self::McpApps(b) => b.save_view(saved),
        }
    }

    fn forget_saved_views(&self) {
        storage::forget_all();
    }
}

// ---------------------------------------------------------------------------------------------
// Start-up
// ---------------------------------------------------------------------------------------------

thread_local! {
    /// Runs an action on the controller, whichever host it was built with.
    static DISPATCH: OnceCell<Rc<dyn Fn(Action)>> = const { OnceCell::new() };
    /// The person pressed something since the screen last changed: the next screen takes the
    /// focus that button had (see `keep_focus_on_new_screens`).
    static ACTED: Cell<bool> = const { Cell::new(false) };
}

/// Runs an action without blocking the click handler (the callback must be `Send`, so it
/// reaches the `Rc` controller through this thread-local).
fn dispatch(action: Action) {
    // Opening a link or asking for full screen leaves the screen (and the focus) where it is.
    if !matches!(action, Action::OpenLink { .. } | Action::SetDisplayMode { .. }) {
        ACTED.with(|a| a.set(true));
    }
    if let Some(run) = DISPATCH.with(|d| d.get().cloned()) {
        run(action);
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
    keep_focus_on_new_screens(state);
    Some(())
}

/// When the person's press changes the screen (Choose opens the confirmation, Confirm shows the
/// order), the button that had focus is gone and focus would fall to the page: move it to the
/// new screen's heading instead, so a keyboard or screen-reader user goes on from there. A screen
/// the host brings (a tool result) never takes focus, and focus that still exists is left alone.
fn keep_focus_on_new_screens(state: RwSignal<ViewState>) {
    Effect::new(move |previous: Option<&'static str>| {
        let kind = state.with(|s| s.kind());
        // A press often shows loading first (Choose prepares the draft): the screen it leads to
        // is the one after that, so loading never takes the press.
        if previous.is_some_and(|p| p != kind) && kind != "loading" && ACTED.with(|a| a.replace(false)) {
            // After this render: the new markup is in the document.
            after(0, || {
                let Some(document) = web_sys::window().and_then(|w| w.document()) else { return };
                let lost = document.active_element().is_none_or(|e| e.tag_name().eq_ignore_ascii_case("body"));
                if let (true, Some(title)) = (lost, document.get_element_by_id("gg-title")) {
                    let _ = title.set_attribute("tabindex", "-1");
                    if let Ok(title) = title.dyn_into::<web_sys::HtmlElement>() {
                        let _ = title.focus();
                    }
                }
            });
        }
        kind
    });
}

/// Builds the controller over `host`, lets `prime` give it what the host already said, and mounts
/// the components; the same for every host. Priming before mounting makes the first render the
/// current state, so taking over the server-rendered first paint shows no loading frame.
fn run(
    host: AnyBridge,
    ctx: RwSignal<RenderContext>,
    prime: impl FnOnce(&Rc<Controller<AnyBridge>>),
) -> Option<Rc<Controller<AnyBridge>>> {
    let state = RwSignal::new(ViewState::Loading);
    let controller = Rc::new(Controller::new(host, move |s: &ViewState| state.set(s.clone())));
    let for_actions = controller.clone();
    DISPATCH.with(|d| {
        let _ = d.set(Rc::new(move |action| {
            let controller = for_actions.clone();
            wasm_bindgen_futures::spawn_local(async move { controller.handle(action).await });
        }));
    });
    prime(&controller);
    mount(state, ctx, Callback::new(dispatch))?;
    Some(controller)
}

fn set_if_changed(ctx: RwSignal<RenderContext>, next: RenderContext) {
    if ctx.with_untracked(|c| *c != next) {
        ctx.set(next);
    }
}

/// Starts the widget on whichever bridge the page offers, once the packed document's first-paint
/// runtime (`runtime/fallback.js`) hands the view over: it may already show the server-rendered
/// state and, on MCP Apps, hold the session (the `ui/initialize` answer and the notifications
/// since). Without that runtime (a page of its own) it starts at once.
pub fn start() {
    let handover = web_sys::window()
        .and_then(|w| Reflect::get(&w, &JsValue::from_str(HANDOVER)).ok())
        .and_then(|f| f.dyn_into::<Function>().ok());
    match handover {
        Some(handover) => {
            let take = Closure::once_into_js(start_with);
            let _ = handover.call1(&JsValue::NULL, &take);
        }
        None => start_with(JsValue::NULL),
    }
}

/// The first-paint runtime's hand-over function (see `start`).
const HANDOVER: &str = "giftgeniusHandover";

fn start_with(handover: JsValue) {
    if openai().is_none() && embedded() {
        start_mcp_apps(&handover);
    } else {
        start_openai();
    }
}

fn start_openai() {
    let ctx = RwSignal::new(openai_render_context());
    // The first tool output is the one this view was opened for (a re-mount gets it again):
    // a screen saved for it is shown instead, once.
    let opened = Cell::new(false);
    let show = move |controller: &Controller<AnyBridge>| {
        let output = global("toolOutput");
        if !opened.get() && !output.is_null() {
            opened.set(true);
            if let AnyBridge::OpenAi(bridge) = controller.host()
                && let Some(saved) = bridge.saved_view(&output)
            {
                controller.restore(saved, &output);
                return;
            }
        }
        controller.show_tool_output(&output);
    };
    let host = AnyBridge::OpenAi(OpenAiBridge::default());
    let Some(controller) = run(host, ctx, |c| show(c)) else { return };

    // The host announces changed globals (theme, locale, toolOutput once the tool finished...);
    // we re-read them instead of trusting the event's partial `detail.globals`.
    let on_globals = Closure::<dyn Fn(web_sys::Event)>::new(move |_event: web_sys::Event| {
        set_if_changed(ctx, openai_render_context());
        show(&controller);
    });
    if let Some(window) = web_sys::window() {
        let _ = window.add_event_listener_with_callback(SET_GLOBALS_EVENT, on_globals.as_ref().unchecked_ref());
    }
    // The listener lives as long as the page.
    on_globals.forget();
}

/// What one host message does to the view (already known to come from the parent frame).
fn on_host_message(bridge: &McpAppsBridge, controller: &Controller<AnyBridge>, message: &Value) {
    match rpc::parse(message) {
        Incoming::Response { id, outcome } => bridge.answer(id, outcome),
        Incoming::ToolInput(arguments) => {
            controller.show_input_so_far(&arguments);
            *bridge.0.tool_input.borrow_mut() = Value::Object(arguments);
        }
        Incoming::ToolInputPartial(arguments) => controller.show_input_so_far(&arguments),
        Incoming::ToolCancelled { reason } => {
            let tool = bridge.0.context.borrow().tool_name();
            controller.show_tool_cancelled(reason, tool);
        }
        Incoming::ToolResult(result) => {
            // The first result is the one this view was opened for (the host sends it again
            // after a reload): its viewUUID names the screen saved before the reload.
            let first = bridge.0.view_id.borrow().is_none() && bridge.0.meta.borrow().is_null();
            let saved = if first {
                let view_id = saved::view_id(&result.meta);
                let saved = view_id.as_deref().and_then(storage::load_view);
                *bridge.0.view_id.borrow_mut() = view_id;
                saved
            } else {
                None
            };
            *bridge.0.meta.borrow_mut() = result.meta;
            match saved {
                Some(saved) => controller.restore(saved, &result.structured_content),
                None => controller.show_tool_output(&result.structured_content),
            }
        }
        Incoming::HostContext(partial) => bridge.take_context(&partial),
        Incoming::Request { id, method } => bridge.post(&rpc::reply(&id, &method)),
        Incoming::Ignored => {}
    }
}

impl McpAppsBridge {
    /// Takes in the host's `ui/initialize` answer: its capabilities and its context.
    fn initialized(&self, result: &Value) {
        self.0.opens_links.set(rpc::host_opens_links(result));
        self.0.logs.set(rpc::host_accepts_logs(result));
        self.take_context(result.get("hostContext").unwrap_or(&Value::Null));
    }
}

/// `handover`: null, or what the first-paint runtime hands over: `init` (its `ui/initialize`
/// answer; null if the host gave none), `notes` (every host notification since, in order) and
/// `nextId` (the first request id it has not used).
fn start_mcp_apps(handover: &JsValue) {
    let Some(window) = web_sys::window() else { return };
    let field = |key: &str| Reflect::get(handover, &JsValue::from_str(key)).ok().map(|v| to_json(&v));
    let taken = handover.is_object();
    let init = field("init").filter(Value::is_object);
    let notes = field("notes").unwrap_or(Value::Null);
    let bridge = McpAppsBridge::default();
    if let Some(next_id) = field("nextId").as_ref().and_then(Value::as_u64) {
        bridge.0.pending.borrow_mut().continue_from(next_id);
    }
    let ctx = RwSignal::new(bridge.render_context());
    bridge.0.render.set(Some(ctx));
    let Some(controller) = run(AnyBridge::McpApps(bridge.clone()), ctx, |controller| {
        if let Some(init) = &init {
            bridge.initialized(init);
        }
        for note in notes.as_array().into_iter().flatten() {
            on_host_message(&bridge, controller, note);
        }
    }) else {
        return;
    };

    let on_message_bridge = bridge.clone();
    let on_message = Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |event: web_sys::MessageEvent| {
        // Only the parent frame is the host; anything else posting to us is ignored.
        let from_parent = match (event.source(), parent_window()) {
            (Some(source), Some(parent)) => Object::is(&source, &parent),
            _ => false,
        };
        if from_parent {
            on_host_message(&on_message_bridge, &controller, &to_json(&event.data()));
        }
    });
    let _ = window.add_event_listener_with_callback("message", on_message.as_ref().unchecked_ref());
    on_message.forget();

    if taken && init.is_some() {
        // The first-paint runtime already initialized (and said `initialized`) for this view.
        report_size(bridge);
        return;
    }
    wasm_bindgen_futures::spawn_local(async move {
        match bridge.request(rpc::INITIALIZE, rpc::initialize_params()).await {
            Ok(result) => {
                bridge.initialized(&result);
                bridge.post(&rpc::notification(rpc::INITIALIZED, json!({})));
                report_size(bridge);
            }
            Err(message) => {
                web_sys::console::error_1(&JsValue::from_str(&format!("giftgenius: ui/initialize failed: {message}")))
            }
        }
    });
}

/// Tells the host our content size whenever it changes (`ui/notifications/size-changed`), so a
/// host with a flexible-height container can fit the frame to it.
fn report_size(bridge: McpAppsBridge) {
    let Some(element) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element()) else { return };
    let last = Cell::new((0i64, 0i64));
    let measured = element.clone();
    let on_resize = Closure::<dyn Fn()>::new(move || {
        let rect = measured.get_bounding_client_rect();
        let size = (rect.width().ceil() as i64, rect.height().ceil() as i64);
        if size != last.replace(size) {
            bridge.post(&rpc::notification(rpc::SIZE_CHANGED, json!({ "width": size.0, "height": size.1 })));
        }
    });
    if let Ok(observer) = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()) {
        observer.observe(&element);
        on_resize.forget();
    }
}
