//! An order's life, written once: every status change an order takes is a method of the order
//! here, returning the order after it and the change its event announces ([`Changed`]). The
//! callers (the tools' commit and sheet, ACP's complete, the reconciler, Stripe's webhook, the
//! cancellation and the operator) decide when; this decides what the order becomes, so a paid
//! order reads the same whichever way it was paid.
//!
//! | change             | from                               | the order becomes                          |
//! |--------------------|------------------------------------|--------------------------------------------|
//! | [`OrderRow::paid`] | pending payment (or paid: a replay) | paid, its charge, paid at (the first time), no longer awaiting the bank |
//! | [`OrderRow::cancelled`] | paid, processing                | cancelled (at the first time it was), its refund settled by the caller |
//! | [`OrderRow::took`] | see below                          | the operator's step, its time, the shipment |
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
//! Pure: the caller reads the order, asks [`decide`], and writes what [`OrderRow::took`] gives.
//! Declines and the wait for the bank (3-D Secure) are written by the store's charge steps
//! alone: no answer shows the order after them but from what the store read back.

use crate::store::{OrderChange, OrderRow, OrderStatusColumn};

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
pub fn decide(order: &OrderRow, step: &Step) -> Decision {
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
    pub order: OrderRow,
    pub change: OrderChange,
}

impl OrderRow {
    /// Paid by `charge_id` at `at_ms`: the first time it was paid stays (the store keeps the
    /// first too), and it no longer awaits the person's bank.
    pub fn paid(self, charge_id: &str, at_ms: i64) -> Changed {
        let paid_at_ms = Some(self.fulfilment.paid_at_ms.unwrap_or(at_ms));
        let order = OrderRow {
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
        let order = OrderRow { status: OrderStatusColumn::Cancelled, cancelled_at_ms, ..self };
        Changed { order, change: OrderChange::Cancelled }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::CurrencyColumn;

    fn order(status: OrderStatusColumn) -> OrderRow {
        OrderRow {
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
}
