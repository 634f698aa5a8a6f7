//! Calling tools through the official MCP client, and reading what a result carries.

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, MetaObject, RequestMetaObject};
use rmcp::service::RunningService;
use serde_json::{Map, Value, json};

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, got {other}"),
    }
}

/// A `tools/call` request, as the ChatGPT user `subject` (`_meta["openai/subject"]`) if given.
pub fn request(subject: Option<&str>, tool: &'static str, arguments: Value) -> CallToolRequestParams {
    let params = CallToolRequestParams::new(tool).with_arguments(args(arguments));
    match subject {
        Some(subject) => with_host_meta(params, "openai/subject", subject),
        None => params,
    }
}

/// `params` with one host-set `_meta` string, as ChatGPT sends the user's id or locale.
fn with_host_meta(mut params: CallToolRequestParams, key: &str, value: &str) -> CallToolRequestParams {
    let mut meta = Map::new();
    meta.insert(key.into(), Value::String(value.to_string()));
    params.meta = Some(RequestMetaObject(MetaObject(meta)));
    params
}

async fn send(client: &RunningService<RoleClient, ()>, params: CallToolRequestParams) -> (CallToolResult, Value) {
    let result = client.call_tool(params).await.expect("tools/call answers");
    let structured = result.structured_content.clone().expect("every result carries structuredContent");
    (result, structured)
}

/// Calls a tool and returns (result, structuredContent).
pub async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: Value,
) -> (CallToolResult, Value) {
    send(client, request(None, tool, arguments)).await
}

/// Calls a tool as the ChatGPT user `subject` (`_meta["openai/subject"]`).
pub async fn call_as(
    client: &RunningService<RoleClient, ()>,
    subject: &str,
    tool: &'static str,
    arguments: Value,
) -> (CallToolResult, Value) {
    send(client, request(Some(subject), tool, arguments)).await
}

/// Calls a tool from a host whose user reads `locale` (`_meta["openai/locale"]`).
pub async fn call_in_locale(
    client: &RunningService<RoleClient, ()>,
    locale: &str,
    tool: &'static str,
    arguments: Value,
) -> (CallToolResult, Value) {
    send(client, with_host_meta(request(None, tool, arguments), "openai/locale", locale)).await
}

/// A widget-only `_meta` value of a result.
pub fn meta_of<'a>(result: &'a CallToolResult, key: &str) -> Option<&'a Value> {
    result.meta.as_ref().and_then(|m| m.0.get(key))
}

pub fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

/// suggest_gifts arguments that differ from call to call (`n` picks the limit), so the
/// repeated-call valve of the policy layer never answers instead of the tool.
pub fn varied_suggestion(n: u32) -> Value {
    json!({"relationship_type": "friend", "interests": ["coffee"], "limit": 1 + n % 12})
}
