//! Integration tests: the real server on 127.0.0.1:0, spoken to over real HTTP by the official
//! MCP client. One test binary (faster to link), one module per area.

mod checkout;
mod crash;
mod discovery;
mod error_examples;
mod helpers;
mod hostile;
mod http;
mod internal;
mod limits;
mod postgres;
mod stdio;
mod suggest_gifts;
mod upstream;
