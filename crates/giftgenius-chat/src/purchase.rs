//! Human confirmation in a host (seed 003): when `prepare_order` returns a draft, the host shows
//! it to the person as a card and asks; only a typed "yes" makes the HOST call `commit_order`,
//! with the confirmation token from the result's widget-only `_meta` (which the model never
//! reads) and an idempotency key minted once per draft and reused on every retry, as the widget
//! does. The model only learns what the person decided and what the order became.
//!
//! In the preview's chat panel the app's own view (the widget) shows the draft and its Confirm
//! commits through the page's bridge, as in any host with views; the host then only reads the
//! reported order back with `get_order` (it must belong to this draft) and never commits itself,
//! so one click is one commit.

use std::collections::HashMap;
use std::time::Duration;

use giftgenius_types::OrderDraft;
use giftgenius_types::wire::META_CONFIRMATION_TOKEN;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::log::Log;
use crate::mcp::{CallFailure, Mcp};

/// What the person decided about a draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// Not bought.
    Declined,
    /// Bought: the host commits the draft itself (the terminal's typed "yes").
    Confirmed,
    /// The app's own view (the widget) already committed it through the host's bridge and this is
    /// the order it reported; the loop reads it back with `get_order` and never commits again.
    PlacedByView { order_id: String },
}

/// The host-only tool that charges a confirmed draft.
pub const COMMIT_TOOL: &str = "commit_order";

/// The tool that reads an order back (what a view reported placing).
pub const GET_ORDER_TOOL: &str = "get_order";

/// Attempts of one commit (the same key every time).
const COMMIT_ATTEMPTS: u32 = 3;

/// A draft the person can confirm: what the card shows and what the commit needs.
#[derive(Debug, Clone)]
pub struct Draft {
    pub draft: OrderDraft,
    token: String,
}

/// The draft in a successful tool result that carries a confirmation token, if any.
pub fn draft_of(result: &CallToolResult) -> Option<Draft> {
    if result.is_error == Some(true) {
        return None;
    }
    let token = result.meta.as_ref()?.0.get(META_CONFIRMATION_TOKEN)?.as_str()?.to_string();
    let structured = result.structured_content.as_ref()?;
    if structured.get("ok") != Some(&Value::Bool(true)) {
        return None;
    }
    let draft: OrderDraft = serde_json::from_value(structured.get("draft")?.clone()).ok()?;
    Some(Draft { draft, token })
}

/// The confirmation card as text.
pub fn card(draft: &OrderDraft) -> String {
    let gift = &draft.gift;
    format!(
        "┌─ Confirm purchase ─────────────────────────\n\
         │ {title}\n\
         │ from {merchant}\n\
         │ quantity {quantity} · {shipping} shipping\n\
         │ subtotal {subtotal} · shipping {shipping_cost}\n\
         │ TOTAL {total}\n\
         │ draft {id}, valid until {expires}\n\
         └────────────────────────────────────────────",
        title = gift.title,
        merchant = gift.merchant.name,
        quantity = draft.quantity,
        shipping = draft.shipping.as_str(),
        subtotal = draft.subtotal.display(),
        shipping_cost = draft.shipping_cost.display(),
        total = draft.total.display(),
        id = draft.id,
        expires = draft.expires_at,
    )
}

/// What the host did with a draft: the line the person sees and the note the model reads.
pub struct Decision {
    pub shown: String,
    pub for_model: String,
}

/// The idempotency keys of this session's drafts: one per draft, minted on first use.
#[derive(Default)]
pub struct Purchases {
    keys: HashMap<String, String>,
}

impl Purchases {
    /// The draft's key, minted once (`ik_` + 32 hex digits of a random UUID) and reused after.
    pub fn key_for(&mut self, draft_id: &str) -> String {
        self.keys
            .entry(draft_id.to_string())
            .or_insert_with(|| {
                format!("{}{}", giftgenius_types::wire::IDEMPOTENCY_KEY_PREFIX, uuid::Uuid::new_v4().simple())
            })
            .clone()
    }

    /// The person's answer, carried out.
    pub async fn decide(
        &mut self,
        mcp: &Mcp,
        draft: &Draft,
        answer: Confirmation,
        timeout: Duration,
        log: &Log,
    ) -> Decision {
        let id = &draft.draft.id;
        log.write("confirmation", json!({"draft_id": id, "answer": format!("{answer:?}")}));
        let placed = match answer {
            Confirmation::Declined => {
                return Decision {
                    shown: "Not bought: nothing was ordered or charged.".into(),
                    for_model: format!(
                        "HOST NOTE: the person was shown draft {id} and declined it. Nothing was ordered or charged. \
                         Do not prepare it again unless they ask."
                    ),
                };
            }
            Confirmation::Confirmed => self.commit(mcp, draft, timeout, log).await,
            Confirmation::PlacedByView { order_id } => read_back(mcp, id, &order_id, timeout, log).await,
        };
        match placed {
            Ok(order) => {
                let summary = format!(
                    "Order placed: {} ({}), total {}",
                    order["id"].as_str().unwrap_or("?"),
                    order["status"].as_str().unwrap_or("?"),
                    money(&order["total"])
                );
                Decision {
                    for_model: format!(
                        "HOST NOTE: the person confirmed draft {id} and the host placed the order (you cannot place \
                         orders yourself). Order: {order}"
                    ),
                    shown: summary,
                }
            }
            Err(why) => Decision {
                shown: format!("The order could not be placed: {why}"),
                for_model: format!(
                    "HOST NOTE: the person confirmed draft {id}, but placing the order failed: {why} \
                     Tell the person; they can ask to try again."
                ),
            },
        }
    }

    /// `commit_order` with the draft's token and key, retried with the same key while the failure
    /// is retryable (no answer, a transport error, `retryable: true`).
    async fn commit(&mut self, mcp: &Mcp, draft: &Draft, timeout: Duration, log: &Log) -> Result<Value, String> {
        let key = self.key_for(&draft.draft.id);
        let arguments = json!({"draft_id": draft.draft.id, "idempotency_key": key, "confirmation_token": draft.token});
        let Value::Object(arguments) = arguments else { unreachable!("an object literal") };
        let mut last = String::new();
        for attempt in 1..=COMMIT_ATTEMPTS {
            let started = std::time::Instant::now();
            let outcome = mcp.call(COMMIT_TOOL, arguments.clone(), timeout).await;
            let ms = started.elapsed().as_millis() as u64;
            let (retry, wait) = match outcome {
                Ok(result) => {
                    let structured = result.structured_content.clone().unwrap_or(Value::Null);
                    log.write(
                        "host_call",
                        json!({"tool": COMMIT_TOOL, "attempt": attempt, "ms": ms, "arguments": crate::log::redacted(&Value::Object(arguments.clone())), "is_error": result.is_error, "structured": structured}),
                    );
                    if result.is_error != Some(true) {
                        if let Some(order) = structured.get("order") {
                            return Ok(order.clone());
                        }
                        return Err("the server's answer had no order".into());
                    }
                    let error = &structured["error"];
                    last = error["message"].as_str().unwrap_or("the server refused the order").to_string();
                    let wait = error["retry_after_ms"].as_u64().unwrap_or(500 * u64::from(attempt));
                    (error["retryable"].as_bool() == Some(true), wait)
                }
                Err(failure) => {
                    last = match &failure {
                        CallFailure::Timeout(t) => format!("no answer within {} ms", t.as_millis()),
                        CallFailure::Transport(_) => "the MCP server could not be reached".to_string(),
                    };
                    log.write(
                        "host_call",
                        json!({"tool": COMMIT_TOOL, "attempt": attempt, "ms": ms, "arguments": crate::log::redacted(&Value::Object(arguments.clone())), "failure": format!("{failure:?}")}),
                    );
                    (true, 500 * u64::from(attempt))
                }
            };
            if !retry || attempt == COMMIT_ATTEMPTS {
                break;
            }
            tokio::time::sleep(Duration::from_millis(wait.min(5_000))).await;
        }
        Err(last)
    }
}

/// The order a view reported placing for `draft_id`, as the server has it (`get_order`). An order
/// of another draft, or one the server does not know, is an error: the model is never told of a
/// purchase the server does not confirm.
async fn read_back(mcp: &Mcp, draft_id: &str, order_id: &str, timeout: Duration, log: &Log) -> Result<Value, String> {
    let Value::Object(arguments) = json!({"order_id": order_id}) else { unreachable!("an object literal") };
    let started = std::time::Instant::now();
    let outcome = mcp.call(GET_ORDER_TOOL, arguments, timeout).await;
    let ms = started.elapsed().as_millis() as u64;
    let result = match outcome {
        Ok(result) => result,
        Err(failure) => {
            log.write("host_call", json!({"tool": GET_ORDER_TOOL, "ms": ms, "failure": format!("{failure:?}")}));
            return Err("the order the app reported could not be read back from the server".into());
        }
    };
    let structured = result.structured_content.clone().unwrap_or(Value::Null);
    log.write(
        "host_call",
        json!({"tool": GET_ORDER_TOOL, "ms": ms, "order_id": order_id, "is_error": result.is_error, "structured": structured}),
    );
    if result.is_error == Some(true) {
        return Err(structured["error"]["message"]
            .as_str()
            .unwrap_or("the server does not know that order")
            .to_string());
    }
    match structured.get("order") {
        Some(order) if order["draft_id"].as_str() == Some(draft_id) => Ok(order.clone()),
        Some(_) => Err(format!("the order the app reported belongs to another draft than {draft_id}")),
        None => Err("the server's answer had no order".into()),
    }
}

fn money(value: &Value) -> String {
    serde_json::from_value::<giftgenius_types::Money>(value.clone())
        .map(|m| m.display())
        .unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, MetaObject};

    #[test]
    fn a_drafts_key_is_minted_once() {
        let mut p = Purchases::default();
        let a = p.key_for("d_1");
        assert!(a.starts_with("ik_") && a.len() == 35, "{a}");
        assert_eq!(p.key_for("d_1"), a);
        assert_ne!(p.key_for("d_2"), a);
    }

    #[test]
    fn only_a_successful_result_with_a_token_is_a_draft() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("x")]);
        result.structured_content = Some(json!({"v": 6, "ok": true, "draft": {"id": "d"}}));
        assert!(draft_of(&result).is_none(), "no token");
        let mut meta = serde_json::Map::new();
        meta.insert(META_CONFIRMATION_TOKEN.into(), json!("tok"));
        result.meta = Some(MetaObject(meta));
        assert!(draft_of(&result).is_none(), "not a whole draft");
    }
}
