//! RFC 9728 OAuth 2.0 Protected Resource Metadata: the document that tells a host which
//! authorization server issues tokens for our `/mcp` resource, and the routes that serve it at
//! `/.well-known/oauth-protected-resource` and `/.well-known/oauth-protected-resource/mcp`.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::{Value, json};

use super::SCOPES_SUPPORTED;

/// Where the metadata of `resource` lives (RFC 9728 §3.1: `/.well-known/oauth-protected-resource`
/// inserted between the host and the path): `https://g.example/mcp` →
/// `https://g.example/.well-known/oauth-protected-resource/mcp`. This is the `resource_metadata`
/// of every challenge.
pub fn resource_metadata_url(resource: &str) -> String {
    match url::Url::parse(resource) {
        Ok(url) => {
            let path = url.path().trim_end_matches('/');
            let mut at = url.clone();
            at.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
            at.set_query(None);
            at.set_fragment(None);
            at.to_string()
        }
        Err(_) => format!("{}/.well-known/oauth-protected-resource", resource.trim_end_matches('/')),
    }
}

/// The metadata document. `resource` is the public `/mcp` URL (exactly what clients put into
/// RFC 8707 `resource`, and so the tokens' `aud`); `issuer` the authorization server's identifier.
pub fn protected_resource_metadata(resource: &str, issuer: &str, resource_name: &str) -> Value {
    json!({
        "resource": resource,
        "authorization_servers": [issuer],
        "scopes_supported": SCOPES_SUPPORTED,
        "bearer_methods_supported": ["header"],
        "resource_name": resource_name,
    })
}

/// Serves `document` at both well-known paths, publicly readable (CORS `*`: it is public and
/// browser-based hosts fetch it) and cacheable for an hour. Merge it into the app's router.
pub fn router(document: Value) -> Router {
    let body = document.to_string();
    let serve = move || {
        let body = body.clone();
        async move {
            (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::CACHE_CONTROL, "public, max-age=3600"),
                    (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                ],
                body,
            )
                .into_response()
        }
    };
    Router::new()
        .route("/.well-known/oauth-protected-resource", get(serve.clone()))
        .route("/.well-known/oauth-protected-resource/mcp", get(serve))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_inserts_the_well_known_segment() {
        assert_eq!(
            resource_metadata_url("https://g.example/mcp"),
            "https://g.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            resource_metadata_url("http://127.0.0.1:8000/app/mcp"),
            "http://127.0.0.1:8000/.well-known/oauth-protected-resource/app/mcp"
        );
    }

    #[test]
    fn the_document_has_the_rfc_9728_fields() {
        let doc = protected_resource_metadata("https://g.example/mcp", "https://as.example", "GiftGenius");
        assert_eq!(
            doc,
            json!({
                "resource": "https://g.example/mcp",
                "authorization_servers": ["https://as.example"],
                "scopes_supported": ["orders:read", "orders:write"],
                "bearer_methods_supported": ["header"],
                "resource_name": "GiftGenius",
            })
        );
    }
}
