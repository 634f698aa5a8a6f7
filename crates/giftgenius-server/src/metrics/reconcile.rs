//! The reconciler (`checkout::reconcile`, which reports each pass here): its passes, what they settled, when one last
//! succeeded, and the two flags an alert compares with (how often it runs, and how long an
//! order may stay pending before it is looked at), so the alert rules need no copy of them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

use super::label_values;

label_values! {
    /// How a pass ended.
    pub enum PassResult {
        Ok = "ok",
        /// The database failed the pass (the provider failing only leaves orders for the next).
        Failed = "failed",
    }
}

label_values! {
    /// What a pass did with one order or refund (`ReconcileReport`'s fields).
    pub enum Settled {
        Paid = "paid",
        Declined = "declined",
        Abandoned = "abandoned",
        InFlight = "in_flight",
        Unreachable = "unreachable",
        Conflict = "conflict",
        Refunded = "refunded",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct PassLabels {
    result: PassResult,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct SettledLabels {
    outcome: Settled,
}

/// The handle the reconciler feeds. Cheap to clone; a default one counts into no registry.
#[derive(Debug, Clone, Default)]
pub struct ReconcileMetrics {
    passes: Family<PassLabels, Counter>,
    settled: Family<SettledLabels, Counter>,
    last_success: Gauge<f64, AtomicU64>,
    interval: Gauge<f64, AtomicU64>,
    window: Gauge<f64, AtomicU64>,
}

impl ReconcileMetrics {
    pub(super) fn register(&self, registry: &mut Registry) {
        for &result in PassResult::ALL {
            self.passes.get_or_create_owned(&PassLabels { result });
        }
        registry.register("giftgenius_reconcile_passes", "Reconciler passes, by result", self.passes.clone());
        registry.register(
            "giftgenius_reconcile_orders",
            "Orders and refunds the reconciler looked at, by what became of them",
            self.settled.clone(),
        );
        registry.register(
            "giftgenius_reconcile_last_success_timestamp_seconds",
            "When a reconciler pass last finished without error (Unix time; 0: never)",
            self.last_success.clone(),
        );
        registry.register(
            "giftgenius_reconcile_interval_seconds",
            "--reconcile-interval-secs: how often a pass runs (0: never on this replica)",
            self.interval.clone(),
        );
        registry.register(
            "giftgenius_reconcile_window_seconds",
            "--reconcile-after-secs: how long an order may stay pending before a pass looks it up",
            self.window.clone(),
        );
    }

    /// The flags, as gauges.
    pub fn configure(&self, interval: Duration, window: Duration) {
        self.interval.set(interval.as_secs_f64());
        self.window.set(window.as_secs_f64());
    }

    /// One pass ended: `Some(settled)` (how many orders or refunds it settled each way) when it
    /// finished, `None` when the database failed it.
    pub fn pass(&self, settled: Option<&[(Settled, u64)]>) {
        let Some(settled) = settled else {
            self.passes.get_or_create(&PassLabels { result: PassResult::Failed }).inc();
            return;
        };
        self.passes.get_or_create(&PassLabels { result: PassResult::Ok }).inc();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        self.last_success.set(now.as_secs_f64());
        for &(outcome, n) in settled {
            if n > 0 {
                self.settled.get_or_create(&SettledLabels { outcome }).inc_by(n);
            }
        }
    }
}
