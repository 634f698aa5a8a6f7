//! Text the postal-code shapes cut at fixed positions (issue 39 item 6): a code with a
//! character of two bytes (`1234é5678`) cut at byte 5 panicked, so an ACP create closed the
//! connection with no answer and left its key leased (the retry got 409), and prepare_order
//! answered `INTERNAL_ERROR`. Now it is the field error any wrong code gets, on both transports.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::acp::{KEY_ONE, Platform, acp_app, address, codes, json_of};
use crate::support::{call, spawn_app};

/// A country whose shape cuts its codes, its state, and a code of that length with an `é`.
const CUT_CODES: [(&str, &str, &str); 4] =
    [("US", "CA", "1234é5678"), ("BR", "SP", "1234é5678"), ("PT", "", "1234é567"), ("NL", "", "123é AB")];

#[tokio::test]
async fn an_acp_session_with_a_non_ascii_postal_code_is_told_to_fix_it_and_its_key_replays() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    for (country, state, postal_code) in CUT_CODES {
        let key = format!("accented-{country}");
        let body = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
                          "fulfillment_details": {"address": address(country, state, postal_code)}});
        let (status, session) = json_of(one.post("", &key, &body).await).await;
        assert_eq!(status, StatusCode::CREATED, "{country}: {session}");
        assert_eq!(session["status"], "not_ready_for_payment", "{country}");
        let postal = ("invalid".to_string(), "$.fulfillment_details.address.postal_code".to_string());
        assert_eq!(codes(&session), vec![postal], "{country}: {session}");
        // The key was answered and stored: the retry is its replay, not 409 `idempotency_in_flight`.
        let retry = one.post("", &key, &body).await;
        assert_eq!(retry.headers().get("idempotent-replayed").map(|v| v.as_bytes()), Some(&b"true"[..]));
        let (status, replayed) = json_of(retry).await;
        assert_eq!((status, &replayed), (StatusCode::CREATED, &session), "{country}");
    }
}

#[tokio::test]
async fn prepare_order_with_a_non_ascii_postal_code_is_a_validation_error_naming_the_field() {
    let app = spawn_app().await;
    let client = app.client().await;
    for (country, state, postal_code) in CUT_CODES {
        let mut address =
            json!({"line1": "1 Main St", "city": "Springfield", "postal_code": postal_code, "country": country});
        if !state.is_empty() {
            address["region"] = Value::from(state);
        }
        let arguments = json!({"gift_id": "hh-010", "recipient": {"name": "Ana Lima", "address": address}});
        let (_, sc) = call(&client, "prepare_order", arguments).await;
        assert_eq!(sc["error"]["code"], "VALIDATION_ERROR", "{country}: {sc}");
        let errors = sc["error"]["field_errors"].as_array().expect("field errors");
        let fields: Vec<_> = errors.iter().map(|e| (e["field"].as_str(), e["rule"]["code"].as_str())).collect();
        assert_eq!(fields, [(Some("recipient.address.postal_code"), Some("postal_code_shape"))], "{country}: {sc}");
    }
}
