//! ACP's order events (docs/acp.md §10.1): `{type, data}` with `data` the full ACP Order as it
//! is after the change. An ACP order's Order comes from its session as shown when it was paid
//! (`at_payment`), the same as the complete answer; an app order's from its draft
//! (`order.rs`). The outbox asks for these bodies ([`giftgenius_commerce::outbox::EventBodies`]) and knows no
//! ACP type.

use giftgenius_commerce::order::Order;
use std::sync::Arc;

use giftgenius_types::acp::{AcpOrder, AcpWebhookEvent};

use super::order::{OrderLinks, PaidFor, acp_order};
use super::session::SessionState;
use crate::permalink::Permalinks;
use giftgenius_commerce::outbox::EventBodies;
use giftgenius_commerce::store::{OrderChange, OrderFacts, Store, StoreError, StoreResult};

/// ACP's webhook body for `change` of an order whose ACP Order is `data`.
pub fn webhook_body(change: OrderChange, data: AcpOrder) -> StoreResult<String> {
    let event = AcpWebhookEvent { kind: change.event_type().into(), data };
    serde_json::to_string(&event).map_err(StoreError::json("order event"))
}

/// Builds ACP's event bodies from what the database keeps.
pub struct AcpEventBodies {
    pub store: Store,
    pub permalinks: Arc<Permalinks>,
    /// Base URL clients reach us at (no trailing slash): the support link.
    pub public_url: String,
}

#[async_trait::async_trait]
impl EventBodies for AcpEventBodies {
    async fn body(&self, facts: &OrderFacts, change: OrderChange) -> StoreResult<String> {
        let paid_for = self.paid_for(&facts.order).await?;
        let links = OrderLinks {
            permalink_url: self.permalinks.url(&facts.order.id),
            help_center_url: format!("{}/support", self.public_url),
        };
        webhook_body(change, acp_order(facts, &paid_for, links))
    }
}

impl AcpEventBodies {
    /// What `order` paid for: its ACP session as shown when paid, or its app draft.
    async fn paid_for(&self, order: &Order) -> StoreResult<PaidFor> {
        if let Some(platform) = order.subject.strip_prefix("acp:") {
            let session = self.store.platform_session(&order.draft_id, platform).await?;
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
