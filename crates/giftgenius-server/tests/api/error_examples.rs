//! One real result per error code, produced by the running server, for docs/errors.md.
//!
//! The test makes the server answer with every `ErrorCode`, then checks that docs/errors.md shows
//! an example of each with the same code, category, retryability and error fields. With
//! `GIFTGENIUS_UPDATE_DOCS=1` it rewrites the examples section from what the server returned
//! (references, ids and ports differ from run to run; the shape is what is checked).

use crate::support::with_recipient;
use std::collections::BTreeMap;
use std::time::Duration;

use giftgenius_commerce::failpoints::SUGGEST_GIFTS_PANICS;
use giftgenius_types::ErrorCode;
use serde_json::{Value, json};

use crate::stripe::app_on;
use crate::support::{
    LocalStripe, call, commit_args, execute_sql, hanging_catalog, prepare_in_session, spawn_app_with,
    token_secret_file, unreachable_catalog, unused_port,
};

const START: &str = "<!-- error-examples:start -->";
const END: &str = "<!-- error-examples:end -->";

async fn produce_every_error() -> BTreeMap<&'static str, Value> {
    let mut found: BTreeMap<&'static str, Value> = BTreeMap::new();
    let mut keep = |sc: Value| {
        let code = ErrorCode::ALL
            .iter()
            .find(|c| sc["error"]["code"] == c.as_str())
            .unwrap_or_else(|| panic!("not an error: {sc}"));
        found.entry(code.as_str()).or_insert(sc);
    };

    // Plain server: validation, lookups, confirmation, key reuse, out of stock.
    let mut db = String::new();
    let plain = spawn_app_with(|c| db = c.db.clone()).await;
    let client = plain.client().await;
    keep(
        call(&client, "suggest_gifts", json!({"relationship_type": "friend", "budget_min": 80, "budget_max": 50}))
            .await
            .1,
    );
    keep(call(&client, "prepare_order", with_recipient(json!({"gift_id": "zz-404"}))).await.1);
    keep(call(&client, "get_order", json!({"order_id": "ord_doesnotexist"})).await.1);
    keep(call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-007"}))).await.1);
    let (draft_id, _token) = prepare_in_session(&client, "hh-010").await;
    // A draft that vanished from the store (its token is genuine, so the lookup is what fails).
    let (gone, gone_token) = prepare_in_session(&client, "hh-001").await;
    execute_sql(&db, "DELETE FROM drafts WHERE id = $1", &[&gone]).await;
    keep(call(&client, "commit_order", commit_args(&gone, "ik_example_1", &gone_token)).await.1);
    keep(call(&client, "commit_order", commit_args(&draft_id, "ik_example_2", "ct_00")).await.1);
    let (_, ok) =
        call(&client, "create_checkout_session", json!({"gift_id": "hh-010", "idempotency_key": "ik_example_3"})).await;
    assert_eq!(ok["ok"], true, "{ok}");
    keep(
        call(&client, "create_checkout_session", json!({"gift_id": "hh-012", "idempotency_key": "ik_example_3"}))
            .await
            .1,
    );
    // An expired draft.
    let (draft_id, token) = prepare_in_session(&client, "hh-012").await;
    plain.clock.advance(Duration::from_secs(31 * 60));
    keep(call(&client, "commit_order", commit_args(&draft_id, "ik_example_4", &token)).await.1);

    // A confirmation past its lifetime (the draft outlives it here).
    {
        let app = spawn_app_with(|c| c.draft_ttl_secs = 7200).await;
        let client = app.client().await;
        let (draft_id, token) = prepare_in_session(&client, "hh-010").await;
        app.clock.advance(Duration::from_secs(3600));
        keep(call(&client, "commit_order", commit_args(&draft_id, "ik_example_9", &token)).await.1);
    }

    // Payments: a decline, an outage, and a commit still running when its retry arrives.
    for (faults, key) in [("decline", "ik_example_5"), ("5xx*1", "ik_example_6")] {
        let app = spawn_app_with(|_| {}).await;
        app.provider.set_faults(faults).await;
        let client = app.client().await;
        let (draft_id, token) = prepare_in_session(&client, "hh-010").await;
        keep(call(&client, "commit_order", commit_args(&draft_id, key, &token)).await.1);
    }
    {
        let app = spawn_app_with(|_| {}).await;
        app.provider.hold().await;
        let client = app.client().await;
        let (draft_id, token) = prepare_in_session(&client, "hh-010").await;
        let commit = commit_args(&draft_id, "ik_example_7", &token);
        let first = call(&client, "commit_order", commit.clone());
        // The retry comes while the first commit's charge is held at the provider.
        let second = async {
            app.provider.wait_for("the first charge", |l| !l.is_empty()).await;
            let second = call(&client, "commit_order", commit.clone()).await;
            app.provider.release().await;
            second
        };
        let ((_, a), (_, b)) = tokio::join!(first, second);
        for sc in [a, b] {
            if sc["ok"] == false {
                keep(sc);
            }
        }
    }

    // With Stripe, a Confirm on an account with no saved card.
    {
        let stripe = LocalStripe::start().await;
        let app = app_on(&stripe).await;
        let client = app.client().await;
        let (draft_id, token) = prepare_in_session(&client, "tr-001").await;
        keep(call(&client, "commit_order", commit_args(&draft_id, "ik_example_10", &token)).await.1);
    }

    // A cancellation after the fulfilment cut-off.
    {
        let app = spawn_app_with(|c| c.cancel_window_secs = 60).await;
        let client = app.client().await;
        let (draft_id, token) = prepare_in_session(&client, "hh-010").await;
        let (_, placed) = call(&client, "commit_order", commit_args(&draft_id, "ik_example_8", &token)).await;
        let order = placed["order"]["id"].as_str().expect("an order").to_string();
        let (read, _) = call(&client, "get_order", json!({"order_id": order})).await;
        let cancel_token = read
            .meta
            .as_ref()
            .and_then(|m| m.0.get(giftgenius_types::wire::META_CANCEL_TOKENS))
            .and_then(|t| t[&order].as_str())
            .expect("a cancel token")
            .to_string();
        app.clock.advance(Duration::from_secs(61));
        let cancel = json!({"order_id": order, "idempotency_key": "ck_example_1", "confirmation_token": cancel_token});
        keep(call(&client, "cancel_order", cancel).await.1);
    }

    // Limits, upstreams, and our own bug.
    {
        let app = spawn_app_with(|c| c.daily_suggestion_limit = 1).await;
        let client = app.client().await;
        let _ = call(&client, "suggest_gifts", json!({"relationship_type": "friend"})).await;
        keep(call(&client, "suggest_gifts", json!({"relationship_type": "parent", "occasion": "birthday"})).await.1);
    }
    {
        // Verified mode (an issuer nobody needs to reach: the call carries no token at all).
        let secret = token_secret_file();
        let path = secret.path().to_path_buf();
        let app = spawn_app_with(move |c| {
            c.auth_issuer = Some(format!("http://127.0.0.1:{}", unused_port()));
            c.token_secret_file = Some(path);
        })
        .await;
        let client = app.client().await;
        keep(call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await.1);
    }
    {
        let app = spawn_app_with(|c| c.hourly_draft_limit = 1).await;
        let client = app.client().await;
        let _ = call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
        keep(call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-012"}))).await.1);
    }
    {
        let url = hanging_catalog().await;
        let app = spawn_app_with(move |c| {
            c.builtin_catalog = false;
            c.catalog_urls = vec![url];
            c.source_timeout_ms = 200;
        })
        .await;
        let client = app.client().await;
        keep(call(&client, "suggest_gifts", json!({"relationship_type": "friend", "interests": ["juggling"]})).await.1);
    }
    {
        let url = unreachable_catalog();
        let app = spawn_app_with(move |c| {
            c.builtin_catalog = false;
            c.catalog_urls = vec![url];
        })
        .await;
        let client = app.client().await;
        keep(call(&client, "suggest_gifts", json!({"relationship_type": "friend", "interests": ["juggling"]})).await.1);
    }
    {
        let app = spawn_app_with(|c| c.failpoints = SUGGEST_GIFTS_PANICS.into()).await;
        let client = app.client().await;
        keep(call(&client, "suggest_gifts", json!({"relationship_type": "friend"})).await.1);
    }
    found
}

/// What must stay true of a documented example: code, category, retryability, error fields.
fn shape(example: &Value) -> Value {
    let error = &example["error"];
    let mut fields: Vec<&String> = error.as_object().map(|e| e.keys().collect()).unwrap_or_default();
    fields.sort();
    json!({"ok": example["ok"], "tool": example["tool"], "code": error["code"], "category": error["category"],
           "retryable": error["retryable"], "fields": fields})
}

fn section(found: &BTreeMap<&'static str, Value>) -> String {
    let mut out = String::new();
    for code in ErrorCode::ALL {
        let example = &found[code.as_str()];
        out.push_str(&format!("\n### `{code}`\n\n```json\n{}\n```\n", serde_json::to_string_pretty(example).unwrap()));
    }
    out
}

/// The examples documented in `doc`, by code.
fn documented(doc: &str) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for block in doc.split("```json\n").skip(1) {
        let json = &block[..block.find("\n```").expect("closed code block")];
        let value: Value = serde_json::from_str(json)
            .unwrap_or_else(|e| panic!("an example in docs/errors.md is not JSON ({e}): {json}"));
        if let Some(code) = value["error"]["code"].as_str() {
            out.insert(code.to_string(), value);
        }
    }
    out
}

#[tokio::test]
async fn every_error_code_has_a_real_example_and_docs_errors_md_shows_the_same_shapes() {
    let found = produce_every_error().await;
    for code in ErrorCode::ALL {
        let example = found
            .get(code.as_str())
            .unwrap_or_else(|| panic!("the server never answered with {code}; add a way to produce it here"));
        assert_eq!(example["error"]["category"], serde_json::to_value(code.category()).unwrap(), "{example}");
        assert_eq!(example["error"]["retryable"], code.retryable(), "{example}");
    }

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/errors.md");
    let doc = std::fs::read_to_string(path).expect("docs/errors.md");
    let (start, end) = (doc.find(START).expect("examples start marker"), doc.find(END).expect("examples end marker"));
    if std::env::var_os("GIFTGENIUS_UPDATE_DOCS").is_some() {
        let updated = format!("{}{START}\n{}\n{}", &doc[..start], section(&found), &doc[end..]);
        std::fs::write(path, updated).unwrap();
        return;
    }
    let docs = documented(&doc[start..end]);
    for code in ErrorCode::ALL {
        let shown = docs.get(code.as_str()).unwrap_or_else(|| {
            panic!("docs/errors.md has no example for {code}; regenerate with GIFTGENIUS_UPDATE_DOCS=1 cargo test -p giftgenius-server --test api error_examples")
        });
        assert_eq!(
            shape(shown),
            shape(&found[code.as_str()]),
            "the documented {code} example no longer matches what the server returns; regenerate with \
             GIFTGENIUS_UPDATE_DOCS=1 cargo test -p giftgenius-server --test api error_examples"
        );
    }
}
