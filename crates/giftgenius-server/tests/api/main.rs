//! Integration tests: the real server on 127.0.0.1:0, spoken to over real HTTP by the official
//! MCP client (or in raw JSON-RPC, or over stdio, or as a child process that crashes). One test
//! binary (faster to link), one module per area, and `support` for what they share.

mod accounts;
mod catalog_files;
mod chaos;
mod checkout;
mod crash;
mod discovery;
mod error_examples;
mod fail_closed;
mod fencing;
mod hostile;
mod http;
mod http_limits;
mod internal;
mod limits;
mod orders;
mod postgres;
mod reconcile;
mod sandbox_pay;
mod stateless;
mod stdio;
mod suggest_gifts;
mod support;
mod tcp_nodelay;
mod token_lifetimes;
mod upstream;
