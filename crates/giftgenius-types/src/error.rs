//! `ToolError`: the one error shape every tool returns, and the table of stable error codes.
//!
//! The table is the single source of truth for each code's category, whether it is retryable
//! and what the model should do next; docs/errors.md's error table is generated from it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::args::FieldError;

/// Which of the failure layers an error belongs to, as the model should read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCategory {
    /// Infrastructure or network trouble: the same call may succeed later.
    Transient,
    /// The arguments are wrong: change them before calling again.
    Validation,
    /// A domain rule said no (limit reached, gift unavailable, draft expired).
    Business,
    /// A human has to act first (confirm a purchase).
    Permission,
    /// Anything else; our bug, logged under the reference.
    Other,
}

macro_rules! error_codes {
    ($( #[doc = $doc:literal] $variant:ident = $code:literal, $category:ident, $retryable:literal, $next:literal; )*) => {
        /// Stable, documented error codes. Clients match on these, never on messages.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum ErrorCode {
            $( #[doc = $doc] $variant, )*
        }

        impl ErrorCode {
            /// Every code, in table order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            /// The wire spelling, e.g. `"VALIDATION_ERROR"`.
            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code,)* }
            }

            /// The layer this code belongs to.
            pub const fn category(self) -> ErrorCategory {
                match self { $(ErrorCode::$variant => ErrorCategory::$category,)* }
            }

            /// Whether repeating the same call can succeed. Explicit, never inferred by clients.
            pub const fn retryable(self) -> bool {
                match self { $(ErrorCode::$variant => $retryable,)* }
            }

            /// What the model should do next; also used in the generated documentation.
            pub const fn next_step(self) -> &'static str {
                match self { $(ErrorCode::$variant => $next,)* }
            }

            /// One-line meaning, taken from the variant's doc comment.
            pub fn meaning(self) -> &'static str {
                match self { $(ErrorCode::$variant => $doc.trim_ascii(),)* }
            }
        }
    };
}

error_codes! {
    /// The arguments do not fit the tool's schema or its rules; `field_errors` names each field.
    ValidationError = "VALIDATION_ERROR", Validation, false,
        "Fix the fields named in field_errors and call again; do not repeat the same arguments.";
    /// This idempotency key was already used with different arguments.
    IdempotencyKeyReused = "IDEMPOTENCY_KEY_REUSED", Validation, false,
        "Use a new idempotency key for a different operation, or resend the original arguments.";
    /// The referenced gift does not exist in the catalog.
    GiftNotFound = "GIFT_NOT_FOUND", Validation, false,
        "Use a gift id returned by suggest_gifts.";
    /// The referenced order draft does not exist for this user.
    DraftNotFound = "DRAFT_NOT_FOUND", Validation, false,
        "Call prepare_order again to get a fresh draft.";
    /// The referenced order does not exist for this user.
    OrderNotFound = "ORDER_NOT_FOUND", Validation, false,
        "Check the order id; only orders placed in this conversation's account can be read.";
    /// The same call arrived while an identical one is still running.
    RequestInProgress = "REQUEST_IN_PROGRESS", Transient, true,
        "Wait retry_after_ms and send the identical call again; it will return the first call's result.";
    /// An upstream catalog did not answer in time.
    UpstreamTimeout = "UPSTREAM_TIMEOUT", Transient, true,
        "Try again shortly; tell the user the gift catalogs are slow right now.";
    /// Every upstream catalog failed.
    UpstreamUnavailable = "UPSTREAM_UNAVAILABLE", Transient, true,
        "Try again later; tell the user the gift catalogs are unavailable right now.";
    /// The payment provider could not be reached or failed; nothing was charged twice.
    PaymentProviderUnavailable = "PAYMENT_PROVIDER_UNAVAILABLE", Transient, true,
        "Let the user press Try again in the widget; the same idempotency key is reused, so it cannot charge twice.";
    /// The user reached today's limit of gift suggestions.
    DailyLimitExceeded = "DAILY_LIMIT_EXCEEDED", Business, false,
        "Tell the user the daily limit is reached and when it resets (retry_after_ms).";
    /// The account reached this hour's limit of order drafts, checkout links or saved-card lookups.
    HourlyLimitExceeded = "HOURLY_LIMIT_EXCEEDED", Business, false,
        "Tell the user the hourly limit of purchases started is reached and when it resets (retry_after_ms); offer the drafts already made.";
    /// The gift is out of stock or no longer sold.
    GiftUnavailable = "GIFT_UNAVAILABLE", Business, false,
        "Offer the alternatives in partial_results or call suggest_gifts again.";
    /// The order draft is older than its validity window.
    DraftExpired = "DRAFT_EXPIRED", Business, false,
        "Call prepare_order again for a fresh draft and let the user confirm it.";
    /// The order can no longer be cancelled: past its fulfilment cut-off, already shipped, or never paid.
    OrderNotCancellable = "ORDER_NOT_CANCELLABLE", Business, false,
        "Tell the user why (the message says it: the merchant is already preparing or has shipped it, or it was never charged); offer no retry.";
    /// The payment method was declined; no money moved.
    PaymentDeclined = "PAYMENT_DECLINED", Business, false,
        "Tell the user the payment was declined; do not retry without the user changing something.";
    /// No card is saved for this account (card-on-file payments); nothing was charged.
    NoSavedCard = "NO_SAVED_CARD", Business, false,
        "Tell the user no card is saved for their account: they add one with Add a card in the widget, then press Confirm again on the same order. Never retry this yourself.";
    /// A human confirmation in the widget is missing or does not match this draft.
    ConfirmationRequired = "CONFIRMATION_REQUIRED", Permission, false,
        "Ask the user to review the order and press Confirm in the widget; never retry this yourself.";
    /// The widget's confirmation (Confirm, Cancel order or Delete my data) is older than its lifetime; nothing was done.
    ConfirmationExpired = "CONFIRMATION_EXPIRED", Permission, false,
        "Tell the user the confirmation timed out; they press the button in the widget again (it fetches a fresh one). Never retry this yourself.";
    /// The tool needs a signed-in account, and the call carried none.
    AuthRequired = "AUTH_REQUIRED", Permission, false,
        "Ask the user to connect their GiftGenius account (the app asks them to sign in), then call again; never retry on your own.";
    /// An unexpected fault on our side; details are in the server log under `reference`.
    InternalError = "INTERNAL_ERROR", Other, true,
        "Try once more; if it fails again, tell the user something went wrong on our side and quote the reference.";
}

impl ErrorCode {
    /// The documented error table (Markdown), generated from this enum. docs/errors.md embeds it
    /// between `<!-- error-table:start -->` and `<!-- error-table:end -->`; a test keeps them equal.
    pub fn markdown_table() -> String {
        let mut out = String::from(
            "| code | category | retryable | meaning | what the model should do next |\n|---|---|---|---|---|\n",
        );
        for code in Self::ALL {
            let category = match code.category() {
                ErrorCategory::Transient => "transient",
                ErrorCategory::Validation => "validation",
                ErrorCategory::Business => "business",
                ErrorCategory::Permission => "permission",
                ErrorCategory::Other => "other",
            };
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                code.as_str(),
                category,
                if code.retryable() { "yes" } else { "no" },
                code.meaning().replace('|', "\\|"),
                code.next_step().replace('|', "\\|")
            ));
        }
        out
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error half of the result envelope.
///
/// `message` is short and free of internals (no paths, SQL, hostnames, stack traces): the full
/// detail lives in the server log under `reference`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolError {
    /// Stable machine-readable code.
    pub code: ErrorCode,
    /// The failure layer; decides how the model and the widget react.
    pub category: ErrorCategory,
    /// Short, human-readable explanation.
    pub message: String,
    /// Whether the identical call may succeed later.
    pub retryable: bool,
    /// Per-field problems (validation errors only): at most 20, then one `(more)` entry
    /// counting the rest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub field_errors: Vec<FieldError>,
    /// The normalized request we tried to serve, so the model can see what was understood
    /// (at most 2 KiB of JSON: long values are shortened).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted: Option<Value>,
    /// Work that did succeed before the failure (for example alternatives to an unavailable gift).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_results: Option<Vec<Value>>,
    /// How long to wait before retrying, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Correlates with the server log; quote it when reporting a problem.
    pub reference: String,
}

impl ToolError {
    /// An error with the code's own category and retryability.
    pub fn new(code: ErrorCode, message: impl Into<String>, reference: impl Into<String>) -> Self {
        Self {
            code,
            category: code.category(),
            message: message.into(),
            retryable: code.retryable(),
            field_errors: Vec::new(),
            attempted: None,
            partial_results: None,
            retry_after_ms: None,
            reference: reference.into(),
        }
    }

    /// A validation error naming the field problems: every one of them up to
    /// [`MAX_FIELD_ERRORS`](crate::bounded::MAX_FIELD_ERRORS), then one entry counting the rest
    /// (see [`crate::bounded`]: the answer stays small however many there are).
    pub fn validation(field_errors: Vec<FieldError>, reference: impl Into<String>) -> Self {
        let total = field_errors.len();
        let field_errors = crate::bounded::cap_field_errors(field_errors);
        let listed: Vec<&str> =
            field_errors.iter().filter(|e| e.field != crate::bounded::MORE_FIELDS).map(|e| e.field.as_str()).collect();
        let message = match field_errors.as_slice() {
            [] => "The arguments are invalid.".to_string(),
            [one] => format!("Invalid argument {}: {}", one.field, one.message),
            _ if total > listed.len() => {
                format!("{total} invalid arguments: {} and {} more", listed.join(", "), total - listed.len())
            }
            _ => format!("{total} invalid arguments: {}", listed.join(", ")),
        };
        Self { field_errors, ..Self::new(ErrorCode::ValidationError, message, reference) }
    }

    /// The request as understood, echoed in at most
    /// [`MAX_ATTEMPTED_BYTES`](crate::bounded::MAX_ATTEMPTED_BYTES) of JSON (shortened, same shape).
    pub fn with_attempted(mut self, attempted: Value) -> Self {
        self.attempted = Some(crate::bounded::bounded_echo(&attempted, crate::bounded::MAX_ATTEMPTED_BYTES));
        self
    }

    pub fn with_retry_after_ms(mut self, ms: u64) -> Self {
        self.retry_after_ms = Some(ms);
        self
    }

    pub fn with_partial_results(mut self, results: Vec<Value>) -> Self {
        self.partial_results = Some(results);
        self
    }
}
