//! The authorization server's signing keys: discovery of its metadata (RFC 8414, then OpenID
//! Connect Discovery), its JWKS, and a cache that refreshes on an unknown `kid`.
//!
//! - Discovery order (as the MCP authorization spec lists it): for `https://as.example/tenant`,
//!   `https://as.example/.well-known/oauth-authorization-server/tenant`, then
//!   `https://as.example/.well-known/openid-configuration/tenant`, then
//!   `https://as.example/tenant/.well-known/openid-configuration`; for an issuer without a path,
//!   `/.well-known/oauth-authorization-server` then `/.well-known/openid-configuration`. The
//!   metadata's `issuer` must equal ours exactly (RFC 8414 §3.3), else it is not used.
//! - Every fetch has a timeout, follows no redirect, and reads at most `max_body_bytes`.
//! - Unknown `kid` → one refresh, at most once per `min_refresh_interval` per process; concurrent
//!   callers wait for the refresh in flight instead of starting their own. A failed fetch is
//!   retried no sooner than `failure_backoff`. Keys older than `max_age` are refreshed on use;
//!   if that refresh fails the old keys keep working (stale-if-error).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde::Deserialize;
use url::Url;

use super::mode::{Issuer, fetch_allowed};
use super::verify::AuthError;
use giftgenius_commerce::clock::Clock;

/// Tuning of discovery and the key cache.
#[derive(Debug, Clone)]
pub struct JwksOptions {
    /// Timeout of one HTTP fetch (connect + response + body).
    pub timeout: Duration,
    /// Least time between two refreshes triggered by unknown key ids.
    pub min_refresh_interval: Duration,
    /// Least time before retrying after a failed fetch.
    pub failure_backoff: Duration,
    /// Keys older than this are refreshed when next used.
    pub max_age: Duration,
    /// Largest metadata or JWKS document accepted.
    pub max_body_bytes: usize,
    /// What the intervals above are measured on (a manual clock lets a test step past one).
    pub clock: Clock,
}

impl Default for JwksOptions {
    fn default() -> Self {
        JwksOptions {
            timeout: Duration::from_secs(5),
            min_refresh_interval: Duration::from_secs(30),
            failure_backoff: Duration::from_secs(5),
            max_age: Duration::from_secs(3600),
            max_body_bytes: 256 * 1024,
            clock: Clock::System,
        }
    }
}

/// Algorithms we accept at all; anything else (`none`, every `HS*`) is refused before any key
/// is looked at.
pub const ALLOWED_ALGORITHMS: [Algorithm; 7] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Smallest RSA modulus accepted (bits).
const MIN_RSA_BITS: usize = 2048;

/// One verification key from the JWKS, with the algorithms its key type (and `alg`, if the JWK
/// names one) allows.
pub struct VerifyKey {
    pub kid: Option<String>,
    pub key: DecodingKey,
    pub algorithms: Vec<Algorithm>,
}

impl std::fmt::Debug for VerifyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyKey").field("kid", &self.kid).field("algorithms", &self.algorithms).finish()
    }
}

impl VerifyKey {
    /// A signature-verification key from a JWK, or why it is not one we use.
    pub fn from_jwk(jwk: &Jwk) -> Result<VerifyKey, String> {
        if let Some(usage) = &jwk.common.public_key_use
            && *usage != PublicKeyUse::Signature
        {
            return Err("use is not sig".into());
        }
        if let Some(ops) = &jwk.common.key_operations
            && !ops.contains(&KeyOperations::Verify)
        {
            return Err("key_ops lacks verify".into());
        }
        let by_type: &[Algorithm] = match &jwk.algorithm {
            AlgorithmParameters::RSA(rsa) => {
                let bits = b64url(&rsa.n).map_err(|_| "n is not base64url")?.len() * 8;
                if bits < MIN_RSA_BITS {
                    return Err(format!("RSA key of {bits} bits"));
                }
                &[Algorithm::RS256, Algorithm::RS384, Algorithm::RS512, Algorithm::PS256]
            }
            AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
                EllipticCurve::P256 => &[Algorithm::ES256],
                EllipticCurve::P384 => &[Algorithm::ES384],
                _ => return Err("unsupported curve".into()),
            },
            AlgorithmParameters::OctetKeyPair(okp) => match okp.curve {
                EllipticCurve::Ed25519 => &[Algorithm::EdDSA],
                _ => return Err("unsupported curve".into()),
            },
            AlgorithmParameters::OctetKey(_) => return Err("symmetric key".into()),
            _ => return Err("unknown key type".into()),
        };
        let algorithms: Vec<Algorithm> = match jwk.common.key_algorithm {
            None => by_type.to_vec(),
            Some(named) => match Algorithm::try_from(named) {
                Ok(alg) if by_type.contains(&alg) => vec![alg],
                _ => return Err(format!("alg {named} does not fit the key type")),
            },
        };
        let key = DecodingKey::from_jwk(jwk).map_err(|e| format!("unusable key: {e}"))?;
        Ok(VerifyKey { kid: jwk.common.key_id.clone(), key, algorithms })
    }
}

fn b64url(s: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s.trim_end_matches('='))
}

/// The usable keys of one JWKS document.
#[derive(Debug, Default)]
pub struct KeySet {
    keys: Vec<Arc<VerifyKey>>,
    by_kid: HashMap<String, Arc<VerifyKey>>,
}

impl KeySet {
    /// Parses a JWKS document, keeping the keys we can verify with (others are logged and
    /// skipped, so one exotic key does not lock everybody out).
    pub fn parse(body: &[u8]) -> Result<KeySet, String> {
        #[derive(Deserialize)]
        struct Raw {
            keys: Vec<serde_json::Value>,
        }
        let raw: Raw = serde_json::from_slice(body).map_err(|e| format!("not a JWKS document: {e}"))?;
        let mut set = KeySet::default();
        for value in raw.keys {
            let kid = value.get("kid").and_then(|k| k.as_str()).unwrap_or("(none)").to_string();
            let parsed = serde_json::from_value::<Jwk>(value)
                .map_err(|e| e.to_string())
                .and_then(|jwk| VerifyKey::from_jwk(&jwk));
            match parsed {
                Ok(key) => {
                    let key = Arc::new(key);
                    if let Some(kid) = &key.kid {
                        set.by_kid.entry(kid.clone()).or_insert_with(|| key.clone());
                    }
                    set.keys.push(key);
                }
                Err(why) => tracing::debug!(kid = %kid, %why, "skipping a JWKS key"),
            }
        }
        Ok(set)
    }

    /// The key for a token header: by `kid`; without a `kid`, the only key that allows `alg`.
    pub fn find(&self, kid: Option<&str>, alg: Algorithm) -> Option<Arc<VerifyKey>> {
        match kid {
            Some(kid) => self.by_kid.get(kid).cloned(),
            None => {
                let mut fitting = self.keys.iter().filter(|k| k.algorithms.contains(&alg));
                match (fitting.next(), fitting.next()) {
                    (Some(only), None) => Some(only.clone()),
                    _ => None,
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[derive(Default)]
struct Cache {
    keys: Option<Arc<KeySet>>,
    /// When the keys were fetched, in [`JwksOptions::clock`] milliseconds.
    fetched_at_ms: Option<i64>,
    /// Bumped after every refresh attempt, so waiters know one happened while they queued.
    attempts: u64,
    last_attempt_ms: Option<i64>,
    last_failed: bool,
    jwks_uri: Option<Url>,
}

/// The issuer's keys, discovered, fetched and cached.
pub struct KeySource {
    issuer: Issuer,
    http: reqwest::Client,
    options: JwksOptions,
    cache: RwLock<Cache>,
    refresh_lock: tokio::sync::Mutex<()>,
    fetches: AtomicU64,
}

/// Why one fetch failed (logged, never shown to callers).
#[derive(Debug)]
enum FetchError {
    Http(reqwest::Error),
    Status(reqwest::StatusCode),
    TooLarge,
    Invalid(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Http(e) => write!(f, "{e}"),
            FetchError::Status(s) => write!(f, "HTTP {s}"),
            FetchError::TooLarge => write!(f, "response too large"),
            FetchError::Invalid(why) => write!(f, "{why}"),
        }
    }
}

impl KeySource {
    pub fn new(issuer: Issuer, options: JwksOptions) -> Result<KeySource, reqwest::Error> {
        let http = reqwest::Client::builder()
            .timeout(options.timeout)
            .connect_timeout(options.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("giftgenius-server/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(KeySource {
            issuer,
            http,
            options,
            cache: RwLock::new(Cache::default()),
            refresh_lock: tokio::sync::Mutex::new(()),
            fetches: AtomicU64::new(0),
        })
    }

    pub fn issuer(&self) -> &Issuer {
        &self.issuer
    }

    /// How many JWKS documents were fetched (diagnostics and tests).
    pub fn fetch_count(&self) -> u64 {
        self.fetches.load(Ordering::Relaxed)
    }

    /// Discovers and fetches the keys now (call at startup to find a misconfiguration early).
    /// Returns how many usable keys there are.
    pub async fn refresh(&self) -> Result<usize, String> {
        let _guard = self.refresh_lock.lock().await;
        let result = self.fetch().await;
        let summary = result.as_ref().map(|set| set.len()).map_err(|e| e.to_string());
        self.store(result);
        summary
    }

    /// The key a token header names. Refreshes (rate-limited, coalesced) when the `kid` is
    /// unknown or the keys are older than `max_age`.
    pub async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<Arc<VerifyKey>, AuthError> {
        let seen = {
            let cache = self.cache.read().expect("key cache lock");
            let fresh = cache.fetched_at_ms.is_some_and(|t| self.since(t) < self.options.max_age);
            if let Some(keys) = &cache.keys
                && let Some(key) = keys.find(kid, alg)
                && fresh
            {
                return Ok(key);
            }
            cache.attempts
        };
        self.refresh_after(seen).await;
        let cache = self.cache.read().expect("key cache lock");
        match &cache.keys {
            Some(keys) => keys.find(kid, alg).ok_or(AuthError::UnknownKey),
            None => Err(AuthError::Unreachable),
        }
    }

    /// Refreshes unless another caller did since we looked (`seen`) or the rate limit says wait.
    async fn refresh_after(&self, seen: u64) {
        let _guard = self.refresh_lock.lock().await;
        {
            let cache = self.cache.read().expect("key cache lock");
            if cache.attempts != seen {
                return; // coalesced: someone refreshed while we waited for the lock
            }
            let wait = if cache.last_failed || cache.keys.is_none() {
                self.options.failure_backoff
            } else {
                self.options.min_refresh_interval
            };
            if cache.last_attempt_ms.is_some_and(|t| self.since(t) < wait) {
                return;
            }
        }
        let result = self.fetch().await;
        self.store(result);
    }

    /// Time passed since `then_ms` on the options' clock (zero if the clock went back).
    fn since(&self, then_ms: i64) -> Duration {
        Duration::from_millis(self.options.clock.now_ms().saturating_sub(then_ms).max(0) as u64)
    }

    fn store(&self, result: Result<KeySet, FetchError>) {
        let mut cache = self.cache.write().expect("key cache lock");
        cache.attempts += 1;
        let now = self.options.clock.now_ms();
        cache.last_attempt_ms = Some(now);
        match result {
            Ok(keys) => {
                tracing::info!(issuer = %self.issuer, keys = keys.len(), "fetched the authorization server's signing keys");
                cache.keys = Some(Arc::new(keys));
                cache.fetched_at_ms = Some(now);
                cache.last_failed = false;
            }
            Err(e) => {
                tracing::warn!(issuer = %self.issuer, error = %e, "cannot fetch the authorization server's signing keys");
                cache.last_failed = true;
                cache.jwks_uri = None; // rediscover next time: the metadata may have moved
            }
        }
    }

    async fn fetch(&self) -> Result<KeySet, FetchError> {
        let known = self.cache.read().expect("key cache lock").jwks_uri.clone();
        let jwks_uri = match known {
            Some(uri) => uri,
            None => {
                let uri = self.discover().await?;
                self.cache.write().expect("key cache lock").jwks_uri = Some(uri.clone());
                uri
            }
        };
        self.fetches.fetch_add(1, Ordering::Relaxed);
        let body = self.get(&jwks_uri).await?;
        let keys = KeySet::parse(&body).map_err(FetchError::Invalid)?;
        if keys.is_empty() {
            return Err(FetchError::Invalid(format!("{jwks_uri} has no usable signing key")));
        }
        Ok(keys)
    }

    /// Finds `jwks_uri` in the first metadata document that answers and names our issuer.
    async fn discover(&self) -> Result<Url, FetchError> {
        #[derive(Deserialize)]
        struct Metadata {
            issuer: String,
            jwks_uri: Option<String>,
        }
        let mut last = FetchError::Invalid("no metadata URL".into());
        for url in discovery_urls(self.issuer.url()) {
            let body = match self.get(&url).await {
                Ok(body) => body,
                Err(e) => {
                    tracing::debug!(%url, error = %e, "no authorization server metadata here");
                    last = e;
                    continue;
                }
            };
            let meta: Metadata = match serde_json::from_slice(&body) {
                Ok(meta) => meta,
                Err(e) => {
                    last = FetchError::Invalid(format!("{url}: not metadata: {e}"));
                    continue;
                }
            };
            if meta.issuer != self.issuer.as_str() {
                last = FetchError::Invalid(format!(
                    "{url} names the issuer {:?}, not {:?} (they must be identical, RFC 8414 §3.3)",
                    meta.issuer,
                    self.issuer.as_str()
                ));
                continue;
            }
            let Some(jwks_uri) = meta.jwks_uri else {
                return Err(FetchError::Invalid(format!("{url} has no jwks_uri")));
            };
            let jwks_uri = Url::parse(&jwks_uri).map_err(|e| FetchError::Invalid(format!("jwks_uri: {e}")))?;
            if !fetch_allowed(&jwks_uri) {
                return Err(FetchError::Invalid(format!("jwks_uri {jwks_uri} is not https")));
            }
            return Ok(jwks_uri);
        }
        Err(last)
    }

    /// GET with the client's timeout, no redirects, and at most `max_body_bytes` read.
    async fn get(&self, url: &Url) -> Result<Vec<u8>, FetchError> {
        let limit = self.options.max_body_bytes;
        let mut response = self
            .http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(FetchError::Http)?;
        if !response.status().is_success() {
            return Err(FetchError::Status(response.status()));
        }
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(FetchError::TooLarge);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(FetchError::Http)? {
            if body.len() + chunk.len() > limit {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// Where to look for the metadata of `issuer`, in order (RFC 8414 §3.1 path insertion, then
/// OpenID Connect Discovery 1.0 §4 path appending).
pub fn discovery_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |p: String| {
        let mut url = issuer.clone();
        url.set_path(&p);
        url.set_query(None);
        url.set_fragment(None);
        url
    };
    if path.is_empty() {
        vec![at("/.well-known/oauth-authorization-server".into()), at("/.well-known/openid-configuration".into())]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn urls(issuer: &str) -> Vec<String> {
        discovery_urls(&Url::parse(issuer).unwrap()).into_iter().map(String::from).collect()
    }

    #[test]
    fn discovery_follows_rfc_8414_path_insertion_then_oidc() {
        assert_eq!(
            urls("https://as.example"),
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
        assert_eq!(urls("https://as.example/"), urls("https://as.example"));
        assert_eq!(
            urls("https://as.example/tenant/1/"),
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant/1",
                "https://as.example/.well-known/openid-configuration/tenant/1",
                "https://as.example/tenant/1/.well-known/openid-configuration"
            ]
        );
    }

    // A 2048-bit modulus of zeros is not a key, but enough to test the type rules before use.
    fn rsa(extra: serde_json::Value) -> serde_json::Value {
        let n = base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, [0xffu8; 256]);
        let mut key = json!({"kty": "RSA", "n": n, "e": "AQAB"});
        key.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        key
    }

    fn algs(key: serde_json::Value) -> Result<Vec<Algorithm>, String> {
        VerifyKey::from_jwk(&serde_json::from_value(key).unwrap()).map(|k| k.algorithms)
    }

    #[test]
    fn the_key_type_decides_the_algorithms() {
        assert_eq!(
            algs(rsa(json!({}))).unwrap(),
            [Algorithm::RS256, Algorithm::RS384, Algorithm::RS512, Algorithm::PS256]
        );
        assert_eq!(algs(rsa(json!({"alg": "PS256", "use": "sig"}))).unwrap(), [Algorithm::PS256]);
        assert!(algs(rsa(json!({"alg": "ES256"}))).is_err(), "alg must fit the key type");
        assert!(algs(rsa(json!({"alg": "HS256"}))).is_err());
        assert!(algs(rsa(json!({"use": "enc"}))).is_err());
        assert!(algs(rsa(json!({"key_ops": ["encrypt"]}))).is_err());
        assert!(algs(json!({"kty": "oct", "k": "c2VjcmV0"})).is_err(), "never a symmetric key");
        let short = base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, [0xffu8; 128]);
        assert!(algs(json!({"kty": "RSA", "n": short, "e": "AQAB"})).is_err(), "1024-bit RSA");
        let xy = base64::Engine::encode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, [1u8; 32]);
        assert_eq!(algs(json!({"kty": "EC", "crv": "P-256", "x": xy, "y": xy})).unwrap(), [Algorithm::ES256]);
        assert_eq!(algs(json!({"kty": "OKP", "crv": "Ed25519", "x": xy})).unwrap(), [Algorithm::EdDSA]);
    }

    #[test]
    fn a_jwks_keeps_the_usable_keys_and_finds_by_kid() {
        let doc =
            json!({"keys": [rsa(json!({"kid": "a"})), {"kty": "oct", "k": "c2VjcmV0", "kid": "h"}, {"kty": "weird"}]});
        let set = KeySet::parse(doc.to_string().as_bytes()).unwrap();
        assert_eq!(set.len(), 1);
        assert!(set.find(Some("a"), Algorithm::RS256).is_some());
        assert!(set.find(Some("h"), Algorithm::HS256).is_none());
        assert!(set.find(None, Algorithm::RS256).is_some(), "the only RSA key");
        assert!(set.find(None, Algorithm::ES256).is_none());
        assert!(KeySet::parse(b"{}").is_err());
    }
}
