//! An order ([`Order`]) and its life, written once: every status change an order takes is a
//! method of the order here, returning the order after it and the change its event announces ([`Changed`]). The
//! callers (the tools' commit and sheet, ACP's complete, the reconciler, Stripe's webhook, the
//! cancellation and the operator) decide when; this decides what the order becomes, so a paid
//! order reads the same whichever way it was paid.
//!
//! | change             | from                               | the order becomes                          |
//! |--------------------|------------------------------------|--------------------------------------------|
//! | [`Order::paid`] | pending payment (or paid: a replay) | paid, its charge, paid at (the first time), no longer awaiting the bank |
//! | [`Order::cancelled`] | paid, processing                | cancelled (at the first time it was), its refund settled by the caller |
//! | [`Order::took`] | see below                          | the operator's step, its time, the shipment |
//!
//! An order starts as [`Order::pending`] (from a [`NewOrder`]), and may wait for the person's
//! bank before it is paid ([`Order::awaiting_authentication`]). A refund of part of it is an
//! adjustment ([`OrderFacts::adjustment`]), the next of its adjustments.
//!
//! Which status change the operator may make, from which status (docs/acp.md §10.3):
//!
//! | asked        | from                 | result                                   |
//! |--------------|----------------------|------------------------------------------|
//! | `processing` | paid                 | processing                               |
//! | `ship`       | paid, processing     | shipped, with the carrier and tracking   |
//! | `complete`   | shipped              | completed (final but for refunds)        |
//! | the same step again (`ship` with the same tracking) | | nothing: the order as it is |
//! | anything else (pending, declined, cancelled, backwards, ship with other tracking) | | refused |
//!
//! Pure: the caller reads the order, asks [`decide`], and writes what [`Order::took`] gives.
//! A decline is written by the store's settle step alone (`Store::settle`): no answer shows the
//! order after it but from what the store read back.

/// The order, defined with the rows the store reads (its fields are the `orders` columns) and
/// named here, where what it may become is.
pub use crate::store::rows::Order;

use crate::store::{
    AdjustmentRow, CurrencyColumn, Lines, OrderChange, OrderFacts, OrderLineRow, OrderStatusColumn, RefundRow,
    RefundStatusColumn,
};

/// How a shipped order travels (checked by `input.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shipment {
    pub carrier: String,
    pub tracking_number: String,
    /// An https URL.
    pub tracking_url: String,
}

/// A status change the operator asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Processing,
    Ship(Shipment),
    Complete,
}

impl Step {
    /// The status the order takes.
    pub const fn status(&self) -> OrderStatusColumn {
        match self {
            Step::Processing => OrderStatusColumn::Processing,
            Step::Ship(_) => OrderStatusColumn::Shipped,
            Step::Complete => OrderStatusColumn::Completed,
        }
    }

    /// The change its event announces.
    pub const fn change(&self) -> OrderChange {
        match self {
            Step::Processing => OrderChange::Processing,
            Step::Ship(_) => OrderChange::Shipped,
            Step::Complete => OrderChange::Completed,
        }
    }
}

/// What a step does to an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The order takes the step.
    Move,
    /// It took this very step already: nothing to do.
    Already,
    /// Not from where it is; the message says why.
    Refused(String),
}

/// What `step` does to `order`.
pub fn decide(order: &Order, step: &Step) -> Decision {
    use OrderStatusColumn as S;
    let shipped_as = |shipment: &Shipment| {
        let now = &order.fulfilment;
        now.carrier.as_deref() == Some(shipment.carrier.as_str())
            && now.tracking_number.as_deref() == Some(shipment.tracking_number.as_str())
            && now.tracking_url.as_deref() == Some(shipment.tracking_url.as_str())
    };
    match (step, order.status) {
        (Step::Processing, S::Paid) | (Step::Ship(_), S::Paid | S::Processing) | (Step::Complete, S::Shipped) => {
            Decision::Move
        }
        (Step::Processing, S::Processing) | (Step::Complete, S::Completed) => Decision::Already,
        (Step::Ship(shipment), S::Shipped) if shipped_as(shipment) => Decision::Already,
        (Step::Ship(_), S::Shipped) => Decision::Refused(format!(
            "Order {} was already shipped with other tracking details; they are not changed.",
            order.id
        )),
        (_, status) => Decision::Refused(format!(
            "Order {} is {}; it cannot become {} ({}).",
            order.id,
            status.as_str(),
            step.status().as_str(),
            match step {
                Step::Processing => "only a paid order can",
                Step::Ship(_) => "only a paid or processing order can",
                Step::Complete => "only a shipped order can",
            }
        )),
    }
}

/// An order after a change, and the change its event announces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub order: Order,
    pub change: OrderChange,
}

/// What an order is created from, whichever way it is bought (a tool's draft, an ACP session):
/// what is bought, by whom, for how much, and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOrder {
    /// The buyer: an account's subject, or `acp:<platform>`.
    pub subject: String,
    /// What it was priced in: a draft's id, or an ACP session's.
    pub draft_id: String,
    /// What is bought: its first line (the order's gift_id, gift_title, merchant and quantity),
    /// then any others, in the draft's order.
    pub first_line: OrderLineRow,
    pub more_lines: Vec<OrderLineRow>,
    pub currency: CurrencyColumn,
    pub total_minor: i64,
    /// JSON of `DeliveryDetails`, with the city and country it goes to (kept when the details are
    /// anonymized), once known.
    pub delivery: Option<String>,
    pub destination: Option<(String, String)>,
    /// The gift wrap's cost, included in `total_minor`; `None`: not wrapped.
    pub gift_wrap_minor: Option<i64>,
    /// A gift receipt: the packing slip and the recipient's page show no prices.
    pub gift_receipt: bool,
    /// The days it is promised to arrive between (`arrival::promised`), once it is known where
    /// it goes and how fast.
    pub arrives: Option<(String, String)>,
}

impl Order {
    /// A new order, pending payment, created at `now_ms` with an id of its own.
    pub fn pending(new: NewOrder, now_ms: i64) -> Order {
        let (destination_city, destination_country) = new.destination.map_or((None, None), |(c, k)| (Some(c), Some(k)));
        let first = new.first_line.clone();
        let mut lines = vec![new.first_line];
        lines.extend(new.more_lines);
        Order {
            id: crate::ids::random_id("ord"),
            subject: new.subject,
            draft_id: new.draft_id,
            gift_id: first.gift_id,
            gift_title: first.gift_title,
            merchant: first.merchant,
            quantity: first.quantity,
            currency: new.currency,
            total_minor: new.total_minor,
            status: OrderStatusColumn::PendingPayment,
            charge_id: None,
            created_at_ms: now_ms,
            delivery: new.delivery,
            destination_city,
            destination_country,
            cancelled_at_ms: None,
            anonymized_at_ms: None,
            payment_ref: None,
            authentication_until_ms: None,
            gift_wrap_minor: new.gift_wrap_minor,
            gift_receipt: i64::from(new.gift_receipt),
            arrives_earliest: new.arrives.as_ref().map(|(earliest, _)| earliest.clone()),
            arrives_latest: new.arrives.map(|(_, latest)| latest),
            stored_lines: Lines(lines),
            fulfilment: Default::default(),
        }
    }

    /// Still pending, its provider payment `payment` waiting for the person's bank (3-D Secure)
    /// until `until_ms`: no event, as nothing happened to the order yet.
    pub fn awaiting_authentication(self, payment: String, until_ms: i64) -> Order {
        Order { payment_ref: Some(payment), authentication_until_ms: Some(until_ms), ..self }
    }

    /// Paid by `charge_id` at `at_ms`: the first time it was paid stays (the store keeps the
    /// first too), and it no longer awaits the person's bank.
    pub fn paid(self, charge_id: &str, at_ms: i64) -> Changed {
        let paid_at_ms = Some(self.fulfilment.paid_at_ms.unwrap_or(at_ms));
        let order = Order {
            status: OrderStatusColumn::Paid,
            charge_id: Some(charge_id.to_string()),
            authentication_until_ms: None,
            fulfilment: crate::store::Fulfilment { paid_at_ms, ..self.fulfilment },
            ..self
        };
        Changed { order, change: OrderChange::Paid }
    }

    /// Cancelled at `at_ms`, its money refunded (the caller settles the refund with it): the
    /// time it was first recorded cancelled stays.
    pub fn cancelled(self, at_ms: i64) -> Changed {
        let cancelled_at_ms = Some(self.cancelled_at_ms.unwrap_or(at_ms));
        let order = Order { status: OrderStatusColumn::Cancelled, cancelled_at_ms, ..self };
        Changed { order, change: OrderChange::Cancelled }
    }

    /// The refund that cancels it (`amount_minor`: what is left of its total), asked by the
    /// person (no `operator_key`) or under the operator's key: pending until the provider refunds
    /// it, or succeeded already when the provider did (`provider_refund_id`: a refund made at
    /// the provider's own dashboard). [`Order::cancelled`] is the order once it succeeded.
    pub fn cancellation(
        &self,
        amount_minor: i64,
        operator_key: Option<&str>,
        provider_refund_id: Option<&str>,
        now_ms: i64,
    ) -> RefundRow {
        RefundRow {
            id: crate::ids::random_id("rfd"),
            order_id: self.id.clone(),
            subject: self.subject.clone(),
            amount_minor,
            currency: self.currency,
            status: refund_status(provider_refund_id),
            provider_refund_id: provider_refund_id.map(str::to_string),
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
            operator_key: operator_key.map(str::to_string),
        }
    }

    /// Once it took the operator's `step` at `now_ms` ([`decide`] said it may): its status,
    /// the step's time and, when shipped, the shipment.
    pub fn took(self, step: &Step, now_ms: i64) -> Changed {
        let mut next = self;
        next.status = step.status();
        let steps = &mut next.fulfilment;
        match step {
            Step::Processing => steps.processing_at_ms = Some(now_ms),
            Step::Ship(shipment) => {
                steps.shipped_at_ms = Some(now_ms);
                steps.carrier = Some(shipment.carrier.clone());
                steps.tracking_number = Some(shipment.tracking_number.clone());
                steps.tracking_url = Some(shipment.tracking_url.clone());
            }
            Step::Complete => steps.completed_at_ms = Some(now_ms),
        }
        Changed { order: next, change: step.change() }
    }
}

impl OrderFacts {
    /// A refund of part of the order (an adjustment) under `key`, the next of its adjustments:
    /// pending until the provider refunds it, or succeeded already when the provider did
    /// (`provider_refund_id`: a late charge refunded, a refund made at the provider's own
    /// dashboard). Its event, once it succeeded, announces `Refunded`.
    pub fn adjustment(
        &self,
        key: &str,
        amount_minor: i64,
        reason: &str,
        provider_refund_id: Option<&str>,
        now_ms: i64,
    ) -> AdjustmentRow {
        AdjustmentRow {
            id: crate::ids::random_id("adj"),
            order_id: self.order.id.clone(),
            seq: self.adjustments.iter().map(|a| a.seq).max().unwrap_or(0) + 1,
            operator_key: key.to_string(),
            amount_minor,
            currency: self.order.currency,
            reason: reason.to_string(),
            status: refund_status(provider_refund_id),
            provider_refund_id: provider_refund_id.map(str::to_string),
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
        }
    }

    /// The facts once `adjustment` is among the order's adjustments.
    pub fn with_adjustment(&self, adjustment: AdjustmentRow) -> OrderFacts {
        let mut after = self.clone();
        after.adjustments.push(adjustment);
        after
    }
}

/// A refund row's status when it is made: succeeded if the provider already refunded it (its
/// refund's id is known), else pending until it does.
fn refund_status(provider_refund_id: Option<&str>) -> RefundStatusColumn {
    if provider_refund_id.is_some() { RefundStatusColumn::Succeeded } else { RefundStatusColumn::Pending }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(status: OrderStatusColumn) -> Order {
        Order {
            id: "ord_1".into(),
            subject: "local".into(),
            draft_id: "drf_1".into(),
            gift_id: "hh-010".into(),
            gift_title: "Tea set".into(),
            merchant: "Tea Co".into(),
            quantity: 1,
            currency: CurrencyColumn::Eur,
            total_minor: 3600,
            status,
            charge_id: Some("ch_1".into()),
            created_at_ms: 1_780_000_000_000,
            delivery: None,
            destination_city: None,
            destination_country: None,
            cancelled_at_ms: None,
            anonymized_at_ms: None,
            payment_ref: None,
            authentication_until_ms: None,
            gift_wrap_minor: None,
            gift_receipt: 0,
            arrives_earliest: None,
            arrives_latest: None,
            stored_lines: Lines(vec![OrderLineRow {
                gift_id: "hh-010".into(),
                gift_title: "Tea set".into(),
                merchant: "Tea Co".into(),
                quantity: 1,
                subtotal_minor: Some(3600),
                gift_wrap_minor: None,
            }]),
            fulfilment: Default::default(),
        }
    }

    fn ship(number: &str) -> Step {
        Step::Ship(Shipment {
            carrier: "CTT".into(),
            tracking_number: number.into(),
            tracking_url: format!("https://ctt.example/track/{number}"),
        })
    }

    #[test]
    fn every_status_and_step_has_one_answer() {
        use OrderStatusColumn as S;
        let moves = |step: &Step| -> Vec<S> {
            [S::PendingPayment, S::Paid, S::PaymentDeclined, S::Cancelled, S::Processing, S::Shipped, S::Completed]
                .into_iter()
                .filter(|status| decide(&order(*status), step) == Decision::Move)
                .collect()
        };
        assert_eq!(moves(&Step::Processing), [S::Paid]);
        assert_eq!(moves(&ship("A1")), [S::Paid, S::Processing], "paid → shipped directly too");
        assert_eq!(moves(&Step::Complete), [S::Shipped]);
        assert_eq!(decide(&order(S::Processing), &Step::Processing), Decision::Already);
        assert_eq!(decide(&order(S::Completed), &Step::Complete), Decision::Already);
        for (status, step) in [
            (S::Shipped, Step::Processing),
            (S::Completed, ship("A1")),
            (S::Paid, Step::Complete),
            (S::Cancelled, Step::Processing),
            (S::PendingPayment, ship("A1")),
        ] {
            let Decision::Refused(why) = decide(&order(status), &step) else { panic!("{status:?} {step:?}") };
            assert!(why.contains(status.as_str()), "the message names the current status: {why}");
        }
    }

    #[test]
    fn shipping_again_is_the_same_step_only_with_the_same_tracking() {
        let Changed { order: shipped, change } = order(OrderStatusColumn::Paid).took(&ship("A1"), 1_780_000_100_000);
        assert_eq!(change, OrderChange::Shipped);
        assert_eq!(shipped.status, OrderStatusColumn::Shipped);
        assert_eq!(shipped.fulfilment.shipped_at_ms, Some(1_780_000_100_000));
        assert_eq!(shipped.fulfilment.processing_at_ms, None, "paid → shipped skips processing");
        assert_eq!(decide(&shipped, &ship("A1")), Decision::Already);
        assert!(matches!(decide(&shipped, &ship("B2")), Decision::Refused(why) if why.contains("other tracking")));
        let completed = shipped.took(&Step::Complete, 1_780_000_200_000).order;
        assert_eq!(completed.fulfilment.tracking_number.as_deref(), Some("A1"), "the shipment stays");
    }

    #[test]
    fn paid_keeps_the_first_payment_time_and_stops_waiting_for_the_bank() {
        let mut pending = order(OrderStatusColumn::PendingPayment);
        pending.charge_id = None;
        pending.payment_ref = Some("pi_1".into());
        pending.authentication_until_ms = Some(1_780_000_900_000);
        let Changed { order: paid, change } = pending.paid("ch_9", 1_780_000_100_000);
        assert_eq!(change, OrderChange::Paid);
        assert_eq!((paid.status, paid.charge_id.as_deref()), (OrderStatusColumn::Paid, Some("ch_9")));
        assert_eq!(paid.authentication_until_ms, None);
        assert_eq!(paid.fulfilment.paid_at_ms, Some(1_780_000_100_000));
        let again = paid.paid("ch_9", 1_780_000_500_000).order;
        assert_eq!(again.fulfilment.paid_at_ms, Some(1_780_000_100_000), "a replay keeps the first time");
    }

    #[test]
    fn cancelled_keeps_the_first_cancellation_time() {
        let Changed { order: cancelled, change } = order(OrderStatusColumn::Processing).cancelled(1_780_000_100_000);
        assert_eq!((cancelled.status, change), (OrderStatusColumn::Cancelled, OrderChange::Cancelled));
        assert_eq!(cancelled.cancelled_at_ms, Some(1_780_000_100_000));
        assert_eq!(cancelled.cancelled(1_780_000_500_000).order.cancelled_at_ms, Some(1_780_000_100_000));
    }

    #[test]
    fn a_new_order_is_pending_with_an_id_of_its_own_and_nothing_paid() {
        let new = NewOrder {
            subject: "acp:openai".into(),
            draft_id: "cs_1".into(),
            first_line: OrderLineRow {
                gift_id: "hh-010".into(),
                gift_title: "Tea set".into(),
                merchant: "Tea Co".into(),
                quantity: 2,
                subtotal_minor: Some(7200),
                gift_wrap_minor: None,
            },
            more_lines: vec![OrderLineRow {
                gift_id: "hh-011".into(),
                gift_title: "Tea cups".into(),
                merchant: "Tea Co".into(),
                quantity: 1,
                subtotal_minor: Some(1800),
                gift_wrap_minor: None,
            }],
            currency: CurrencyColumn::Eur,
            total_minor: 9000,
            delivery: None,
            destination: Some(("Lisboa".into(), "PT".into())),
            gift_wrap_minor: None,
            gift_receipt: false,
            arrives: None,
        };
        let (a, b) = (Order::pending(new.clone(), 1_780_000_000_000), Order::pending(new, 1_780_000_000_000));
        assert!(a.id.starts_with("ord_") && a.id != b.id);
        // The first line is the order's gift; every line is kept, and the stock sees each gift.
        assert_eq!((a.gift_id.as_str(), a.quantity, a.lines().len()), ("hh-010", 2, 2));
        assert_eq!(
            a.units().into_iter().collect::<Vec<_>>(),
            vec![("hh-010".to_string(), 2), ("hh-011".to_string(), 1)]
        );
        assert_eq!(
            (a.status, a.charge_id.as_deref(), a.created_at_ms),
            (OrderStatusColumn::PendingPayment, None, 1_780_000_000_000)
        );
        assert_eq!((a.destination_city.as_deref(), a.destination_country.as_deref()), (Some("Lisboa"), Some("PT")));
        assert_eq!(a.fulfilment, Default::default());
        let waiting = a.awaiting_authentication("pi_1".into(), 1_780_000_600_000);
        assert!(waiting.awaits_authentication());
        assert_eq!(waiting.status_view(), giftgenius_types::OrderStatus::AwaitingAuthentication);
    }

    #[test]
    fn a_cancellation_refunds_under_its_own_id_pending_until_the_provider_refunded() {
        let paid = order(OrderStatusColumn::Paid);
        let asked = paid.cancellation(3600, None, None, 1_780_000_100_000);
        assert_eq!((asked.status, asked.operator_key.as_deref()), (RefundStatusColumn::Pending, None));
        assert_eq!((asked.order_id.as_str(), asked.subject.as_str(), asked.amount_minor), ("ord_1", "local", 3600));
        let outside = paid.cancellation(3000, Some("stripe:re_1"), Some("re_1"), 1_780_000_100_000);
        assert_eq!(
            (outside.status, outside.provider_refund_id.as_deref()),
            (RefundStatusColumn::Succeeded, Some("re_1"))
        );
        assert!(asked.id.starts_with("rfd_") && asked.id != outside.id);
    }

    #[test]
    fn an_adjustment_is_the_next_of_the_order_and_pending_until_the_provider_refunded_it() {
        let facts = OrderFacts::of(order(OrderStatusColumn::Shipped));
        let first = facts.adjustment("key-1", 500, "a late parcel", None, 1_780_000_100_000);
        assert_eq!((first.seq, first.status, first.currency), (1, RefundStatusColumn::Pending, CurrencyColumn::Eur));
        assert_eq!((first.order_id.as_str(), first.operator_key.as_str()), ("ord_1", "key-1"));
        let after = facts.with_adjustment(first.clone());
        let second = after.adjustment("key-2", 300, "outside", Some("re_1"), 1_780_000_200_000);
        assert_eq!((second.seq, second.status), (2, RefundStatusColumn::Succeeded));
        assert_eq!(second.provider_refund_id.as_deref(), Some("re_1"));
        assert_ne!(first.id, second.id);
    }
}
