//! Integration tests: the real server on 127.0.0.1:0, spoken to over real HTTP by the official
//! MCP client. One test binary (faster to link), one module per area.

mod discovery;
mod helpers;
mod http;
mod checkout;
mod crash;
mod suggest_gifts;
mod upstream;
mod limits;
