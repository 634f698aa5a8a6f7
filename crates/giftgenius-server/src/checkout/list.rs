//! `list_orders`: the caller's own orders, newest first, a page at a time behind an opaque
//! cursor. Read-only. The model reads each order's status, total and destination (city,
//! country); the widget also gets each order's delivery details, a cancel token for each order
//! that may still be cancelled, and the token of the Delete my data button.

use giftgenius_types::wire::{META_AUTHENTICATION_URLS, META_CANCEL_TOKENS, META_DELETE_DATA_TOKEN, META_DELIVERIES};
use giftgenius_types::{FieldError, ListOrdersData, ListOrdersInput, ToolError};
use serde_json::Value;

use super::{Checkout, deliveries_meta};
use crate::context::CallContext;
use crate::error::internal;
use crate::outcome::{Answer, Outcome};

/// The cursor after the order created at `created_at_ms` with `id`: opaque to clients (hex), and
/// harmless if forged, since a page only ever holds the caller's own orders.
fn cursor_after(created_at_ms: i64, id: &str) -> String {
    hex::encode(format!("{created_at_ms}:{id}"))
}

/// A cursor back to (created_at_ms, id), if it is one of ours.
fn parse_cursor(cursor: &str) -> Option<(i64, String)> {
    let text = String::from_utf8(hex::decode(cursor).ok()?).ok()?;
    let (at, id) = text.split_once(':')?;
    Some((at.parse().ok()?, id.to_string()))
}

impl Checkout {
    pub async fn list_orders(&self, call: &CallContext, input: &ListOrdersInput) -> Outcome<ListOrdersData> {
        self.list(call, input).await.into()
    }

    async fn list(&self, call: &CallContext, input: &ListOrdersInput) -> Result<Answer<ListOrdersData>, ToolError> {
        let before = match input.cursor.as_deref().map(parse_cursor) {
            None => (i64::MAX, String::new()),
            Some(Some(before)) => before,
            Some(None) => {
                return Err(ToolError::validation(
                    vec![FieldError::new("cursor", "must be the next_cursor of a previous list_orders result")],
                    &call.reference,
                ));
            }
        };
        // One more than a page tells whether another page follows.
        let mut rows = self
            .store
            .orders_of(&call.subject, (before.0, &before.1), input.limit + 1)
            .await
            .map_err(|e| internal(call, &e))?;
        let more = rows.len() as i64 > input.limit;
        rows.truncate(input.limit as usize);
        let next_cursor = more.then(|| rows.last().map(|r| cursor_after(r.created_at_ms, &r.id))).flatten();
        let mut orders = Vec::with_capacity(rows.len());
        for row in &rows {
            orders.push(self.order_view(row).await.map_err(|e| internal(call, &e))?);
        }
        let deliveries = deliveries_meta(&rows).map_err(|e| internal(call, &e))?;
        let tokens = self.cancel_tokens_meta(call, &rows);
        let links = self.authentication_meta(&rows);
        let mut answer = Answer::new(ListOrdersData { orders, next_cursor });
        if !links.is_empty() {
            answer = answer.with_widget_meta(META_AUTHENTICATION_URLS, Value::Object(links));
        }
        Ok(answer
            .with_widget_meta(META_DELIVERIES, Value::Object(deliveries))
            .with_widget_meta(META_CANCEL_TOKENS, Value::Object(tokens))
            .with_widget_meta(
                META_DELETE_DATA_TOKEN,
                Value::String(self.confirmation.delete_token(&call.subject, self.now())),
            ))
    }
}

impl crate::outcome::ModelText for ListOrdersData {
    fn model_text(answer: &Answer<Self>) -> String {
        let data = &answer.data;
        if data.orders.is_empty() {
            return "The user has no orders on this page (none yet, or none older than the cursor).".into();
        }
        let mut text = format!("{} order(s), newest first:", data.orders.len());
        for order in &data.orders {
            let to = order.destination.as_ref().map(|d| format!(" to {}, {}", d.city, d.country)).unwrap_or_default();
            let cancel = if order.cancellable_until.is_some() { " (cancellable in the widget)" } else { "" };
            text.push_str(&format!(
                "\n- {} on {}: {}, {}{to}, {}{cancel}",
                order.id,
                order.created_at,
                super::order_lines_text(order),
                order.total.display(),
                order.status.as_str()
            ));
        }
        if let Some(cursor) = &data.next_cursor {
            text.push_str(&format!("\nOlder orders: call list_orders with cursor {cursor}."));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_round_trips_and_junk_is_refused() {
        let cursor = cursor_after(1_780_000_000_123, "ord_abc");
        assert!(cursor.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(parse_cursor(&cursor), Some((1_780_000_000_123, "ord_abc".to_string())));
        assert_eq!(parse_cursor("zz"), None);
        assert_eq!(parse_cursor(&hex::encode("no-colon")), None);
        assert_eq!(parse_cursor(&hex::encode("x:ord")), None);
    }
}
