//! The screen a view keeps in its own storage, so reloading it comes back to the same place.
//!
//! MCP Apps gives a view no widget state back after a reload; ext-apps documents the pattern
//! instead: the server puts a unique `viewUUID` into the tool result's `_meta`, and the view
//! keeps its state in `localStorage` under that id. The host re-sends the same tool result
//! when it shows the view again, so the id finds the state again.
//!
//! What is kept is plain data the model could see anyway: the state on screen (never busy),
//! the results Cancel goes back to and the arguments Try again and suggestions need. The
//! confirmation token never goes here (Confirm prepares the draft again when it was lost), and
//! the idempotency key keeps its own entry (`rpc::checkout_storage_key`).
//!
//! Storage keys are `giftgenius/view/<viewUUID>`; an index keeps the most recent
//! [`MAX_SAVED_VIEWS`] of them, so many conversations never fill the origin's storage.

use giftgenius_types::wire::{META_VIEW_UUID, VIEW_STORAGE_PREFIX};
use giftgenius_types::{CONTRACT_VERSION, ToolName};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::state::ViewState;

/// Bumped when the saved shape changes; an entry of another format is ignored, never guessed.
pub const FORMAT: u32 = 1;

/// How many views' entries an origin keeps; the oldest go first.
pub const MAX_SAVED_VIEWS: usize = 50;

/// The storage key of the index: a JSON array of storage keys, oldest first.
pub const INDEX_KEY: &str = "giftgenius/views";

/// One view's saved screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedView {
    pub format: u32,
    /// The contract version the states were parsed under.
    pub contract: u32,
    pub state: ViewState,
    /// The last results (Cancel goes back to them) and the arguments that produced them.
    pub results: Option<ViewState>,
    pub suggest_args: Option<Map<String, Value>>,
    /// The last call besides commit_order, for "Try again".
    pub last_call: Option<(ToolName, Map<String, Value>)>,
}

impl SavedView {
    /// A snapshot worth keeping, or `None` for a state that must not come back after a reload
    /// (loading: the call it waited for is gone with the page). A busy confirmation is kept as
    /// not busy: the key is stored, so pressing Confirm again replays rather than pays twice.
    pub fn of(
        state: &ViewState,
        results: Option<&ViewState>,
        suggest_args: Option<&Map<String, Value>>,
        last_call: Option<&(ToolName, Map<String, Value>)>,
    ) -> Option<SavedView> {
        if state.is_loading() {
            return None;
        }
        let state = match state {
            ViewState::ConfirmPurchase { draft, error, .. } => {
                ViewState::ConfirmPurchase { draft: draft.clone(), busy: false, error: error.clone() }
            }
            other => other.clone(),
        };
        Some(SavedView {
            format: FORMAT,
            contract: CONTRACT_VERSION,
            state,
            results: results.cloned(),
            suggest_args: suggest_args.cloned(),
            last_call: last_call.cloned(),
        })
    }

    /// Reads a stored entry; anything of another format or contract, or unreadable, is `None`.
    pub fn parse(stored: &str) -> Option<SavedView> {
        let saved: SavedView = serde_json::from_str(stored).ok()?;
        (saved.format == FORMAT && saved.contract == CONTRACT_VERSION && !saved.state.is_loading()).then_some(saved)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
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
pub fn remember(index: Option<&str>, key: &str) -> (Vec<String>, Vec<String>) {
    let mut keys: Vec<String> = index
        .and_then(|s| serde_json::from_str::<Vec<String>>(s).ok())
        .unwrap_or_default()
        .into_iter()
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
    use serde_json::json;

    fn confirm(busy: bool) -> ViewState {
        let output = json!({"v":1,"ok":true,"tool":"prepare_order","draft":{
            "id":"d_1","quantity":1,"shipping":"standard",
            "subtotal":{"amount_minor":2500,"currency":"USD"},
            "shipping_cost":{"amount_minor":500,"currency":"USD"},
            "total":{"amount_minor":3000,"currency":"USD"},
            "expires_at":"2030-01-01T00:00:00Z",
            "gift":{"id":"g_1","title":"Mug","description":"A mug","price":{"amount_minor":2500,"currency":"USD"},
                "merchant":{"id":"m","name":"Shop"},"tags":[],"reasons":[],"in_stock":true,"image_url":"/i.png"}}});
        match ViewState::from_tool_output(&output) {
            ViewState::ConfirmPurchase { draft, error, .. } => ViewState::ConfirmPurchase { draft, busy, error },
            other => panic!("fixture: {other:?}"),
        }
    }

    #[test]
    fn a_confirmation_comes_back_not_busy_with_its_draft() {
        let args = json!({"gift_id": "g_1"}).as_object().cloned().unwrap_or_default();
        let call = (ToolName::PrepareOrder, args);
        let saved = SavedView::of(&confirm(true), None, None, Some(&call)).expect("kept");
        let back = SavedView::parse(&saved.to_json()).expect("readable");
        assert_eq!(back.state, confirm(false));
        assert_eq!(back.last_call, Some(call));
        assert!(!saved.to_json().contains("confirmation_token"));
    }

    #[test]
    fn loading_is_never_kept_and_foreign_entries_are_ignored() {
        assert_eq!(SavedView::of(&ViewState::Loading, None, None, None), None);
        assert_eq!(SavedView::of(&ViewState::LoadingWith { so_far: vec!["x".into()] }, None, None, None), None);
        let saved = SavedView::of(&ViewState::Cancelled, None, None, None).expect("kept");
        let mut other_format = serde_json::to_value(&saved).expect("json");
        other_format["format"] = json!(FORMAT + 1);
        assert_eq!(SavedView::parse(&other_format.to_string()), None);
        let mut other_contract = serde_json::to_value(&saved).expect("json");
        other_contract["contract"] = json!(CONTRACT_VERSION + 1);
        assert_eq!(SavedView::parse(&other_contract.to_string()), None);
        let mut loading = serde_json::to_value(&saved).expect("json");
        loading["state"] = json!({"kind": "loading"});
        assert_eq!(SavedView::parse(&loading.to_string()), None);
        for junk in ["", "null", "{}", "[1]", "{\"format\":1}"] {
            assert_eq!(SavedView::parse(junk), None, "{junk}");
        }
        assert_eq!(SavedView::parse(&saved.to_json()), Some(saved));
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
        assert_eq!((index.clone(), evicted), (vec!["giftgenius/view/a".to_string()], vec![]));
        // Writing a key again moves it to the end instead of duplicating it.
        let text = serde_json::to_string(&vec!["giftgenius/view/a", "giftgenius/view/b"]).unwrap_or_default();
        let (index, _) = remember(Some(&text), "giftgenius/view/a");
        assert_eq!(index, vec!["giftgenius/view/b", "giftgenius/view/a"]);
        let full: Vec<String> = (0..MAX_SAVED_VIEWS).map(|i| format!("giftgenius/view/{i}")).collect();
        let (index, evicted) = remember(Some(&serde_json::to_string(&full).unwrap_or_default()), "giftgenius/view/new");
        assert_eq!(index.len(), MAX_SAVED_VIEWS);
        assert_eq!(evicted, vec!["giftgenius/view/0".to_string()]);
        assert_eq!(index.last().map(String::as_str), Some("giftgenius/view/new"));
        // Junk in the index is dropped, never deleted as if it were ours.
        let (index, evicted) = remember(Some(r#"["giftgenius/checkout/d_1"]"#), "giftgenius/view/x");
        assert_eq!((index, evicted), (vec!["giftgenius/view/x".to_string()], vec![]));
        let (index, _) = remember(Some("not json"), "giftgenius/view/x");
        assert_eq!(index, vec!["giftgenius/view/x".to_string()]);
    }
}
