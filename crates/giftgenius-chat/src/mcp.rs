//! The MCP connection: rmcp's official client over Streamable HTTP, with a bearer token when we
//! have one. Every call has a deadline; what can go wrong on the way (no answer in time, the
//! server unreachable, a JSON-RPC error) comes back as a [`CallFailure`] the loop turns into an
//! error result for the model, never into a crash.

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

/// A connected MCP client.
pub struct Mcp {
    client: RunningService<RoleClient, ()>,
    pub url: String,
}

/// Why a tool call has no result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallFailure {
    /// No answer within the per-call deadline; the request was abandoned.
    Timeout(Duration),
    /// The server could not be reached, closed the connection, or answered with a protocol error.
    Transport(String),
}

/// Why connecting failed.
#[derive(Debug)]
pub enum ConnectError {
    /// The server answered 401: it wants a signed-in caller. Holds its `WWW-Authenticate` if seen.
    AuthRequired(Option<String>),
    Other(String),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AuthRequired(_) => f.write_str("the MCP server requires sign-in (HTTP 401)"),
            Self::Other(why) => write!(f, "cannot connect to the MCP server: {why}"),
        }
    }
}

impl std::error::Error for ConnectError {}

impl Mcp {
    /// Connects (and initializes) with an optional bearer token.
    pub async fn connect(url: &str, bearer: Option<&str>) -> Result<Self, ConnectError> {
        crate::tls::install_crypto_provider();
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        if let Some(token) = bearer {
            config = config.auth_header(token.to_string());
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        match ().serve(transport).await {
            Ok(client) => Ok(Self { client, url: url.to_string() }),
            Err(e) => {
                let text = format!("{e:?}");
                if text.contains("AuthRequired") || text.contains("401") {
                    Err(ConnectError::AuthRequired(www_authenticate(&text)))
                } else {
                    Err(ConnectError::Other(e.to_string()))
                }
            }
        }
    }

    /// Every tool the server lists (all pages).
    pub async fn list_tools(&self) -> anyhow::Result<Vec<Tool>> {
        self.client.list_all_tools().await.map_err(|e| anyhow::anyhow!("tools/list failed: {e}"))
    }

    /// Calls `name` and waits at most `timeout` for its result.
    pub async fn call(
        &self,
        name: &str,
        arguments: JsonObject,
        timeout: Duration,
    ) -> Result<CallToolResult, CallFailure> {
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        match tokio::time::timeout(timeout, self.client.call_tool(params)).await {
            Err(_) => Err(CallFailure::Timeout(timeout)),
            Ok(Err(e)) => Err(CallFailure::Transport(e.to_string())),
            Ok(Ok(result)) => Ok(result),
        }
    }
}

/// The `WWW-Authenticate` value rmcp's error carries, if its debug text shows one.
fn www_authenticate(debug: &str) -> Option<String> {
    let start = debug.find("www_authenticate_header: \"")? + "www_authenticate_header: \"".len();
    let rest = &debug[start..];
    let end = rest.find("\" }").or_else(|| rest.find('"'))?;
    Some(rest[..end].replace("\\\"", "\""))
}
