//! A webhook receiver for order events, as a platform runs one: a real HTTP server on 127.0.0.1
//! in the test process that checks every request the way docs/acp.md §10.2 tells receivers to
//! (the HMAC-SHA256 of `t.body` under its own secret, recomputed here with the `hmac` crate, not
//! with the server's code; `t` within 300 s of the test's clock, see `receive`), refuses a bad signature with
//! 401, and otherwise answers as the test scripts it: a status a number of times, or no answer
//! at all. Every request is recorded before it is answered, so a sender that dies right after
//! a 2xx still shows as delivered here.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use giftgenius_commerce::clock::Clock;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

/// How the receiver answers one request that passed the signature check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// This status (2xx: `{"received": true}`).
    Status(u16),
    /// This status with `Retry-After: <seconds>`.
    RetryAfter(u16, u64),
    /// Never answers (the sender's timeout ends it).
    Hang,
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Seen {
    pub request_id: String,
    /// The raw body, as signed.
    pub raw: String,
    pub body: Value,
    pub signature_ok: bool,
    /// The `Merchant-Signature` header as sent.
    pub signature: String,
    /// `t` of the signature.
    pub t: i64,
    pub timestamp_header: String,
    pub content_type: String,
    /// What it was answered (0: never).
    pub answered: u16,
}

struct Inner {
    secret: Vec<u8>,
    clock: Clock,
    script: VecDeque<Reply>,
    seen: Vec<Seen>,
    /// The clock's reading (s) when the last request arrived: see `receive`.
    last_arrival_s: Option<i64>,
}

/// The receiver; it serves until the test's runtime ends.
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

impl Receiver {
    /// On a free port, checking signatures with `secret` and times against `clock`.
    pub async fn start(secret: &str, clock: Clock) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the receiver");
        Self::serve(listener, secret, clock)
    }

    /// On `port` (one a sender was configured with while nobody listened there).
    pub async fn start_on(port: u16, secret: &str, clock: Clock) -> Receiver {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind the receiver's port");
        Self::serve(listener, secret, clock)
    }

    fn serve(listener: tokio::net::TcpListener, secret: &str, clock: Clock) -> Receiver {
        let url = format!("http://{}/order-events", listener.local_addr().expect("address"));
        let inner = Arc::new(Mutex::new(Inner {
            secret: secret.as_bytes().to_vec(),
            clock,
            script: VecDeque::new(),
            seen: Vec::new(),
            last_arrival_s: None,
        }));
        let router = Router::new().route("/order-events", post(receive)).with_state(inner.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Receiver { url, inner }
    }

    /// Checks `t` against `clock` from now on (an app's manual clock, once the app is built
    /// with this receiver's URL).
    pub fn set_clock(&self, clock: Clock) {
        let mut inner = self.inner.lock().unwrap();
        // The reading at hand-over counts as the previous arrival's: an event signed before a
        // test's first jump of the clock and arriving after it is fresh, as a later one is.
        inner.last_arrival_s = Some(clock.now_ms() / 1000);
        inner.clock = clock;
    }

    /// The next requests that pass the signature check are answered with `replies`, in order;
    /// after them, 200.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.lock().unwrap().script.extend(replies);
    }

    /// Every request so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.inner.lock().unwrap().seen.clone()
    }

    /// What the receiver accepted (signed right, answered 2xx), deduplicated by `Request-Id` as
    /// a receiver must: event id → body.
    pub fn accepted(&self) -> BTreeMap<String, Value> {
        self.seen()
            .into_iter()
            .filter(|s| s.signature_ok && (200..300).contains(&s.answered))
            .map(|s| (s.request_id, s.body))
            .collect()
    }

    /// Waits (at most 20 s, polling) until `done` holds for what was seen; returns it.
    pub async fn wait_until(&self, what: &str, done: impl Fn(&[Seen]) -> bool) -> Vec<Seen> {
        for _ in 0..1000 {
            let seen = self.seen();
            if done(&seen) {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the receiver never saw {what}: {:#?}", self.seen());
    }
}

/// `HMAC-SHA256(secret, t + "." + body)` checked against `v1`, in constant time.
fn verify(secret: &[u8], header: &str, body: &[u8]) -> Option<i64> {
    let (t, v1) = header.split_once(',')?;
    let t: i64 = t.strip_prefix("t=")?.parse().ok()?;
    let v1 = hex::decode(v1.strip_prefix("v1=")?).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).ok()?;
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    mac.verify_slice(&v1).ok().map(|()| t)
}

async fn receive(State(inner): State<Arc<Mutex<Inner>>>, headers: HeaderMap, body: Bytes) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let reply = {
        let mut inner = inner.lock().unwrap();
        let signature = header("merchant-signature");
        let verified = verify(&inner.secret, &signature, &body);
        // Fresh: signed no more than 300 s before the clock read at the previous arrival, and
        // no more than 300 s ahead of now. Against now alone, a test that moves a manual clock
        // forward in one jump while an attempt signed just before it is on the wire would see a
        // stale signature the sender could not have avoided; a real receiver's clock never jumps.
        let now_s = inner.clock.now_ms() / 1000;
        let floor_s = inner.last_arrival_s.unwrap_or(now_s).min(now_s);
        inner.last_arrival_s = Some(now_s);
        let fresh = verified.is_some_and(|t| t >= floor_s - 300 && t <= now_s + 300);
        let reply = if fresh { inner.script.pop_front().unwrap_or(Reply::Status(200)) } else { Reply::Status(401) };
        let answered = match reply {
            Reply::Status(code) | Reply::RetryAfter(code, _) => code,
            Reply::Hang => 0,
        };
        inner.seen.push(Seen {
            request_id: header("request-id"),
            raw: String::from_utf8_lossy(&body).into_owned(),
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
            signature_ok: fresh,
            signature: signature.clone(),
            t: verified.unwrap_or(0),
            timestamp_header: header("timestamp"),
            content_type: header("content-type"),
            answered,
        });
        reply
    };
    let request_id = header("request-id");
    match reply {
        Reply::Hang => std::future::pending().await,
        Reply::Status(401) => (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({"type": "invalid_request", "code": "invalid_signature",
                "message": "Webhook signature verification failed."})),
        )
            .into_response(),
        Reply::Status(code) => {
            let status = StatusCode::from_u16(code).expect("a status");
            (status, axum::Json(json!({"received": status.is_success(), "request_id": request_id}))).into_response()
        }
        Reply::RetryAfter(code, seconds) => {
            let status = StatusCode::from_u16(code).expect("a status");
            (status, [("retry-after", seconds.to_string())], "slow down").into_response()
        }
    }
}
