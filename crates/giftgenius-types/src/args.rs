//! The shape of an argument problem, and the rules a schema cannot express.
//!
//! The server checks raw tool arguments against each input's JSON Schema (see
//! `giftgenius-server`'s `arguments` module), deserializes them, then runs the type's `Validate`
//! rules; every problem found along the way is a `FieldError`. This crate only defines them, so
//! the contract stays free of validation machinery and builds for wasm32.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::field_rule::FieldRule;

/// One field's problem, phrased so the model can fix it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldError {
    /// The argument's name, with an index for list items (`interests[2]`).
    pub field: String,
    /// What is wrong and what is allowed.
    pub message: String,
    /// The same problem in parts, for the widget to say in the person's language
    /// ([`FieldRule`]); absent for problems the widget's forms cannot make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<FieldRule>,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into(), rule: None }
    }

    /// A problem a person can make in the widget: `message` for the model, `rule` for the person.
    pub fn broke(field: impl Into<String>, rule: FieldRule, message: impl Into<String>) -> Self {
        Self { rule: Some(rule), ..Self::new(field, message) }
    }
}

/// Rules a schema cannot express (for example `budget_min <= budget_max`).
pub trait Validate {
    /// Every violated rule, not just the first.
    fn validate(&self) -> Result<(), Vec<FieldError>>;
}
