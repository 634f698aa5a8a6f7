//! `WWW-Authenticate` values (RFC 6750 §3, RFC 9728 §5.1) that tell a client how to sign in:
//! the 401 for a missing or invalid token, the 403 for a missing scope, and the
//! `_meta["mcp/www_authenticate"]` of a tool result that asks ChatGPT to start account linking.

use serde_json::{Value, json};

/// An RFC 9110 quoted-string. Parameter values here are URLs, scopes and our own fixed texts,
/// but whatever comes in, the result is one safe header line: control characters and non-ASCII
/// are dropped (they cannot appear in a header value or in RFC 6750's `error_description`), `"`
/// and `\` are backslash-escaped.
pub fn quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            ' '..='~' => out.push(c),
            _ => {}
        }
    }
    out.push('"');
    out
}

/// 401, no token at all: `Bearer resource_metadata="…"`.
pub fn missing_token(resource_metadata: &str) -> String {
    format!("Bearer resource_metadata={}", quote(resource_metadata))
}

/// 401, a token we refuse: `Bearer error="invalid_token", error_description="…", resource_metadata="…"`.
pub fn invalid_token(resource_metadata: &str, description: &str) -> String {
    format!(
        "Bearer error=\"invalid_token\", error_description={}, resource_metadata={}",
        quote(description),
        quote(resource_metadata)
    )
}

/// 403, a valid token without the scope a tool needs:
/// `Bearer error="insufficient_scope", scope="orders:write", resource_metadata="…"`.
pub fn insufficient_scope(resource_metadata: &str, scope: &str) -> String {
    format!(
        "Bearer error=\"insufficient_scope\", scope={}, resource_metadata={}",
        quote(scope),
        quote(resource_metadata)
    )
}

/// The `_meta["mcp/www_authenticate"]` value of an `AUTH_REQUIRED` tool result: a list of
/// challenges, as ChatGPT reads it to start account linking. `scope` is what the tool needs.
pub fn auth_required_meta(resource_metadata: &str, scope: &str, description: &str) -> Value {
    json!([format!(
        "Bearer resource_metadata={}, error=\"insufficient_scope\", scope={}, error_description={}",
        quote(resource_metadata),
        quote(scope),
        quote(description)
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRM: &str = "https://gifts.example/.well-known/oauth-protected-resource/mcp";

    #[test]
    fn the_three_challenges() {
        assert_eq!(missing_token(PRM), format!("Bearer resource_metadata=\"{PRM}\""));
        assert_eq!(
            invalid_token(PRM, "the access token expired"),
            format!(
                "Bearer error=\"invalid_token\", error_description=\"the access token expired\", resource_metadata=\"{PRM}\""
            )
        );
        assert_eq!(
            insufficient_scope(PRM, "orders:write"),
            format!("Bearer error=\"insufficient_scope\", scope=\"orders:write\", resource_metadata=\"{PRM}\"")
        );
        let meta = auth_required_meta(PRM, "orders:write", "Sign in to GiftGenius to order");
        assert_eq!(
            meta[0],
            format!(
                "Bearer resource_metadata=\"{PRM}\", error=\"insufficient_scope\", scope=\"orders:write\", \
                 error_description=\"Sign in to GiftGenius to order\""
            )
        );
    }

    #[test]
    fn quoting_cannot_break_out_of_the_header() {
        assert_eq!(quote(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(quote("line\r\nSet-Cookie: x=1"), "\"lineSet-Cookie: x=1\"");
        assert_eq!(quote("caf\u{e9}\u{7f}"), "\"caf\"");
        for value in [missing_token("x\"\r\ny"), invalid_token("\n", "\"\\"), insufficient_scope("\u{0}", "a b")] {
            assert!(axum::http::HeaderValue::from_str(&value).is_ok(), "{value}");
        }
    }
}
