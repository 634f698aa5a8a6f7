//! The binding's tool arguments `{meta, id, payload}` (docs/acp.md §9): their types, whose
//! schemas are the tools' `inputSchema`, and how raw arguments become them.
//!
//! The envelope is checked here: `meta`, `id` or `payload` missing or of the wrong JSON type,
//! or an unknown top-level argument, is JSON-RPC's invalid params (-32602). What `meta` says
//! (the API version, the idempotency key) and what `payload` holds are the REST request's
//! headers and body, checked by the same code as REST's, and fail as ACP errors (-32000).

use giftgenius_types::acp::{AcpCancelRequest, AcpCompleteRequest, AcpCreateRequest, AcpUpdateRequest};
use giftgenius_types::bounded::cut;
use rmcp::ErrorData;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::acp::routes::fresh_request_id;

/// Longest part of a serde message (which may quote the value at fault) in an invalid-params error.
const MAX_PROBLEM_CHARS: usize = 300;

/// Protocol metadata, the REST headers as fields. Unknown fields are ignored, so a header the
/// binding adds later does not break a call.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct AcpMeta {
    /// The ACP API version, `2026-04-17` (REST's `API-Version` header). Checked as the header
    /// is: absent or another version is an ACP error listing `supported_versions`.
    #[schemars(required)]
    pub api_version: Option<String>,
    /// 1 to 255 printable ASCII characters (REST's `Idempotency-Key`). Required on
    /// `create_checkout_session`; on update and cancel, without it nothing is recorded. The
    /// same key and payload return the first answer again (over REST too); the same key with
    /// another payload is an `idempotency_conflict`.
    pub idempotency_key: Option<String>,
    /// Correlation id (REST's `Request-Id`), echoed in the result's
    /// `_meta["giftgenius/acp"].request_id`; one is made up when absent.
    pub request_id: Option<String>,
    /// The agent's name (REST's `User-Agent`).
    pub user_agent: Option<String>,
    /// Locale preference (REST's `Accept-Language`): on create without `payload.locale`, the
    /// session's language (English, Spanish or Portuguese; anything else is English).
    pub accept_language: Option<String>,
    /// Request signature (REST's `Signature`): accepted and not verified; the platform's
    /// bearer key is the authentication.
    pub signature: Option<String>,
    /// Signing time, RFC 3339 (REST's `Timestamp`): accepted and not verified.
    #[schemars(extend("format" = "date-time"))]
    pub timestamp: Option<String>,
}

impl AcpMeta {
    /// The caller's request id when it is one (1 to 255 printable ASCII characters, as it goes
    /// into logs and `_meta`), otherwise a fresh one.
    pub fn request_id(&self) -> String {
        self.request_id
            .as_deref()
            .filter(|id| !id.is_empty() && id.len() <= 255 && id.bytes().all(|b| (0x20..0x7f).contains(&b)))
            .map_or_else(fresh_request_id, str::to_string)
    }
}

/// `create_checkout_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateArguments {
    pub meta: AcpMeta,
    /// The REST request body of `POST /checkout_sessions`.
    #[schemars(with = "AcpCreateRequest")]
    pub payload: Map<String, Value>,
}

/// `get_checkout_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetArguments {
    pub meta: AcpMeta,
    /// The checkout session's id (`acs_…`).
    pub id: String,
}

/// `update_checkout_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateArguments {
    pub meta: AcpMeta,
    /// The checkout session's id (`acs_…`).
    pub id: String,
    /// The REST request body of `POST /checkout_sessions/{id}`: absent fields stay, `null`
    /// clears, values replace.
    #[schemars(with = "AcpUpdateRequest")]
    pub payload: Map<String, Value>,
}

/// `complete_checkout_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompleteArguments {
    pub meta: AcpMeta,
    /// The checkout session's id (`acs_…`).
    pub id: String,
    /// The REST request body of `POST /checkout_sessions/{id}/complete`: `payment_data` with
    /// the delegated-payment vault token, and optionally `buyer` and `order_notes`.
    #[schemars(with = "AcpCompleteRequest")]
    pub payload: Map<String, Value>,
}

/// `cancel_checkout_session`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelArguments {
    pub meta: AcpMeta,
    /// The checkout session's id (`acs_…`).
    pub id: String,
    /// The REST request body of `POST /checkout_sessions/{id}/cancel`; optional (absent ≡ `{}`).
    #[schemars(with = "Option<AcpCancelRequest>")]
    pub payload: Option<Map<String, Value>>,
}

/// `arguments` as `T`, or invalid params (-32602) naming what does not fit.
pub fn parse<T: DeserializeOwned>(tool: &str, arguments: JsonObject) -> Result<T, ErrorData> {
    serde_path_to_error::deserialize(Value::Object(arguments)).map_err(|e| {
        let path = e.path().to_string();
        let problem = cut(&e.inner().to_string(), MAX_PROBLEM_CHARS);
        let at = if path == "." { String::new() } else { format!(" at `{path}`") };
        ErrorData::invalid_params(format!("Invalid arguments for {tool}{at}: {problem}"), None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorCode;
    use serde_json::json;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(object) => object,
            _ => unreachable!("arguments are objects"),
        }
    }

    #[test]
    fn an_envelope_that_does_not_fit_is_invalid_params() {
        let meta = json!({"api_version": "2026-04-17"});
        for arguments in [
            json!({}),
            json!({"meta": "2026-04-17", "payload": {}}),
            json!({"meta": meta, "payload": "{}"}),
            json!({"meta": meta, "payload": {}, "extra": 1}),
            json!({"meta": {"api_version": 20260417}, "payload": {}}),
        ] {
            let error = parse::<CreateArguments>("create_checkout_session", object(arguments.clone())).unwrap_err();
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{arguments}");
        }
        let error = parse::<GetArguments>("get_checkout_session", object(json!({"meta": meta, "id": 7}))).unwrap_err();
        assert!(error.message.contains("`id`"), "{}", error.message);
    }

    #[test]
    fn meta_ignores_what_it_does_not_know_and_cancel_needs_no_payload() {
        let arguments = json!({"meta": {"api_version": "2026-04-17", "future_header": "x"}, "id": "acs_1"});
        let cancel = parse::<CancelArguments>("cancel_checkout_session", object(arguments)).unwrap();
        assert_eq!(cancel.meta.api_version.as_deref(), Some("2026-04-17"));
        assert!(cancel.payload.is_none());
        // A missing version is the ACP error of REST, not an envelope error.
        let arguments = json!({"meta": {}, "id": "acs_1", "payload": null});
        let cancel = parse::<CancelArguments>("cancel_checkout_session", object(arguments)).unwrap();
        assert!(cancel.meta.api_version.is_none() && cancel.payload.is_none());
    }

    #[test]
    fn a_request_id_is_the_callers_when_it_is_one() {
        let meta = |id: &str| AcpMeta { request_id: Some(id.to_string()), ..AcpMeta::default() };
        assert_eq!(meta("trace-1").request_id(), "trace-1");
        assert!(meta("").request_id().starts_with("req_"));
        assert!(meta(&"x".repeat(256)).request_id().starts_with("req_"));
        assert!(meta("line\nbreak").request_id().starts_with("req_"));
    }
}
