//! The ACP checkout REST API (issue 25, first slice: no payment) over real HTTP: the session's
//! life (create → update with an address → ready → cancel), every header error in its order,
//! the three idempotency answers, ownership by platform, buyer-fixable messages, expiry and
//! discovery. `postgres_acp_…` runs the flow on PostgreSQL.

use std::path::Path;
use std::time::Duration;

use giftgenius_commerce::store::Scope;
use giftgenius_server::acp::fingerprint::acp1;
use giftgenius_types::acp::{AcpCheckoutSession, AcpDiscovery, AcpError};
use reqwest::{Response, StatusCode};
use schemars::schema_for;
use serde_json::{Value, json};

use crate::postgres::TestDb;
use crate::support::{SandboxPay, TestApp, execute_sql, leak_in, spawn_app_on, spawn_app_with};

pub(crate) const VERSION: &str = "2026-04-17";
pub(crate) const KEY_ONE: &str = "platform-one-secret-0123456789abcdef";
pub(crate) const KEY_TWO: &str = "platform-two-secret-0123456789abcdef";

/// An app with two platforms: `one` (key in clear) and `two` (key given as its SHA-256).
pub(crate) async fn acp_app() -> TestApp {
    spawn_app_with(with_platforms).await
}

pub(crate) fn with_platforms(config: &mut giftgenius_server::config::Config) {
    let dir = Path::new(&config.db).parent().map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    let file = dir.join("acp-platforms.json");
    let two_hash = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(KEY_TWO.as_bytes()))
    };
    let platforms = json!([
        {"name": "one", "api_key": KEY_ONE, "webhook_url": "https://one.example/hooks", "webhook_secret": "whsec_one_0123456789abcdef0123456789"},
        {"name": "two", "api_key_sha256": two_hash, "webhook_url": "https://two.example/hooks", "webhook_secret": "whsec_two_0123456789abcdef0123456789"}
    ]);
    std::fs::write(&file, platforms.to_string()).expect("platforms file");
    config.acp_platforms = Some(file);
}

/// A client of one platform.
pub(crate) struct Platform<'a> {
    app: &'a TestApp,
    key: &'a str,
    http: reqwest::Client,
}

impl<'a> Platform<'a> {
    pub(crate) fn new(app: &'a TestApp, key: &'a str) -> Self {
        Self { app, key, http: reqwest::Client::new() }
    }

    fn url(&self, path: &str) -> String {
        format!("{}/acp/checkout_sessions{path}", self.app.local_url)
    }

    pub(crate) async fn post(&self, path: &str, key: &str, body: &Value) -> Response {
        self.post_text(path, key, &body.to_string()).await
    }

    async fn post_text(&self, path: &str, key: &str, body: &str) -> Response {
        self.http
            .post(self.url(path))
            .bearer_auth(self.key)
            .header("API-Version", VERSION)
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", key)
            .body(body.to_string())
            .send()
            .await
            .expect("POST answered")
    }

    pub(crate) async fn get(&self, id: &str) -> Response {
        self.http
            .get(self.url(&format!("/{id}")))
            .bearer_auth(self.key)
            .header("API-Version", VERSION)
            .send()
            .await
            .expect("GET answered")
    }
}

/// The status and body of an `/acp` answer, the body checked against the JSON Schema of our own
/// type: a session on success, ACP's Error otherwise.
pub(crate) async fn json_of(response: Response) -> (StatusCode, Value) {
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON body");
    let schema = if status.is_success() { schema_for!(AcpCheckoutSession) } else { schema_for!(AcpError) };
    let schema = serde_json::to_value(schema).expect("schema");
    let validator = jsonschema::draft202012::new(&schema).expect("our schema compiles");
    let errors: Vec<String> = validator.iter_errors(&body).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{status} answer outside our schema: {errors:?}\n{body:#}");
    (status, body)
}

pub(crate) fn create_body(item: &str) -> Value {
    json!({"line_items": [{"id": item}], "currency": "usd", "capabilities": {}})
}

pub(crate) fn address(country: &str, state: &str, postal_code: &str) -> Value {
    json!({"name": "Ana Lima", "line_one": "1 Main St", "city": "Springfield", "state": state,
           "country": country, "postal_code": postal_code})
}

pub(crate) fn codes(session: &Value) -> Vec<(String, String)> {
    session["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .map(|m| (m["code"].as_str().unwrap_or("").to_string(), m["param"].as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn total(session: &Value, kind: &str) -> Option<i64> {
    session["totals"].as_array()?.iter().find(|t| t["type"] == kind)?["amount"].as_i64()
}

/// create → update with an address → ready → express → get → cancel, on `app`.
async fn session_life(app: &TestApp) {
    let one = Platform::new(app, KEY_ONE);
    let (status, created) = json_of(
        one.post(
            "",
            "create-1",
            &json!({"line_items": [{"id": "hh-001"}, {"id": "hh-001"}], "currency": "usd",
            "capabilities": {}, "order_notes": "Happy birthday!"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().expect("an id").to_string();
    assert!(id.starts_with("acs_"));
    assert_eq!(created["status"], "not_ready_for_payment");
    assert_eq!(created["protocol"]["version"], VERSION);
    assert_eq!(created["line_items"][0]["quantity"], 2);
    assert_eq!(created["line_items"][0]["unit_amount"], 6800);
    assert_eq!(created["line_items"][0]["availability_status"], "in_stock");
    assert_eq!(created["fulfillment_options"], json!([]));
    assert_eq!(codes(&created), vec![("missing".to_string(), "$.fulfillment_details.address".to_string())]);
    assert_eq!(total(&created, "items_base_amount"), Some(13600));
    assert_eq!(total(&created, "total"), Some(13600));
    let links: Vec<&str> = created["links"].as_array().unwrap().iter().filter_map(|l| l["url"].as_str()).collect();
    assert_eq!(
        links,
        [format!("{}/terms", app.base_url), format!("{}/privacy", app.base_url), format!("{}/support", app.base_url)]
    );

    let (status, ready) = json_of(
        one.post(
            &format!("/{id}"),
            "address-1",
            &json!({"fulfillment_details": {"email": "ana@example.com", "address": address("US", "CA", "94103")}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{ready}");
    assert_eq!(ready["status"], "ready_for_payment", "{ready}");
    let options: Vec<&str> =
        ready["fulfillment_options"].as_array().unwrap().iter().filter_map(|o| o["id"].as_str()).collect();
    assert_eq!(options, ["fo_standard", "fo_express"]);
    // Each option says when it arrives: the test clock reads Thursday 2026-05-28 16:26 in New
    // York, after Hearth & Home's cut-off, so it ships Monday June 1; to the US standard is 3–5
    // business days, express 1–2, from the start of the first day to the end of the last in the
    // destination's calendar (`arrival`: Chicago's for the US, UTC−5 in June).
    let times = |i: usize| {
        let option = &ready["fulfillment_options"][i];
        (option["earliest_delivery_time"].clone(), option["latest_delivery_time"].clone())
    };
    assert_eq!(times(0), (json!("2026-06-04T05:00:00Z"), json!("2026-06-09T04:59:59Z")), "{ready}");
    assert_eq!(times(1), (json!("2026-06-02T05:00:00Z"), json!("2026-06-04T04:59:59Z")), "{ready}");
    assert_eq!(ready["selected_fulfillment_options"][0]["option_id"], "fo_standard");
    assert_eq!(ready["selected_fulfillment_options"][0]["item_ids"], json!(["li_hh-001"]));
    assert_eq!(total(&ready, "fulfillment"), Some(0));

    // Pickup is a kind the spec defines and we do not offer: the session says so (not a 400) and
    // is not ready until a shipping option replaces it.
    let pickup = json!({"selected_fulfillment_options": [{"type": "pickup", "option_id": "store_1", "item_ids": ["li_hh-001"]}]});
    let (status, picked) = json_of(one.post(&format!("/{id}"), "pickup-1", &pickup).await).await;
    assert_eq!((status, picked["status"].as_str()), (StatusCode::OK, Some("not_ready_for_payment")), "{picked}");
    assert_eq!(
        codes(&picked),
        [("unsupported".to_string(), "$.selected_fulfillment_options[0].type".to_string())],
        "{picked}"
    );
    let select = json!({"selected_fulfillment_options": [{"type": "shipping", "option_id": "fo_express", "item_ids": ["li_hh-001"]}]});
    let (status, express) = json_of(one.post(&format!("/{id}"), "express-1", &select).await).await;
    assert_eq!(status, StatusCode::OK, "{express}");
    assert_eq!(express["status"], "ready_for_payment", "the shipping selection replaced the pickup: {express}");
    assert_eq!(total(&express, "fulfillment"), Some(1200));
    assert_eq!(total(&express, "total"), Some(13600 + 1200));

    let (status, got) = json_of(one.get(&id).await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got, express, "GET shows the session as the last update left it");

    let (status, canceled) = json_of(one.post(&format!("/{id}/cancel"), "cancel-1", &json!({})).await).await;
    assert_eq!(status, StatusCode::OK, "{canceled}");
    assert_eq!(canceled["status"], "canceled");
    let (status, again) = json_of(one.post(&format!("/{id}/cancel"), "cancel-2", &json!({})).await).await;
    assert_eq!((status, again["code"].as_str()), (StatusCode::METHOD_NOT_ALLOWED, Some("session_not_cancelable")));
    let (status, update) =
        json_of(one.post(&format!("/{id}"), "late-update", &json!({"order_notes": null})).await).await;
    assert_eq!((status, update["code"].as_str()), (StatusCode::METHOD_NOT_ALLOWED, Some("session_canceled")));

    // The create replays with its first status, whatever happened to the session since.
    let replay = one
        .post(
            "",
            "create-1",
            &json!({"capabilities": {}, "currency": "usd", "order_notes": "Happy birthday!",
            "line_items": [{"id": "hh-001"}, {"id": "hh-001"}]}),
        )
        .await;
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    let (status, replayed) = json_of(replay).await;
    assert_eq!((status, &replayed), (StatusCode::CREATED, &created));
}

#[tokio::test]
async fn a_session_goes_from_not_ready_to_ready_to_canceled() {
    let app = acp_app().await;
    session_life(&app).await;

    let one = Platform::new(&app, KEY_ONE);
    let (status, missing) = json_of(one.get("acs_00000000000000000000").await).await;
    assert_eq!((status, missing["code"].as_str()), (StatusCode::NOT_FOUND, Some("session_not_found")));
    assert_eq!(missing["type"], "invalid_request");
}

#[tokio::test]
async fn postgres_acp_session_life_and_replay() {
    let db = TestDb::create().await;
    let url = db.url.clone();
    let app = spawn_app_on(&std::sync::Arc::new(SandboxPay::start()), move |config| {
        with_platforms(config);
        config.db = url;
    })
    .await;
    session_life(&app).await;
}

#[tokio::test]
async fn headers_are_checked_in_order_and_echoed() {
    let app = acp_app().await;
    let http = reqwest::Client::new();
    let url = format!("{}/acp/checkout_sessions", app.local_url);
    let body = create_body("hh-001").to_string();
    let send =
        |auth: Option<&str>, version: Option<&str>, content_type: Option<&str>, key: Option<&str>, body: String| {
            let mut request = http.post(&url).body(body).header("Request-Id", "req_test_1");
            if let Some(auth) = auth {
                request = request.header("Authorization", auth);
            }
            if let Some(version) = version {
                request = request.header("API-Version", version);
            }
            if let Some(content_type) = content_type {
                request = request.header("Content-Type", content_type);
            }
            if let Some(key) = key {
                request = request.header("Idempotency-Key", key);
            }
            request.send()
        };
    let bearer = format!("Bearer {KEY_ONE}");
    let json = Some("application/json");

    // Everything wrong at once: the first check answers.
    let response = send(None, None, None, None, "{".into()).await.unwrap();
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    assert_eq!(response.headers()["request-id"], "req_test_1");
    let (status, error) = json_of(response).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("unauthorized")));
    let (status, error) =
        json_of(send(Some("Bearer nope"), Some(VERSION), json, Some("k"), body.clone()).await.unwrap()).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("unauthorized")));

    let (status, error) = json_of(send(Some(&bearer), None, None, None, "{".into()).await.unwrap()).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("missing_api_version")));
    assert_eq!(error["supported_versions"], json!([VERSION]));
    let (status, error) = json_of(send(Some(&bearer), Some("2025-09-29"), None, None, "{".into()).await.unwrap()).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("unsupported_api_version")));
    assert_eq!(error["supported_versions"], json!([VERSION]));

    let (status, error) =
        json_of(send(Some(&bearer), Some(VERSION), Some("text/plain"), None, "{".into()).await.unwrap()).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::UNSUPPORTED_MEDIA_TYPE, Some("unsupported_media_type")));

    let (status, error) = json_of(send(Some(&bearer), Some(VERSION), json, None, "{".into()).await.unwrap()).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("idempotency_key_required")));
    let long_key = "k".repeat(256);
    let (status, error) =
        json_of(send(Some(&bearer), Some(VERSION), json, Some(&long_key), "{".into()).await.unwrap()).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid")));

    let response = send(Some(&bearer), Some(VERSION), json, Some("bad-json"), "{".into()).await.unwrap();
    assert_eq!(response.headers()["idempotency-key"], "bad-json");
    let (status, error) = json_of(response).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::BAD_REQUEST, Some("invalid_json")));

    let huge = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {}, "order_notes": "x".repeat(70_000)});
    let (status, error) =
        json_of(send(Some(&bearer), Some(VERSION), json, Some("huge"), huge.to_string()).await.unwrap()).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large")));

    // Past the claim: the body's shape, then the catalog.
    let (status, error) = json_of(
        send(
            Some(&bearer),
            Some(VERSION),
            json,
            Some("shape"),
            json!({"line_items": [{"id": "hh-001"}], "capabilities": {}}).to_string(),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str(), error["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("missing"), Some("$.currency"))
    );
    let (status, error) = json_of(
        send(
            Some(&bearer),
            Some(VERSION),
            json,
            Some("unknown-field"),
            json!({"line_items": [{"id": "hh-001", "quantity": 2}], "currency": "usd", "capabilities": {}}).to_string(),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((status, error["param"].as_str()), (StatusCode::BAD_REQUEST, Some("$.line_items[0].quantity")));
    let (status, error) = json_of(
        send(Some(&bearer), Some(VERSION), json, Some("unknown-item"), create_body("zz-999").to_string())
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        (status, error["code"].as_str(), error["param"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid"), Some("$.line_items[0].id"))
    );
    let (status, error) = json_of(
        send(
            Some(&bearer),
            Some(VERSION),
            json,
            Some("currency"),
            json!({"line_items": [{"id": "hh-001"}], "currency": "chf", "capabilities": {}}).to_string(),
        )
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((status, error["param"].as_str()), (StatusCode::BAD_REQUEST, Some("$.currency")));

    // Without a Request-Id we make one up; another method is a 405 naming the allowed ones.
    let response = http.delete(&url).bearer_auth(KEY_ONE).header("API-Version", VERSION).send().await.unwrap();
    assert!(response.headers()["request-id"].to_str().unwrap().starts_with("req_"));
    assert_eq!(response.headers()["allow"], "POST");
    let (status, error) = json_of(response).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::METHOD_NOT_ALLOWED, Some("method_not_allowed")));
}

#[tokio::test]
async fn a_key_replays_its_answer_refuses_another_body_and_says_when_in_flight() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);

    // Key order and 1 vs 1.0 do not make another request; null vs absent does.
    let first =
        r#"{"line_items": [{"id": "hh-002"}], "currency": "usd", "capabilities": {}, "metadata": {"a": 1, "b": 2.5}}"#;
    let same = r#"{"metadata": {"b": 2.5, "a": 1.0}, "capabilities": {}, "currency": "usd", "line_items": [{"id": "hh-002"}]}"#;
    let (status, created) = json_of(one.post_text("", "k-1", first).await).await;
    assert_eq!(status, StatusCode::CREATED);
    let replay = one.post_text("", "k-1", same).await;
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_eq!(replay.headers()["idempotency-key"], "k-1");
    let (status, replayed) = json_of(replay).await;
    assert_eq!((status, replayed["id"].clone()), (StatusCode::CREATED, created["id"].clone()));

    let with_null = r#"{"line_items": [{"id": "hh-002"}], "currency": "usd", "capabilities": {}, "metadata": {"a": 1, "b": 2.5}, "locale": null}"#;
    let conflict = one.post_text("", "k-1", with_null).await;
    assert!(conflict.headers().get("idempotent-replayed").is_none());
    let (status, error) = json_of(conflict).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("idempotency_conflict")));

    // A 4xx after the claim is an answer too, and replays with its status.
    let (status, _) = json_of(one.post("/acs_nosuchsession000000", "k-404", &json!({})).await).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let replay = one.post("/acs_nosuchsession000000", "k-404", &json!({})).await;
    assert_eq!(replay.headers()["idempotent-replayed"], "true");
    assert_eq!(replay.status(), StatusCode::NOT_FOUND);

    // The same key on another path is another request.
    let id = created["id"].as_str().unwrap();
    let (status, _) = json_of(one.post(&format!("/{id}"), "k-1", &json!({})).await).await;
    assert_eq!(status, StatusCode::OK);

    // A request still holding its key (as a concurrent twin would): 409 with Retry-After.
    let body = create_body("hh-003");
    let scope = Scope { subject: "acp:one".into(), tool: "acp POST /acp/checkout_sessions", key: "k-busy".into() };
    let now = app.clock.now_ms();
    app.state.store.claim_key(&scope, &acp1(&body), now + 30_000, now).await.expect("held");
    let busy = one.post("", "k-busy", &body).await;
    assert_eq!(busy.headers()["retry-after"], "30");
    let (status, error) = json_of(busy).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::CONFLICT, Some("idempotency_in_flight")));
    // Once its lease has run out (the holder died) a retry takes the key over and is answered.
    app.clock.advance(Duration::from_secs(31));
    let (status, _) = json_of(one.post("", "k-busy", &body).await).await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test]
async fn another_platform_cannot_see_or_touch_a_session() {
    let app = acp_app().await;
    let (one, two) = (Platform::new(&app, KEY_ONE), Platform::new(&app, KEY_TWO));
    let (_, created) = json_of(one.post("", "mine", &create_body("hh-001")).await).await;
    let id = created["id"].as_str().unwrap();
    for response in [
        two.get(id).await,
        two.post(&format!("/{id}"), "theirs", &json!({"order_notes": "hi"})).await,
        two.post(&format!("/{id}/cancel"), "theirs-cancel", &json!({})).await,
    ] {
        let (status, error) = json_of(response).await;
        assert_eq!((status, error["code"].as_str()), (StatusCode::NOT_FOUND, Some("session_not_found")));
    }
    // The same key under the other platform is its own: no replay of platform one's answer.
    let (status, theirs) = json_of(two.post("", "mine", &create_body("hh-001")).await).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_ne!(theirs["id"], created["id"]);
    let (status, still) = json_of(one.get(id).await).await;
    assert_eq!((status, still["status"].as_str()), (StatusCode::OK, Some("not_ready_for_payment")));
}

#[tokio::test]
async fn what_the_buyer_can_fix_comes_as_messages() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);

    // hh-007 is sold out in the built-in catalog.
    let body = json!({"line_items": [{"id": "hh-007"}], "currency": "usd", "capabilities": {},
                      "fulfillment_details": {"address": address("US", "CA", "94103")}});
    let (status, sold_out) = json_of(one.post("", "sold-out", &body).await).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(sold_out["status"], "not_ready_for_payment");
    assert_eq!(sold_out["line_items"][0]["availability_status"], "out_of_stock");
    assert_eq!(codes(&sold_out), vec![("out_of_stock".to_string(), "$.line_items[0]".to_string())]);

    // A US address without a state and with a malformed ZIP code.
    let body = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
                      "fulfillment_details": {"address": address("US", "", "9410")}});
    let (_, invalid) = json_of(one.post("", "bad-address", &body).await).await;
    assert_eq!(invalid["status"], "not_ready_for_payment");
    assert_eq!(
        codes(&invalid),
        vec![
            ("missing".to_string(), "$.fulfillment_details.address.state".to_string()),
            ("invalid".to_string(), "$.fulfillment_details.address.postal_code".to_string()),
        ]
    );
    assert_eq!(invalid["fulfillment_options"], json!([]));

    // Fixed by an update; Hong Kong has neither states nor postal codes: "" for both.
    let id = invalid["id"].as_str().unwrap();
    let fix = json!({"fulfillment_details": {"address": address("hk", "", "")}});
    let (status, fixed) = json_of(one.post(&format!("/{id}"), "fix", &fix).await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(fixed["status"], "ready_for_payment", "{fixed}");
    assert_eq!(fixed["fulfillment_details"]["address"]["country"], "HK");
    assert_eq!(fixed["fulfillment_details"]["address"]["state"], "");
    assert_eq!(fixed["fulfillment_details"]["address"]["postal_code"], "");

    // A gift message over its limit is the buyer's to fix too; null clears it.
    let (_, long) =
        json_of(one.post(&format!("/{id}"), "long-note", &json!({"order_notes": "x".repeat(301)})).await).await;
    assert_eq!(codes(&long), vec![("invalid".to_string(), "$.order_notes".to_string())]);
    assert_eq!(long["status"], "not_ready_for_payment");
    let (_, cleared) = json_of(one.post(&format!("/{id}"), "clear-note", &json!({"order_notes": null})).await).await;
    assert_eq!(cleared["status"], "ready_for_payment");
}

#[tokio::test]
async fn a_session_expires_after_its_ttl() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (_, created) = json_of(one.post("", "soon-old", &create_body("hh-001")).await).await;
    let id = created["id"].as_str().unwrap();
    app.clock.advance(Duration::from_secs(60 * 60));
    let (status, expired) = json_of(one.get(id).await).await;
    assert_eq!((status, expired["status"].as_str()), (StatusCode::OK, Some("expired")));
    assert!(codes(&expired).contains(&("expired".to_string(), String::new())));
    let (status, updated) = json_of(one.post(&format!("/{id}"), "late", &json!({"order_notes": "hi"})).await).await;
    assert_eq!((status, updated["status"].as_str()), (StatusCode::OK, Some("expired")));
    let (status, error) = json_of(one.post(&format!("/{id}/cancel"), "late-cancel", &json!({})).await).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::METHOD_NOT_ALLOWED, Some("session_not_cancelable")));

    // Kept a retention (24 h) past its expiry, then deleted with its personal data.
    app.clock.advance(Duration::from_secs(23 * 3600));
    app.state.prune().await;
    assert_eq!(one.get(id).await.status(), StatusCode::OK);
    app.clock.advance(Duration::from_secs(2 * 3600));
    app.state.prune().await;
    let (status, error) = json_of(one.get(id).await).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::NOT_FOUND, Some("session_not_found")));
}

#[tokio::test]
async fn cancel_takes_no_body_and_an_intent_trace() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (_, created) = json_of(one.post("", "c", &create_body("hh-001")).await).await;
    let id = created["id"].as_str().unwrap();
    let response = one
        .http
        .post(one.url(&format!("/{id}/cancel")))
        .bearer_auth(KEY_ONE)
        .header("API-Version", VERSION)
        .header("Idempotency-Key", "no-body")
        .send()
        .await
        .unwrap();
    let (status, canceled) = json_of(response).await;
    assert_eq!((status, canceled["status"].as_str()), (StatusCode::OK, Some("canceled")));

    let (_, other) = json_of(one.post("", "d", &create_body("hh-001")).await).await;
    let id = other["id"].as_str().unwrap();
    let trace = json!({"intent_trace": {"reason_code": "shipping_cost", "trace_summary": "too dear"}});
    let (status, canceled) = json_of(one.post(&format!("/{id}/cancel"), "trace", &trace).await).await;
    assert_eq!((status, canceled["status"].as_str()), (StatusCode::OK, Some("canceled")));
}

#[tokio::test]
async fn discovery_is_public_and_lists_what_is_served() {
    let app = acp_app().await;
    let response = reqwest::get(format!("{}/.well-known/acp.json", app.local_url)).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["cache-control"], "public, max-age=3600");
    let document: Value = response.json().await.unwrap();
    let schema = serde_json::to_value(schema_for!(AcpDiscovery)).unwrap();
    assert!(jsonschema::draft202012::new(&schema).unwrap().is_valid(&document), "{document:#}");
    assert_eq!(document["protocol"], json!({"name": "acp", "version": VERSION, "supported_versions": [VERSION]}));
    assert_eq!(document["api_base_url"], format!("{}/acp", app.base_url));
    assert_eq!(document["transports"], json!(["rest", "mcp"]));
    assert_eq!(document["capabilities"]["services"], json!(["checkout"]));
    // The languages sessions speak (docs/acp.md §13.4).
    assert_eq!(document["capabilities"]["supported_locales"], json!(["en-US", "es-ES", "pt-BR"]));
    // The binding's endpoint, which the spec leaves to be told out of band (docs/acp.md §11).
    assert_eq!(
        document["capabilities"]["extensions"],
        json!([{"name": "dev.giftgenius.mcp_endpoint", "spec": format!("{}/acp/mcp", app.base_url)}])
    );
}

#[tokio::test]
async fn without_platforms_there_is_no_acp() {
    let app = crate::support::spawn_app().await;
    for path in ["/acp/checkout_sessions/acs_1", "/.well-known/acp.json"] {
        let response = reqwest::get(format!("{}{path}", app.local_url)).await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn a_failure_on_our_side_is_a_500_that_is_never_stored() {
    let mut db = String::new();
    let app = spawn_app_with(|config| {
        with_platforms(config);
        db = config.db.clone();
    })
    .await;
    let one = Platform::new(&app, KEY_ONE);
    let (_, created) = json_of(one.post("", "c", &create_body("hh-001")).await).await;
    let id = created["id"].as_str().unwrap();

    // The store fails under the update: a 500 that names nothing of ours.
    execute_sql(&db, "ALTER TABLE acp_checkout_sessions RENAME TO acp_away", &[]).await;
    let update = json!({"order_notes": "Happy birthday"});
    let (status, error) = json_of(one.post(&format!("/{id}"), "k-500", &update).await).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!((error["type"].as_str(), error["code"].as_str()), (Some("processing_error"), Some("internal_error")));
    assert_eq!(leak_in(&error.to_string(), &["acp_checkout_sessions", "acp_away", "no such table"]), None);

    // Repaired, the same key runs the update (the 500 was not stored), and only then replays.
    execute_sql(&db, "ALTER TABLE acp_away RENAME TO acp_checkout_sessions", &[]).await;
    let retry = one.post(&format!("/{id}"), "k-500", &update).await;
    assert!(retry.headers().get("idempotent-replayed").is_none());
    let (status, updated) = json_of(retry).await;
    assert_eq!((status, updated["id"].as_str()), (StatusCode::OK, Some(id)));
    let replay = one.post(&format!("/{id}"), "k-500", &update).await;
    assert_eq!((replay.status(), &replay.headers()["idempotent-replayed"]), (StatusCode::OK, &"true".parse().unwrap()));
}

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive() {
    let app = acp_app().await;
    let response = reqwest::Client::new()
        .get(format!("{}/acp/checkout_sessions/acs_nothing", app.local_url))
        .header("Authorization", format!("bearer {KEY_ONE}"))
        .header("API-Version", VERSION)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND, "authenticated, then not found");
}

#[tokio::test]
async fn tax_is_added_for_the_countries_configured() {
    let app = spawn_app_with(|config| {
        with_platforms(config);
        config.acp_tax_bps = Some("US=725".into());
    })
    .await;
    let one = Platform::new(&app, KEY_ONE);
    let body = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
                      "fulfillment_details": {"address": address("US", "CA", "94103")}});
    let (status, taxed) = json_of(one.post("", "taxed", &body).await).await;
    assert_eq!((status, taxed["status"].as_str()), (StatusCode::CREATED, Some("ready_for_payment")));
    // 7.25 % of 6800 (standard shipping is free) = 493.
    assert_eq!((total(&taxed, "tax"), total(&taxed, "total")), (Some(493), Some(7293)));
    assert_eq!(taxed["line_items"][0]["totals"][2], json!({"type": "tax", "display_text": "Tax", "amount": 493}));
    let express = &taxed["fulfillment_options"][1];
    assert_eq!(
        express["totals"],
        json!([
            {"type": "fulfillment", "display_text": "Shipping", "amount": 1200},
            {"type": "tax", "display_text": "Tax", "amount": 87},
            {"type": "total", "display_text": "Total", "amount": 1287}
        ])
    );
    let id = taxed["id"].as_str().unwrap();
    let select = json!({"selected_fulfillment_options": [{"type": "shipping", "option_id": "fo_express", "item_ids": ["li_hh-001"]}]});
    let (_, express) = json_of(one.post(&format!("/{id}"), "express", &select).await).await;
    // 7.25 % of 6800 + 1200 = 580.
    assert_eq!((total(&express, "tax"), total(&express, "total")), (Some(580), Some(8580)));

    // A destination not listed pays none: no tax line at all.
    let hk = json!({"fulfillment_details": {"address": address("HK", "", "")}});
    let (_, untaxed) = json_of(one.post(&format!("/{id}"), "hk", &hk).await).await;
    assert_eq!(total(&untaxed, "tax"), None);
    assert_eq!(total(&untaxed, "total"), Some(6800 + 1200));
}

/// Discount codes we do not honour (all of them: we run no promotions) are never silently
/// ignored: each is a `discount_code_invalid` warning at its place in the request and a
/// `rejected` entry of the session's `discounts`; totals do not change and the session can
/// still be paid. An update's `discounts` replaces the codes (`[]` clears them); a code no
/// promotion could have is a 400 naming it.
#[tokio::test]
async fn acp_discount_codes_are_answered_invalid_never_ignored() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let body = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
        "fulfillment_details": {"address": address("US", "CA", "94103")},
        "discounts": {"codes": ["SAVE20"]}, "coupons": ["OLD5"]});
    let (status, session) = json_of(one.post("", "codes", &body).await).await;
    assert_eq!((status, session["status"].as_str()), (StatusCode::CREATED, Some("ready_for_payment")), "{session}");
    let warnings: Vec<(&str, &str, &str)> = session["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["type"].as_str().unwrap(), m["code"].as_str().unwrap(), m["param"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(
        warnings,
        [
            ("warning", "discount_code_invalid", "$.discounts.codes[0]"),
            ("warning", "discount_code_invalid", "$.coupons[0]")
        ]
    );
    assert_eq!(session["discounts"]["codes"], json!(["SAVE20", "OLD5"]));
    let rejected = &session["discounts"]["rejected"];
    assert_eq!((&rejected[0]["code"], &rejected[0]["reason"]), (&json!("SAVE20"), &json!("discount_code_invalid")));
    assert_eq!(rejected[1]["code"], "OLD5");
    assert_eq!(total(&session, "total"), Some(6800), "no discount applied");
    let id = session["id"].as_str().unwrap().to_string();

    // `discounts: {codes: []}` clears those codes; the coupon stays until `coupons` changes.
    let (_, cleared) = json_of(one.post(&format!("/{id}"), "clear", &json!({"discounts": {"codes": []}})).await).await;
    assert_eq!(cleared["discounts"]["codes"], json!(["OLD5"]), "{cleared}");
    let (_, none) = json_of(one.post(&format!("/{id}"), "clear-all", &json!({"coupons": []})).await).await;
    assert!(none.get("discounts").is_none() && none["messages"] == json!([]), "{none}");

    let long = "X".repeat(65);
    let (status, error) =
        json_of(one.post(&format!("/{id}"), "long", &json!({"discounts": {"codes": ["OK", long]}})).await).await;
    assert_eq!((status, error["param"].as_str()), (StatusCode::BAD_REQUEST, Some("$.discounts.codes[1]")), "{error}");
    let (status, error) = json_of(
        one.post(
            "",
            "unknown-field",
            &json!({"line_items": [{"id": "hh-001"}],
        "currency": "usd", "capabilities": {}, "discounts": {"codes": [], "auto": true}}),
        )
        .await,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{error}");
}

/// Issue 39 item 9: a session's key was stored as `{id} {key}`, and both may hold spaces, so
/// (`S a`, `b`) and (`S`, `a b`) shared one row: the second request was answered with the
/// first's stored answer. Each pair now has a row of its own.
#[tokio::test]
async fn session_ids_and_keys_with_spaces_never_share_an_idempotency_row() {
    let app = acp_app().await;
    let one = Platform::new(&app, KEY_ONE);
    let (_, created) = json_of(one.post("", "spaces", &create_body("hh-001")).await).await;
    let id = created["id"].as_str().expect("an id").to_string();
    let body = json!({"order_notes": "Happy birthday!"});

    // No session is called `<id> a`: 404, stored under its key.
    let (status, error) = json_of(one.post(&format!("/{id} a"), "b", &body).await).await;
    assert_eq!((status, error["code"].as_str()), (StatusCode::NOT_FOUND, Some("session_not_found")));
    // The real session with the key `a b`, the same body: its own update, not that 404 replayed.
    let response = one.post(&format!("/{id}"), "a b", &body).await;
    assert!(response.headers().get("idempotent-replayed").is_none(), "{:?}", response.headers());
    let (status, updated) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["id"], id.as_str());
    // And each pair still replays its own answer.
    let again = one.post(&format!("/{id} a"), "b", &body).await;
    assert_eq!(again.status(), StatusCode::NOT_FOUND);
    let again = one.post(&format!("/{id}"), "a b", &body).await;
    assert_eq!(again.headers().get("idempotent-replayed").map(|v| v.as_bytes()), Some(&b"true"[..]));
    assert_eq!(json_of(again).await, (StatusCode::OK, updated));
}
