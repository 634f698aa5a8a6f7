//! What both MCP servers (the app's tools at `/mcp`, ACP's binding at `/acp/mcp`) do alike over
//! HTTP: the JSON-RPC body check before rmcp reads it (`request_body`), each request's server
//! span (`traced`) and its timing for `/metrics` (`measure`), and the answer to a request rmcp
//! could not match.

use giftgenius_types::bounded::cut;
use rmcp::ErrorData;

pub mod measure;
pub mod request_body;
pub mod traced;

/// Longest client-sent name (a method, a resource URI) echoed in a protocol error.
pub const MAX_ECHOED_NAME_CHARS: usize = 200;

/// The error for a request rmcp could not match to a method (`on_custom_request`): for a
/// method in `served`, its params did not fit (e.g. `arguments` that are a string), so invalid
/// params; otherwise method not found. The method is echoed cut short (rmcp's default answer
/// echoes it whole, up to the body limit).
pub fn unmatched_request(method: &str, served: &[&str]) -> ErrorData {
    let echoed = cut(method, MAX_ECHOED_NAME_CHARS);
    if served.contains(&method) {
        return ErrorData::invalid_params(format!("Invalid params for {echoed}"), None);
    }
    ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {echoed}"), None)
}
