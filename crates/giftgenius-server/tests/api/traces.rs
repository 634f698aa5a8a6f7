//! Traces (issue 27): the real server binary exports to a local OTLP/HTTP receiver; one
//! purchase's spans are decoded with the `opentelemetry-proto` types and checked as a collector
//! would see them: one server span per MCP request after the MCP conventions, continuing the
//! trace of `_meta.traceparent`; store spans and the provider charge's client span under it; the
//! sandbox provider's span under that; and no address, name, token or key anywhere in the export.
//! Logs carry the trace and span ids.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::support::{
    Exported, OtlpReceiver, TOKEN, commit_args, connect, meta_of, request, start_server_binary_env, with_recipient,
};

/// The trace the client's commit_order continues (`_meta.traceparent`), and its parent span.
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";
/// A trace for the commit that fails (a wrong confirmation token).
const FAILED_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const KEY: &str = "ik_trace_key_8d1f0c";

fn traceparent(trace: &str, parent: &str) -> String {
    format!("00-{trace}-{parent}-01")
}

/// A tools/call as `u1` whose `_meta` carries `traceparent`.
fn traced(tool: &'static str, arguments: Value, traceparent: &str) -> rmcp::model::CallToolRequestParams {
    let mut params = request(Some("u1"), tool, arguments);
    if let Some(meta) = params.meta.as_mut() {
        meta.0.0.insert("traceparent".into(), json!(traceparent));
        meta.0.0.insert("tracestate".into(), json!("gg=test"));
    }
    params
}

/// What one traced purchase left: the receiver, the log, the confirmation token.
struct Purchase {
    otlp: OtlpReceiver,
    log: String,
    token: String,
    _dir: tempfile::TempDir,
}

/// Starts the binary exporting to a fresh receiver (100 ms batch delay), prepares and commits
/// one order under [`TRACE`], commits once more with a wrong token under [`FAILED_TRACE`], and
/// waits (bounded) until the provider's span of the charge has arrived.
async fn traced_purchase(log_format: &str) -> Purchase {
    let otlp = OtlpReceiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let log_path = dir.path().join("server.log");
    let log_file = std::fs::File::create(&log_path).unwrap();
    let flags = ["--otlp-endpoint", &otlp.url, "--log-format", log_format];
    let envs = [("OTEL_BSP_SCHEDULE_DELAY", "100")];
    let server = start_server_binary_env(&db, &flags, &envs, "info", Stdio::from(log_file)).await;
    let client = connect(&server.mcp_url()).await.unwrap();

    let prepare = with_recipient(json!({"gift_id": "tr-004"}));
    let prepared =
        client.call_tool(traced("prepare_order", prepare, &traceparent(FAILED_TRACE, PARENT))).await.unwrap();
    let draft = prepared.structured_content.clone().unwrap()["draft"]["id"].as_str().unwrap().to_string();
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap().to_string();
    let committed = client
        .call_tool(traced("commit_order", commit_args(&draft, KEY, &token), &traceparent(TRACE, PARENT)))
        .await
        .unwrap();
    assert_eq!(structured(&committed)["ok"], true, "{committed:?}");
    let refused = client
        .call_tool(traced(
            "commit_order",
            commit_args(&draft, "ik_other", "ct_not-the-token"),
            &traceparent(FAILED_TRACE, "b7ad6b7169203331"),
        ))
        .await
        .unwrap();
    assert_eq!(refused.is_error, Some(true), "{refused:?}");

    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let spans = otlp.spans();
        let provider = spans.iter().any(|s| s.service == "giftgenius-sandbox-pay" && s.trace_id() == TRACE);
        let refused = spans.iter().any(|s| s.trace_id() == FAILED_TRACE && s.span.name == "tools/call commit_order");
        let paid = std::fs::read_to_string(&log_path).unwrap_or_default().contains("order paid");
        if provider && refused && paid {
            break;
        }
        assert!(Instant::now() < deadline, "the export never showed the purchase: {spans:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(client);
    drop(server);
    let log = std::fs::read_to_string(&log_path).unwrap();
    Purchase { otlp, log, token, _dir: dir }
}

fn structured(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap_or_default()
}

/// The chain of ancestors of `span` (nearest first) among `spans`.
fn ancestors<'a>(span: &Exported, by_id: &HashMap<String, &'a Exported>) -> Vec<&'a Exported> {
    let mut chain = Vec::new();
    let mut parent = span.parent_id();
    while let Some(next) = by_id.get(&parent) {
        chain.push(*next);
        parent = next.parent_id();
    }
    chain
}

fn one<'a>(spans: &'a [Exported], what: &str, test: impl Fn(&Exported) -> bool) -> &'a Exported {
    let found: Vec<_> = spans.iter().filter(|s| test(s)).collect();
    assert_eq!(found.len(), 1, "{what}: {found:#?}");
    found[0]
}

#[tokio::test]
async fn a_purchase_is_one_trace_from_the_tool_call_through_the_store_to_the_provider() {
    let purchase = traced_purchase("json").await;
    let spans = purchase.otlp.spans();
    let in_trace: Vec<Exported> = spans.iter().filter(|s| s.trace_id() == TRACE).cloned().collect();
    let by_id: HashMap<String, &Exported> = in_trace.iter().map(|s| (s.span_id(), s)).collect();

    // The server span: named and tagged after the MCP conventions, child of `_meta.traceparent`.
    let call = one(&in_trace, "the commit's server span", |s| s.span.name == "tools/call commit_order");
    assert_eq!(call.service, "giftgenius-server");
    assert_eq!(call.span.kind, 2, "SPAN_KIND_SERVER");
    assert_eq!(call.parent_id(), PARENT, "the parent comes from _meta.traceparent");
    assert_eq!(call.attr("mcp.method.name").as_deref(), Some("tools/call"));
    assert_eq!(call.attr("gen_ai.tool.name").as_deref(), Some("commit_order"));
    assert_eq!(call.attr("gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(call.attr("network.transport").as_deref(), Some("tcp"));
    assert!(call.attr("jsonrpc.request.id").is_some_and(|id| !id.is_empty()));
    assert!(call.attr("mcp.protocol.version").is_some_and(|v| v.starts_with("20")), "{call:#?}");
    assert!(call.attr("giftgenius.reference").is_some_and(|r| r.starts_with("req_")), "{call:#?}");
    assert_eq!(call.attr("error.type"), None, "a purchase that succeeded");

    // Store spans under the call, the charge's client span under it, the provider under that,
    // and the store again after the charge.
    let under_call = |s: &Exported| ancestors(s, &by_id).iter().any(|a| a.span_id() == call.span_id());
    let charge = one(&in_trace, "the charge's client span", |s| {
        s.span.name == "POST" && s.attr("url.full").is_some_and(|u| u.ends_with("/v1/charges"))
    });
    assert!(under_call(charge), "the charge is part of the call");
    assert_eq!(charge.span.kind, 3, "SPAN_KIND_CLIENT");
    assert_eq!(charge.attr("http.request.method").as_deref(), Some("POST"));
    assert_eq!(charge.attr("server.address").as_deref(), Some("127.0.0.1"));
    assert!(charge.attr("server.port").is_some_and(|p| p.parse::<u16>().is_ok()));
    assert_eq!(charge.attr("http.response.status_code").as_deref(), Some("200"));
    assert!(!charge.attr("url.full").unwrap().contains('?'));
    let provider = one(&in_trace, "the provider's span", |s| s.service == "giftgenius-sandbox-pay");
    assert_eq!(provider.parent_id(), charge.span_id(), "the provider continues the charge's traceparent");
    assert_eq!(provider.span.kind, 2, "SPAN_KIND_SERVER");
    let stores: Vec<&Exported> =
        in_trace.iter().filter(|s| s.span.name.starts_with("store.") && under_call(s)).collect();
    assert!(stores.iter().any(|s| s.span.end_time_unix_nano <= charge.span.start_time_unix_nano), "store before");
    assert!(stores.iter().any(|s| s.span.start_time_unix_nano >= charge.span.end_time_unix_nano), "store after");
    assert!(stores.iter().all(|s| s.attr("db.operation.name").is_some()));

    // The refused commit: its own trace, marked as a tool error.
    let refused =
        one(&spans, "the refused commit", |s| s.trace_id() == FAILED_TRACE && s.span.name == "tools/call commit_order");
    assert_eq!(refused.attr("error.type").as_deref(), Some("tool_error"));

    // Nothing the user typed or the widget holds is in the export.
    let everything = purchase.otlp.everything();
    for secret in ["Ana Silva", "Rua Augusta", "1100-053", "Lisboa", KEY, &purchase.token, "ct_not-the-token"] {
        assert!(!everything.contains(secret), "{secret} was exported");
    }
    // The JSON log line of the payment carries the trace.
    let paid = purchase.log.lines().find(|l| l.contains("order paid")).expect("the order paid line");
    assert!(paid.contains(&format!("\"trace_id\":\"{TRACE}\"")), "{paid}");
    print_tree(&in_trace);
}

#[tokio::test]
async fn text_logs_carry_the_trace_and_span_ids_of_the_call() {
    let purchase = traced_purchase("text").await;
    let call = purchase
        .otlp
        .spans()
        .into_iter()
        .find(|s| s.trace_id() == TRACE && s.span.name == "tools/call commit_order")
        .expect("the commit's server span");
    let paid = purchase.log.lines().find(|l| l.contains("order paid")).expect("the order paid line");
    assert!(paid.contains(&format!("trace_id={TRACE}")), "{paid}");
    assert!(paid.contains(&format!("span_id={}", call.span_id())), "{paid}");
}

/// The exported tree, printed for docs/configuration.md ("Traces") and the report (`--nocapture`).
fn print_tree(spans: &[Exported]) {
    fn walk(spans: &[Exported], parent: &str, depth: usize) {
        let mut children: Vec<&Exported> = spans.iter().filter(|s| s.parent_id() == parent).collect();
        children.sort_by_key(|s| s.span.start_time_unix_nano);
        for span in children {
            let keys = [
                "mcp.method.name",
                "gen_ai.tool.name",
                "http.response.status_code",
                "server.port",
                "db.operation.name",
            ];
            let attrs: Vec<String> = keys.iter().filter_map(|k| span.attr(k).map(|v| format!("{k}={v}"))).collect();
            println!("{}{} [{}] {}", "  ".repeat(depth), span.span.name, span.service, attrs.join(" "));
            walk(spans, &span.span_id(), depth + 1);
        }
    }
    walk(spans, PARENT, 0);
}

/// The traces of the ACP merchant (`/acp`, with `--acp-platforms`).
mod acp {
    use std::collections::HashMap;
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    use reqwest::StatusCode;
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, MetaObject, RequestMetaObject};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use serde_json::{Value, json};

    use super::{PARENT, ancestors, one, traceparent};
    use crate::acp::{KEY_ONE, address, total};
    use crate::acp_complete::{APPROVES, complete_body, token_from};
    use crate::support::{Exported, OtlpReceiver, SandboxPay, ServerProcess, start_server_binary_env};

    const CREATE_TRACE: &str = "11111111111111111111111111111111";
    const COMPLETE_TRACE: &str = "22222222222222222222222222222222";
    const MCP_TRACE: &str = "33333333333333333333333333333333";

    async fn post(server: &ServerProcess, path: &str, trace: &str, body: &Value) -> (StatusCode, Value) {
        let response = reqwest::Client::new()
            .post(format!("{}/acp/checkout_sessions{path}", server.url))
            .bearer_auth(KEY_ONE)
            .header("API-Version", "2026-04-17")
            .header("Idempotency-Key", format!("key-{trace}"))
            .header("Request-Id", format!("rq-{trace}"))
            .header("traceparent", traceparent(trace, PARENT))
            .json(body)
            .send()
            .await
            .expect("the server answers");
        (response.status(), response.json().await.expect("JSON"))
    }

    /// A session created and paid over REST, then read over the MCP binding, each under its
    /// own trace: every request is one server span continuing its caller's trace, with the store
    /// and the provider under it; the binding's initialize and tools/call are MCP spans like
    /// the app's; `/metrics` times the binding's calls apart from the app's. The server logs at
    /// `warn`: a quiet log still exports its traces.
    #[tokio::test]
    async fn each_acp_request_over_rest_or_the_mcp_binding_is_one_server_span_with_its_work_under_it() {
        let otlp = OtlpReceiver::start().await;
        let provider = SandboxPay::start();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("giftgenius.db");
        let platforms = dir.path().join("platforms.json");
        let list = json!([{"name": "one", "api_key": KEY_ONE, "webhook_url": "https://one.example/hooks",
            "webhook_secret": "whsec_one_0123456789abcdef0123456789"}]);
        std::fs::write(&platforms, list.to_string()).unwrap();
        let flags = [
            "--otlp-endpoint",
            &otlp.url,
            "--payments-url",
            &provider.url,
            "--payments-token-file",
            provider.token_file(),
            "--acp-platforms",
            &platforms.to_string_lossy(),
        ];
        let envs = [("OTEL_BSP_SCHEDULE_DELAY", "100")];
        let server = start_server_binary_env(&db, &flags, &envs, "warn", Stdio::null()).await;

        let create = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
            "fulfillment_details": {"email": "ana@example.com", "address": address("US", "CA", "94103")}});
        let (status, session) = post(&server, "", CREATE_TRACE, &create).await;
        assert_eq!((status, session["status"].as_str()), (StatusCode::CREATED, Some("ready_for_payment")), "{session}");
        let id = session["id"].as_str().unwrap().to_string();
        let token = token_from(&provider, &id, total(&session, "total").unwrap(), APPROVES).await;
        let (status, paid) = post(&server, &format!("/{id}/complete"), COMPLETE_TRACE, &complete_body(&token)).await;
        assert_eq!((status, paid["status"].as_str()), (StatusCode::OK, Some("completed")), "{paid}");

        let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/acp/mcp", server.url))
            .auth_header(KEY_ONE.to_string());
        let client = ().serve(StreamableHttpClientTransport::from_config(config)).await.expect("the binding connects");
        let mut read = CallToolRequestParams::new("get_checkout_session").with_arguments(
            json!({"meta": {"api_version": "2026-04-17", "request_id": "rq-mcp"}, "id": id})
                .as_object()
                .cloned()
                .unwrap(),
        );
        let mut meta = serde_json::Map::new();
        meta.insert("traceparent".into(), json!(traceparent(MCP_TRACE, PARENT)));
        read.meta = Some(RequestMetaObject(MetaObject(meta)));
        let result = client.call_tool(read).await.expect("get_checkout_session answers");
        assert_eq!(result.structured_content.unwrap()["status"], "completed");

        let deadline = Instant::now() + Duration::from_secs(20);
        let spans = loop {
            let spans = otlp.spans();
            let has = |trace: &str, name: &str| spans.iter().any(|s| s.trace_id() == trace && s.span.name == name);
            if has(CREATE_TRACE, "POST /acp/checkout_sessions")
                && has(COMPLETE_TRACE, "POST /acp/checkout_sessions/{id}/complete")
                && has(MCP_TRACE, "tools/call get_checkout_session")
                && spans.iter().any(|s| s.span.name == "initialize")
            {
                break spans;
            }
            assert!(Instant::now() < deadline, "the export never showed the ACP requests: {spans:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };

        let in_trace =
            |trace: &str| -> Vec<Exported> { spans.iter().filter(|s| s.trace_id() == trace).cloned().collect() };
        for (trace, route, code) in [
            (CREATE_TRACE, "/acp/checkout_sessions", "201"),
            (COMPLETE_TRACE, "/acp/checkout_sessions/{id}/complete", "200"),
        ] {
            let trace_spans = in_trace(trace);
            let by_id: HashMap<String, &Exported> = trace_spans.iter().map(|s| (s.span_id(), s)).collect();
            let request = one(&trace_spans, route, |s| s.span.name == format!("POST {route}"));
            assert_eq!(request.service, "giftgenius-server");
            assert_eq!(request.span.kind, 2, "SPAN_KIND_SERVER");
            assert_eq!(request.parent_id(), PARENT, "the parent comes from the traceparent header");
            assert_eq!(request.attr("http.request.method").as_deref(), Some("POST"));
            assert_eq!(request.attr("http.route").as_deref(), Some(route), "the template, never the session id");
            assert_eq!(request.attr("http.response.status_code").as_deref(), Some(code));
            assert_eq!(request.attr("giftgenius.reference"), Some(format!("rq-{trace}")));
            assert_eq!(request.attr("error.type"), None);
            let under = |s: &Exported| ancestors(s, &by_id).iter().any(|a| a.span_id() == request.span_id());
            assert!(
                trace_spans.iter().any(|s| s.span.name.starts_with("store.") && under(s)),
                "{route}: the store's spans hang under the request: {trace_spans:#?}"
            );
            assert!(
                trace_spans.iter().all(|s| s.span_id() == request.span_id() || under(s)),
                "{route}: one root per request: {trace_spans:#?}"
            );
        }
        let complete = in_trace(COMPLETE_TRACE);
        let charge = one(&complete, "the charge", |s| s.attr("url.full").is_some_and(|u| u.ends_with("/v1/charges")));
        assert_eq!(charge.span.kind, 3, "SPAN_KIND_CLIENT");

        let mcp = in_trace(MCP_TRACE);
        let call = one(&mcp, "the binding's call", |s| s.span.name == "tools/call get_checkout_session");
        assert_eq!(call.parent_id(), PARENT, "the parent comes from _meta.traceparent");
        assert_eq!(call.attr("gen_ai.tool.name").as_deref(), Some("get_checkout_session"));
        assert_eq!(call.attr("mcp.method.name").as_deref(), Some("tools/call"));
        assert_eq!(call.attr("giftgenius.reference").as_deref(), Some("rq-mcp"));
        let initialize = spans.iter().find(|s| s.span.name == "initialize").unwrap();
        assert_eq!(initialize.attr("mcp.method.name").as_deref(), Some("initialize"));
        assert!(initialize.attr("mcp.protocol.version").is_some_and(|v| v.starts_with("20")), "{initialize:#?}");

        // Neither the platform's key, the vault token nor the buyer is in the export.
        let everything = otlp.everything();
        for secret in [KEY_ONE, token.as_str(), "ana@example.com", "1 Main St", "Ana Lima", "94103"] {
            assert!(!everything.contains(secret), "{secret} was exported");
        }

        let metrics = reqwest::get(format!("{}/metrics", server.url)).await.unwrap().text().await.unwrap();
        for line in [
            r#"mcp_server_operation_duration_seconds_count{server="giftgenius-acp",method="initialize",outcome="ok"} 1"#,
            r#"mcp_server_operation_duration_seconds_count{server="giftgenius-acp",method="tools/call",tool="get_checkout_session",outcome="ok"} 1"#,
        ] {
            assert!(metrics.lines().any(|l| l == line), "{line} not in\n{metrics}");
        }
        drop(client);
        super::print_tree(&in_trace(COMPLETE_TRACE));
        super::print_tree(&in_trace(MCP_TRACE));
    }
}
