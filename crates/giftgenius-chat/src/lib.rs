//! `giftgenius-chat`: a host that puts a real model in front of an MCP server, in the terminal
//! (`cargo xtask chat`). It is the other half of a tool-using app that seed 002 describes: the
//! loop that sends the conversation to a model, runs the tools it asks for, stitches every result
//! back in and repeats until the model answers.
//!
//! - `config`: flags and environment (provider, model, URLs, limits).
//! - `mcp`: the MCP connection (rmcp's Streamable HTTP client), bearer tokens; `auth`: the
//!   authorization-code + PKCE sign-in with a loopback redirect listener.
//! - `registry`: ONE table built from `tools/list`: it produces the model's tool definitions and
//!   dispatches the calls, so the two can never drift; tools hidden from the model stay out.
//! - `provider/`: the model behind one interface: OpenAI-compatible Chat Completions and
//!   Anthropic Messages, retried with backoff where a failure is retryable.
//! - `agent`: the loop and its safety valves (turn limit, repeated-call valve, one result per
//!   call, bounded outputs, per-call timeouts).
//! - `purchase`: human confirmation: the host, never the model, commits a draft after a typed "yes".
//! - `host`: what the person sees and answers (the terminal; tests script it).
//! - `panel`: `--listen`: the loop behind a small loopback HTTP API for the preview's chat panel.
//! - `log`: the `--log` JSON lines.
//! - `tls`: ring as the crypto of rmcp's HTTP client (no aws-lc-rs in the build).

pub mod agent;
pub mod auth;
pub mod config;
pub mod host;
pub mod log;
pub mod mcp;
pub mod panel;
pub mod provider;
pub mod purchase;
pub mod registry;
pub mod text;
pub mod tls;
