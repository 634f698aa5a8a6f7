//! JSON Schemas derived from the contract types: the only place a schema comes from.
//!
//! Inputs use the deserialize view (what a tool accepts), outputs the serialize view (what the
//! server writes). Both are draft 2020-12 with a root `type: object`, as MCP requires, and are
//! cached per type because the server validates every call against them.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
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

/// The schema of a tool input (`inputSchema`).
pub fn input_schema<T: JsonSchema + 'static>() -> Arc<Map<String, Value>> {
    cached::<T>(false)
}

/// The schema of a tool result (`outputSchema`).
pub fn output_schema<T: JsonSchema + 'static>() -> Arc<Map<String, Value>> {
    cached::<T>(true)
}
