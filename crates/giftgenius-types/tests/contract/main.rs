//! Tests of the GiftGenius tool contract, in one binary (one link step instead of five).
//!
//! - `docs`: docs/errors.md's error table against the `ErrorCode` enum.
//! - `envelope`: the `{v, ok, tool, ...}` result envelope on the wire, both ways.
//! - `error_codes`: the error-code table (spelling, category, retryability, guidance).
//! - `read`: the widget's hand readers of results read exactly what serde's derives read.
//! - `schemas`: snapshots and invariants of every input and output JSON Schema.
//!
//! Arguments are validated by the server; those tests are in `giftgenius-server/tests/arguments`.

mod docs;
mod envelope;
mod error_codes;
mod fixtures;
mod read;
mod schemas;
