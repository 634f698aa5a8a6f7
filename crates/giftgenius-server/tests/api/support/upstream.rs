//! Upstream gift catalogs for suggest_gifts to ask: local HTTP servers that answer well, badly,
//! slowly or never, and a catalog URL nobody listens on.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::Path;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::{Value, json};

use super::ports::unused_port;

/// A gift only the remote catalogs sell, so a query for "juggling" shows whether they answered.
fn remote_gift(id: &str, title: &str) -> Value {
    json!({
        "id": id, "title": title, "description": "Three soft beanbag balls and a how-to booklet.",
        "price_cents": 1999, "tags": ["juggling", "games"], "age_min": 8, "age_max": 90,
        "relationships": ["friend", "sibling", "child"], "occasions": ["birthday", "just_because"], "stock": 5
    })
}

fn catalog(merchant: &str, gifts: Vec<Value>) -> Value {
    json!({"merchant": {"id": merchant, "name": "Remote Gifts"}, "gifts": gifts})
}

/// Local upstream catalogs on 127.0.0.1:0, one path per behaviour. They serve until the test's
/// runtime ends, whether or not this handle is kept.
///
/// - `/unavailable`: 503 with a body naming the reason.
/// - `/hang`: accepts the request and never answers.
/// - `/garbage`: JSON content type, a body that is not JSON.
/// - `/wrong-shape`: JSON that is not a catalog.
/// - `/slow/{n}`: after 400 ms, a catalog of merchant `slow-{n}` with one gift `slow{n}-001`.
/// - `/valid`: merchant `remote-gifts` with `rm-001`, an impostor of the built-in `hh-012`, and
///   a gift whose id is a path.
/// - `/counted/{n}`: after 200 ms, merchant `counted-{n}` with `counted{n}-001`; every fetch is
///   counted ([`Upstream::fetches`]), and so are the fetches running at once
///   ([`Upstream::most_at_once`]).
/// - `/together/{n}`: merchant `together-{n}` with `together{n}-001`, answered only once
///   [`TOGETHER`] `/together` requests are in at once: asked one after another, the first never
///   answers. Concurrency shown by an event, not by a stopwatch.
pub struct Upstream {
    base: String,
    counts: Counts,
}

/// How many `/together/{n}` requests must be in at once before any is answered.
pub const TOGETHER: usize = 3;

/// What `/counted/{n}` saw, and the `/together/{n}` requests in so far.
#[derive(Clone, Default)]
struct Counts {
    fetches: Arc<AtomicUsize>,
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    together: Arc<(AtomicUsize, tokio::sync::Notify)>,
}

impl Upstream {
    pub async fn start() -> Self {
        let counts = Counts::default();
        let seen = counts.clone();
        let gathered = counts.together.clone();
        let router = Router::new()
            .route(
                "/unavailable",
                get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "upstream is down for maintenance") }),
            )
            .route("/hang", get(|| async { std::future::pending::<String>().await }))
            .route("/garbage", get(|| async { ([("content-type", "application/json")], "{\"merchant\": <html>oops") }))
            .route("/wrong-shape", get(|| async { axum::Json(json!({"items": [1, 2, 3]})) }))
            .route(
                "/slow/{n}",
                get(|Path(n): Path<u32>| async move {
                    tokio::time::sleep(Duration::from_millis(400)).await;
                    axum::Json(catalog(
                        &format!("slow-{n}"),
                        vec![remote_gift(&format!("slow{n}-001"), &format!("Slow Juggling Set {n}"))],
                    ))
                }),
            )
            .route(
                "/counted/{n}",
                get(move |Path(n): Path<u32>| {
                    let seen = seen.clone();
                    async move {
                        seen.fetches.fetch_add(1, Ordering::SeqCst);
                        let now = seen.running.fetch_add(1, Ordering::SeqCst) + 1;
                        seen.most.fetch_max(now, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        seen.running.fetch_sub(1, Ordering::SeqCst);
                        axum::Json(catalog(
                            &format!("counted-{n}"),
                            vec![remote_gift(&format!("counted{n}-001"), &format!("Counted Juggling Set {n}"))],
                        ))
                    }
                }),
            )
            .route(
                "/together/{n}",
                get(move |Path(n): Path<u32>| {
                    let gathered = gathered.clone();
                    async move {
                        let (arrived, all_in) = &*gathered;
                        let waiting = all_in.notified();
                        if arrived.fetch_add(1, Ordering::SeqCst) + 1 >= TOGETHER {
                            all_in.notify_waiters();
                        } else {
                            waiting.await;
                        }
                        axum::Json(catalog(
                            &format!("together-{n}"),
                            vec![remote_gift(&format!("together{n}-001"), &format!("Together Juggling Set {n}"))],
                        ))
                    }
                }),
            )
            .route(
                "/valid",
                get(|| async {
                    axum::Json(catalog(
                        "remote-gifts",
                        vec![
                            remote_gift("rm-001", "Beanbag Juggling Set"),
                            // Takes a built-in gift's id: must never shadow the real one.
                            remote_gift("hh-012", "Impostor Juggling Set"),
                            // Not a plain id: skipped.
                            remote_gift("../etc/passwd", "Path Juggling Set"),
                        ],
                    ))
                    .into_response()
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind upstream");
        let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Self { base, counts }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Fetches of `/counted/{n}` so far.
    pub fn fetches(&self) -> usize {
        self.counts.fetches.load(Ordering::SeqCst)
    }

    /// The most `/counted/{n}` fetches that ever ran at once.
    pub fn most_at_once(&self) -> usize {
        self.counts.most.load(Ordering::SeqCst)
    }
}

/// A catalog URL that accepts connections and never answers.
pub async fn hanging_catalog() -> String {
    Upstream::start().await.url("/hang")
}

/// A catalog URL on a port nobody listens on: every connection is refused.
pub fn unreachable_catalog() -> String {
    format!("http://127.0.0.1:{}/catalog.json", unused_port())
}
