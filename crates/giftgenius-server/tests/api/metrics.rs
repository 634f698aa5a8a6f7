//! `/metrics` seen from outside: reached by address like the probes (any `Host`, never
//! rate-limited), its bearer token enforced when one is configured, and nothing in it that
//! names a person, an order, a call or anything a client typed: every label value is one of a
//! closed set written here, from the metric table in docs/metrics.md.

use std::collections::BTreeSet;

use serde_json::json;

use crate::support::{call, call_as, commit_args, prepare, spawn_app, spawn_app_with, text_of, with_recipient};

/// Every label value `/metrics` may show, whatever the traffic (bucket bounds aside).
const BOUNDED_VALUES: &[&str] = &[
    // server
    "giftgenius",
    "giftgenius-acp",
    // method
    "initialize",
    "ping",
    "tools/call",
    "tools/list",
    "resources/list",
    "resources/read",
    "server/discover",
    // tool: ours, and the ACP operations' key scopes
    "suggest_gifts",
    "prepare_order",
    "commit_order",
    "reopen_order_draft",
    "create_checkout_session",
    "get_order",
    "list_orders",
    "cancel_order",
    "delete_my_data",
    "acp POST /acp/checkout_sessions",
    "acp POST /acp/checkout_sessions/{id}",
    "acp POST /acp/checkout_sessions/{id}/complete",
    "acp POST /acp/checkout_sessions/{id}/cancel",
    // outcome of an operation, a charge or refund, a key claim, a reconciled order
    "ok",
    "tool_error",
    "error",
    "succeeded",
    "declined",
    "refused",
    "unavailable",
    "mismatch",
    "authentication_required",
    "new",
    "replayed",
    "taken_over",
    "in_progress",
    "reused",
    "paid",
    "abandoned",
    "in_flight",
    "unreachable",
    "conflict",
    "refunded",
    // result of a reconcile pass
    "failed",
    // endpoint and reason of an auth refusal
    "mcp",
    "acp",
    "metrics",
    "invalid_token",
    "invalid_request",
    "insufficient_scope",
];

/// The (name, label, value) of every sample line of a text exposition.
fn labels(exposition: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for line in exposition.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let Some((name, rest)) = line.split_once('{') else { continue };
        let labels = rest.rsplit_once('}').map(|(labels, _)| labels).unwrap_or_default();
        for pair in labels.split("\",").filter(|p| !p.is_empty()) {
            let (label, value) = pair.split_once("=\"").unwrap_or_else(|| panic!("a label without a value: {line}"));
            found.push((name.to_string(), label.to_string(), value.trim_end_matches('"').to_string()));
        }
    }
    found
}

async fn scrape(url: &str, host: Option<&str>) -> (u16, String) {
    let mut request = reqwest::Client::new().get(format!("{url}/metrics"));
    if let Some(host) = host {
        request = request.header("host", host);
    }
    let response = request.send().await.expect("/metrics answers");
    (response.status().as_u16(), response.text().await.unwrap_or_default())
}

/// The value of the sample line starting with `series` (name and labels as written).
fn sample(exposition: &str, series: &str) -> Option<f64> {
    exposition.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn metrics_answer_any_host_name_and_are_never_rate_limited() {
    let app = spawn_app_with(|c| c.rate_limit_per_minute = 2).await;
    for _ in 0..5 {
        for host in ["attacker.example:8000", "127.0.0.1", "10.1.2.3:9090"] {
            let (status, text) = scrape(&app.local_url, Some(host)).await;
            assert_eq!(status, 200, "{host}");
            assert!(text.contains("# TYPE giftgenius_charges_total counter"), "{text}");
        }
    }
    let mut statuses = Vec::new();
    for _ in 0..4 {
        statuses.push(reqwest::get(format!("{}/privacy", app.local_url)).await.unwrap().status().as_u16());
    }
    let refused = statuses.iter().filter(|s| **s == 429).count();
    assert!(refused > 0, "the limit still holds elsewhere: {statuses:?}");
    let (_, text) = scrape(&app.local_url, None).await;
    assert_eq!(sample(&text, "giftgenius_rate_limited_total"), Some(refused as f64), "{text}");
}

#[tokio::test]
async fn metrics_show_counts_and_never_an_id_a_subject_or_what_a_client_typed() {
    let app = spawn_app().await;
    let subject = "subject-marker-7f3a@example.com";
    let (draft, token) = prepare(&app, subject, "tr-001").await;
    let client = app.client().await;
    let key = "ik_key-marker-51c9";
    let (_, paid) = call_as(&client, subject, "commit_order", commit_args(&draft, key, &token)).await;
    assert_eq!(paid["ok"], true, "{paid}");
    let order = paid["order"]["id"].as_str().expect("order id").to_string();
    let typed = "interest-marker-\"quoted\"";
    let (bad, refused) = call(&client, "suggest_gifts", json!({"relationship_type": typed, "age": 500})).await;
    assert_eq!(refused["error"]["code"], "VALIDATION_ERROR", "{}", text_of(&bad));
    let reference = refused["error"]["reference"].as_str().expect("reference").to_string();
    let (_, unknown) = call(&client, "get_order", json!({"order_id": "ord_marker_0000"})).await;
    assert_eq!(unknown["ok"], false);
    let _ = call_as(&client, subject, "prepare_order", with_recipient(json!({"gift_id": "no-such-gift-marker"}))).await;

    let (status, text) = scrape(&app.local_url, None).await;
    assert_eq!(status, 200);
    for secret in [
        subject,
        "subject-marker",
        key,
        "key-marker",
        &order,
        &draft,
        &token,
        typed,
        "interest-marker",
        &reference,
        "ord_marker",
        "no-such-gift",
        "tr-001",
    ] {
        assert!(!text.contains(secret), "/metrics shows {secret:?}:\n{text}");
    }
    let allowed: BTreeSet<&str> = BOUNDED_VALUES.iter().copied().collect();
    let codes: BTreeSet<&str> = giftgenius_types::ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    for (name, label, value) in labels(&text) {
        let bounded = match label.as_str() {
            "le" => value == "+Inf" || value.parse::<f64>().is_ok(),
            "code" => codes.contains(value.as_str()),
            _ => allowed.contains(value.as_str()),
        };
        assert!(bounded, "{name}{{{label}=\"{value}\"}} is not one of the closed set");
    }
    // And the counts are there.
    let series = r#"mcp_server_operation_duration_seconds_count{server="giftgenius",method="tools/call",tool="commit_order",outcome="ok"}"#;
    assert_eq!(sample(&text, series), Some(1.0), "{text}");
    assert_eq!(sample(&text, r#"giftgenius_charges_total{outcome="succeeded"}"#), Some(1.0), "{text}");
    let validation = r#"giftgenius_tool_errors_total{tool="suggest_gifts",code="VALIDATION_ERROR"}"#;
    assert_eq!(sample(&text, validation), Some(1.0), "{text}");
    assert_eq!(sample(&text, r#"giftgenius_idempotency_keys_total{tool="commit_order",outcome="new"}"#), Some(1.0));
    assert_eq!(sample(&text, "giftgenius_pending_orders"), Some(0.0), "{text}");
    assert!(sample(&text, "giftgenius_open_connections").is_some_and(|n| n >= 1.0), "this scrape's own: {text}");
    let gifts = app.state.catalog.current().len() as f64;
    assert_eq!(sample(&text, "giftgenius_catalog_gifts"), Some(gifts));
    // No receiver is configured here, so no order announced itself: the shared outbox is empty.
    assert_eq!(sample(&text, "giftgenius_outbox_backlog"), Some(0.0), "{text}");
}

#[tokio::test]
async fn metrics_ask_for_the_token_when_one_is_configured() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let token = "metrics-token-0123456789abcdef0123456789";
    std::fs::write(file.path(), format!("{token}\n")).unwrap();
    let path = file.path().to_path_buf();
    let app = spawn_app_with(move |c| c.metrics_token_file = Some(path)).await;
    let url = format!("{}/metrics", app.local_url);
    let http = reqwest::Client::new();
    let none = http.get(&url).send().await.unwrap();
    assert_eq!(none.status().as_u16(), 401);
    assert_eq!(none.headers()["www-authenticate"], r#"Bearer realm="metrics""#);
    for wrong in ["Bearer metrics-token-0123456789abcdef012345678X", "Bearer ", "Basic bWV0cmljczp4", token] {
        let refused = http.get(&url).header("authorization", wrong).send().await.unwrap();
        assert_eq!(refused.status().as_u16(), 401, "{wrong}");
    }
    let answered = http.get(&url).bearer_auth(token).send().await.unwrap();
    assert_eq!(answered.status().as_u16(), 200);
    let text = answered.text().await.unwrap();
    assert!(!text.contains(token));
    let refusals = |reason: &str| {
        sample(&text, &format!(r#"giftgenius_auth_refusals_total{{endpoint="metrics",reason="{reason}"}}"#))
    };
    assert_eq!(refusals("invalid_request"), Some(1.0), "{text}");
    assert_eq!(refusals("invalid_token"), Some(4.0), "{text}");
}

/// A charge whose answer was lost leaves an order pending: `/metrics` shows it and its age
/// (by the app's clock), the charge as `unavailable`, and after a reconcile pass the order paid
/// and nothing pending.
#[tokio::test]
async fn a_pending_order_shows_with_its_age_until_the_reconciler_settles_it() {
    let app = crate::checkout::app_with_faults("timeout*1").await;
    let (draft, token) = prepare(&app, "u1", "tr-004").await;
    let client = app.client().await;
    let (_, lost) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_lost", &token)).await;
    assert_eq!(lost["error"]["code"], "PAYMENT_PROVIDER_UNAVAILABLE", "{lost}");
    app.clock.advance(std::time::Duration::from_secs(11 * 60));

    let (_, text) = scrape(&app.local_url, None).await;
    assert_eq!(sample(&text, "giftgenius_pending_orders"), Some(1.0), "{text}");
    assert_eq!(sample(&text, "giftgenius_pending_order_oldest_age_seconds"), Some(660.0), "{text}");
    assert_eq!(sample(&text, r#"giftgenius_charges_total{outcome="unavailable"}"#), Some(1.0), "{text}");
    let code = r#"giftgenius_tool_errors_total{tool="commit_order",code="PAYMENT_PROVIDER_UNAVAILABLE"}"#;
    assert_eq!(sample(&text, code), Some(1.0), "{text}");

    let report = app.state.reconciler.run_once().await.expect("a reconcile pass");
    assert_eq!(report.paid, 1);
    let (_, text) = scrape(&app.local_url, None).await;
    assert_eq!(sample(&text, "giftgenius_pending_orders"), Some(0.0), "{text}");
    assert_eq!(sample(&text, "giftgenius_pending_order_oldest_age_seconds"), Some(0.0), "{text}");
    assert_eq!(sample(&text, r#"giftgenius_reconcile_orders_total{outcome="paid"}"#), Some(1.0), "{text}");
    assert!(sample(&text, r#"giftgenius_reconcile_passes_total{result="ok"}"#).is_some_and(|n| n >= 1.0), "{text}");
    assert!(sample(&text, "giftgenius_reconcile_last_success_timestamp_seconds").is_some_and(|t| t > 1.7e9));
}
