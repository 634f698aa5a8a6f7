//! Integration tests: the real server on 127.0.0.1:0, spoken to over real HTTP by the official
//! MCP client (or in raw JSON-RPC, or over stdio, or as a child process that crashes). One test
//! binary (faster to link), one module per area, and `support` for what they share.

mod accounts;
mod acp;
mod acp_complete;
mod acp_mcp;
mod browser_hosts;
mod catalog_files;
mod chaos;
mod checkout;
mod crash;
mod delegate_payment;
mod directory;
mod discovery;
mod error_examples;
mod fail_closed;
mod fencing;
mod field_messages;
mod health;
mod hostile;
mod http;
mod http_limits;
mod internal;
mod limits;
mod local_routes;
mod metrics;
mod network_edge;
mod operator;
mod order_events;
mod orders;
mod photos;
mod postgres;
mod prometheus;
mod reconcile;
mod review_cases;
mod sandbox_pay;
mod sandbox_pay_guard;
mod sandbox_pay_tokens;
mod stateless;
mod stdio;
mod suggest_gifts;
mod support;
mod tcp_nodelay;
mod token_lifetimes;
mod traces;
mod upstream;
