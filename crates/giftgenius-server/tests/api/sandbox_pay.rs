//! The SANDBOX payment provider as a process of its own, over its Stripe-shaped HTTP API: its
//! idempotency key (same key and body → one charge, the answer replayed; another body → 400),
//! declines recorded and replayed, its faults (a timeout after charging, a 503 before), settings
//! shared through its database by every process serving it, and its ledger read back.

use std::time::Duration;

use futures::future::join_all;
use giftgenius_sandbox_pay::api::{
    CHARGES_PATH, Charge, ChargeList, ChargeRequest, ChargeStatus, ErrorBody, IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER,
    SETTINGS_PATH,
};
use serde_json::json;

use crate::support::SandboxPay;

fn usd(amount: i64) -> ChargeRequest {
    ChargeRequest { amount, currency: "USD".into(), description: "a test charge".into(), payment_token: None }
}

fn replayed(response: &reqwest::Response) -> bool {
    response.headers().get(REPLAYED_HEADER).is_some_and(|v| v == "true")
}

#[tokio::test]
async fn the_same_key_and_body_make_one_charge_and_the_second_answer_is_a_replay() {
    let provider = SandboxPay::start();
    let first = provider.charge("k1", &usd(1500)).await;
    assert_eq!(first.status(), 200);
    assert!(!replayed(&first));
    let charge: Charge = first.json().await.unwrap();
    assert_eq!((charge.status, charge.amount, charge.currency.as_str()), (ChargeStatus::Succeeded, 1500, "usd"));
    assert_eq!(charge.idempotency_key, "k1");

    let second = provider.charge("k1", &usd(1500)).await;
    assert_eq!(second.status(), 200);
    assert!(replayed(&second), "the second answer says it is a replay");
    assert_eq!(second.json::<Charge>().await.unwrap(), charge, "the same charge");
    assert_eq!(provider.charges().await, 1, "one charge in the ledger");
}

#[tokio::test]
async fn the_same_key_with_another_body_is_refused_and_charges_nothing_more() {
    let provider = SandboxPay::start();
    assert_eq!(provider.charge("k1", &usd(1500)).await.status(), 200);
    for other in [usd(1600), ChargeRequest { description: "another order".into(), ..usd(1500) }] {
        let refused = provider.charge("k1", &other).await;
        assert_eq!(refused.status(), 400);
        let body: ErrorBody = refused.json().await.unwrap();
        assert_eq!(body.error.kind, "idempotency_error", "{body:?}");
    }
    assert_eq!(provider.charges().await, 1);
}

#[tokio::test]
async fn concurrent_requests_under_one_key_make_one_charge() {
    let provider = SandboxPay::start();
    provider.set_latency_ms(300).await;
    let request = usd(990);
    let answers = join_all((0..8).map(|_| provider.charge("k-storm", &request))).await;
    let mut ids = Vec::new();
    for answer in answers {
        match answer.status().as_u16() {
            200 => ids.push(answer.json::<Charge>().await.unwrap().id),
            // The first request under the key is still being processed.
            409 => assert_eq!(
                answer.json::<ErrorBody>().await.unwrap().error.code.as_deref(),
                Some("idempotency_key_in_use")
            ),
            other => panic!("unexpected status {other}"),
        }
    }
    assert!(!ids.is_empty(), "the first request got its charge");
    ids.dedup();
    assert_eq!(ids.len(), 1, "every success is the same charge");
    let again: Charge = provider.charge("k-storm", &usd(990)).await.json().await.unwrap();
    assert_eq!(again.id, ids[0]);
    assert_eq!(provider.charges().await, 1);
}

#[tokio::test]
async fn a_decline_is_recorded_and_replayed_for_its_key_after_the_fault_is_gone() {
    let provider = SandboxPay::start();
    provider.set_faults("decline*1").await;
    let declined = provider.charge("k-card", &usd(2500)).await;
    assert_eq!(declined.status(), 402);
    let body: ErrorBody = declined.json().await.unwrap();
    assert_eq!((body.error.kind.as_str(), body.error.code.as_deref()), ("card_error", Some("card_declined")));
    let charge_id = body.error.charge.expect("the failed charge's id");

    // The one-off fault is used up, yet the key still answers with its decline: a stale or
    // repeated request under it can never turn into a charge.
    let again = provider.charge("k-card", &usd(2500)).await;
    assert_eq!(again.status(), 402);
    assert!(replayed(&again));
    assert_eq!(again.json::<ErrorBody>().await.unwrap().error.charge.as_deref(), Some(charge_id.as_str()));
    let recorded = provider.charge_under("k-card").await.expect("the decline is in the ledger");
    assert_eq!((recorded.status, recorded.failure_code.as_deref()), (ChargeStatus::Failed, Some("card_declined")));
    assert_eq!(provider.charges().await, 0, "no money moved");

    assert_eq!(provider.charge("k-other", &usd(2500)).await.status(), 200, "another key is charged");
}

#[tokio::test]
async fn a_timeout_charges_and_withholds_the_answer_until_the_client_gives_up() {
    let provider = SandboxPay::start();
    provider.set_faults("timeout*1").await;
    let impatient = provider.client_builder().timeout(Duration::from_millis(500)).build().unwrap();
    let lost = impatient
        .post(format!("{}{CHARGES_PATH}", provider.url))
        .header(IDEMPOTENCY_KEY_HEADER, "k-lost")
        .json(&usd(700))
        .send()
        .await;
    assert!(lost.is_err_and(|e| e.is_timeout()), "the answer never came");
    let charged = provider.charge_under("k-lost").await.expect("charged all the same");
    assert_eq!(charged.status, ChargeStatus::Succeeded);

    let retry = provider.charge("k-lost", &usd(700)).await;
    assert_eq!(retry.status(), 200);
    assert!(replayed(&retry));
    assert_eq!(retry.json::<Charge>().await.unwrap().id, charged.id, "the retry finds the same charge");
    assert_eq!(provider.charges().await, 1);
}

#[tokio::test]
async fn a_503_charges_nothing_and_the_key_can_be_used_again() {
    let provider = SandboxPay::start();
    provider.set_faults("5xx*1").await;
    let failed = provider.charge("k-503", &usd(800)).await;
    assert_eq!(failed.status(), 503);
    assert_eq!(provider.charge_under("k-503").await, None, "nothing recorded under the key");
    let retry = provider.charge("k-503", &usd(800)).await;
    assert_eq!(retry.status(), 200);
    assert!(!replayed(&retry), "a fresh charge, not a replay");
    assert_eq!(provider.charges().await, 1);
}

#[tokio::test]
async fn settings_stored_by_one_process_apply_to_another_on_the_same_database() {
    let a = SandboxPay::start();
    let b = SandboxPay::start_on(&a.db, &[]);
    a.set_faults("5xx*1,decline*1").await;
    assert_eq!(b.charge("k1", &usd(100)).await.status(), 503, "b takes the first queued fault");
    assert_eq!(a.charge("k2", &usd(100)).await.status(), 402, "a takes the next one");
    assert_eq!(b.charge("k3", &usd(100)).await.status(), 200, "the queue is used up for both");
    let statuses: Vec<(String, ChargeStatus)> =
        b.ledger().await.into_iter().map(|c| (c.idempotency_key, c.status)).collect();
    assert_eq!(statuses, [("k2".to_string(), ChargeStatus::Failed), ("k3".to_string(), ChargeStatus::Succeeded)]);
}

#[tokio::test]
async fn the_ledger_is_read_by_id_and_page_by_page() {
    let provider = SandboxPay::start();
    let mut ids = Vec::new();
    for key in ["p1", "p2", "p3"] {
        ids.push(provider.charge(key, &usd(100)).await.json::<Charge>().await.unwrap().id);
    }
    let http = provider.client();
    let page = |query: String| {
        let http = http.clone();
        let url = format!("{}{CHARGES_PATH}?{query}", provider.url);
        async move { http.get(url).send().await.unwrap().json::<ChargeList>().await.unwrap() }
    };
    let first = page("limit=2".into()).await;
    assert!(first.has_more);
    assert_eq!(first.data.iter().map(|c| c.id.clone()).collect::<Vec<_>>(), ids[..2]);
    let rest = page(format!("limit=2&starting_after={}", ids[1])).await;
    assert!(!rest.has_more);
    assert_eq!(rest.data.iter().map(|c| c.id.clone()).collect::<Vec<_>>(), ids[2..]);

    let one = http.get(format!("{}{CHARGES_PATH}/{}", provider.url, ids[0])).send().await.unwrap();
    assert_eq!(one.json::<Charge>().await.unwrap().idempotency_key, "p1");
    let missing = http.get(format!("{}{CHARGES_PATH}/ch_nope", provider.url)).send().await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn requests_without_a_key_or_with_a_bad_body_or_plan_are_refused() {
    let provider = SandboxPay::start();
    let http = provider.client();
    let url = format!("{}{CHARGES_PATH}", provider.url);
    let no_key = http.post(&url).json(&usd(100)).send().await.unwrap();
    assert_eq!(no_key.status(), 400);
    for body in
        [json!({"amount": 0, "currency": "usd"}), json!({"amount": 5, "currency": "dollars"}), json!({"amount": "5"})]
    {
        let bad = http.post(&url).header(IDEMPOTENCY_KEY_HEADER, "k").json(&body).send().await.unwrap();
        assert_eq!(bad.status(), 400, "{body}");
        assert_eq!(bad.json::<ErrorBody>().await.unwrap().error.kind, "invalid_request_error");
    }
    let plan =
        http.post(format!("{}{SETTINGS_PATH}", provider.url)).json(&json!({"faults": "explode"})).send().await.unwrap();
    assert_eq!(plan.status(), 400);
    assert_eq!(provider.ledger().await, [], "nothing was recorded");
}

#[tokio::test]
async fn a_held_charge_stays_processing_until_released_then_is_decided_at_once() {
    let provider = SandboxPay::start();
    provider.hold().await;
    let request = usd(800);
    let held = provider.charge("k-held", &request);
    let meanwhile = async {
        provider.wait_for("the held charge", |l| l.iter().any(|c| c.status == ChargeStatus::Processing)).await;
        // Another request under the key meets the held one, still processing.
        assert_eq!(provider.charge("k-held", &request).await.status(), 409, "still processing");
        provider.release().await;
    };
    // Released: decided now, not at the end of the 30 s latency it was held with (the bound
    // below is half of that, so only the wake-up passes).
    let (answered, ()) = tokio::time::timeout(Duration::from_secs(15), async { tokio::join!(held, meanwhile) })
        .await
        .expect("decided once released");
    assert_eq!(answered.status(), 200);
    assert_eq!(provider.charges().await, 1);
}
