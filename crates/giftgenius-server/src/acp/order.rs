//! The ACP `Order` of one of our orders (docs/acp.md §4.3, §10.3): what a completed session
//! answers with, and what every order event carries. One function builds it from plain facts,
//! so a session's answer and its webhook cannot disagree, and an app order (which has no ACP
//! session) gets the same shape from its draft (`checkout_session_id` = the draft id, §4.3).

use giftgenius_commerce::order::Order;
use giftgenius_types::acp::{
    AcpAdjustment, AcpCheckoutSession, AcpEstimatedDelivery, AcpFulfillment, AcpFulfillmentEvent, AcpFulfillmentType,
    AcpLineItemReference, AcpOrder, AcpOrderLineItem, AcpOrderQuantity, AcpSupport, AcpTotal, AcpTotalType,
};

use super::session::total;
use super::words::Lang;
use giftgenius_commerce::clock::rfc3339;
use giftgenius_commerce::store::{DraftRow, OrderFacts, OrderStatusColumn, RefundStatusColumn};

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
            // An Order is in English whatever its session's language (docs/acp.md §13.4): it
            // goes to the platform's receiver, and its later lines (a refund) know no buyer.
            totals: session
                .totals
                .iter()
                .filter(|t| t.kind != AcpTotalType::ItemsBaseAmount)
                .map(|t| total(Lang::En, t.kind, t.amount))
                .collect(),
        }
    }

    /// An app order's lines and its totals, from the order's lines and the draft it was
    /// committed from (the prices it was charged at). An order placed before its lines kept
    /// their prices has one line, priced from its draft; drafts are kept at least a day past
    /// their expiry, far longer than an order takes to be paid or cancelled, and for one already
    /// gone the order's total is all there is, so the line's unit price is that total per unit
    /// (shipping included).
    pub fn of_app_order(order: &Order, draft: Option<&DraftRow>) -> Self {
        let mut totals = match draft {
            Some(draft) => vec![
                total(Lang::En, AcpTotalType::Subtotal, draft.subtotal_minor),
                total(Lang::En, AcpTotalType::Fulfillment, draft.shipping_minor),
            ],
            None => Vec::new(),
        };
        if let Some(wrap) = order.gift_wrap_minor {
            totals.push(total(Lang::En, AcpTotalType::GiftWrap, wrap));
        }
        totals.push(total(Lang::En, AcpTotalType::Total, order.total_minor));
        let lines = order
            .lines()
            .into_iter()
            .map(|line| {
                let quantity = u32::try_from(line.quantity.max(1)).unwrap_or(u32::MAX);
                let priced = line.subtotal_minor.or(draft.map(|d| d.subtotal_minor)).unwrap_or(order.total_minor);
                PaidLine {
                    id: format!("li_{}", line.gift_id),
                    title: line.gift_title,
                    product_id: line.gift_id,
                    quantity,
                    unit_price: priced / i64::from(quantity),
                }
            })
            .collect();
        Self {
            checkout_session_id: order.draft_id.clone(),
            currency: order.currency.as_str().to_lowercase(),
            lines,
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

/// The ACP `Order` of an order as its `facts` are now, which paid for `paid_for` (§10.3).
/// Status: `confirmed` once paid, then `processing`, `shipped`, `completed` as the operator
/// moves it, `canceled` once cancelled (every line then `removed`, current quantity 0). From
/// processing on it has one `shipping` fulfillment holding every line, with an event per step
/// (`processing`, `shipped`, `delivered`; `canceled` if it was cancelled while processing) and,
/// once shipped, the carrier and tracking; its lines are then `fulfilled`. The cancellation's
/// refund and every partial refund are `refund` adjustments, and what succeeded sums up in an
/// `amount_refunded` total; `total` stays what was charged.
pub fn acp_order(facts: &OrderFacts, paid_for: &PaidFor, links: OrderLinks) -> AcpOrder {
    let order = &facts.order;
    let cancelled = matches!(order.status, OrderStatusColumn::Cancelled | OrderStatusColumn::PaymentDeclined);
    let shipped = matches!(order.status, OrderStatusColumn::Shipped | OrderStatusColumn::Completed);
    let status = match order.status {
        OrderStatusColumn::PendingPayment => "created",
        OrderStatusColumn::Paid => "confirmed",
        OrderStatusColumn::Processing => "processing",
        OrderStatusColumn::Shipped => "shipped",
        OrderStatusColumn::Completed => "completed",
        OrderStatusColumn::Cancelled | OrderStatusColumn::PaymentDeclined => "canceled",
    };
    let current = |ordered: u32| if cancelled { 0 } else { ordered };
    let fulfilled = |ordered: u32| if shipped { current(ordered) } else { 0 };
    let line_status = |ordered: u32| match (current(ordered), fulfilled(ordered)) {
        (0, _) => "removed",
        (current, fulfilled) if fulfilled == current => "fulfilled",
        (_, 0) => "processing",
        _ => "partial",
    };
    // The partial refunds in the order they were made, then the cancellation's (nothing is
    // refunded after it).
    let mut adjustments: Vec<AcpAdjustment> = facts
        .adjustments
        .iter()
        .map(|adjustment| AcpAdjustment {
            id: adjustment.id.clone(),
            kind: "refund".into(),
            occurred_at: rfc3339(adjustment.updated_at_ms),
            status: adjustment_status(adjustment.status).into(),
            amount: adjustment.amount_minor,
            currency: adjustment.currency.as_str().to_lowercase(),
            description: Some(adjustment.reason.clone()),
        })
        .collect();
    adjustments.extend(facts.refund.iter().map(|refund| {
        AcpAdjustment {
            id: refund.id.clone(),
            kind: "refund".into(),
            occurred_at: rfc3339(refund.updated_at_ms),
            status: adjustment_status(refund.status).into(),
            amount: refund.amount_minor,
            currency: refund.currency.as_str().to_lowercase(),
            description: Some(
                if refund.amount_minor == order.total_minor {
                    "Cancelled before shipping; refunded in full."
                } else {
                    "Cancelled before shipping; refunded what was left."
                }
                .into(),
            ),
        }
    }));
    let mut totals = paid_for.totals.clone();
    let refunded = facts.amount_refunded_minor();
    if refunded > 0 {
        totals.push(total(Lang::En, AcpTotalType::AmountRefunded, refunded));
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
                quantity: AcpOrderQuantity {
                    ordered: line.quantity,
                    current: current(line.quantity),
                    fulfilled: fulfilled(line.quantity),
                },
                unit_price: line.unit_price,
                subtotal: line.unit_price.saturating_mul(i64::from(line.quantity)),
                status: line_status(line.quantity).into(),
            })
            .collect(),
        fulfillments: fulfillment(order, paid_for).into_iter().collect(),
        adjustments,
        totals,
        // No gift message (the spec's `confirmation.order_notes`): the Order goes into the
        // outbox and to receivers, and no personal data goes with it (no recipient, no address,
        // no message), so an event sent or pending never holds what Delete my data erases.
        confirmation: None,
        support: AcpSupport { help_center_url: links.help_center_url },
        estimated_delivery: estimated_delivery(order)
            .filter(|_| !cancelled && order.status != OrderStatusColumn::Completed),
    }
}

/// The days `order` was promised, as the spec's instants (none for an order without them).
fn estimated_delivery(order: &Order) -> Option<AcpEstimatedDelivery> {
    let (earliest, latest) = (order.arrives_earliest.as_deref()?, order.arrives_latest.as_deref()?);
    let country = order.destination_country.as_deref()?;
    match giftgenius_commerce::arrival::bounds_of_days(earliest, latest, country) {
        Ok((earliest, latest)) => Some(AcpEstimatedDelivery { earliest, latest }),
        Err(e) => {
            tracing::error!(order = %order.id, error = %e, "estimated delivery not computed");
            None
        }
    }
}

/// A refund's or adjustment's ACP status.
fn adjustment_status(status: RefundStatusColumn) -> &'static str {
    match status {
        RefundStatusColumn::Pending => "pending",
        RefundStatusColumn::Succeeded => "completed",
    }
}

/// The order's one shipping fulfillment, once the operator started on it (processing or
/// shipped); none before. Its id and its events' ids are derived from the order, so every event
/// of the order names the same fulfillment and the same steps.
fn fulfillment(order: &Order, paid_for: &PaidFor) -> Option<AcpFulfillment> {
    let steps = &order.fulfilment;
    let started = steps.processing_at_ms.or(steps.shipped_at_ms)?;
    let status = match order.status {
        OrderStatusColumn::Completed => "delivered",
        OrderStatusColumn::Shipped => "shipped",
        OrderStatusColumn::Cancelled | OrderStatusColumn::PaymentDeclined => "canceled",
        _ => "processing",
    };
    let mut events = Vec::new();
    let mut step = |kind: &str, at: Option<i64>| {
        if let Some(at) = at {
            events.push(AcpFulfillmentEvent {
                id: format!("fev_{}_{kind}", order.id),
                kind: kind.into(),
                occurred_at: rfc3339(at),
            });
        }
    };
    step("processing", steps.processing_at_ms);
    step("shipped", steps.shipped_at_ms);
    step("delivered", steps.completed_at_ms);
    if order.status == OrderStatusColumn::Cancelled {
        step("canceled", Some(order.cancelled_at_ms.unwrap_or(started)));
    }
    Some(AcpFulfillment {
        id: format!("ful_{}", order.id),
        kind: AcpFulfillmentType::Shipping,
        status: status.into(),
        line_items: paid_for
            .lines
            .iter()
            .map(|line| AcpLineItemReference { id: line.id.clone(), quantity: line.quantity.max(1) })
            .collect(),
        carrier: steps.carrier.clone(),
        tracking_number: steps.tracking_number.clone(),
        tracking_url: steps.tracking_url.clone(),
        events,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_commerce::store::{CurrencyColumn, Lines, OrderLineRow, RefundRow, ShippingColumn};

    fn order(status: OrderStatusColumn) -> Order {
        Order {
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
            payment_ref: None,
            authentication_until_ms: None,
            gift_wrap_minor: None,
            gift_receipt: 0,
            arrives_earliest: None,
            arrives_latest: None,
            // An order placed before lines kept their prices: priced from its draft.
            stored_lines: Lines::default(),
            fulfilment: Default::default(),
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
            needed_by: None,
            gift_wrap_minor: None,
            gift_receipt: 0,
            stored_lines: Lines::default(),
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
            &OrderFacts::of(order(OrderStatusColumn::Paid)),
            &PaidFor::of_app_order(&order(OrderStatusColumn::Paid), Some(&draft())),
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
        assert!(paid.fulfillments.is_empty(), "nothing is being delivered yet");
    }

    #[test]
    fn a_basket_order_has_a_line_item_per_line_priced_by_its_own_line() {
        let line = |gift_id: &str, title: &str, quantity: i64, subtotal: i64| OrderLineRow {
            gift_id: gift_id.into(),
            gift_title: title.into(),
            merchant: "Tea Co".into(),
            quantity,
            subtotal_minor: Some(subtotal),
            gift_wrap_minor: None,
        };
        let basket = Order {
            stored_lines: Lines(vec![line("hh-010", "Tea set", 2, 6000), line("hh-011", "Tea cups", 3, 2700)]),
            total_minor: 9900,
            ..order(OrderStatusColumn::Paid)
        };
        let draft = DraftRow { subtotal_minor: 8700, total_minor: 9900, ..draft() };
        let paid = acp_order(&OrderFacts::of(basket.clone()), &PaidFor::of_app_order(&basket, Some(&draft)), links());
        let lines: Vec<(&str, i64, i64, u32)> =
            paid.line_items.iter().map(|l| (l.id.as_str(), l.unit_price, l.subtotal, l.quantity.ordered)).collect();
        assert_eq!(lines, [("li_hh-010", 3000, 6000, 2), ("li_hh-011", 900, 2700, 3)]);
        let totals: Vec<(AcpTotalType, i64)> = paid.totals.iter().map(|t| (t.kind, t.amount)).collect();
        assert_eq!(
            totals,
            [(AcpTotalType::Subtotal, 8700), (AcpTotalType::Fulfillment, 1200), (AcpTotalType::Total, 9900)]
        );
    }

    #[test]
    fn a_wrapped_app_order_has_a_gift_wrap_total_kept_by_the_order_itself() {
        let wrapped = Order { gift_wrap_minor: Some(1198), total_minor: 8398, ..order(OrderStatusColumn::Paid) };
        let draft = DraftRow { gift_wrap_minor: Some(1198), total_minor: 8398, ..draft() };
        // With its draft, and after the draft was pruned: the wrap is the order's own.
        for draft in [Some(&draft), None] {
            let paid = acp_order(&OrderFacts::of(wrapped.clone()), &PaidFor::of_app_order(&wrapped, draft), links());
            let totals: Vec<(AcpTotalType, i64)> = paid.totals.iter().map(|t| (t.kind, t.amount)).collect();
            assert!(totals.ends_with(&[(AcpTotalType::GiftWrap, 1198), (AcpTotalType::Total, 8398)]), "{totals:?}");
        }
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
            operator_key: None,
        };
        let facts = OrderFacts { order: row.clone(), refund: Some(refund), adjustments: Vec::new() };
        let cancelled = acp_order(&facts, &PaidFor::of_app_order(&row, None), links());
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

    fn adjustment(
        id: &str,
        amount_minor: i64,
        status: RefundStatusColumn,
        at: i64,
    ) -> giftgenius_commerce::store::AdjustmentRow {
        giftgenius_commerce::store::AdjustmentRow {
            id: id.into(),
            order_id: "ord_1".into(),
            seq: at,
            operator_key: format!("key_{id}"),
            amount_minor,
            currency: CurrencyColumn::Eur,
            reason: "Scratched lid".into(),
            status,
            provider_refund_id: None,
            created_at_ms: at,
            updated_at_ms: at,
        }
    }

    #[test]
    fn a_shipped_order_has_one_shipping_fulfillment_with_its_tracking_and_every_line_fulfilled() {
        let mut row = order(OrderStatusColumn::Shipped);
        row.fulfilment = giftgenius_commerce::store::Fulfilment {
            paid_at_ms: Some(1_780_000_000_500),
            processing_at_ms: Some(1_780_000_100_000),
            shipped_at_ms: Some(1_780_000_200_000),
            completed_at_ms: None,
            carrier: Some("CTT".into()),
            tracking_number: Some("RR123456789PT".into()),
            tracking_url: Some("https://ctt.example/track/RR123456789PT".into()),
        };
        let shipped = acp_order(&OrderFacts::of(row.clone()), &PaidFor::of_app_order(&row, Some(&draft())), links());
        assert_eq!(shipped.status, "shipped");
        let line = &shipped.line_items[0];
        assert_eq!((line.quantity.current, line.quantity.fulfilled, line.status.as_str()), (2, 2, "fulfilled"));
        let [fulfillment] = &shipped.fulfillments[..] else { panic!("one fulfillment: {:?}", shipped.fulfillments) };
        assert_eq!(
            (fulfillment.id.as_str(), fulfillment.status.as_str(), fulfillment.carrier.as_deref()),
            ("ful_ord_1", "shipped", Some("CTT"))
        );
        assert_eq!(fulfillment.tracking_url.as_deref(), Some("https://ctt.example/track/RR123456789PT"));
        assert_eq!(fulfillment.line_items, [AcpLineItemReference { id: "li_hh-010".into(), quantity: 2 }]);
        let steps: Vec<&str> = fulfillment.events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(steps, ["processing", "shipped"]);

        row.status = OrderStatusColumn::Completed;
        row.fulfilment.completed_at_ms = Some(1_780_000_300_000);
        let completed = acp_order(&OrderFacts::of(row.clone()), &PaidFor::of_app_order(&row, None), links());
        assert_eq!((completed.status.as_str(), completed.fulfillments[0].status.as_str()), ("completed", "delivered"));
        assert_eq!(completed.fulfillments[0].events.last().map(|e| e.kind.as_str()), Some("delivered"));
    }

    #[test]
    fn partial_refunds_are_adjustments_and_only_the_ones_that_succeeded_count_as_refunded() {
        let row = order(OrderStatusColumn::Completed);
        let facts = OrderFacts {
            order: row.clone(),
            refund: None,
            adjustments: vec![
                adjustment("adj_1", 1000, RefundStatusColumn::Succeeded, 1_780_000_400_000),
                adjustment("adj_2", 500, RefundStatusColumn::Pending, 1_780_000_500_000),
            ],
        };
        let refunded = acp_order(&facts, &PaidFor::of_app_order(&row, None), links());
        assert_eq!(refunded.status, "completed", "a partial refund leaves the status as it was");
        let adjustments: Vec<(&str, &str, i64, Option<&str>)> = refunded
            .adjustments
            .iter()
            .map(|a| (a.id.as_str(), a.status.as_str(), a.amount, a.description.as_deref()))
            .collect();
        assert_eq!(
            adjustments,
            [("adj_1", "completed", 1000, Some("Scratched lid")), ("adj_2", "pending", 500, Some("Scratched lid"))]
        );
        let totals: Vec<(AcpTotalType, i64)> = refunded.totals.iter().map(|t| (t.kind, t.amount)).collect();
        assert_eq!(totals, [(AcpTotalType::Total, 7200), (AcpTotalType::AmountRefunded, 1000)]);
        assert_eq!(facts.refundable_minor(), 5700, "pending refunds are spoken for");
    }
}
