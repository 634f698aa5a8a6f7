//! Signing in to an MCP server that wants an account: the authorization-code flow with PKCE
//! (S256), run by rmcp's OAuth client (protected-resource and authorization-server discovery,
//! dynamic client registration unless `--client-id` names a registered client, the code
//! exchange). We print the URL to open and listen on a loopback port for the redirect
//! (`http://127.0.0.1:PORT/callback`, RFC 8252's native-app pattern); the access token is used as
//! the bearer token and never printed.

use std::time::Duration;

use anyhow::{Context, bail};
use rmcp::transport::auth::{AuthorizationRequest, OAuthState};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How long we wait for the person to finish signing in.
const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs the sign-in against the server at `mcp_url` and returns an access token.
pub async fn sign_in(
    mcp_url: &str,
    challenge: Option<String>,
    client_id: Option<&str>,
    scopes: &[String],
    callback_port: u16,
) -> anyhow::Result<String> {
    crate::tls::install_crypto_provider();
    let listener =
        TcpListener::bind(("127.0.0.1", callback_port)).await.context("cannot listen for the sign-in redirect")?;
    let redirect_uri = format!("http://127.0.0.1:{}/callback", listener.local_addr()?.port());
    let mut state = OAuthState::new(mcp_url, None).await.map_err(|e| anyhow::anyhow!("sign-in setup failed: {e}"))?;
    let mut request = AuthorizationRequest::new(redirect_uri.clone()).with_client_name("GiftGenius chat");
    if !scopes.is_empty() {
        request = request.with_scopes(scopes.iter().cloned());
    }
    if let Some(id) = client_id {
        request = request.with_preregistered_client(id);
    }
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    state.start_authorization(request).await.map_err(|e| anyhow::anyhow!("sign-in could not start: {e}"))?;
    let url = state.get_authorization_url().await.map_err(|e| anyhow::anyhow!("no authorization URL: {e}"))?;
    eprintln!("\nThis MCP server needs you to sign in. Open this URL in a browser:\n\n  {url}\n");
    eprintln!("(waiting for the redirect to {redirect_uri})");
    let (code, csrf) = tokio::time::timeout(SIGN_IN_TIMEOUT, wait_for_code(&listener))
        .await
        .context("sign-in timed out after 5 minutes")??;
    state.handle_callback(&code, &csrf).await.map_err(|e| anyhow::anyhow!("the code exchange failed: {e}"))?;
    let token = state.get_access_token().await.map_err(|e| anyhow::anyhow!("no access token: {e}"))?;
    eprintln!("Signed in.");
    Ok(token)
}

/// Accepts connections until one is `GET /callback?code=…&state=…`; answers it with a short page.
async fn wait_for_code(listener: &TcpListener) -> anyhow::Result<(String, String)> {
    loop {
        let (mut socket, _) = listener.accept().await?;
        let mut buf = vec![0u8; 8192];
        let n = socket.read(&mut buf).await.unwrap_or(0);
        let head = String::from_utf8_lossy(&buf[..n]);
        let target = head.lines().next().and_then(|l| l.split_whitespace().nth(1)).unwrap_or("/").to_string();
        let parsed = url::Url::parse(&format!("http://127.0.0.1{target}")).ok();
        let query =
            |k: &str| parsed.as_ref().and_then(|u| u.query_pairs().find(|(n, _)| n == k).map(|(_, v)| v.into_owned()));
        let (status, body, outcome) =
            match (parsed.as_ref().map(|u| u.path() == "/callback"), query("code"), query("state"), query("error")) {
                (Some(true), Some(code), Some(state), _) => {
                    ("200 OK", "Signed in. You can close this tab.", Some(Ok((code, state))))
                }
                (Some(true), _, _, Some(error)) => ("400 Bad Request", "Sign-in failed.", Some(Err(error))),
                _ => ("404 Not Found", "Not the sign-in redirect.", None),
            };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(response.as_bytes()).await;
        match outcome {
            Some(Ok(pair)) => return Ok(pair),
            Some(Err(error)) => bail!("the authorization server refused the sign-in: {error}"),
            None => continue,
        }
    }
}
