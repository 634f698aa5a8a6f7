//! The machine's ceiling for `suggest_gifts` under the peers' load (issue 28, item 2): a server
//! that does none of GiftGenius's work and answers every request with the bytes of one real
//! answer, measured with the same oha command on the same cores as the real server.
//!
//! - `http`: axum with hyper's HTTP/1.1 and `TCP_NODELAY`, one route that returns the canned body
//!   (no JSON read, no MCP): what HTTP and the answer's size cost here.
//! - `rmcp`: the MCP SDK we serve with (rmcp's Streamable HTTP service, stateless, JSON replies,
//!   as `startup::mcp_service` configures it), with a handler whose `call_tool` returns a clone
//!   of the canned `CallToolResult`: what the SDK costs per call before any tool runs.
//!
//! ```sh
//! # one real answer from a running GiftGenius ($BODY: the peers' bench request)
//! curl -s -X POST http://127.0.0.1:PORT/mcp -H 'Content-Type: application/json' \
//!   -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' \
//!   -d "$BODY" > answer.json
//! cargo run --release -p giftgenius-server --example floor -- http 8121 answer.json
//! cargo run --release -p giftgenius-server --example floor -- rmcp 8122 answer.json
//! ```
//!
//! Loopback only; it serves until killed. docs/performance.md has the commands and the figures.

use std::sync::Arc;

use axum::Router;
use axum::serve::ListenerExt;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};

/// A handler that answers every tool call with the same result.
#[derive(Clone)]
struct Canned(Arc<CallToolResult>);

impl ServerHandler for Canned {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResponse::Complete((*self.0).clone()))
    }
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, port, answer] = args.as_slice() else {
        anyhow::bail!("usage: floor <http|rmcp> PORT ANSWER.json");
    };
    let body = std::fs::read(answer)?;
    let app = match mode.as_str() {
        "http" => {
            let body = axum::body::Bytes::from(body);
            Router::new().route(
                "/mcp",
                axum::routing::post(move || {
                    let body = body.clone();
                    async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], body) }
                }),
            )
        }
        "rmcp" => {
            let reply: serde_json::Value = serde_json::from_slice(&body)?;
            let result: CallToolResult = serde_json::from_value(reply["result"].clone())?;
            let handler = Canned(Arc::new(result));
            let config = StreamableHttpServerConfig::default()
                .with_legacy_session_mode(false)
                .with_json_response(true)
                .with_stateless_protocol_metadata_required(false);
            let service = StreamableHttpService::new(
                move || Ok(handler.clone()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            Router::new().nest_service("/mcp", service)
        }
        other => anyhow::bail!("unknown mode {other:?}: http or rmcp"),
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port.parse::<u16>()?)).await?;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    eprintln!("floor ({mode}) on http://127.0.0.1:{port}/mcp");
    axum::serve(listener, app).await?;
    Ok(())
}
