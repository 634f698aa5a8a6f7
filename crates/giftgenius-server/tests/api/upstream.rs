//! suggest_gifts against real (local) upstream catalogs that fail in every way we know: an
//! error status, a hang, garbage, slowness, a port nobody listens on, and a good answer with
//! hostile entries; next to the built-in merchants (a partial result) or alone (the call fails).
//! Also how the catalog URLs are given on the command line, and how often catalogs are asked
//! (answers kept for a TTL, a cap on fetches at once).

use giftgenius_types::{Envelope, SuggestGiftsData};
use serde_json::{Value, json};

use crate::support::{TestApp, Upstream, assert_no_leak, call, spawn_app_with, text_of, unreachable_catalog};

const JUGGLING: fn() -> Value = || json!({"relationship_type": "friend", "interests": ["Juggling"]});

async fn app_with(
    upstream: &Upstream,
    paths: &[&str],
    builtin: bool,
    source_timeout_ms: u64,
    deadline_ms: u64,
) -> TestApp {
    let urls: Vec<String> = paths.iter().map(|p| upstream.url(p)).collect();
    spawn_app_with(move |c| {
        c.catalog_urls = urls;
        c.builtin_catalog = builtin;
        c.source_timeout_ms = source_timeout_ms;
        c.suggest_deadline_ms = deadline_ms;
    })
    .await
}

/// What no text the model or the widget reads may carry besides the usual leaks: where the
/// upstreams live and how they failed inside.
const UPSTREAM_DETAILS: &[&str] = &[
    "127.0.0.1",
    "http://",
    "/unavailable",
    "/hang",
    "/garbage",
    "catalog.json",
    "expected",
    "line 1",
    "maintenance",
    "503",
    "reqwest",
    "serde",
];

fn failed_sources(structured: &Value) -> Vec<(String, String, String)> {
    structured["partial"]["failed_sources"]
        .as_array()
        .expect("partial.failed_sources")
        .iter()
        .map(|f| {
            (
                f["source"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn ids(structured: &Value) -> Vec<String> {
    structured["gifts"].as_array().expect("gifts").iter().map(|g| g["id"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn a_catalog_answering_503_leaves_the_other_sources_results_and_names_it_as_unavailable() {
    let upstream = Upstream::start().await;
    let app = app_with(&upstream, &["/unavailable"], true, 800, 1500).await;
    let client = app.client().await;
    let (result, structured) =
        call(&client, "suggest_gifts", json!({"relationship_type": "parent", "interests": ["gardening"]})).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(structured["ok"], true);
    assert!(!ids(&structured).is_empty(), "the built-in merchants still answer");
    assert_eq!(
        failed_sources(&structured),
        [("http-catalog-1".to_string(), "UPSTREAM_UNAVAILABLE".to_string(), "answered with an error".to_string())]
    );
    assert!(structured["partial"]["message"].as_str().unwrap().contains("http-catalog-1"));
    let text = text_of(&result);
    assert!(text.contains("Partial results") && text.contains("http-catalog-1"), "{text}");
    assert_no_leak(&result, &structured, UPSTREAM_DETAILS);
    // The partial result still fits the contract.
    let envelope: Envelope<SuggestGiftsData> = serde_json::from_value(structured).expect("contract shape");
    assert!(envelope.is_ok());
}

#[tokio::test]
async fn a_catalog_that_hangs_past_its_timeout_is_reported_as_timed_out_without_holding_up_the_others() {
    let upstream = Upstream::start().await;
    let app = app_with(&upstream, &["/hang", "/valid"], true, 300, 2000).await;
    let client = app.client().await;
    let (result, structured) = call(&client, "suggest_gifts", JUGGLING()).await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(ids(&structured), ["rm-001"], "the healthy HTTP catalog's gift is there");
    // `/hang` never answers, so the call ended by a timer; "within 300 ms" (not "before the
    // search deadline", what the 2 s call deadline says of a source still out) says it was the
    // source's own timeout, whatever the machine's load: no stopwatch needed.
    assert_eq!(
        failed_sources(&structured),
        [("http-catalog-1".to_string(), "UPSTREAM_TIMEOUT".to_string(), "did not answer within 300 ms".to_string())]
    );
    assert_no_leak(&result, &structured, UPSTREAM_DETAILS);
}

#[tokio::test]
async fn a_catalog_sending_garbage_or_the_wrong_shape_is_unavailable_without_its_parser_error_in_the_result() {
    let upstream = Upstream::start().await;
    let app = app_with(&upstream, &["/garbage", "/wrong-shape"], true, 800, 1500).await;
    let client = app.client().await;
    let (result, structured) = call(&client, "suggest_gifts", json!({"relationship_type": "friend"})).await;
    assert_eq!(result.is_error, Some(false));
    assert!(!ids(&structured).is_empty());
    let failed = failed_sources(&structured);
    assert_eq!(failed.len(), 2);
    for ((source, code, message), expected) in failed.iter().zip(["http-catalog-1", "http-catalog-2"]) {
        assert_eq!(source, expected);
        assert_eq!(code, "UPSTREAM_UNAVAILABLE");
        assert_eq!(message, "sent a catalog we could not read");
    }
    assert_no_leak(&result, &structured, UPSTREAM_DETAILS);
}

#[tokio::test]
async fn slow_catalogs_within_the_deadline_are_asked_concurrently_and_all_their_gifts_count() {
    let upstream = Upstream::start().await;
    // Each answers only once all three are asked at once: one after the other, the first would
    // hang until its timeout (generous: no machine is that slow otherwise).
    let app = app_with(&upstream, &["/together/1", "/together/2", "/together/3"], true, 20_000, 30_000).await;
    let client = app.client().await;
    let (result, structured) = call(&client, "suggest_gifts", JUGGLING()).await;
    assert_eq!(result.is_error, Some(false));
    assert!(structured.get("partial").is_none_or(Value::is_null), "no source failed: {structured}");
    assert_eq!(ids(&structured), ["together1-001", "together2-001", "together3-001"]);
}

#[tokio::test]
async fn a_catalog_within_its_own_timeout_but_past_the_overall_deadline_counts_as_timed_out() {
    // `/hang` never answers: only one of the two timers can end it, and the deadline is first.
    let upstream = Upstream::start().await;
    let app = app_with(&upstream, &["/hang"], true, 5000, 150).await;
    let client = app.client().await;
    let (result, structured) = call(&client, "suggest_gifts", JUGGLING()).await;
    assert_eq!(result.is_error, Some(false), "the built-ins answered, so this is a partial result");
    assert_eq!(ids(&structured), Vec::<String>::new());
    assert_eq!(structured["notice"]["code"], "NO_MATCHES");
    assert_eq!(
        failed_sources(&structured),
        [(
            "http-catalog-1".to_string(),
            "UPSTREAM_TIMEOUT".to_string(),
            "did not answer before the search deadline".to_string()
        )]
    );
}

#[tokio::test]
async fn a_valid_catalog_adds_its_gifts_but_can_never_shadow_a_builtin_gift_id() {
    let upstream = Upstream::start().await;
    let app = app_with(&upstream, &["/valid"], true, 800, 1500).await;
    let client = app.client().await;
    let (result, structured) = call(&client, "suggest_gifts", JUGGLING()).await;
    assert_eq!(result.is_error, Some(false));
    assert!(structured.get("partial").is_none_or(Value::is_null));
    assert_eq!(ids(&structured), ["rm-001"], "the duplicate id and the path-like id are skipped");
    assert_eq!(structured["gifts"][0]["merchant"], json!({"id": "remote-gifts", "name": "Remote Gifts"}));
    assert_eq!(structured["gifts"][0]["price"]["amount_minor"], 1999);
    let envelope: Envelope<SuggestGiftsData> = serde_json::from_value(structured).expect("contract shape");
    assert!(envelope.is_ok());

    // The built-in hh-012 is still the one prepare_order sells.
    let builtin = app.state.catalog.get("hh-012").expect("built-in gift").title.to_string();
    assert_ne!(builtin, "Impostor Juggling Set");
}

#[tokio::test]
async fn the_catalog_urls_can_be_given_comma_separated() {
    use clap::Parser;
    let config = giftgenius_server::config::Config::parse_from([
        "giftgenius-server",
        "--catalog-url",
        "http://127.0.0.1:1/a,http://127.0.0.1:1/b",
        "--catalog-url",
        "http://127.0.0.1:1/c",
        "--builtin-catalog",
        "false",
    ]);
    assert_eq!(config.catalog_urls.len(), 3);
    assert!(!config.builtin_catalog);
    assert_eq!((config.source_timeout_ms, config.suggest_deadline_ms, config.daily_suggestion_limit), (800, 1500, 200));
}

fn assert_upstream_error(structured: &Value, code: &str) {
    assert_eq!(structured["ok"], false);
    let error = &structured["error"];
    assert_eq!(error["code"], code);
    assert_eq!(error["category"], "transient");
    assert_eq!(error["retryable"], true);
    assert!(error["retry_after_ms"].as_u64().unwrap() > 0);
    assert_eq!(
        error["attempted"],
        json!({"relationship_type": "friend", "interests": ["juggling"], "currency": "USD", "limit": 6}),
        "attempted is the normalized query"
    );
    assert!(error["reference"].as_str().unwrap().starts_with("req_"));
}

#[tokio::test]
async fn when_every_source_fails_and_one_was_unavailable_the_call_fails_as_upstream_unavailable() {
    let upstream = Upstream::start().await;
    let app = app_with(&upstream, &["/unavailable", "/garbage", "/hang"], false, 200, 1000).await;
    let client = app.client().await;
    let (result, structured) = call(&client, "suggest_gifts", JUGGLING()).await;
    assert_eq!(result.is_error, Some(true));
    assert_upstream_error(&structured, "UPSTREAM_UNAVAILABLE");
    let text = text_of(&result);
    assert!(text.contains("UPSTREAM_UNAVAILABLE") && text.contains("retryable"), "{text}");
    assert_no_leak(&result, &structured, UPSTREAM_DETAILS);
}

#[tokio::test]
async fn when_every_source_times_out_the_call_fails_as_upstream_timeout() {
    let upstream = Upstream::start().await;
    let app = app_with(&upstream, &["/hang", "/slow/1"], false, 200, 1000).await;
    let client = app.client().await;
    let (result, structured) = call(&client, "suggest_gifts", JUGGLING()).await;
    assert_eq!(result.is_error, Some(true));
    assert_upstream_error(&structured, "UPSTREAM_TIMEOUT");
    assert_no_leak(&result, &structured, UPSTREAM_DETAILS);
}

#[tokio::test]
async fn a_catalog_nobody_listens_on_is_unavailable() {
    let url = unreachable_catalog();
    let app = spawn_app_with(move |c| {
        c.catalog_urls = vec![url];
        c.builtin_catalog = false;
    })
    .await;
    let client = app.client().await;
    let (result, structured) = call(&client, "suggest_gifts", JUGGLING()).await;
    assert_eq!(result.is_error, Some(true));
    assert_upstream_error(&structured, "UPSTREAM_UNAVAILABLE");
    assert_no_leak(&result, &structured, UPSTREAM_DETAILS);
}

#[tokio::test]
async fn an_http_catalog_is_fetched_once_within_its_ttl_and_every_time_without_one() {
    let upstream = Upstream::start().await;
    let app = app_with(&upstream, &["/counted/1"], true, 800, 1500).await;
    let client = app.client().await;
    for _ in 0..3 {
        let (_, structured) = call(&client, "suggest_gifts", JUGGLING()).await;
        assert_eq!(ids(&structured), ["counted1-001"], "{structured}");
    }
    assert_eq!(upstream.fetches(), 1, "three suggestions within the TTL, one fetch");

    let upstream = Upstream::start().await;
    let url = upstream.url("/counted/1");
    let app = spawn_app_with(move |c| {
        c.catalog_urls = vec![url];
        c.catalog_cache_ttl_secs = 0;
    })
    .await;
    let client = app.client().await;
    for _ in 0..3 {
        let (_, structured) = call(&client, "suggest_gifts", JUGGLING()).await;
        assert_eq!(ids(&structured), ["counted1-001"], "{structured}");
    }
    assert_eq!(upstream.fetches(), 3, "no TTL: every suggestion asks");
}

#[tokio::test]
async fn concurrent_suggestions_never_run_more_catalog_fetches_at_once_than_the_cap() {
    let upstream = Upstream::start().await;
    let urls: Vec<String> = (1..=4).map(|n| upstream.url(&format!("/counted/{n}"))).collect();
    let app = spawn_app_with(move |c| {
        c.catalog_urls = urls;
        c.catalog_cache_ttl_secs = 0;
        c.catalog_max_concurrent_fetches = 2;
        c.daily_suggestion_limit = 0;
        // Four catalogs of 200 ms each, two at a time: 400 ms, far inside these.
        c.source_timeout_ms = 20_000;
        c.suggest_deadline_ms = 30_000;
    })
    .await;
    let clients = futures::future::join_all((0..6).map(|_| app.client())).await;
    let answers =
        futures::future::join_all(clients.iter().map(|client| call(client, "suggest_gifts", JUGGLING()))).await;
    for (result, structured) in &answers {
        assert_eq!(result.is_error, Some(false));
        assert!(structured.get("partial").is_none_or(Value::is_null), "no source failed: {structured}");
        assert_eq!(ids(structured), ["counted1-001", "counted2-001", "counted3-001", "counted4-001"]);
    }
    assert_eq!(upstream.most_at_once(), 2, "never more than the cap, and the cap was reached");
    // One fetch in flight per catalog is shared by the suggestions that arrive meanwhile.
    assert!(upstream.fetches() < 6 * 4, "{} fetches for 6 suggestions of 4 catalogs", upstream.fetches());
}
