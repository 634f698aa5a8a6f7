//! How an operation's answer (the REST status and body, [`Reply`]) becomes the binding's: a
//! 2xx is a `CallToolResult` whose `structuredContent` is the session, whose one text content
//! is the same JSON, and whose `_meta["giftgenius/acp"]` keeps what REST says in its status
//! line and headers; anything else is JSON-RPC error -32000 with ACP's `Error` as `data`.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ErrorCode, MetaObject};
use serde_json::{Map, Value, json};

use crate::acp::error::AcpFailure;
use crate::acp::routes::Reply;

/// JSON-RPC's "server error", the one code of every ACP error in the binding.
pub const ACP_ERROR: ErrorCode = ErrorCode(-32000);

/// The `_meta` key of a result's REST facts.
pub const META_KEY: &str = "giftgenius/acp";

/// `reply` in the binding's shape. `id_argument`: the call named a session by its `id`
/// argument, which a `session_not_found` then points at (`param: "$.id"`).
pub(crate) fn render(reply: Reply, request_id: &str, id_argument: bool) -> Result<CallToolResult, ErrorData> {
    if !reply.status.is_success() {
        return Err(error(reply.body, id_argument));
    }
    let mut result = CallToolResult::structured(reply.body);
    let facts = json!({
        "http_status": reply.status.as_u16(),
        "idempotent_replayed": reply.replayed,
        "request_id": request_id,
    });
    result.meta = Some(MetaObject(Map::from_iter([(META_KEY.to_string(), facts)])));
    Ok(result)
}

/// ACP's `Error` object `body` as JSON-RPC error -32000 with the same message.
pub fn error(mut body: Value, id_argument: bool) -> ErrorData {
    if id_argument
        && body["code"] == "session_not_found"
        && let Some(object) = body.as_object_mut()
    {
        object.entry("param").or_insert_with(|| Value::from("$.id"));
    }
    let message = body["message"].as_str().unwrap_or("The ACP request failed.").to_string();
    ErrorData::new(ACP_ERROR, message, Some(body))
}

/// A failure that never became a [`Reply`] (no platform, a panic) as JSON-RPC error -32000.
pub fn failure(failure: AcpFailure) -> ErrorData {
    error(Reply::from(failure).body, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn a_session_is_structured_content_and_its_json_text() {
        let reply =
            Reply { status: StatusCode::CREATED, body: json!({"id": "acs_1"}), replayed: true, retry_after_secs: None };
        let result = render(reply, "req_1", false).unwrap();
        assert_eq!(result.structured_content, Some(json!({"id": "acs_1"})));
        assert_eq!(result.is_error, Some(false));
        let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.as_str())).collect();
        assert_eq!(text, [r#"{"id":"acs_1"}"#]);
        let meta = result.meta.unwrap();
        assert_eq!(meta.0[META_KEY], json!({"http_status": 201, "idempotent_replayed": true, "request_id": "req_1"}));
    }

    #[test]
    fn an_acp_error_is_a_json_rpc_server_error_carrying_it() {
        let error = render(AcpFailure::session_not_found().into(), "req_1", true).unwrap_err();
        assert_eq!(error.code, ACP_ERROR);
        assert_eq!(error.message, "There is no such checkout session.");
        let data = error.data.unwrap();
        assert_eq!(
            (data["type"].as_str(), data["code"].as_str()),
            (Some("invalid_request"), Some("session_not_found"))
        );
        assert_eq!(data["param"], "$.id");
        let error = render(AcpFailure::api_version(false, "meta.api_version").into(), "req_1", false).unwrap_err();
        assert_eq!(error.data.unwrap()["supported_versions"], json!(["2026-04-17"]));
    }
}
