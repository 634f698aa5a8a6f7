//! JSON Schemas derived from the contract types: the only place a schema comes from.
//!
//! Inputs use the deserialize view (what a tool accepts), outputs the serialize view (what the
//! server writes). Both are draft 2020-12 with a root `type: object`, as MCP requires, and are
//! cached per type because the server validates every call against them.
//!
//! Numbers are standard JSON Schema: schemars marks Rust's integer and float widths with
//! `format: uint32`, `int64`, `double`…, which JSON Schema does not define and which SDK
//! clients (Ajv) warn about on every tools/list; [`standard_numbers`] drops them, and an unsigned
//! type keeps its bound as `minimum: 0`.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

type Cache = RwLock<HashMap<(TypeId, bool), Arc<Map<String, Value>>>>;

fn cached<T: JsonSchema + 'static>(for_output: bool) -> Arc<Map<String, Value>> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (TypeId::of::<T>(), for_output);
    if let Some(hit) = cache.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return hit.clone();
    }
    let settings =
        if for_output { SchemaSettings::draft2020_12().for_serialize() } else { SchemaSettings::draft2020_12() };
    let settings = settings.with_transform(RecursiveTransform(standard_numbers));
    let root = settings.into_generator().into_root_schema_for::<T>();
    let mut object = match root.to_value() {
        Value::Object(object) => object,
        _ => Map::new(),
    };
    // The wrapper type's own title and doc comment are noise to a model reading tools/list.
    object.remove("title");
    object.remove("description");
    let schema = Arc::new(object);
    cache.write().unwrap_or_else(|e| e.into_inner()).insert(key, schema.clone());
    schema
}

/// A number's `format` (JSON Schema defines none for numbers) removed; `uint*` becomes
/// `minimum: 0` unless the schema already has a minimum.
fn standard_numbers(schema: &mut Schema) {
    let Some(object) = schema.as_object_mut() else { return };
    let numeric = match object.get("type") {
        Some(Value::String(t)) => t == "integer" || t == "number",
        Some(Value::Array(types)) => types.iter().any(|t| t == "integer" || t == "number"),
        _ => false,
    };
    if !numeric {
        return;
    }
    let Some(Value::String(format)) = object.remove("format") else { return };
    if format.starts_with("uint") {
        object.entry("minimum").or_insert(Value::from(0));
    }
}

/// The schema of a tool input (`inputSchema`).
pub fn input_schema<T: JsonSchema + 'static>() -> Arc<Map<String, Value>> {
    cached::<T>(false)
}

/// The schema of a tool result (`outputSchema`).
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<Map<String, Value>> {
    cached::<T>(true)
}
