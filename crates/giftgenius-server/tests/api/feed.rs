//! The product feed (issue 44 item 1) from the real binary, `giftgenius-server feed export`, on
//! the database of a running app: every gift of the catalog once, in id order, each line a
//! closed ACP `Product` (our types' schema: the spec's own JSON Schema is checked out of tree,
//! docs/feed.md) whose ids checkout takes, with live stock (a unit sold is a unit less), links
//! on the public URL that open the gift's page; the same bytes twice; nothing half-written.
//! And its changes pushed to a feed receiver (a real HTTP server validating every body): the
//! whole catalog at start, a sale and a cancel as they happen, retries, the operator's
//! redelivery, a dropped gift, and kill -9 at two points losing nothing.

use std::path::Path;

use giftgenius_commerce::store::OutboxStatus;
use giftgenius_types::feed::{FeedListing, FeedMetadata, FeedProduct};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{
    FeedReceiver, TOKEN, call_as, commit_args, meta_of, receivers_file, recipient, server_command, spawn_app_with,
};

const PUBLIC: &str = "https://shop.example";

/// `giftgenius-server feed export --out OUT ARGS` on `db`: (exit ok, stdout JSON, stderr).
fn feed_export(db: &str, out: &Path, args: &[&str]) -> (bool, Value, String) {
    let out = out.to_str().expect("a UTF-8 temporary path");
    let command = ["feed", "export", "--out", out, "--db", db, "--public-url", PUBLIC];
    server_command(&command.iter().chain(args).collect::<Vec<_>>())
}

#[tokio::test]
async fn the_feed_lists_every_gift_once_with_live_stock_and_the_same_bytes_twice() {
    let mut db = String::new();
    let app = spawn_app_with(|c| db = c.db.clone()).await;
    // One of the three Tenkara rods left is sold: two left, limited stock.
    let client = app.client().await;
    let args = json!({"gift_id": "tr-055", "recipient": recipient()});
    let (prepared, draft) = call_as(&client, "ana", "prepare_order", args).await;
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap();
    let draft_id = draft["draft"]["id"].as_str().unwrap();
    let (_, paid) = call_as(&client, "ana", "commit_order", commit_args(draft_id, "ik_feed", token)).await;
    assert_eq!(paid["order"]["status"], "paid", "{paid}");

    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (ok, printed, stderr) = feed_export(&db, first.path(), &["--target-country", "US"]);
    assert!(ok, "{stderr}");
    let catalog = app.state.catalog.current();
    assert_eq!(printed["products"], catalog.len() as u64, "{printed}");
    let text = std::fs::read_to_string(first.path().join("products.jsonl")).unwrap();
    assert_eq!(printed["bytes"], text.len() as u64);

    let schema = serde_json::to_value(schemars::schema_for!(FeedProduct)).unwrap();
    let validator = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    let mut ids = Vec::new();
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).expect("one JSON object per line");
        let errors: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{errors:?}: {line}");
        let product: FeedProduct = serde_json::from_value(value).expect("a closed Product");
        assert_eq!(product.variants.len(), 1);
        assert_eq!(product.variants[0].id, product.id, "the variant's id is the gift id checkout takes");
        ids.push(product.id);
    }
    let catalog_ids: Vec<String> = catalog.gifts().iter().map(|g| g.id.to_string()).collect();
    assert_eq!(ids, catalog_ids, "every gift once, in the catalog's id order");

    let find = |id: &str| -> FeedProduct {
        let line = text.lines().find(|l| l.starts_with(&format!("{{\"id\":\"{id}\""))).expect(id);
        serde_json::from_str(line).unwrap()
    };
    let rod = find("tr-055");
    let variant = &rod.variants[0];
    assert_eq!((variant.availability.available, variant.availability.status.as_str()), (true, "limited_stock"));
    let gift = app.state.catalog.get("tr-055").unwrap();
    assert_eq!((variant.price.amount, variant.price.currency.as_str()), (gift.price_cents, "USD"));
    assert_eq!(rod.url, format!("{PUBLIC}/gifts/tr-055"));
    assert_eq!(variant.seller.name, gift.merchant.name);
    assert!(variant.seller.links.iter().any(|l| l.kind == "refund_policy" && l.url == format!("{PUBLIC}/terms")));
    let categories: Vec<&str> = variant.categories.iter().map(|c| c.value.as_str()).collect();
    assert_eq!(categories, gift.tags.iter().map(|t| &**t).collect::<Vec<_>>());
    let sold_out = find("hh-007");
    assert_eq!(
        (sold_out.variants[0].availability.available, sold_out.variants[0].availability.status.as_str()),
        (false, "out_of_stock")
    );
    assert_eq!(find("hh-010").variants[0].availability.status, "in_stock");

    let metadata: FeedMetadata =
        serde_json::from_str(&std::fs::read_to_string(first.path().join("metadata.json")).unwrap()).unwrap();
    assert_eq!((metadata.id.as_str(), metadata.target_country.as_deref()), ("giftgenius", Some("US")));
    assert!(metadata.updated_at.ends_with('Z'), "{metadata:?}");

    let (ok, _, stderr) = feed_export(&db, second.path(), &[]);
    assert!(ok, "{stderr}");
    assert_eq!(std::fs::read_to_string(second.path().join("products.jsonl")).unwrap(), text, "deterministic");
    let left: Vec<_> = std::fs::read_dir(first.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 2, "only the two files, no partial one: {left:?}");

    let (ok, _, stderr) = feed_export(&db, second.path(), &["--target-country", "usa"]);
    assert!(!ok && stderr.contains("country code"), "{stderr}");

    // The product's URL opens its page: price, stock left, how to buy; in Spanish too.
    let page = reqwest::get(format!("{}/gifts/tr-055", app.local_url)).await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.starts_with("default-src 'none'") && !csp.contains("script"), "{csp}");
    let html = page.text().await.unwrap();
    assert!(html.contains("data-stock=\"few\">Only 2 left") && html.contains(&*gift.title), "{html}");
    assert!(html.contains("agents buy it by its id, tr-055"), "{html}");
    let es = reqwest::Client::new()
        .get(format!("{}/gifts/hh-007", app.local_url))
        .header("Accept-Language", "es-ES")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(es.contains("lang=\"es\"") && es.contains("Agotado"), "{es}");
    let missing = reqwest::get(format!("{}/gifts/%3Cscript%3E", app.local_url)).await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(!missing.text().await.unwrap().contains("<script>"), "the id is never echoed");
}

// ── Pushing the feed's changes to feed receivers (docs/feed.md "Pushing changes") ──

const FEED_ID: &str = "feed_8f3K2x";
const FEED_TOKEN: &str = "feed-receiver-token-0123456789";

/// `config` pushing to the receivers of `file` (a `receivers_file` folder), polling every 20 ms.
fn pushing_to(config: &mut giftgenius_server::config::Config, file: &tempfile::TempDir) {
    config.feed_receivers = Some(file.path().join("receivers.json"));
    config.feed_poll_ms = 20;
}

/// The first gift of the catalog with 1–10 units (a purchase of all of them sells it out).
fn few_left(catalog: &giftgenius_catalog::Catalog) -> giftgenius_catalog::CatalogGift {
    catalog.gifts().iter().find(|g| (1..=10).contains(&g.stock)).expect("a gift with few units").clone()
}

/// Buys every unit of `gift` as `subject`; the order's id.
async fn buy_all(app: &crate::support::TestApp, subject: &str, gift: &giftgenius_catalog::CatalogGift) -> String {
    let client = app.client().await;
    let args = json!({"gift_id": &*gift.id, "quantity": gift.stock, "recipient": recipient()});
    let (prepared, draft) = call_as(&client, subject, "prepare_order", args).await;
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("a confirmation token");
    let draft_id = draft["draft"]["id"].as_str().expect("a draft");
    let key = format!("ik_feed_{}", gift.id);
    let (_, paid) = call_as(&client, subject, "commit_order", commit_args(draft_id, &key, token)).await;
    assert_eq!(paid["order"]["status"], "paid", "{paid}");
    paid["order"]["id"].as_str().unwrap().to_string()
}

fn availability(listing: &FeedListing) -> (bool, String) {
    match listing {
        FeedListing::Listed(p) => (p.variants[0].availability.available, p.variants[0].availability.status.clone()),
        FeedListing::Gone(p) => (p.variants[0].availability.available, p.variants[0].availability.status.clone()),
    }
}

#[tokio::test]
async fn every_gift_reaches_a_feed_receiver_and_a_sale_and_a_cancel_push_only_the_gift_whose_stock_moved() {
    let receiver = FeedReceiver::start(FEED_ID, FEED_TOKEN).await;
    let file = receiver.receivers_file("shopping");
    let app = spawn_app_with(|c| pushing_to(c, &file)).await;
    let catalog = app.state.catalog.current();
    let all = receiver.wait_until("every gift", |products| products.len() == catalog.len()).await;
    for gift in catalog.gifts() {
        let expected = giftgenius_server::feed::product(gift, i64::from(gift.stock), &app.state.public_url);
        assert_eq!(all[&*gift.id], FeedListing::Listed(expected), "{} as the export lists it", gift.id);
    }
    let seen = receiver.seen();
    assert!(seen.iter().all(|u| u.refused.is_none() && u.feed_id == FEED_ID), "{seen:#?}");
    assert!(seen.iter().all(|u| (1..=100).contains(&u.ids.len())), "batches of at most 100");
    assert_eq!(seen.len(), catalog.len().div_ceil(100), "each product once, in full batches");

    // A sale of every unit: that one product goes out of stock, nothing else is pushed.
    let gift = few_left(&catalog);
    let before = availability(&all[&*gift.id]);
    assert!(before.0, "{before:?}");
    let order = buy_all(&app, "ana", &gift).await;
    let after = receiver
        .wait_until("the sold-out gift", |p| availability(&p[&*gift.id]) == (false, "out_of_stock".into()))
        .await;
    assert_eq!(receiver.times(&gift.id), 2);
    // Its cancel gives the units back: the product as it was.
    let client = app.client().await;
    let (read, _) = call_as(&client, "ana", "get_order", json!({"order_id": order})).await;
    let cancel_token = meta_of(&read, giftgenius_types::wire::META_CANCEL_TOKENS)
        .and_then(|t| t[&order].as_str())
        .expect("a cancel token");
    let arguments = json!({"order_id": order, "idempotency_key": "ck_feed", "confirmation_token": cancel_token});
    let (_, cancelled) = call_as(&client, "ana", "cancel_order", arguments).await;
    assert_eq!(cancelled["order"]["status"], "cancelled", "{cancelled}");
    receiver.wait_until("the gift back in stock", |p| availability(&p[&*gift.id]) == before).await;
    // A few rounds more push nothing new.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(receiver.times(&gift.id), 3);
    let total: u32 = catalog.gifts().iter().map(|g| receiver.times(&g.id)).sum();
    assert_eq!(total as usize, catalog.len() + 2, "only the gift whose stock moved, twice: {after:?}");
}

#[tokio::test]
async fn a_receiver_answering_503_and_429_gets_every_product_once_after_retries() {
    let receiver = FeedReceiver::start(FEED_ID, FEED_TOKEN).await;
    receiver.script([503, 429, 503]);
    let file = receiver.receivers_file("shopping");
    let app = spawn_app_with(|c| {
        pushing_to(c, &file);
        c.webhook_retry_base = std::time::Duration::from_secs(2);
    })
    .await;
    let catalog = app.state.catalog.current();
    // The retries wait for the app's clock; move it on until everything arrived.
    for _ in 0..1500 {
        if receiver.products().len() == catalog.len() {
            break;
        }
        app.clock.advance(std::time::Duration::from_secs(1));
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(receiver.products().len(), catalog.len(), "{:#?}", receiver.seen());
    let answered: Vec<u16> = receiver.seen().iter().map(|u| u.answered).collect();
    assert_eq!(&answered[..3], [503, 429, 503], "{answered:?}");
    assert!(catalog.gifts().iter().all(|g| receiver.times(&g.id) == 1), "each accepted once");
    // The receiver records a batch before it answers; the pusher records it after.
    let delivered = |r: &giftgenius_commerce::store::FeedPushRow| {
        r.status == OutboxStatus::Delivered && r.sent_fingerprint.as_deref() == Some(&*r.fingerprint)
    };
    let mut rows = Vec::new();
    for _ in 0..500 {
        rows = app.state.store.feed_pushes(Some("shopping"), None, 10_000).await.unwrap();
        if rows.len() == catalog.len() && rows.iter().all(delivered) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(rows.len(), catalog.len());
    assert!(rows.iter().all(delivered), "{rows:#?}");
    let retried = rows.iter().filter(|r| r.attempts > 1).count();
    assert!(retried >= 100, "the refused batches were tried again: {retried}");
}

/// `giftgenius-server feed ARGS --db DB`: (exit ok, stdout lines as JSON, stderr). Awaited, not
/// blocking: the app runs on the test's own runtime, and a transaction of its left half-way
/// while the test thread waited would hold SQLite's write lock against the command.
async fn feed_command(db: &str, args: &[&str]) -> (bool, Vec<Value>, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_giftgenius-server"))
        .arg("feed")
        .args(args)
        .args(["--db", db])
        .env("GIFTGENIUS_LOG", "warn")
        .output()
        .await
        .expect("the command runs");
    let lines = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    (output.status.success(), lines, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[tokio::test]
async fn a_refused_batch_is_dead_until_the_operator_redelivers_it() {
    let receiver = FeedReceiver::start(FEED_ID, FEED_TOKEN).await;
    receiver.script([400]);
    let file = receiver.receivers_file("shopping");
    let mut db = String::new();
    let app = spawn_app_with(|c| {
        pushing_to(c, &file);
        db = c.db.clone();
    })
    .await;
    let catalog = app.state.catalog.current();
    receiver.wait_until("all but the refused batch", |p| p.len() == catalog.len() - 100).await;
    let (ok, dead, stderr) = feed_command(&db, &["pushes", "--receiver", "shopping", "--status", "dead"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(dead.len(), 100, "{dead:?}");
    assert!(dead.iter().all(|d| d["status"] == "dead" && d["last_error"].as_str().unwrap().starts_with("HTTP 400")));
    let (ok, _, stderr) = feed_command(&db, &["redeliver", "--receiver", "shopping"]).await;
    assert!(!ok && stderr.contains("required"), "which products must be said: {stderr}");
    let (ok, done, stderr) = feed_command(&db, &["redeliver", "--receiver", "shopping", "--dead"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(done[0]["redelivered"], 100, "{done:?}");
    // The command ran on the wall clock: the app's manual clock catches up with it.
    let behind = giftgenius_commerce::clock::Clock::System.now_ms() - app.clock.now_ms();
    app.clock.advance(std::time::Duration::from_millis(behind.max(0) as u64 + 1000));
    receiver.wait_until("every gift", |p| p.len() == catalog.len()).await;
    assert!(catalog.gifts().iter().all(|g| receiver.times(&g.id) == 1));
    let (ok, done, stderr) =
        feed_command(&db, &["redeliver", "--receiver", "shopping", "no-such-gift", &catalog.gifts()[0].id]).await;
    assert!(ok, "{stderr}");
    assert_eq!((done[0]["redelivered"].as_u64(), &done[0]["unknown"]), (Some(1), &json!(["no-such-gift"])));
    receiver.wait_until("the first gift again", |_| receiver.times(&catalog.gifts()[0].id) == 2).await;
}

#[tokio::test]
async fn a_gift_the_catalog_drops_is_pushed_as_discontinued_once() {
    let dir = tempfile::tempdir().unwrap();
    let catalog_file = dir.path().join("juniper.jsonl");
    let row = |id: &str, title: &str| {
        json!({
            "id": id, "title": title, "description": format!("{title}, from a merchant's own catalog."),
            "price_minor": 2450, "currency": "USD", "merchant": "Juniper Supply Co.",
            "tags": ["juggling"], "age_min": 16, "age_max": 99, "relationships": ["friend"]
        })
        .to_string()
    };
    let (a, b) = (row("jp-001", "Juggling Club Set"), row("jp-002", "Devil Stick Kit"));
    std::fs::write(&catalog_file, format!("{a}\n{b}\n")).unwrap();
    let receiver = FeedReceiver::start(FEED_ID, FEED_TOKEN).await;
    let file = receiver.receivers_file("shopping");
    let app = spawn_app_with(|c| {
        pushing_to(c, &file);
        c.builtin_catalog = false;
        c.catalogs = vec![catalog_file.clone()];
    })
    .await;
    receiver.wait_until("both gifts", |p| p.len() == 2).await;
    std::fs::write(&catalog_file, format!("{a}\n")).unwrap();
    app.state.catalog.reload("test").await.expect("the smaller catalog loads");
    let products =
        receiver.wait_until("the second gone", |p| availability(&p["jp-002"]) == (false, "discontinued".into())).await;
    let FeedListing::Gone(gone) = &products["jp-002"] else { panic!("{products:?}") };
    assert_eq!(gone.variants[0].title, "Devil Stick Kit", "under the title it was listed with");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!((receiver.times("jp-002"), receiver.times("jp-001")), (2, 1), "once gone, and the other not again");
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_9_before_anything_was_pushed_and_while_the_receiver_refused_loses_no_change() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("giftgenius.db");
    let port = crate::support::unused_port();
    let file = receivers_file("shopping", &format!("http://127.0.0.1:{port}/v1"), FEED_ID, FEED_TOKEN);
    let receivers = file.path().join("receivers.json");
    let provider = crate::support::SandboxPay::start();
    let server = |poll: &'static str| {
        let (db, receivers, provider_url, token) =
            (db.clone(), receivers.clone(), provider.url.clone(), provider.token_file().to_string());
        async move {
            let flags = [
                "--payments-url",
                &provider_url,
                "--payments-token-file",
                &token,
                "--feed-receivers",
                &receivers.to_string_lossy(),
                "--feed-poll-ms",
                poll,
                "--webhook-retry-base",
                "50ms",
            ];
            crate::support::start_server_binary(&db, &flags, "warn", std::process::Stdio::null()).await
        }
    };
    // 1. A server that pushes nothing (another replica's job) sells a gift out, and is killed.
    let first = server("0").await;
    let catalog = giftgenius_catalog::Catalog::builtin();
    let gift = few_left(&catalog);
    let client = crate::support::connect(&first.mcp_url()).await.expect("connects");
    let args = json!({"gift_id": &*gift.id, "quantity": gift.stock, "recipient": recipient()});
    let prepared = client.call_tool(crate::support::request(Some("ana"), "prepare_order", args)).await.unwrap();
    let draft = prepared.structured_content.clone().unwrap();
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap().to_string();
    let commit = commit_args(draft["draft"]["id"].as_str().unwrap(), "ik_feed_kill", &token);
    let paid = client.call_tool(crate::support::request(Some("ana"), "commit_order", commit)).await.unwrap();
    assert_eq!(paid.structured_content.unwrap()["order"]["status"], "paid");
    drop(client);
    drop(first); // SIGKILL
    let store = giftgenius_commerce::store::Store::connect(&db.to_string_lossy()).await.unwrap();
    assert!(store.feed_pushes(None, None, 10).await.unwrap().is_empty(), "nothing marked yet");

    // 2. A pushing server finds every product changed, but the receiver is down: all pending,
    //    tried; it is killed.
    let second = server("20").await;
    for _ in 0..1500 {
        let rows = store.feed_pushes(None, None, 10_000).await.unwrap();
        if rows.len() == catalog.len() && rows.iter().any(|r| r.attempts > 1) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let rows = store.feed_pushes(None, None, 10_000).await.unwrap();
    assert_eq!(rows.len(), catalog.len());
    assert!(rows.iter().all(|r| r.status == OutboxStatus::Pending && r.sent_fingerprint.is_none()));
    drop(second); // SIGKILL

    // 3. The receiver is back, and so is a server: every product arrives, the sold-out one as such.
    let receiver = FeedReceiver::start_on(port, FEED_ID, FEED_TOKEN).await;
    let _third = server("20").await;
    let products = receiver.wait_until("every gift", |p| p.len() == catalog.len()).await;
    assert_eq!(availability(&products[&*gift.id]), (false, "out_of_stock".into()));
    assert!(catalog.gifts().iter().all(|g| receiver.times(&g.id) == 1), "{:#?}", receiver.seen());
}

#[tokio::test]
async fn postgres_two_replicas_push_every_product_once_and_a_sale_on_either() {
    let db = crate::postgres::TestDb::create().await;
    let provider = std::sync::Arc::new(crate::support::SandboxPay::start());
    let receiver = FeedReceiver::start(FEED_ID, FEED_TOKEN).await;
    let file = receiver.receivers_file("shopping");
    let replica = || {
        let (db_url, file) = (db.url.clone(), &file);
        crate::support::spawn_app_on(&provider, move |c| {
            c.db = db_url;
            // Replicas behind one address: the products' links are the same from either.
            c.public_url = Some("http://127.0.0.1:9".to_string());
            pushing_to(c, file);
        })
    };
    let a = replica().await;
    let b = replica().await;
    let catalog = a.state.catalog.current();
    receiver.wait_until("every gift", |p| p.len() == catalog.len()).await;
    let gift = few_left(&catalog);
    buy_all(&b, "rui", &gift).await;
    receiver.wait_until("the sold-out gift", |p| availability(&p[&*gift.id]) == (false, "out_of_stock".into())).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let twice: Vec<&str> = catalog.gifts().iter().filter(|g| receiver.times(&g.id) != 1).map(|g| &*g.id).collect();
    assert_eq!(twice, [&*gift.id], "each product once by one of the two replicas, the sold one again");
    assert_eq!(receiver.times(&gift.id), 2);
}

#[tokio::test]
async fn metrics_show_the_feed_s_backlog_its_age_and_what_a_receiver_refused() {
    let receiver = FeedReceiver::start(FEED_ID, FEED_TOKEN).await;
    receiver.script([503, 400]);
    // The first batch waits an hour for its retry, whatever the jitter.
    receiver.retry_after(3600);
    let file = receiver.receivers_file("shopping");
    let app = spawn_app_with(|c| pushing_to(c, &file)).await;
    let catalog = app.state.catalog.current();
    // The first batch waits for its retry, the second is dead, the others arrive.
    receiver.wait_until("all but two batches", |p| p.len() == catalog.len() - 200).await;
    app.clock.advance(std::time::Duration::from_secs(5));
    let metrics = || async {
        let text = reqwest::get(format!("{}/metrics", app.local_url)).await.unwrap().text().await.unwrap();
        let value =
            |series: &str| text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse::<f64>().ok());
        (value("giftgenius_feed_backlog"), value("giftgenius_feed_oldest_age_seconds"), value("giftgenius_feed_dead"))
    };
    // The receiver counts a batch before it answers; the pusher records it after.
    let mut reading = metrics().await;
    for _ in 0..200 {
        if (reading.0, reading.2) == (Some(100.0), Some(100.0)) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        reading = metrics().await;
    }
    let (waiting, age, dead) = reading;
    assert_eq!((waiting, dead), (Some(100.0), Some(100.0)));
    assert!(age.is_some_and(|age| age >= 5.0), "{age:?}");
    // Past the back-off the waiting batch arrives; the dead one stays dead.
    app.clock.advance(std::time::Duration::from_secs(3 * 3600));
    receiver.wait_until("all but the dead batch", |p| p.len() == catalog.len() - 100).await;
    for _ in 0..200 {
        if metrics().await.0 == Some(0.0) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(metrics().await, (Some(0.0), Some(0.0), Some(100.0)));
    // A server without receivers has no such series.
    let plain = crate::support::spawn_app().await;
    let text = reqwest::get(format!("{}/metrics", plain.local_url)).await.unwrap().text().await.unwrap();
    assert!(!text.contains("giftgenius_feed_"), "{text}");
}
