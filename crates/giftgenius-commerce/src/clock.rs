//! Time as milliseconds since the Unix epoch, injectable so tests can expire drafts and keys
//! without sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Default)]
pub enum Clock {
    #[default]
    System,
    /// A clock that only moves when told to.
    Manual(Arc<AtomicI64>),
}

impl Clock {
    pub fn manual(start_ms: i64) -> Self {
        Clock::Manual(Arc::new(AtomicI64::new(start_ms)))
    }

    pub fn now_ms(&self) -> i64 {
        match self {
            Clock::System => SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0),
            Clock::Manual(ms) => ms.load(Ordering::SeqCst),
        }
    }

    /// Moves a manual clock forward; no effect on the system clock.
    pub fn advance(&self, by: Duration) {
        if let Clock::Manual(ms) = self {
            ms.fetch_add(by.as_millis() as i64, Ordering::SeqCst);
        }
    }
}

/// RFC 3339 UTC with seconds, e.g. `2026-11-29T16:07:38Z`.
pub fn rfc3339(ms: i64) -> String {
    let t = UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}
