//! The ACP session's human text in the buyer's language (docs/acp.md §13.4) over real HTTP:
//! the create's `locale` first, then `Accept-Language` (quality respected), then English; the
//! language kept across later requests whatever they send; codes, params, amounts and every
//! other machine-readable part the same in every language.

use reqwest::{Response, StatusCode};
use serde_json::{Value, json};

use crate::acp::{KEY_ONE, VERSION, acp_app, address, codes, json_of};
use crate::acp_complete::{DECLINES, complete_body, vault_token};
use crate::support::TestApp;

/// A POST of platform `one`, with `Accept-Language` when given.
async fn post(app: &TestApp, path: &str, key: &str, body: &Value, accept_language: Option<&str>) -> Response {
    let mut request = reqwest::Client::new()
        .post(format!("{}/acp/checkout_sessions{path}", app.local_url))
        .bearer_auth(KEY_ONE)
        .header("API-Version", VERSION)
        .header("Idempotency-Key", key)
        .json(body);
    if let Some(languages) = accept_language {
        request = request.header("Accept-Language", languages);
    }
    request.send().await.expect("POST answered")
}

/// A sold-out gift (hh-007), a US address without a state and with a malformed ZIP code, and a
/// discount code: an `out_of_stock` error, two address messages and a `discount_code_invalid`
/// warning, in the language `locale` or `accept_language` picks.
async fn troubled(app: &TestApp, key: &str, locale: Option<&str>, accept_language: Option<&str>) -> Value {
    let mut body = json!({"line_items": [{"id": "hh-007"}], "currency": "usd", "capabilities": {},
        "fulfillment_details": {"address": address("US", "", "9410")}, "discounts": {"codes": ["SPRING"]}});
    if let Some(locale) = locale {
        body["locale"] = json!(locale);
    }
    let (status, session) = json_of(post(app, "", key, &body, accept_language).await).await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    session
}

/// What a person reads: each message's content (by code) and each total's text.
fn content(session: &Value, code: &str) -> String {
    let found = session["messages"].as_array().and_then(|m| m.iter().find(|m| m["code"] == code));
    found.and_then(|m| m["content"].as_str()).unwrap_or_else(|| panic!("no {code} message in {session}")).to_string()
}

fn display_texts(totals: &Value) -> Vec<&str> {
    totals.as_array().expect("totals").iter().filter_map(|t| t["display_text"].as_str()).collect()
}

/// The session with every human text and the per-session facts (id, times) blanked: what a
/// machine reads, which must not depend on the language.
fn machine_view(session: &Value) -> Value {
    let mut view = session.clone();
    for key in ["id", "created_at", "updated_at", "expires_at", "locale"] {
        view.as_object_mut().unwrap().remove(key);
    }
    blank(&mut view, "messages", "content");
    blank(&mut view, "totals", "display_text");
    if let Some(lines) = view["line_items"].as_array_mut() {
        for line in lines {
            blank(line, "totals", "display_text");
        }
    }
    if let Some(rejected) = view["discounts"]["rejected"].as_array_mut() {
        rejected.iter_mut().for_each(|r| r["message"] = json!(""));
    }
    view
}

fn blank(value: &mut Value, list: &str, field: &str) {
    if let Some(entries) = value[list].as_array_mut() {
        for entry in entries {
            entry[field] = json!("");
        }
    }
}

#[tokio::test]
async fn acp_locale_picks_the_language_then_accept_language_then_english() {
    let app = acp_app().await;
    let spanish = troubled(&app, "es", Some("es-ES"), Some("pt-BR")).await;
    let portuguese = troubled(&app, "pt", None, Some("pt-BR,pt;q=0.9")).await;
    let english = troubled(&app, "de", None, Some("de-DE")).await;
    let unsupported_locale = troubled(&app, "de-locale", Some("de-DE"), Some("es")).await;
    let by_quality = troubled(&app, "q", None, Some("de-DE,es;q=0.5,pt;q=0.8")).await;

    assert_eq!(display_texts(&spanish["totals"]), ["Artículos", "Subtotal", "Total"]);
    assert_eq!(display_texts(&spanish["line_items"][0]["totals"]), ["Artículos", "Subtotal", "Total"]);
    assert!(content(&spanish, "out_of_stock").starts_with("Solo quedan 0 de "), "{spanish}");
    assert!(content(&spanish, "missing").starts_with("Estado o provincia: Obligatorio en US"), "{spanish}");
    assert!(content(&spanish, "invalid").starts_with("Código postal: Usa el formato de código postal de US"));
    assert_eq!(
        content(&spanish, "discount_code_invalid"),
        "El código SPRING no es válido: GiftGenius no tiene promociones."
    );
    assert_eq!(spanish["discounts"]["rejected"][0]["message"], content(&spanish, "discount_code_invalid"));
    assert_eq!(spanish["locale"], "es-ES", "the locale as sent");

    assert_eq!(display_texts(&portuguese["totals"]), ["Itens", "Subtotal", "Total"]);
    assert!(content(&portuguese, "out_of_stock").starts_with("Restam apenas 0 de "), "{portuguese}");
    assert!(content(&portuguese, "invalid").starts_with("CEP / código postal: Use o formato de código postal de US"));

    for (english, why) in [(&english, "an Accept-Language we lack"), (&unsupported_locale, "a locale we lack")] {
        assert_eq!(display_texts(&english["totals"]), ["Items", "Subtotal", "Total"], "{why}");
        assert!(content(english, "out_of_stock").starts_with("Only 0 left of "), "{why}: {english}");
        assert!(content(english, "invalid").starts_with("Postal code: Use the postal code format of US"), "{why}");
    }
    assert_eq!(display_texts(&by_quality["totals"]), ["Itens", "Subtotal", "Total"], "the highest quality we speak");

    // Codes, params, amounts, statuses: the same in every language.
    assert_eq!(codes(&spanish), codes(&english));
    assert_eq!(codes(&portuguese), codes(&english));
    assert_eq!(machine_view(&spanish), machine_view(&english));
    assert_eq!(machine_view(&portuguese), machine_view(&english));
}

#[tokio::test]
async fn acp_a_session_keeps_its_language_across_updates_and_gets() {
    let app = acp_app().await;
    let created = troubled(&app, "keep", None, Some("es-MX")).await;
    let id = created["id"].as_str().unwrap();

    // A later request that prefers Portuguese changes nothing: the session speaks Spanish.
    let update =
        json!({"line_items": [{"id": "hh-001"}], "fulfillment_details": {"address": address("US", "CA", "94103")}});
    let (status, ready) = json_of(post(&app, &format!("/{id}"), "keep-2", &update, Some("pt-BR")).await).await;
    assert_eq!((status, ready["status"].as_str()), (StatusCode::OK, Some("ready_for_payment")), "{ready}");
    let titles: Vec<&str> =
        ready["fulfillment_options"].as_array().unwrap().iter().filter_map(|o| o["title"].as_str()).collect();
    assert_eq!(titles, ["Estándar", "Exprés"]);
    assert_eq!(display_texts(&ready["fulfillment_options"][0]["totals"]), ["Envío", "Total"]);
    assert_eq!(display_texts(&ready["totals"]), ["Artículos", "Subtotal", "Envío", "Total"]);
    assert!(ready.get("locale").is_none(), "no locale was sent, none is made up");

    let got = reqwest::Client::new()
        .get(format!("{}/acp/checkout_sessions/{id}", app.local_url))
        .bearer_auth(KEY_ONE)
        .header("API-Version", VERSION)
        .header("Accept-Language", "en-US")
        .send()
        .await
        .unwrap();
    let (_, got) = json_of(got).await;
    assert_eq!(got, ready, "GET shows the stored language whatever it prefers");

    // A decline speaks Spanish too; its code and param stay.
    let declining = vault_token(&app, id, 6800, DECLINES).await;
    let (_, declined) =
        json_of(post(&app, &format!("/{id}/complete"), "keep-3", &complete_body(&declining), None).await).await;
    assert!(codes(&declined).contains(&("payment_declined".to_string(), "$.payment_data".to_string())), "{declined}");
    assert_eq!(content(&declined, "payment_declined"), "El pago fue rechazado; no se ha cobrado nada.");
}
