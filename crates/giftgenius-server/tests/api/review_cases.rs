//! docs/review-cases.json: prompts an app reviewer tries, each with the tool call a model should
//! make (or none). This test holds them to the tools the server really publishes: every expected
//! call names a tool in tools/list that the model may call, its arguments pass that tool's
//! `inputSchema`, a gift id is in the catalog, and its annotations fit the case (`browse`: a
//! read-only tool; `purchase`: a tool that changes something but destroys nothing, which is
//! prepare_order, never the widget's commit_order). It also keeps docs/review-cases.md equal to
//! the JSON rendered (`GIFTGENIUS_UPDATE_DOCS=1` rewrites it).

use rmcp::model::Tool;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::support::spawn_app;

const JSON_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/review-cases.json");
const MD_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/review-cases.md");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewCases {
    about: String,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    id: String,
    prompt: String,
    kind: Kind,
    expect: Option<Expected>,
    why: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Browse,
    Purchase,
    None,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    tool: String,
    arguments: Map<String, Value>,
}

fn load() -> ReviewCases {
    let text = std::fs::read_to_string(JSON_PATH).expect("docs/review-cases.json");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("docs/review-cases.json: {e}"))
}

/// The document docs/review-cases.md must be.
fn render(cases: &ReviewCases) -> String {
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let mut out = String::from(
        "# Review cases\n\n<!-- Generated from docs/review-cases.json by the review_cases test \
         (GIFTGENIUS_UPDATE_DOCS=1 cargo test -p giftgenius-server --test api review_cases); edit the JSON. -->\n\n",
    );
    out.push_str(&cases.about);
    out.push_str("\n\n");
    for (title, must_use) in
        [("Prompts that must use GiftGenius", true), ("Prompts that must not use GiftGenius", false)]
    {
        out.push_str(&format!("## {title}\n\n| case | prompt | expected call | why |\n|---|---|---|---|\n"));
        for case in cases.cases.iter().filter(|c| c.expect.is_some() == must_use) {
            let call = match &case.expect {
                Some(e) => format!("`{}` `{}`", e.tool, Value::Object(e.arguments.clone())),
                None => "none".to_string(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                case.id,
                cell(&case.prompt),
                cell(&call),
                cell(&case.why)
            ));
        }
        out.push('\n');
    }
    out
}

fn hint(tool: &Tool, pick: impl Fn(&rmcp::model::ToolAnnotations) -> Option<bool>) -> Option<bool> {
    tool.annotations.as_ref().and_then(pick)
}

/// What is wrong with one case against the published tools (empty: nothing).
fn problems(case: &Case, tools: &[Tool], gift_exists: impl Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    let Some(expected) = &case.expect else {
        if case.kind != Kind::None {
            found.push(format!("kind {:?} expects a call", case.kind));
        }
        return found;
    };
    let Some(tool) = tools.iter().find(|t| t.name == expected.tool) else {
        return vec![format!("{} is not in tools/list", expected.tool)];
    };
    let visible = tool
        .meta
        .as_ref()
        .and_then(|m| m.get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array)
        .is_some_and(|v| v.iter().any(|who| who == "model"));
    if !visible {
        found.push(format!("{} is not visible to the model (widget only)", tool.name));
    }
    let read_only = hint(tool, |a| a.read_only_hint) == Some(true);
    let destructive = hint(tool, |a| a.destructive_hint) != Some(false);
    match case.kind {
        Kind::None => found.push("kind none expects no call".into()),
        Kind::Browse if !read_only => found.push(format!("{} is not read-only, but the case only browses", tool.name)),
        Kind::Purchase if read_only || destructive => found.push(format!(
            "{} must prepare a purchase (not read-only, not destructive); it is read-only={read_only}, destructive={destructive}",
            tool.name
        )),
        _ => {}
    }
    let schema = Value::Object((*tool.input_schema).clone());
    let validator = jsonschema::draft202012::new(&schema).expect("the published inputSchema compiles");
    let arguments = Value::Object(expected.arguments.clone());
    for error in validator.iter_errors(&arguments) {
        found.push(format!("arguments at {}: {error}", error.instance_path()));
    }
    let items = expected.arguments.get("items").and_then(Value::as_array).into_iter().flatten();
    let gifts = expected.arguments.get("gift_id").into_iter().chain(items.filter_map(|item| item.get("gift_id")));
    for gift in gifts.filter_map(Value::as_str) {
        if !gift_exists(gift) {
            found.push(format!("gift {gift} is not in the catalog"));
        }
    }
    found
}

#[tokio::test]
async fn every_review_case_fits_the_published_tools() {
    let cases = load();
    let must_use = cases.cases.iter().filter(|c| c.expect.is_some()).count();
    assert!(must_use >= 5, "at least five prompts must use the app; {must_use}");
    assert!(cases.cases.len() - must_use >= 3, "at least three prompts must not use the app");
    let mut ids: Vec<&str> = cases.cases.iter().map(|c| c.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), cases.cases.len(), "case ids are unique");
    assert!(cases.cases.iter().any(|c| c.kind == Kind::Purchase), "a purchase prompt is among the cases");

    let app = spawn_app().await;
    let tools = app.client().await.list_all_tools().await.expect("tools/list");
    let gift_exists = |id: &str| app.state.catalog.get(id).is_some();
    let mut all = Vec::new();
    for case in &cases.cases {
        for problem in problems(case, &tools, gift_exists) {
            all.push(format!("{}: {problem}", case.id));
        }
    }
    assert!(all.is_empty(), "docs/review-cases.json has drifted from the tools:\n{}", all.join("\n"));
}

#[tokio::test]
async fn the_checks_catch_a_widget_only_tool_bad_arguments_and_a_write_for_browsing() {
    let app = spawn_app().await;
    let tools = app.client().await.list_all_tools().await.expect("tools/list");
    let case = |kind: Kind, tool: &str, arguments: Value| Case {
        id: "t".into(),
        prompt: String::new(),
        kind,
        expect: Some(Expected { tool: tool.into(), arguments: arguments.as_object().unwrap().clone() }),
        why: String::new(),
    };
    let gift_exists = |id: &str| app.state.catalog.get(id).is_some();
    let commit = case(Kind::Purchase, "commit_order", serde_json::json!({"draft_id": "d", "idempotency_key": "k"}));
    let found = problems(&commit, &tools, gift_exists).join("; ");
    assert!(found.contains("not visible to the model") && found.contains("must prepare"), "{found}");
    let wrong = case(Kind::Browse, "suggest_gifts", serde_json::json!({"relationship_type": "sister", "age": -1}));
    assert_eq!(problems(&wrong, &tools, gift_exists).len(), 2, "an unknown enum value and a negative age");
    let write = case(Kind::Browse, "prepare_order", serde_json::json!({"gift_id": "no-such-gift"}));
    let found = problems(&write, &tools, gift_exists).join("; ");
    assert!(found.contains("not read-only") && found.contains("not in the catalog"), "{found}");
}

#[test]
fn docs_review_cases_md_is_the_json_rendered() {
    let rendered = render(&load());
    if std::env::var_os("GIFTGENIUS_UPDATE_DOCS").is_some() {
        std::fs::write(MD_PATH, &rendered).expect("write docs/review-cases.md");
        return;
    }
    let documented = std::fs::read_to_string(MD_PATH).unwrap_or_default();
    assert!(
        documented == rendered,
        "docs/review-cases.md differs from docs/review-cases.json; regenerate it with \
         GIFTGENIUS_UPDATE_DOCS=1 cargo test -p giftgenius-server --test api review_cases"
    );
}
