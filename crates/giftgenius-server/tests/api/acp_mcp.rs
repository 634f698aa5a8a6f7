//! The ACP MCP binding at `/acp/mcp` (issue 25 item 4) over real HTTP, spoken to by the
//! official MCP client with a platform's key (raw JSON-RPC where the client would not send the
//! request): the platform key at the HTTP layer, exactly the binding's tools with bundled
//! schemas, a session's life, one key space with REST, ACP errors as -32000 with the Error in
//! `data`, a malformed envelope as -32602, and the app's own `/mcp` untouched. Every session
//! in a result is checked against the JSON Schema of our type, every error `data` against ACP's
//! Error.

use giftgenius_types::acp::{AcpCheckoutSession, AcpError};
use reqwest::StatusCode;
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode, ErrorData};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use schemars::schema_for;
use serde_json::{Value, json};

use crate::acp::{KEY_ONE, KEY_TWO, Platform, VERSION, acp_app, address, create_body, json_of};
use crate::acp_complete::{APPROVES, complete_body, vault_token};
use crate::support::{INIT, TestApp, post};

const BINDING_TOOLS: [&str; 5] = [
    "cancel_checkout_session",
    "complete_checkout_session",
    "create_checkout_session",
    "get_checkout_session",
    "update_checkout_session",
];

fn endpoint(app: &TestApp) -> String {
    format!("{}/acp/mcp", app.local_url)
}

/// An MCP client of the binding that sends the platform's `key`.
async fn binding(app: &TestApp, key: &str) -> RunningService<RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(endpoint(app)).auth_header(key.to_string());
    ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("the binding's client connects")
}

fn meta(key: Option<&str>) -> Value {
    match key {
        Some(key) => json!({"api_version": VERSION, "idempotency_key": key}),
        None => json!({"api_version": VERSION}),
    }
}

/// `tools/call` of `tool` with `arguments`, as it came back.
async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: Value,
) -> Result<CallToolResult, ErrorData> {
    let Value::Object(arguments) = arguments else { panic!("arguments are an object") };
    match client.call_tool(CallToolRequestParams::new(tool).with_arguments(arguments)).await {
        Ok(result) => Ok(result),
        Err(ServiceError::McpError(error)) => Err(error),
        Err(other) => panic!("{tool}: no JSON-RPC answer: {other}"),
    }
}

/// A successful call's session (checked against our schema, and against its text content) and
/// its `_meta["giftgenius/acp"]`.
async fn session(client: &RunningService<RoleClient, ()>, tool: &'static str, arguments: Value) -> (Value, Value) {
    let result = call(client, tool, arguments).await.unwrap_or_else(|e| panic!("{tool} failed: {e:?}"));
    assert_eq!(result.is_error, Some(false));
    let session = result.structured_content.clone().expect("structuredContent");
    assert_valid::<AcpCheckoutSession>(&session);
    let texts: Vec<Value> = result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| serde_json::from_str(&t.text).expect("the text content is JSON"))
        .collect();
    assert_eq!(texts, std::slice::from_ref(&session), "one text content: the same JSON");
    let facts = result.meta.as_ref().and_then(|m| m.0.get("giftgenius/acp")).cloned().expect("_meta giftgenius/acp");
    (session, facts)
}

/// A failed call's ACP error: JSON-RPC -32000, `data` an ACP Error whose message is the error's.
async fn acp_error(client: &RunningService<RoleClient, ()>, tool: &'static str, arguments: Value) -> Value {
    let error = call(client, tool, arguments).await.expect_err("an ACP error");
    assert_eq!(error.code, ErrorCode(-32000), "{error:?}");
    let data = error.data.clone().expect("the ACP Error in data");
    assert_valid::<AcpError>(&data);
    assert_eq!(data["message"], error.message.as_ref());
    data
}

fn assert_valid<T: schemars::JsonSchema>(value: &Value) {
    let schema = serde_json::to_value(schema_for!(T)).expect("schema");
    let validator = jsonschema::draft202012::new(&schema).expect("our schema compiles");
    let errors: Vec<String> = validator.iter_errors(value).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "outside our schema: {errors:?}\n{value:#}");
}

/// Every `$ref` in `schema`, at any depth.
fn refs(schema: &Value, found: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                match (key.as_str(), value) {
                    ("$ref", Value::String(target)) => found.push(target.clone()),
                    _ => refs(value, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| refs(item, found)),
        _ => {}
    }
}

#[tokio::test]
async fn acp_mcp_refuses_a_missing_or_wrong_platform_key_before_json_rpc() {
    let app = acp_app().await;
    for bearer in [None, Some("not-a-platform-key")] {
        // Not even JSON: the key is checked before the body is read.
        for body in [INIT, "{not json"] {
            let mut request = post(&endpoint(&app), None).header("Request-Id", "trace-401").body(body);
            if let Some(bearer) = bearer {
                request = request.bearer_auth(bearer);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{bearer:?} {body}");
            assert_eq!(response.headers()["www-authenticate"], "Bearer");
            assert_eq!(response.headers()["request-id"], "trace-401");
            let error: Value = response.json().await.unwrap();
            assert_valid::<AcpError>(&error);
            assert_eq!(
                (error["type"].as_str(), error["code"].as_str()),
                (Some("invalid_request"), Some("unauthorized"))
            );
        }
    }
    let response = post(&endpoint(&app), None).bearer_auth(KEY_TWO).body(INIT).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "a platform's key opens the endpoint");
}

#[tokio::test]
async fn acp_mcp_keeps_the_guards_of_mcp_on_host_origin_and_body() {
    let app = acp_app().await;
    let with_key = || post(&endpoint(&app), None).bearer_auth(KEY_ONE);
    let foreign_host = with_key().header("host", "evil.example.com").body(INIT).send().await.unwrap();
    assert_eq!(foreign_host.status(), StatusCode::FORBIDDEN);
    let foreign_origin = with_key().header("origin", "https://evil.example.com").body(INIT).send().await.unwrap();
    assert_eq!(foreign_origin.status(), StatusCode::FORBIDDEN);
    let not_json = with_key().body("{not json").send().await.unwrap();
    assert_eq!(not_json.status(), StatusCode::BAD_REQUEST);
    let answer: Value = not_json.json().await.unwrap();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    let huge = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(80 * 1024));
    assert_eq!(with_key().body(huge).send().await.unwrap().status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn acp_mcp_lists_exactly_the_binding_tools_with_bundled_schemas() {
    let app = acp_app().await;
    let client = binding(&app, KEY_ONE).await;
    let info = client.peer_info().expect("initialized");
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("giftgenius-acp"));
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(names, BINDING_TOOLS);
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone());
        let mut found = Vec::new();
        refs(&schema, &mut found);
        assert!(found.iter().all(|r| r.starts_with("#/")), "{}: a $ref outside the schema: {found:?}", tool.name);
        // Every internal $ref resolves inside the schema itself.
        jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{}: {e}", tool.name));
        assert_eq!(schema["additionalProperties"], false, "{}: unknown arguments are refused", tool.name);
        let required: Vec<&str> = schema["required"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        let expected: &[&str] = match tool.name.as_ref() {
            "create_checkout_session" => &["meta", "payload"],
            "get_checkout_session" | "cancel_checkout_session" => &["meta", "id"],
            _ => &["meta", "id", "payload"],
        };
        let mut sorted = required.clone();
        sorted.sort();
        let mut expected = expected.to_vec();
        expected.sort();
        assert_eq!(sorted, expected, "{}", tool.name);
        assert!(tool.output_schema.is_some(), "{}", tool.name);
    }
    let create = tools.iter().find(|t| t.name == "create_checkout_session").unwrap();
    let schema = Value::Object((*create.input_schema).clone());
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    assert!(validator.is_valid(&json!({"meta": meta(Some("k")), "payload": create_body("hh-001")})));
    assert!(!validator.is_valid(&json!({"meta": {}, "payload": create_body("hh-001")})), "api_version is required");
    assert!(
        !validator.is_valid(&json!({"meta": meta(Some("k")), "payload": {"currency": "usd", "capabilities": {}}})),
        "the payload is the REST body's schema"
    );
    let hints = |name: &str| {
        let a = tools.iter().find(|t| t.name == name).unwrap().annotations.clone().expect("annotations");
        (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint)
    };
    assert_eq!(hints("get_checkout_session").0, Some(true));
    assert_eq!(hints("create_checkout_session"), (Some(false), Some(false), Some(true), Some(true)));
    assert_eq!(hints("update_checkout_session").2, Some(true));
    assert_eq!(hints("cancel_checkout_session").1, Some(true));
    assert_eq!(hints("complete_checkout_session"), (Some(false), Some(true), Some(true), Some(true)));

    // The app's own /mcp keeps its own tools: none of the binding's but its create_checkout_session.
    let app_client = app.client().await;
    let app_tools = app_client.list_all_tools().await.unwrap();
    let app_names: Vec<&str> = app_tools.iter().map(|t| t.name.as_ref()).collect();
    for name in
        ["get_checkout_session", "update_checkout_session", "complete_checkout_session", "cancel_checkout_session"]
    {
        assert!(!app_names.contains(&name), "{name} on /mcp: {app_names:?}");
    }
    let ours = app_tools.iter().find(|t| t.name == "create_checkout_session").expect("the app's own tool");
    let properties = ours.input_schema["properties"].as_object().expect("properties");
    assert!(!properties.contains_key("meta") && !properties.contains_key("payload"), "{properties:?}");
}

#[tokio::test]
async fn acp_mcp_session_goes_from_create_to_update_get_and_cancel() {
    let app = acp_app().await;
    let client = binding(&app, KEY_ONE).await;
    let create = json!({
        "meta": {"api_version": VERSION, "idempotency_key": "mcp-create-1", "request_id": "trace-1",
                 "user_agent": "AgentShop/1.0", "accept_language": "en-US", "signature": "c2ln",
                 "timestamp": "2026-06-01T10:00:00Z", "a_future_header": "ignored"},
        "payload": {"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {}, "order_notes": "Happy birthday!"}
    });
    let (created, facts) = session(&client, "create_checkout_session", create).await;
    assert_eq!(facts, json!({"http_status": 201, "idempotent_replayed": false, "request_id": "trace-1"}));
    assert_eq!(created["status"], "not_ready_for_payment");
    let id = created["id"].as_str().expect("an id").to_string();

    let update = json!({"meta": meta(Some("mcp-address-1")), "id": id,
        "payload": {"fulfillment_details": {"email": "ana@example.com", "address": address("US", "CA", "94103")}}});
    let (ready, facts) = session(&client, "update_checkout_session", update).await;
    assert_eq!(ready["status"], "ready_for_payment", "{ready}");
    assert_eq!(ready["selected_fulfillment_options"][0]["option_id"], "fo_standard");
    assert_eq!((facts["http_status"].as_u64(), facts["idempotent_replayed"].as_bool()), (Some(200), Some(false)));
    assert!(facts["request_id"].as_str().unwrap().starts_with("req_"), "made up when absent: {facts}");

    let (got, facts) = session(&client, "get_checkout_session", json!({"meta": meta(None), "id": id})).await;
    assert_eq!(got, ready, "get shows the session as the update left it");
    assert_eq!(facts["http_status"], 200);

    // The same session over REST: one service behind both transports.
    let (status, rest) = json_of(Platform::new(&app, KEY_ONE).get(&id).await).await;
    assert_eq!((status, &rest), (StatusCode::OK, &got));

    // Cancel takes no payload (never `payload: null` demanded) and no key.
    let (canceled, facts) = session(&client, "cancel_checkout_session", json!({"meta": meta(None), "id": id})).await;
    assert_eq!(canceled["status"], "canceled");
    assert_eq!(facts["http_status"], 200);
    let (again, _) = session(&client, "get_checkout_session", json!({"meta": meta(None), "id": id})).await;
    assert_eq!(again["status"], "canceled", "a keyless cancel is written");

    let data =
        acp_error(&client, "cancel_checkout_session", json!({"meta": meta(None), "id": id, "payload": {}})).await;
    assert_eq!(data["code"], "session_not_cancelable");
    let late = json!({"meta": meta(Some("late")), "id": id, "payload": {"order_notes": null}});
    assert_eq!(acp_error(&client, "update_checkout_session", late).await["code"], "session_canceled");
}

#[tokio::test]
async fn acp_mcp_meta_accept_language_picks_the_session_language() {
    let app = acp_app().await;
    let client = binding(&app, KEY_ONE).await;
    let create = json!({
        "meta": {"api_version": VERSION, "idempotency_key": "mcp-pt", "accept_language": "pt-BR,pt;q=0.9"},
        "payload": {"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {}}
    });
    let (created, _) = session(&client, "create_checkout_session", create).await;
    let texts: Vec<&str> =
        created["totals"].as_array().unwrap().iter().filter_map(|t| t["display_text"].as_str()).collect();
    assert_eq!(texts, ["Itens", "Subtotal", "Total"]);
    assert_eq!(created["messages"][0]["code"], "missing");
    assert_eq!(created["messages"][0]["content"], "Falta um endereço de entrega.");
}

#[tokio::test]
async fn acp_rest_and_mcp_share_one_key_space_per_platform() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let client = binding(&app, KEY_ONE).await;
    let body = create_body("hh-001");
    let (status, over_rest) = json_of(one.post("", "shared-key", &body).await).await;
    assert_eq!(status, StatusCode::CREATED);

    // The same key and body over MCP: REST's answer again, with its status.
    let arguments = json!({"meta": {"api_version": VERSION, "idempotency_key": "shared-key", "request_id": "again"},
                           "payload": body});
    let (replayed, facts) = session(&client, "create_checkout_session", arguments).await;
    assert_eq!(replayed, over_rest);
    assert_eq!(facts, json!({"http_status": 201, "idempotent_replayed": true, "request_id": "again"}));

    // The same key with another body: the conflict REST would answer.
    let other = json!({"meta": meta(Some("shared-key")), "payload": create_body("hh-002")});
    let data = acp_error(&client, "create_checkout_session", other).await;
    assert_eq!((data["type"].as_str(), data["code"].as_str()), (Some("invalid_request"), Some("idempotency_conflict")));

    // And the other way: an update keyed over MCP replays over REST.
    let id = over_rest["id"].as_str().unwrap();
    let change = json!({"order_notes": "See you soon"});
    let (updated, _) =
        session(&client, "update_checkout_session", json!({"meta": meta(Some("upd-1")), "id": id, "payload": change}))
            .await;
    let response = one.post(&format!("/{id}"), "upd-1", &change).await;
    assert_eq!(response.headers().get("idempotent-replayed").map(|v| v.as_bytes()), Some(&b"true"[..]));
    let (status, over_rest) = json_of(response).await;
    assert_eq!((status, over_rest), (StatusCode::OK, updated));

    // Another platform's key space (and sessions) are its own.
    let two = binding(&app, KEY_TWO).await;
    let arguments = json!({"meta": meta(Some("shared-key")), "payload": create_body("hh-002")});
    let (theirs, facts) = session(&two, "create_checkout_session", arguments).await;
    assert_ne!(theirs["id"], replayed["id"]);
    assert_eq!(facts["idempotent_replayed"], false);
    let data = acp_error(&two, "get_checkout_session", json!({"meta": meta(None), "id": id})).await;
    assert_eq!(data["code"], "session_not_found");
}

#[tokio::test]
async fn acp_mcp_answers_acp_errors_as_json_rpc_server_errors() {
    let app = acp_app().await;
    let client = binding(&app, KEY_ONE).await;
    let payload = create_body("hh-001");

    let data = acp_error(&client, "create_checkout_session", json!({"meta": meta(None), "payload": payload})).await;
    assert_eq!(data["code"], "idempotency_key_required");
    assert!(data["message"].as_str().unwrap().contains("meta.idempotency_key"), "{data}");

    let bad_key = json!({"meta": {"api_version": VERSION, "idempotency_key": ""}, "payload": payload});
    assert_eq!(acp_error(&client, "create_checkout_session", bad_key).await["code"], "invalid");

    let old = json!({"meta": {"api_version": "2025-09-29", "idempotency_key": "v"}, "payload": payload});
    let data = acp_error(&client, "create_checkout_session", old).await;
    assert_eq!(data["code"], "unsupported_api_version");
    assert_eq!(data["supported_versions"], json!([VERSION]));
    let none = json!({"meta": {"idempotency_key": "v"}, "payload": payload});
    let data = acp_error(&client, "create_checkout_session", none).await;
    assert_eq!((data["code"].as_str(), &data["supported_versions"]), (Some("missing_api_version"), &json!([VERSION])));

    let data = acp_error(&client, "get_checkout_session", json!({"meta": meta(None), "id": "acs_nobody"})).await;
    assert_eq!((data["code"].as_str(), data["param"].as_str()), (Some("session_not_found"), Some("$.id")));

    // What is inside payload is the REST body, with REST's JSONPath (never `$.payload.…`).
    let missing =
        json!({"meta": meta(Some("no-currency")), "payload": {"line_items": [{"id": "hh-001"}], "capabilities": {}}});
    let data = acp_error(&client, "create_checkout_session", missing).await;
    assert_eq!((data["code"].as_str(), data["param"].as_str()), (Some("missing"), Some("$.currency")));
    let unknown = json!({"meta": meta(Some("unknown-item")), "payload": create_body("no-such-gift")});
    let data = acp_error(&client, "create_checkout_session", unknown).await;
    assert_eq!((data["code"].as_str(), data["param"].as_str()), (Some("invalid"), Some("$.line_items[0].id")));
}

#[tokio::test]
async fn acp_mcp_refuses_a_malformed_envelope_as_invalid_params() {
    let app = acp_app().await;
    let client = binding(&app, KEY_ONE).await;
    let payload = create_body("hh-001");
    let cases: [(&'static str, Value); 8] = [
        ("create_checkout_session", json!({"payload": payload})),
        ("create_checkout_session", json!({"meta": VERSION, "payload": payload})),
        ("create_checkout_session", json!({"meta": meta(Some("k")), "payload": "{}"})),
        ("create_checkout_session", json!({"meta": meta(Some("k"))})),
        ("create_checkout_session", json!({"meta": meta(Some("k")), "payload": payload, "id": "acs_1"})),
        ("get_checkout_session", json!({"meta": meta(None)})),
        ("get_checkout_session", json!({"meta": meta(None), "id": 42})),
        ("update_checkout_session", json!({"meta": {"api_version": 20260417}, "id": "acs_1", "payload": {}})),
    ];
    for (tool, arguments) in cases {
        let error = call(&client, tool, arguments.clone()).await.expect_err("invalid params");
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{tool} {arguments}: {error:?}");
    }
    let error = call(&client, "complete_order_please", json!({})).await.expect_err("unknown tool");
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    // Nothing of the refused calls was created or stored: the key is still free.
    let (_, facts) =
        session(&client, "create_checkout_session", json!({"meta": meta(Some("k")), "payload": payload})).await;
    assert_eq!(facts["idempotent_replayed"], false);
}

#[tokio::test]
async fn without_platforms_there_is_no_acp_mcp() {
    let app = crate::support::spawn_app().await;
    let response =
        post(&format!("{}/acp/mcp", app.local_url), None).bearer_auth(KEY_ONE).body(INIT).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn acp_mcp_pays_a_session_once_with_a_delegated_token() {
    let app = acp_app().await;
    let client = binding(&app, KEY_ONE).await;
    let create = json!({"meta": meta(Some("mcp-pay-create")), "payload": {"line_items": [{"id": "hh-001"}],
        "currency": "usd", "capabilities": {},
        "fulfillment_details": {"email": "ana@example.com", "address": address("US", "CA", "94103")}}});
    let (ready, _) = session(&client, "create_checkout_session", create).await;
    assert_eq!(ready["status"], "ready_for_payment", "{ready}");
    let id = ready["id"].as_str().unwrap().to_string();
    let token = vault_token(&app, &id, 6800, APPROVES).await;
    let payload = complete_body(&token);

    // Money never moves without a key.
    let data =
        acp_error(&client, "complete_checkout_session", json!({"meta": meta(None), "id": id, "payload": payload}))
            .await;
    assert_eq!(data["code"], "idempotency_key_required");
    assert_eq!(app.provider.charges().await, 0);

    let complete = json!({"meta": meta(Some("mcp-pay")), "id": id, "payload": payload});
    let (done, facts) = session(&client, "complete_checkout_session", complete.clone()).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(facts["http_status"], 200);
    let order = done["order"]["id"].clone();
    assert!(order.as_str().is_some_and(|o| o.starts_with("ord_")), "{done}");
    // The same key replays over MCP and over REST; the ledger holds one charge.
    let (again, facts) = session(&client, "complete_checkout_session", complete).await;
    assert_eq!((&again["order"]["id"], facts["idempotent_replayed"].as_bool()), (&order, Some(true)));
    let rest = Platform::new(&app, KEY_ONE).post(&format!("/{id}/complete"), "mcp-pay", &payload).await;
    assert_eq!(rest.headers().get("idempotent-replayed").map(|v| v.to_str().unwrap()), Some("true"));
    let (_, replayed) = json_of(rest).await;
    assert_eq!(replayed["order"]["id"], order);
    assert_eq!(app.provider.charges().await, 1);
}
