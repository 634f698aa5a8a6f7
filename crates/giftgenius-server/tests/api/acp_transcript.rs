//! The proof of issue 25, as tests that assert every step and, with
//! `GIFTGENIUS_ACP_TRANSCRIPT_DIR=<folder>`, write what went over the wire (docs/acp.md
//! "Transcripts"): a full ACP purchase over REST and over the MCP binding — create → update with
//! the address → delegate payment at the real sandbox provider → complete → the operator ships →
//! the `order_update` webhook, its `Merchant-Signature` verified by a real receiver — and the
//! idempotency answers (replay, conflict, in flight, key required, a 5xx not stored).

use std::time::Duration;

use giftgenius_commerce::clock::Clock;
use giftgenius_sandbox_pay::api::{ChargeStatus, IDEMPOTENCY_KEY_HEADER};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::acp::{KEY_ONE, VERSION, address, total};
use crate::acp_complete::{APPROVES, complete_body, delegate_for};
use crate::operator::file_with;
use crate::support::{Exchange, Receiver, TestApp, Transcript, spawn_app_with};

const WEBHOOK_SECRET: &str = "whsec_transcript_0123456789abcdef";
const OPERATOR_TOKEN: &str = "op_transcript_0123456789abcdef0123456789abcd";
const TRACKING_URL: &str = "https://ctt.example/track?n=RR123456789PT";

/// An app with platform `one` (webhooks to a real receiver) and the operator's API.
struct Shop {
    app: TestApp,
    receiver: Receiver,
    http: reqwest::Client,
    _files: (tempfile::TempDir, tempfile::NamedTempFile),
}

async fn shop() -> Shop {
    let receiver = Receiver::start(WEBHOOK_SECRET, Clock::System).await;
    let dir = tempfile::tempdir().unwrap();
    let platforms = dir.path().join("platforms.json");
    let list =
        json!([{"name": "one", "api_key": KEY_ONE, "webhook_url": receiver.url, "webhook_secret": WEBHOOK_SECRET}]);
    std::fs::write(&platforms, list.to_string()).unwrap();
    let token = file_with(OPERATOR_TOKEN);
    let app = spawn_app_with(|config| {
        config.acp_platforms = Some(platforms.clone());
        config.operator_token_file = Some(token.path().to_path_buf());
        config.webhook_poll_ms = 20;
    })
    .await;
    receiver.set_clock(app.clock.clone());
    Shop { app, receiver, http: reqwest::Client::new(), _files: (dir, token) }
}

/// A transcript that hides this test's secrets.
fn transcript(shop: &Shop, name: &str, title: &str, intro: &str) -> Transcript {
    let transcript = Transcript::new(name, title, intro);
    transcript.redact(KEY_ONE, "[platform key]");
    transcript.redact(OPERATOR_TOKEN, "[operator token]");
    transcript.redact(WEBHOOK_SECRET, "[webhook secret]");
    transcript.redact(&shop.app.local_url, "https://giftgenius.example");
    transcript.redact(&shop.app.base_url, "https://giftgenius.example");
    transcript
}

impl Shop {
    /// A request of platform `one` to `/acp/checkout_sessions{path}`.
    fn acp(&self, method: reqwest::Method, path: &str, key: Option<&str>, request_id: &str) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .request(method, format!("{}/acp/checkout_sessions{path}", self.app.local_url))
            .bearer_auth(KEY_ONE)
            .header("API-Version", VERSION)
            .header("Request-Id", request_id);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        request
    }

    fn acp_post(&self, path: &str, key: Option<&str>, request_id: &str, body: &Value) -> reqwest::RequestBuilder {
        self.acp(reqwest::Method::POST, path, key, request_id).json(body)
    }

    /// delegate_payment at the sandbox provider, as the platform calls it.
    async fn delegate(&self, transcript: &Transcript, session: &str, amount: i64) -> String {
        let request = self
            .app
            .provider
            .delegate_request()
            .header(IDEMPOTENCY_KEY_HEADER, format!("dp-{session}"))
            .header("Request-Id", "req_platform_dp_1")
            .json(&delegate_for(session, amount, APPROVES));
        let delegated = transcript
            .send(request, (Some("delegate:DelegatePaymentRequest"), Some("delegate:DelegatePaymentResponse")))
            .await;
        assert_eq!(delegated.status, StatusCode::CREATED, "{}", delegated.body);
        let token = delegated.body["id"].as_str().expect("a vault token").to_string();
        assert!(token.starts_with("vt_"), "{token}");
        assert_eq!(delegated.body["metadata"]["merchant_id"], "giftgenius");
        token
    }

    /// The operator ships `order` (`POST /operator/orders/{id}/ship`).
    async fn ship(&self, transcript: &Transcript, order: &str) {
        let request = self
            .http
            .post(format!("{}/operator/orders/{order}/ship", self.app.local_url))
            .bearer_auth(OPERATOR_TOKEN)
            .json(&json!({"carrier": "CTT", "tracking_number": "RR123456789PT", "tracking_url": TRACKING_URL}));
        let shipped = transcript.send(request, (None, None)).await;
        assert_eq!(shipped.status, StatusCode::OK, "{}", shipped.body);
        assert_eq!(
            (shipped.body["changed"].as_bool(), shipped.body["order"]["status"].as_str()),
            (Some(true), Some("shipped"))
        );
    }

    /// Waits for the order's webhook of `status` (verified, answered 200), writes it down, returns its body.
    async fn webhook(&self, transcript: &Transcript, kind: &str, status: &str) -> Value {
        let is_it = |s: &crate::support::Seen| s.body["type"] == kind && s.body["data"]["status"] == status;
        let seen = self.receiver.wait_until(&format!("{kind} {status}"), |seen| seen.iter().any(is_it)).await;
        let event = seen.into_iter().find(is_it).unwrap();
        assert!(event.signature_ok, "the receiver verified Merchant-Signature: {event:?}");
        assert_eq!(event.answered, 200);
        transcript.webhook(&event, "[webhook secret]");
        event.body
    }

    /// A ready session for one hh-001 ($68, to the US) and a vault token paying it (shown as
    /// `shown_as`): the session's id and the token.
    async fn ready_to_pay(&self, t: &Transcript, key: &str, request_id: &str, shown_as: &str) -> (String, String) {
        let body = json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
            "fulfillment_details": {"address": address("US", "CA", "94103")}});
        let ready =
            t.send(self.acp_post("", Some(key), request_id, &body), (None, Some("checkout:CheckoutSession"))).await;
        check_session(&ready, StatusCode::CREATED, "ready_for_payment");
        let session = ready.body["id"].as_str().unwrap().to_string();
        let token = self.delegate(t, &session, 6800).await;
        t.redact(&token, shown_as);
        (session, token)
    }

    /// The order's permalink tag, which is a capability: hidden in the transcript.
    fn hide_permalink(&self, transcript: &Transcript, order: &Value) {
        let permalink = order["permalink_url"].as_str().expect("a permalink");
        let tag = permalink.rsplit_once('.').map(|(_, tag)| tag).expect("a tagged permalink");
        transcript.redact(tag, "permalink-tag-redacted");
    }
}

fn check_session(exchange: &Exchange, status: StatusCode, session_status: &str) {
    assert_eq!(
        (exchange.status, exchange.body["status"].as_str()),
        (status, Some(session_status)),
        "{}",
        exchange.body
    );
}

fn check_echo(exchange: &Exchange, request_id: &str, key: Option<&str>) {
    assert_eq!(exchange.header("request-id"), Some(request_id));
    assert_eq!(exchange.header("idempotency-key"), key);
}

fn create_request() -> Value {
    json!({"line_items": [{"id": "hh-001"}], "currency": "usd", "capabilities": {},
        "buyer": {"first_name": "Ana", "last_name": "Lima", "email": "ana@example.com"},
        "order_notes": "Happy birthday, Ana!", "locale": "en-US"})
}

fn update_request() -> Value {
    json!({"fulfillment_details": {"name": "Ana Lima", "email": "ana@example.com",
        "address": address("US", "CA", "94103")}})
}

#[tokio::test]
async fn acp_transcript_of_a_purchase_over_rest() {
    let shop = shop().await;
    let t = transcript(
        &shop,
        "acp-transcript-rest",
        "A full ACP purchase over REST",
        "Recorded by `acp_transcript_of_a_purchase_over_rest` (crates/giftgenius-server/tests/api/acp_transcript.rs) \
         against the real server over HTTP, the real sandbox provider process and a real webhook receiver. \
         Secrets are redacted (bearer keys, card number and CVC, the vault token, the permalink's tag); the host \
         is shown as https://giftgenius.example; times are the test's manual clock (the provider's are real).",
    );

    t.step("0. Discovery", "Public, no key.");
    let discovery = shop.http.get(format!("{}/.well-known/acp.json", shop.app.local_url));
    let discovered = t.send(discovery, (None, Some("checkout:DiscoveryResponse"))).await;
    assert_eq!(discovered.status, StatusCode::OK);
    assert_eq!(discovered.body["transports"], json!(["rest", "mcp"]));

    t.step("1. Create the checkout session", "No address yet: the session says what is missing.");
    let created = t
        .send(
            shop.acp_post("", Some("idem-create-1"), "req_platform_1", &create_request()),
            (Some("checkout:CheckoutSessionCreateRequest"), Some("checkout:CheckoutSession")),
        )
        .await;
    check_session(&created, StatusCode::CREATED, "not_ready_for_payment");
    check_echo(&created, "req_platform_1", Some("idem-create-1"));
    let id = created.body["id"].as_str().unwrap().to_string();

    t.step("2. Update with the address", "Options and totals are recomputed; standard shipping is selected.");
    let updated = t
        .send(
            shop.acp_post(&format!("/{id}"), Some("idem-update-1"), "req_platform_2", &update_request()),
            (Some("checkout:CheckoutSessionUpdateRequest"), Some("checkout:CheckoutSession")),
        )
        .await;
    check_session(&updated, StatusCode::OK, "ready_for_payment");
    check_echo(&updated, "req_platform_2", Some("idem-update-1"));
    let amount = total(&updated.body, "total").expect("a total");
    assert_eq!(amount, 6800);

    t.step(
        "3. Delegate payment at the sandbox provider",
        "The platform vaults the card with the provider (its own delegate-payment key) for this session, \
         our merchant and at most the session's total; it gets a one-time vault token.",
    );
    let token = shop.delegate(&t, &id, amount).await;
    t.redact(&token, "vt_[redacted]");

    t.step("4. Complete", "The token pays the session: one charge, one order.");
    let completed = t
        .send(
            shop.acp_post(
                &format!("/{id}/complete"),
                Some("idem-complete-1"),
                "req_platform_3",
                &complete_body(&token),
            ),
            (Some("checkout:CheckoutSessionCompleteRequest"), Some("checkout:CheckoutSession")),
        )
        .await;
    check_session(&completed, StatusCode::OK, "completed");
    check_echo(&completed, "req_platform_3", Some("idem-complete-1"));
    let order = completed.body["order"].clone();
    assert_eq!(order["status"], "confirmed");
    shop.hide_permalink(&t, &order);
    let money: Vec<i64> = shop
        .app
        .provider
        .ledger()
        .await
        .into_iter()
        .filter(|c| c.status == ChargeStatus::Succeeded)
        .map(|c| c.amount)
        .collect();
    assert_eq!(money, [6800], "one charge in the provider's ledger");
    t.note("The provider's ledger holds exactly one succeeded charge of 6800 (counted by the test).");

    t.step("5. The platform's webhook: order_create", "");
    let created_event = shop.webhook(&t, "order_create", "confirmed").await;
    assert_eq!(created_event["data"], order, "the event carries the order the complete answered");

    let order_id = order["id"].as_str().unwrap();
    t.step("6. The operator ships the order", "The operator's API (`giftgenius-server orders ship` does the same).");
    shop.ship(&t, order_id).await;

    t.step("7. The platform's webhook: order_update (shipped)", "");
    let shipped = shop.webhook(&t, "order_update", "shipped").await;
    let fulfillment = &shipped["data"]["fulfillments"][0];
    assert_eq!(
        (
            fulfillment["carrier"].as_str(),
            fulfillment["tracking_number"].as_str(),
            fulfillment["tracking_url"].as_str()
        ),
        (Some("CTT"), Some("RR123456789PT"), Some(TRACKING_URL))
    );
    assert_eq!(shipped["data"]["id"], order["id"]);

    t.step("8. The session afterwards", "GET shows the completed session with the shipped order.");
    let got = t
        .send(
            shop.acp(reqwest::Method::GET, &format!("/{id}"), None, "req_platform_4"),
            (None, Some("checkout:CheckoutSession")),
        )
        .await;
    check_session(&got, StatusCode::OK, "completed");
    assert_eq!(got.body["order"]["status"], "shipped");
    check_echo(&got, "req_platform_4", None);

    let markdown = t.finish();
    assert!(!markdown.contains(KEY_ONE) && !markdown.contains(&token) && !markdown.contains(APPROVES));
}

/// The binding's endpoint, spoken to in raw JSON-RPC with the platform's key (the transcript
/// shows exactly what an agent sends).
struct Binding<'a> {
    shop: &'a Shop,
    session: Option<String>,
    next_id: u64,
}

impl Binding<'_> {
    fn request(&mut self, message: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .shop
            .http
            .post(format!("{}/acp/mcp", self.shop.app.local_url))
            .bearer_auth(KEY_ONE)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(message);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session.as_str());
        }
        request
    }

    async fn open(&mut self, t: &Transcript) {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "transcript-platform", "version": "1.0"}}});
        let answer = t.send(self.request(&init), (None, None)).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        self.session = answer.header("mcp-session-id").map(str::to_string);
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let answer = t.send(self.request(&done), (None, None)).await;
        assert!(answer.status.is_success());
    }

    /// `tools/call` of `tool`: the session in `structuredContent` (recorded as `kind`) and `_meta`.
    async fn call(&mut self, t: &Transcript, tool: &str, arguments: Value, kinds: (&str, &str)) -> (Value, Value) {
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let answer = t.send(self.request(&message), (None, None)).await;
        assert_eq!(answer.status, StatusCode::OK);
        let result = &answer.body["result"];
        assert_eq!(result["isError"], false, "{tool}: {}", answer.body);
        let session = result["structuredContent"].clone();
        let text = result["content"][0]["text"].as_str().expect("text content");
        assert_eq!(serde_json::from_str::<Value>(text).unwrap(), session, "the text is the session's JSON");
        if let Some(payload) = arguments.get("payload") {
            t.record(kinds.0, &format!("tools/call {tool} payload"), payload);
        }
        t.record(kinds.1, &format!("tools/call {tool} structuredContent"), &session);
        (session, result["_meta"]["giftgenius/acp"].clone())
    }

    /// `tools/call` of `tool` that must fail: the ACP Error in the JSON-RPC error's `data`.
    async fn call_error(&mut self, t: &Transcript, tool: &str, arguments: Value) -> Value {
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        let answer = t.send(self.request(&message), (None, None)).await;
        assert_eq!(
            (answer.status, answer.body["error"]["code"].as_i64()),
            (StatusCode::OK, Some(-32000)),
            "{}",
            answer.body
        );
        let data = answer.body["error"]["data"].clone();
        t.record("checkout:Error", &format!("tools/call {tool} error.data"), &data);
        data
    }
}

fn meta(key: Option<&str>, request_id: &str) -> Value {
    let mut meta = json!({"api_version": VERSION, "request_id": request_id});
    if let Some(key) = key {
        meta["idempotency_key"] = json!(key);
    }
    meta
}

#[tokio::test]
async fn acp_transcript_of_a_purchase_over_the_mcp_binding() {
    let shop = shop().await;
    let t = transcript(
        &shop,
        "acp-transcript-mcp",
        "A full ACP purchase over the MCP binding (`/acp/mcp`)",
        "Recorded by `acp_transcript_of_a_purchase_over_the_mcp_binding` \
         (crates/giftgenius-server/tests/api/acp_transcript.rs): raw JSON-RPC over Streamable HTTP with the \
         platform's bearer key, so the transcript shows exactly what an agent sends (SSE framing unwrapped: \
         each answer's `data:` JSON). Delegated payment stays REST at the provider (the binding has no \
         delegate tool); shipping is the operator's API; the webhooks are the same as REST's. Secrets redacted \
         as in the REST transcript.",
    );
    let mut binding = Binding { shop: &shop, session: None, next_id: 0 };
    t.step("0. Initialize", "The platform key is checked at the HTTP layer, before JSON-RPC.");
    binding.open(&t).await;

    let session_kinds = ("checkout:CheckoutSessionCreateRequest", "checkout:CheckoutSession");
    t.step("1. create_checkout_session", "`meta.idempotency_key` is required on create and complete.");
    let create = json!({"meta": meta(Some("mcp-create-1"), "req_mcp_1"), "payload": create_request()});
    let (created, facts) = binding.call(&t, "create_checkout_session", create, session_kinds).await;
    assert_eq!(created["status"], "not_ready_for_payment");
    assert_eq!((facts["http_status"].as_u64(), facts["idempotent_replayed"].as_bool()), (Some(201), Some(false)));
    let id = created["id"].as_str().unwrap().to_string();

    t.step("2. update_checkout_session with the address", "");
    let update = json!({"meta": meta(Some("mcp-update-1"), "req_mcp_2"), "id": id, "payload": update_request()});
    let kinds = ("checkout:CheckoutSessionUpdateRequest", "checkout:CheckoutSession");
    let (ready, _) = binding.call(&t, "update_checkout_session", update, kinds).await;
    assert_eq!(ready["status"], "ready_for_payment", "{ready}");
    let amount = total(&ready, "total").unwrap();

    t.step("3. Delegate payment at the sandbox provider (REST, as on the REST path)", "");
    let token = shop.delegate(&t, &id, amount).await;
    t.redact(&token, "vt_[redacted]");

    t.step(
        "4. complete_checkout_session without a key",
        "Refused before anything is charged: ACP errors are JSON-RPC -32000 with the ACP Error in `data`.",
    );
    let keyless = json!({"meta": meta(None, "req_mcp_3a"), "id": id, "payload": complete_body(&token)});
    let refused = binding.call_error(&t, "complete_checkout_session", keyless).await;
    assert_eq!(refused["code"], "idempotency_key_required");
    assert_eq!(shop.app.provider.charges().await, 0);

    t.step("5. complete_checkout_session", "");
    let complete =
        json!({"meta": meta(Some("mcp-complete-1"), "req_mcp_3"), "id": id, "payload": complete_body(&token)});
    let kinds = ("checkout:CheckoutSessionCompleteRequest", "checkout:CheckoutSessionWithOrder");
    let (completed, facts) = binding.call(&t, "complete_checkout_session", complete.clone(), kinds).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert_eq!(facts["http_status"], 200);
    let order = completed["order"].clone();
    shop.hide_permalink(&t, &order);

    t.step("6. The same complete again (a retry with the same key)", "Replayed: same order, nothing charged.");
    let (again, facts) = binding.call(&t, "complete_checkout_session", complete, kinds).await;
    assert_eq!((&again["order"]["id"], facts["idempotent_replayed"].as_bool()), (&order["id"], Some(true)));
    assert_eq!(shop.app.provider.charges().await, 1, "one charge");

    t.step("7. The platform's webhook: order_create", "");
    let event = shop.webhook(&t, "order_create", "confirmed").await;
    assert_eq!(event["data"], order);

    t.step("8. The operator ships the order", "");
    shop.ship(&t, order["id"].as_str().unwrap()).await;

    t.step("9. The platform's webhook: order_update (shipped)", "");
    let shipped = shop.webhook(&t, "order_update", "shipped").await;
    assert_eq!(shipped["data"]["fulfillments"][0]["tracking_number"], "RR123456789PT");

    t.step("10. get_checkout_session", "");
    let get = json!({"meta": meta(None, "req_mcp_4"), "id": id});
    let (got, _) = binding.call(&t, "get_checkout_session", get, ("", "checkout:CheckoutSessionWithOrder")).await;
    assert_eq!(got["order"]["status"], "shipped");

    let markdown = t.finish();
    assert!(!markdown.contains(KEY_ONE) && !markdown.contains(&token) && !markdown.contains(APPROVES));
}

#[tokio::test]
async fn acp_transcript_of_the_idempotency_answers() {
    let shop = shop().await;
    let t = transcript(
        &shop,
        "acp-idempotency",
        "ACP idempotency: the answers",
        "Recorded by `acp_transcript_of_the_idempotency_answers` (crates/giftgenius-server/tests/api/acp_transcript.rs) \
         over real HTTP. Keys are scoped to platform + method + path (+ the session id). \"Same body\" is the \
         RFC's semantic equality: key order and `1` vs `1.0` do not matter, `null` vs absent does.",
    );
    let body = json!({"line_items": [{"id": "hh-001", "unit_amount": 6800}], "currency": "usd", "capabilities": {}});
    // The same object with its keys in another order and the amount written as a float.
    let reordered =
        r#"{"capabilities": {}, "currency": "usd", "line_items": [{"unit_amount": 6800.0, "id": "hh-001"}]}"#;

    t.step("1. A create, key `idem-1`", "");
    let first =
        t.send(shop.acp_post("", Some("idem-1"), "req_i1", &body), (None, Some("checkout:CheckoutSession"))).await;
    assert_eq!(first.status, StatusCode::CREATED);
    assert_eq!(first.header("idempotent-replayed"), None);
    let id = first.body["id"].clone();
    t.row("create, key `idem-1`", &format!("new session `{}`", id.as_str().unwrap()), "201", "—");

    t.step("2. The same key, the same body written differently", "Keys reordered, `6800` written `6800.0`.");
    let request = shop
        .acp(reqwest::Method::POST, "", Some("idem-1"), "req_i2")
        .header("content-type", "application/json")
        .body(reordered);
    let replay = t.send(request, (None, Some("checkout:CheckoutSession"))).await;
    assert_eq!((replay.status, replay.header("idempotent-replayed")), (StatusCode::CREATED, Some("true")));
    assert_eq!(replay.body, first.body, "the stored answer");
    check_echo(&replay, "req_i2", Some("idem-1"));
    t.row(
        "same key, same body (keys reordered, `6800.0`)",
        "the stored answer (same session), `Idempotent-Replayed: true`, this request's `Request-Id`",
        "201",
        "replay keeps the stored status",
    );

    t.step("3. The same key, `null` where the first had nothing", "");
    let mut with_null = body.clone();
    with_null["order_notes"] = Value::Null;
    let null = t.send(shop.acp_post("", Some("idem-1"), "req_i3", &with_null), (None, Some("checkout:Error"))).await;
    assert_eq!(
        (null.status, null.body["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("idempotency_conflict"))
    );
    t.row("same key, `\"order_notes\": null` added", "`idempotency_conflict`", "422", "`null` ≠ absent");

    t.step("4. The same key, another body", "");
    let other = json!({"line_items": [{"id": "hh-002"}], "currency": "usd", "capabilities": {}});
    let conflict = t.send(shop.acp_post("", Some("idem-1"), "req_i4", &other), (None, Some("checkout:Error"))).await;
    assert_eq!(
        (conflict.status, conflict.body["type"].as_str(), conflict.body["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_request"), Some("idempotency_conflict"))
    );
    check_echo(&conflict, "req_i4", Some("idem-1"));
    t.row("same key, another item", "`idempotency_conflict`", "422", "not stored; the key keeps its first answer");

    t.step("5. No key", "");
    let missing = t.send(shop.acp_post("", None, "req_i5", &body), (None, Some("checkout:Error"))).await;
    assert_eq!(
        (missing.status, missing.body["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("idempotency_key_required"))
    );
    t.row("create without `Idempotency-Key`", "`idempotency_key_required`", "400", "nothing created");

    let (session, token) = shop.ready_to_pay(&t, "idem-ready", "req_i6", "vt_[redacted]").await;

    t.step(
        "6. The same key while the first request still runs",
        "The provider holds the charge, so the first complete is still running when the second arrives; \
         the second's exchange is written first because it is answered first.",
    );
    shop.app.provider.hold().await;
    let path = format!("/{session}/complete");
    let pay = complete_body(&token);
    let first_complete =
        t.send(shop.acp_post(&path, Some("idem-pay"), "req_i7", &pay), (None, Some("checkout:CheckoutSession")));
    let second = async {
        shop.app.provider.wait_for("the held charge", |ledger| !ledger.is_empty()).await;
        let busy = t.send(shop.acp_post(&path, Some("idem-pay"), "req_i8", &pay), (None, Some("checkout:Error"))).await;
        shop.app.provider.release().await;
        busy
    };
    let (paid, busy) = tokio::join!(first_complete, second);
    assert_eq!((busy.status, busy.body["code"].as_str()), (StatusCode::CONFLICT, Some("idempotency_in_flight")));
    let retry_after: u64 = busy.header("retry-after").expect("Retry-After").parse().expect("seconds");
    assert!(retry_after >= 1);
    check_session(&paid, StatusCode::OK, "completed");
    shop.hide_permalink(&t, &paid.body["order"]);
    t.row(
        "complete, key `idem-pay`, while the same key's complete is charging",
        "`idempotency_in_flight`, `Retry-After`",
        "409",
        "not stored",
    );
    t.row("(the first complete, once the provider answers)", "completed session with its order", "200", "one charge");

    t.step("7. A provider failure (5xx) is not stored", "A second session; the provider fails the first charge once.");
    let (second_session, second_token) = shop.ready_to_pay(&t, "idem-ready-2", "req_i9", "vt_[redacted-2]").await;
    shop.app.provider.set_faults("5xx*1").await;
    let path = format!("/{second_session}/complete");
    let failed = t
        .send(
            shop.acp_post(&path, Some("idem-5xx"), "req_i10", &complete_body(&second_token)),
            (None, Some("checkout:Error")),
        )
        .await;
    assert_eq!(
        (failed.status, failed.body["type"].as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, Some("service_unavailable"))
    );
    assert!(failed.header("retry-after").is_some());
    t.row(
        "complete, key `idem-5xx`, the provider answers 503",
        "`service_unavailable`, `Retry-After`",
        "503",
        "not stored",
    );
    shop.app.clock.advance(Duration::from_secs(60));
    let t_retry = "8. The same key again, a minute later";
    t.step(t_retry, "A fresh request (no `Idempotent-Replayed`): it resumes the same order and charges once.");
    let resumed = t
        .send(
            shop.acp_post(&path, Some("idem-5xx"), "req_i11", &complete_body(&second_token)),
            (None, Some("checkout:CheckoutSession")),
        )
        .await;
    check_session(&resumed, StatusCode::OK, "completed");
    shop.hide_permalink(&t, &resumed.body["order"]);
    assert_eq!(resumed.header("idempotent-replayed"), None, "a 5xx was not stored, so this is no replay");
    t.row("the same key and body after the 503", "completed session (not a replay)", "200", "the 5xx was never stored");

    t.step("9. The first complete's key once more", "");
    let replayed =
        t.send(shop.acp_post(&format!("/{session}/complete"), Some("idem-pay"), "req_i12", &pay), (None, None)).await;
    assert_eq!((replayed.status, replayed.header("idempotent-replayed")), (StatusCode::OK, Some("true")));
    assert_eq!(replayed.body["order"]["id"], paid.body["order"]["id"]);
    t.row(
        "complete, key `idem-pay`, afterwards",
        "the stored answer, same order, `Idempotent-Replayed: true`",
        "200",
        "nothing charged",
    );
    assert_eq!(shop.app.provider.charges().await, 2, "one charge per session");
    t.note("The provider's ledger holds exactly two succeeded charges, one per session (counted by the test).");
    t.finish();
}

/// The order's status page (its ACP `permalink_url`) shows the shipment once the operator
/// ships — when, the carrier, the tracking number linking to the carrier's page — in English,
/// Spanish and Portuguese; before shipping it shows none.
#[tokio::test]
async fn the_order_page_shows_carrier_and_tracking_once_shipped_in_three_languages() {
    let shop = shop().await;
    let t = Transcript::new("unused", "not written", "this test writes no transcript");
    let created = t.send(shop.acp_post("", Some("c"), "r1", &create_request()), (None, None)).await;
    let id = created.body["id"].as_str().unwrap().to_string();
    t.send(shop.acp_post(&format!("/{id}"), Some("u"), "r2", &update_request()), (None, None)).await;
    let token = shop.delegate(&t, &id, 6800).await;
    let done =
        t.send(shop.acp_post(&format!("/{id}/complete"), Some("p"), "r3", &complete_body(&token)), (None, None)).await;
    check_session(&done, StatusCode::OK, "completed");
    let permalink =
        done.body["order"]["permalink_url"].as_str().unwrap().replacen(&shop.app.base_url, &shop.app.local_url, 1);
    let page = |language: &'static str| {
        let request = shop.http.get(&permalink).header("Accept-Language", language);
        async move { request.send().await.unwrap().text().await.unwrap() }
    };
    let before = page("en").await;
    assert!(before.contains("data-status=\"paid\"") && !before.contains("data-shipment"), "{before}");

    shop.ship(&t, done.body["order"]["id"].as_str().unwrap()).await;
    let link = format!("<a href=\"{TRACKING_URL}\" rel=\"noopener noreferrer\" data-tracking>RR123456789PT</a>");
    for (language, html_lang, shipped) in
        [("en-US", "en", "Shipped"), ("es-ES", "es", "Enviado"), ("pt-BR", "pt", "Enviado")]
    {
        let html = page(language).await;
        assert!(html.contains(&format!("<html lang=\"{html_lang}\"")), "{language}: {html}");
        assert!(html.contains("data-status=\"shipped\""), "{language}: {html}");
        let shipment =
            html.split("<dd data-shipment>").nth(1).and_then(|s| s.split("</dd>").next()).expect("a shipment line");
        assert!(html.contains(&format!("<dt>{shipped}</dt><dd data-shipment>")), "{language}: {html}");
        assert!(shipment.contains(" · CTT · ") && shipment.ends_with(&link), "{language}: {shipment}");
    }
}
