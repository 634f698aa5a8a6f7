//! The delivery form's field errors in the person's language (issue 24, item 7): the widget
//! (here its server-rendered markup, the same components as the wasm) says each problem in
//! English, Spanish or Portuguese from the rule the error names, while what the model reads (the
//! result's text and each error's `message`) stays English.

use giftgenius_types::wire::META_HTML;
use serde_json::{Value, json};

use crate::support::{call_in_locale, meta_of, spawn_app, text_of};

/// A US address without a state, with a four-digit ZIP, a blank name and a two-line street.
fn broken_order(name: &str) -> Value {
    json!({"gift_id": "hh-010", "recipient": {"name": name, "address": {
        "line1": "1 Main St\nApt 2", "city": "Austin", "postal_code": "7870", "country": "US"}}})
}

#[tokio::test]
async fn field_errors_read_in_the_persons_language_and_stay_english_for_the_model() {
    let app = spawn_app().await;
    let client = app.client().await;
    // (locale, what the person reads for the name, the region, the postal code, the street)
    let cases = [
        (
            "en-US",
            [
                "This is required.",
                "Required in US: the two-letter code of the state or province, e.g. AL.",
                "Use the postal code format of US, e.g. ",
                "Use one line of plain text.",
            ],
        ),
        (
            "es-MX",
            [
                "Este campo es obligatorio.",
                "Obligatorio en US: el código de dos letras del estado o la provincia, por ejemplo AL.",
                "Usa el formato de código postal de US, por ejemplo ",
                "Usa una sola línea de texto.",
            ],
        ),
        (
            "pt-BR",
            [
                "Este campo é obrigatório.",
                "Obrigatório em US: a sigla de duas letras do estado ou da província, por exemplo AL.",
                "Use o formato de código postal de US, por exemplo ",
                "Use uma só linha de texto.",
            ],
        ),
    ];
    let mut model_texts = Vec::new();
    for (locale, person_reads) in cases {
        let (result, sc) = call_in_locale(&client, locale, "prepare_order", broken_order(" ")).await;
        assert_eq!(sc["error"]["code"], "VALIDATION_ERROR", "{sc}");
        let errors = sc["error"]["field_errors"].as_array().unwrap();
        let rule = |field: &str| {
            let e = errors.iter().find(|e| e["field"] == field).unwrap_or_else(|| panic!("{field} in {sc}"));
            (e["rule"]["code"].as_str().unwrap_or_default().to_string(), e["message"].as_str().unwrap().to_string())
        };
        // The model's words are English whatever the person reads; the rule is the same fact in parts.
        assert_eq!(rule("recipient.name").0, "required");
        assert_eq!(
            rule("recipient.address.region"),
            (
                "region_required".into(),
                "is required in US: the two-letter code of the state or province (e.g. AL)".into()
            )
        );
        assert_eq!(rule("recipient.address.postal_code").0, "postal_code_shape");
        assert_eq!(rule("recipient.address.line1"), ("one_line".into(), "must be one line of plain text".into()));

        let html = meta_of(&result, META_HTML).and_then(Value::as_str).expect("the widget's markup");
        for sentence in person_reads {
            assert!(html.contains(sentence), "{locale}: the widget lacks {sentence:?}:\n{html}");
        }
        if locale != "en-US" {
            assert!(!html.contains("is required in US"), "{locale}: English reached the person");
        }
        // The reference differs per call; everything else the model reads is the same.
        let text = text_of(&result);
        model_texts.push(text.lines().filter(|l| !l.starts_with("Reference:")).collect::<Vec<_>>().join("\n"));

        // An empty name, as the form sends it, fails the argument schema itself (nothing else
        // is checked then): the same rule, in the same words.
        let (result, sc) = call_in_locale(&client, locale, "prepare_order", broken_order("")).await;
        let name = &sc["error"]["field_errors"][0];
        assert_eq!((name["field"].as_str(), name["rule"]["code"].as_str()), (Some("recipient.name"), Some("required")));
        assert_eq!(name["message"], "must not be empty", "{sc}");
        let html = meta_of(&result, META_HTML).and_then(Value::as_str).unwrap();
        assert!(html.contains(person_reads[0]), "{locale}: {html}");
    }
    // The text the model reads is the same in every locale, and English.
    assert!(model_texts.iter().all(|t| t == &model_texts[0]), "{model_texts:#?}");
    assert!(model_texts[0].contains("recipient.address.region: is required in US"), "{}", model_texts[0]);
    for foreign in ["obligatorio", "obrigatório", "Usa ", "Use o "] {
        assert!(!model_texts[0].contains(foreign), "{foreign:?} in the model's text");
    }
}
