//! HTTP plumbing every transport shares, below them all (the app's MCP server, ACP's REST API
//! and its MCP binding, the pages): the per-address rate limit, a request's server span, the
//! drain on shutdown, and the MCP-over-HTTP pieces both MCP servers use ([`mcp`]).

pub mod drain;
pub mod mcp;
pub mod rate_limit;
pub mod traced;

/// The probes load balancers poll: never rate limited (`http/health.rs` serves them).
pub const PROBE_PATHS: [&str; 3] = ["/healthz", "/livez", "/readyz"];

/// Where Prometheus scrapes: never rate limited (`http/metrics.rs` serves it).
pub const METRICS_PATH: &str = "/metrics";
