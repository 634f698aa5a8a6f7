//! What browser-based hosts (MCP Apps' basic-host, web inspectors) and the SDK clients they run
//! need from `/mcp`: CORS for the origins in `--cors-origins` (preflight, readable answers and
//! errors, nothing for other origins) and schemas in standard JSON Schema (no `format: uint32`).

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use crate::support::{INIT, post, spawn_app_with, token_secret_file, unused_port, widget_path};

const HOST_PAGE: &str = "http://localhost:5173";

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// Every comma-separated item of `name`, lower-cased (header names are case-insensitive).
fn items(headers: &HeaderMap, name: &str) -> Vec<String> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| item.trim().to_ascii_lowercase())
        .collect()
}

async fn preflight(mcp_url: &str, origin: &str) -> reqwest::Response {
    reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, mcp_url)
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type, authorization, mcp-protocol-version, mcp-session-id")
        .send()
        .await
        .expect("preflight")
}

fn assert_readable_by(headers: &HeaderMap, origin: &str, what: &str) {
    assert_eq!(header(headers, "access-control-allow-origin"), origin, "{what}: {headers:?}");
    let exposed = items(headers, "access-control-expose-headers");
    for name in ["mcp-session-id", "www-authenticate"] {
        assert!(exposed.contains(&name.to_string()), "{what}: {name} is not exposed: {exposed:?}");
    }
    assert!(items(headers, "vary").contains(&"origin".to_string()), "{what}: no Vary: Origin");
}

#[tokio::test]
async fn a_preflight_from_a_listed_origin_gets_the_methods_and_every_mcp_header_without_a_token() {
    let secret = token_secret_file();
    // Verified mode: a token is needed for signed-in calls, never for a preflight.
    let app = spawn_app_with(|c| {
        c.cors_origins = vec![HOST_PAGE.to_string(), "https://inspector.example".to_string()];
        c.auth_issuer = Some(format!("http://127.0.0.1:{}", unused_port()));
        c.token_secret_file = Some(secret.path().to_path_buf());
    })
    .await;
    let response = preflight(&app.mcp_url(), HOST_PAGE).await;
    assert_eq!(response.status(), 204);
    let headers = response.headers();
    assert_eq!(header(headers, "access-control-allow-origin"), HOST_PAGE);
    let methods = items(headers, "access-control-allow-methods");
    for method in ["get", "post", "delete", "options"] {
        assert!(methods.contains(&method.to_string()), "{method} missing from {methods:?}");
    }
    let allowed = items(headers, "access-control-allow-headers");
    for name in [
        "content-type",
        "accept",
        "authorization",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "last-event-id",
    ] {
        assert!(allowed.contains(&name.to_string()), "{name} missing from {allowed:?}");
    }
    assert!(header(headers, "access-control-allow-credentials").is_empty(), "no credentials mode");

    // A refused token is still an answer the page can read, with the challenge exposed.
    let refused = post(&app.mcp_url(), None)
        .header("origin", HOST_PAGE)
        .header("authorization", "Basic not-a-bearer-token")
        .body(INIT)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert!(!header(refused.headers(), "www-authenticate").is_empty());
    assert_readable_by(refused.headers(), HOST_PAGE, "the auth middleware's 401");
}

#[tokio::test]
async fn a_listed_origin_initializes_cross_origin_and_reads_the_session_and_errors() {
    let app = spawn_app_with(|c| c.cors_origins = vec![format!("{HOST_PAGE}/")]).await;
    let response = post(&app.mcp_url(), None).header("origin", HOST_PAGE).body(INIT).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(!header(response.headers(), "mcp-session-id").is_empty(), "a session was opened");
    assert_readable_by(response.headers(), HOST_PAGE, "initialize");
    let body = response.text().await.unwrap();
    assert!(body.contains(r#""serverInfo""#), "{body}");

    // rmcp's own 4xx (an unknown session) is readable too.
    let stale = post(&app.mcp_url(), Some("no-such-session"))
        .header("origin", HOST_PAGE)
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap();
    assert!(stale.status().is_client_error(), "{}", stale.status());
    assert_readable_by(stale.headers(), HOST_PAGE, "rmcp's 4xx");
}

#[tokio::test]
async fn other_origins_get_no_cors_answer_and_stay_refused() {
    let app = spawn_app_with(|c| c.cors_origins = vec![HOST_PAGE.to_string()]).await;
    for origin in ["http://evil.example", "http://localhost:5174", "null"] {
        let response = preflight(&app.mcp_url(), origin).await;
        assert_ne!(response.status(), 204, "{origin}");
        assert!(response.headers().get("access-control-allow-origin").is_none(), "{origin}");
        let call = post(&app.mcp_url(), None).header("origin", origin).body(INIT).send().await.unwrap();
        assert!(call.headers().get("access-control-allow-origin").is_none(), "{origin}");
        if origin != "http://localhost:5174" {
            // Loopback pages on any port pass rmcp's Origin check anyway (local development).
            assert_eq!(call.status(), 403, "{origin}");
        }
    }
    // Without --cors-origins nothing answers CORS, as before.
    let plain = spawn_app_with(|_| {}).await;
    let response = preflight(&plain.mcp_url(), HOST_PAGE).await;
    assert!(response.headers().get("access-control-allow-origin").is_none());
    let mut with_origin = HeaderMap::new();
    with_origin.insert("origin", HeaderValue::from_static(HOST_PAGE));
    let call = post(&plain.mcp_url(), None).headers(with_origin).body(INIT).send().await.unwrap();
    assert!(call.headers().get("access-control-allow-origin").is_none());
}

#[test]
fn a_wildcard_or_a_path_in_cors_origins_refuses_to_start_and_names_the_flag() {
    for bad in ["*", "https://host.example/app"] {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = giftgenius_server::config::Config::for_tests(dir.path());
        config.widget_html = Some(widget_path());
        config.cors_origins = vec![bad.to_string()];
        let built = runtime.block_on(giftgenius_server::startup::Application::build(config));
        let why = format!("{:#}", built.err().unwrap_or_else(|| panic!("{bad} was accepted")));
        assert!(why.contains("--cors-origins"), "{bad}: {why}");
    }
}

/// Formats JSON Schema 2020-12 defines (§7.3); anything else is a client's "unknown format".
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Every `format` in `schema` that JSON Schema does not define, with where it is.
fn unknown_formats(schema: &Value, at: &str, out: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("format", Value::String(format)) if !STANDARD_FORMATS.contains(&format.as_str()) => {
                        out.push(format!("{at}: {format}"))
                    }
                    // `properties` names are data, not keywords: a property called `format` is fine.
                    _ => unknown_formats(child, &format!("{at}/{key}"), out),
                }
            }
        }
        Value::Array(items) => {
            items.iter().enumerate().for_each(|(i, item)| unknown_formats(item, &format!("{at}/{i}"), out))
        }
        _ => {}
    }
}

#[tokio::test]
async fn every_published_schema_is_standard_json_schema_without_integer_formats() {
    let app = spawn_app_with(|_| {}).await;
    let client = app.client().await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut found = Vec::new();
    for tool in &tools {
        unknown_formats(&Value::Object((*tool.input_schema).clone()), &format!("{} input", tool.name), &mut found);
        let output = tool.output_schema.as_ref().unwrap_or_else(|| panic!("{} has no outputSchema", tool.name));
        unknown_formats(&Value::Object((**output).clone()), &format!("{} output", tool.name), &mut found);
    }
    assert!(found.is_empty(), "formats JSON Schema does not define: {found:#?}");
    // Unsigned integers keep their bound as a minimum: list_orders' limit, the delete report.
    let list_orders = tools.iter().find(|t| t.name == "list_orders").unwrap();
    assert_eq!(list_orders.input_schema["properties"]["limit"]["minimum"], 1);
    let delete = tools.iter().find(|t| t.name == "delete_my_data").unwrap();
    let output = delete.output_schema.as_ref().unwrap();
    let ok = output["oneOf"].as_array().unwrap().iter().find(|branch| branch["properties"]["ok"]["const"] == true);
    assert_eq!(ok.unwrap()["properties"]["drafts_deleted"], serde_json::json!({"minimum": 0, "type": "integer"}));
}
