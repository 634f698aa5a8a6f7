//! The PostgreSQL store against a real server: each test gets a fresh database, and the
//! multi-replica tests start two apps on that one database, as behind a load balancer.
//!
//! They need a PostgreSQL server and fail, on every machine, when it is not reachable: the admin
//! URL that creates the databases is `GIFTGENIUS_TEST_POSTGRES_URL`, by default
//! `postgres://postgres@127.0.0.1:5432/postgres`.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use sqlx::{AssertSqlSafe, Connection, Executor, PgConnection};

use serde_json::json;

use crate::support::{
    SandboxPay, TOKEN, TestApp, call_as, charges, commit_args, commit_then_replay_charges_once, orders, prepare,
    spawn_app_on, successes_or_in_progress, varied_suggestion, with_recipient,
};

const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

fn admin_url() -> String {
    std::env::var("GIFTGENIUS_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_ADMIN_URL.to_string())
}

/// A fresh database `gg_test_<random>`, dropped (best-effort) when the guard goes out of scope,
/// also after a failed assertion. Declare it before the apps so it is dropped after them.
pub struct TestDb {
    name: String,
    pub url: String,
}

impl TestDb {
    /// The fresh database; fails the test when PostgreSQL is not reachable.
    pub async fn create() -> TestDb {
        let admin = admin_url();
        let connected = tokio::time::timeout(Duration::from_secs(5), PgConnection::connect(&admin)).await;
        let mut conn = match connected {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => unreachable_postgres(&admin, &e.to_string()),
            Err(_) => unreachable_postgres(&admin, "connection timed out after 5s"),
        };
        let name = format!("gg_test_{}", uuid::Uuid::new_v4().simple());
        conn.execute(AssertSqlSafe(format!("CREATE DATABASE {name}"))).await.expect("CREATE DATABASE");
        let _ = conn.close().await;
        let mut url = url::Url::parse(&admin).expect("the admin URL parses");
        url.set_path(&name);
        TestDb { name, url: url.to_string() }
    }
}

fn unreachable_postgres(admin: &str, error: &str) -> ! {
    panic!(
        "PostgreSQL is not reachable at {admin} ({error}). The postgres_* tests need a PostgreSQL server that \
         may create databases: start one there, or set GIFTGENIUS_TEST_POSTGRES_URL to the admin URL of yours \
         (default {DEFAULT_ADMIN_URL})."
    )
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let (admin, name) = (admin_url(), self.name.clone());
        // Drop cannot await, and may run inside the test's runtime: use a thread with its own.
        let dropped = std::thread::spawn(move || -> Result<(), String> {
            let runtime =
                tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            runtime.block_on(async {
                let mut conn = PgConnection::connect(&admin).await.map_err(|e| e.to_string())?;
                // FORCE: the apps' pools may still hold connections.
                conn.execute(AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                    .await
                    .map_err(|e| e.to_string())?;
                let _ = conn.close().await;
                Ok(())
            })
        })
        .join();
        if let Ok(Err(e)) | Err(e) = dropped.map_err(|_| "panicked".to_string()) {
            eprintln!("warning: could not drop test database {}: {e}", self.name);
        }
    }
}

/// One replica of the server on `db`, charging `provider` (replicas share one).
async fn replica(
    db: &TestDb,
    provider: &Arc<SandboxPay>,
    customize: impl FnOnce(&mut giftgenius_server::config::Config),
) -> TestApp {
    let url = db.url.clone();
    spawn_app_on(provider, move |config| {
        config.db = url;
        customize(config);
    })
    .await
}

fn provider() -> Arc<SandboxPay> {
    Arc::new(SandboxPay::start())
}

#[tokio::test]
async fn postgres_prepare_commit_and_replay_charge_once() {
    let db = TestDb::create().await;
    commit_then_replay_charges_once(&replica(&db, &provider(), |_| {}).await).await;
}

#[tokio::test]
async fn postgres_two_replicas_concurrent_commits_for_one_draft_charge_once() {
    let db = TestDb::create().await;
    let provider = provider();
    provider.set_latency_ms(300).await;
    let a = replica(&db, &provider, |_| {}).await;
    let b = replica(&db, &provider, |_| {}).await;
    // Both replicas prepare the same request: one draft, and either replica's token works.
    let (draft, token) = prepare(&a, "u1", "pp-001").await;
    let (draft_b, _) = prepare(&b, "u1", "pp-001").await;
    assert_eq!(draft, draft_b, "the replicas share the draft");

    let mut clients = join_all((0..4).map(|_| a.client())).await;
    clients.extend(join_all((0..4).map(|_| b.client())).await);
    let calls = (0..64)
        .map(|i| call_as(&clients[i % clients.len()], "u1", "commit_order", commit_args(&draft, "ik_two", &token)));
    let results = join_all(calls).await;
    assert!(successes_or_in_progress(&results) >= 1);
    for client in [&clients[0], &clients[4]] {
        let (_, last) = call_as(client, "u1", "commit_order", commit_args(&draft, "ik_two", &token)).await;
        assert_eq!(last["ok"], true, "a final retry on either replica gets the success: {last}");
    }

    // The same draft under other keys, on both replicas at once: still paid once.
    let other_keys = [("ik_other_a", &clients[1]), ("ik_other_b", &clients[5])]
        .map(|(key, client)| call_as(client, "u1", "commit_order", commit_args(&draft, key, &token)));
    for (_, sc) in join_all(other_keys).await {
        assert_eq!(sc["ok"], true, "another key gets the draft's one order: {sc}");
    }

    assert_eq!(charges(&a).await, 1, "exactly one charge");
    assert_eq!(charges(&b).await, 1, "both replicas see the one charge");
    assert_eq!(orders(&a).await, 1, "exactly one order");
}

/// Suggestions are counted in memory and written in batches (no write per call), so two
/// replicas may together let through at most `2 × slack` suggestions past the limit before
/// they learn each other's counts; never fewer than the limit, and once both have written,
/// both refuse.
#[tokio::test]
async fn postgres_daily_limit_counts_across_two_replicas_within_the_stated_bound() {
    let db = TestDb::create().await;
    let provider = provider();
    // A flush interval far longer than the test: only the slack rule writes.
    let limit = 3;
    let a = replica(&db, &provider, |c| {
        c.daily_suggestion_limit = limit;
        c.usage_flush_ms = 3_600_000;
    })
    .await;
    let b = replica(&db, &provider, |c| {
        c.daily_suggestion_limit = limit;
        c.usage_flush_ms = 3_600_000;
    })
    .await;
    let (client_a, client_b) = (a.client().await, b.client().await);
    let bound = limit as usize + 2 * giftgenius_server::limits::slack(limit) as usize;

    // Sequential, alternating: the first `limit` pass; past them, at most the bound.
    let mut passed = 0;
    for i in 0..10u32 {
        let client = if i % 2 == 0 { &client_a } else { &client_b };
        let (result, sc) = call_as(client, "alice", "suggest_gifts", varied_suggestion(i)).await;
        if result.is_error == Some(false) {
            assert_eq!(passed, i as usize, "no refusal before an admitted call: {sc}");
            passed += 1;
        } else {
            assert_eq!(sc["error"]["code"], "DAILY_LIMIT_EXCEEDED", "{sc}");
        }
    }
    assert!((limit as usize..=bound).contains(&passed), "{passed} passed; limit {limit}, bound {bound}");
    // Once both replicas have written their counts, the day is used up on both, exactly.
    a.state.limits.flush().await;
    b.state.limits.flush().await;
    a.state.limits.flush().await;
    for client in [&client_a, &client_b] {
        let (_, sc) = call_as(client, "alice", "suggest_gifts", varied_suggestion(20)).await;
        assert_eq!(sc["error"]["code"], "DAILY_LIMIT_EXCEEDED", "{sc}");
    }
    let stored: i64 = sqlx::query_scalar("SELECT count FROM usage_counters WHERE subject = 'local:alice'")
        .fetch_one(&sqlx::PgPool::connect(&db.url).await.expect("connect"))
        .await
        .expect("the counter row");
    assert_eq!(stored as usize, passed, "every admitted suggestion is written once");

    // Concurrent: 12 calls split over the replicas: at least the limit, at most the bound.
    let clients = [a.client().await, a.client().await, b.client().await, b.client().await];
    let calls =
        (0..12u32).map(|i| call_as(&clients[i as usize % clients.len()], "bob", "suggest_gifts", varied_suggestion(i)));
    let results = join_all(calls).await;
    let mut passed = 0;
    for (result, sc) in &results {
        if result.is_error == Some(false) {
            passed += 1;
        } else {
            assert_eq!(sc["error"]["code"], "DAILY_LIMIT_EXCEEDED", "{sc}");
        }
    }
    assert!((3..=bound).contains(&passed), "{passed} passed under concurrency; limit 3, bound {bound}");
}

/// Every buyer commits their draft (draft id, token) at once, each through their own client;
/// how many were sold (every other answer must be `GIFT_UNAVAILABLE`).
async fn commit_all(
    clients: &[rmcp::service::RunningService<rmcp::RoleClient, ()>],
    buyers: &[String],
    drafts: &[(String, String)],
) -> usize {
    let commits = drafts.iter().enumerate().map(|(i, (draft, token))| {
        call_as(&clients[i], &buyers[i], "commit_order", commit_args(draft, &format!("ik_{}", buyers[i]), token))
    });
    let mut sold = 0;
    for (_, sc) in join_all(commits).await {
        match sc["ok"].as_bool() {
            Some(true) => sold += 1,
            _ => assert_eq!(sc["error"]["code"], "GIFT_UNAVAILABLE", "{sc}"),
        }
    }
    sold
}

#[tokio::test]
async fn postgres_two_replicas_never_sell_more_than_the_stock() {
    let db = TestDb::create().await;
    let provider = provider();
    let a = replica(&db, &provider, |_| {}).await;
    let b = replica(&db, &provider, |_| {}).await;
    // tr-055 has 3 in stock. Eight buyers, each with their own draft and key, on both replicas.
    let replicas = [&a, &b];
    let buyers: Vec<String> = (0..8).map(|i| format!("buyer{i}")).collect();
    let drafts = join_all(buyers.iter().enumerate().map(|(i, buyer)| prepare(replicas[i % 2], buyer, "tr-055"))).await;
    let clients = join_all((0..8).map(|i| replicas[i % 2].client())).await;
    let sold = commit_all(&clients, &buyers, &drafts).await;
    assert_eq!(sold, 3, "exactly the stock is sold");
    assert_eq!(charges(&a).await, 3);
    assert_eq!(orders(&b).await, 3);
}

/// Baskets sharing gifts in opposite orders, on two replicas: each takes its gifts' stock locks
/// in one order (no deadlock), and no gift is sold beyond its stock. tr-055 has 3, pp-046 4.
#[tokio::test]
async fn postgres_baskets_sharing_gifts_on_two_replicas_never_oversell_or_deadlock() {
    let db = TestDb::create().await;
    let provider = provider();
    let a = replica(&db, &provider, |_| {}).await;
    let b = replica(&db, &provider, |_| {}).await;
    let replicas = [&a, &b];
    let buyers: Vec<String> = (0..6).map(|i| format!("buyer{i}")).collect();
    let baskets = [
        json!({"items": [{"gift_id": "tr-055"}, {"gift_id": "pp-046", "quantity": 2}]}),
        json!({"items": [{"gift_id": "pp-046", "quantity": 2}, {"gift_id": "tr-055"}]}),
    ];
    let clients = join_all((0..6).map(|i| replicas[i % 2].client())).await;
    let mut drafts = Vec::new();
    for (i, buyer) in buyers.iter().enumerate() {
        let arguments = with_recipient(baskets[i % 2].clone());
        let (result, sc) = call_as(&clients[i], buyer, "prepare_order", arguments).await;
        let token = result.meta.as_ref().and_then(|m| m.0.get(TOKEN)).and_then(|t| t.as_str()).expect("token");
        drafts.push((sc["draft"]["id"].as_str().expect("draft").to_string(), token.to_string()));
    }
    let sold = commit_all(&clients, &buyers, &drafts).await;
    // pp-046's 4 units make two baskets of 2; tr-055 would allow 3.
    assert_eq!(sold, 2, "as many baskets as the scarcest gift allows");
    assert_eq!(a.state.store.units_sold("pp-046").await.unwrap(), 4);
    assert_eq!(a.state.store.units_sold("tr-055").await.unwrap(), 2);
    assert_eq!(charges(&a).await, 2);
}

#[tokio::test]
async fn postgres_commits_are_durable_whatever_the_server_default() {
    let db = TestDb::create().await;
    // A role that lowered it: the app's sessions still ask for a flushed WAL at every commit.
    let mut admin = PgConnection::connect(&admin_url()).await.expect("admin connection");
    let lowered = format!("ALTER DATABASE {} SET synchronous_commit = off", db.name);
    admin.execute(AssertSqlSafe(lowered)).await.expect("lower synchronous_commit");
    let app = replica(&db, &provider(), |_| {}).await;
    let durability = app.state.store.durability().await.expect("durability");
    assert!(durability.contains("synchronous_commit=on"), "{durability}");
}

#[tokio::test]
async fn postgres_a_stale_lease_holder_can_neither_answer_nor_release_nor_insert_a_session() {
    let db = TestDb::create().await;
    crate::fencing::a_stale_holder_writes_nothing(&replica(&db, &provider(), |_| {}).await).await;
}

/// The retention pass on PostgreSQL (its statements are PostgreSQL's too: a placeholder bound
/// once must be `$1` there, while SQLite took a lone `$2` by name).
#[tokio::test]
async fn postgres_retention_anonymizes_then_deletes() {
    let db = TestDb::create().await;
    let app = replica(&db, &provider(), |_| {}).await;
    crate::orders::retention_passes(&app, &db.url).await;
}
