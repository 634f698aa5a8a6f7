//! Requests refused before any work: by the per-address rate limit (`web::rate_limit`), and
//! for their credentials (`auth::middleware` in front of `/mcp`, the platform keys of `/acp`,
//! and `/metrics`' own token).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::label_values;

label_values! {
    /// Where credentials were refused.
    pub enum AuthEndpoint {
        /// `/mcp` in verified mode (OAuth access tokens).
        Mcp = "mcp",
        /// `/acp/…` and `/acp/mcp` (the platforms' API keys).
        Acp = "acp",
        /// `/metrics` with `--metrics-token-file`.
        Metrics = "metrics",
    }
}

label_values! {
    /// Why.
    pub enum AuthRefusal {
        /// A token or key was shown and is not valid (expired, forged, wrong audience, unknown).
        InvalidToken = "invalid_token",
        /// No usable credentials: none where they are required, another scheme, two headers.
        InvalidRequest = "invalid_request",
        /// A valid token without the scope the tool needs (403).
        InsufficientScope = "insufficient_scope",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct AuthLabels {
    endpoint: AuthEndpoint,
    reason: AuthRefusal,
}

/// The handle the guards feed. Cheap to clone; a default one counts into no registry.
#[derive(Debug, Clone, Default)]
pub struct RefusalMetrics {
    rate_limited: Counter,
    auth: Family<AuthLabels, Counter>,
}

impl RefusalMetrics {
    pub(super) fn register(&self, registry: &mut Registry) {
        registry.register(
            "giftgenius_rate_limited",
            "Requests answered 429 by the per-address rate limit",
            self.rate_limited.clone(),
        );
        registry.register(
            "giftgenius_auth_refusals",
            "Requests refused for their credentials, by endpoint and reason",
            self.auth.clone(),
        );
    }

    pub fn rate_limited(&self) {
        self.rate_limited.inc();
    }

    pub fn auth_refused(&self, endpoint: AuthEndpoint, reason: AuthRefusal) {
        self.auth.get_or_create(&AuthLabels { endpoint, reason }).inc();
    }
}
