//! Building an order's event before the store step that records the order change (docs/acp.md
//! §10.1): the body, in the words of the protocol its receivers speak ([`EventBodies`]; today
//! ACP's `{type, data}` with the full ACP Order as it is after the change, `acp/events.rs`),
//! serialized once. The store writes those bytes in the change's transaction and they are
//! posted as they are, so a retry days later says what was true then.
//!
//! Nothing here knows a protocol: the outbox stores what happened to an order and whom to tell,
//! and the next protocol adds an [`EventBodies`], not a fork of this. Who receives an event is
//! decided here ([`Receivers::for_subject`]): no receiver, no event.

use crate::order::Order;
use std::sync::Arc;

use super::receivers::Receivers;
use crate::store::{NewOrderEvent, OrderChange, OrderFacts, StoreResult};

/// What an order event says, in the words of the protocol its receivers speak: the body posted.
#[async_trait::async_trait]
pub trait EventBodies: Send + Sync {
    /// The body announcing `change` of the order whose facts are `facts` once changed (the
    /// order, its cancellation's refund, its adjustments).
    async fn body(&self, facts: &OrderFacts, change: OrderChange) -> StoreResult<String>;
}

/// Builds order events.
pub struct OrderEvents {
    pub receivers: Arc<Receivers>,
    /// The bodies, in the receivers' protocol.
    pub bodies: Arc<dyn EventBodies>,
}

impl std::fmt::Debug for OrderEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderEvents").field("receivers", &self.receivers).finish_non_exhaustive()
    }
}

impl OrderEvents {
    /// The event announcing `change` of an order whose facts are `facts` once changed, built
    /// from what the database keeps; `None` if nobody receives this order's events. Not for
    /// `Refunded`: see [`OrderEvents::adjustment_event`].
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
        if self.receivers.for_subject(&facts.order.subject).is_none() {
            return Ok(None);
        }
        let body = self.bodies.body(facts, change).await?;
        let mut event = self.event_with_body(&facts.order, change, body);
        if let Some(event) = event.as_mut() {
            event.change_key = change_key;
        }
        Ok(event)
    }

    /// The event announcing `change` of `order` whose body is made already (an ACP complete: the
    /// order its answer shows); `None` if nobody receives this order's events.
    pub fn event_with_body(&self, order: &Order, change: OrderChange, body: String) -> Option<NewOrderEvent> {
        let receiver = self.receivers.for_subject(&order.subject)?;
        Some(NewOrderEvent {
            id: crate::ids::random_id("evt"),
            receiver,
            order_id: order.id.clone(),
            change,
            change_key: String::new(),
            body,
        })
    }
}
