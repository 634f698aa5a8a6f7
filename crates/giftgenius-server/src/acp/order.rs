//! The ACP `Order` of one of our orders (docs/acp.md §4.3, §10.3): what a completed session
//! answers with, and what every order event carries. One function builds it from plain facts,
//! so a session's answer and its webhook cannot disagree, and an app order (which has no ACP
//! session) gets the same shape from its draft (`checkout_session_id` = the draft id, §4.3).

use giftgenius_types::acp::{
    AcpAdjustment, AcpCheckoutSession, AcpOrder, AcpOrderLineItem, AcpOrderQuantity, AcpSupport, AcpTotal, AcpTotalType,
};

use super::session::total;
use crate::clock::rfc3339;
use crate::store::{DraftRow, OrderRow, OrderStatusColumn, RefundRow, RefundStatusColumn};

/// What an order paid for, as it was shown when it was paid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaidFor {
    /// The ACP session's id, or an app order's draft id.
    pub checkout_session_id: String,
    /// ISO 4217, lower case.
    pub currency: String,
    pub lines: Vec<PaidLine>,
    /// Subtotal, fulfillment, tax (if any) and total; never the items' base amount.
    pub totals: Vec<AcpTotal>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaidLine {
    pub id: String,
    pub title: String,
    pub product_id: String,
    pub quantity: u32,
    pub unit_price: i64,
}

impl PaidFor {
    /// A session's lines and totals (the session as shown when it was paid: `at_payment`).
    pub fn of_session(session: &AcpCheckoutSession) -> Self {
        Self {
            checkout_session_id: session.id.clone(),
            currency: session.currency.clone(),
            lines: session
                .line_items
                .iter()
                .map(|line| PaidLine {
                    id: line.id.clone(),
                    title: line.name.clone(),
                    product_id: line.product_id.clone(),
                    quantity: line.quantity,
                    unit_price: line.unit_amount,
                })
                .collect(),
            totals: session.totals.iter().filter(|t| t.kind != AcpTotalType::ItemsBaseAmount).cloned().collect(),
        }
    }

    /// An app order's one line and its totals, from the draft it was committed from (the prices
    /// it was charged at). Drafts are kept at least a day past their expiry, far longer than an
    /// order takes to be paid or cancelled; for one already gone the order's total is all there
    /// is, so the line's unit price is that total per unit (shipping included).
    pub fn of_app_order(order: &OrderRow, draft: Option<&DraftRow>) -> Self {
        let quantity = u32::try_from(order.quantity.max(1)).unwrap_or(u32::MAX);
        let (unit_price, mut totals) = match draft {
            Some(draft) => (
                draft.subtotal_minor / i64::from(quantity),
                vec![
                    total(AcpTotalType::Subtotal, draft.subtotal_minor),
                    total(AcpTotalType::Fulfillment, draft.shipping_minor),
                ],
            ),
            None => (order.total_minor / i64::from(quantity), Vec::new()),
        };
        totals.push(total(AcpTotalType::Total, order.total_minor));
        Self {
            checkout_session_id: order.draft_id.clone(),
            currency: order.currency.as_str().to_lowercase(),
            lines: vec![PaidLine {
                id: format!("li_{}", order.gift_id),
                title: order.gift_title.clone(),
                product_id: order.gift_id.clone(),
                quantity,
                unit_price,
            }],
            totals,
        }
    }
}

/// The order's links: its status page and where its buyer finds help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderLinks {
    pub permalink_url: String,
    pub help_center_url: String,
}

/// The ACP `Order` of `order` (as it is now), which paid for `paid_for`, with its `refund` if it
/// has one. Status (§10.3): `confirmed` once paid, `canceled` once cancelled (every line then
/// `removed`, current quantity 0); a refund is an adjustment and an `amount_refunded` total,
/// and `total` stays what was charged.
pub fn acp_order(order: &OrderRow, paid_for: &PaidFor, refund: Option<&RefundRow>, links: OrderLinks) -> AcpOrder {
    let cancelled = matches!(order.status, OrderStatusColumn::Cancelled | OrderStatusColumn::PaymentDeclined);
    let status = match order.status {
        OrderStatusColumn::PendingPayment => "created",
        OrderStatusColumn::Paid => "confirmed",
        OrderStatusColumn::Cancelled | OrderStatusColumn::PaymentDeclined => "canceled",
    };
    let current = |ordered: u32| if cancelled { 0 } else { ordered };
    let adjustments: Vec<AcpAdjustment> = refund
        .map(|refund| AcpAdjustment {
            id: refund.id.clone(),
            kind: "refund".into(),
            occurred_at: rfc3339(refund.updated_at_ms),
            status: match refund.status {
                RefundStatusColumn::Pending => "pending",
                RefundStatusColumn::Succeeded => "completed",
            }
            .into(),
            amount: refund.amount_minor,
            currency: refund.currency.as_str().to_lowercase(),
            description: Some("Cancelled before shipping; refunded in full.".into()),
        })
        .into_iter()
        .collect();
    let mut totals = paid_for.totals.clone();
    let refunded: i64 = refund.filter(|r| r.status == RefundStatusColumn::Succeeded).map_or(0, |r| r.amount_minor);
    if refunded > 0 {
        totals.push(total(AcpTotalType::AmountRefunded, refunded));
    }
    AcpOrder {
        kind: "order".into(),
        id: order.id.clone(),
        checkout_session_id: paid_for.checkout_session_id.clone(),
        permalink_url: links.permalink_url,
        status: status.into(),
        line_items: paid_for
            .lines
            .iter()
            .map(|line| AcpOrderLineItem {
                id: line.id.clone(),
                title: line.title.clone(),
                product_id: line.product_id.clone(),
                quantity: AcpOrderQuantity { ordered: line.quantity, current: current(line.quantity), fulfilled: 0 },
                unit_price: line.unit_price,
                subtotal: line.unit_price.saturating_mul(i64::from(line.quantity)),
                status: if current(line.quantity) == 0 { "removed" } else { "processing" }.into(),
            })
            .collect(),
        fulfillments: Vec::new(),
        adjustments,
        totals,
        // No gift message (the spec's `confirmation.order_notes`): the Order goes into the
        // outbox and to receivers, and no personal data goes with it (no recipient, no address,
        // no message), so an event sent or pending never holds what Delete my data erases.
        confirmation: None,
        support: AcpSupport { help_center_url: links.help_center_url },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{CurrencyColumn, ShippingColumn};

    fn order(status: OrderStatusColumn) -> OrderRow {
        OrderRow {
            id: "ord_1".into(),
            subject: "local".into(),
            draft_id: "drf_1".into(),
            gift_id: "hh-010".into(),
            gift_title: "Tea set".into(),
            merchant: "Tea Co".into(),
            quantity: 2,
            currency: CurrencyColumn::Eur,
            total_minor: 7200,
            status,
            charge_id: Some("ch_1".into()),
            created_at_ms: 1_780_000_000_000,
            delivery: Some(
                r#"{"recipient":{"name":"Ana","address":{"line1":"Rua 1","city":"Lisboa","country":"PT"}},"gift_message":"Parabéns"}"#
                    .into(),
            ),
            destination_city: Some("Lisboa".into()),
            destination_country: Some("PT".into()),
            cancelled_at_ms: None,
            anonymized_at_ms: None,
        }
    }

    fn draft() -> DraftRow {
        DraftRow {
            id: "drf_1".into(),
            subject: "local".into(),
            draft_key: "k".into(),
            gift_id: "hh-010".into(),
            quantity: 2,
            shipping: ShippingColumn::Express,
            currency: CurrencyColumn::Eur,
            subtotal_minor: 6000,
            shipping_minor: 1200,
            total_minor: 7200,
            created_at_ms: 1_780_000_000_000,
            expires_at_ms: 1_780_000_000_000,
            delivery: None,
        }
    }

    fn links() -> OrderLinks {
        OrderLinks {
            permalink_url: "https://g.example/o/ord_1.x".into(),
            help_center_url: "https://g.example/support".into(),
        }
    }

    #[test]
    fn an_app_order_shows_its_draft_as_the_session_with_its_prices_and_gift_message() {
        let paid = acp_order(
            &order(OrderStatusColumn::Paid),
            &PaidFor::of_app_order(&order(OrderStatusColumn::Paid), Some(&draft())),
            None,
            links(),
        );
        assert_eq!((paid.checkout_session_id.as_str(), paid.status.as_str()), ("drf_1", "confirmed"));
        let line = &paid.line_items[0];
        assert_eq!(
            (line.unit_price, line.subtotal, line.quantity.current, line.status.as_str()),
            (3000, 6000, 2, "processing")
        );
        let totals: Vec<(AcpTotalType, i64)> = paid.totals.iter().map(|t| (t.kind, t.amount)).collect();
        assert_eq!(
            totals,
            [(AcpTotalType::Subtotal, 6000), (AcpTotalType::Fulfillment, 1200), (AcpTotalType::Total, 7200)]
        );
        assert_eq!(paid.confirmation, None, "the gift message stays off the order and its events");
        assert!(paid.adjustments.is_empty());
    }

    #[test]
    fn a_cancelled_order_is_canceled_with_its_refund_as_an_adjustment_and_the_total_unchanged() {
        let row = order(OrderStatusColumn::Cancelled);
        let refund = RefundRow {
            id: "rfd_1".into(),
            order_id: "ord_1".into(),
            subject: "local".into(),
            amount_minor: 7200,
            currency: CurrencyColumn::Eur,
            status: RefundStatusColumn::Succeeded,
            provider_refund_id: Some("re_1".into()),
            created_at_ms: 1_780_000_100_000,
            updated_at_ms: 1_780_000_200_000,
        };
        let cancelled = acp_order(&row, &PaidFor::of_app_order(&row, None), Some(&refund), links());
        assert_eq!(cancelled.status, "canceled");
        let line = &cancelled.line_items[0];
        assert_eq!((line.quantity.ordered, line.quantity.current, line.status.as_str()), (2, 0, "removed"));
        assert_eq!(line.unit_price, 3600, "without its draft: the total per unit");
        let adjustment = &cancelled.adjustments[0];
        assert_eq!(
            (adjustment.kind.as_str(), adjustment.status.as_str(), adjustment.amount, adjustment.currency.as_str()),
            ("refund", "completed", 7200, "eur")
        );
        let totals: Vec<(AcpTotalType, i64)> = cancelled.totals.iter().map(|t| (t.kind, t.amount)).collect();
        assert_eq!(totals, [(AcpTotalType::Total, 7200), (AcpTotalType::AmountRefunded, 7200)]);
    }
}
