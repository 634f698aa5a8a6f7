//! ChatGPT's product checkout entry (issue 44 item 2): the `checkout_session` tool and the
//! `ui://widget/checkout-session.html` resource, exactly as OpenAI's product checkout conversion
//! spec names them. The items are our product feed's ids; they open the widget on one basket,
//! which asks for what is missing and is bought, after the person's Confirm, like any draft.

use rmcp::model::ReadResourceRequestParams;
use serde_json::{Value, json};

use crate::support::{TOKEN, call_as, charges, commit_args, meta_of, orders, recipient, spawn_app, text_of};

fn entry(items: Value) -> Value {
    json!({"checkout_session": {"items": items}})
}

#[tokio::test]
async fn the_entry_is_listed_as_the_contract_names_it_and_serves_the_one_widget() {
    let app = spawn_app().await;
    let client = app.client().await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let tool = tools.iter().find(|t| t.name == "checkout_session").expect("checkout_session is listed");
    let meta = &tool.meta.as_ref().expect("_meta").0;
    assert_eq!(meta["ui"]["resourceUri"], "ui://widget/checkout-session.html");
    assert_eq!(meta["openai/outputTemplate"], "ui://widget/checkout-session.html");
    assert_eq!(meta["openai/widgetAccessible"], true);
    let input = serde_json::to_value(&*tool.input_schema).unwrap();
    assert_eq!(input["required"], json!(["checkout_session"]), "{input}");
    let annotations = tool.annotations.as_ref().expect("annotations");
    assert_eq!((annotations.read_only_hint, annotations.destructive_hint), (Some(false), Some(false)));
    // Every tool the widget calls says it may be called from the widget.
    for tool in &tools {
        assert_eq!(tool.meta.as_ref().unwrap().0["openai/widgetAccessible"], true, "{}", tool.name);
    }

    let read = client
        .read_resource(ReadResourceRequestParams::new("ui://widget/checkout-session.html"))
        .await
        .expect("the entry's widget URI reads");
    let artifact = std::fs::read_to_string(&app.widget_path).expect("artifact");
    match &read.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, meta, .. } => {
            assert_eq!(text.as_bytes(), artifact.as_bytes(), "the same artifact");
            let meta = &meta.as_ref().expect("_meta").0;
            assert!(meta["openai/widgetCSP"].is_object() && meta["ui"]["csp"].is_object(), "{meta:?}");
        }
        other => panic!("text contents expected, got {other:?}"),
    }
}

#[tokio::test]
async fn two_products_open_one_basket_that_asks_for_the_recipient_then_is_bought_once() {
    let app = spawn_app().await;
    let client = app.client().await;
    let items = json!([{"id": "hh-001", "quantity": 2, "offerId": "hh-001"}, {"id": "pp-001", "quantity": 1}]);
    let (result, sc) = call_as(&client, "u1", "checkout_session", entry(items.clone())).await;
    assert_eq!((sc["ok"].as_bool(), sc["tool"].as_str()), (Some(true), Some("checkout_session")), "{sc}");
    let draft = &sc["draft"];
    let lines: Vec<(&str, u64)> = draft["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["gift"]["id"].as_str().unwrap(), l["quantity"].as_u64().unwrap()))
        .collect();
    assert_eq!(lines, [("hh-001", 2), ("pp-001", 1)]);
    assert_eq!(draft["total"]["currency"], "USD", "the feed's currency");
    assert!(draft.get("destination").is_none(), "nobody to send it to yet: {draft}");
    assert!(text_of(&result).contains("no recipient yet"), "{}", text_of(&result));
    let token = meta_of(&result, TOKEN).and_then(Value::as_str).expect("the token, for the widget only");
    assert!(!sc.to_string().contains(token) && !text_of(&result).contains(token));
    // The widget shows the confirm card of the basket (rendered by the server for either runtime).
    let html = meta_of(&result, "giftgenius/html").and_then(Value::as_str).unwrap_or_default();
    assert!(html.contains(r#"data-state="confirm""#) && html.contains("gg-basket-lines"), "{html}");
    // The same entry again is the same draft; without a recipient it cannot be bought.
    let (_, again) = call_as(&client, "u1", "checkout_session", entry(items.clone())).await;
    assert_eq!(again["draft"]["id"], draft["id"]);
    let draft_id = draft["id"].as_str().unwrap();
    let (_, refused) = call_as(&client, "u1", "commit_order", commit_args(draft_id, "ik_1", token)).await;
    assert_eq!(refused["error"]["field_errors"][0]["field"], "recipient", "{refused}");
    assert_eq!(charges(&app).await, 0);

    // The card's form adds the recipient: prepare_order with the basket's items (what the
    // widget's Update sends), then Confirm, twice: one order, one charge.
    let args = json!({"items": [{"gift_id": "hh-001", "quantity": 2}, {"gift_id": "pp-001", "quantity": 1}],
        "recipient": recipient(), "currency": "USD", "shipping": "standard"});
    let (prepared, addressed) = call_as(&client, "u1", "prepare_order", args).await;
    assert_eq!(addressed["ok"], true, "{addressed}");
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap();
    let id = addressed["draft"]["id"].as_str().unwrap();
    let (_, paid) = call_as(&client, "u1", "commit_order", commit_args(id, "ik_2", token)).await;
    let (_, replay) = call_as(&client, "u1", "commit_order", commit_args(id, "ik_2", token)).await;
    assert_eq!(paid["order"]["status"], "paid", "{paid}");
    assert_eq!(paid, replay);
    assert_eq!(paid["order"]["lines"].as_array().map(Vec::len), Some(2));
    assert_eq!((charges(&app).await, orders(&app).await), (1, 1));
}

#[tokio::test]
async fn what_the_entry_cannot_sell_is_said_by_item() {
    let app = spawn_app().await;
    let client = app.client().await;
    let (_, unknown) =
        call_as(&client, "u1", "checkout_session", entry(json!([{"id": "hh-001"}, {"id": "nope-404"}]))).await;
    assert_eq!(unknown["error"]["code"], "GIFT_NOT_FOUND", "{unknown}");
    assert!(unknown["error"]["message"].as_str().unwrap().contains("nope-404"), "{unknown}");
    let (_, offer) =
        call_as(&client, "u1", "checkout_session", entry(json!([{"id": "hh-001", "offerId": "hh-002"}]))).await;
    assert_eq!(offer["error"]["field_errors"][0]["field"], "checkout_session.items[0].offerId", "{offer}");
    let (_, none) = call_as(&client, "u1", "checkout_session", entry(json!([]))).await;
    assert_eq!(none["error"]["code"], "VALIDATION_ERROR", "{none}");
    let (_, sold_out) = call_as(&client, "u1", "checkout_session", entry(json!([{"id": "hh-007"}]))).await;
    assert_eq!(sold_out["error"]["code"], "GIFT_UNAVAILABLE", "{sold_out}");
    // An id given twice is one line with the quantities added.
    let (_, twice) = call_as(
        &client,
        "u1",
        "checkout_session",
        entry(json!([{"id": "hh-001"}, {"id": "pp-001"}, {"id": "hh-001", "quantity": 2}])),
    )
    .await;
    assert_eq!(twice["draft"]["lines"][0]["quantity"], 3, "{twice}");
    assert_eq!(twice["draft"]["lines"].as_array().map(Vec::len), Some(2));
    assert_eq!(charges(&app).await, 0);
}
