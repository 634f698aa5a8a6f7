//! MCP tool arguments: `mcp::arguments::parse_args` (the published JSON Schema, then serde, then
//! the input's cross-field rules) for every tool's input type, and the ACP binding's envelope
//! (`acp::mcp::arguments::parse`). Input: one byte choosing the tool, then the arguments' JSON.
//!
//! Properties: an accepted input passes its own rules and survives a round trip through its JSON
//! unchanged; a refusal has at least one field error, each naming its field, with a message.
#![no_main]

use std::fmt::Debug;

use giftgenius_server::acp::mcp::arguments::{
    CancelArguments, CompleteArguments, CreateArguments, GetArguments, UpdateArguments, parse as parse_acp,
};
use giftgenius_server::mcp::arguments::parse_args;
use giftgenius_types::sheet::CompleteCheckoutInput;
use giftgenius_types::{
    CancelOrderInput, CommitOrderInput, CreateCheckoutSessionInput, DeleteMyDataInput, GetOrderInput, ListOrdersInput,
    PrepareOrderInput, ProductCheckoutInput, RemoveSavedCardInput, ReopenOrderDraftInput, SuggestGiftsInput, Validate,
};
use libfuzzer_sys::fuzz_target;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    let Some((&tool, json)) = data.split_first() else { return };
    let Ok(Value::Object(arguments)) = serde_json::from_slice::<Value>(json) else { return };
    match tool % 17 {
        0 => tool_input::<SuggestGiftsInput>(&arguments),
        1 => tool_input::<PrepareOrderInput>(&arguments),
        2 => tool_input::<CommitOrderInput>(&arguments),
        3 => tool_input::<CompleteCheckoutInput>(&arguments),
        4 => tool_input::<ReopenOrderDraftInput>(&arguments),
        5 => tool_input::<RemoveSavedCardInput>(&arguments),
        6 => tool_input::<CreateCheckoutSessionInput>(&arguments),
        7 => tool_input::<GetOrderInput>(&arguments),
        8 => tool_input::<ListOrdersInput>(&arguments),
        9 => tool_input::<CancelOrderInput>(&arguments),
        10 => tool_input::<DeleteMyDataInput>(&arguments),
        11 => acp_envelope::<CreateArguments>(arguments),
        12 => acp_envelope::<GetArguments>(arguments),
        13 => acp_envelope::<UpdateArguments>(arguments),
        14 => acp_envelope::<CompleteArguments>(arguments),
        15 => tool_input::<ProductCheckoutInput>(&arguments),
        _ => acp_envelope::<CancelArguments>(arguments),
    }
});

fn tool_input<T>(arguments: &Map<String, Value>)
where
    T: DeserializeOwned + Serialize + JsonSchema + Validate + PartialEq + Debug + 'static,
{
    match parse_args::<T>(arguments) {
        Ok(input) => {
            assert_eq!(input.validate(), Ok(()), "an accepted input breaks its own rules");
            let Ok(Value::Object(again)) = serde_json::to_value(&input) else {
                panic!("{input:?} does not serialize to an object")
            };
            assert_eq!(parse_args::<T>(&again), Ok(input), "the input changed in a round trip through {again:?}");
        }
        Err(errors) => {
            assert!(!errors.is_empty(), "a refusal without a field error");
            for error in &errors {
                // An argument literally named "" is named so.
                let named = !error.field.is_empty() || arguments.contains_key("");
                assert!(named && !error.message.is_empty(), "an unnamed field error: {error:?}");
            }
        }
    }
}

fn acp_envelope<T: DeserializeOwned>(arguments: Map<String, Value>) {
    if let Err(error) = parse_acp::<T>("fuzz", arguments) {
        assert!(error.message.starts_with("Invalid arguments for fuzz"), "{error:?}");
    }
}
