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
//! Pure: the service reads the order, asks [`decide`], and writes [`advanced`].

use giftgenius_commerce::store::{OrderChange, OrderRow, OrderStatusColumn};

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

/// `order` once it took `step` at `now_ms`: its status, the step's time and, when shipped, the
/// shipment.
pub fn advanced(order: &OrderRow, step: &Step, now_ms: i64) -> OrderRow {
    let mut next = order.clone();
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
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_commerce::store::CurrencyColumn;

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
        let shipped = advanced(&order(OrderStatusColumn::Paid), &ship("A1"), 1_780_000_100_000);
        assert_eq!(shipped.status, OrderStatusColumn::Shipped);
        assert_eq!(shipped.fulfilment.shipped_at_ms, Some(1_780_000_100_000));
        assert_eq!(shipped.fulfilment.processing_at_ms, None, "paid → shipped skips processing");
        assert_eq!(decide(&shipped, &ship("A1")), Decision::Already);
        assert!(matches!(decide(&shipped, &ship("B2")), Decision::Refused(why) if why.contains("other tracking")));
        let completed = advanced(&shipped, &Step::Complete, 1_780_000_200_000);
        assert_eq!(completed.fulfilment.tracking_number.as_deref(), Some("A1"), "the shipment stays");
    }
}
