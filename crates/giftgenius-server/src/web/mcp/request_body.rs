//! What a `POST /mcp` must be before rmcp sees it: a JSON body of at most 256 KiB that is one
//! JSON-RPC message rmcp can read.
//!
//! rmcp's Streamable HTTP service answers every body it cannot deserialize with `415
//! Unsupported Media Type` and the parser's raw message ("fail to deserialize request body
//! recursion limit exceeded at line 1 column 854"), and has no setting to change that. JSON-RPC
//! 2.0 says: a body that is not JSON is a Parse error (-32700), JSON that is not a request is
//! an Invalid Request (-32600), both with `id: null` when no id can be read. So this layer reads
//! the body first, with the same deserializer on the same type rmcp uses (so it refuses exactly
//! what rmcp would), and answers those cases itself with HTTP 400 and a JSON-RPC error. A
//! readable message is passed on byte for byte.
//!
//! A wrong `Content-Type` is left to rmcp, whose 415 is the honest answer there; a body over
//! the limit gets 413, as from rmcp. serde_json's nesting limit (128) is the depth limit.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};

/// JSON-RPC 2.0 error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// Middleware: `axum::middleware::from_fn_with_state(max_body_bytes, json_rpc_body)`.
pub async fn json_rpc_body(State(max_body_bytes): State<usize>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !is_json(request.headers()) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match read(body, max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal,
    };
    let initialize = match check(&bytes) {
        Ok(initialize) => initialize,
        Err(refusal) => return refusal,
    };
    let mut request = Request::from_parts(parts, Body::from(bytes));
    if initialize {
        request.extensions_mut().insert(Initialize);
    }
    next.run(request).await
}

/// Marks a POST whose body is an `initialize` request (the MCP route sends it to the
/// sessioned service, see `startup::mcp_routes`).
#[derive(Debug, Clone, Copy)]
pub struct Initialize;

/// `application/json` (any parameters), as rmcp checks it.
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| {
        v.split(';').next().is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
    })
}

async fn read(body: Body, max_body_bytes: usize) -> Result<Bytes, Response> {
    match Limited::new(body, max_body_bytes).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => Err(answer(
            StatusCode::PAYLOAD_TOO_LARGE,
            Value::Null,
            INVALID_REQUEST,
            &format!("Request body exceeds {max_body_bytes} bytes"),
        )),
        // The client went away or broke off mid-body: nobody reads this answer.
        Err(_) => {
            Err(answer(StatusCode::BAD_REQUEST, Value::Null, INVALID_REQUEST, "The request body could not be read"))
        }
    }
}

/// `Ok(is it an initialize request)` when rmcp can read `body`; otherwise the JSON-RPC error.
fn check(body: &[u8]) -> Result<bool, Response> {
    let e = match serde_json::from_slice::<ClientJsonRpcMessage>(body) {
        Ok(ClientJsonRpcMessage::Request(request)) => {
            return Ok(matches!(request.request, rmcp::model::ClientRequest::InitializeRequest(_)));
        }
        Ok(_) => return Ok(false),
        Err(e) => e,
    };
    if e.is_syntax() || e.is_eof() {
        // serde_json reports its nesting limit and numbers it cannot hold as syntax errors:
        // name them, they are what the client can act on.
        let reason = e.to_string();
        let message = if reason.starts_with("recursion limit exceeded") {
            "Parse error: the JSON is nested too deeply"
        } else if reason.starts_with("number out of range") {
            "Parse error: a number is out of range"
        } else {
            "Parse error: the body is not valid JSON"
        };
        return Err(answer(StatusCode::BAD_REQUEST, Value::Null, PARSE_ERROR, message));
    }
    Err(answer(
        StatusCode::BAD_REQUEST,
        request_id(body),
        INVALID_REQUEST,
        "Invalid Request: not a JSON-RPC 2.0 message this server accepts",
    ))
}

/// The id of a message that is JSON but not a valid request, when it has a usable one.
fn request_id(body: &[u8]) -> Value {
    match serde_json::from_slice::<Value>(body).ok().and_then(|v| v.get("id").cloned()) {
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
        _ => Value::Null,
    }
}

fn answer(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    (status, axum::Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})))
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> (StatusCode, Value) {
        let response = check(body.as_bytes()).expect_err(body);
        let status = response.status();
        let body = futures::executor::block_on(axum::body::to_bytes(response.into_body(), 10_000)).unwrap();
        (status, serde_json::from_slice(&body).unwrap())
    }

    #[test]
    fn requests_and_notifications_pass() {
        assert!(check(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).is_ok());
        assert!(check(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_ok());
    }

    #[test]
    fn not_json_and_too_deep_are_parse_errors_with_a_null_id() {
        for body in ["", "\u{1}not json", r#"{"jsonrpc":"2.0","id":7,"method":"tools/list""#] {
            let (status, answer) = refused(body);
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert_eq!(answer["error"]["code"], PARSE_ERROR, "{body:?}");
            assert_eq!(answer["id"], Value::Null);
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let (status, answer) = refused(&deep);
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(answer["error"]["code"], PARSE_ERROR);
        assert_eq!(answer["error"]["message"], "Parse error: the JSON is nested too deeply");
    }

    #[test]
    fn json_that_is_no_message_is_an_invalid_request_keeping_its_id() {
        let (status, answer) = refused(r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#);
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(answer["error"]["code"], INVALID_REQUEST);
        assert_eq!(answer["id"], 7);
        let (_, answer) = refused("[1,2,3]");
        assert_eq!(answer["error"]["code"], INVALID_REQUEST);
        assert_eq!(answer["id"], Value::Null);
    }

    #[test]
    fn content_types_are_matched_like_rmcp() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, "Application/JSON; charset=utf-8".parse().unwrap());
        assert!(is_json(&headers));
        headers.insert(header::CONTENT_TYPE, "text/plain".parse().unwrap());
        assert!(!is_json(&headers));
        assert!(!is_json(&HeaderMap::new()));
    }
}
