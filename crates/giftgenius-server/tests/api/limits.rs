//! The daily suggestion limit: per subject (per MCP session without one), per UTC day,
//! persisted, reset at midnight UTC; failed calls do not count, and 0 means unlimited. And the
//! hourly payment lookups (reopen_order_draft, remove_saved_card) per account.

use std::time::Duration;

use serde_json::json;

use crate::support::{call, call_as, spawn_app_with, text_of, unreachable_catalog, varied_suggestion, with_recipient};

const DAY_MS: i64 = 86_400_000;

#[tokio::test]
async fn a_subject_gets_its_daily_number_of_suggestions_then_daily_limit_exceeded_until_midnight_utc() {
    let app = spawn_app_with(|c| c.daily_suggestion_limit = 3).await;
    let client = app.client().await;
    for i in 1..=3 {
        let (result, structured) = call_as(&client, "alice", "suggest_gifts", varied_suggestion(i)).await;
        assert_eq!(result.is_error, Some(false), "call {i} is within the limit");
        assert_eq!(structured["ok"], true);
    }

    let (result, structured) = call_as(&client, "alice", "suggest_gifts", varied_suggestion(2)).await;
    assert_eq!(result.is_error, Some(true));
    let error = &structured["error"];
    assert_eq!(error["code"], "DAILY_LIMIT_EXCEEDED");
    assert_eq!(error["category"], "business");
    assert_eq!(error["retryable"], false);
    let now = app.clock.now_ms();
    let until_midnight = (DAY_MS - now.rem_euclid(DAY_MS)) as u64;
    assert_eq!(error["retry_after_ms"].as_u64(), Some(until_midnight));
    assert!(until_midnight > 0);
    assert_eq!(error["attempted"]["interests"], json!(["coffee"]));
    assert!(text_of(&result).contains("DAILY_LIMIT_EXCEEDED"));

    // Someone else is not affected.
    let (result, _) = call_as(&client, "bob", "suggest_gifts", varied_suggestion(3)).await;
    assert_eq!(result.is_error, Some(false), "bob has his own count");

    // Still blocked a millisecond before midnight, free again at midnight.
    app.clock.advance(Duration::from_millis(until_midnight - 1));
    let (result, structured) = call_as(&client, "alice", "suggest_gifts", varied_suggestion(4)).await;
    assert_eq!(result.is_error, Some(true));
    assert_eq!(structured["error"]["retry_after_ms"], 1);
    app.clock.advance(Duration::from_millis(1));
    for i in 1..=3 {
        let (result, _) = call_as(&client, "alice", "suggest_gifts", varied_suggestion(10 + i)).await;
        assert_eq!(result.is_error, Some(false), "call {i} of the new day passes");
    }
    let (result, _) = call_as(&client, "alice", "suggest_gifts", varied_suggestion(6)).await;
    assert_eq!(result.is_error, Some(true), "and the new day has the same limit");
}

#[tokio::test]
async fn in_local_mode_without_a_hint_every_session_is_the_one_local_user() {
    // Identity is never an MCP session (a reconnect would reset a limit, or lose a purchase).
    let app = spawn_app_with(|c| c.daily_suggestion_limit = 1).await;
    let first = app.client().await;
    let second = app.client().await;
    assert_eq!(call(&first, "suggest_gifts", varied_suggestion(7)).await.0.is_error, Some(false));
    let (_, structured) = call(&second, "suggest_gifts", varied_suggestion(8)).await;
    assert_eq!(structured["error"]["code"], "DAILY_LIMIT_EXCEEDED", "another session is the same user");
    let (_, other_user) = call_as(&second, "dev-2", "suggest_gifts", varied_suggestion(9)).await;
    assert_eq!(other_user["ok"], true, "a local-mode hint names another user: {other_user}");
}

#[tokio::test]
async fn invalid_arguments_and_failed_upstreams_do_not_use_up_the_limit() {
    let url = unreachable_catalog();
    let app = spawn_app_with(move |c| {
        c.daily_suggestion_limit = 1;
        c.builtin_catalog = false;
        c.catalog_urls = vec![url];
    })
    .await;
    let client = app.client().await;
    let (_, structured) =
        call_as(&client, "carol", "suggest_gifts", json!({"relationship_type": "friend", "age": 500})).await;
    assert_eq!(structured["error"]["code"], "VALIDATION_ERROR");
    for i in 0..3 {
        let (_, structured) = call_as(&client, "carol", "suggest_gifts", varied_suggestion(i)).await;
        assert_eq!(structured["error"]["code"], "UPSTREAM_UNAVAILABLE", "never DAILY_LIMIT_EXCEEDED: {structured}");
    }
}

#[tokio::test]
async fn the_daily_count_is_persisted_so_a_restart_does_not_reset_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("limits.db").to_string_lossy().into_owned();
    {
        let db = db.clone();
        let app = spawn_app_with(move |c| {
            c.daily_suggestion_limit = 2;
            c.db = db;
        })
        .await;
        let client = app.client().await;
        for i in 0..2 {
            assert_eq!(call_as(&client, "dave", "suggest_gifts", varied_suggestion(i)).await.0.is_error, Some(false));
        }
        // Suggestions are counted in memory and written in batches; a stopping server writes
        // what it holds (run_until_stopped does), which this stands for.
        app.state.limits.flush().await;
    }
    let app = spawn_app_with(move |c| {
        c.daily_suggestion_limit = 2;
        c.db = db;
    })
    .await;
    let client = app.client().await;
    let (_, structured) = call_as(&client, "dave", "suggest_gifts", varied_suggestion(12)).await;
    assert_eq!(structured["error"]["code"], "DAILY_LIMIT_EXCEEDED");
}

#[tokio::test]
async fn a_limit_of_zero_means_unlimited() {
    let app = spawn_app_with(|c| c.daily_suggestion_limit = 0).await;
    let client = app.client().await;
    for i in 0..5 {
        assert_eq!(call_as(&client, "erin", "suggest_gifts", varied_suggestion(i)).await.0.is_error, Some(false));
    }
}

const HOUR_MS: i64 = 3_600_000;

/// A signed-in caller leaves the per-address limit, and with Stripe each of these calls asks it
/// about the saved card: one account could spend the merchant's rate limit at Stripe. Now each
/// account has its hourly number of them (shared between the two tools), then the structured
/// HOURLY_LIMIT_EXCEEDED with retry_after_ms, and another account is unaffected.
#[tokio::test]
async fn an_account_gets_its_hourly_payment_lookups_then_hourly_limit_exceeded_and_others_do_not() {
    let app = spawn_app_with(|c| c.hourly_payment_lookup_limit = 3).await;
    let client = app.client().await;
    let draft_of = |structured: serde_json::Value| json!({"draft_id": structured["draft"]["id"].clone()});
    let (_, prepared) = call_as(&client, "frank", "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
    let frank = draft_of(prepared);
    for i in 0..2 {
        let (result, structured) = call_as(&client, "frank", "reopen_order_draft", frank.clone()).await;
        assert_eq!(result.is_error, Some(false), "reopen {i} is within the limit: {structured}");
    }
    let (result, structured) = call_as(&client, "frank", "remove_saved_card", frank.clone()).await;
    assert_eq!(result.is_error, Some(false), "the third lookup, by the other tool: {structured}");

    for tool in ["reopen_order_draft", "remove_saved_card"] {
        let (result, structured) = call_as(&client, "frank", tool, frank.clone()).await;
        assert_eq!(result.is_error, Some(true), "{tool}: {structured}");
        let error = &structured["error"];
        assert_eq!(error["code"], "HOURLY_LIMIT_EXCEEDED", "{tool}: {structured}");
        assert_eq!(error["category"], "business");
        let until_next_hour = (HOUR_MS - app.clock.now_ms().rem_euclid(HOUR_MS)) as u64;
        assert_eq!(error["retry_after_ms"].as_u64(), Some(until_next_hour), "{tool}");
        assert!(error["message"].as_str().unwrap().contains("saved-card lookups"), "{structured}");
    }

    // Another account has its own count.
    let (_, prepared) = call_as(&client, "grace", "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
    let (result, structured) = call_as(&client, "grace", "reopen_order_draft", draft_of(prepared)).await;
    assert_eq!(result.is_error, Some(false), "grace is not limited by frank: {structured}");

    // The next hour, frank may again (a fresh draft: the first may have expired by then).
    let until_next_hour = (HOUR_MS - app.clock.now_ms().rem_euclid(HOUR_MS)) as u64;
    app.clock.advance(Duration::from_millis(until_next_hour));
    let (_, prepared) = call_as(&client, "frank", "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
    let (result, structured) = call_as(&client, "frank", "reopen_order_draft", draft_of(prepared)).await;
    assert_eq!(result.is_error, Some(false), "{structured}");
}
