//! A tool call's arguments as the MCP tools (and ACP's MCP binding) read them: the contract's
//! checks (`giftgenius-arguments`: the published inputSchema, then serde, then the cross-field
//! rules), answered as `VALIDATION_ERROR` with every field error at once and the arguments as
//! understood, secrets and personal data hidden.

use giftgenius_types::ToolError;
use giftgenius_types::args::Validate;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub use giftgenius_arguments::{check_output, parse_args};

use crate::context::CallContext;

/// Arguments whose values are never echoed back in `attempted`, even to the widget: secrets,
/// and personal data (a recipient's address, a gift message, what the user said about the
/// recipient in `suggest_gifts`' `about`), which stay out of every answer the model reads and
/// every log line.
const SECRET_ARGUMENTS: [&str; 6] =
    ["confirmation_token", "recipient", "gift_message", "payment_data", "buyer", "about"];

/// Parses a tool's arguments into its input type `T`, or answers VALIDATION_ERROR with every
/// field error at once and the arguments as understood (secrets hidden).
pub fn parse<T>(call: &CallContext, arguments: &JsonObject) -> Result<T, ToolError>
where
    T: DeserializeOwned + JsonSchema + Validate + 'static,
{
    parse_args::<T>(arguments).map_err(|field_errors| {
        let mut attempted = arguments.clone();
        for secret in SECRET_ARGUMENTS {
            if attempted.contains_key(secret) {
                attempted.insert(secret.into(), json!("(hidden)"));
            }
        }
        ToolError::validation(field_errors, &call.reference).with_attempted(Value::Object(attempted))
    })
}
