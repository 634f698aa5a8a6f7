//! What an app directory's reviewer and a host ask the app itself for: the domain check at
//! `/.well-known/openai-apps-challenge`, the privacy / terms / support pages in the browser's
//! language with the retention really in force, and the MCP registry's server.json printed by
//! `giftgenius-server registry-json`.
use serde_json::Value;

use crate::support::spawn_app_with;

async fn get(url: &str, accept_language: Option<&str>) -> reqwest::Response {
    let mut request = reqwest::Client::new().get(url);
    if let Some(language) = accept_language {
        request = request.header("accept-language", language);
    }
    request.send().await.expect("GET")
}

#[tokio::test]
async fn the_domain_check_answers_the_configured_token_as_text_and_404_without_one() {
    let app = spawn_app_with(|c| c.apps_challenge_token = Some("tok_0123456789abcdef".into())).await;
    let response = get(&format!("{}/.well-known/openai-apps-challenge", app.local_url), None).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    assert_eq!(response.text().await.unwrap(), "tok_0123456789abcdef");

    let unset = spawn_app_with(|_| {}).await;
    let response = get(&format!("{}/.well-known/openai-apps-challenge", unset.local_url), None).await;
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn the_policy_pages_speak_the_browsers_language_and_state_the_retention_in_force() {
    let app = spawn_app_with(|c| {
        c.operator_name = "<Acme & Co> \"Gifts\"".into();
        c.operator_contact = "help@acme.example".into();
        c.order_retention_days = 123;
        c.financial_retention_days = 4567;
        c.refund_retention_days = 89;
        c.address_retention_days = 45;
        c.idempotency_retention_hours = 30;
        c.draft_ttl_secs = 900;
        c.cancel_window_secs = 7200;
    })
    .await;
    let page = |path: &'static str, language: Option<&'static str>| {
        let url = format!("{}{path}", app.local_url);
        async move {
            let response = get(&url, language).await;
            assert_eq!(response.status(), 200, "{path}");
            assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
            assert!(response.headers().contains_key("content-security-policy"), "{path}");
            response.text().await.unwrap()
        }
    };

    let privacy = page("/privacy", None).await;
    assert!(privacy.contains("<html lang=\"en\"") && privacy.contains("GiftGenius privacy policy"), "{privacy}");
    for fact in [
        "kept for 123 days",       // personal data on orders
        "stays for 4567 days",     // financial records
        "kept for 89 days",        // refunds
        "used for 45 days",        // saved addresses
        "answers for 30 hours",    // idempotency keys
        "valid for 15 minutes",    // drafts…
        "deleted within 32 hours", // …gone after 15 min + 30 h + one hourly pruning pass
        "press Delete my data",    // how to delete, with the widget's own button label
    ] {
        assert!(privacy.contains(fact), "the privacy page does not say {fact:?}:\n{privacy}");
    }
    // The operator's name is text, never markup.
    assert!(privacy.contains("&lt;Acme &amp; Co&gt; &quot;Gifts&quot;"), "{privacy}");
    assert!(!privacy.contains("<Acme"), "{privacy}");
    assert!(privacy.contains("<a href=\"mailto:help@acme.example\">help@acme.example</a>"), "{privacy}");

    let spanish = page("/privacy", Some("es-MX,es;q=0.9,en;q=0.5")).await;
    assert!(spanish.contains("<html lang=\"es\"") && spanish.contains("se guardan 123 días"), "{spanish}");
    assert!(spanish.contains("pulsa Borrar mis datos"), "{spanish}");
    let portuguese = page("/privacy", Some("pt-BR")).await;
    assert!(portuguese.contains("<html lang=\"pt\"") && portuguese.contains("guardados por 123 dias"), "{portuguese}");

    let terms = page("/terms", Some("en-GB")).await;
    assert!(terms.contains("GiftGenius terms of use") && terms.contains("within 120 minutes"), "{terms}");
    assert!(terms.contains("href=\"/privacy\"") && terms.contains("href=\"/support\""), "{terms}");
    let support = page("/support", Some("pt")).await;
    assert!(support.contains("Suporte do GiftGenius") && support.contains("mailto:help@acme.example"), "{support}");
}

#[tokio::test]
async fn the_default_operator_is_a_local_run_and_a_web_contact_becomes_a_link() {
    let app = spawn_app_with(|c| c.operator_contact = "https://acme.example/help?a=1&b=2".into()).await;
    let support = get(&format!("{}/support", app.local_url), None).await.text().await.unwrap();
    assert!(support.contains("operated by GiftGenius (local development)."), "{support}");
    assert!(support.contains("<a href=\"https://acme.example/help?a=1&amp;b=2\">"), "{support}");
}

fn registry_json(args: &[&str]) -> (bool, String, String) {
    crate::deploy::run_server_binary(
        args,
        &["GIFTGENIUS_PUBLIC_URL", "GIFTGENIUS_REGISTRY_NAME", "GIFTGENIUS_REGISTRY_IMAGE"],
    )
}

/// The registry's server.json constraints (its server schema of 2025-12-11) that a remote
/// server's document must meet, as a JSON Schema.
fn registry_shape() -> Value {
    serde_json::json!({
        "type": "object",
        "required": ["$schema", "name", "description", "version", "remotes"],
        "additionalProperties": false,
        "properties": {
            "$schema": {"const": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"},
            "name": {"type": "string", "minLength": 3, "maxLength": 200, "pattern": "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"},
            "title": {"type": "string", "minLength": 1, "maxLength": 100},
            "description": {"type": "string", "minLength": 1, "maxLength": 100},
            "version": {"type": "string", "minLength": 1, "maxLength": 255, "not": {"const": "latest"}},
            "remotes": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["type", "url"],
                    "additionalProperties": false,
                    "properties": {"type": {"const": "streamable-http"}, "url": {"type": "string", "pattern": "^https://"}}
                }
            }
        }
    })
}

#[test]
fn registry_json_prints_a_remote_streamable_http_server_from_the_flags() {
    let (ok, stdout, stderr) = registry_json(&[
        "registry-json",
        "--registry-name",
        "io.github.acme/giftgenius",
        "--public-url",
        "https://gifts.acme.example/",
    ]);
    assert!(ok, "{stderr}");
    let document: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let shape = registry_shape();
    let validator = jsonschema::draft202012::new(&shape).unwrap();
    let errors: Vec<String> = validator.iter_errors(&document).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{document:#}");
    assert_eq!(document["name"], "io.github.acme/giftgenius");
    assert_eq!(document["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        document["remotes"],
        serde_json::json!([{"type": "streamable-http", "url": "https://gifts.acme.example/mcp"}])
    );
}

#[test]
fn registry_json_lists_the_container_image_as_an_oci_package_when_named() {
    let (ok, stdout, stderr) = registry_json(&[
        "registry-json",
        "--registry-name",
        "io.github.acme/giftgenius",
        "--public-url",
        "https://gifts.acme.example",
        "--registry-image",
        "ghcr.io/acme/giftgenius:0.1.0",
    ]);
    assert!(ok, "{stderr}");
    let document: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(
        document["packages"],
        serde_json::json!([{
            "registryType": "oci",
            "identifier": "ghcr.io/acme/giftgenius:0.1.0",
            "transport": {"type": "streamable-http", "url": "http://localhost:8000/mcp"}
        }])
    );
    // The remote stays; an unpinned image is refused, naming the flag.
    assert_eq!(document["remotes"][0]["url"], "https://gifts.acme.example/mcp");
    let (ok, _, stderr) = registry_json(&[
        "registry-json",
        "--registry-name",
        "io.github.acme/giftgenius",
        "--public-url",
        "https://gifts.acme.example",
        "--registry-image",
        "ghcr.io/acme/giftgenius:latest",
    ]);
    assert!(!ok && stderr.contains("--registry-image"), "{stderr}");
}

#[test]
fn registry_json_refuses_what_the_registry_would_and_names_the_flag() {
    for (args, says) in [
        (&["registry-json", "--public-url", "https://gifts.acme.example"][..], "--registry-name"),
        (
            &["registry-json", "--registry-name", "giftgenius", "--public-url", "https://g.example"][..],
            "--registry-name",
        ),
        (&["registry-json", "--registry-name", "io.github.acme/giftgenius"][..], "--public-url"),
        (
            &["registry-json", "--registry-name", "io.github.acme/giftgenius", "--public-url", "http://127.0.0.1:8000"]
                [..],
            "https",
        ),
    ] {
        let (ok, stdout, stderr) = registry_json(args);
        assert!(!ok && stdout.is_empty(), "{args:?} was accepted: {stdout}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
