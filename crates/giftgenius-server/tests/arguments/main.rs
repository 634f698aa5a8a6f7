//! Tool arguments against the published input schemas, through `giftgenius_server::mcp::arguments`.
//!
//! - `suggest_gifts`: `parse_args::<SuggestGiftsInput>` on good and bad arguments.
//! - `orders`: the same for the order tools' inputs.
//! - `messages`: the exact words of each kind of error, recorded from the walker this replaced.
//! - `schemas`: every tool's input and output schema compiles, and results are checked against them.
//! - `bench`: a timing of `parse_args` (ignored; run it in release mode).

mod bench;
mod helpers;
mod messages;
mod orders;
mod schemas;
mod suggest_gifts;
