//! A feed receiver, as ChatGPT's shopping search or another agent runs one: a real HTTP server
//! on 127.0.0.1 in the test process answering `PATCH /feeds/{id}/products`. It checks every
//! request as a receiver must (its feed id, the bearer token, JSON), validates the body against
//! the `UpsertProductsRequest` JSON Schema of our closed feed types (the spec's own schema is
//! checked out of tree: with `GG_FEED_BODIES_DIR` set, each valid body is also written there
//! for `scripts/check-feed-against-spec.py --upserts`), keeps the latest state of every
//! product, and answers as the test scripts it (a status a number of times), else `{"id",
//! "accepted": true}`. A request is recorded before it is answered.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::patch;
use giftgenius_types::feed::{FeedListing, FeedUpsert};
use serde_json::{Value, json};

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Upsert {
    pub feed_id: String,
    /// The products' ids, in the body's order.
    pub ids: Vec<String>,
    /// What it was answered.
    pub answered: u16,
    /// Why it was refused, when it was (a bad token, an invalid body).
    pub refused: Option<String>,
}

struct Inner {
    feed_id: String,
    token: String,
    script: VecDeque<u16>,
    /// Sent with every 429 and 503, when set.
    retry_after: Option<u64>,
    seen: Vec<Upsert>,
    /// Every product as last accepted, by id.
    products: BTreeMap<String, FeedListing>,
    /// How many times each product was accepted.
    times: BTreeMap<String, u32>,
    validator: Arc<jsonschema::Validator>,
    bodies_dir: Option<std::path::PathBuf>,
}

/// The receiver; it serves until the test's runtime ends.
#[derive(Clone)]
pub struct FeedReceiver {
    /// Its base URL (what `--feed-receivers` gives as `url`).
    pub url: String,
    pub feed_id: String,
    pub token: String,
    inner: Arc<Mutex<Inner>>,
}

impl FeedReceiver {
    /// On a free port.
    pub async fn start(feed_id: &str, token: &str) -> FeedReceiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the feed receiver");
        Self::serve(listener, feed_id, token)
    }

    /// On `port` (one a server was configured with while nobody listened there).
    pub async fn start_on(port: u16, feed_id: &str, token: &str) -> FeedReceiver {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind the feed receiver's port");
        Self::serve(listener, feed_id, token)
    }

    fn serve(listener: tokio::net::TcpListener, feed_id: &str, token: &str) -> FeedReceiver {
        let url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let schema = serde_json::to_value(schemars::schema_for!(FeedUpsert)).expect("the schema serializes");
        let validator = Arc::new(jsonschema::draft202012::new(&schema).expect("the schema compiles"));
        let bodies_dir = std::env::var_os("GG_FEED_BODIES_DIR").map(std::path::PathBuf::from);
        let inner = Arc::new(Mutex::new(Inner {
            feed_id: feed_id.to_string(),
            token: token.to_string(),
            script: VecDeque::new(),
            retry_after: None,
            seen: Vec::new(),
            products: BTreeMap::new(),
            times: BTreeMap::new(),
            validator,
            bodies_dir,
        }));
        let router = Router::new().route("/v1/feeds/{id}/products", patch(receive)).with_state(inner.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        FeedReceiver { url, feed_id: feed_id.to_string(), token: token.to_string(), inner }
    }

    /// The next valid requests are answered with `statuses`, in order; after them, 200.
    pub fn script(&self, statuses: impl IntoIterator<Item = u16>) {
        self.inner.lock().unwrap().script.extend(statuses);
    }

    /// Every 429 and 503 from now on says `Retry-After: seconds`.
    pub fn retry_after(&self, seconds: u64) {
        self.inner.lock().unwrap().retry_after = Some(seconds);
    }

    /// Every request so far, in arrival order.
    pub fn seen(&self) -> Vec<Upsert> {
        self.inner.lock().unwrap().seen.clone()
    }

    /// Every product as last accepted.
    pub fn products(&self) -> BTreeMap<String, FeedListing> {
        self.inner.lock().unwrap().products.clone()
    }

    /// How many times product `id` was accepted.
    pub fn times(&self, id: &str) -> u32 {
        self.inner.lock().unwrap().times.get(id).copied().unwrap_or(0)
    }

    /// The products once `done` holds for them (polled every 20 ms, at most 30 s).
    pub async fn wait_until(
        &self,
        what: &str,
        done: impl Fn(&BTreeMap<String, FeedListing>) -> bool,
    ) -> BTreeMap<String, FeedListing> {
        for _ in 0..1500 {
            let products = self.products();
            if done(&products) {
                return products;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the feed receiver never saw {what}: {} products, requests {:#?}", self.products().len(), self.seen());
    }

    /// The `--feed-receivers` file naming this receiver `name`, with its token file beside it.
    pub fn receivers_file(&self, name: &str) -> tempfile::TempDir {
        receivers_file(name, &self.url, &self.feed_id, &self.token)
    }
}

/// A `--feed-receivers` file (in a folder of its own, `receivers.json`) naming one receiver.
pub fn receivers_file(name: &str, url: &str, feed_id: &str, token: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("feed.token"), format!("{token}\n")).expect("write the token");
    let entry = json!([{"name": name, "url": url, "feed_id": feed_id, "token_file": "feed.token"}]);
    std::fs::write(dir.path().join("receivers.json"), entry.to_string()).expect("write the receivers");
    dir
}

async fn receive(
    State(inner): State<Arc<Mutex<Inner>>>,
    Path(feed_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut inner = inner.lock().unwrap();
    let bearer = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or("");
    let parsed: Result<Value, _> = serde_json::from_slice(&body);
    let refused = if feed_id != inner.feed_id {
        Some((StatusCode::NOT_FOUND, "feed_not_found".to_string()))
    } else if bearer != format!("Bearer {}", inner.token) {
        Some((StatusCode::UNAUTHORIZED, "bad token".to_string()))
    } else if headers.get("content-type").and_then(|v| v.to_str().ok()) != Some("application/json") {
        Some((StatusCode::UNSUPPORTED_MEDIA_TYPE, "not JSON".to_string()))
    } else {
        match &parsed {
            Err(e) => Some((StatusCode::BAD_REQUEST, format!("unreadable: {e}"))),
            Ok(value) => {
                let errors: Vec<String> = inner.validator.iter_errors(value).map(|e| e.to_string()).collect();
                (!errors.is_empty()).then(|| (StatusCode::BAD_REQUEST, format!("invalid_product_payload: {errors:?}")))
            }
        }
    };
    if let Some((status, why)) = refused {
        inner.seen.push(Upsert { feed_id, ids: Vec::new(), answered: status.as_u16(), refused: Some(why.clone()) });
        return (status, axum::Json(json!({"type": "invalid_request", "code": "refused", "message": why})))
            .into_response();
    }
    let upsert: FeedUpsert = serde_json::from_value(parsed.expect("checked above")).expect("valid against the schema");
    let ids: Vec<String> = upsert.products.iter().map(|p| p.id().to_string()).collect();
    let status = inner.script.pop_front().unwrap_or(200);
    inner.seen.push(Upsert { feed_id: feed_id.clone(), ids, answered: status, refused: None });
    if !(200..300).contains(&status) {
        let mut response = (StatusCode::from_u16(status).expect("a status"), "try later").into_response();
        if let (429 | 503, Some(seconds)) = (status, inner.retry_after) {
            response.headers_mut().insert("retry-after", seconds.into());
        }
        return response;
    }
    if let Some(dir) = &inner.bodies_dir {
        // Numbered across every receiver of the test process (tests run side by side).
        static BODIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = BODIES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("upsert-{}-{n:05}.json", std::process::id());
        std::fs::write(dir.join(name), &body).expect("write the body");
    }
    for product in upsert.products {
        *inner.times.entry(product.id().to_string()).or_default() += 1;
        inner.products.insert(product.id().to_string(), product);
    }
    (StatusCode::OK, axum::Json(json!({"id": feed_id, "accepted": true}))).into_response()
}
