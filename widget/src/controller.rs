//! Turns user actions into tool calls and tool results into view states, behind a `Host` trait.
//!
//! Host-agnostic and free of the DOM, so it runs (and is tested) natively. The wasm entry point
//! plugs in whichever bridge the page offers (ChatGPT's `window.openai`, or the MCP Apps
//! postMessage bridge); this file and the components do not know which.

use std::cell::{Cell, RefCell};
use std::future::Future;

use giftgenius_types::delivery::DeliveryDetails;
use giftgenius_types::write::WriteJson;
use giftgenius_types::{ErrorCode, OrderDraft, ToolError, ToolName};
use serde_json::{Map, Value, json};

use crate::action::Action;
use crate::context::DisplayMode;
use crate::decide::{self, Placeholder};
use crate::flow;
use crate::rpc::{self, LogLevel};
use crate::saved::{SavedView, Screen};
use crate::state::{CardOnFile, ListAsk, OrderListActions, ViewState};
use giftgenius_types::sheet::{META_CHECKOUT_SHEET, draft_of_sheet_session};
use giftgenius_types::wire::META_DELIVERY;

/// A tool call's result as the host hands it back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolResult {
    /// The `{v, ok, tool, ...}` envelope.
    pub structured_content: Value,
    /// Widget-only `_meta` (holds the confirmation token after prepare_order).
    pub meta: Value,
}

/// What the widget needs from the page that embeds it.
pub trait Host {
    /// Arguments of the tool call that produced the current output (an object, or null).
    fn tool_input(&self) -> Value;
    /// `_meta` of the tool result the host rendered us for.
    fn tool_response_metadata(&self) -> Value;
    /// The state the host persists for this widget instance (visible to the model).
    fn widget_state(&self) -> Value;
    /// Persists widget state; resolves once the host accepted it.
    fn set_widget_state(&self, state: Value) -> impl Future<Output = ()>;
    /// The idempotency key kept for this draft, if any. By default read from widget state; a
    /// host that does not hand widget state back after a reload also looks elsewhere (storage).
    fn stored_idempotency_key(&self, draft_id: &str) -> Option<String> {
        flow::stored_idempotency_key(&self.widget_state(), draft_id)
    }
    /// Calls a tool of our server; `Err` when the host could not deliver the call at all.
    fn call_tool(&self, name: &str, arguments: Map<String, Value>) -> impl Future<Output = Result<ToolResult, String>>;
    /// Asks the host to open an outbound link (`ui/open-link`, `openExternal`). A host that
    /// cannot never gets here: the link then is a plain `target="_blank"` link.
    fn open_link(&self, url: &str) -> impl Future<Output = Result<(), String>> {
        let _ = url;
        async { Err("the host opens no links".to_string()) }
    }
    /// Asks the host for another display mode; resolves with the mode now in effect. Only
    /// offered (a button) when the host declared the mode available.
    fn request_display_mode(&self, mode: DisplayMode) -> impl Future<Output = Result<DisplayMode, String>> {
        let _ = mode;
        async { Err("the host offers no display modes".to_string()) }
    }
    /// Opens the host's payment sheet with this session (`window.openai.requestCheckout`);
    /// resolves with the host's answer once paid, `Err` when the person closed it or the host
    /// has none. No time limit: a person is typing a card.
    fn request_checkout(&self, session: Value) -> impl Future<Output = Result<Value, String>> {
        let _ = session;
        async { Err("the host has no payment sheet".to_string()) }
    }
    /// Logs a line to the host (MCP Apps `notifications/message`), for errors the view hits.
    /// `data` must never hold a token or a key. By default nothing is sent.
    fn log(&self, level: LogLevel, data: Value) {
        let _ = (level, data);
    }
    /// Keeps the screen for a reload (see `saved.rs`); a host without view storage keeps nothing.
    fn save_view(&self, saved: &SavedView) {
        let _ = saved;
    }
    /// Forgets every screen and checkout entry this view's storage keeps (Delete my data).
    fn forget_saved_views(&self) {}
}

/// The widget's behaviour. Holds the current `ViewState`; `on_change` mirrors it into the UI.
///
/// Not `Debug` on purpose: it holds the confirmation token, which must never be logged.
pub struct Controller<H: Host> {
    host: H,
    view: RefCell<ViewState>,
    on_change: Box<dyn Fn(&ViewState)>,
    in_flight: Cell<bool>,
    /// The last `toolOutput` shown, so an unrelated globals change does not reset the view.
    last_output: RefCell<Option<Value>>,
    /// The last output the host itself announced: announced again (window.openai sets its
    /// globals again after `setWidgetState`), it is no news, even after the view moved on.
    hosted_output: RefCell<Option<Value>>,
    /// The last suggest_gifts result and its arguments: Cancel goes back to it, suggestions merge over it.
    last_results: RefCell<Option<ViewState>>,
    last_suggest_args: RefCell<Option<Map<String, Value>>>,
    /// The last call the widget or the model made (not commit_order), for "Try again".
    last_call: RefCell<Option<(ToolName, Map<String, Value>)>>,
    /// (draft id, confirmation token). Memory only.
    token: RefCell<Option<(String, String)>>,
    /// The shown draft's delivery details as its `_meta` carried them (kept for a reload).
    draft_delivery: RefCell<Option<Value>>,
    /// (draft id, the card that pays for it): the last result's, for the states this view
    /// makes of that draft itself (busy, failed). Memory only.
    card: RefCell<Option<(String, CardOnFile)>>,
    /// (draft id, the session the host's payment sheet takes), from the draft's `_meta`.
    sheet: RefCell<Option<(String, Value)>>,
    /// The order list's tokens, (order id, cancel token) and the Delete my data token, from the
    /// last list_orders result's `_meta`. Memory only, like the confirmation token.
    cancel_tokens: RefCell<Vec<(String, String)>>,
    delete_token: RefCell<Option<String>>,
    /// The last list_orders envelope, updated with each cancelled order (kept for a reload).
    list_output: RefCell<Option<Value>>,
    /// (draft id, idempotency key), mirrored in widget state; memory wins if the host is slow to echo.
    key: RefCell<Option<(String, String)>>,
    /// The contract JSON behind what is shown, kept for a reload (see `saved.rs`): the last
    /// result, the last draft and the last suggest_gifts result.
    shown_output: RefCell<Option<Value>>,
    draft_output: RefCell<Option<Value>>,
    results_output: RefCell<Option<Value>>,
}

fn as_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// The error shown when the host could not deliver a call: nothing reached the server, or we
/// cannot know, so it is retryable (commit_order retries reuse the key and cannot charge twice).
fn unreachable_error() -> ToolError {
    ToolError::new(ErrorCode::InternalError, "GiftGenius could not be reached from this view.", "")
}

/// A decided call's arguments with `details` where it takes the form's (see `decide::Call::form`).
fn args_with(call: &decide::Call, details: Option<&DeliveryDetails>) -> Map<String, Value> {
    if call.form { decide::with_details(&call.args, details) } else { call.args.clone() }
}

impl<H: Host> Controller<H> {
    pub fn new(host: H, on_change: impl Fn(&ViewState) + 'static) -> Self {
        Self {
            host,
            view: RefCell::new(ViewState::Loading),
            on_change: Box::new(on_change),
            in_flight: Cell::new(false),
            last_output: RefCell::new(None),
            hosted_output: RefCell::new(None),
            last_results: RefCell::new(None),
            last_suggest_args: RefCell::new(None),
            last_call: RefCell::new(None),
            token: RefCell::new(None),
            draft_delivery: RefCell::new(None),
            card: RefCell::new(None),
            sheet: RefCell::new(None),
            cancel_tokens: RefCell::new(Vec::new()),
            delete_token: RefCell::new(None),
            list_output: RefCell::new(None),
            key: RefCell::new(None),
            shown_output: RefCell::new(None),
            draft_output: RefCell::new(None),
            results_output: RefCell::new(None),
        }
    }

    pub fn host(&self) -> &H {
        &self.host
    }

    pub fn state(&self) -> ViewState {
        self.view.borrow().clone()
    }

    fn set(&self, state: ViewState) {
        let state = self.with_card(state);
        if let Some(screen) = self.screen_of(&state) {
            self.host.save_view(&SavedView {
                screen,
                results: self.results_output.borrow().clone(),
                suggest_args: self.last_suggest_args.borrow().clone(),
                last_call: self.last_call.borrow().clone(),
                delivery: match &state {
                    ViewState::ConfirmPurchase { .. } => self.draft_delivery.borrow().clone(),
                    _ => None,
                },
            });
        }
        *self.view.borrow_mut() = state.clone();
        (self.on_change)(&state);
    }

    /// A confirm card with the card that pays for its draft: the one it carries (remembered),
    /// else the one remembered for the same draft.
    fn with_card(&self, state: ViewState) -> ViewState {
        match state {
            ViewState::ConfirmPurchase { draft, delivery, card, busy, error } => {
                let card = match card {
                    Some(card) => {
                        *self.card.borrow_mut() = Some((draft.id.clone(), card.clone()));
                        Some(card)
                    }
                    None => self.card.borrow().as_ref().filter(|(id, _)| *id == draft.id).map(|(_, c)| c.clone()),
                };
                ViewState::ConfirmPurchase { draft, delivery, card, busy, error }
            }
            state => state,
        }
    }

    /// The contract JSON that shows `state` again after a reload, if the view holds it. Each
    /// candidate is parsed back and kept only if it gives exactly this state, so a screen the
    /// JSON cannot reproduce (loading, a call the host never delivered) is not saved and the
    /// last one that can stays.
    fn screen_of(&self, state: &ViewState) -> Option<Screen> {
        let reproduces = |json: &Option<Value>, want: &dyn Fn(&ViewState) -> bool| {
            json.clone().filter(|json| want(&ViewState::from_tool_output(json)))
        };
        match state {
            state if state.is_loading() => None,
            ViewState::Cancelled => Some(Screen::Cancelled),
            ViewState::ToolCancelled { reason, retry } => {
                Some(Screen::ToolCancelled { reason: reason.clone(), retry: *retry })
            }
            ViewState::ConfirmPurchase { draft, error, .. } => {
                let draft_json = reproduces(
                    &self.draft_output.borrow(),
                    &|s| matches!(s, ViewState::ConfirmPurchase { draft: d, .. } if d == draft),
                )?;
                let failure = error.as_ref().and_then(|error| {
                    reproduces(
                        &self.shown_output.borrow(),
                        &|s| matches!(s, ViewState::Error { error: e, .. } if e == error),
                    )
                });
                Some(match failure {
                    Some(error) => Screen::ConfirmFailed { draft: draft_json, error },
                    None => Screen::Output(draft_json),
                })
            }
            ViewState::OrderList { orders, next_cursor, .. } => reproduces(
                &self.list_output.borrow(),
                &|s| matches!(s, ViewState::OrderList { orders: o, next_cursor: c, .. } if o == orders && c == next_cursor),
            )
            .map(Screen::Output),
            // The 3-D Secure link is a capability: the saved screen is the order without it.
            ViewState::OrderPlaced { order, .. } => [&self.shown_output, &self.results_output, &self.draft_output]
                .into_iter()
                .find_map(|json| {
                    reproduces(&json.borrow(), &|s| matches!(s, ViewState::OrderPlaced { order: o, .. } if o == order))
                })
                .map(Screen::Output),
            state => [&self.shown_output, &self.results_output, &self.draft_output]
                .into_iter()
                .find_map(|json| reproduces(&json.borrow(), &|s| s == state))
                .map(Screen::Output),
        }
    }

    /// Shows the screen this view saved before a reload instead of the host's `output` (the
    /// tool result it was opened for, sent again). `output` is remembered as shown, so the
    /// host repeating it does not reset the view; a confirmation token in the host's `_meta`
    /// for the same draft is kept, so Confirm needs no second prepare.
    pub fn restore(&self, saved: SavedView, output: &Value) {
        let Some(state) = saved.screen.state() else {
            self.show_tool_output(output);
            return;
        };
        *self.last_output.borrow_mut() = Some(output.clone());
        *self.hosted_output.borrow_mut() = Some(output.clone());
        *self.last_results.borrow_mut() = saved
            .results
            .as_ref()
            .map(ViewState::from_tool_output)
            .filter(|r| matches!(r, ViewState::Results { .. } | ViewState::Empty { .. }));
        *self.results_output.borrow_mut() = saved.results;
        *self.last_suggest_args.borrow_mut() = saved.suggest_args;
        *self.last_call.borrow_mut() = saved.last_call;
        let state = match state {
            ViewState::ConfirmPurchase { draft, busy, error, .. } => {
                let delivery = saved.delivery.as_ref().and_then(giftgenius_types::ReadJson::read_json);
                *self.draft_delivery.borrow_mut() = saved.delivery.clone();
                ViewState::ConfirmPurchase { draft, delivery, card: None, busy, error }
            }
            // The tokens are never saved: the host's result brings them again (the list it
            // opened the view with), so a restored list offers Cancel without a new fetch.
            ViewState::OrderList { orders, next_cursor, .. } => {
                let meta = self.host.tool_response_metadata();
                *self.cancel_tokens.borrow_mut() = flow::cancel_tokens(&meta);
                *self.delete_token.borrow_mut() = flow::delete_data_token(&meta);
                let actions = OrderListActions::offered(&orders, &meta);
                ViewState::OrderList { orders, next_cursor, actions }
            }
            state => state,
        };
        match saved.screen {
            Screen::Output(json) => {
                if matches!(state, ViewState::ConfirmPurchase { .. }) {
                    *self.draft_output.borrow_mut() = Some(json.clone());
                }
                if matches!(state, ViewState::OrderList { .. }) {
                    *self.list_output.borrow_mut() = Some(json.clone());
                }
                *self.shown_output.borrow_mut() = Some(json);
            }
            Screen::ConfirmFailed { draft, error } => {
                *self.draft_output.borrow_mut() = Some(draft);
                *self.shown_output.borrow_mut() = Some(error);
            }
            Screen::Cancelled | Screen::ToolCancelled { .. } => {}
        }
        if let (ViewState::ConfirmPurchase { draft: shown, .. }, ViewState::ConfirmPurchase { draft: hosted, .. }) =
            (&state, ViewState::from_tool_output(output))
            && shown.id == hosted.id
            && let Some(token) = flow::confirmation_token(&self.host.tool_response_metadata())
        {
            *self.token.borrow_mut() = Some((shown.id.clone(), token));
        }
        self.set(state);
    }

    /// The arguments the model has streamed so far: loading, with what is known. Only while
    /// nothing real is shown and the view itself is not calling a tool.
    pub fn show_input_so_far(&self, arguments: &Map<String, Value>) {
        if self.in_flight.get() || !self.state().is_loading() {
            return;
        }
        let next = ViewState::loading_with(arguments);
        if next != self.state() {
            self.set(next);
        }
    }

    /// The host cancelled the call this view was opened for: say so instead of loading forever.
    /// "Try again" is offered only when the tool and its complete arguments are known (partial
    /// arguments are never acted upon). A screen already shown is left alone.
    pub fn show_tool_cancelled(&self, reason: Option<String>, tool: Option<ToolName>) {
        if self.in_flight.get() || !self.state().is_loading() {
            return;
        }
        let retry = tool.filter(|_| self.host.tool_input().is_object());
        self.set(ViewState::ToolCancelled { reason, retry });
    }

    /// Shows the host's `toolOutput` (on mount and whenever the host says it changed).
    ///
    /// An unchanged output is ignored, so the widget's own progress (a confirm screen reached by
    /// clicking) is not reset by a theme change. A call in flight wins over the host's output.
    pub fn show_tool_output(&self, output: &Value) {
        if self.last_output.borrow().as_ref() == Some(output)
            || self.hosted_output.borrow().as_ref() == Some(output)
            || self.in_flight.get()
        {
            return;
        }
        *self.last_output.borrow_mut() = Some(output.clone());
        *self.hosted_output.borrow_mut() = Some(output.clone());
        let state = ViewState::from_tool_result(output, &self.host.tool_response_metadata());
        if state.is_loading() && !self.state().is_loading() {
            return; // never replace something real by a spinner
        }
        let input = as_object(self.host.tool_input());
        *self.shown_output.borrow_mut() = Some(output.clone());
        if let Some(tool) = output.get("tool").and_then(Value::as_str).and_then(ToolName::parse) {
            self.remember(tool, &input, &state, &self.host.tool_response_metadata(), output);
        }
        self.set(state);
    }

    /// Records what later actions need from a result: results for Cancel, arguments for
    /// suggestions and Try again, the confirmation token for Confirm.
    fn remember(&self, tool: ToolName, args: &Map<String, Value>, state: &ViewState, meta: &Value, output: &Value) {
        if tool != ToolName::CommitOrder {
            *self.last_call.borrow_mut() = Some((tool, args.clone()));
        }
        match state {
            ViewState::Results { .. } | ViewState::Empty { .. } => {
                *self.last_results.borrow_mut() = Some(state.clone());
                *self.results_output.borrow_mut() = Some(output.clone());
                *self.last_suggest_args.borrow_mut() = Some(args.clone());
            }
            ViewState::ConfirmPurchase { draft, .. } => {
                *self.draft_output.borrow_mut() = Some(output.clone());
                *self.draft_delivery.borrow_mut() = meta.get(META_DELIVERY).filter(|d| d.is_object()).cloned();
                if let Some(token) = flow::confirmation_token(meta) {
                    *self.token.borrow_mut() = Some((draft.id.clone(), token));
                }
                if let Some(session) = meta.get(META_CHECKOUT_SHEET).filter(|s| s.is_object()) {
                    *self.sheet.borrow_mut() = Some((draft.id.clone(), session.clone()));
                }
            }
            ViewState::OrderList { .. } => {
                *self.list_output.borrow_mut() = Some(output.clone());
                *self.cancel_tokens.borrow_mut() = flow::cancel_tokens(meta);
                *self.delete_token.borrow_mut() = flow::delete_data_token(meta);
            }
            _ => {}
        }
    }

    /// Calls a tool; a missing or unreadable result becomes an honest state, never a guess.
    async fn call(&self, tool: ToolName, args: Map<String, Value>) -> (ViewState, Value) {
        match self.host.call_tool(tool.as_str(), args.clone()).await {
            Ok(result) => self.take_result(tool, &args, result),
            Err(message) => {
                // Only the tool and the host's words: arguments may hold a token or a key.
                self.host.log(
                    LogLevel::Error,
                    json!({ "event": "tool_call_failed", "tool": tool.as_str(), "message": message }),
                );
                // "Try again" repeats this very call (a host that never answered, or dropped it).
                if tool != ToolName::CommitOrder {
                    *self.last_call.borrow_mut() = Some((tool, args));
                }
                (ViewState::Error { tool, error: unreachable_error() }, Value::Null)
            }
        }
    }

    /// The screen a tool's result shows, remembering what later actions need from it.
    fn take_result(&self, tool: ToolName, args: &Map<String, Value>, result: ToolResult) -> (ViewState, Value) {
        // A host may also announce our own call's result as a new tool output (MCP Apps'
        // interactive phase does): that is not news, so it must not reset the view.
        if !result.structured_content.is_null() {
            *self.last_output.borrow_mut() = Some(result.structured_content.clone());
        }
        let state = match &result.structured_content {
            Value::Null => ViewState::OutOfDate { v: None },
            content => ViewState::from_tool_result(content, &result.meta),
        };
        if let ViewState::OutOfDate { v } = &state {
            self.host.log(LogLevel::Error, json!({ "event": "unreadable_result", "tool": tool.as_str(), "v": v }));
        }
        *self.shown_output.borrow_mut() = Some(result.structured_content.clone());
        self.remember(tool, args, &state, &result.meta, &result.structured_content);
        (state, result.meta)
    }

    /// Handles one user action. Ignored while another call is in flight (double clicks).
    pub async fn handle(&self, action: Action) {
        // Neither is a tool call: never blocked by one, never blocking one.
        if let Action::OpenLink { url } = &action {
            if let Err(message) = self.host.open_link(url).await {
                self.host.log(LogLevel::Warning, json!({ "event": "open_link_failed", "message": message }));
            }
            return;
        }
        if let Action::SetDisplayMode { mode } = action {
            if let Err(message) = self.host.request_display_mode(mode).await {
                self.host.log(
                    LogLevel::Warning,
                    json!({ "event": "display_mode_failed", "mode": mode.as_str(), "message": message }),
                );
            }
            return;
        }
        if self.in_flight.replace(true) {
            return;
        }
        match action {
            Action::Retry => self.retry().await,
            Action::Choose { gift_id } => self.choose(gift_id).await,
            Action::Confirm => self.confirm().await,
            Action::PayInHost => self.pay_in_host().await,
            Action::Cancel => self.cancel().await,
            Action::ApplySuggestion { set_arguments } => self.apply_suggestion(set_arguments).await,
            Action::EditDelivery { details } => self.edit_delivery(details).await,
            Action::AskCancelOrder { order_id } => self.ask(Some(ListAsk::CancelOrder { order_id })),
            Action::AskDeleteData => self.ask(Some(ListAsk::DeleteData)),
            Action::DismissAsk => self.ask(None),
            Action::CancelOrder { order_id } => self.cancel_order(order_id).await,
            Action::DeleteData => self.delete_data().await,
            Action::RemoveCard => self.remove_card().await,
            Action::OpenLink { .. } | Action::SetDisplayMode { .. } => {}
        }
        self.in_flight.set(false);
    }

    async fn retry(&self) {
        match self.state() {
            ViewState::ConfirmPurchase { .. } => self.confirm().await,
            ViewState::ToolCancelled { retry: Some(tool), .. } => {
                // The model's call never answered; the view makes the same call itself.
                self.set(ViewState::Loading);
                let (state, _) = self.call(tool, as_object(self.host.tool_input())).await;
                self.set(state);
            }
            ViewState::Error { tool, .. } => {
                // Arguments recorded empty may just mean toolInput arrived late: ask again.
                let args = match self.last_call.borrow().clone() {
                    Some((last, args)) if last == tool && !args.is_empty() => args,
                    _ => as_object(self.host.tool_input()),
                };
                self.set(ViewState::Loading);
                let (state, _) = self.call(tool, args).await;
                self.set(state);
            }
            _ => {}
        }
    }

    async fn apply_suggestion(&self, set_arguments: Map<String, Value>) {
        let base = match self.last_suggest_args.borrow().clone() {
            Some(args) if !args.is_empty() => args,
            // Never recorded, or recorded before a late toolInput arrived.
            _ => as_object(self.host.tool_input()),
        };
        let Some(call) = decide::suggestion(&set_arguments).call() else { return };
        let args = flow::merge_arguments(&base, &call.args);
        self.set(ViewState::Loading);
        let (state, _) = self.call(ToolName::SuggestGifts, args).await;
        self.set(state);
    }

    /// Remove card: the card's draft again without it (its answer), or the error screen (whose
    /// Try again removes again: never a Confirm).
    async fn remove_card(&self) {
        let ViewState::ConfirmPurchase { draft, delivery, busy: false, .. } = self.state() else {
            return;
        };
        let Some(call) = decide::remove_card(&draft).call() else { return };
        self.set(ViewState::ConfirmPurchase { draft, delivery, card: None, busy: true, error: None });
        let (state, _) = self.call(call.tool, call.args).await;
        self.set(state);
    }

    async fn choose(&self, gift_id: String) {
        // Decided on the results the card is on: the draft is priced in the currency it showed.
        let results = self.last_results.borrow().clone().unwrap_or(ViewState::Loading);
        let next = match decide::decide(&results, &Action::Choose { gift_id: gift_id.clone() }) {
            decide::Next::Nothing => decide::choose(&gift_id, None),
            next => next,
        };
        let Some(call) = next.call() else { return };
        self.set(ViewState::Loading);
        let (state, _) = self.call(call.tool, call.args).await;
        self.set(state);
    }

    fn token_for(&self, draft_id: &str) -> Option<String> {
        match self.token.borrow().as_ref() {
            Some((id, token)) if id == draft_id => Some(token.clone()),
            _ => None,
        }
    }

    /// The idempotency key for this draft: from memory, else what the host kept (widget state,
    /// storage), else derived from the draft id now and persisted *before* it is used.
    async fn key_for(&self, draft_id: &str) -> String {
        if let Some((id, key)) = self.key.borrow().as_ref()
            && id == draft_id
        {
            return key.clone();
        }
        let key = match self.host.stored_idempotency_key(draft_id) {
            Some(key) => key,
            None => {
                let key = flow::idempotency_key_for_draft(draft_id);
                let widget_state = self.host.widget_state();
                self.host.set_widget_state(flow::with_checkout(&widget_state, draft_id, &key)).await;
                key
            }
        };
        *self.key.borrow_mut() = Some((draft_id.to_string(), key.clone()));
        key
    }

    async fn confirm(&self) {
        let ViewState::ConfirmPurchase { draft, mut delivery, busy: false, .. } = self.state() else {
            return;
        };
        let Some(decision) = decide::confirm(&draft).call() else { return };
        self.set(ViewState::ConfirmPurchase {
            draft: draft.clone(),
            delivery: delivery.clone(),
            card: None,
            busy: true,
            error: None,
        });
        let token = match self.token_for(&draft.id) {
            Some(token) => token,
            None => {
                // The token was lost (a reload): the decision's `lost` call first, which reopens
                // the draft by id (the same draft, a fresh token and its delivery details, which
                // a card restored from the host's widget state does not have); the commit
                // follows if it decides the same.
                let Some(lost) = decision.lost.as_deref() else { return };
                let same = |fresh: &ViewState| {
                    decide::decide(fresh, &Action::Confirm).call().is_some_and(|c| c.same(&decision))
                };
                let gone = decision.gone.unwrap_or(ErrorCode::DraftExpired);
                let Some(fresh) = self.reopen_lost(lost, same, gone, &draft, delivery).await else { return };
                delivery = fresh;
                match self.token_for(&draft.id) {
                    Some(token) => token,
                    None => {
                        let error = ToolError::new(
                            ErrorCode::ConfirmationRequired,
                            "This purchase can no longer be confirmed here. Please choose the gift again.",
                            "",
                        );
                        self.set(ViewState::ConfirmPurchase {
                            draft,
                            delivery,
                            card: None,
                            busy: false,
                            error: Some(error),
                        });
                        return;
                    }
                }
            }
        };
        let key = self.key_for(&draft.id).await;
        let Some(args) = decide::fill(&decision.args, &|p| match p {
            Placeholder::Key { .. } => Some(key.clone()),
            Placeholder::Meta { .. } => Some(token.clone()),
            Placeholder::Answer => None,
        }) else {
            return;
        };
        match self.call(decision.tool, args).await {
            (ViewState::Error { error, .. }, _) => {
                // A token refused or past its lifetime is dropped: the next Confirm reopens the
                // draft for a fresh one, under the same key.
                if matches!(error.code, ErrorCode::ConfirmationRequired | ErrorCode::ConfirmationExpired) {
                    *self.token.borrow_mut() = None;
                }
                self.set(ViewState::ConfirmPurchase { draft, delivery, card: None, busy: false, error: Some(error) });
            }
            // The checkout entry stays after success: confirming the same draft again (say,
            // after a reload) reuses the key and replays this order instead of a second one.
            (state, _) => self.set(state),
        }
    }

    /// Reopens the shown draft by id when what its control needs (Confirm's token, the sheet's
    /// session) was lost with a reload: the same draft comes back with a fresh token, its sheet
    /// session and its delivery details (which a card restored from the host's widget state does
    /// not have). Goes on, with those details, only if the reopened card decides the same
    /// (`same`: the same draft at the same total). Otherwise the card stays and says why, and
    /// `None` tells the caller to stop: another draft came back (the one the person chose is gone,
    /// and nothing else is offered in its place unasked: `gone`), or the reopen failed
    /// (DRAFT_EXPIRED for an expired or pruned draft).
    async fn reopen_lost(
        &self,
        lost: &decide::Call,
        same: impl Fn(&ViewState) -> bool,
        gone: ErrorCode,
        draft: &OrderDraft,
        delivery: Option<DeliveryDetails>,
    ) -> Option<Option<DeliveryDetails>> {
        let error = match self.call(lost.tool, lost.args.clone()).await {
            (fresh @ ViewState::ConfirmPurchase { .. }, _) if !same(&fresh) => {
                ToolError::new(gone, "This order draft has expired.", "")
            }
            (ViewState::ConfirmPurchase { delivery: fresh, .. }, _) => return Some(fresh.or(delivery)),
            (ViewState::Error { error, .. }, _) => error,
            _ => return Some(delivery),
        };
        self.set(ViewState::ConfirmPurchase {
            draft: draft.clone(),
            delivery,
            card: None,
            busy: false,
            error: Some(error),
        });
        None
    }

    /// The sheet session kept for this draft: from its result, else from the host's own result
    /// for the same draft (a view reopened on the model's prepare_order).
    fn sheet_for(&self, draft_id: &str) -> Option<Value> {
        if let Some((id, session)) = self.sheet.borrow().as_ref()
            && id == draft_id
        {
            return Some(session.clone());
        }
        let hosted = self.host.tool_response_metadata().get(META_CHECKOUT_SHEET).cloned()?;
        let names_draft = hosted.get("id").and_then(Value::as_str).and_then(draft_of_sheet_session) == Some(draft_id);
        names_draft.then_some(hosted)
    }

    /// "Pay in ChatGPT": the host's payment sheet pays the draft and calls `complete_checkout`
    /// itself; the view then shows the order. Closing the sheet leaves the card as it was
    /// (nothing was paid through this view). A session lost with a reload is fetched again by
    /// reopening the draft, exactly as Confirm's token is.
    async fn pay_in_host(&self) {
        let ViewState::ConfirmPurchase { draft, mut delivery, busy: false, .. } = self.state() else {
            return;
        };
        let decide::Next::Sheet(sheet) = decide::pay_in_host(&draft) else { return };
        self.set(ViewState::ConfirmPurchase {
            draft: draft.clone(),
            delivery: delivery.clone(),
            card: None,
            busy: true,
            error: None,
        });
        let session = match self.sheet_for(&draft.id) {
            Some(session) => session,
            None => {
                let same = |fresh: &ViewState| matches!(decide::decide(fresh, &Action::PayInHost), decide::Next::Sheet(s) if s.same(&sheet));
                let Some(fresh) = self.reopen_lost(&sheet.lost, same, sheet.gone, &draft, delivery).await else {
                    return;
                };
                delivery = fresh;
                let Some(session) = self.sheet_for(&draft.id) else {
                    self.set(ViewState::ConfirmPurchase { draft, delivery, card: None, busy: false, error: None });
                    return;
                };
                session
            }
        };
        let answer = match self.host.request_checkout(session).await {
            Ok(answer) => answer,
            Err(message) => {
                self.host.log(LogLevel::Info, json!({ "event": "payment_sheet_closed", "message": message }));
                self.set(ViewState::ConfirmPurchase { draft, delivery, card: None, busy: false, error: None });
                return;
            }
        };
        // The host's answer: complete_checkout's own result, or the order it placed (read again).
        let (state, _) = if answer.get("structuredContent").is_some() {
            let args = Map::new();
            self.take_result(ToolName::CompleteCheckout, &args, rpc::tool_result_from(&answer))
        } else {
            let id = answer.get("id").or_else(|| answer.pointer("/order/id")).and_then(Value::as_str).unwrap_or("");
            match decide::fill(&sheet.then.args, &|_| Some(id.to_string())) {
                Some(args) => self.call(sheet.then.tool, args).await,
                None => {
                    (ViewState::Error { tool: ToolName::CompleteCheckout, error: unreachable_error() }, Value::Null)
                }
            }
        };
        self.set(state);
    }

    /// Prepares the shown draft again with the person's edited delivery details: the server's
    /// answer is a new draft (shown for confirmation: nothing is paid for details the person has
    /// not confirmed), or field errors, shown next to the fields with the edit kept.
    async fn edit_delivery(&self, details: DeliveryDetails) {
        let ViewState::ConfirmPurchase { draft, busy: false, .. } = self.state() else {
            return;
        };
        let edited = Some(details);
        self.set(ViewState::ConfirmPurchase {
            draft: draft.clone(),
            delivery: edited.clone(),
            card: None,
            busy: true,
            error: None,
        });
        let Some(call) = decide::update_delivery(&draft).call() else { return };
        match self.call(call.tool, args_with(&call, edited.as_ref())).await {
            (fresh @ ViewState::ConfirmPurchase { .. }, _) => self.set(fresh),
            (ViewState::Error { error, .. }, _) => self.set(ViewState::ConfirmPurchase {
                draft,
                delivery: edited,
                card: None,
                busy: false,
                error: Some(error),
            }),
            (state, _) => self.set(state),
        }
    }

    /// Shows or leaves the order list's second-click question.
    fn ask(&self, asking: Option<ListAsk>) {
        if let ViewState::OrderList { orders, next_cursor, actions } = self.state() {
            self.set(ViewState::OrderList {
                orders,
                next_cursor,
                actions: OrderListActions { asking, error: None, ..actions },
            });
        }
    }

    /// The second click on an order's Cancel: cancel_order with the order's token and a key
    /// derived from the order id (the same on every retry, and after a reload that brought a
    /// fresh token), then the list with the order's new status.
    async fn cancel_order(&self, order_id: String) {
        let ViewState::OrderList { orders, next_cursor, actions } = self.state() else {
            return;
        };
        if actions.asking != Some(ListAsk::CancelOrder { order_id: order_id.clone() }) {
            return; // only after the question was asked and answered
        }
        let token = self.cancel_tokens.borrow().iter().find(|(id, _)| *id == order_id).map(|(_, t)| t.clone());
        let Some(token) = token else {
            return;
        };
        // The decision's `then` (the list again) is for the no-wasm runtime, which cannot
        // render: here the row is patched in the list on screen, the same list without a call.
        let Some(call) = decide::cancel_order(&order_id).call() else { return };
        let Some(args) = decide::fill(&call.args, &|_| Some(token.clone())) else { return };
        let busy = OrderListActions { busy: true, error: None, ..actions.clone() };
        self.set(ViewState::OrderList { orders: orders.clone(), next_cursor: next_cursor.clone(), actions: busy });
        match self.call(call.tool, args).await {
            (ViewState::OrderPlaced { order, .. }, _) => {
                let orders: Vec<_> =
                    orders.into_iter().map(|o| if o.id == order.id { order.clone() } else { o }).collect();
                self.cancel_tokens.borrow_mut().retain(|(id, _)| *id != order.id);
                let cancellable = actions.cancellable.into_iter().filter(|id| *id != order.id).collect();
                let patched = self.list_output.borrow().clone().map(|mut list| {
                    if let (Some(rows), Some(json)) =
                        (list.get_mut("orders").and_then(Value::as_array_mut), Some(order.write_json()))
                    {
                        rows.iter_mut()
                            .filter(|r| r.get("id") == Some(&json!(order.id)))
                            .for_each(|r| *r = json.clone());
                    }
                    list
                });
                *self.list_output.borrow_mut() = patched;
                let actions = OrderListActions { cancellable, asking: None, busy: false, error: None, ..actions };
                self.set(ViewState::OrderList { orders, next_cursor, actions });
            }
            (ViewState::Error { error, .. }, _) => {
                let actions = OrderListActions { busy: false, error: Some(error), ..actions };
                self.set(ViewState::OrderList { orders, next_cursor, actions });
            }
            (state, _) => self.set(state),
        }
    }

    /// The second click on Delete my data: delete_my_data, then everything this view kept
    /// about the person (saved screens, checkout entries, drafts, tokens) is forgotten too.
    async fn delete_data(&self) {
        let ViewState::OrderList { orders, next_cursor, actions } = self.state() else {
            return;
        };
        let Some(token) = self.delete_token.borrow().clone().filter(|_| actions.asking == Some(ListAsk::DeleteData))
        else {
            return;
        };
        let busy = OrderListActions { busy: true, error: None, ..actions.clone() };
        self.set(ViewState::OrderList { orders: orders.clone(), next_cursor: next_cursor.clone(), actions: busy });
        let Some(call) = decide::delete_data().call() else { return };
        let Some(args) = decide::fill(&call.args, &|_| Some(token.clone())) else { return };
        match self.call(call.tool, args).await {
            (state @ ViewState::DataDeleted { .. }, _) => {
                self.host.forget_saved_views();
                self.host.set_widget_state(flow::without_checkout(&self.host.widget_state())).await;
                *self.token.borrow_mut() = None;
                *self.key.borrow_mut() = None;
                *self.draft_delivery.borrow_mut() = None;
                *self.draft_output.borrow_mut() = None;
                *self.list_output.borrow_mut() = None;
                *self.last_call.borrow_mut() = None;
                self.cancel_tokens.borrow_mut().clear();
                *self.delete_token.borrow_mut() = None;
                self.set(state);
            }
            (ViewState::Error { error, .. }, _) => {
                let actions = OrderListActions { busy: false, error: Some(error), ..actions };
                self.set(ViewState::OrderList { orders, next_cursor, actions });
            }
            (state, _) => self.set(state),
        }
    }

    async fn cancel(&self) {
        self.host.set_widget_state(flow::without_checkout(&self.host.widget_state())).await;
        *self.token.borrow_mut() = None;
        *self.key.borrow_mut() = None;
        let back = self.last_results.borrow().clone();
        self.set(back.unwrap_or(ViewState::Cancelled));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures::draft_output;
    use std::pin::pin;
    use std::rc::Rc;
    use std::task::{Context, Poll, Waker};

    fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
        }
    }

    type Call = (String, Map<String, Value>, Value);

    #[derive(Default)]
    struct Fake {
        widget_state: RefCell<Value>,
        /// (tool, arguments, widget state when the call went out)
        calls: RefCell<Vec<Call>>,
        replies: RefCell<Vec<Result<ToolResult, String>>>,
        meta: Value,
        input: Value,
        opened: RefCell<Vec<String>>,
        logs: RefCell<Vec<(LogLevel, Value)>>,
        saved: RefCell<Vec<SavedView>>,
        display_requests: RefCell<Vec<DisplayMode>>,
        forgotten: Cell<u32>,
        /// Sessions the view handed the payment sheet, and the sheet's answers in turn.
        sheets: RefCell<Vec<Value>>,
        sheet_answers: RefCell<Vec<Result<Value, String>>>,
    }

    impl Host for Rc<Fake> {
        fn tool_input(&self) -> Value {
            self.input.clone()
        }
        fn tool_response_metadata(&self) -> Value {
            self.meta.clone()
        }
        fn widget_state(&self) -> Value {
            self.widget_state.borrow().clone()
        }
        fn set_widget_state(&self, state: Value) -> impl Future<Output = ()> {
            *self.widget_state.borrow_mut() = state;
            std::future::ready(())
        }
        fn open_link(&self, url: &str) -> impl Future<Output = Result<(), String>> {
            self.opened.borrow_mut().push(url.to_string());
            std::future::ready(Ok(()))
        }
        fn call_tool(
            &self,
            name: &str,
            arguments: Map<String, Value>,
        ) -> impl Future<Output = Result<ToolResult, String>> {
            // Record the widget state as it was when the call went out.
            self.calls.borrow_mut().push((name.to_string(), arguments, self.widget_state.borrow().clone()));
            let reply = self.replies.borrow_mut().remove(0);
            std::future::ready(reply)
        }
        fn request_display_mode(&self, mode: DisplayMode) -> impl Future<Output = Result<DisplayMode, String>> {
            self.display_requests.borrow_mut().push(mode);
            std::future::ready(Err("refused".to_string()))
        }
        fn request_checkout(&self, session: Value) -> impl Future<Output = Result<Value, String>> {
            self.sheets.borrow_mut().push(session);
            std::future::ready(self.sheet_answers.borrow_mut().remove(0))
        }
        fn log(&self, level: LogLevel, data: Value) {
            self.logs.borrow_mut().push((level, data));
        }
        fn save_view(&self, saved: &SavedView) {
            self.saved.borrow_mut().push(saved.clone());
        }
        fn forget_saved_views(&self) {
            self.forgotten.set(self.forgotten.get() + 1);
        }
    }

    fn delivery_of(state: &ViewState) -> Option<DeliveryDetails> {
        match state {
            ViewState::ConfirmPurchase { delivery, .. } => delivery.clone(),
            _ => None,
        }
    }

    fn details(city: &str) -> DeliveryDetails {
        serde_json::from_value(json!({"recipient": {"name": "Ana", "address": {"line1": "Rua Augusta 12",
            "city": city, "postal_code": "1100-053", "country": "PT"}}, "gift_message": "Hi"}))
        .expect("details")
    }

    fn draft_result(id: &str, city: &str, token: &str) -> ToolResult {
        let mut output = draft_output();
        output["draft"]["id"] = json!(id);
        output["draft"]["destination"] = json!({"city": city, "country": "PT"});
        ToolResult {
            structured_content: output,
            meta: json!({"giftgenius/confirmation_token": token, "giftgenius/delivery": details(city)}),
        }
    }

    fn list_result() -> ToolResult {
        let order = placed().structured_content["order"].clone();
        ToolResult {
            structured_content: json!({"v":3,"ok":true,"tool":"list_orders","orders":[order]}),
            meta: json!({"giftgenius/cancel_tokens": {"o_1": "ct_cancel"}, "giftgenius/delete_data_token": "ct_delete"}),
        }
    }

    #[test]
    fn an_edited_address_prepares_a_new_draft_to_confirm_and_a_refused_one_keeps_the_edit() {
        let first = draft_result("d_1", "Lisboa", "tok1");
        let fake = Rc::new(Fake { meta: first.meta.clone(), ..Fake::default() });
        let refused = ToolResult {
            structured_content: json!({"v":3,"ok":false,"tool":"prepare_order","error":{"code":"VALIDATION_ERROR",
                "category":"validation","message":"1 invalid argument","retryable":false,"reference":"req_v",
                "field_errors":[{"field":"recipient.address.postal_code","message":"must be 1234-567"}]}}),
            meta: Value::Null,
        };
        fake.replies.borrow_mut().extend([Ok(refused), Ok(draft_result("d_2", "Porto", "tok2")), Ok(placed())]);
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&first.structured_content);
        assert_eq!(delivery_of(&controller.state()).map(|d| d.recipient.address.city), Some("Lisboa".into()));

        let mut bad = details("Porto");
        bad.recipient.address.postal_code = Some("99".into());
        block_on(controller.handle(Action::EditDelivery { details: bad.clone() }));
        match controller.state() {
            ViewState::ConfirmPurchase { draft, delivery, card: None, busy: false, error: Some(error) } => {
                assert_eq!(draft.id, "d_1", "still the draft the person saw");
                assert_eq!(delivery, Some(bad), "what was typed is kept");
                assert_eq!(error.field_errors[0].field, "recipient.address.postal_code");
            }
            other => panic!("{other:?}"),
        }
        block_on(controller.handle(Action::EditDelivery { details: details("Porto") }));
        match controller.state() {
            ViewState::ConfirmPurchase { draft, delivery, card: None, busy: false, error: None } => {
                assert_eq!(draft.id, "d_2");
                assert_eq!(delivery.map(|d| d.recipient.address.city), Some("Porto".into()));
            }
            other => panic!("{other:?}"),
        }
        block_on(controller.handle(Action::Confirm));
        let calls = fake.calls.borrow();
        let names: Vec<&str> = calls.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["prepare_order", "prepare_order", "commit_order"], "nothing paid before Confirm");
        assert_eq!(calls[1].1["recipient"]["address"]["city"], json!("Porto"));
        assert_eq!(calls[1].1["gift_message"], json!("Hi"));
        assert_eq!(calls[1].1["gift_id"], json!("g_1"));
        assert_eq!(calls[2].1["draft_id"], json!("d_2"));
        assert_eq!(calls[2].1["confirmation_token"], json!("tok2"), "the new draft's token");
        // The saved confirmation kept its delivery details for a reload; never the token.
        let saved = fake.saved.borrow();
        let confirm = saved.iter().rev().find(|s| s.delivery.is_some()).expect("a saved confirmation");
        assert_eq!(confirm.delivery.as_ref().map(|d| d["recipient"]["address"]["city"].clone()), Some(json!("Porto")));
        assert!(!confirm.to_value().to_string().contains("tok2"));
    }

    #[test]
    fn the_host_announcing_its_result_again_leaves_the_screen_the_person_reached() {
        // window.openai sets its globals again after setWidgetState (the view's own save): the
        // same toolOutput is no news, even once the view has moved on to a confirmation.
        let fake = Rc::new(Fake { input: json!({"relationship_type": "friend"}), ..Fake::default() });
        fake.replies.borrow_mut().push(Ok(draft_result("d_1", "Lisboa", "tok")));
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&results_output());
        block_on(controller.handle(Action::Choose { gift_id: "g_1".into() }));
        assert_eq!(controller.state().kind(), "confirm");
        controller.show_tool_output(&results_output());
        assert_eq!(controller.state().kind(), "confirm", "the confirmation stays");
        // A new result from the host is news.
        controller.show_tool_output(&list_result().structured_content);
        assert_eq!(controller.state().kind(), "order-list");
    }

    #[test]
    fn a_restored_order_list_offers_cancel_with_the_hosts_tokens_but_not_for_a_cancelled_order() {
        let list = list_result();
        let fake = Rc::new(Fake { meta: list.meta.clone(), ..Fake::default() });
        let mut cancelled = placed().structured_content["order"].clone();
        cancelled["status"] = json!("cancelled");
        fake.replies.borrow_mut().push(Ok(ToolResult {
            structured_content: json!({"v":3,"ok":true,"tool":"cancel_order","order":cancelled}),
            meta: Value::Null,
        }));
        let controller = Controller::new(fake.clone(), |_| {});
        let saved = SavedView {
            screen: Screen::Output(list.structured_content.clone()),
            results: None,
            suggest_args: None,
            last_call: None,
            delivery: None,
        };
        controller.restore(saved, &list.structured_content);
        match controller.state() {
            ViewState::OrderList { actions, .. } => {
                assert_eq!(actions.cancellable, vec!["o_1".to_string()]);
                assert!(actions.can_delete_data);
            }
            other => panic!("{other:?}"),
        }
        block_on(controller.handle(Action::AskCancelOrder { order_id: "o_1".into() }));
        block_on(controller.handle(Action::CancelOrder { order_id: "o_1".into() }));
        assert_eq!(fake.calls.borrow()[0].1["confirmation_token"], json!("ct_cancel"), "the host's token");
        assert_eq!(controller.state().kind(), "order-list", "the list again, not the order card");
        // Restored after the cancellation, the host's older token offers no second Cancel.
        let later = Rc::new(Fake { meta: list.meta.clone(), ..Fake::default() });
        let controller = Controller::new(later, |_| {});
        let mut after = list.structured_content.clone();
        after["orders"][0]["status"] = json!("cancelled");
        let saved = SavedView {
            screen: Screen::Output(after),
            results: None,
            suggest_args: None,
            last_call: None,
            delivery: None,
        };
        controller.restore(saved, &list.structured_content);
        let ViewState::OrderList { actions, .. } = controller.state() else { panic!("a list") };
        assert!(actions.cancellable.is_empty());
    }

    #[test]
    fn a_card_restored_without_its_details_reopens_the_draft_by_id_and_commits_under_the_kept_key() {
        // Restored from a host's widget state: the card without its delivery details, the key
        // kept for the draft, no token.
        let fake = Rc::new(Fake::default());
        *fake.widget_state.borrow_mut() = json!({"checkout": {"draft_id": "d_1", "idempotency_key": "ik_kept"}});
        let again = draft_result("d_1", "Lisboa", "tok_fresh");
        fake.replies.borrow_mut().extend([Ok(again.clone()), Ok(placed())]);
        let controller = Controller::new(fake.clone(), |_| {});
        let saved = SavedView {
            screen: Screen::Output(again.structured_content.clone()),
            results: None,
            suggest_args: None,
            last_call: None,
            delivery: None,
        };
        controller.restore(saved, &Value::Null);
        block_on(controller.handle(Action::Confirm));
        let calls = fake.calls.borrow();
        assert_eq!(calls[0].0, "reopen_order_draft");
        assert_eq!(Value::Object(calls[0].1.clone()), json!({"draft_id": "d_1"}), "by id, nothing personal");
        assert_eq!(calls[1].0, "commit_order");
        assert_eq!(calls[1].1["confirmation_token"], "tok_fresh");
        assert_eq!(calls[1].1["idempotency_key"], "ik_kept", "the key kept for the draft");
        assert!(matches!(controller.state(), ViewState::OrderPlaced { .. }));
    }

    #[test]
    fn a_restored_confirmation_whose_draft_is_gone_says_it_expired_and_offers_no_other_draft() {
        // The draft was pruned (or expired): reopening it answers DRAFT_EXPIRED.
        let fake = Rc::new(Fake::default());
        let before = draft_result("d_1", "Lisboa", "tok");
        fake.replies.borrow_mut().push(Ok(ToolResult {
            structured_content: json!({"v":3,"ok":false,"tool":"reopen_order_draft","error":{"code":"DRAFT_EXPIRED",
                "category":"business","message":"Draft d_1 has expired or no longer exists.","retryable":false,
                "reference":"req_x"}}),
            meta: Value::Null,
        }));
        let controller = Controller::new(fake.clone(), |_| {});
        let saved = SavedView {
            screen: Screen::Output(before.structured_content.clone()),
            results: None,
            suggest_args: None,
            last_call: None,
            delivery: Some(before.meta["giftgenius/delivery"].clone()),
        };
        controller.restore(saved, &Value::Null);
        block_on(controller.handle(Action::Confirm));
        match controller.state() {
            ViewState::ConfirmPurchase { draft, busy: false, error: Some(error), .. } => {
                assert_eq!(draft.id, "d_1", "the card the person confirmed, not another draft");
                assert_eq!(error.code, ErrorCode::DraftExpired);
                assert!(!error.retryable, "no Confirm for a draft that is gone");
            }
            other => panic!("{other:?}"),
        }
        let names: Vec<String> = fake.calls.borrow().iter().map(|c| c.0.clone()).collect();
        assert_eq!(names, ["reopen_order_draft"], "nothing committed");
    }

    #[test]
    fn cancelling_from_the_list_asks_first_and_retries_with_the_same_key() {
        let fake = Rc::new(Fake::default());
        let mut cancelled = placed();
        cancelled.structured_content["tool"] = json!("cancel_order");
        cancelled.structured_content["order"]["status"] = json!("cancelled");
        fake.replies.borrow_mut().extend([
            Ok(list_result()),
            Err("the host did not answer in time".into()),
            Ok(cancelled),
        ]);
        let controller = Controller::new(fake.clone(), |_| {});
        // The list, as the view's own Try again gets it (its `_meta` comes with the call).
        *controller.view.borrow_mut() = ViewState::Error { tool: ToolName::ListOrders, error: unreachable_error() };
        *controller.last_call.borrow_mut() = Some((ToolName::ListOrders, Map::new()));
        block_on(controller.handle(Action::Retry));
        let ViewState::OrderList { actions, .. } = controller.state() else { panic!("a list") };
        assert_eq!(actions.cancellable, vec!["o_1".to_string()]);
        assert!(actions.can_delete_data);
        // A second click without the first does nothing.
        block_on(controller.handle(Action::CancelOrder { order_id: "o_1".into() }));
        assert_eq!(fake.calls.borrow().len(), 1);
        block_on(controller.handle(Action::AskCancelOrder { order_id: "o_1".into() }));
        block_on(controller.handle(Action::CancelOrder { order_id: "o_1".into() }));
        let ViewState::OrderList { actions, .. } = controller.state() else { panic!("a list") };
        assert!(actions.error.as_ref().is_some_and(|e| e.retryable), "{actions:?}");
        block_on(controller.handle(Action::AskCancelOrder { order_id: "o_1".into() }));
        block_on(controller.handle(Action::CancelOrder { order_id: "o_1".into() }));
        let calls = fake.calls.borrow();
        let cancels: Vec<&Call> = calls.iter().filter(|c| c.0 == "cancel_order").collect();
        assert_eq!(cancels.len(), 2);
        assert_eq!(cancels[0].1["idempotency_key"], cancels[1].1["idempotency_key"], "one key per order");
        assert_eq!(cancels[0].1["idempotency_key"], json!(flow::cancel_key_for_order("o_1")));
        assert_eq!(cancels[0].1["confirmation_token"], json!("ct_cancel"));
        match controller.state() {
            ViewState::OrderList { orders, actions, .. } => {
                assert_eq!(orders[0].status, giftgenius_types::OrderStatus::Cancelled);
                assert!(actions.cancellable.is_empty() && actions.asking.is_none() && actions.error.is_none());
            }
            other => panic!("{other:?}"),
        }
        // The list with the cancelled order is what a reload shows.
        let last = fake.saved.borrow().last().cloned().expect("saved");
        match last.screen.state() {
            Some(ViewState::OrderList { orders, .. }) => {
                assert_eq!(orders[0].status, giftgenius_types::OrderStatus::Cancelled)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn delete_my_data_asks_first_then_forgets_what_the_view_kept() {
        let fake = Rc::new(Fake::default());
        *fake.widget_state.borrow_mut() = json!({"checkout": {"draft_id": "d_1", "idempotency_key": "ik_1"}});
        let deleted = ToolResult {
            structured_content: json!({"v":3,"ok":true,"tool":"delete_my_data","saved_addresses_deleted":1,
                "drafts_deleted":2,"idempotency_keys_deleted":2,"checkout_sessions_deleted":0,"orders_anonymized":1,
                "financial_records_kept":1,"financial_records_retention_days":3650}),
            meta: Value::Null,
        };
        fake.replies.borrow_mut().extend([Ok(list_result()), Ok(deleted)]);
        let controller = Controller::new(fake.clone(), |_| {});
        *controller.view.borrow_mut() = ViewState::Error { tool: ToolName::ListOrders, error: unreachable_error() };
        *controller.last_call.borrow_mut() = Some((ToolName::ListOrders, Map::new()));
        block_on(controller.handle(Action::Retry));
        block_on(controller.handle(Action::DeleteData));
        assert_eq!(fake.calls.borrow().len(), 1, "not without the question answered");
        block_on(controller.handle(Action::AskDeleteData));
        block_on(controller.handle(Action::DeleteData));
        assert_eq!(controller.state().kind(), "data-deleted");
        assert_eq!(fake.calls.borrow()[1].1["confirmation_token"], json!("ct_delete"));
        assert_eq!(fake.forgotten.get(), 1, "the view's storage is cleared");
        assert_eq!(*fake.widget_state.borrow(), json!({}), "and the checkout entry");
        let last = fake.saved.borrow().last().cloned().expect("saved");
        assert!(last.last_call.is_none() && last.delivery.is_none());
    }

    fn transient() -> ToolResult {
        ToolResult {
            structured_content: json!({"v":3,"ok":false,"tool":"commit_order","error":{
                "code":"PAYMENT_PROVIDER_UNAVAILABLE","category":"transient","message":"Payments are down",
                "retryable":true,"reference":"req_1"}}),
            meta: Value::Null,
        }
    }

    fn placed() -> ToolResult {
        ToolResult {
            structured_content: json!({"v":3,"ok":true,"tool":"commit_order","order":{
                "id":"o_1","draft_id":"d_1","gift_id":"g_1","gift_title":"Mug","merchant":"Shop","quantity":1,
                "total":{"amount_minor":3000,"currency":"USD"},"status":"paid","created_at":"2030-01-01T00:00:00Z"}}),
            meta: Value::Null,
        }
    }

    /// A draft with its sheet session in `_meta`, as prepare_order answers one with details.
    fn sheet_draft(id: &str) -> ToolResult {
        let mut result = draft_result(id, "Lisboa", "tok_secret");
        result.meta["giftgenius/checkoutSheet"] = json!({"id": format!("cs_{id}"), "payment_mode": "test"});
        result
    }

    fn paid_by_sheet() -> Value {
        let mut order = placed().structured_content;
        order["tool"] = json!("complete_checkout");
        json!({"structuredContent": order, "content": []})
    }

    #[test]
    fn pay_in_host_hands_the_sheet_the_drafts_session_and_shows_the_order_the_host_placed() {
        let fake = Rc::new(Fake::default());
        fake.replies.borrow_mut().push(Ok(sheet_draft("d_1")));
        fake.sheet_answers.borrow_mut().push(Ok(paid_by_sheet()));
        let controller = Controller::new(fake.clone(), |_| {});
        block_on(controller.handle(Action::Choose { gift_id: "g_1".into() }));
        block_on(controller.handle(Action::PayInHost));
        assert!(matches!(controller.state(), ViewState::OrderPlaced { ref order, .. } if order.id == "o_1"));
        assert_eq!(fake.sheets.borrow().as_slice(), &[json!({"id": "cs_d_1", "payment_mode": "test"})]);
        // The host completes the purchase: the view called nothing after prepare_order.
        let calls = fake.calls.borrow();
        assert_eq!(calls.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["prepare_order"]);
    }

    #[test]
    fn a_host_answering_with_the_order_itself_gets_it_read_again_by_id() {
        let fake = Rc::new(Fake::default());
        fake.replies.borrow_mut().extend([Ok(sheet_draft("d_1")), Ok(placed())]);
        fake.sheet_answers.borrow_mut().push(Ok(json!({"id": "o_1", "checkout_session_id": "cs_d_1"})));
        let controller = Controller::new(fake.clone(), |_| {});
        block_on(controller.handle(Action::Choose { gift_id: "g_1".into() }));
        block_on(controller.handle(Action::PayInHost));
        assert!(matches!(controller.state(), ViewState::OrderPlaced { .. }));
        let calls = fake.calls.borrow();
        assert_eq!(calls.len(), 2);
        assert_eq!((calls[1].0.as_str(), Value::Object(calls[1].1.clone())), ("get_order", json!({"order_id": "o_1"})));
    }

    #[test]
    fn closing_the_sheet_leaves_the_card_as_it_was_and_calls_nothing() {
        let fake = Rc::new(Fake::default());
        fake.replies.borrow_mut().push(Ok(sheet_draft("d_1")));
        fake.sheet_answers.borrow_mut().push(Err("the person closed the payment sheet".into()));
        let controller = Controller::new(fake.clone(), |_| {});
        block_on(controller.handle(Action::Choose { gift_id: "g_1".into() }));
        block_on(controller.handle(Action::PayInHost));
        assert!(matches!(controller.state(), ViewState::ConfirmPurchase { busy: false, error: None, .. }));
        assert_eq!(fake.calls.borrow().len(), 1, "only the prepare");
    }

    #[test]
    fn a_sheet_session_lost_with_a_reload_reopens_the_draft_first() {
        // The card came back from the host's widget state: no session in memory or in the
        // host's `_meta` (the host's result was the results, not this draft).
        let fake = Rc::new(Fake::default());
        fake.replies.borrow_mut().push(Ok(sheet_draft("d_1")));
        fake.sheet_answers.borrow_mut().push(Ok(paid_by_sheet()));
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&draft_result("d_1", "Lisboa", "").structured_content);
        block_on(controller.handle(Action::PayInHost));
        assert!(matches!(controller.state(), ViewState::OrderPlaced { .. }));
        let calls = fake.calls.borrow();
        assert_eq!(
            (calls[0].0.as_str(), Value::Object(calls[0].1.clone())),
            ("reopen_order_draft", json!({"draft_id": "d_1"}))
        );
        assert_eq!(fake.sheets.borrow()[0]["id"], "cs_d_1");
    }

    #[test]
    fn confirm_mints_one_key_stores_it_first_and_reuses_it_on_try_again() {
        let fake = Rc::new(Fake {
            meta: json!({"giftgenius/confirmation_token": "tok_secret"}),
            input: json!({"gift_id": "g_1"}),
            ..Fake::default()
        });
        fake.replies.borrow_mut().extend([Ok(transient()), Ok(placed())]);
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&draft_output());
        assert!(matches!(controller.state(), ViewState::ConfirmPurchase { busy: false, error: None, .. }));

        block_on(controller.handle(Action::Confirm));
        match controller.state() {
            ViewState::ConfirmPurchase { busy: false, error: Some(e), .. } => assert!(e.retryable),
            other => panic!("expected confirm with error, got {other:?}"),
        }
        block_on(controller.handle(Action::Retry));
        assert!(matches!(controller.state(), ViewState::OrderPlaced { .. }));

        let calls = fake.calls.borrow();
        assert_eq!(calls.len(), 2);
        // Derived from the draft id, so a reload on a host without widget state, holding a fresh
        // token, finds it again.
        let key = flow::idempotency_key_for_draft("d_1");
        for (name, args, state_at_call) in calls.iter() {
            assert_eq!(name, "commit_order");
            assert_eq!(args["idempotency_key"], json!(key));
            assert_eq!(args["confirmation_token"], json!("tok_secret"));
            // Stored before the call went out.
            assert_eq!(state_at_call["checkout"], json!({"draft_id": "d_1", "idempotency_key": key}));
        }
        // Widget state (model-visible) never holds the token.
        assert!(!fake.widget_state.borrow().to_string().contains("tok_secret"));
    }

    #[test]
    fn an_expired_confirmation_gets_a_fresh_token_on_the_next_confirm_under_the_same_key() {
        let fake = Rc::new(Fake {
            meta: json!({"giftgenius/confirmation_token": "tok_old"}),
            input: json!({"gift_id": "g_1"}),
            ..Fake::default()
        });
        let expired = ToolResult {
            structured_content: json!({"v":3,"ok":false,"tool":"commit_order","error":{
                "code":"CONFIRMATION_EXPIRED","category":"permission","message":"expired",
                "retryable":false,"reference":"req_2"}}),
            meta: Value::Null,
        };
        let fresh = ToolResult {
            structured_content: draft_output(),
            meta: json!({"giftgenius/confirmation_token": "tok_fresh"}),
        };
        fake.replies.borrow_mut().extend([Ok(expired), Ok(fresh), Ok(placed())]);
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&draft_output());
        block_on(controller.handle(Action::Confirm));
        assert!(matches!(controller.state(), ViewState::ConfirmPurchase { error: Some(_), .. }));
        block_on(controller.handle(Action::Confirm));
        assert!(matches!(controller.state(), ViewState::OrderPlaced { .. }));
        let calls = fake.calls.borrow();
        let names: Vec<&str> = calls.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["commit_order", "reopen_order_draft", "commit_order"]);
        let key = json!(flow::idempotency_key_for_draft("d_1"));
        assert_eq!((&calls[0].1["idempotency_key"], &calls[0].1["confirmation_token"]), (&key, &json!("tok_old")));
        assert_eq!((&calls[2].1["idempotency_key"], &calls[2].1["confirmation_token"]), (&key, &json!("tok_fresh")));
    }

    #[test]
    fn the_hosts_echo_of_our_own_result_does_not_reset_the_view() {
        // MCP Apps hosts may announce a widget-initiated call's result as a tool result too.
        let fake = Rc::new(Fake { meta: json!({"giftgenius/confirmation_token": "tok"}), ..Fake::default() });
        fake.replies.borrow_mut().push(Ok(transient()));
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&draft_output());
        block_on(controller.handle(Action::Confirm));
        assert!(matches!(controller.state(), ViewState::ConfirmPurchase { error: Some(_), .. }));
        controller.show_tool_output(&transient().structured_content);
        // Still the inline error whose Try again reuses the key, not the generic error view.
        assert!(matches!(controller.state(), ViewState::ConfirmPurchase { error: Some(_), .. }));
    }

    #[test]
    fn a_late_tool_input_is_used_by_suggestions() {
        let fake = Rc::new(Fake { input: json!({"relationship_type": "friend"}), ..Fake::default() });
        fake.replies.borrow_mut().push(Err("offline".into()));
        let controller = Controller::new(fake.clone(), |_| {});
        // The result arrives first, recorded with the input known then (none, in this fake's
        // stead: an empty object), and the suggestion still merges over the real input.
        *controller.last_suggest_args.borrow_mut() = Some(Map::new());
        let set = as_object(json!({"budget_max": 60}));
        block_on(controller.handle(Action::ApplySuggestion { set_arguments: set }));
        let calls = fake.calls.borrow();
        assert_eq!(Value::Object(calls[0].1.clone()), json!({"relationship_type": "friend", "budget_max": 60}));
    }

    #[test]
    fn a_key_the_host_kept_elsewhere_is_reused_after_a_reload() {
        // Widget state is empty (the host gave nothing back) but the host found the key.
        struct Kept(Rc<Fake>);
        impl Host for Kept {
            fn tool_input(&self) -> Value {
                self.0.tool_input()
            }
            fn tool_response_metadata(&self) -> Value {
                self.0.tool_response_metadata()
            }
            fn widget_state(&self) -> Value {
                self.0.widget_state()
            }
            fn set_widget_state(&self, state: Value) -> impl Future<Output = ()> {
                self.0.set_widget_state(state)
            }
            fn stored_idempotency_key(&self, draft_id: &str) -> Option<String> {
                (draft_id == "d_1").then(|| "ik_from_storage".to_string())
            }
            fn call_tool(
                &self,
                name: &str,
                arguments: Map<String, Value>,
            ) -> impl Future<Output = Result<ToolResult, String>> {
                self.0.call_tool(name, arguments)
            }
        }
        let fake = Rc::new(Fake { meta: json!({"giftgenius/confirmation_token": "tok"}), ..Fake::default() });
        fake.replies.borrow_mut().push(Ok(placed()));
        let controller = Controller::new(Kept(fake.clone()), |_| {});
        controller.show_tool_output(&draft_output());
        block_on(controller.handle(Action::Confirm));
        assert_eq!(fake.calls.borrow()[0].1["idempotency_key"], json!("ik_from_storage"));
    }

    #[test]
    fn open_link_asks_the_host_and_calls_no_tool_even_while_a_call_is_in_flight() {
        let fake = Rc::new(Fake::default());
        let controller = Controller::new(fake.clone(), |_| {});
        controller.in_flight.set(true);
        block_on(controller.handle(Action::OpenLink { url: "https://shop.example/c/1".into() }));
        assert_eq!(*fake.opened.borrow(), vec!["https://shop.example/c/1".to_string()]);
        assert!(fake.calls.borrow().is_empty());
        assert!(controller.in_flight.get(), "the call in flight still owns the flag");
    }

    #[test]
    fn try_again_after_an_unanswered_choose_repeats_that_choose() {
        let fake = Rc::new(Fake { input: json!({"relationship_type": "friend"}), ..Fake::default() });
        fake.replies.borrow_mut().extend([Err("the host did not answer in time".into()), Err("again".into())]);
        let controller = Controller::new(fake.clone(), |_| {});
        block_on(controller.handle(Action::Choose { gift_id: "g_1".into() }));
        match controller.state() {
            ViewState::Error { error, .. } => assert!(error.retryable),
            other => panic!("expected a retryable error, got {other:?}"),
        }
        block_on(controller.handle(Action::Retry));
        let calls = fake.calls.borrow();
        assert_eq!(calls[1].0, "prepare_order");
        assert_eq!(calls[1].1["gift_id"], json!("g_1"));
    }

    fn results_output() -> Value {
        json!({"v":3,"ok":true,"tool":"suggest_gifts","query":{"relationship_type":"friend","interests":[],
            "currency":"USD","limit":6},"gifts":[{"id":"g_1","title":"Mug","description":"A mug",
            "price":{"amount_minor":2500,"currency":"USD"},"merchant":{"id":"m","name":"Shop"},"tags":[],
            "reasons":[],"in_stock":true,"image_url":"/i.png"}]})
    }

    #[test]
    fn a_cancelled_model_call_offers_try_again_only_with_complete_arguments() {
        // Only partial arguments arrived: the view says so, and offers nothing to click.
        let partial_only = Rc::new(Fake::default());
        let controller = Controller::new(partial_only.clone(), |_| {});
        let so_far = as_object(json!({"relationship_type": "friend", "interests": ["hik"]}));
        controller.show_input_so_far(&so_far);
        assert!(matches!(controller.state(), ViewState::LoadingWith { .. }));
        controller.show_tool_cancelled(Some("stopped".into()), Some(ToolName::SuggestGifts));
        assert_eq!(controller.state(), ViewState::ToolCancelled { reason: Some("stopped".into()), retry: None });
        block_on(controller.handle(Action::Retry));
        assert!(partial_only.calls.borrow().is_empty(), "no call from partial arguments");

        // The complete input is known: Try again makes the model's call from the view.
        let complete = Rc::new(Fake { input: json!({"relationship_type": "friend"}), ..Fake::default() });
        complete.replies.borrow_mut().push(Ok(ToolResult { structured_content: results_output(), meta: Value::Null }));
        let controller = Controller::new(complete.clone(), |_| {});
        controller.show_tool_cancelled(None, Some(ToolName::SuggestGifts));
        assert_eq!(controller.state(), ViewState::ToolCancelled { reason: None, retry: Some(ToolName::SuggestGifts) });
        block_on(controller.handle(Action::Retry));
        assert_eq!(complete.calls.borrow()[0].0, "suggest_gifts");
        assert_eq!(Value::Object(complete.calls.borrow()[0].1.clone()), json!({"relationship_type": "friend"}));
        assert_eq!(controller.state().kind(), "results");
    }

    #[test]
    fn partial_input_and_cancellation_never_replace_a_real_screen() {
        let fake = Rc::new(Fake { input: json!({"relationship_type": "friend"}), ..Fake::default() });
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&results_output());
        controller.show_input_so_far(&as_object(json!({"relationship_type": "parent"})));
        controller.show_tool_cancelled(Some("late".into()), Some(ToolName::SuggestGifts));
        assert_eq!(controller.state().kind(), "results");
    }

    #[test]
    fn every_screen_is_saved_for_a_reload_and_comes_back_with_what_cancel_needs() {
        let fake = Rc::new(Fake {
            meta: json!({"giftgenius/confirmation_token": "tok"}),
            input: json!({"relationship_type": "friend"}),
            ..Fake::default()
        });
        fake.replies.borrow_mut().push(Ok(ToolResult { structured_content: draft_output(), meta: fake.meta.clone() }));
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&results_output());
        block_on(controller.handle(Action::Choose { gift_id: "g_1".into() }));
        assert!(matches!(controller.state(), ViewState::ConfirmPurchase { .. }));
        let last = fake.saved.borrow().last().cloned().expect("saved");
        assert!(matches!(last.screen.state(), Some(ViewState::ConfirmPurchase { busy: false, .. })));
        assert_eq!(last.results, Some(results_output()));
        // Loading (twice: Choose, then Confirm's prepare) is never saved; the confirmation is,
        // as the contract's own JSON.
        let kinds: Vec<&str> = fake
            .saved
            .borrow()
            .iter()
            .map(|s| match s.screen {
                Screen::Output(ref json) => {
                    if json == &results_output() {
                        "results"
                    } else {
                        "draft"
                    }
                }
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, vec!["results", "draft"]);

        // A reloaded view (a new controller) gets the model's results again from the host, and
        // the saved confirmation instead; Cancel still goes back to the results.
        let reloaded = Rc::new(Fake { input: json!({"relationship_type": "friend"}), ..Fake::default() });
        let controller = Controller::new(reloaded.clone(), |_| {});
        controller.restore(last, &results_output());
        assert!(matches!(controller.state(), ViewState::ConfirmPurchase { busy: false, .. }));
        controller.show_tool_output(&results_output());
        assert!(matches!(controller.state(), ViewState::ConfirmPurchase { .. }), "the host's repeat is not news");
        block_on(controller.handle(Action::Cancel));
        assert_eq!(controller.state().kind(), "results");
    }

    #[test]
    fn a_failed_commit_is_saved_with_its_draft_and_a_call_never_delivered_is_not_saved() {
        let fake = Rc::new(Fake { meta: json!({"giftgenius/confirmation_token": "tok"}), ..Fake::default() });
        fake.replies.borrow_mut().extend([Ok(transient()), Err("the host did not answer in time".into())]);
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&draft_output());
        block_on(controller.handle(Action::Confirm));
        let last = fake.saved.borrow().last().cloned().expect("saved");
        assert_eq!(last.screen, Screen::ConfirmFailed { draft: draft_output(), error: transient().structured_content });
        // Try again, and the host never answers: the inline error is the view's own, which no
        // contract JSON reproduces, so the confirmation itself is what a reload shows.
        block_on(controller.handle(Action::Retry));
        assert!(matches!(controller.state(), ViewState::ConfirmPurchase { error: Some(_), .. }));
        assert_eq!(fake.saved.borrow().last().map(|s| s.screen.clone()), Some(Screen::Output(draft_output())));

        let lost = Rc::new(Fake { input: json!({"relationship_type": "friend"}), ..Fake::default() });
        lost.replies.borrow_mut().push(Err("the host did not answer in time".into()));
        let controller = Controller::new(lost.clone(), |_| {});
        controller.show_tool_output(&results_output());
        block_on(controller.handle(Action::Choose { gift_id: "g_1".into() }));
        assert_eq!(controller.state().kind(), "error");
        let screens: Vec<Screen> = lost.saved.borrow().iter().map(|s| s.screen.clone()).collect();
        assert_eq!(screens, vec![Screen::Output(results_output())], "a reload shows the results again");
    }

    #[test]
    fn a_restored_confirmation_of_the_hosts_own_draft_keeps_its_token() {
        let fake = Rc::new(Fake { meta: json!({"giftgenius/confirmation_token": "tok"}), ..Fake::default() });
        fake.replies.borrow_mut().push(Ok(placed()));
        let controller = Controller::new(fake.clone(), |_| {});
        let saved = SavedView {
            screen: Screen::Output(draft_output()),
            results: None,
            suggest_args: None,
            last_call: None,
            delivery: None,
        };
        controller.restore(saved, &draft_output());
        block_on(controller.handle(Action::Confirm));
        let calls = fake.calls.borrow();
        assert_eq!(calls.len(), 1, "no second prepare_order: the host's token was kept");
        assert_eq!(calls[0].1["confirmation_token"], json!("tok"));
    }

    #[test]
    fn failures_are_logged_to_the_host_without_arguments() {
        let fake = Rc::new(Fake { meta: json!({"giftgenius/confirmation_token": "tok_secret"}), ..Fake::default() });
        fake.replies.borrow_mut().push(Err("the host did not answer in time".into()));
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&draft_output());
        block_on(controller.handle(Action::Confirm));
        block_on(controller.handle(Action::SetDisplayMode { mode: DisplayMode::Fullscreen }));
        let logs = fake.logs.borrow();
        assert_eq!(logs.len(), 2, "{logs:?}");
        assert_eq!(logs[0].0, LogLevel::Error);
        assert_eq!(
            logs[0].1,
            json!({"event": "tool_call_failed", "tool": "commit_order", "message": "the host did not answer in time"})
        );
        assert_eq!(logs[1].0, LogLevel::Warning);
        assert_eq!(logs[1].1["event"], "display_mode_failed");
        assert_eq!(*fake.display_requests.borrow(), vec![DisplayMode::Fullscreen]);
        let all = format!("{logs:?}");
        assert!(!all.contains("tok_secret") && !all.contains("ik_"), "no token or key in a log line");
    }

    #[test]
    fn cancel_clears_checkout_and_goes_back() {
        let fake = Rc::new(Fake::default());
        *fake.widget_state.borrow_mut() =
            json!({"checkout": {"draft_id": "d_1", "idempotency_key": "ik_1"}, "keep": true});
        let controller = Controller::new(fake.clone(), |_| {});
        controller.show_tool_output(&draft_output());
        block_on(controller.handle(Action::Cancel));
        assert_eq!(controller.state(), ViewState::Cancelled);
        assert_eq!(*fake.widget_state.borrow(), json!({"keep": true}));
    }

    #[test]
    fn suggestion_merges_over_the_previous_input() {
        let fake = Rc::new(Fake { input: json!({"relationship_type": "friend", "budget_max": 20}), ..Fake::default() });
        fake.replies.borrow_mut().push(Err("offline".into()));
        let controller = Controller::new(fake.clone(), |_| {});
        let set = as_object(json!({"budget_max": 60}));
        block_on(controller.handle(Action::ApplySuggestion { set_arguments: set }));
        let calls = fake.calls.borrow();
        assert_eq!(calls[0].0, "suggest_gifts");
        assert_eq!(Value::Object(calls[0].1.clone()), json!({"relationship_type": "friend", "budget_max": 60}));
        match controller.state() {
            ViewState::Error { error, .. } => assert!(error.retryable),
            other => panic!("expected error, got {other:?}"),
        }
    }
}
