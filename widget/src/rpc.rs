//! The MCP Apps bridge's wire format (SEP-1865, protocol version 2026-01-26), kept pure.
//!
//! The view talks JSON-RPC 2.0 to `window.parent` over `postMessage`. Everything that decides
//! *what* goes on the wire or what an incoming message means lives here and is unit-tested
//! natively; `bridge.rs` only moves these values in and out of the browser.
//!
//! Lifecycle: the view sends `ui/initialize` (request); the response carries `hostCapabilities`
//! and `hostContext` (theme, locale, styles, safe area, display modes, ...); the view then sends
//! `ui/notifications/initialized`. The host sends `ui/notifications/tool-input-partial` (0..n,
//! while the model streams arguments), `ui/notifications/tool-input` (`params.arguments`), then
//! `ui/notifications/tool-result` (`params` = a CallToolResult) or
//! `ui/notifications/tool-cancelled` (`params.reason`), and `ui/notifications/host-context-changed`
//! (a partial context to merge). The view calls `tools/call`, `ui/message`,
//! `ui/update-model-context`, `ui/open-link` and `ui/request-display-mode`, and logs to a host
//! that accepts it with MCP's own `notifications/message`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::context::{DisplayMode, RenderContext, Theme};
use crate::controller::ToolResult;
use giftgenius_types::ToolName;

/// The MCP Apps protocol version this view speaks.
pub const PROTOCOL_VERSION: &str = "2026-01-26";

pub const INITIALIZE: &str = "ui/initialize";
pub const INITIALIZED: &str = "ui/notifications/initialized";
pub const TOOL_INPUT: &str = "ui/notifications/tool-input";
pub const TOOL_INPUT_PARTIAL: &str = "ui/notifications/tool-input-partial";
pub const TOOL_CANCELLED: &str = "ui/notifications/tool-cancelled";
pub const TOOL_RESULT: &str = "ui/notifications/tool-result";
pub const HOST_CONTEXT_CHANGED: &str = "ui/notifications/host-context-changed";
pub const SIZE_CHANGED: &str = "ui/notifications/size-changed";
pub const TOOLS_CALL: &str = "tools/call";
pub const MESSAGE: &str = "ui/message";
pub const UPDATE_MODEL_CONTEXT: &str = "ui/update-model-context";
pub const RESOURCE_TEARDOWN: &str = "ui/resource-teardown";
pub const PING: &str = "ping";
pub const OPEN_LINK: &str = "ui/open-link";
pub const REQUEST_DISPLAY_MODE: &str = "ui/request-display-mode";
/// MCP's logging notification, which MCP Apps reuses for a view's log lines to its host.
pub const LOG_MESSAGE: &str = "notifications/message";

/// JSON-RPC "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;

/// The view's name in `appInfo` (the same string the no-WebAssembly bootstrap sends).
pub const APP_NAME: &str = "giftgenius-widget";

/// `params` of our `ui/initialize` request.
pub fn initialize_params() -> Value {
    json!({
        "appInfo": { "name": APP_NAME, "version": env!("CARGO_PKG_VERSION") },
        "appCapabilities": { "availableDisplayModes": ["inline", "fullscreen"] },
        "protocolVersion": PROTOCOL_VERSION,
    })
}

/// A request (has an id, expects a response).
pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// A notification (no id, no response).
pub fn notification(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "method": method, "params": params })
}

/// `tools/call` params.
pub fn tools_call_params(name: &str, arguments: Map<String, Value>) -> Value {
    json!({ "name": name, "arguments": arguments })
}

/// `ui/message` params: a user-role text message for the chat (content is a ContentBlock list).
pub fn message_params(text: &str) -> Value {
    json!({ "role": "user", "content": [{ "type": "text", "text": text }] })
}

/// `ui/update-model-context` params: the widget state as structured content.
///
/// Each update replaces the previous one, so the whole state goes every time.
pub fn model_context_params(widget_state: &Value) -> Value {
    let state = match widget_state {
        Value::Object(_) => widget_state.clone(),
        _ => json!({}),
    };
    json!({ "structuredContent": state })
}

/// A tool result (CallToolResult, or ChatGPT's callTool answer) as the controller wants it.
pub fn tool_result_from(result: &Value) -> ToolResult {
    ToolResult {
        structured_content: result.get("structuredContent").cloned().unwrap_or(Value::Null),
        meta: result.get("_meta").cloned().unwrap_or(Value::Null),
    }
}

/// What one incoming message means to the view.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to one of our requests.
    Response { id: u64, outcome: Result<Value, String> },
    /// `ui/notifications/tool-input`: the (complete) arguments of the tool call.
    ToolInput(Map<String, Value>),
    /// `ui/notifications/tool-input-partial`: the arguments streamed so far (may change, may
    /// be cut anywhere: for showing progress only).
    ToolInputPartial(Map<String, Value>),
    /// `ui/notifications/tool-cancelled`: the tool call will have no result. The host's reason,
    /// trimmed to [`MAX_REASON`] characters, if it gave one.
    ToolCancelled { reason: Option<String> },
    /// `ui/notifications/tool-result`: the result the host rendered us for.
    ToolResult(ToolResult),
    /// `ui/notifications/host-context-changed`: a partial context to merge.
    HostContext(Value),
    /// A request from the host; it must be answered (see [`reply`]).
    Request { id: Value, method: String },
    /// Anything else: not JSON-RPC 2.0, notifications we do not use, responses to ids we
    /// never sent (those are dropped by the caller when no request is pending).
    Ignored,
}

/// Reads one message posted to the window (already known to come from `window.parent`).
pub fn parse(message: &Value) -> Incoming {
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Incoming::Ignored;
    }
    let id = message.get("id").filter(|id| !id.is_null());
    match (message.get("method").and_then(Value::as_str), id) {
        (Some(method), Some(id)) => Incoming::Request { id: id.clone(), method: method.to_string() },
        (Some(method), None) => {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            match method {
                TOOL_INPUT => Incoming::ToolInput(arguments_of(&params)),
                TOOL_INPUT_PARTIAL => Incoming::ToolInputPartial(arguments_of(&params)),
                TOOL_CANCELLED => Incoming::ToolCancelled { reason: reason_of(&params) },
                TOOL_RESULT if params.is_object() => Incoming::ToolResult(tool_result_from(&params)),
                HOST_CONTEXT_CHANGED if params.is_object() => Incoming::HostContext(params),
                _ => Incoming::Ignored,
            }
        }
        (None, Some(id)) => {
            let Some(id) = id.as_u64() else { return Incoming::Ignored };
            let outcome = match (message.get("result"), message.get("error")) {
                (_, Some(error)) if !error.is_null() => Err(error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    // Not the error's JSON text: printing it would put a JSON printer in the wasm.
                    .unwrap_or_else(|| "the host answered with an error".to_string())),
                (Some(result), _) => Ok(result.clone()),
                (None, _) => Ok(Value::Null),
            };
            Incoming::Response { id, outcome }
        }
        (None, None) => Incoming::Ignored,
    }
}

fn arguments_of(params: &Value) -> Map<String, Value> {
    match params.get("arguments") {
        Some(Value::Object(arguments)) => arguments.clone(),
        _ => Map::new(),
    }
}

/// The longest cancellation reason the view shows (the host's free text).
pub const MAX_REASON: usize = 200;

fn reason_of(params: &Value) -> Option<String> {
    let reason = params.get("reason")?.as_str()?;
    let clipped: String = reason.trim().chars().filter(|c| !c.is_control()).take(MAX_REASON).collect();
    (!clipped.is_empty()).then_some(clipped)
}

/// The response to a request from the host: `ping` and `ui/resource-teardown` succeed with
/// `{}`; anything else is "method not found" (a view exposes no tools).
pub fn reply(id: &Value, method: &str) -> Value {
    match method {
        PING | RESOURCE_TEARDOWN => json!({ "jsonrpc": "2.0", "id": id, "result": {} }),
        _ => json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": { "code": METHOD_NOT_FOUND, "message": format!("method not found: {method}") },
        }),
    }
}

/// Requests waiting for their response, by id. Ids start at 1 and never repeat.
#[derive(Debug)]
pub struct Pending<T> {
    next_id: u64,
    waiting: BTreeMap<u64, T>,
}

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Self { next_id: 1, waiting: BTreeMap::new() }
    }
}

impl<T> Pending<T> {
    /// Registers a waiter and returns the id to send the request with.
    pub fn add(&mut self, waiter: T) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.waiting.insert(id, waiter);
        id
    }

    /// Sends the next requests with ids from `next_id` on: ids the no-WebAssembly runtime already
    /// used before it handed the view over (its late answers must not meet a waiter here).
    pub fn continue_from(&mut self, next_id: u64) {
        self.next_id = self.next_id.max(next_id);
    }

    /// The waiter for a response, once; `None` for ids we never sent or already answered.
    pub fn take(&mut self, id: u64) -> Option<T> {
        self.waiting.remove(&id)
    }

    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

/// The host context as last told: the `ui/initialize` result's `hostContext`, with every
/// `host-context-changed` merged over it (top-level fields replace, as the spec says).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostContext(Map<String, Value>);

impl HostContext {
    pub fn merge(&mut self, partial: &Value) {
        if let Value::Object(fields) = partial {
            for (key, value) in fields {
                self.0.insert(key.clone(), value.clone());
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// Theme, locale and display for rendering, with the same safe defaults as the ChatGPT
    /// bridge. The full-screen toggle needs the host to list `fullscreen` among its
    /// `availableDisplayModes` (we declare it among ours in [`initialize_params`]).
    pub fn render_context(&self) -> RenderContext {
        let theme = self.0.get("theme").and_then(Value::as_str).map(Theme::parse).unwrap_or_default();
        let locale = self
            .0
            .get("locale")
            .and_then(Value::as_str)
            .filter(|l| !l.is_empty())
            .unwrap_or(RenderContext::DEFAULT_LOCALE);
        RenderContext::new(theme, locale).with_display(self.display_mode(), self.offers(DisplayMode::Fullscreen))
    }

    /// The current display mode; inline unless the host says otherwise.
    pub fn display_mode(&self) -> DisplayMode {
        self.0.get("displayMode").and_then(Value::as_str).and_then(DisplayMode::parse).unwrap_or_default()
    }

    /// Whether the host lists `mode` in `availableDisplayModes` (the spec: check before asking).
    pub fn offers(&self, mode: DisplayMode) -> bool {
        self.0
            .get("availableDisplayModes")
            .and_then(Value::as_array)
            .is_some_and(|modes| modes.iter().any(|m| m.as_str() == Some(mode.as_str())))
    }

    /// The tool whose call opened this view (`toolInfo.tool.name`), if the host says and it is ours.
    pub fn tool_name(&self) -> Option<ToolName> {
        self.0.get("toolInfo")?.get("tool")?.get("name")?.as_str().and_then(ToolName::parse)
    }

    /// What the host asks the document to look like: its CSS variables, font CSS and
    /// safe-area insets, checked (see [`Presentation`]).
    pub fn presentation(&self) -> Presentation {
        let styles = self.0.get("styles");
        let variables = styles
            .and_then(|s| s.get("variables"))
            .and_then(Value::as_object)
            .map(|vars| {
                vars.iter()
                    .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.trim().to_string())))
                    .filter(|(name, value)| style_variable_ok(name, value))
                    .take(MAX_STYLE_VARIABLES)
                    .collect()
            })
            .unwrap_or_default();
        let fonts_css = styles
            .and_then(|s| s.pointer("/css/fonts"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|css| !css.is_empty() && css.len() <= MAX_FONTS_CSS)
            .map(str::to_string);
        let inset = |side: &str| {
            self.0
                .get("safeAreaInsets")
                .and_then(|i| i.get(side))
                .and_then(Value::as_f64)
                .filter(|px| px.is_finite())
                .map(|px| px.clamp(0.0, MAX_INSET_PX).round() as u32)
                .unwrap_or(0)
        };
        Presentation {
            variables,
            fonts_css,
            safe_area: SafeArea {
                top: inset("top"),
                right: inset("right"),
                bottom: inset("bottom"),
                left: inset("left"),
            },
        }
    }
}

/// How many host style variables are applied at most (the spec defines about 80).
pub const MAX_STYLE_VARIABLES: usize = 200;
/// The longest host font CSS applied (it is `@font-face`/`@import` rules, a few KB at most).
pub const MAX_FONTS_CSS: usize = 64 * 1024;
/// The largest safe-area inset honoured, in CSS pixels.
const MAX_INSET_PX: f64 = 400.0;

/// A custom property the view may set on its root: a `--name` of letters, digits, `-` and `_`,
/// and a short value with no control characters. Set through `style.setProperty`, so a value
/// cannot add other declarations; the checks keep junk out of the document all the same.
fn style_variable_ok(name: &str, value: &str) -> bool {
    let name_ok = name.len() > 2
        && name.len() <= 64
        && name.starts_with("--")
        && name[2..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    name_ok && !value.is_empty() && value.len() <= 512 && !value.chars().any(char::is_control)
}

/// Safe-area insets in whole CSS pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SafeArea {
    pub top: u32,
    pub right: u32,
    pub bottom: u32,
    pub left: u32,
}

/// The host's styling, as the bridge applies it to the document: every variable as a custom
/// property on the root element (the stylesheet reads the spec's names with our own values as
/// fallbacks), the font CSS in one `<style>` element, and the insets as `--gg-safe-*` padding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Presentation {
    pub variables: Vec<(String, String)>,
    pub fonts_css: Option<String>,
    pub safe_area: SafeArea,
}

/// `ui/request-display-mode` params.
pub fn display_mode_params(mode: DisplayMode) -> Value {
    json!({ "mode": mode.as_str() })
}

/// The mode a `ui/request-display-mode` result says is now in effect (the host may refuse and
/// answer its current mode).
pub fn display_mode_of(result: &Value) -> Option<DisplayMode> {
    result.get("mode").and_then(Value::as_str).and_then(DisplayMode::parse)
}

/// Whether the `ui/initialize` result says the host accepts log messages (`hostCapabilities.logging`).
pub fn host_accepts_logs(initialize_result: &Value) -> bool {
    initialize_result.pointer("/hostCapabilities/logging").is_some_and(|v| !v.is_null())
}

/// Severity of a log line to the host (MCP's syslog levels; the view uses these three).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Info,
    Warning,
    Error,
}

impl LogLevel {
    pub const fn as_str(self) -> &'static str {
        match self {
            LogLevel::Info => "info",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
        }
    }
}

/// `notifications/message` params: one log line from the view, under our app's name.
pub fn log_params(level: LogLevel, data: Value) -> Value {
    json!({ "level": level.as_str(), "logger": APP_NAME, "data": data })
}

/// `ui/open-link` params: the absolute URL the host should open.
pub fn open_link_params(url: &str) -> Value {
    json!({ "url": url })
}

/// Whether the `ui/initialize` result says the host opens links (`hostCapabilities.openLinks`).
pub fn host_opens_links(initialize_result: &Value) -> bool {
    initialize_result.pointer("/hostCapabilities/openLinks").is_some_and(|v| !v.is_null())
}

/// The `localStorage`/`sessionStorage` key under which a draft's idempotency key is kept, so a
/// reload in the confirm state reuses it even when the host gives no widget state back.
/// The no-WebAssembly bootstrap uses the same key.
pub fn checkout_storage_key(draft_id: &str) -> String {
    format!("{}{draft_id}", giftgenius_types::wire::CHECKOUT_STORAGE_PREFIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_links_only_when_the_host_says_so() {
        assert!(host_opens_links(&json!({"hostCapabilities": {"openLinks": {}}})));
        assert!(!host_opens_links(&json!({"hostCapabilities": {}})));
        assert!(!host_opens_links(&json!({"hostCapabilities": {"openLinks": null}})));
        assert_eq!(open_link_params("https://a.example/x"), json!({"url": "https://a.example/x"}));
    }

    #[test]
    fn initialize_request_has_the_spec_fields() {
        let msg = request(1, INITIALIZE, initialize_params());
        assert_eq!(msg["jsonrpc"], "2.0");
        assert_eq!(msg["id"], 1);
        assert_eq!(msg["method"], "ui/initialize");
        assert_eq!(msg["params"]["protocolVersion"], "2026-01-26");
        assert_eq!(msg["params"]["appInfo"]["name"], APP_NAME);
        assert!(msg["params"]["appInfo"]["version"].is_string());
        assert!(msg["params"]["appCapabilities"].is_object());
        let done = notification(INITIALIZED, json!({}));
        assert_eq!(done, json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}));
        assert!(done.get("id").is_none());
    }

    #[test]
    fn responses_match_by_id_and_errors_become_err() {
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "id": 3, "result": {"hostContext": {"theme": "dark"}}})),
            Incoming::Response { id: 3, outcome: Ok(json!({"hostContext": {"theme": "dark"}})) }
        );
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32000, "message": "denied"}})),
            Incoming::Response { id: 4, outcome: Err("denied".into()) }
        );
        // Someone else's string ids are not ours.
        assert_eq!(parse(&json!({"jsonrpc": "2.0", "id": "x", "result": {}})), Incoming::Ignored);
    }

    #[test]
    fn notifications_are_understood() {
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "method": TOOL_INPUT, "params": {"arguments": {"budget_max": 30}}})),
            Incoming::ToolInput(json!({"budget_max": 30}).as_object().cloned().unwrap_or_default())
        );
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "method": TOOL_INPUT, "params": {}})),
            Incoming::ToolInput(Map::new())
        );
        let result = json!({"content": [], "structuredContent": {"v": 2}, "_meta": {"giftgenius/html": "<p>x</p>"}});
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "method": TOOL_RESULT, "params": result})),
            Incoming::ToolResult(ToolResult {
                structured_content: json!({"v": 2}),
                meta: json!({"giftgenius/html": "<p>x</p>"})
            })
        );
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "method": HOST_CONTEXT_CHANGED, "params": {"theme": "dark"}})),
            Incoming::HostContext(json!({"theme": "dark"}))
        );
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "method": "ui/notifications/whatever-comes-next", "params": {}})),
            Incoming::Ignored
        );
    }

    #[test]
    fn partial_input_and_cancellation_are_understood() {
        assert_eq!(
            parse(
                &json!({"jsonrpc": "2.0", "method": TOOL_INPUT_PARTIAL, "params": {"arguments": {"interests": ["hik"]}}})
            ),
            Incoming::ToolInputPartial(json!({"interests": ["hik"]}).as_object().cloned().unwrap_or_default())
        );
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "method": TOOL_INPUT_PARTIAL, "params": {"arguments": "junk"}})),
            Incoming::ToolInputPartial(Map::new())
        );
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "method": TOOL_CANCELLED, "params": {"reason": "  user stopped it \n"}})),
            Incoming::ToolCancelled { reason: Some("user stopped it".into()) }
        );
        // The reason is optional, and whatever it holds is clipped to plain text of bounded length.
        for params in [json!({}), json!({"reason": ""}), json!({"reason": 5}), json!(null)] {
            assert_eq!(
                parse(&json!({"jsonrpc": "2.0", "method": TOOL_CANCELLED, "params": params})),
                Incoming::ToolCancelled { reason: None },
                "{params}"
            );
        }
        match parse(&json!({"jsonrpc": "2.0", "method": TOOL_CANCELLED, "params": {"reason": "x".repeat(1000)}})) {
            Incoming::ToolCancelled { reason: Some(r) } => assert_eq!(r.chars().count(), MAX_REASON),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn display_modes_come_from_the_host_context_and_the_answer() {
        let mut ctx = HostContext::default();
        assert_eq!(ctx.render_context().display_mode, DisplayMode::Inline);
        assert!(!ctx.render_context().can_fullscreen, "no toggle unless the host offers fullscreen");
        ctx.merge(&json!({"availableDisplayModes": ["inline", "fullscreen"], "displayMode": "fullscreen"}));
        let render = ctx.render_context();
        assert!(render.can_fullscreen);
        assert_eq!(render.display_mode, DisplayMode::Fullscreen);
        assert_eq!(render.display_attribute(), Some("fullscreen"));
        ctx.merge(&json!({"availableDisplayModes": ["inline", "pip"], "displayMode": "sideways"}));
        assert!(!ctx.render_context().can_fullscreen);
        assert_eq!(ctx.display_mode(), DisplayMode::Inline, "an unknown mode is read as inline");
        assert!(ctx.offers(DisplayMode::Pip));
        assert_eq!(
            request(5, REQUEST_DISPLAY_MODE, display_mode_params(DisplayMode::Fullscreen))["params"],
            json!({"mode": "fullscreen"})
        );
        assert_eq!(display_mode_of(&json!({"mode": "inline"})), Some(DisplayMode::Inline));
        assert_eq!(display_mode_of(&json!({"mode": "huge"})), None);
        assert_eq!(display_mode_of(&json!({})), None);
        assert_eq!(initialize_params()["appCapabilities"]["availableDisplayModes"], json!(["inline", "fullscreen"]));
    }

    #[test]
    fn the_tool_that_opened_the_view_is_read_from_tool_info() {
        let mut ctx = HostContext::default();
        assert_eq!(ctx.tool_name(), None);
        ctx.merge(&json!({"toolInfo": {"id": 3, "tool": {"name": "suggest_gifts", "inputSchema": {}}}}));
        assert_eq!(ctx.tool_name(), Some(ToolName::SuggestGifts));
        ctx.merge(&json!({"toolInfo": {"tool": {"name": "someone_elses_tool"}}}));
        assert_eq!(ctx.tool_name(), None);
    }

    #[test]
    fn host_styles_fonts_and_safe_area_are_checked_before_they_are_applied() {
        let mut ctx = HostContext::default();
        assert_eq!(ctx.presentation(), Presentation::default());
        ctx.merge(&json!({
            "styles": {
                "variables": {
                    "--color-background-primary": "light-dark(#ffffff, #171717)",
                    "--font-sans": " \"Preview Sans\", sans-serif ",
                    "--color-text-primary": null,
                    "color": "red",
                    "--bad name": "x",
                    "--control": "a\u{0}b",
                    "--empty": "",
                },
                "css": { "fonts": "@font-face { font-family: \"Preview Sans\"; src: local(\"DejaVu Sans\"); }" }
            },
            "safeAreaInsets": { "top": 10.4, "right": -5, "bottom": 1e9, "left": "7" }
        }));
        let p = ctx.presentation();
        assert_eq!(
            p.variables,
            vec![
                ("--color-background-primary".to_string(), "light-dark(#ffffff, #171717)".to_string()),
                ("--font-sans".to_string(), "\"Preview Sans\", sans-serif".to_string()),
            ]
        );
        assert!(p.fonts_css.as_deref().is_some_and(|css| css.starts_with("@font-face")));
        assert_eq!(p.safe_area, SafeArea { top: 10, right: 0, bottom: 400, left: 0 });
        // A later styles object replaces the earlier one as a whole (top-level merge).
        ctx.merge(&json!({"styles": {"css": {"fonts": "x".repeat(MAX_FONTS_CSS + 1)}}}));
        assert_eq!(ctx.presentation().variables, vec![]);
        assert_eq!(ctx.presentation().fonts_css, None, "oversized font CSS is not applied");
    }

    #[test]
    fn log_lines_go_to_hosts_that_accept_them() {
        assert!(host_accepts_logs(&json!({"hostCapabilities": {"logging": {}}})));
        assert!(!host_accepts_logs(&json!({"hostCapabilities": {}})));
        let line = notification(LOG_MESSAGE, log_params(LogLevel::Error, json!({"event": "tool_call_failed"})));
        assert_eq!(
            line,
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "error", "logger": APP_NAME, "data": {"event": "tool_call_failed"}}})
        );
        assert_eq!(LogLevel::Warning.as_str(), "warning");
        assert_eq!(LogLevel::Info.as_str(), "info");
    }

    #[test]
    fn junk_is_ignored() {
        for junk in [
            json!(null),
            json!("hi"),
            json!({"type": "openai:set_globals"}),
            json!({"jsonrpc": "1.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0"}),
        ] {
            assert_eq!(parse(&junk), Incoming::Ignored, "{junk}");
        }
    }

    #[test]
    fn host_requests_get_answers() {
        assert_eq!(
            parse(&json!({"jsonrpc": "2.0", "id": 9, "method": "ui/resource-teardown", "params": {}})),
            Incoming::Request { id: json!(9), method: RESOURCE_TEARDOWN.into() }
        );
        assert_eq!(reply(&json!(9), RESOURCE_TEARDOWN), json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
        assert_eq!(reply(&json!("p"), PING)["result"], json!({}));
        assert_eq!(reply(&json!(2), "tools/list")["error"]["code"], METHOD_NOT_FOUND);
    }

    #[test]
    fn pending_ids_are_unique_and_answered_once() {
        let mut pending = Pending::default();
        let a = pending.add("a");
        let b = pending.add("b");
        assert_ne!(a, b);
        assert_eq!(pending.take(b), Some("b"));
        assert_eq!(pending.take(b), None);
        assert_eq!(pending.take(99), None);
        assert_eq!(pending.len(), 1);
        assert_eq!(pending.take(a), Some("a"));
        assert!(pending.is_empty());
        assert!(pending.add("c") > b);
    }

    #[test]
    fn after_a_hand_over_ids_continue_past_the_runtime_s_own() {
        let mut pending = Pending::default();
        pending.continue_from(3);
        assert_eq!(pending.add("x"), 3);
        // Never backwards: ids already sent here stay unique too.
        pending.continue_from(1);
        assert_eq!(pending.add("y"), 4);
    }

    #[test]
    fn host_context_merges_partial_updates() {
        let mut ctx = HostContext::default();
        assert_eq!(ctx.render_context(), RenderContext::default());
        ctx.merge(&json!({"theme": "dark", "locale": "de-DE", "displayMode": "inline"}));
        assert_eq!(ctx.render_context(), RenderContext::new(Theme::Dark, "de-DE"));
        ctx.merge(&json!({"theme": "light"}));
        assert_eq!(ctx.render_context(), RenderContext::new(Theme::Light, "de-DE"));
        assert_eq!(ctx.get("displayMode"), Some(&json!("inline")));
        ctx.merge(&json!("junk"));
        assert_eq!(ctx.render_context().locale, "de-DE");
    }

    #[test]
    fn outgoing_params() {
        let args = json!({"gift_id": "g_1"}).as_object().cloned().unwrap_or_default();
        assert_eq!(
            tools_call_params("prepare_order", args),
            json!({"name": "prepare_order", "arguments": {"gift_id": "g_1"}})
        );
        assert_eq!(message_params("hi"), json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}));
        let state = json!({"checkout": {"draft_id": "d_1", "idempotency_key": "ik_1"}});
        assert_eq!(model_context_params(&state), json!({"structuredContent": state}));
        assert_eq!(model_context_params(&Value::Null), json!({"structuredContent": {}}));
        assert_eq!(checkout_storage_key("d_1"), "giftgenius/checkout/d_1");
    }
}
