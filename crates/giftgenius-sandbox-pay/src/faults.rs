//! Injected failures: which requests fail, and how. Written as `"5xx*2,timeout*1"` (the next two
//! requests answer 503, the one after times out, then all succeed) or `"decline"` (every request
//! from then on is declined). The plan lives in the provider's database, so every process
//! serving it takes faults from the same queue.

/// One way a charge request can go wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 503 before anything is charged.
    ServerError,
    /// Charged, but the answer never comes: the dangerous case idempotency exists for.
    Timeout,
    /// The card is declined: HTTP 402, recorded under the key, no money moves.
    Decline,
}

impl Fault {
    pub const fn as_str(self) -> &'static str {
        match self {
            Fault::ServerError => "5xx",
            Fault::Timeout => "timeout",
            Fault::Decline => "decline",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "5xx" | "503" | "server_error" => Some(Fault::ServerError),
            "timeout" => Some(Fault::Timeout),
            "decline" | "declined" => Some(Fault::Decline),
            _ => None,
        }
    }
}

/// The most one-off faults one plan may queue (a typo like `5xx*99999999` is refused, not stored).
pub const MAX_QUEUED: usize = 10_000;

/// A queue of one-off faults, then an optional fault for every request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultPlan {
    pub next: Vec<Fault>,
    pub always: Option<Fault>,
}

impl FaultPlan {
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut plan = FaultPlan::default();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (kind, count) = match item.split_once('*') {
                Some((k, n)) => {
                    (k.trim(), Some(n.trim().parse::<usize>().map_err(|_| format!("bad count in {item:?}"))?))
                }
                None => (item, None),
            };
            let fault =
                Fault::parse(kind).ok_or_else(|| format!("unknown payment fault {kind:?} (5xx, timeout, decline)"))?;
            match count {
                Some(n) if plan.next.len() + n > MAX_QUEUED => {
                    return Err(format!("at most {MAX_QUEUED} one-off faults may be queued"));
                }
                Some(n) => plan.next.extend(std::iter::repeat_n(fault, n)),
                None => plan.always = Some(fault),
            }
        }
        Ok(plan)
    }

    /// The plan in the syntax `parse` reads (runs of one kind are counted).
    pub fn render(&self) -> String {
        let mut items: Vec<String> = Vec::new();
        let mut run: Option<(Fault, usize)> = None;
        for &fault in &self.next {
            run = match run {
                Some((f, n)) if f == fault => Some((f, n + 1)),
                Some((f, n)) => {
                    items.push(format!("{}*{n}", f.as_str()));
                    Some((fault, 1))
                }
                None => Some((fault, 1)),
            };
        }
        if let Some((f, n)) = run {
            items.push(format!("{}*{n}", f.as_str()));
        }
        if let Some(always) = self.always {
            items.push(always.as_str().to_string());
        }
        items.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_parses_counts_and_always_and_renders_back() {
        let plan = FaultPlan::parse("5xx*2, timeout*1,decline").unwrap();
        assert_eq!(plan.next, [Fault::ServerError, Fault::ServerError, Fault::Timeout]);
        assert_eq!(plan.always, Some(Fault::Decline));
        assert_eq!(plan.render(), "5xx*2,timeout*1,decline");
        assert_eq!(FaultPlan::parse("").unwrap(), FaultPlan::default());
        assert_eq!(FaultPlan::default().render(), "");
    }

    #[test]
    fn unknown_kinds_bad_counts_and_huge_queues_are_refused() {
        assert!(FaultPlan::parse("explode").is_err());
        assert!(FaultPlan::parse("5xx*x").is_err());
        assert!(FaultPlan::parse("5xx*99999999").is_err());
    }
}
