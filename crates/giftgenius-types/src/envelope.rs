//! The result envelope every tool returns as `structuredContent`.
//!
//! ```text
//! { "v": 2, "ok": true,  "tool": "suggest_gifts", ...data..., "notice"?: {...}, "partial"?: {...} }
//! { "v": 2, "ok": false, "tool": "suggest_gifts", "error": { "code": ..., ... } }
//! ```
//! Serialization and deserialization are written by hand so that mixed shapes (`ok: true`
//! with an `error`, `ok: false` without one, an unknown `v`) are rejected instead of guessed.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{DeserializeOwned, Error as _};
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::CONTRACT_VERSION;
use crate::error::{ErrorCode, ToolError};

/// The tools of GiftGenius; the envelope names the one that produced it so the widget
/// knows what to render and which tool "Try again" repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    SuggestGifts,
    PrepareOrder,
    CommitOrder,
    ReopenOrderDraft,
    CreateCheckoutSession,
    GetOrder,
    ListOrders,
    CancelOrder,
    DeleteMyData,
    // The host's payment sheet pays a draft (docs/acp.md §14); a plain comment keeps the schema a plain enum.
    CompleteCheckout,
    // Remove card on the confirm card, with Stripe (docs/stripe.md).
    RemoveSavedCard,
    // ChatGPT's product checkout entry (its name is fixed by that contract): a basket from feed ids.
    CheckoutSession,
}

impl ToolName {
    pub const ALL: [ToolName; 12] = [
        Self::SuggestGifts,
        Self::PrepareOrder,
        Self::CommitOrder,
        Self::ReopenOrderDraft,
        Self::CreateCheckoutSession,
        Self::GetOrder,
        Self::ListOrders,
        Self::CancelOrder,
        Self::DeleteMyData,
        Self::CompleteCheckout,
        Self::RemoveSavedCard,
        Self::CheckoutSession,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::SuggestGifts => "suggest_gifts",
            Self::PrepareOrder => "prepare_order",
            Self::CommitOrder => "commit_order",
            Self::ReopenOrderDraft => "reopen_order_draft",
            Self::CreateCheckoutSession => "create_checkout_session",
            Self::GetOrder => "get_order",
            Self::ListOrders => "list_orders",
            Self::CancelOrder => "cancel_order",
            Self::DeleteMyData => "delete_my_data",
            Self::CompleteCheckout => "complete_checkout",
            Self::RemoveSavedCard => "remove_saved_card",
            Self::CheckoutSession => "checkout_session",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// Why a successful result deserves a remark (most often: nothing matched).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NoticeCode {
    /// The search ran fine and found nothing; `suggestions` say what would match.
    NoMatches,
    /// Fewer gifts matched than were asked for.
    FewMatches,
}

/// A concrete change to the arguments that is known to produce results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Suggestion {
    /// e.g. "12 gifts match if budget_max is 60".
    pub message: String,
    /// The arguments to change, merged over the previous call's arguments.
    pub set_arguments: Map<String, Value>,
    /// How many gifts the changed call matches.
    pub matches: u32,
}

/// A remark on a successful result, for the model and the widget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Notice {
    pub code: NoticeCode,
    pub message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
}

/// One upstream that failed while others answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailedSource {
    /// The merchant or catalog source id.
    pub source: String,
    /// `UPSTREAM_TIMEOUT` or `UPSTREAM_UNAVAILABLE`.
    pub code: ErrorCode,
    pub message: String,
}

/// Present when the result is incomplete: what is missing and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Partial {
    pub message: String,
    pub failed_sources: Vec<FailedSource>,
}

/// A tool result: its data, or a structured error. See the module docs for the wire shape.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope<T> {
    Ok { tool: ToolName, data: T, notice: Option<Notice>, partial: Option<Partial> },
    Err { tool: ToolName, error: ToolError },
}

impl<T> Envelope<T> {
    pub fn ok(tool: ToolName, data: T) -> Self {
        Envelope::Ok { tool, data, notice: None, partial: None }
    }

    pub fn err(tool: ToolName, error: ToolError) -> Self {
        Envelope::Err { tool, error }
    }

    pub fn is_ok(&self) -> bool {
        matches!(self, Envelope::Ok { .. })
    }

    pub fn tool(&self) -> ToolName {
        match self {
            Envelope::Ok { tool, .. } | Envelope::Err { tool, .. } => *tool,
        }
    }

    pub fn error(&self) -> Option<&ToolError> {
        match self {
            Envelope::Err { error, .. } => Some(error),
            Envelope::Ok { .. } => None,
        }
    }

    pub fn data(&self) -> Option<&T> {
        match self {
            Envelope::Ok { data, .. } => Some(data),
            Envelope::Err { .. } => None,
        }
    }
}

const RESERVED: [&str; 6] = ["v", "ok", "tool", "error", "notice", "partial"];

impl<T: Serialize> Envelope<T> {
    /// The envelope as a JSON object (what goes into `structuredContent`).
    pub fn to_json(&self) -> Result<Map<String, Value>, serde_json::Error> {
        let mut out = Map::new();
        out.insert("v".into(), Value::from(CONTRACT_VERSION));
        match self {
            Envelope::Ok { tool, data, notice, partial } => {
                out.insert("ok".into(), Value::Bool(true));
                out.insert("tool".into(), serde_json::to_value(tool)?);
                match serde_json::to_value(data)? {
                    Value::Object(fields) => {
                        for (k, v) in fields {
                            if RESERVED.contains(&k.as_str()) {
                                return Err(<serde_json::Error as serde::ser::Error>::custom(format!(
                                    "data field `{k}` is reserved"
                                )));
                            }
                            out.insert(k, v);
                        }
                    }
                    _ => {
                        return Err(<serde_json::Error as serde::ser::Error>::custom(
                            "envelope data must be an object",
                        ));
                    }
                }
                if let Some(notice) = notice {
                    out.insert("notice".into(), serde_json::to_value(notice)?);
                }
                if let Some(partial) = partial {
                    out.insert("partial".into(), serde_json::to_value(partial)?);
                }
            }
            Envelope::Err { tool, error } => {
                out.insert("ok".into(), Value::Bool(false));
                out.insert("tool".into(), serde_json::to_value(tool)?);
                out.insert("error".into(), serde_json::to_value(error)?);
            }
        }
        Ok(out)
    }
}

impl<T: Serialize> Serialize for Envelope<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().map_err(S::Error::custom)?.serialize(serializer)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Envelope<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut map = Map::<String, Value>::deserialize(deserializer)?;
        match map.remove("v") {
            Some(v) if v == CONTRACT_VERSION => {}
            Some(v) => return Err(D::Error::custom(format!("unsupported contract version {v}"))),
            None => return Err(D::Error::missing_field("v")),
        }
        let ok = match map.remove("ok") {
            Some(Value::Bool(ok)) => ok,
            Some(_) => return Err(D::Error::custom("`ok` must be a boolean")),
            None => return Err(D::Error::missing_field("ok")),
        };
        let tool: ToolName = match map.remove("tool") {
            Some(t) => serde_json::from_value(t).map_err(D::Error::custom)?,
            None => return Err(D::Error::missing_field("tool")),
        };
        if ok {
            if map.contains_key("error") {
                return Err(D::Error::custom("`ok: true` must not carry an `error`"));
            }
            let notice = take_opt(&mut map, "notice").map_err(D::Error::custom)?;
            let partial = take_opt(&mut map, "partial").map_err(D::Error::custom)?;
            let data = serde_json::from_value(Value::Object(map)).map_err(D::Error::custom)?;
            Ok(Envelope::Ok { tool, data, notice, partial })
        } else {
            let error = map.remove("error").ok_or_else(|| D::Error::custom("`ok: false` must carry an `error`"))?;
            if let Some(extra) = map.keys().next() {
                return Err(D::Error::custom(format!("`ok: false` must not carry `{extra}`")));
            }
            let error = serde_json::from_value(error).map_err(D::Error::custom)?;
            Ok(Envelope::Err { tool, error })
        }
    }
}

fn take_opt<X: DeserializeOwned>(map: &mut Map<String, Value>, key: &str) -> Result<Option<X>, serde_json::Error> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v).map(Some),
    }
}

impl<T: JsonSchema> JsonSchema for Envelope<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("Envelope_{}", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let data = T::json_schema(generator);
        let mut ok_properties = data.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        let ok_required = data.get("required").cloned().unwrap_or_else(|| Value::Array(vec![]));
        ok_properties.insert("ok".into(), serde_json::json!({ "const": true }));
        ok_properties.insert("notice".into(), generator.subschema_for::<Notice>().to_value());
        ok_properties.insert("partial".into(), generator.subschema_for::<Partial>().to_value());
        let error = generator.subschema_for::<ToolError>();
        let tool = generator.subschema_for::<ToolName>();
        json_schema!({
            "type": "object",
            "properties": {
                "v": { "const": CONTRACT_VERSION, "description": "Contract version." },
                "ok": { "type": "boolean" },
                "tool": tool,
            },
            "required": ["v", "ok", "tool"],
            "oneOf": [
                { "properties": ok_properties, "required": ok_required },
                {
                    "properties": { "ok": { "const": false }, "error": error },
                    "required": ["error"]
                }
            ]
        })
    }
}
