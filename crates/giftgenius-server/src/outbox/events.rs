//! Building an order's event before the store step that records the order change (docs/acp.md
//! §10.1): `{type, data}` with `data` the full ACP Order as it is after the change, serialized
//! once. The store writes those bytes in the change's transaction and they are posted as they
//! are, so a retry days later says what was true then.
//!
//! An ACP order's Order comes from its session as shown when it was paid (`at_payment`), the
//! same as the complete answer; an app order's from its draft (`acp/order.rs`). Who receives it
//! is decided here ([`Receivers::for_subject`]): no receiver, no event.

use std::sync::Arc;

use giftgenius_types::acp::{AcpOrder, AcpWebhookEvent};

use super::receivers::Receivers;
use crate::acp::order::{OrderLinks, PaidFor, acp_order};
use crate::acp::session::SessionState;
use crate::checkout::permalink::Permalinks;
use crate::store::{NewOrderEvent, OrderChange, OrderFacts, OrderRow, Store, StoreError, StoreResult};

/// Builds order events.
pub struct OrderEvents {
    pub store: Store,
    pub receivers: Arc<Receivers>,
    pub permalinks: Arc<Permalinks>,
    /// Base URL clients reach us at (no trailing slash): the support link.
    pub public_url: String,
}

impl std::fmt::Debug for OrderEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderEvents").field("receivers", &self.receivers).finish_non_exhaustive()
    }
}

impl OrderEvents {
    /// The event announcing `change` of an order whose facts are `facts` once changed (the
    /// order, its cancellation's refund, its adjustments), built from what the database keeps;
    /// `None` if nobody receives this order's events. Not for `Refunded`: see
    /// [`OrderEvents::adjustment_event`].
    pub async fn event(&self, facts: &OrderFacts, change: OrderChange) -> StoreResult<Option<NewOrderEvent>> {
        self.keyed_event(facts, change, String::new()).await
    }

    /// The event announcing that adjustment `adjustment_id` of an order succeeded (`facts` show
    /// it succeeded): one per adjustment.
    pub async fn adjustment_event(
        &self,
        facts: &OrderFacts,
        adjustment_id: &str,
    ) -> StoreResult<Option<NewOrderEvent>> {
        self.keyed_event(facts, OrderChange::Refunded, adjustment_id.to_string()).await
    }

    async fn keyed_event(
        &self,
        facts: &OrderFacts,
        change: OrderChange,
        change_key: String,
    ) -> StoreResult<Option<NewOrderEvent>> {
        let order = &facts.order;
        let Some(receiver) = self.receivers.for_subject(&order.subject) else { return Ok(None) };
        let paid_for = self.paid_for(order).await?;
        let data = acp_order(facts, &paid_for, self.links(&order.id));
        let mut event = self.new_event(receiver, order, change, data)?;
        event.change_key = change_key;
        Ok(Some(event))
    }

    /// The event announcing `change` of `order` whose ACP Order is `data` already (an ACP
    /// complete: the order its answer shows); `None` if nobody receives this order's events.
    pub fn event_of(
        &self,
        order: &OrderRow,
        change: OrderChange,
        data: AcpOrder,
    ) -> StoreResult<Option<NewOrderEvent>> {
        let Some(receiver) = self.receivers.for_subject(&order.subject) else { return Ok(None) };
        self.new_event(receiver, order, change, data).map(Some)
    }

    fn new_event(
        &self,
        receiver: String,
        order: &OrderRow,
        change: OrderChange,
        data: AcpOrder,
    ) -> StoreResult<NewOrderEvent> {
        let event = AcpWebhookEvent { kind: change.event_type().into(), data };
        let body = serde_json::to_string(&event).map_err(StoreError::json("order event"))?;
        Ok(NewOrderEvent {
            id: crate::checkout::random_id("evt"),
            receiver,
            order_id: order.id.clone(),
            change,
            change_key: String::new(),
            body,
        })
    }

    fn links(&self, order_id: &str) -> OrderLinks {
        OrderLinks {
            permalink_url: self.permalinks.url(order_id),
            help_center_url: format!("{}/support", self.public_url),
        }
    }

    /// What `order` paid for: its ACP session as shown when paid, or its app draft.
    async fn paid_for(&self, order: &OrderRow) -> StoreResult<PaidFor> {
        if let Some(platform) = order.subject.strip_prefix("acp:") {
            let session = self.store.acp_session(&order.draft_id, platform).await?;
            let at_payment = session
                .and_then(|row| serde_json::from_str::<SessionState>(&row.state).ok())
                .and_then(|state| state.at_payment);
            return Ok(match at_payment {
                Some(session) => PaidFor::of_session(&session),
                None => {
                    // The session was pruned (or never got that far): the order's own record.
                    tracing::warn!(
                        order = order.id,
                        "ACP order without its session's payment view; its event shows the order's total only"
                    );
                    PaidFor::of_app_order(order, None)
                }
            });
        }
        let draft = self.store.draft(&order.subject, &order.draft_id).await?;
        Ok(PaidFor::of_app_order(order, draft.as_ref()))
    }
}
