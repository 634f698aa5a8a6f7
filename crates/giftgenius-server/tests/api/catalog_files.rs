//! `--catalog` files: imported gifts are suggested AND sold (drafts, orders, pictures), bad rows
//! are named by file, line and field and skipped or refused as `--catalog-bad-rows` says, an
//! empty catalog refuses to start, and a changed file (or SIGHUP) swaps the catalog while a
//! broken one leaves the old catalog serving.

use std::path::{Path, PathBuf};
use std::time::Duration;

use giftgenius_catalog::live::BadRows;
use giftgenius_server::config::Config;
use giftgenius_server::startup::Application;
use serde_json::json;

use crate::support::{TestApp, call_as, commit_args, prepare, spawn_app_with, widget_path};

fn gift_row(id: &str, title: &str, tags: &[&str]) -> String {
    json!({
        "id": id, "title": title, "description": format!("{title}, from a merchant's own catalog."),
        "price_minor": 2450, "currency": "USD", "merchant": "Juniper Supply Co.",
        "tags": tags, "age_min": 16, "age_max": 99, "relationships": ["friend", "partner"]
    })
    .to_string()
}

/// Writes `text` to `path` the way a careful exporter does: a temporary file renamed over it.
fn replace_file(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

async fn app_with_files(files: Vec<PathBuf>, builtin: bool, poll_secs: u64) -> TestApp {
    spawn_app_with(move |c| {
        c.catalogs = files;
        c.builtin_catalog = builtin;
        c.catalog_poll_secs = poll_secs;
        c.daily_suggestion_limit = 0;
    })
    .await
}

async fn suggested_ids(app: &TestApp, interests: &[&str]) -> Vec<String> {
    let client = app.client().await;
    let (result, sc) = call_as(
        &client,
        "u1",
        "suggest_gifts",
        json!({"relationship_type": "friend", "interests": interests, "limit": 12}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{sc}");
    sc["gifts"].as_array().unwrap().iter().map(|g| g["id"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn imported_gifts_are_suggested_ordered_and_pictured() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("juniper.jsonl");
    std::fs::write(&jsonl, [gift_row("jp-001", "Juggling Club Set", &["juggling"]), String::new()].join("\n")).unwrap();
    let tsv = dir.path().join("feed.tsv");
    std::fs::write(
        &tsv,
        "id\ttitle\tdescription\tprice\tavailability\tbrand\tproduct_type\n\
         fd-001\tDevil Stick Kit\tWooden sticks.\t19.00 USD\tin stock\tCircus Co\tToys > Juggling Props\n",
    )
    .unwrap();
    let app = app_with_files(vec![jsonl, tsv], true, 0).await;

    let ids = suggested_ids(&app, &["juggling"]).await;
    assert!(ids.contains(&"jp-001".to_string()) && ids.contains(&"fd-001".to_string()), "{ids:?}");

    // Sold like any built-in gift: a draft, a confirmed order, a charge.
    let (draft, token) = prepare(&app, "u1", "fd-001").await;
    let client = app.client().await;
    let (result, sc) = call_as(&client, "u1", "commit_order", commit_args(&draft, "ik_import_1", &token)).await;
    assert_eq!(result.is_error, Some(false), "{sc}");
    assert_eq!(sc["order"]["gift_id"], "fd-001", "{sc}");
    assert_eq!(sc["order"]["status"], "paid", "{sc}");

    // Its picture resolves.
    let image = reqwest::get(format!("{}/images/jp-001.svg", app.local_url)).await.unwrap();
    assert_eq!(image.status(), 200);
    assert!(image.text().await.unwrap().contains("Juggling Club Set"));
}

fn config_with(dir: &Path, files: Vec<PathBuf>, bad_rows: BadRows) -> Config {
    let mut config = Config::for_tests(dir);
    config.widget_html = Some(widget_path());
    config.catalogs = files;
    config.catalog_bad_rows = bad_rows;
    config.builtin_catalog = false;
    config
}

#[tokio::test]
async fn bad_rows_are_skipped_or_refuse_the_catalog_as_the_flag_says() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shop.json");
    let rows = [
        gift_row("ok-001", "Good Gift", &["tea"]),
        r#"{"id":"bad-001","title":"No Price"}"#.to_string(),
        gift_row("ok-002", "Another Good Gift", &["tea"]),
    ];
    std::fs::write(&file, format!("[\n{}\n]\n", rows.join(",\n"))).unwrap();

    // refuse: the server does not start, and says where the bad row is.
    let err =
        Application::build(config_with(dir.path(), vec![file.clone()], BadRows::Refuse)).await.err().expect("refused");
    let message = format!("{err:#}");
    assert!(message.contains("shop.json:3: price_minor: is required"), "{message}");

    // skip: the good rows serve.
    let app = spawn_app_with(|c| {
        c.catalogs = vec![file];
        c.builtin_catalog = false;
        c.catalog_bad_rows = BadRows::Skip;
    })
    .await;
    let ids = suggested_ids(&app, &["tea"]).await;
    assert_eq!(ids, ["ok-001", "ok-002"]);
}

#[tokio::test]
async fn a_catalog_with_no_valid_rows_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("empty.jsonl");
    std::fs::write(&file, "{\"id\":\"x\"}\n").unwrap();
    let err = Application::build(config_with(dir.path(), vec![file], BadRows::Skip)).await.err().expect("refused");
    assert!(format!("{err:#}").contains("no valid gifts"), "{err:#}");

    let missing = dir.path().join("nope.json");
    let err = Application::build(config_with(dir.path(), vec![missing], BadRows::Skip)).await.err().expect("refused");
    assert!(format!("{err:#}").contains("cannot read the catalog file"), "{err:#}");
}

async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    for _ in 0..100 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting until {what}");
}

#[tokio::test]
async fn a_changed_file_swaps_the_catalog_and_a_broken_one_keeps_the_old() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.jsonl");
    replace_file(&file, &gift_row("lv-001", "Kendama", &["skill-toys"]));
    let app = app_with_files(vec![file.clone()], false, 1).await;
    assert_eq!(suggested_ids(&app, &["skill toys"]).await, ["lv-001"]);

    // A new version: picked up without a restart.
    replace_file(
        &file,
        &[gift_row("lv-001", "Kendama", &["skill-toys"]), gift_row("lv-002", "Yo-yo", &["skill-toys"])].join("\n"),
    );
    eventually("the new gift is suggested", async || suggested_ids(&app, &["skill toys"]).await.len() == 2).await;

    // A broken version (no valid row): the previous catalog keeps serving, orders included.
    // Checked once the poll has tried the broken file and refused it (not after a guessed wait).
    let refused = app.state.catalog.refused_reloads();
    replace_file(&file, "{\"id\": \"lv-003\", \"title\": \"oops\"}\n");
    eventually("the broken file was tried", async || app.state.catalog.refused_reloads() > refused).await;
    assert_eq!(suggested_ids(&app, &["skill toys"]).await, ["lv-001", "lv-002"]);
    let (draft, _) = prepare(&app, "u1", "lv-002").await;
    assert!(draft.starts_with("drf_"), "{draft}");
}

#[cfg(unix)]
#[tokio::test]
async fn sighup_reloads_the_catalog_files() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hup.json");
    std::fs::write(&file, format!("[{}]", gift_row("hp-001", "Diabolo", &["circus"]))).unwrap();
    // No polling: only the signal can reload.
    let app = app_with_files(vec![file.clone()], false, 0).await;
    assert_eq!(suggested_ids(&app, &["circus"]).await, ["hp-001"]);
    std::fs::write(
        &file,
        format!("[{},{}]", gift_row("hp-001", "Diabolo", &["circus"]), gift_row("hp-002", "Poi", &["circus"])),
    )
    .unwrap();
    let status = std::process::Command::new("kill").args(["-HUP", &std::process::id().to_string()]).status().unwrap();
    assert!(status.success());
    eventually("SIGHUP reloaded the file", async || suggested_ids(&app, &["circus"]).await.len() == 2).await;
}
