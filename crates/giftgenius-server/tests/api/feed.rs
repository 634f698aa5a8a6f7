//! The product feed (issue 44 item 1) from the real binary, `giftgenius-server feed export`, on
//! the database of a running app: every gift of the catalog once, in id order, each line a
//! closed ACP `Product` (our types' schema: the spec's own JSON Schema is checked out of tree,
//! docs/feed.md) whose ids checkout takes, with live stock (a unit sold is a unit less), links
//! on the public URL that open the gift's page; the same bytes twice; nothing half-written.

use std::path::Path;

use giftgenius_types::feed::{FeedMetadata, FeedProduct};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::{TOKEN, call_as, commit_args, meta_of, recipient, server_command, spawn_app_with};

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
