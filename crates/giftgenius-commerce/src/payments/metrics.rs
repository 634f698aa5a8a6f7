//! Charges and refunds at the payment provider, by outcome: what [`Payments`](super::Payments) got back
//! for each request (the app's commits, ACP completes, cancellations and the reconciler's
//! refunds all go through it). Every outcome is registered at zero, so a failure ratio has its
//! denominator from the start.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use crate::label_values;

label_values! {
    /// What a charge request got.
    pub enum ChargeOutcome {
        /// The money moved.
        Succeeded = "succeeded",
        /// The card was declined.
        Declined = "declined",
        /// The vault token cannot pay this charge (expired, used, over its allowance…).
        Refused = "refused",
        /// The provider failed or did not answer in time (maybe charged: the reconciler asks).
        Unavailable = "unavailable",
        /// The provider's answer does not match the request (our bug; an operator's to look at).
        Mismatch = "mismatch",
        /// The card's bank asks the person to confirm the payment (3-D Secure) first.
        AuthenticationRequired = "authentication_required",
    }
}

label_values! {
    /// What a refund request got.
    pub enum RefundOutcome {
        Succeeded = "succeeded",
        Unavailable = "unavailable",
        Mismatch = "mismatch",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ChargeLabels {
    outcome: ChargeOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RefundLabels {
    outcome: RefundOutcome,
}

/// The handle the payment client feeds. Cheap to clone; a default one counts into no registry.
#[derive(Debug, Clone, Default)]
pub struct PaymentMetrics {
    charges: Family<ChargeLabels, Counter>,
    refunds: Family<RefundLabels, Counter>,
}

impl PaymentMetrics {
    /// Registers the counters, every outcome at zero, into the application's registry.
    pub fn register(&self, registry: &mut Registry) {
        for &outcome in ChargeOutcome::ALL {
            self.charges.get_or_create_owned(&ChargeLabels { outcome });
        }
        for &outcome in RefundOutcome::ALL {
            self.refunds.get_or_create_owned(&RefundLabels { outcome });
        }
        registry.register(
            "giftgenius_charges",
            "Charge requests to the payment provider, by outcome",
            self.charges.clone(),
        );
        registry.register(
            "giftgenius_refunds",
            "Refund requests to the payment provider, by outcome",
            self.refunds.clone(),
        );
    }

    pub fn charge(&self, outcome: ChargeOutcome) {
        self.charges.get_or_create(&ChargeLabels { outcome }).inc();
    }

    pub fn refund(&self, outcome: RefundOutcome) {
        self.refunds.get_or_create(&RefundLabels { outcome }).inc();
    }
}
