//! Verifies a JWT access token (RFC 9068 profile) with the `jsonwebtoken` crate and turns it into
//! a [`Principal`]. No cryptography is written here: this file only decides which key and which
//! algorithm `jsonwebtoken` may use, and which claims must hold.
//!
//! Rules: the header's `typ` must be `at+jwt` (RFC 9068 §2.1; `application/at+jwt` too, any
//! case), so an ID token or another JWT of the same issuer is never taken for an access token;
//! with `--accept-plain-jwt` (authorization servers that issue `typ: JWT`) `JWT`,
//! `application/jwt` or no `typ` pass too, and any other `typ` is still refused. The header's
//! `alg` must be one of [`ALLOWED_ALGORITHMS`] (never `none`, never `HS*`)
//! and fit the JWK's key type and `alg`; `iss` equals the issuer exactly; `aud` contains our
//! audience (RFC 8707); `exp` is required; `exp` and `nbf` are checked with 60 s leeway; `sub` is
//! required. Scopes come from `scope` (space-separated) or `scp` (array or string).

use std::collections::{BTreeSet, HashSet};
use std::fmt;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;

use super::caller::Principal;
use super::jwks::{ALLOWED_ALGORITHMS, JwksOptions, KeySource};
use super::mode::Issuer;

/// Clock skew tolerated on `exp` and `nbf`, in seconds.
pub const LEEWAY_SECS: u64 = 60;
/// Longest token we look at; real access tokens are a few KiB at most.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// Longest `sub` accepted.
const MAX_SUB_BYTES: usize = 255;

/// Why a token was refused. `Display` is a short description safe to send to the client (it goes
/// into `error_description`); neither `Display` nor `Debug` ever contains the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthError {
    Expired,
    NotYetValid,
    WrongAudience,
    WrongIssuer,
    BadSignature,
    UnsupportedAlg,
    UnknownKey,
    /// The header's `typ` says it is not an access token (RFC 9068: `at+jwt`).
    NotAnAccessToken,
    Malformed,
    /// The authorization server's keys cannot be fetched: not the caller's fault (HTTP 503).
    Unreachable,
}

impl AuthError {
    /// A stable snake_case name for logs and metrics.
    pub fn code(self) -> &'static str {
        match self {
            AuthError::Expired => "expired",
            AuthError::NotYetValid => "not_yet_valid",
            AuthError::WrongAudience => "wrong_audience",
            AuthError::WrongIssuer => "wrong_issuer",
            AuthError::BadSignature => "bad_signature",
            AuthError::UnsupportedAlg => "unsupported_alg",
            AuthError::UnknownKey => "unknown_key",
            AuthError::NotAnAccessToken => "not_an_access_token",
            AuthError::Malformed => "malformed",
            AuthError::Unreachable => "unreachable",
        }
    }
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AuthError::Expired => "the access token expired",
            AuthError::NotYetValid => "the access token is not valid yet",
            AuthError::WrongAudience => "the access token is not for this resource",
            AuthError::WrongIssuer => "the access token is from another issuer",
            AuthError::BadSignature => "the access token signature is invalid",
            AuthError::UnsupportedAlg => "the access token algorithm is not accepted",
            AuthError::UnknownKey => "the access token is signed with an unknown key",
            AuthError::NotAnAccessToken => "the token is not typed as an access token",
            AuthError::Malformed => "the access token is malformed",
            AuthError::Unreachable => "the authorization server cannot be reached",
        })
    }
}

impl std::error::Error for AuthError {}

/// Verifies access tokens of one issuer for one audience.
pub struct Verifier {
    issuer: Issuer,
    audience: String,
    keys: KeySource,
    /// `--accept-plain-jwt`: `typ: JWT` (or none) passes besides `at+jwt`.
    accept_plain_jwt: bool,
}

#[derive(Deserialize)]
struct RawHeader {
    alg: String,
    kid: Option<String>,
    typ: Option<String>,
}

/// Whether a JOSE `typ` is acceptable for an access token (media types compare case-insensitively,
/// RFC 7515 §4.1.9, with or without their `application/` prefix).
fn typ_accepted(typ: Option<&str>, accept_plain_jwt: bool) -> bool {
    let bare = typ.map(|t| {
        let lower = t.to_ascii_lowercase();
        lower.strip_prefix("application/").map(str::to_string).unwrap_or(lower)
    });
    match bare.as_deref() {
        Some("at+jwt") => true,
        Some("jwt") | None => accept_plain_jwt,
        Some(_) => false,
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum StringOrList {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
struct Claims {
    sub: String,
    scope: Option<String>,
    scp: Option<StringOrList>,
    client_id: Option<String>,
    azp: Option<String>,
    /// What the person signed in as, shown back to them (the card page): the first string
    /// present. Read as any JSON value, so an odd one only goes unshown, never refuses the token.
    email: Option<serde_json::Value>,
    name: Option<serde_json::Value>,
    preferred_username: Option<serde_json::Value>,
}

/// What the token says the person signed in as: its `email`, else `name`, else
/// `preferred_username`, the first that is a string that may be shown.
fn account_name_of(claims: &Claims) -> Option<String> {
    [&claims.email, &claims.name, &claims.preferred_username]
        .into_iter()
        .find_map(|claim| claim.as_ref()?.as_str().and_then(super::caller::shown_name))
}

impl Verifier {
    pub fn new(issuer: Issuer, audience: String, options: JwksOptions) -> Result<Verifier, reqwest::Error> {
        let keys = KeySource::new(issuer.clone(), options)?;
        Ok(Verifier { issuer, audience, keys, accept_plain_jwt: false })
    }

    /// The same verifier, also accepting `typ: JWT` (or no `typ`) when `accept` is true.
    pub fn accepting_plain_jwt(self, accept: bool) -> Verifier {
        Verifier { accept_plain_jwt: accept, ..self }
    }

    /// The verifier of a verified-mode [`AuthMode`](super::AuthMode); `None` in other modes.
    pub fn for_mode(mode: &super::AuthMode, options: JwksOptions) -> Option<Result<Verifier, reqwest::Error>> {
        match mode {
            super::AuthMode::Verified { issuer, audience } => {
                Some(Verifier::new(issuer.clone(), audience.clone(), options))
            }
            _ => None,
        }
    }

    pub fn issuer(&self) -> &Issuer {
        &self.issuer
    }

    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The key cache (prefetch at startup with `keys().refresh()`).
    pub fn keys(&self) -> &KeySource {
        &self.keys
    }

    /// Verifies `token` (the part after `Bearer `).
    pub async fn verify(&self, token: &str) -> Result<Principal, AuthError> {
        let (alg, kid, typ) = read_header(token)?;
        let key = self.keys.key(kid.as_deref(), alg).await?;
        if !key.algorithms.contains(&alg) {
            return Err(AuthError::UnsupportedAlg);
        }
        let mut validation = Validation::new(alg);
        validation.leeway = LEEWAY_SECS;
        validation.validate_exp = true;
        validation.validate_nbf = true;
        validation.validate_aud = true;
        validation.set_audience(&[&self.audience]);
        validation.set_issuer(&[self.issuer.as_str()]);
        validation.required_spec_claims = HashSet::from(["exp", "iss", "aud", "sub"].map(String::from));
        let data = jsonwebtoken::decode::<Claims>(token, &key.key, &validation).map_err(map_error)?;
        // Checked once the issuer's signature holds, so the refusal names the real reason (a
        // forged token is refused for its signature, whatever its header claims).
        if !typ_accepted(typ.as_deref(), self.accept_plain_jwt) {
            return Err(AuthError::NotAnAccessToken);
        }
        let claims = data.claims;
        if claims.sub.is_empty() || claims.sub.len() > MAX_SUB_BYTES || claims.sub.contains(char::is_control) {
            return Err(AuthError::Malformed);
        }
        let account_name = account_name_of(&claims);
        let mut scopes = BTreeSet::new();
        if let Some(scope) = &claims.scope {
            scopes.extend(scope.split(' ').filter(|s| !s.is_empty()).map(str::to_string));
        }
        match claims.scp {
            Some(StringOrList::One(s)) => scopes.extend(s.split(' ').filter(|s| !s.is_empty()).map(str::to_string)),
            Some(StringOrList::Many(list)) => scopes.extend(list.into_iter().filter(|s| !s.is_empty())),
            None => {}
        }
        Ok(Principal {
            subject: format!("{}#{}", self.issuer.as_str(), claims.sub),
            scopes,
            client_id: claims.client_id.or(claims.azp),
            account_name,
        })
    }
}

/// Reads `alg`, `kid` and `typ` from the JOSE header ourselves, so that `none`, `HS256` and any
/// other algorithm outside the allow-list is refused as such before a key is even looked up.
fn read_header(token: &str) -> Result<(Algorithm, Option<String>, Option<String>), AuthError> {
    use base64::Engine;
    if token.is_empty() || token.len() > MAX_TOKEN_BYTES {
        return Err(AuthError::Malformed);
    }
    if !token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.') {
        return Err(AuthError::Malformed);
    }
    let mut parts = token.split('.');
    let (Some(header), Some(_), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(AuthError::Malformed);
    };
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header).map_err(|_| AuthError::Malformed)?;
    let header: RawHeader = serde_json::from_slice(&header).map_err(|_| AuthError::Malformed)?;
    let alg = match header.alg.as_str() {
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "EdDSA" => Algorithm::EdDSA,
        _ => return Err(AuthError::UnsupportedAlg),
    };
    debug_assert!(ALLOWED_ALGORITHMS.contains(&alg));
    Ok((alg, header.kid, header.typ))
}

fn map_error(e: jsonwebtoken::errors::Error) -> AuthError {
    match e.kind() {
        ErrorKind::ExpiredSignature => AuthError::Expired,
        ErrorKind::ImmatureSignature => AuthError::NotYetValid,
        ErrorKind::InvalidAudience => AuthError::WrongAudience,
        ErrorKind::InvalidIssuer => AuthError::WrongIssuer,
        ErrorKind::MissingRequiredClaim(c) if c == "aud" => AuthError::WrongAudience,
        ErrorKind::MissingRequiredClaim(c) if c == "iss" => AuthError::WrongIssuer,
        ErrorKind::InvalidSignature
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey
        | ErrorKind::InvalidKeyFormat => AuthError::BadSignature,
        ErrorKind::InvalidAlgorithm | ErrorKind::UnsupportedAlgorithm | ErrorKind::InvalidAlgorithmName => {
            AuthError::UnsupportedAlg
        }
        _ => AuthError::Malformed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn token(header: &str) -> String {
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.sig", b64(header), b64(r#"{"sub":"a"}"#))
    }

    #[test]
    fn the_header_is_read_before_any_key() {
        assert_eq!(
            read_header(&token(r#"{"alg":"RS256","kid":"k","typ":"at+jwt"}"#)),
            Ok((Algorithm::RS256, Some("k".into()), Some("at+jwt".into())))
        );
        assert_eq!(read_header(&token(r#"{"alg":"EdDSA"}"#)), Ok((Algorithm::EdDSA, None, None)));
        for alg in ["none", "None", "HS256", "HS512", "PS512", "RS1", ""] {
            let header = format!(r#"{{"alg":"{alg}","kid":"k"}}"#);
            assert_eq!(read_header(&token(&header)), Err(AuthError::UnsupportedAlg), "{alg}");
        }
        for bad in ["", "a.b", "a.b.c.d", "not base64!.b.c", &token("[]"), &"a".repeat(MAX_TOKEN_BYTES + 1)] {
            assert_eq!(read_header(bad), Err(AuthError::Malformed), "{bad:.40}");
        }
    }

    #[test]
    fn only_at_jwt_is_an_access_token_unless_plain_jwts_are_accepted() {
        for typ in ["at+jwt", "AT+JWT", "application/at+jwt", "Application/AT+JWT"] {
            assert!(typ_accepted(Some(typ), false), "{typ}");
            assert!(typ_accepted(Some(typ), true), "{typ}");
        }
        for plain in [Some("JWT"), Some("jwt"), Some("application/jwt"), None] {
            assert!(!typ_accepted(plain, false), "{plain:?}");
            assert!(typ_accepted(plain, true), "{plain:?}");
        }
        for other in ["dpop+jwt", "logout+jwt", "at+jwt2", "text/at+jwt", ""] {
            assert!(!typ_accepted(Some(other), true), "{other}");
        }
    }

    #[test]
    fn the_account_name_is_the_first_showable_string_and_an_odd_claim_refuses_nothing() {
        let name = |json: &str| account_name_of(&serde_json::from_str::<Claims>(json).expect("claims read"));
        assert_eq!(name(r#"{"sub":"a","email":"ana@example.com","name":"Ana"}"#).as_deref(), Some("ana@example.com"));
        assert_eq!(name(r#"{"sub":"a","email":42,"name":"Ana"}"#).as_deref(), Some("Ana"));
        assert_eq!(name(r#"{"sub":"a","email":"","preferred_username":"ana"}"#).as_deref(), Some("ana"));
        assert_eq!(name(r#"{"sub":"a","email":{"x":1},"name":["Ana"]}"#), None);
        assert_eq!(name(r#"{"sub":"a"}"#), None);
    }

    #[test]
    fn descriptions_are_short_and_quote_free() {
        for e in [
            AuthError::Expired,
            AuthError::NotYetValid,
            AuthError::WrongAudience,
            AuthError::WrongIssuer,
            AuthError::BadSignature,
            AuthError::UnsupportedAlg,
            AuthError::UnknownKey,
            AuthError::NotAnAccessToken,
            AuthError::Malformed,
            AuthError::Unreachable,
        ] {
            let text = e.to_string();
            assert!(text.len() < 60 && !text.contains('"') && !text.contains('\\'), "{text}");
            assert!(!e.code().is_empty());
        }
    }
}
