//! GiftGenius MCP server.
//!
//! - `config`: flags and environment.
//! - `startup`: `Application::build` binds and wires everything; tests start the app the same way.
//! - `arguments`: tool arguments checked against the published input schemas (`jsonschema`), then
//!   the types' own rules; results against their output schemas in debug builds.
//! - `mcp`: the MCP handler; its `#[tool_router]` impl block is the one registry of tools.
//! - `suggest`: the `suggest_gifts` tool over the `catalog`.
//! - `reply`: turns a contract `Envelope` into an MCP tool result (text, structured content, `_meta`).
//! - `widget`: the packed widget HTML as an MCP resource, with both hosts' `_meta` vocabularies.
//! - `images`: gift pictures served by the server itself.
//! - `orders`: prepare/commit/get order and checkout sessions, in recovery-point phases.
//! - `idempotency`: keys scoped to (subject, tool, key), fingerprints, leases and replay.
//! - `store`: the persistence trait and its SQLite implementation.
//! - `payments`: the sandbox payment provider (its own ledger, idempotency, latency, faults).
//! - `failpoints`: crash points for the exactly-once tests.
//! - `policy`: invariants applied after every tool call, and the repeated-call valve.
//! - `preview`: the local host emulator page and its dev-only endpoints (only with `--preview`).
//! - `error`: request references and the mapping of internal failures to `ToolError`.

pub mod arguments;
pub mod catalog;
pub mod checkout_page;
pub mod clock;
pub mod config;
pub mod error;
pub mod failpoints;
pub mod idempotency;
pub mod images;
pub mod mcp;
pub mod orders;
pub mod payments;
pub mod policy;
pub mod preview;
pub mod reply;
pub mod startup;
pub mod store;
pub mod suggest;
pub mod telemetry;
pub mod widget;
