//! The one table of seed 002: every tool from `tools/list`, with its contract (name, description,
//! `inputSchema`, compiled into a validator once) and its handler (a `tools/call` to the server
//! that listed it). The model's tool definitions and the dispatch of its calls are both views of
//! this table, so a renamed or added tool cannot reach one without the other.
//!
//! A tool whose `_meta.ui.visibility` leaves out `"model"` (GiftGenius's `commit_order`:
//! `["app"]`), or whose `openai/visibility` is `"private"`, is kept for the host's own use and
//! never offered: a model that names it anyway is refused.

use jsonschema::Validator;
use rmcp::model::Tool;
use serde_json::Value;

use crate::provider::ToolDef;

/// One tool: its contract and whether the model may call it.
pub struct Entry {
    pub tool: Tool,
    pub for_model: bool,
    /// `None` when the published schema does not compile: the server then judges the arguments.
    validator: Option<Validator>,
}

/// What the table says about a name the model called.
pub enum Lookup<'a> {
    Offered(&'a Entry),
    /// Listed, but not for the model.
    Hidden,
    Unknown,
}

/// The tools of one server.
pub struct Registry {
    entries: Vec<Entry>,
}

impl Registry {
    pub fn new(tools: Vec<Tool>) -> Self {
        let entries = tools
            .into_iter()
            .map(|tool| {
                let schema = Value::Object((*tool.input_schema).clone());
                let validator = jsonschema::options().should_validate_formats(false).build(&schema).ok();
                Entry { for_model: visible_to_model(&tool), tool, validator }
            })
            .collect();
        Self { entries }
    }

    /// The definitions the model is offered: every tool it may call, in the server's order.
    pub fn definitions(&self) -> Vec<ToolDef> {
        self.entries
            .iter()
            .filter(|e| e.for_model)
            .map(|e| ToolDef {
                name: e.tool.name.to_string(),
                description: e.tool.description.as_deref().unwrap_or_default().to_string(),
                parameters: Value::Object((*e.tool.input_schema).clone()),
            })
            .collect()
    }

    pub fn lookup(&self, name: &str) -> Lookup<'_> {
        match self.entries.iter().find(|e| e.tool.name == name) {
            Some(e) if e.for_model => Lookup::Offered(e),
            Some(_) => Lookup::Hidden,
            None => Lookup::Unknown,
        }
    }

    /// Whether the server lists `name` at all (the host's own calls, e.g. `commit_order`).
    pub fn lists(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.tool.name == name)
    }

    /// Names of the tools the model may call.
    pub fn offered_names(&self) -> Vec<String> {
        self.entries.iter().filter(|e| e.for_model).map(|e| e.tool.name.to_string()).collect()
    }
}

impl Entry {
    /// Whether the tool declares a view for its results (MCP Apps `_meta.ui.resourceUri`, or the
    /// Apps SDK's `openai/outputTemplate`): a host with views renders its results in it.
    pub fn has_view(&self) -> bool {
        let Some(meta) = &self.tool.meta else { return false };
        meta.0.get("ui").and_then(|ui| ui.get("resourceUri")).and_then(Value::as_str).is_some()
            || meta.0.get("openai/outputTemplate").and_then(Value::as_str).is_some()
    }

    /// The arguments' violations of the tool's `inputSchema`, as `path: message` lines (at most 10).
    pub fn violations(&self, arguments: &Value) -> Vec<String> {
        let Some(validator) = &self.validator else { return Vec::new() };
        let mut out: Vec<String> = validator
            .iter_errors(arguments)
            .take(10)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() {
                    "(the arguments)".to_string()
                } else {
                    path.trim_start_matches('/').replace('/', ".")
                };
                format!("{at}: {e}")
            })
            .collect();
        out.dedup();
        out
    }
}

/// `_meta.ui.visibility` must include "model" when present; `openai/visibility: "private"` hides.
fn visible_to_model(tool: &Tool) -> bool {
    let Some(meta) = &tool.meta else { return true };
    if meta.0.get("openai/visibility").and_then(Value::as_str) == Some("private") {
        return false;
    }
    match meta.0.get("ui").and_then(|ui| ui.get("visibility")).and_then(Value::as_array) {
        Some(list) => list.iter().any(|v| v.as_str() == Some("model")),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::MetaObject;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(name: &str, meta: Option<Value>) -> Tool {
        let schema = json!({"type": "object", "properties": {"gift_id": {"type": "string", "minLength": 1}}, "required": ["gift_id"], "additionalProperties": false});
        let mut t =
            Tool::new(name.to_string(), format!("{name} does things"), Arc::new(schema.as_object().unwrap().clone()));
        t.meta = meta.map(|m| MetaObject(m.as_object().unwrap().clone()));
        t
    }

    #[test]
    fn app_only_tools_are_listed_but_never_offered() {
        let registry = Registry::new(vec![
            tool("prepare_order", Some(json!({"ui": {"visibility": ["model", "app"]}}))),
            tool("commit_order", Some(json!({"ui": {"visibility": ["app"]}}))),
            tool("other", Some(json!({"openai/visibility": "private"}))),
            tool("plain", None),
        ]);
        let names: Vec<String> = registry.definitions().into_iter().map(|d| d.name).collect();
        assert_eq!(names, ["prepare_order", "plain"]);
        assert!(matches!(registry.lookup("commit_order"), Lookup::Hidden));
        assert!(matches!(registry.lookup("nope"), Lookup::Unknown));
        assert!(registry.lists("commit_order"));
    }

    #[test]
    fn a_tool_with_a_resource_uri_or_an_output_template_has_a_view() {
        let registry = Registry::new(vec![
            tool("a", Some(json!({"ui": {"resourceUri": "ui://widget/x.html"}}))),
            tool("b", Some(json!({"openai/outputTemplate": "ui://widget/x.html"}))),
            tool("c", Some(json!({"ui": {"visibility": ["model"]}}))),
            tool("d", None),
        ]);
        let views: Vec<bool> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| match registry.lookup(n) {
                Lookup::Offered(e) => e.has_view(),
                _ => panic!("{n} is offered"),
            })
            .collect();
        assert_eq!(views, [true, true, false, false]);
    }

    #[test]
    fn arguments_are_checked_against_the_published_schema() {
        let registry = Registry::new(vec![tool("prepare_order", None)]);
        let Lookup::Offered(entry) = registry.lookup("prepare_order") else { panic!() };
        assert!(entry.violations(&json!({"gift_id": "tr-001"})).is_empty());
        let bad = entry.violations(&json!({"gift_id": 7, "extra": true}));
        assert!(bad.iter().any(|v| v.starts_with("gift_id:")), "{bad:?}");
        assert!(bad.len() >= 2, "{bad:?}");
    }
}
