//! initialize, tools/list, the widget resource (in both MIME variants), and the widget state
//! every result carries as server-rendered HTML.

use crate::support::with_recipient;
use giftgenius_types::wire::{META_HTML, META_VIEW_UUID};
use rmcp::model::{CallToolResult, ReadResourceRequestParams};
use serde_json::{Value, json};

use crate::support::{TOKEN, call, call_in_locale, commit_args, meta_of, spawn_app, spawn_app_with, text_of};

#[tokio::test]
async fn initialize_names_the_server_and_gives_instructions() {
    let app = spawn_app().await;
    let client = app.client().await;
    let info = client.peer_info().expect("server info after initialize");
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("giftgenius"));
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(instructions.contains("suggest_gifts"));
    assert!(info.capabilities.tools.is_some() && info.capabilities.resources.is_some());
}

#[tokio::test]
async fn suggest_gifts_is_listed_with_schemas_annotations_and_widget_meta() {
    let app = spawn_app().await;
    let client = app.client().await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let tool = tools.iter().find(|t| t.name == "suggest_gifts").expect("suggest_gifts listed");

    let input = Value::Object((*tool.input_schema).clone());
    assert_eq!(input["type"], "object");
    assert_eq!(input["required"], json!(["relationship_type"]));
    assert_eq!(input["properties"]["age"]["maximum"], 120);
    let output = Value::Object((**tool.output_schema.as_ref().expect("outputSchema")).clone());
    assert_eq!(output["type"], "object");
    assert_eq!(output["oneOf"].as_array().map(Vec::len), Some(2));
    // The advertised schema is exactly the contract crate's, not a hand-written copy.
    assert_eq!(*tool.input_schema, *giftgenius_types::schema::input_schema::<giftgenius_types::SuggestGiftsInput>());

    let annotations = tool.annotations.as_ref().expect("annotations");
    assert_eq!(annotations.read_only_hint, Some(true));
    assert_eq!(annotations.destructive_hint, Some(false));
    assert_eq!(annotations.idempotent_hint, Some(true));
    assert_eq!(annotations.open_world_hint, Some(false));

    let meta = &tool.meta.as_ref().expect("_meta").0;
    let resources = client.list_all_resources().await.expect("resources/list");
    let widget_uri = resources[0].uri.clone();
    assert_eq!(meta["openai/outputTemplate"], widget_uri.as_str());
    assert_eq!(meta["ui"]["resourceUri"], widget_uri.as_str());
    assert_eq!(meta["openai/widgetAccessible"], true);
    assert!(meta["openai/toolInvocation/invoking"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(meta["openai/toolInvocation/invoked"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(tool.description.as_deref().unwrap_or_default().contains("Use this when"));
}

#[tokio::test]
async fn widget_resource_is_the_built_artifact_with_both_meta_vocabularies() {
    let app = spawn_app().await;
    let client = app.client().await;
    let resources = client.list_all_resources().await.expect("resources/list");
    // The widget, and the same artifact under the product checkout entry's fixed URI.
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!((uris.len(), uris[1]), (2, "ui://widget/checkout-session.html"), "{uris:?}");
    let resource = &resources[0];
    assert!(resource.uri.starts_with("ui://widget/giftgenius-v6-") && resource.uri.ends_with(".html"));
    assert_eq!(resource.mime_type.as_deref(), Some("text/html;profile=mcp-app"), "MCP Apps by default");

    let read =
        client.read_resource(ReadResourceRequestParams::new(resource.uri.clone())).await.expect("resources/read");
    let artifact = std::fs::read_to_string(&app.widget_path).expect("artifact readable");
    let (text, mime, meta) = match &read.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, mime_type, meta, .. } => (text, mime_type, meta),
        other => panic!("expected text contents, got {other:?}"),
    };
    assert_eq!(text.as_bytes(), artifact.as_bytes(), "served bytes differ from the built artifact");
    assert_eq!(mime.as_deref(), Some("text/html;profile=mcp-app"));
    let meta = &meta.as_ref().expect("contents _meta").0;
    let origin = app.base_url.clone();
    assert_eq!(meta["openai/widgetCSP"]["resource_domains"], json!([origin]));
    assert_eq!(meta["openai/widgetCSP"]["redirect_domains"], json!([origin]), "links go to our checkout only");
    assert_eq!(meta["openai/widgetCSP"]["connect_domains"], json!([]));
    assert_eq!(meta["openai/widgetPrefersBorder"], true);
    assert!(meta["openai/widgetDescription"].is_string());
    assert_eq!(meta["ui"]["csp"]["resourceDomains"], json!([origin]));
    assert_eq!(meta["ui"]["prefersBorder"], true);
    // Hosts validate the domain (Claude creates no view for a wrong one): none unless configured.
    assert!(meta.get("openai/widgetDomain").is_none() && meta["ui"].get("domain").is_none(), "{meta:?}");
    assert!(!Value::Object(meta.clone()).to_string().contains('*'), "no wildcard in any CSP");
}

#[tokio::test]
async fn the_widget_domain_and_the_skybridge_type_are_global_settings() {
    let app = spawn_app_with(|c| {
        c.widget_mime = giftgenius_server::config::WidgetMime::Skybridge;
        c.widget_domain = Some("giftgenius.example".into());
    })
    .await;
    let client = app.client().await;
    let resources = client.list_all_resources().await.expect("resources/list");
    assert_eq!(resources[0].mime_type.as_deref(), Some("text/html+skybridge"));
    let meta = &resources[0].meta.as_ref().expect("resource _meta").0;
    assert_eq!(meta["ui"]["domain"], "giftgenius.example");
    assert_eq!(meta["openai/widgetDomain"], "giftgenius.example");
}

#[tokio::test]
async fn every_connection_gets_the_same_tools_and_the_same_resources() {
    use rmcp::ServiceExt;
    use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
    let app = spawn_app().await;
    let mut capabilities = ClientCapabilities::default();
    let mut extensions = std::collections::BTreeMap::new();
    extensions.insert("io.modelcontextprotocol/ui".to_string(), serde_json::Map::new());
    capabilities.extensions = Some(extensions);
    let apps_host = ClientConfig::new(capabilities, Implementation::new("apps-host", "1.0"))
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(app.mcp_url()))
        .await
        .expect("connects");
    let plain = app.client().await;

    let resources = apps_host.list_all_resources().await.unwrap();
    assert_eq!(resources, plain.list_all_resources().await.unwrap(), "resources/list must not vary per connection");
    let tools = apps_host.list_all_tools().await.unwrap();
    assert_eq!(tools, plain.list_all_tools().await.unwrap(), "tools/list must not vary per connection");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "a deterministic order (by name), whatever the registry's map does");
    for tool in &tools {
        let meta = &tool.meta.as_ref().unwrap().0;
        // ChatGPT's product checkout entry names its widget by a fixed URI; every other tool the
        // versioned one.
        let uri = if tool.name == "checkout_session" { resources[1].uri.as_str() } else { resources[0].uri.as_str() };
        assert_eq!(meta["ui"]["resourceUri"], uri, "{}", tool.name);
        assert_eq!(meta["openai/outputTemplate"], uri, "{}", tool.name);
        assert_eq!(meta["openai/widgetAccessible"], true, "{}: the widget may call it", tool.name);
    }
}

/// The `data-state` of the widget root in a result's server-rendered HTML.
fn rendered_state(result: &CallToolResult) -> String {
    let html = meta_of(result, META_HTML).and_then(Value::as_str).expect("server-rendered html in _meta");
    let (_, rest) = html.split_once("data-state=\"").unwrap_or_else(|| panic!("no data-state: {html}"));
    rest[..rest.find('"').expect("a closed attribute")].to_string()
}

#[tokio::test]
async fn every_widget_result_carries_its_state_as_server_rendered_html() {
    let app = spawn_app().await;
    let client = app.client().await;

    let (found, _) = call(&client, "suggest_gifts", json!({"relationship_type": "friend"})).await;
    assert_eq!(rendered_state(&found), "results");
    let html = meta_of(&found, META_HTML).and_then(Value::as_str).unwrap();
    assert!(html.contains("data-action=\"choose\""), "results render Choose buttons");
    let (nothing, _) = call(
        &client,
        "suggest_gifts",
        json!({"relationship_type": "friend", "interests": ["coffee"], "budget_max": 3}),
    )
    .await;
    assert_eq!(rendered_state(&nothing), "empty");
    let (invalid, _) = call(&client, "suggest_gifts", json!({"relationship_type": "friend", "age": -1})).await;
    assert_eq!(rendered_state(&invalid), "error");

    let (prepared, sc) = call(&client, "prepare_order", with_recipient(json!({"gift_id": "hh-010"}))).await;
    assert_eq!(rendered_state(&prepared), "confirm");
    let draft = sc["draft"]["id"].as_str().unwrap();
    let token = meta_of(&prepared, TOKEN).and_then(Value::as_str).unwrap();
    let (unconfirmed, _) = call(&client, "commit_order", commit_args(draft, "ik_html_1", "ct_00")).await;
    assert_eq!(rendered_state(&unconfirmed), "error");
    let (committed, sc) = call(&client, "commit_order", commit_args(draft, "ik_html_2", token)).await;
    assert_eq!(rendered_state(&committed), "order-placed");
    let (replayed, _) = call(&client, "commit_order", commit_args(draft, "ik_html_2", token)).await;
    assert_eq!(rendered_state(&replayed), "order-placed", "a replay is rendered anew");
    let (read, _) = call(&client, "get_order", json!({"order_id": sc["order"]["id"]})).await;
    assert_eq!(rendered_state(&read), "order-placed");
    let (checkout, _) =
        call(&client, "create_checkout_session", json!({"gift_id": "hh-012", "idempotency_key": "ik_html_3"})).await;
    assert_eq!(rendered_state(&checkout), "checkout");
}

#[tokio::test]
async fn reading_an_unknown_resource_is_a_clean_not_found() {
    let app = spawn_app().await;
    let client = app.client().await;
    let err = client
        .read_resource(ReadResourceRequestParams::new("ui://widget/giftgenius-old.html"))
        .await
        .expect_err("unknown URI is an error");
    let text = err.to_string();
    assert!(text.contains("no such resource"), "{text}");
}

#[tokio::test]
async fn every_result_names_its_own_view_for_the_widget_to_keep_its_screen_under() {
    let app = spawn_app().await;
    let client = app.client().await;
    let args = json!({"relationship_type": "friend"});
    let (first, _) = call(&client, "suggest_gifts", args.clone()).await;
    let (second, _) = call(&client, "suggest_gifts", args).await;
    let (failed, _) = call(&client, "suggest_gifts", json!({"relationship_type": "friend", "age": -1})).await;
    let ids: Vec<String> = [&first, &second, &failed]
        .iter()
        .map(|r| meta_of(r, META_VIEW_UUID).and_then(Value::as_str).expect("viewUUID in _meta").to_string())
        .collect();
    for id in &ids {
        let parsed = uuid::Uuid::parse_str(id).unwrap_or_else(|e| panic!("{id} is not a UUID: {e}"));
        assert_eq!(parsed.hyphenated().to_string(), *id, "the canonical lower-case form");
    }
    // Two identical calls are two views: one's screen must never show up in the other.
    assert_ne!(ids[0], ids[1]);
    assert_ne!(ids[1], ids[2]);
}

#[tokio::test]
async fn the_server_renders_the_widget_in_the_callers_language_and_the_model_reads_english() {
    let app = spawn_app().await;
    let client = app.client().await;
    let arguments = json!({"relationship_type": "friend", "interests": ["coffee"], "budget_max": 100});
    for (locale, heading, choose) in [
        ("es-ES", "Ideas de regalo", ">Elegir<"),
        ("pt-BR", "Ideias de presente", ">Escolher<"),
        ("en-US", "Gift ideas", ">Choose<"),
    ] {
        let (result, _) = call_in_locale(&client, locale, "suggest_gifts", arguments.clone()).await;
        let html = meta_of(&result, META_HTML).and_then(Value::as_str).expect("server-rendered html in _meta");
        assert!(html.contains(heading) && html.contains(choose), "{locale}: {html}");
        assert!(html.contains(&format!("lang=\"{locale}\"")), "{locale}: {html}");
        let text = text_of(&result);
        assert!(text.to_lowercase().contains("gift"), "the model's text stays English: {text}");
        assert!(!text.contains("Ideas de regalo") && !text.contains("Ideias"), "{text}");
    }
}
