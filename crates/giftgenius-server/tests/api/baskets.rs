//! Baskets (issue 42): several gifts with a quantity each, prepared as one draft, confirmed once,
//! paid with one charge and kept as one order with every line; the stock of every line held by
//! it, checked per line, and given back when it is cancelled.

use futures::future::join_all;
use serde_json::{Value, json};

use crate::support::{
    TOKEN, TestApp, call_as, charges, commit_args, meta_of, orders, recipient, spawn_app, successes_or_in_progress,
    text_of, with_recipient,
};
use giftgenius_types::wire::META_CANCEL_TOKENS;

/// `gift`'s price in US cents, as the built-in catalog has it.
fn price(app: &TestApp, gift: &str) -> i64 {
    app.state.catalog.get(gift).expect(gift).price_cents
}

/// The (gift id, quantity) of each line of a draft or an order.
fn lines_of(value: &Value, id: &str) -> Vec<(String, u64)> {
    value["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| (l[id].as_str().or(l["gift"]["id"].as_str()).unwrap().to_string(), l["quantity"].as_u64().unwrap()))
        .collect()
}

/// prepare_order for `subject` with `arguments`: (draft, token).
async fn draft_of(app: &TestApp, subject: &str, arguments: Value) -> (Value, String) {
    let (result, sc) = call_as(&app.client().await, subject, "prepare_order", arguments).await;
    assert_eq!(sc["ok"], true, "{sc}");
    let token = meta_of(&result, TOKEN).and_then(Value::as_str).expect("token").to_string();
    (sc["draft"].clone(), token)
}

async fn units_sold(app: &TestApp, gift: &str) -> i64 {
    app.state.store.units_sold(gift).await.expect("units")
}

#[tokio::test]
async fn a_basket_is_one_draft_one_confirmation_one_charge_and_one_order_with_every_line() {
    let app = spawn_app().await;
    let client = app.client().await;
    let basket = json!({"items": [{"gift_id": "hh-001", "quantity": 2}, {"gift_id": "lw-001"}],
        "recipient": recipient(), "gift_wrap": true, "shipping": "express"});
    let (prepared, sc) = call_as(&client, "u1", "prepare_order", basket.clone()).await;
    assert_eq!(sc["ok"], true, "{sc}");
    let draft = &sc["draft"];
    assert_eq!(lines_of(draft, "gift_id"), [("hh-001".to_string(), 2), ("lw-001".to_string(), 1)]);
    // Each line priced on its own; the wrap at each line's merchant's price per unit.
    let (mug, toy) = (price(&app, "hh-001"), price(&app, "lw-001"));
    assert_eq!(draft["lines"][0]["subtotal"]["amount_minor"], 2 * mug);
    assert_eq!(draft["lines"][1]["subtotal"]["amount_minor"], toy);
    let wrap = 2 * 599 + 299;
    assert_eq!(draft["lines"][0]["gift_wrap_cost"]["amount_minor"], 2 * 599, "Hearth & Home wraps at $5.99");
    assert_eq!(draft["gift_wrap_cost"]["amount_minor"], wrap);
    assert_eq!(draft["subtotal"]["amount_minor"], 2 * mug + toy);
    assert_eq!(draft["total"]["amount_minor"], 2 * mug + toy + 1200 + wrap, "one total: {draft}");
    // The first line is still the draft's gift (the one-gift fields), and the model reads both.
    assert_eq!((draft["gift"]["id"].as_str(), draft["quantity"].as_u64()), (Some("hh-001"), Some(2)));
    let text = text_of(&prepared);
    assert!(text.contains("a basket of 2 gifts") && text.contains("1 × "), "{text}");
    // The same basket again is the same draft; another order of its lines another draft.
    let (_, again) = call_as(&client, "u1", "prepare_order", basket).await;
    assert_eq!(again["draft"]["id"], draft["id"]);
    let swapped = json!({"items": [{"gift_id": "lw-001"}, {"gift_id": "hh-001", "quantity": 2}],
        "recipient": recipient(), "gift_wrap": true, "shipping": "express"});
    let (_, other) = call_as(&client, "u1", "prepare_order", swapped).await;
    assert_ne!(other["draft"]["id"], draft["id"]);

    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).expect("token");
    let draft_id = draft["id"].as_str().unwrap();
    let (committed, placed) = call_as(&client, "u1", "commit_order", commit_args(draft_id, "ik_basket", token)).await;
    assert_eq!(placed["order"]["status"], "paid", "{placed}");
    let order = &placed["order"];
    assert_eq!(lines_of(order, "gift_id"), [("hh-001".to_string(), 2), ("lw-001".to_string(), 1)]);
    assert_eq!(order["lines"][1]["subtotal"]["amount_minor"], toy);
    assert_eq!(order["total"], draft["total"]);
    assert!(text_of(&committed).contains("; 1 × "), "{}", text_of(&committed));
    assert_eq!((charges(&app).await, orders(&app).await), (1, 1));
    let ledger = app.provider.ledger().await;
    assert_eq!(ledger[0].amount, draft["total"]["amount_minor"].as_i64().unwrap(), "one charge for the whole basket");
    assert_eq!((units_sold(&app, "hh-001").await, units_sold(&app, "lw-001").await), (2, 1));
    let (_, read) = call_as(&client, "u1", "get_order", json!({"order_id": order["id"]})).await;
    assert_eq!(read["order"]["lines"], order["lines"]);
}

#[tokio::test]
async fn a_duplicate_storm_on_a_basket_charges_once() {
    let app = spawn_app().await;
    app.provider.set_latency_ms(300).await;
    let basket = with_recipient(json!({"items": [{"gift_id": "pp-001", "quantity": 3}, {"gift_id": "hh-002"}]}));
    let (draft, token) = draft_of(&app, "u1", basket).await;
    let draft_id = draft["id"].as_str().unwrap();
    let clients = join_all((0..8).map(|_| app.client())).await;
    let calls = (0..48)
        .map(|i| call_as(&clients[i % clients.len()], "u1", "commit_order", commit_args(draft_id, "ik_storm", &token)));
    let results = join_all(calls).await;
    assert!(successes_or_in_progress(&results) >= 1);
    // Another key for the same basket finds the same order.
    let (_, other_key) = call_as(&clients[0], "u1", "commit_order", commit_args(draft_id, "ik_other", &token)).await;
    assert_eq!(other_key["order"]["status"], "paid", "{other_key}");
    assert_eq!((charges(&app).await, orders(&app).await), (1, 1), "one charge, one order");
    assert_eq!((units_sold(&app, "pp-001").await, units_sold(&app, "hh-002").await), (3, 1), "every line's units once");
}

/// pp-046 has 4 units: two baskets of different people that together want 5 of them race to
/// commit; one is paid, the other is told which gift ran out, and nothing is oversold.
#[tokio::test]
async fn two_baskets_racing_for_the_last_units_of_a_gift_sell_them_once() {
    let app = spawn_app().await;
    assert_eq!(app.state.catalog.get("pp-046").unwrap().stock, 4);
    app.provider.set_latency_ms(200).await;
    let (a, token_a) = draft_of(
        &app,
        "ana",
        with_recipient(json!({"items": [{"gift_id": "hh-001"}, {"gift_id": "pp-046", "quantity": 3}]})),
    )
    .await;
    let (b, token_b) = draft_of(
        &app,
        "rui",
        with_recipient(json!({"items": [{"gift_id": "pp-046", "quantity": 2}, {"gift_id": "pp-001"}]})),
    )
    .await;
    let (ca, cb) = (app.client().await, app.client().await);
    let (ra, rb) = tokio::join!(
        call_as(&ca, "ana", "commit_order", commit_args(a["id"].as_str().unwrap(), "ik_a", &token_a)),
        call_as(&cb, "rui", "commit_order", commit_args(b["id"].as_str().unwrap(), "ik_b", &token_b)),
    );
    let outcomes = [&ra.1, &rb.1];
    let paid = outcomes.iter().filter(|sc| sc["order"]["status"] == "paid").count();
    let refused: Vec<&&Value> = outcomes.iter().filter(|sc| sc["error"]["code"] == "GIFT_UNAVAILABLE").collect();
    assert_eq!((paid, refused.len()), (1, 1), "{outcomes:?}");
    assert!(refused[0]["error"]["message"].as_str().unwrap().contains("out of stock"), "{:?}", refused[0]);
    assert!(units_sold(&app, "pp-046").await <= 4, "never oversold");
    assert_eq!(charges(&app).await, 1);
    // A basket that asks for more than is left is refused when it is prepared, naming the gift.
    let (_, over) = call_as(
        &ca,
        "eva",
        "prepare_order",
        with_recipient(json!({"items": [{"gift_id": "pp-001"}, {"gift_id": "pp-046", "quantity": 5}]})),
    )
    .await;
    assert_eq!(over["error"]["code"], "GIFT_UNAVAILABLE", "{over}");
    let title = app.state.catalog.get("pp-046").unwrap().title.to_string();
    assert!(over["error"]["message"].as_str().unwrap().contains(&title), "{over}");
}

#[tokio::test]
async fn cancelling_a_basket_refunds_it_once_and_gives_every_lines_stock_back() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (draft, token) = draft_of(
        &app,
        "u1",
        with_recipient(json!({"items": [{"gift_id": "hh-003", "quantity": 2}, {"gift_id": "tr-002"}]})),
    )
    .await;
    let (_, placed) =
        call_as(&client, "u1", "commit_order", commit_args(draft["id"].as_str().unwrap(), "ik_1", &token)).await;
    let order = placed["order"]["id"].as_str().expect("an order").to_string();
    assert_eq!((units_sold(&app, "hh-003").await, units_sold(&app, "tr-002").await), (2, 1));
    let (got, _) = call_as(&client, "u1", "get_order", json!({"order_id": order})).await;
    let cancel_token = meta_of(&got, META_CANCEL_TOKENS).and_then(|m| m[&order].as_str()).expect("cancel token");
    let args = json!({"order_id": order, "idempotency_key": "ck_1", "confirmation_token": cancel_token});
    let (_, cancelled) = call_as(&client, "u1", "cancel_order", args).await;
    assert_eq!(cancelled["order"]["status"], "cancelled", "{cancelled}");
    let refunds = app.provider.refunds().await;
    assert_eq!(refunds.len(), 1);
    assert_eq!(refunds[0].amount, draft["total"]["amount_minor"].as_i64().unwrap(), "the whole basket back");
    assert_eq!((units_sold(&app, "hh-003").await, units_sold(&app, "tr-002").await), (0, 0), "stock given back");
}

#[tokio::test]
async fn a_basket_with_an_unknown_gift_or_one_that_cannot_be_wrapped_says_which() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (_, unknown) =
        call_as(&client, "u1", "prepare_order", json!({"items": [{"gift_id": "hh-001"}, {"gift_id": "nope-999"}]}))
            .await;
    assert_eq!(unknown["error"]["code"], "GIFT_NOT_FOUND", "{unknown}");
    assert!(unknown["error"]["message"].as_str().unwrap().contains("nope-999 (items[1])"), "{unknown}");
    // Trailhead does not wrap: the wrap is refused naming its merchant and its gift.
    let (_, unwrappable) = call_as(
        &client,
        "u1",
        "prepare_order",
        with_recipient(json!({"items": [{"gift_id": "hh-001"}, {"gift_id": "tr-002"}], "gift_wrap": true})),
    )
    .await;
    assert_eq!(unwrappable["error"]["code"], "VALIDATION_ERROR", "{unwrappable}");
    let message = unwrappable["error"]["field_errors"][0]["message"].as_str().unwrap();
    let gift = app.state.catalog.get("tr-002").unwrap();
    assert!(message.contains(&*gift.merchant.name) && message.contains(&*gift.title), "{message}");
    // Without the wrap the same basket is offered no wrap price (one merchant does not wrap).
    let (result, plain) = call_as(
        &client,
        "u1",
        "prepare_order",
        with_recipient(json!({"items": [{"gift_id": "hh-001"}, {"gift_id": "tr-002"}]})),
    )
    .await;
    assert_eq!(plain["draft"].get("gift_wrap_price"), None, "{plain}");
    assert!(text_of(&result).contains("cannot be wrapped"), "{}", text_of(&result));
    assert_eq!(charges(&app).await, 0);
}

/// A basket from two merchants arrives when the slower merchant's part does: its options' dates
/// are the later of each merchant's own.
#[tokio::test]
async fn a_baskets_dates_are_its_slowest_merchants() {
    let app = spawn_app().await;
    let options = |sc: &Value| sc["draft"]["delivery_options"].clone();
    let client = app.client().await;
    let (_, home) = call_as(&client, "u1", "prepare_order", with_recipient(json!({"gift_id": "hh-001"}))).await;
    let (_, toys) = call_as(&client, "u1", "prepare_order", with_recipient(json!({"gift_id": "lw-001"}))).await;
    let (_, both) = call_as(
        &client,
        "u1",
        "prepare_order",
        with_recipient(json!({"items": [{"gift_id": "hh-001"}, {"gift_id": "lw-001"}]})),
    )
    .await;
    for i in 0..2 {
        for end in ["earliest", "latest"] {
            let later = std::cmp::max(
                options(&home)[i][end].as_str().unwrap().to_string(),
                options(&toys)[i][end].as_str().unwrap().to_string(),
            );
            assert_eq!(options(&both)[i][end].as_str().unwrap(), later, "{i} {end}: {both}");
        }
    }
}

/// A database from before baskets, upgraded: its draft and its orders read as one line each
/// (an ACP order, whose draft is no tool draft, without a line price), and the stock still
/// counts their units, once.
#[tokio::test]
async fn orders_placed_before_baskets_keep_their_line_and_their_stock_after_the_upgrade() {
    use sqlx::{Connection, Executor, SqliteConnection};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    let url = format!("sqlite://{}?mode=rwc", path.display());
    let mut old = SqliteConnection::connect(&url).await.unwrap();
    sqlx::migrate!("../giftgenius-commerce/migrations/sqlite").run_to(18, &mut old).await.unwrap();
    old.execute(
        "INSERT INTO drafts (id, subject, draft_key, gift_id, quantity, shipping, currency, subtotal_minor, shipping_minor, \
         total_minor, created_at_ms, expires_at_ms) VALUES ('drf_old', 'u1', 'k', 'hh-001', 2, 'standard', 'USD', 5000, 0, 5000, 1, 2); \
         INSERT INTO orders (id, subject, draft_id, gift_id, gift_title, merchant, quantity, currency, total_minor, status, \
         created_at_ms, updated_at_ms) VALUES ('ord_old', 'u1', 'drf_old', 'hh-001', 'Mug', 'Hearth & Home', 2, 'USD', 5000, 'paid', 1, 1); \
         INSERT INTO orders (id, subject, draft_id, gift_id, gift_title, merchant, quantity, currency, total_minor, status, \
         created_at_ms, updated_at_ms) VALUES ('ord_acp', 'acp:chat', 'cs_1', 'hh-001', 'Mug', 'Hearth & Home', 1, 'USD', 2500, 'paid', 1, 1);",
    )
    .await
    .unwrap();
    old.close().await.unwrap();

    let store = giftgenius_commerce::store::Store::connect(&path.to_string_lossy()).await.expect("upgraded");
    let order = store.order("u1", "ord_old").await.unwrap().expect("the old order");
    let lines = order.lines();
    assert_eq!(lines.len(), 1);
    assert_eq!((lines[0].gift_id.as_str(), lines[0].quantity, lines[0].subtotal_minor), ("hh-001", 2, Some(5000)));
    let acp = store.order("acp:chat", "ord_acp").await.unwrap().expect("the ACP order");
    assert_eq!(acp.lines()[0].subtotal_minor, None, "no draft to price its line from");
    let draft = store.draft("u1", "drf_old").await.unwrap().expect("the old draft");
    assert_eq!(draft.lines()[0].subtotal_minor, 5000);
    assert_eq!(store.units_sold("hh-001").await.unwrap(), 3, "each order's units counted once");

    // An older server still running during the upgrade writes an order as it always did: no
    // lines, no units. It reads as one line, and the stock counts it by its columns.
    let mut older = SqliteConnection::connect(&url).await.unwrap();
    older
        .execute(
            "INSERT INTO orders (id, subject, draft_id, gift_id, gift_title, merchant, quantity, currency, total_minor,              status, created_at_ms, updated_at_ms) VALUES ('ord_older', 'u2', 'drf_x', 'hh-001', 'Mug', 'Hearth & Home', 4,              'USD', 10000, 'pending_payment', 2, 2)",
        )
        .await
        .unwrap();
    older.close().await.unwrap();
    let written = store.order("u2", "ord_older").await.unwrap().expect("the older server's order");
    assert_eq!((written.lines()[0].gift_id.as_str(), written.lines()[0].quantity), ("hh-001", 4));
    assert_eq!(store.units_sold("hh-001").await.unwrap(), 7);
    assert_eq!(store.units_sold_by_gift().await.unwrap().get("hh-001"), Some(&7));
}

/// The widget's Add: `add_to` names the basket the view keeps. Its lines come first, a gift
/// already there adds up; nothing else is taken from it. A basket already ordered, or someone
/// else's, is not added to (the gifts start a new one, and the answer never tells whether the
/// other person's draft exists); more than 10 of a gift or more than 10 gifts says what is in it.
#[tokio::test]
async fn adding_to_a_basket_takes_its_lines_until_it_is_ordered() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (first, _) = draft_of(&app, "u1", json!({"items": [{"gift_id": "hh-001"}], "recipient": recipient()})).await;
    let first_id = first["id"].as_str().unwrap();
    // Another gift: after the basket's; the same gift again: one more of it.
    let (second, _) = draft_of(&app, "u1", json!({"items": [{"gift_id": "lw-001"}], "add_to": first_id})).await;
    assert_eq!(lines_of(&second, "gift_id"), [("hh-001".to_string(), 1), ("lw-001".to_string(), 1)]);
    assert!(second["destination"].is_null(), "only the lines are taken: {second}");
    let second_id = second["id"].as_str().unwrap();
    let (third, token) =
        draft_of(&app, "u1", json!({"gift_id": "hh-001", "add_to": second_id, "recipient": recipient()})).await;
    assert_eq!(lines_of(&third, "gift_id"), [("hh-001".to_string(), 2), ("lw-001".to_string(), 1)]);
    assert_eq!(third["subtotal"]["amount_minor"], 2 * price(&app, "hh-001") + price(&app, "lw-001"));
    // Someone else's basket: as if there were none.
    let (theirs, _) = draft_of(&app, "u2", json!({"items": [{"gift_id": "lw-001"}], "add_to": second_id})).await;
    assert_eq!(lines_of(&theirs, "gift_id"), [("lw-001".to_string(), 1)]);
    // Too many of one gift, or too many gifts: the field, and what the basket already holds.
    let (_, eleven) =
        call_as(&client, "u1", "prepare_order", json!({"gift_id": "hh-001", "quantity": 9, "add_to": third["id"]}))
            .await;
    assert_eq!(eleven["error"]["code"], "VALIDATION_ERROR", "{eleven}");
    let message = eleven["error"]["field_errors"][0]["message"].as_str().unwrap();
    assert_eq!(eleven["error"]["field_errors"][0]["field"], "quantity");
    assert!(message.contains("11 of hh-001") && message.contains("2 already"), "{message}");
    // Ordered: the next Add starts a new basket.
    let third_id = third["id"].as_str().unwrap();
    let (_, placed) = call_as(&client, "u1", "commit_order", commit_args(third_id, "ik_add_to", &token)).await;
    assert_eq!(placed["order"]["status"], "paid", "{placed}");
    let (fresh, _) = draft_of(&app, "u1", json!({"items": [{"gift_id": "lw-001"}], "add_to": third_id})).await;
    assert_eq!(lines_of(&fresh, "gift_id"), [("lw-001".to_string(), 1)]);
    // A draft id nobody made: a new basket too.
    let (none, _) = draft_of(&app, "u1", json!({"items": [{"gift_id": "lw-001"}], "add_to": "drf_nobody"})).await;
    assert_eq!(lines_of(&none, "gift_id"), [("lw-001".to_string(), 1)]);
    // Ten gifts in a basket, and an eleventh.
    let catalog = app.state.catalog.current();
    let ten: Vec<Value> = catalog
        .gifts()
        .iter()
        .filter(|g| g.stock > 0 && g.id.as_ref() != "hh-001")
        .take(10)
        .map(|g| json!({"gift_id": g.id.to_string()}))
        .collect();
    let (full, _) = draft_of(&app, "u3", json!({"items": ten})).await;
    let (_, over) =
        call_as(&client, "u3", "prepare_order", json!({"items": [{"gift_id": "hh-001"}], "add_to": full["id"]})).await;
    assert_eq!(over["error"]["field_errors"][0]["field"], "items", "{over}");
    let message = over["error"]["field_errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("11 gifts") && message.contains("10 already") && message.contains("at most 10"),
        "{message}"
    );
}
