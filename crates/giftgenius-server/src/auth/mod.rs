//! Accounts: who is calling, decided from a verified OAuth access token, never from a client
//! hint. GiftGenius is an OAuth 2.1 protected resource as the MCP authorization specification
//! describes it.
//!
//! Building blocks, wired into the app by `startup` and the tool handlers:
//! - [`mode`]: `AuthMode` (verified / local / single-user), decided once at startup.
//! - [`jwks`]: authorization server discovery (RFC 8414 / OpenID Connect) and the cached JWKS.
//! - [`verify`]: JWT access token verification (RFC 9068 profile) → [`Principal`].
//! - [`caller`]: [`Caller`], what the middleware tells a tool handler about the request.
//! - [`metadata`]: RFC 9728 protected resource metadata and its routes.
//! - [`challenge`]: `WWW-Authenticate` header values (401 / 403 / tool-result `_meta`).
//! - [`middleware`]: the axum middleware in front of `/mcp`.
//! - [`redact`]: removes bearer and confirmation tokens from strings before they are logged.

pub mod caller;
pub mod challenge;
pub mod jwks;
pub mod metadata;
pub mod middleware;
pub mod mode;
pub mod redact;
pub mod verify;

pub use caller::{Caller, Principal};
pub use mode::{AuthMode, Issuer, ModeError};
pub use verify::{AuthError, Verifier};

/// Read your own orders (`get_order`, `list_orders`).
pub const SCOPE_ORDERS_READ: &str = "orders:read";
/// Prepare, reopen, commit, check out and cancel orders, and delete your data (`prepare_order`,
/// `reopen_order_draft`, `commit_order`, `create_checkout_session`, `cancel_order`, `delete_my_data`, `complete_checkout`,
/// and `remove_saved_card`, which touches only the card that pays for the caller's own orders).
pub const SCOPE_ORDERS_WRITE: &str = "orders:write";
/// Every scope this resource knows, as advertised in the protected resource metadata.
pub const SCOPES_SUPPORTED: [&str; 2] = [SCOPE_ORDERS_READ, SCOPE_ORDERS_WRITE];

/// The scope each GiftGenius tool needs (`None`: works signed out, or no such tool). The
/// middleware's [`middleware::ScopeOf`] for this server.
pub fn required_scope(tool: &str) -> Option<&'static str> {
    match tool {
        "prepare_order"
        | "commit_order"
        | "reopen_order_draft"
        | "create_checkout_session"
        | "cancel_order"
        | "delete_my_data"
        | "complete_checkout"
        | "remove_saved_card"
        | "checkout_session" => Some(SCOPE_ORDERS_WRITE),
        "get_order" | "list_orders" => Some(SCOPE_ORDERS_READ),
        _ => None,
    }
}
