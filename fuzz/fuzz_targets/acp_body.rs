//! ACP request bodies as the REST routes and the MCP binding read them: JSON, then
//! `acp::routes::parse` (serde with the JSONPath of the field at fault) into the create, update,
//! complete or cancel request. Input: one byte choosing the request, then the body.
//!
//! Properties: an accepted body survives parse → serialize → parse unchanged (what the server
//! stores and fingerprints is what it read); a refusal is a 400 naming a JSONPath under `$`.
#![no_main]

use std::fmt::Debug;

use giftgenius_server::acp::routes::parse;
use giftgenius_types::acp::{AcpCancelRequest, AcpCompleteRequest, AcpCreateRequest, AcpUpdateRequest};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&request, body)) = data.split_first() else { return };
    let Ok(body) = serde_json::from_slice::<Value>(body) else { return };
    match request % 4 {
        0 => round_trip::<AcpCreateRequest>(body),
        1 => round_trip::<AcpUpdateRequest>(body),
        2 => round_trip::<AcpCompleteRequest>(body),
        _ => round_trip::<AcpCancelRequest>(body),
    }
});

fn round_trip<T: DeserializeOwned + Serialize + PartialEq + Debug>(body: Value) {
    match parse::<T>(body) {
        Ok(request) => {
            let json = serde_json::to_value(&request).expect("a request serializes");
            let again = parse::<T>(json.clone()).unwrap_or_else(|e| panic!("{json} no longer parses: {e:?}"));
            // Fields the server accepts and ignores are not serialized: compare what is kept.
            assert_eq!(serde_json::to_value(&again).expect("a request serializes"), json, "changed in a round trip");
        }
        Err(failure) => {
            assert_eq!(failure.status.as_u16(), 400, "{failure:?}");
            let param = failure.error.param.as_deref().unwrap_or_default();
            assert!(param.starts_with('$'), "no JSONPath: {failure:?}");
        }
    }
}
