//! Tool arguments: raw JSON → the tool's typed input, or a validation error naming every
//! field the model must fix.

use giftgenius_types::ToolError;
use giftgenius_types::args::Validate;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::context::CallContext;

/// Arguments whose values are never echoed back in `attempted`, even to the widget.
const SECRET_ARGUMENTS: [&str; 1] = ["confirmation_token"];

/// Parses a tool's arguments into its input type `T`, or answers VALIDATION_ERROR with every
/// field error at once and the arguments as understood (secrets hidden).
pub fn parse<T>(call: &CallContext, arguments: &JsonObject) -> Result<T, ToolError>
where
    T: DeserializeOwned + JsonSchema + Validate + 'static,
{
    giftgenius_types::parse_args::<T>(arguments).map_err(|field_errors| {
        let mut attempted = arguments.clone();
        for secret in SECRET_ARGUMENTS {
            if attempted.contains_key(secret) {
                attempted.insert(secret.into(), json!("(hidden)"));
            }
        }
        ToolError::validation(field_errors, &call.reference).with_attempted(Value::Object(attempted))
    })
}
