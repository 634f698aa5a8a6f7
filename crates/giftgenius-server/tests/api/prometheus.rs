//! A real Prometheus scrapes a real server: a purchase, a declined purchase and a validation
//! error are driven over MCP, then Prometheus' HTTP API is asked for the series they leave, and
//! for the alert rules of `deploy/prometheus/alerts.yml`, loaded and evaluated. The scrape
//! goes through `--metrics-token-file`, as a deployment's would.

use std::path::Path;

use serde_json::json;

use crate::support::{Prometheus, Target, call, call_as, commit_args, prepare, spawn_app_with};

fn alert_rules() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/prometheus/alerts.yml")
}

#[tokio::test]
async fn a_real_prometheus_scrapes_a_purchase_a_decline_and_a_validation_error() {
    let token = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(token.path(), "scrape-token-0123456789abcdef0123456789\n").unwrap();
    let token_file = token.path().to_path_buf();
    let app = spawn_app_with(|c| {
        c.metrics_token_file = Some(token_file);
        c.payments_timeout_ms = 2_000;
    })
    .await;
    let address = app.local_url.trim_start_matches("http://").to_string();
    let rules = alert_rules();
    let prometheus =
        Prometheus::start(Target { address: &address, token_file: Some(token.path()) }, &[rules.as_path()]).await;

    // A purchase, replayed once (the widget's retry), a purchase the card declines, and
    // suggest_gifts with an age no one has.
    let client = app.client().await;
    let (draft, confirmation) = prepare(&app, "buyer", "tr-001").await;
    let (_, paid) = call_as(&client, "buyer", "commit_order", commit_args(&draft, "ik_paid", &confirmation)).await;
    assert_eq!(paid["order"]["status"], "paid", "{paid}");
    let (_, replayed) = call_as(&client, "buyer", "commit_order", commit_args(&draft, "ik_paid", &confirmation)).await;
    assert_eq!(replayed, paid);
    app.provider.set_faults("decline*1").await;
    let (draft, confirmation) = prepare(&app, "buyer", "tr-002").await;
    let (_, declined) =
        call_as(&client, "buyer", "commit_order", commit_args(&draft, "ik_declined", &confirmation)).await;
    assert_eq!(declined["error"]["code"], "PAYMENT_DECLINED", "{declined}");
    let (_, invalid) = call(&client, "suggest_gifts", json!({"relationship_type": "friend", "age": 500})).await;
    assert_eq!(invalid["error"]["code"], "VALIDATION_ERROR", "{invalid}");

    let gifts = app.state.catalog.current().len() as f64;
    let expected: &[(&str, f64)] = &[
        (r#"up{job="giftgenius"}"#, 1.0),
        (r#"giftgenius_charges_total{outcome="succeeded"}"#, 1.0),
        (r#"giftgenius_charges_total{outcome="declined"}"#, 1.0),
        (r#"giftgenius_charges_total{outcome="unavailable"}"#, 0.0),
        (r#"mcp_server_operation_duration_seconds_count{method="tools/call",tool="commit_order",outcome="ok"}"#, 2.0),
        (
            r#"mcp_server_operation_duration_seconds_count{method="tools/call",tool="commit_order",outcome="tool_error"}"#,
            1.0,
        ),
        (
            r#"mcp_server_operation_duration_seconds_count{method="tools/call",tool="suggest_gifts",outcome="tool_error"}"#,
            1.0,
        ),
        (r#"mcp_server_operation_duration_seconds_count{method="tools/call",tool="prepare_order",outcome="ok"}"#, 2.0),
        (r#"giftgenius_tool_errors_total{tool="commit_order",code="PAYMENT_DECLINED"}"#, 1.0),
        (r#"giftgenius_tool_errors_total{tool="suggest_gifts",code="VALIDATION_ERROR"}"#, 1.0),
        (r#"giftgenius_idempotency_keys_total{tool="commit_order",outcome="new"}"#, 2.0),
        (r#"giftgenius_idempotency_keys_total{tool="commit_order",outcome="replayed"}"#, 1.0),
        (r#"giftgenius_pending_orders"#, 0.0),
        (r#"giftgenius_pending_order_oldest_age_seconds"#, 0.0),
        (r#"giftgenius_catalog_gifts"#, gifts),
        (r#"giftgenius_catalog_reload_failures_total"#, 0.0),
        (r#"giftgenius_auth_refusals_total{endpoint="metrics"}"#, f64::NAN),
    ];
    for (query, want) in expected {
        if want.is_nan() {
            // No refusal ever happened: the series does not exist (its scrape always had the token).
            let data = prometheus.api("query", query).await.expect("the query runs");
            assert_eq!(data["result"], json!([]), "{query}");
            eprintln!("prometheus: {query} → (no series)");
            continue;
        }
        let seen = prometheus.until(query, |v| v == *want).await;
        eprintln!("prometheus: {query} → {seen}");
    }
    // The p99 of every commit since the start (the cumulative buckets: a rate over a window would
    // be empty once the calls are older than it).
    let p99 = r#"histogram_quantile(0.99, sum by (le) (mcp_server_operation_duration_seconds_bucket{method="tools/call",tool="commit_order"}))"#;
    let seen = prometheus.until(p99, |v| v.is_finite() && v > 0.0 && v <= 300.0).await;
    eprintln!("prometheus: {p99} → {seen}");
    let open = prometheus.until("giftgenius_open_connections", |v| v >= 1.0).await;
    eprintln!("prometheus: giftgenius_open_connections → {open}");

    // The alert rules loaded, evaluate without error, and none fires on this healthy server.
    for _ in 0..600 {
        let groups = prometheus.api("rules", "").await.expect("the rules API answers");
        let rules: Vec<_> = groups["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
            .collect();
        assert_eq!(rules.len(), 9, "{groups}");
        if rules
            .iter()
            .all(|r| r["health"] == "ok" && r["lastEvaluation"].as_str().is_some_and(|t| !t.starts_with("0001")))
        {
            let firing: Vec<_> = rules.iter().filter(|r| r["state"] != "inactive").map(|r| r["name"].clone()).collect();
            assert!(firing.is_empty(), "alerts on a healthy server: {firing:?}");
            eprintln!("prometheus: /api/v1/rules → {} rules, all health ok, all inactive", rules.len());
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the alert rules were never all evaluated without error");
}
