//! JSON-RPC over plain HTTP, without the MCP client: for requests the client would never send
//! (foreign Host and Origin headers, malformed bodies, oversized bodies).

/// An `initialize` request.
pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-http","version":"1.0"}}}"#;

/// A POST to `url` with the headers a Streamable HTTP client sends, in `session` if given.
pub fn post(url: &str, session: Option<&str>) -> reqwest::RequestBuilder {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request
}

/// An initialized MCP session spoken to in raw JSON-RPC.
pub struct RawSession {
    url: String,
    session: String,
}

impl RawSession {
    pub async fn open(url: String) -> Self {
        let response = post(&url, None).body(INIT).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_string();
        let _ = response.text().await;
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let response = post(&url, Some(&session)).body(initialized).send().await.unwrap();
        assert!(response.status().is_success(), "{}", response.status());
        Self { url, session }
    }

    /// The session's `Mcp-Session-Id`.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Sends `body` in the session; returns the status and the body (SSE `data:` joined).
    pub async fn send(&self, body: impl Into<reqwest::Body>) -> (u16, String) {
        let response = post(&self.url, Some(&self.session)).body(body).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        let data: Vec<&str> =
            text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).filter(|l| !l.is_empty()).collect();
        (status, if data.is_empty() { text } else { data.join("\n") })
    }
}
