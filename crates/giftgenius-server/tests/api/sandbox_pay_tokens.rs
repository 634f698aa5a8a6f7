//! Charges that name a vault token on the SANDBOX provider (docs/acp.md §8 "Use"), over real
//! HTTP against the real process: the token decides (its test card approves or declines), is
//! used once by an approved charge and never by a refused or declined one, and each broken
//! allowance rule refuses with its own code before any money moves. Exactly-once is counted in
//! the provider's ledger, never in responses.

use futures::future::join_all;
use giftgenius_sandbox_pay::api::{Charge, ChargeRequest, ChargeStatus, ErrorBody, PaymentToken, TOKEN_REFUSALS};
use giftgenius_sandbox_pay::delegate::rfc3339;
use serde_json::json;

use crate::support::{SandboxPay, TEST_MERCHANT, TEST_SESSION, delegate_body};

fn paid_by(token: &str, amount: i64) -> ChargeRequest {
    ChargeRequest {
        amount,
        currency: "usd".into(),
        description: "an ACP order".into(),
        payment_token: Some(PaymentToken {
            token: token.into(),
            checkout_session_id: TEST_SESSION.into(),
            merchant_id: TEST_MERCHANT.into(),
        }),
    }
}

fn replayed(response: &reqwest::Response) -> bool {
    response.headers().get("idempotent-replayed").is_some_and(|v| v == "true")
}

/// The 402 of a refused or declined charge: its code and the failed charge's id.
async fn declined(response: reqwest::Response) -> (String, String) {
    assert_eq!(response.status(), 402);
    let body: ErrorBody = response.json().await.unwrap();
    assert_eq!(body.error.kind, "card_error", "{body:?}");
    (body.error.code.expect("a code"), body.error.charge.expect("the failed charge's id"))
}

/// Every charge in the ledger as (key, status, failure code).
async fn ledger(provider: &SandboxPay) -> Vec<(String, ChargeStatus, Option<String>)> {
    provider.ledger().await.into_iter().map(|c| (c.idempotency_key, c.status, c.failure_code)).collect()
}

#[tokio::test]
async fn an_approved_charge_uses_its_token_once_and_replays_for_its_key() {
    let provider = SandboxPay::start();
    let token = provider.vault_token("dp-1", &delegate_body("4242424242424242")).await;
    let first = provider.charge("ch-1", &paid_by(&token, 4500)).await;
    assert_eq!(first.status(), 200);
    let charge: Charge = first.json().await.unwrap();
    assert_eq!((charge.status, charge.amount), (ChargeStatus::Succeeded, 4500));

    // The same key: the same charge, replayed, not a second use.
    let again = provider.charge("ch-1", &paid_by(&token, 4500)).await;
    assert!(replayed(&again));
    assert_eq!(again.json::<Charge>().await.unwrap(), charge);

    // Another key: the token is spent.
    let (code, failed) = declined(provider.charge("ch-2", &paid_by(&token, 4500)).await).await;
    assert_eq!(code, "token_used");
    assert_ne!(failed, charge.id);
    let recorded = provider.charge_under("ch-2").await.expect("the refusal is in the ledger");
    assert_eq!((recorded.status, recorded.failure_code.as_deref()), (ChargeStatus::Failed, Some("token_used")));
    assert_eq!(
        ledger(&provider).await,
        [
            ("ch-1".into(), ChargeStatus::Succeeded, None),
            ("ch-2".into(), ChargeStatus::Failed, Some("token_used".into()))
        ]
    );
    assert_eq!(provider.charges().await, 1, "charged once");
}

#[tokio::test]
async fn concurrent_charges_under_different_keys_spend_one_token_once() {
    let provider = SandboxPay::start();
    provider.set_latency_ms(200).await;
    let token = provider.vault_token("dp-race", &delegate_body("4242424242424242")).await;
    let keys: Vec<String> = (0..6).map(|i| format!("ch-race-{i}")).collect();
    let request = paid_by(&token, 1000);
    join_all(keys.iter().map(|key| provider.charge(key, &request))).await;
    let rows = ledger(&provider).await;
    assert_eq!(rows.len(), 6, "every request is recorded: {rows:?}");
    assert_eq!(rows.iter().filter(|(_, s, _)| *s == ChargeStatus::Succeeded).count(), 1, "{rows:?}");
    assert!(
        rows.iter().all(|(_, s, code)| *s == ChargeStatus::Succeeded || code.as_deref() == Some("token_used")),
        "{rows:?}"
    );
}

#[tokio::test]
async fn each_broken_allowance_rule_refuses_with_its_code_and_leaves_the_token_usable() {
    let provider = SandboxPay::start();
    let token = provider.vault_token("dp-rules", &delegate_body("4242424242424242")).await;
    let mut wrong_session = paid_by(&token, 100);
    wrong_session.payment_token.as_mut().unwrap().checkout_session_id = "acs_other".into();
    let mut wrong_merchant = paid_by(&token, 100);
    wrong_merchant.payment_token.as_mut().unwrap().merchant_id = "someone_else".into();
    let cases = [
        ("token_over_allowance", paid_by(&token, 5001)),
        ("token_wrong_currency", ChargeRequest { currency: "eur".into(), ..paid_by(&token, 100) }),
        ("token_wrong_session", wrong_session),
        ("token_wrong_merchant", wrong_merchant),
        ("token_unknown", paid_by("vt_00000000000000000000000000000000", 100)),
    ];
    for (code, request) in cases {
        let key = format!("ch-{code}");
        let (refused, charge_id) = declined(provider.charge(&key, &request).await).await;
        assert_eq!(refused, code);
        assert!(TOKEN_REFUSALS.contains(&code));
        // Recorded as a failure under the key, replayed for it.
        let recorded = provider.charge_under(&key).await.expect("recorded");
        assert_eq!((recorded.id.as_str(), recorded.failure_code.as_deref()), (charge_id.as_str(), Some(code)));
        let replay = provider.charge(&key, &request).await;
        assert!(replayed(&replay));
        assert_eq!(declined(replay).await, (code.to_string(), charge_id));
    }
    assert_eq!(provider.charges().await, 0, "nothing was charged");

    // The token is untouched: the full allowance, in upper-case currency, is approved.
    let ok = provider.charge("ch-ok", &ChargeRequest { currency: "USD".into(), ..paid_by(&token, 5000) }).await;
    assert_eq!(ok.status(), 200);
    assert_eq!(provider.charges().await, 1);
}

#[tokio::test]
async fn an_expired_token_is_refused() {
    let provider = SandboxPay::start();
    let expires_at = rfc3339::now_ms() + 1500;
    let mut body = delegate_body("4242424242424242");
    body["allowance"]["expires_at"] = json!(rfc3339::format_ms(expires_at));
    let token = provider.vault_token("dp-short", &body).await;
    // The provider shares this machine's clock: wait (bounded) until the allowance has ended.
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while rfc3339::now_ms() <= expires_at {
        assert!(std::time::Instant::now() < give_up, "the clock never passed the allowance's end");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (code, _) = declined(provider.charge("ch-late", &paid_by(&token, 100)).await).await;
    assert_eq!(code, "token_expired");
    assert_eq!(provider.charges().await, 0);
}

#[tokio::test]
async fn a_declining_card_declines_every_time_and_its_token_is_never_used() {
    for (number, code) in [("4000000000000002", "card_declined"), ("4000000000009995", "insufficient_funds")] {
        let provider = SandboxPay::start();
        let token = provider.vault_token("dp-decline", &delegate_body(number)).await;
        assert_eq!(declined(provider.charge("ch-a", &paid_by(&token, 100)).await).await.0, code);
        // Not consumed: a new key is declined by the card again, not refused as token_used.
        assert_eq!(declined(provider.charge("ch-b", &paid_by(&token, 100)).await).await.0, code);
        assert_eq!(
            ledger(&provider).await,
            [
                ("ch-a".into(), ChargeStatus::Failed, Some(code.into())),
                ("ch-b".into(), ChargeStatus::Failed, Some(code.into()))
            ]
        );
    }
}

#[tokio::test]
async fn an_injected_decline_comes_first_and_does_not_use_the_token() {
    let provider = SandboxPay::start();
    let token = provider.vault_token("dp-fault", &delegate_body("4242424242424242")).await;
    provider.set_faults("decline*1").await;
    assert_eq!(declined(provider.charge("ch-1", &paid_by(&token, 100)).await).await.0, "card_declined");
    assert_eq!(provider.charge("ch-2", &paid_by(&token, 100)).await.status(), 200, "the token was still unused");
    assert_eq!(provider.charges().await, 1);
}

#[tokio::test]
async fn a_key_reused_with_another_token_is_an_idempotency_error() {
    let provider = SandboxPay::start();
    let token = provider.vault_token("dp-a", &delegate_body("4242424242424242")).await;
    let other = provider.vault_token("dp-b", &delegate_body("4242424242424242")).await;
    assert_eq!(provider.charge("ch-1", &paid_by(&token, 100)).await.status(), 200);
    let mut no_token = paid_by(&token, 100);
    no_token.payment_token = None;
    for request in [paid_by(&other, 100), no_token] {
        let refused = provider.charge("ch-1", &request).await;
        assert_eq!(refused.status(), 400);
        assert_eq!(refused.json::<ErrorBody>().await.unwrap().error.kind, "idempotency_error");
    }
    assert_eq!(provider.charges().await, 1);
    assert_eq!(provider.charge("ch-2", &paid_by(&other, 100)).await.status(), 200, "the other token is unused");
}
