//! Tests of the GiftGenius tool contract, in one binary (one link step instead of five).
//!
//! - `docs`: docs/errors.md's error table against the `ErrorCode` enum.
//! - `envelope`: the `{v, ok, tool, ...}` result envelope on the wire, both ways.
//! - `error_codes`: the error-code table (spelling, category, retryability, guidance).
//! - `suggest_gifts_args`: `parse_args::<SuggestGiftsInput>` on good and bad arguments.
//! - `order_args`: the same for the order tools' inputs.
//! - `schemas`: snapshots and invariants of every input and output JSON Schema.

mod docs;
mod envelope;
mod error_codes;
mod fixtures;
mod order_args;
mod schemas;
mod suggest_gifts_args;
