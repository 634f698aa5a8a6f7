//! The screen a view keeps in its own storage, so reloading it comes back to the same place.
//!
//! MCP Apps gives a view no widget state back after a reload; ext-apps documents the pattern
//! instead: the server puts a unique `viewUUID` into the tool result's `_meta`, and the view
//! keeps its state in `localStorage` under that id. The host re-sends the same tool result
//! when it shows the view again, so the id finds the state again.
//!
//! What is kept is the contract's own JSON: the envelope of the result on screen (parsed back by
//! `ViewState::from_tool_output`, the path every tool result takes, so a stored screen of another
//! contract version shows as out of date rather than misread), the results Cancel goes back to,
//! and the arguments Try again and suggestions need. Plain data the model could see anyway: the
//! confirmation token never goes here (Confirm reopens the draft by id when it was lost), and
//! the idempotency key keeps its own entry (`rpc::checkout_storage_key`). Written and read by
//! hand through `serde_json::Value`, so the wasm carries no second copy of the contract's parsers;
//! the text in storage is the browser's `JSON.stringify`/`JSON.parse` (see `bridge.rs`), so the
//! wasm carries no JSON text parser or printer either.
//!
//! Storage keys are `giftgenius/view/<viewUUID>`; an index keeps the most recent
//! [`MAX_SAVED_VIEWS`] of them, so many conversations never fill the origin's storage.
//!
//! A host that keeps widget state per view and hands it back on a re-mount (ChatGPT's
//! `window.openai.widgetState`) gets the screen there too, under [`WIDGET_STATE_KEY`]: that works
//! where the view's frame has no storage at all. The model can read widget state, so that entry
//! is smaller: nothing when the screen is the host's own tool result (the host shows that
//! anyway), results equal to that tool result are a marker, and a confirmation goes without its
//! delivery details (the recipient's address and the gift message are for the widget only).
//! A card restored from there shows an empty form; its Confirm reopens the draft by id
//! (`reopen_order_draft`), which brings the details back with a fresh token.

use giftgenius_types::ToolName;
use giftgenius_types::wire::{META_VIEW_UUID, VIEW_STORAGE_PREFIX};
use serde_json::{Map, Value, json};

use crate::state::ViewState;

/// Bumped when the saved shape changes; an entry of another format is ignored, never guessed.
pub const FORMAT: u64 = 1;

/// How many views' entries an origin keeps; the oldest go first.
pub const MAX_SAVED_VIEWS: usize = 50;

/// The storage key of the index: a JSON array of storage keys, oldest first.
pub const INDEX_KEY: &str = "giftgenius/views";

/// The widget-state key of the screen kept in a host's widget state.
pub const WIDGET_STATE_KEY: &str = "view";

/// `results` of a widget-state entry whose results are the host's own tool result.
const RESULTS_ARE_OUTPUT: &str = "tool-output";

/// Arguments that carry delivery details (prepare_order's): a last call holding one is left out
/// of widget state (Try again there repeats the host's own call instead).
const PRIVATE_ARGUMENTS: [&str; 2] = ["recipient", "gift_message"];

/// What was on screen, in the contract's JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Screen {
    /// A tool result's `structuredContent`: results, empty, an error, a confirmation, an order,
    /// a checkout, or one of another contract version.
    Output(Value),
    /// A confirmation whose last commit attempt failed: the draft's and the failure's envelopes.
    ConfirmFailed { draft: Value, error: Value },
    /// The purchase was cancelled with no results to go back to.
    Cancelled,
    /// The host cancelled the call the view was opened for.
    ToolCancelled { reason: Option<String>, retry: Option<ToolName> },
}

impl Screen {
    /// The state this screen shows (a confirmation never busy: its key is stored, so pressing
    /// Confirm again replays rather than pays twice); `None` when the JSON does not give one.
    pub fn state(&self) -> Option<ViewState> {
        let state = match self {
            Screen::Output(output) => ViewState::from_tool_output(output),
            Screen::ConfirmFailed { draft, error } => {
                match (ViewState::from_tool_output(draft), ViewState::from_tool_output(error)) {
                    (ViewState::ConfirmPurchase { draft, .. }, ViewState::Error { error, .. }) => {
                        ViewState::ConfirmPurchase {
                            draft,
                            delivery: None,
                            card: None,
                            busy: false,
                            error: Some(error),
                        }
                    }
                    _ => return None,
                }
            }
            Screen::Cancelled => ViewState::Cancelled,
            Screen::ToolCancelled { reason, retry } => {
                ViewState::ToolCancelled { reason: reason.clone(), retry: *retry }
            }
        };
        match state {
            ViewState::ConfirmPurchase { draft, error, .. } => {
                Some(ViewState::ConfirmPurchase { draft, delivery: None, card: None, busy: false, error })
            }
            state if state.is_loading() => None,
            state => Some(state),
        }
    }
}

/// One view's saved screen.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedView {
    pub screen: Screen,
    /// The last `suggest_gifts` result (Cancel goes back to it) and its arguments.
    pub results: Option<Value>,
    pub suggest_args: Option<Map<String, Value>>,
    /// The last call besides commit_order, for "Try again".
    pub last_call: Option<(ToolName, Map<String, Value>)>,
    /// The shown draft's delivery details (its widget-only `_meta["giftgenius/delivery"]`), so a
    /// reloaded confirmation shows them. Personal data: kept in the view's own storage only
    /// (Delete my data clears it, see `Host::forget_saved_views`), never in widget state.
    pub delivery: Option<Value>,
}

impl SavedView {
    pub fn to_value(&self) -> Value {
        let screen = match &self.screen {
            Screen::Output(output) => json!({ "output": output }),
            Screen::ConfirmFailed { draft, error } => json!({ "confirm": draft, "error": error }),
            Screen::Cancelled => json!({ "cancelled": true }),
            Screen::ToolCancelled { reason, retry } => {
                json!({ "tool_cancelled": { "reason": reason, "retry": retry.map(|t| t.as_str()) } })
            }
        };
        let last_call = self.last_call.as_ref().map(|(tool, args)| json!({ "tool": tool.as_str(), "arguments": args }));
        json!({
            "format": FORMAT,
            "screen": screen,
            "results": self.results,
            "suggest_args": self.suggest_args,
            "last_call": last_call,
            "delivery": self.delivery,
        })
    }

    /// Reads a stored entry; one of another format, or without a screen to show, is `None`.
    pub fn from_value(saved: &Value) -> Option<SavedView> {
        if saved.get("format")?.as_u64()? != FORMAT {
            return None;
        }
        let object = |key: &str| saved.get(key).and_then(Value::as_object).cloned();
        let s = saved.get("screen")?;
        let screen = if let Some(output) = s.get("output") {
            Screen::Output(output.clone())
        } else if let (Some(draft), Some(error)) = (s.get("confirm"), s.get("error")) {
            Screen::ConfirmFailed { draft: draft.clone(), error: error.clone() }
        } else if s.get("cancelled") == Some(&Value::Bool(true)) {
            Screen::Cancelled
        } else if let Some(stopped) = s.get("tool_cancelled") {
            Screen::ToolCancelled {
                reason: stopped.get("reason").and_then(Value::as_str).map(str::to_string),
                retry: stopped.get("retry").and_then(Value::as_str).and_then(ToolName::parse),
            }
        } else {
            return None;
        };
        screen.state()?;
        let results = saved.get("results").filter(|r| r.is_object()).cloned();
        let last_call = saved.get("last_call").and_then(|call| {
            let tool = call.get("tool")?.as_str().and_then(ToolName::parse)?;
            Some((tool, call.get("arguments")?.as_object()?.clone()))
        });
        let delivery = saved.get("delivery").filter(|d| d.is_object()).cloned();
        Some(SavedView { screen, results, suggest_args: object("suggest_args"), last_call, delivery })
    }
}

/// The widget-state entry for `view`, shown in a view opened for the tool result `output`; `None`
/// when the entry should go (the screen is `output` itself, which the host shows again anyway).
/// Widget state is visible to the model: no token and no delivery details go there, neither as
/// the card's details nor in the arguments of the last call (Confirm after a reload reopens the
/// draft by id for both).
pub fn widget_state_entry(view: &SavedView, output: &Value) -> Option<Value> {
    if view.screen == Screen::Output(output.clone()) {
        return None;
    }
    let results_are_output = output.is_object() && view.results.as_ref() == Some(output);
    let compact = SavedView {
        results: if results_are_output { None } else { view.results.clone() },
        delivery: None,
        last_call: view
            .last_call
            .clone()
            .filter(|(_, args)| !PRIVATE_ARGUMENTS.iter().any(|name| args.contains_key(*name))),
        ..view.clone()
    };
    let mut entry = compact.to_value();
    if results_are_output {
        entry["results"] = json!(RESULTS_ARE_OUTPUT);
    }
    Some(entry)
}

/// `widget_state` with its screen entry set to `entry`, or removed when `None`; other keys kept.
pub fn with_widget_state_entry(widget_state: &Value, entry: Option<Value>) -> Value {
    let mut state = widget_state.as_object().cloned().unwrap_or_default();
    match entry {
        Some(entry) => state.insert(WIDGET_STATE_KEY.into(), entry),
        None => state.remove(WIDGET_STATE_KEY),
    };
    Value::Object(state)
}

/// The screen a host's widget state kept for a view opened for `output`, if a readable one.
pub fn from_widget_state(widget_state: &Value, output: &Value) -> Option<SavedView> {
    let entry = widget_state.get(WIDGET_STATE_KEY)?;
    let mut view = SavedView::from_value(entry)?;
    if entry.get("results").and_then(Value::as_str) == Some(RESULTS_ARE_OUTPUT) {
        view.results = Some(output.clone()).filter(Value::is_object);
    }
    Some(view)
}

/// The view id a tool result's `_meta` carries, if it is a plausible one (a UUID-like token:
/// it becomes part of a storage key, so nothing else is accepted).
pub fn view_id(meta: &Value) -> Option<String> {
    let id = meta.get(META_VIEW_UUID)?.as_str()?;
    let plausible = (8..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    plausible.then(|| id.to_string())
}

/// The storage key of a view's saved screen.
pub fn storage_key(view_id: &str) -> String {
    format!("{VIEW_STORAGE_PREFIX}{view_id}")
}

/// The index after `key` was written: `key` moves to the end, and the oldest keys beyond
/// [`MAX_SAVED_VIEWS`] come back as the entries to delete. An unreadable index starts afresh.
pub fn remember(index: Option<&Value>, key: &str) -> (Vec<String>, Vec<String>) {
    let mut keys: Vec<String> = index
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|k| k.as_str().map(str::to_string))
        .filter(|k| k != key && k.starts_with(VIEW_STORAGE_PREFIX))
        .collect();
    keys.push(key.to_string());
    let excess = keys.len().saturating_sub(MAX_SAVED_VIEWS);
    let evicted = keys.drain(..excess).collect();
    (keys, evicted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures::draft_output;

    fn failure() -> Value {
        json!({"v":3,"ok":false,"tool":"commit_order","error":{"code":"PAYMENT_PROVIDER_UNAVAILABLE",
            "category":"transient","message":"Payments are down","retryable":true,"reference":"req_1"}})
    }

    fn round_trip(saved: &SavedView) -> SavedView {
        SavedView::from_value(&saved.to_value()).expect("readable")
    }

    #[test]
    fn a_failed_confirmation_comes_back_not_busy_with_its_draft_and_its_error() {
        let args = json!({"gift_id": "g_1"}).as_object().cloned().unwrap_or_default();
        let saved = SavedView {
            screen: Screen::ConfirmFailed { draft: draft_output(), error: failure() },
            results: None,
            suggest_args: None,
            last_call: Some((ToolName::PrepareOrder, args)),
            delivery: Some(json!({"recipient": {"name": "Ana", "address": {"line1": "1 Main St", "city": "Lisbon",
                "postal_code": "1000-001", "country": "PT"}}})),
        };
        let back = round_trip(&saved);
        assert_eq!(back, saved);
        match back.screen.state() {
            Some(ViewState::ConfirmPurchase { draft, busy: false, error: Some(error), .. }) => {
                assert_eq!(draft.id, "d_1");
                assert!(error.retryable);
            }
            other => panic!("{other:?}"),
        }
        assert!(!saved.to_value().to_string().contains("confirmation_token"));
    }

    #[test]
    fn every_kind_of_screen_survives_storage() {
        for screen in [
            Screen::Output(draft_output()),
            Screen::Cancelled,
            Screen::ToolCancelled { reason: Some("stopped".into()), retry: Some(ToolName::SuggestGifts) },
            Screen::ToolCancelled { reason: None, retry: None },
            // Another contract version: kept, and shown as out of date, never misread.
            Screen::Output(json!({"v": 99, "ok": true})),
        ] {
            let saved = SavedView {
                screen,
                results: Some(draft_output()),
                suggest_args: None,
                last_call: None,
                delivery: None,
            };
            assert_eq!(round_trip(&saved), saved);
        }
        assert_eq!(Screen::Output(json!({"v": 99})).state(), Some(ViewState::OutOfDate { v: Some(99) }));
    }

    #[test]
    fn nothing_that_cannot_be_shown_is_restored() {
        // A "result" that is not there yet (null) would be loading: never restored.
        let loading = SavedView {
            screen: Screen::Output(Value::Null),
            results: None,
            suggest_args: None,
            last_call: None,
            delivery: None,
        };
        assert_eq!(SavedView::from_value(&loading.to_value()), None);
        // A failed confirmation whose parts do not fit together.
        let mismatched = SavedView {
            screen: Screen::ConfirmFailed { draft: failure(), error: draft_output() },
            results: None,
            suggest_args: None,
            last_call: None,
            delivery: None,
        };
        assert_eq!(SavedView::from_value(&mismatched.to_value()), None);
        let good =
            SavedView { screen: Screen::Cancelled, results: None, suggest_args: None, last_call: None, delivery: None };
        let mut other_format = good.to_value();
        other_format["format"] = json!(FORMAT + 1);
        assert_eq!(SavedView::from_value(&other_format), None);
        for junk in [
            json!(""),
            json!(null),
            json!({}),
            json!([1]),
            json!({"format": 1}),
            json!({"format": 1, "screen": {"what": 1}}),
        ] {
            assert_eq!(SavedView::from_value(&junk), None, "{junk}");
        }
    }

    fn results() -> Value {
        json!({"v":1,"ok":true,"tool":"suggest_gifts","gifts":[]})
    }

    #[test]
    fn widget_state_keeps_a_confirmation_without_its_delivery_and_restores_it() {
        let delivery = json!({"recipient": {"name": "Ana", "address": {"line1": "Rua Augusta 12", "city": "Lisboa",
            "postal_code": "1100-053", "country": "PT"}}});
        let edited = json!({"gift_id": "g_1", "recipient": delivery["recipient"], "gift_message": "Parabéns"});
        let view = SavedView {
            screen: Screen::Output(draft_output()),
            results: Some(results()),
            suggest_args: Some(json!({"relationship_type": "friend"}).as_object().cloned().unwrap_or_default()),
            last_call: Some((ToolName::PrepareOrder, edited.as_object().cloned().unwrap_or_default())),
            delivery: Some(delivery),
        };
        // Opened for the model's results: the results are a marker, not a second copy; the
        // model can read widget state, so nothing of the address goes there.
        let entry = widget_state_entry(&view, &results()).expect("an entry");
        let text = entry.to_string();
        assert!(text.contains("d_1") && !text.contains("gifts"), "{text}");
        for private in ["Ana", "Augusta", "1100-053", "Parabéns"] {
            assert!(!text.contains(private), "{private:?} in widget state: {text}");
        }
        let state = with_widget_state_entry(&json!({"checkout": {"draft_id": "d_1"}}), Some(entry));
        assert_eq!(state["checkout"]["draft_id"], "d_1", "other keys stay");
        let back = from_widget_state(&state, &results()).expect("restored");
        let bare = SavedView { delivery: None, last_call: None, ..view.clone() };
        assert_eq!(back, bare, "the card, its Confirm reopens the draft by id");
        assert!(matches!(back.screen.state(), Some(ViewState::ConfirmPurchase { busy: false, .. })));
        // A last call without delivery details is kept, for Try again.
        let plain = SavedView { last_call: Some((ToolName::SuggestGifts, Map::new())), ..view.clone() };
        let entry = widget_state_entry(&plain, &results());
        let kept = from_widget_state(&with_widget_state_entry(&Value::Null, entry), &results());
        assert_eq!(kept.and_then(|b| b.last_call), plain.last_call);
        // Results of another call are kept as they are.
        let other = json!({"v":1,"ok":true,"tool":"suggest_gifts","gifts":[], "query": {}});
        let back = from_widget_state(&with_widget_state_entry(&Value::Null, widget_state_entry(&view, &other)), &other);
        assert_eq!(back.map(|b| b.results), Some(Some(results())));
    }

    #[test]
    fn the_host_own_result_on_screen_needs_no_entry() {
        let view = SavedView {
            screen: Screen::Output(results()),
            results: Some(results()),
            suggest_args: None,
            last_call: None,
            delivery: None,
        };
        assert_eq!(widget_state_entry(&view, &results()), None);
        let state = with_widget_state_entry(&json!({"view": {"format": 1}, "checkout": 1}), None);
        assert_eq!(state, json!({"checkout": 1}));
        for junk in [json!(null), json!({}), json!({"view": 3}), json!({"view": {"format": 99}})] {
            assert_eq!(from_widget_state(&junk, &results()), None, "{junk}");
        }
    }

    #[test]
    fn only_plausible_view_ids_become_storage_keys() {
        let id = "3f2c9a4e-1b7d-8c55-9e0a-6d4f2b1c7e90";
        assert_eq!(view_id(&json!({ META_VIEW_UUID: id })).as_deref(), Some(id));
        assert_eq!(storage_key(id), format!("giftgenius/view/{id}"));
        for bad in [
            json!(null),
            json!({}),
            json!({ META_VIEW_UUID: 7 }),
            json!({ META_VIEW_UUID: "short" }),
            json!({ META_VIEW_UUID: "../../giftgenius/checkout/x" }),
            json!({ META_VIEW_UUID: "a".repeat(65) }),
        ] {
            assert_eq!(view_id(&bad), None, "{bad}");
        }
    }

    #[test]
    fn the_index_keeps_the_most_recent_views() {
        let (index, evicted) = remember(None, "giftgenius/view/a");
        assert_eq!((index, evicted), (vec!["giftgenius/view/a".to_string()], vec![]));
        // Writing a key again moves it to the end instead of duplicating it.
        let (index, _) = remember(Some(&json!(["giftgenius/view/a", "giftgenius/view/b"])), "giftgenius/view/a");
        assert_eq!(index, vec!["giftgenius/view/b", "giftgenius/view/a"]);
        let full: Vec<String> = (0..MAX_SAVED_VIEWS).map(|i| format!("giftgenius/view/{i}")).collect();
        let (index, evicted) = remember(Some(&json!(full)), "giftgenius/view/new");
        assert_eq!(index.len(), MAX_SAVED_VIEWS);
        assert_eq!(evicted, vec!["giftgenius/view/0".to_string()]);
        assert_eq!(index.last().map(String::as_str), Some("giftgenius/view/new"));
        // Someone else's keys in the index are dropped from it, never deleted as if they were ours.
        let (index, evicted) = remember(Some(&json!(["giftgenius/checkout/d_1", 5])), "giftgenius/view/x");
        assert_eq!((index, evicted), (vec!["giftgenius/view/x".to_string()], vec![]));
        let (index, _) = remember(Some(&json!("not a list")), "giftgenius/view/x");
        assert_eq!(index, vec!["giftgenius/view/x".to_string()]);
    }
}
