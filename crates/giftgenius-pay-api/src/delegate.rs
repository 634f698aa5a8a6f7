//! What both sides of ACP delegated payment agree on: the endpoint's path, the `API-Version`s it
//! takes, and its times (`rfc3339`). The endpoint itself is the sandbox provider's
//! (`giftgenius_sandbox_pay::delegate`); the app's payment sheet relays to it.

pub mod rfc3339;

pub const DELEGATE_PAYMENT_PATH: &str = "/agentic_commerce/delegate_payment";
/// The `API-Version`s taken, newest first (the RFC still names 2025-09-29; docs/acp.md D24).
pub const SUPPORTED_VERSIONS: [&str; 2] = ["2026-04-17", "2025-09-29"];
pub const API_VERSION_HEADER: &str = "API-Version";
