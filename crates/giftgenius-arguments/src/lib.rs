//! Turning raw tool arguments into a typed input of the contract, reporting *every* problem at
//! once: what the MCP tools and ACP's MCP binding answer a bad call with (the server wraps the
//! field errors in its `VALIDATION_ERROR`), what the quality harness reads its judged requests
//! with, and what the fuzzer feeds.
//!
//! Models guess arguments from the schema and miss often. A bare deserializer stops at the
//! first mistake and phrases it for Rust programmers; instead we check the raw JSON against
//! the input's published JSON Schema with the `jsonschema` crate (draft 2020-12; so the rules
//! cannot drift from what `tools/list` advertises), then deserialize, then run the type's
//! cross-field rules (`Validate`). The crate's error kinds are rephrased here as field errors a
//! model can act on (`interests[2]: must not be empty`).
//!
//! Cross-field rules also run when some fields broke the schema: the broken fields are left
//! out, and if the rest still makes an input, its rule violations about the remaining fields
//! are reported too. So `age: 121` with `budget_min: 80, budget_max: 50` names both problems.
//! When a required field is broken nothing can be built without it, and the schema errors
//! alone are the answer.

use std::any::{TypeId, type_name};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, OnceLock, RwLock};

use giftgenius_types::FieldError;
use giftgenius_types::args::Validate;
use giftgenius_types::delivery::too_long;
use giftgenius_types::field_rule::FieldRule;
use giftgenius_types::schema::input_schema;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Parse tool arguments into `T`: schema check, then deserialize, then `Validate`.
///
/// The schema is `input_schema::<T>()`, the very object published as the tool's `inputSchema`;
/// its validator is compiled once per type.
pub fn parse_args<T>(arguments: &Map<String, Value>) -> Result<T, Vec<FieldError>>
where
    T: DeserializeOwned + JsonSchema + Validate + 'static,
{
    let compiled = input_validator::<T>();
    let instance = Value::Object(arguments.clone());
    if compiled.validator.is_valid(&instance) && compiled.decimal_integers(&instance).is_empty() {
        let typed = T::deserialize(&instance)
            .map_err(|e| vec![FieldError::new("arguments", clean_serde_message(&e.to_string()))])?;
        typed.validate()?;
        return Ok(typed);
    }
    let problems = compiled.problems(&instance);
    // The cross-field rules on what is left once the broken arguments are taken out; when a
    // required one is among them nothing can be built and the schema errors stand alone. A
    // rule about an argument the caller did not send is left out too: with arguments taken
    // out, "send this one" may only mean "the one you sent is broken" (a basket's `items`
    // broken reads as neither `items` nor `gift_id` given).
    let broken: HashSet<String> = problems.iter().map(Problem::argument).collect();
    let mut errors: Vec<FieldError> = problems.into_iter().map(Problem::into_field_error).collect();
    let rest: Map<String, Value> =
        arguments.iter().filter(|(name, _)| !broken.contains(*name)).map(|(k, v)| (k.clone(), v.clone())).collect();
    if let Ok(typed) = T::deserialize(&Value::Object(rest))
        && let Err(rule_errors) = typed.validate()
    {
        errors.extend(rule_errors.into_iter().filter(|e| {
            let field = top_level(&e.field);
            !broken.contains(field) && arguments.contains_key(field)
        }));
    }
    Err(errors)
}

/// Checks a tool result against its `outputSchema` (the policy layer does, in debug builds).
/// Returns every violation, phrased like argument errors; empty when the value conforms.
pub fn check_output(schema: &Map<String, Value>, value: &Value) -> Vec<FieldError> {
    let compiled = match output_validator(schema) {
        Ok(compiled) => compiled,
        Err(why) => return vec![FieldError::new("outputSchema", why)],
    };
    if compiled.validator.is_valid(value) && compiled.decimal_integers(value).is_empty() {
        return Vec::new();
    }
    compiled.field_errors(value)
}

/// A schema compiled for validation, with what the error messages need.
struct Compiled {
    validator: Validator,
    /// The schema itself, to look up keywords by an error's schema path (`required`'s enum
    /// values, the known property names, a `type` in the schema's own order).
    schema: Value,
    /// Top-level properties typed `integer` (see `decimal_integers`): (name, schema node path).
    integer_properties: Vec<(String, String)>,
}

fn compile(schema: &Map<String, Value>) -> Result<Compiled, String> {
    let schema = Value::Object(schema.clone());
    let validator = jsonschema::draft202012::options()
        // Formats are annotations in draft 2020-12 (and the schemas carry no numeric ones).
        .should_validate_formats(false)
        .build(&schema)
        .map_err(|e| format!("the schema does not compile: {e}"))?;
    let integer_properties = integer_properties(&schema);
    Ok(Compiled { validator, schema, integer_properties })
}

fn input_validator<T: JsonSchema + 'static>() -> Arc<Compiled> {
    type Cache = RwLock<HashMap<TypeId, Arc<Compiled>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.read().unwrap_or_else(|e| e.into_inner()).get(&TypeId::of::<T>()) {
        return hit.clone();
    }
    // Generated from the type, so a schema that does not compile is a bug every call would hit
    // (and a test of every tool's schema catches it first).
    let compiled =
        compile(&input_schema::<T>()).unwrap_or_else(|why| panic!("the input schema of {}: {why}", type_name::<T>()));
    let compiled = Arc::new(compiled);
    cache.write().unwrap_or_else(|e| e.into_inner()).entry(TypeId::of::<T>()).or_insert(compiled).clone()
}

/// Output schemas are cached by content: a handful of distinct schemas, compared in full only in
/// the debug builds that check outputs, and no address that could be reused by another schema.
fn output_validator(schema: &Map<String, Value>) -> Result<Arc<Compiled>, String> {
    static CACHE: OnceLock<RwLock<Vec<Arc<Compiled>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let find = |list: &[Arc<Compiled>]| list.iter().find(|c| c.schema.as_object() == Some(schema)).cloned();
    if let Some(hit) = find(&cache.read().unwrap_or_else(|e| e.into_inner())) {
        return Ok(hit);
    }
    let compiled = Arc::new(compile(schema)?);
    let mut list = cache.write().unwrap_or_else(|e| e.into_inner());
    if let Some(hit) = find(&list) {
        return Ok(hit);
    }
    list.push(compiled.clone());
    Ok(compiled)
}

/// One problem before it becomes a `FieldError`: where it is and how it ranks against the
/// other problems of the same schema node.
struct Problem {
    /// JSON Pointer into the instance.
    at: String,
    /// The schema node the failing keyword belongs to.
    node: String,
    /// 0 `const`, 1 `enum`, 2 `type`, 3 anything else: a node's value is reported against its
    /// most basic broken rule only ("must be one of: …", not also "must be a string").
    rank: u8,
    field: String,
    message: String,
    /// The rule in parts where a person can break it in the widget's form (an empty or too
    /// long text), for the widget to say in the person's language.
    rule: Option<FieldRule>,
    /// Where the problem sits in the instance (object keys by position, list items by index):
    /// errors are listed in the order of the arguments as sent, a node's own before its parts'.
    order: Vec<usize>,
}

impl Problem {
    fn into_field_error(self) -> FieldError {
        FieldError { rule: self.rule, ..FieldError::new(self.field, self.message) }
    }

    /// The top-level argument the problem is in (for a missing or unknown one, its name).
    fn argument(&self) -> String {
        match self.at.split('/').nth(1) {
            Some(first) => first.replace("~1", "/").replace("~0", "~"),
            None => self.field.clone(),
        }
    }
}

/// Gives the problem just pushed its rule in parts.
fn set_rule(problems: &mut [Problem], rule: FieldRule) {
    if let Some(last) = problems.last_mut() {
        last.rule = Some(rule);
    }
}

impl Compiled {
    /// Every schema violation of `instance`, as field errors in argument order.
    fn field_errors(&self, instance: &Value) -> Vec<FieldError> {
        self.problems(instance).into_iter().map(Problem::into_field_error).collect()
    }

    /// Every schema violation of `instance`, in argument order.
    fn problems(&self, instance: &Value) -> Vec<Problem> {
        let mut problems = Vec::new();
        let keys = TopLevelKeys::of(instance);
        for error in self.validator.iter_errors(instance) {
            self.collect(instance, &keys, &error, &mut problems);
        }
        problems.extend(self.decimal_integers(instance));
        // A node reports its most basic broken rule only (const, then enum, then type).
        let mut best: HashMap<(&str, &str), u8> = HashMap::new();
        for p in &problems {
            let rank = best.entry((p.at.as_str(), p.node.as_str())).or_insert(p.rank);
            *rank = (*rank).min(p.rank);
        }
        let keep: Vec<bool> = problems.iter().map(|p| p.rank == best[&(p.at.as_str(), p.node.as_str())]).collect();
        let mut kept: Vec<Problem> = problems.into_iter().zip(keep).filter_map(|(p, keep)| keep.then_some(p)).collect();
        kept.sort_by(|a, b| a.order.cmp(&b.order));
        kept
    }

    fn collect(&self, root: &Value, keys: &TopLevelKeys, error: &ValidationError<'_>, out: &mut Vec<Problem>) {
        let at = error.instance_path().as_str();
        let schema_path = error.schema_path().as_str();
        let node = parent(schema_path);
        let value = error.instance().as_ref();
        let (field, order) = locate_with(root, at, keys);
        let mut push = |rank: u8, field: String, message: String, order: Vec<usize>| {
            out.push(Problem { at: at.to_string(), node: node.to_string(), rank, field, message, rule: None, order });
        };
        match error.kind() {
            ValidationErrorKind::Constant { expected_value } => {
                push(0, field, format!("must be {expected_value} (got {})", short(value)), order);
            }
            ValidationErrorKind::Enum { options } => {
                let list: Vec<String> = options.as_array().into_iter().flatten().map(plain).collect();
                push(1, field, format!("must be one of: {} (got {})", list.join(", "), short(value)), order);
            }
            ValidationErrorKind::Type { kind } => {
                let wanted = match self.schema.pointer(schema_path) {
                    Some(types) => type_names(types),
                    None => match kind {
                        TypeKind::Single(t) => vec![t.as_str()],
                        TypeKind::Multiple(set) => set.iter().map(|t| t.as_str()).collect(),
                    },
                };
                push(2, field, type_message(&wanted, value), order);
            }
            ValidationErrorKind::Minimum { limit } => {
                push(3, field, format!("must be at least {} (got {value})", number(limit)), order);
            }
            ValidationErrorKind::Maximum { limit } => {
                push(3, field, format!("must be at most {} (got {value})", number(limit)), order);
            }
            ValidationErrorKind::ExclusiveMinimum { limit } => {
                push(3, field, format!("must be more than {} (got {value})", number(limit)), order);
            }
            ValidationErrorKind::ExclusiveMaximum { limit } => {
                push(3, field, format!("must be less than {} (got {value})", number(limit)), order);
            }
            ValidationErrorKind::MultipleOf { multiple_of } => {
                push(3, field, format!("must be a multiple of {multiple_of} (got {value})"), order);
            }
            ValidationErrorKind::MinLength { limit } => {
                let message = if *limit == 1 {
                    "must not be empty".to_string()
                } else {
                    format!("must have at least {limit} characters")
                };
                push(3, field, message, order);
                if *limit == 1 {
                    set_rule(out, FieldRule::Required);
                }
            }
            ValidationErrorKind::MaxLength { limit } => {
                let len = value.as_str().map(|s| s.chars().count()).unwrap_or_default();
                push(3, field, format!("must have at most {limit} characters (got {len})"), order);
                set_rule(out, too_long(usize::try_from(*limit).unwrap_or(usize::MAX)));
            }
            ValidationErrorKind::Pattern { pattern } => {
                push(3, field, format!("must match the pattern {pattern}"), order);
            }
            ValidationErrorKind::BacktrackLimitExceeded { .. } | ValidationErrorKind::RegexEngineFailure { .. } => {
                push(3, field, "could not be checked against its pattern; use a simpler value".into(), order);
            }
            ValidationErrorKind::Format { format } => push(3, field, format!("must be a valid {format}"), order),
            ValidationErrorKind::ContentEncoding { content_encoding: what }
            | ValidationErrorKind::ContentMediaType { content_media_type: what } => {
                push(3, field, format!("must be valid {what}"), order);
            }
            ValidationErrorKind::FromUtf8 { .. } => push(3, field, "must decode to UTF-8 text".into(), order),
            ValidationErrorKind::MinItems { limit } => {
                push(3, field, format!("must have at least {limit} items"), order);
            }
            ValidationErrorKind::MaxItems { limit } => {
                let len = value.as_array().map(Vec::len).unwrap_or_default();
                push(3, field, format!("must have at most {limit} items (got {len})"), order);
            }
            ValidationErrorKind::AdditionalItems { limit } => {
                let len = value.as_array().map(Vec::len).unwrap_or_default();
                push(3, field, format!("must have at most {limit} items (got {len})"), order);
            }
            ValidationErrorKind::UniqueItems => push(3, field, "must not list the same item twice".into(), order),
            ValidationErrorKind::Contains => push(3, field, "must contain at least one allowed item".into(), order),
            ValidationErrorKind::UnevaluatedItems { .. } => {
                push(3, field, "has more items than are allowed".into(), order);
            }
            ValidationErrorKind::MinProperties { limit } => {
                push(3, field, format!("must have at least {limit} entries"), order);
            }
            ValidationErrorKind::MaxProperties { limit } => {
                push(3, field, format!("must have at most {limit} entries"), order);
            }
            ValidationErrorKind::PropertyNames { error } => {
                push(3, field, format!("has a name that is not allowed: {}", short(error.instance())), order);
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().map(str::to_string).unwrap_or_else(|| property.to_string());
                let allowed = self.property(node, &name).and_then(|p| self.allowed_values(p));
                let message = match allowed {
                    Some(list) => format!("is required; one of: {list}"),
                    None => "is required".to_string(),
                };
                push(3, join(at_field(&field, at), &name), message, order);
            }
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                let known: Vec<&str> = self
                    .schema
                    .pointer(&format!("{node}/properties"))
                    .and_then(Value::as_object)
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                let message = format!("is not a known argument; known arguments: {}", known.join(", "));
                for name in unexpected {
                    let mut order = order.clone();
                    order.push(if at.is_empty() { keys.position(name) } else { position(value, name) });
                    push(3, join(at_field(&field, at), name), message.clone(), order);
                }
            }
            ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
                // For Option<T> (`T | null`) the T branch's complaint is the useful one.
                let branches = self.schema.pointer(schema_path).and_then(Value::as_array);
                let null_only = |i: usize, errors: &[ValidationError<'static>]| match branches {
                    Some(branches) => {
                        branches.get(i).and_then(|b| b.get("type")).and_then(Value::as_str) == Some("null")
                    }
                    None => {
                        matches!(errors, [e] if matches!(e.kind(), ValidationErrorKind::Type { kind: TypeKind::Single(t) } if t.as_str() == "null"))
                    }
                };
                match context.iter().enumerate().find(|(i, errors)| !null_only(*i, errors)) {
                    Some((_, errors)) => errors.iter().for_each(|e| self.collect(root, keys, e, out)),
                    None => push(3, field, "does not match any allowed form".into(), order),
                }
            }
            ValidationErrorKind::OneOfMultipleValid { .. } => {
                push(3, field, "matches more than one allowed form".into(), order);
            }
            ValidationErrorKind::Not { .. } | ValidationErrorKind::FalseSchema => {
                push(3, field, "is not allowed".into(), order);
            }
            ValidationErrorKind::Custom { message, .. } => push(3, field, message.clone(), order),
            ValidationErrorKind::Referencing(_) => {
                push(3, field, "could not be checked (the schema has a broken reference)".into(), order);
            }
        }
    }

    /// The one rule written by hand. JSON Schema counts `30.0` as an integer (2020-12 validation
    /// §6.1.1: "a number with a zero fractional part"), and `jsonschema` follows the standard, but
    /// serde will not read `30.0` into an `i64`: without this check such a value passes the
    /// schema and fails deserialization with a message naming no field. It reports, as before,
    /// `age: must be a whole number (got a decimal number; write it without ".0")`. Our inputs are
    /// flat, so only top-level properties are looked at.
    fn decimal_integers(&self, instance: &Value) -> Vec<Problem> {
        let mut out = Vec::new();
        let Some(object) = instance.as_object() else { return out };
        for (name, node) in &self.integer_properties {
            if let Some(value @ Value::Number(n)) = object.get(name)
                && !(n.is_i64() || n.is_u64())
                && n.as_f64().is_some_and(|f| f.fract() == 0.0)
            {
                let types = self.schema.pointer(&format!("{node}/type")).map(type_names).unwrap_or_default();
                let (field, order) = locate(instance, &format!("/{}", escape(name)));
                out.push(Problem {
                    at: format!("/{}", escape(name)),
                    node: node.clone(),
                    rank: 2,
                    field,
                    message: type_message(&types, value),
                    rule: None,
                    order,
                });
            }
        }
        out
    }

    /// The schema of property `name` of the object schema at `node`, following a local `$ref`.
    fn property(&self, node: &str, name: &str) -> Option<&Value> {
        self.schema.pointer(&format!("{node}/properties/{}", escape(name)))
    }

    /// The allowed values of an enum-typed property (following a `$ref`), for "is required" messages.
    fn allowed_values(&self, property: &Value) -> Option<String> {
        let target = self.resolve(property);
        let values = target.get("enum")?.as_array()?;
        Some(values.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
    }

    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
            Some(pointer) => self.schema.pointer(pointer).unwrap_or(schema),
            None => schema,
        }
    }
}

/// Top-level properties whose type (after a `$ref`) includes `integer`, with their node path.
fn integer_properties(schema: &Value) -> Vec<(String, String)> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Vec::new() };
    let mut out = Vec::new();
    for (name, property) in properties {
        let (node, target) = match property.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
            Some(pointer) => (pointer.to_string(), schema.pointer(pointer)),
            None => (format!("/properties/{}", escape(name)), Some(property)),
        };
        if target.and_then(|t| t.get("type")).map(type_names).is_some_and(|t| t.contains(&"integer")) {
            out.push((name.clone(), node));
        }
    }
    out
}

fn type_names(types: &Value) -> Vec<&str> {
    match types {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    }
}

fn type_message(types: &[&str], value: &Value) -> String {
    let wanted: Vec<&str> = types.iter().filter(|t| **t != "null").map(|t| article(t)).collect();
    let wanted = if wanted.is_empty() { "null".to_string() } else { wanted.join(" or ") };
    format!("must be {wanted} (got {})", describe(value))
}

fn article(type_name: &str) -> &'static str {
    match type_name {
        "integer" => "a whole number",
        "number" => "a number",
        "string" => "a string",
        "array" => "a list",
        "object" => "an object",
        "boolean" => "true or false",
        "null" => "null",
        _ => "a value of another type",
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "a decimal number; write it without \".0\"",
        Value::Number(_) => "a number with a fraction",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A schema limit as the messages print it (`0`, `120`, `1000000`, `0.5`).
fn number(limit: &Value) -> String {
    match limit.as_f64() {
        Some(f) => f.to_string(),
        None => limit.to_string(),
    }
}

/// An enum value as listed: strings bare, anything else as JSON.
fn plain(value: &Value) -> String {
    value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string())
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 { format!("{}…", text.chars().take(40).collect::<String>()) } else { text }
}

fn clean_serde_message(message: &str) -> String {
    // serde_json appends " at line 1 column 42"; it means nothing to a model.
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// The schema node a keyword's path belongs to: `/properties/age/type` → `/properties/age`.
fn parent(path: &str) -> &str {
    path.rfind('/').map(|i| &path[..i]).unwrap_or("")
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The positions of the arguments object's keys, looked up once per check: one scan per problem
/// was quadratic (25,000 unknown arguments took two minutes to answer).
struct TopLevelKeys<'a>(HashMap<&'a str, usize>);

impl<'a> TopLevelKeys<'a> {
    fn of(root: &'a Value) -> Self {
        TopLevelKeys(
            root.as_object().map(|o| o.keys().enumerate().map(|(i, k)| (k.as_str(), i)).collect()).unwrap_or_default(),
        )
    }

    /// Position of argument `name` (after every key when absent).
    fn position(&self, name: &str) -> usize {
        self.0.get(name).copied().unwrap_or(usize::MAX)
    }
}

/// The field name (`interests[2]`, `arguments` for the whole object) and the argument-order key
/// of an instance pointer. The instance decides whether a segment is a list index or a key.
fn locate(root: &Value, pointer: &str) -> (String, Vec<usize>) {
    locate_with(root, pointer, &TopLevelKeys::of(root))
}

fn locate_with(root: &Value, pointer: &str, keys: &TopLevelKeys) -> (String, Vec<usize>) {
    let mut field = String::new();
    let mut order = Vec::new();
    let mut current = Some(root);
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        match current {
            Some(Value::Array(items)) if segment.parse::<usize>().is_ok() => {
                let i: usize = segment.parse().unwrap_or_default();
                field.push_str(&format!("[{i}]"));
                order.push(i);
                current = items.get(i);
            }
            _ if order.is_empty() => {
                order.push(keys.position(&segment));
                field = join(&field, &segment);
                current = current.and_then(|v| v.get(&segment));
            }
            _ => {
                order.push(current.map(|v| position(v, &segment)).unwrap_or(usize::MAX));
                field = join(&field, &segment);
                current = current.and_then(|v| v.get(&segment));
            }
        }
    }
    if field.is_empty() { ("arguments".to_string(), order) } else { (field, order) }
}

/// Position of `name` among the keys of `object` (after every key when absent).
fn position(object: &Value, name: &str) -> usize {
    object.as_object().and_then(|o| o.keys().position(|k| k == name)).unwrap_or(usize::MAX)
}

/// The path a child's field name is joined to: empty at the top level, where the object itself
/// is called `arguments`.
fn at_field<'a>(field: &'a str, at: &str) -> &'a str {
    if at.is_empty() { "" } else { field }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_string() } else { format!("{path}.{name}") }
}

/// The argument a rule's field error is about (the rules name fields like `interests[2]` or `budget_min`).
fn top_level(field: &str) -> &str {
    let end = field.find(['[', '.']).unwrap_or(field.len());
    &field[..end]
}
