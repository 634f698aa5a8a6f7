//! The SANDBOX payment provider: a stand-in for Stripe that behaves like one, not a mock.
//!
//! It keeps its own ledger table (one row per real charge), honours its own idempotency key
//! (the same key returns the same charge), takes configurable time, and can be told to fail:
//! `5xx` (nothing charged), `timeout` (charged, but the answer is lost: the dangerous case
//! idempotency exists for) and `decline` (card declined, nothing charged).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use giftgenius_types::Money;

use crate::clock::Clock;
use crate::store::{LedgerRow, Store, StoreError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    ServerError,
    Timeout,
    Decline,
}

impl Fault {
    fn parse(s: &str) -> Option<Self> {
        match s {
            "5xx" | "503" | "server_error" => Some(Fault::ServerError),
            "timeout" => Some(Fault::Timeout),
            "decline" | "declined" => Some(Fault::Decline),
            _ => None,
        }
    }
}

/// Which calls fail: a queue of one-off faults, then an optional fault for every call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultPlan {
    next: VecDeque<Fault>,
    always: Option<Fault>,
}

impl FaultPlan {
    /// `"5xx*2,timeout*1"`: the next two calls answer 5xx, the one after times out, then all
    /// succeed. A kind without `*N` (`"decline"`) applies to every call from then on.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut plan = FaultPlan::default();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (kind, count) = match item.split_once('*') {
                Some((k, n)) => (k, Some(n.parse::<usize>().map_err(|_| format!("bad count in {item:?}"))?)),
                None => (item, None),
            };
            let fault =
                Fault::parse(kind).ok_or_else(|| format!("unknown payment fault {kind:?} (5xx, timeout, decline)"))?;
            match count {
                Some(n) => plan.next.extend(std::iter::repeat_n(fault, n)),
                None => plan.always = Some(fault),
            }
        }
        Ok(plan)
    }

    fn take(&mut self) -> Option<Fault> {
        self.next.pop_front().or(self.always)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentError {
    /// The card was declined. Definitive; nothing was charged.
    Declined,
    /// The provider failed or did not answer. The charge may or may not exist: retry with the same key.
    Unavailable(String),
    /// The same provider key was used for another amount: our bug, never the user's.
    KeyMismatch,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Charge {
    pub id: String,
    pub amount: Money,
}

/// The sandbox provider.
pub struct SandboxPayments {
    store: Store,
    clock: Clock,
    latency: Duration,
    faults: Mutex<FaultPlan>,
}

impl std::fmt::Debug for SandboxPayments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxPayments").field("latency", &self.latency).finish()
    }
}

impl SandboxPayments {
    pub fn new(store: Store, clock: Clock, latency: Duration, faults: FaultPlan) -> Self {
        Self { store, clock, latency, faults: Mutex::new(faults) }
    }

    /// Replaces the fault plan (tests and the local preview use this).
    pub fn set_faults(&self, plan: FaultPlan) {
        *self.faults.lock().unwrap_or_else(|e| e.into_inner()) = plan;
    }

    /// Charges `amount` once per `idempotency_key`.
    pub async fn charge(
        &self,
        idempotency_key: &str,
        amount: Money,
        description: &str,
    ) -> Result<Charge, PaymentError> {
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
        let fault = self.faults.lock().unwrap_or_else(|e| e.into_inner()).take();
        match fault {
            Some(Fault::ServerError) => return Err(PaymentError::Unavailable("sandbox provider answered 503".into())),
            Some(Fault::Decline) => return Err(PaymentError::Declined),
            _ => {}
        }
        let entry = LedgerRow {
            idempotency_key: idempotency_key.to_string(),
            charge_id: format!("ch_{}", uuid::Uuid::new_v4().simple()),
            amount_minor: amount.amount_minor,
            currency: amount.currency.into(),
            description: description.to_string(),
            created_at_ms: self.clock.now_ms(),
        };
        let recorded = self.store.sandbox_charge(&entry).await.map_err(|e| PaymentError::Unavailable(e.to_string()))?;
        if recorded.amount_minor != entry.amount_minor || recorded.currency != entry.currency {
            return Err(PaymentError::KeyMismatch);
        }
        if fault == Some(Fault::Timeout) {
            // The charge exists at the provider, but its answer never reaches us.
            return Err(PaymentError::Unavailable("sandbox provider timed out".into()));
        }
        Ok(Charge { id: recorded.charge_id, amount })
    }

    /// Every charge the provider made (tests count these, not responses).
    pub async fn ledger(&self) -> Result<Vec<LedgerRow>, StoreError> {
        self.store.sandbox_ledger().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_plan_parses_counts_and_always() {
        let mut plan = FaultPlan::parse("5xx*2,timeout*1").unwrap();
        assert_eq!(plan.take(), Some(Fault::ServerError));
        assert_eq!(plan.take(), Some(Fault::ServerError));
        assert_eq!(plan.take(), Some(Fault::Timeout));
        assert_eq!(plan.take(), None);
        let mut always = FaultPlan::parse("decline").unwrap();
        assert_eq!(always.take(), Some(Fault::Decline));
        assert_eq!(always.take(), Some(Fault::Decline));
        assert!(FaultPlan::parse("explode").is_err());
    }
}
