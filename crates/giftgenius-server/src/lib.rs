//! GiftGenius's server: the transports, adapted onto the commerce core (`giftgenius-commerce`:
//! the store, idempotency, payments, the charge and refund steps, the outbox) and the catalog
//! (`giftgenius-catalog`).
//!
//! - `auth/`: identity from a verified OAuth access token (resource metadata, token checks, the
//!   middleware in front of `/mcp`), or the local / single-user modes.
//! - `config`: flags and environment; `startup`: `Application` binds and wires everything
//!   (tests start the app the same way); `state`: `AppState`, what every request may need.
//! - `mcp/`: the tool registry and handler, arguments, replies, the policy after every call;
//!   `widget_resource`: the packed widget as a resource.
//! - `suggest/`: `suggest_gifts` on the catalog crate (the daily limit, the model's text).
//! - `checkout/`: prepare / commit / get order and checkout sessions, the confirmation token,
//!   the tools' side of idempotency keys, starting the SANDBOX provider (a process of its own:
//!   `giftgenius-sandbox-pay`), Stripe's webhook, and the reconciler of pending orders.
//! - `permalink`: an order's status page link (and its 3-D Secure page's), signed.
//! - `acp/`: the Agentic Commerce Protocol merchant (checkout sessions for agent platforms) and
//!   its order events' bodies.
//! - `operator/`: an order's life after payment (processing, shipped, completed, refunds), over
//!   the operator's HTTP API and the `orders` command.
//! - `http/`: the plain routes next to `/mcp` (images, the checkout page, the preview);
//!   `html`: escaping for the pages the server renders.
//! - `web/`: the HTTP plumbing every transport shares: the rate limit, server spans, the drain
//!   on shutdown, and what both MCP servers do alike (the JSON-RPC body check, spans, timing).
//! - `photos/`: gift photos fetched from the catalog's URLs, resized and kept, for `/images/`.
//! - `limits`: usage limits per account (suggestions per day, drafts and checkout links per
//!   hour).
//! - `context`: one call's context; `outcome`: what a service answers; `error`: internal
//!   failures as honest errors; `telemetry`: logs; `traces`: the OTLP exporter; `metrics`: what
//!   `/metrics` shows Prometheus.
//! - `panics`: a handler's panic answered as a structured error, its key released, its message
//!   kept out of the log.
//! - `registry`: the MCP registry's `server.json` (`giftgenius-server registry-json`); `feed`:
//!   the ACP product feed (`giftgenius-server feed export`).

// A `ToolError` (≈150 bytes) is the answer a service gives, built at most once per call and
// returned straight to the client, not an exceptional path in a hot loop: boxing it in every
// `Result` would add noise for no measurable gain.
#![allow(clippy::result_large_err)]

pub mod acp;
pub mod auth;
pub mod checkout;
pub mod client_addr;
pub mod config;
pub mod context;
pub mod error;
pub mod feed;
pub mod html;
pub mod http;
pub mod limits;
pub mod mcp;
pub mod metrics;
pub mod operator;
pub mod outcome;
pub mod panics;
pub mod permalink;
pub mod photos;
pub mod registry;
pub mod startup;
pub mod state;
pub mod suggest;
pub mod telemetry;
pub mod traces;
pub mod web;
pub mod widget_resource;
