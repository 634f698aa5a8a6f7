//! What more than one GiftGenius crate needs from its logs and traces, so that none of them has
//! to depend on another for it (the server, the commerce core's payment clients, the catalog's
//! HTTP sources):
//!
//! - `redact`: a URL fit for a log line or an error message (no credentials, query or fragment).
//! - `propagate`: the W3C trace context (`traceparent`, `tracestate`) a request we send carries,
//!   so the receiver's spans join the call's trace.
//!
//! The exporter, the subscriber and the incoming side stay with the server, which owns the process.

pub mod propagate;
pub mod redact;

pub use propagate::outgoing_headers;
pub use redact::url_for_log;
