//! A real OAuth 2.1 / OpenID Connect authorization server for tests: `preview/oidc/server.mjs`
//! (oidc-provider, pinned in its lockfile) on a free loopback port, with signing keys generated
//! per test run by `preview/oidc/keys.mjs` (node's crypto; no key generation in our code).
//!
//! - [`generate_keys`]: RSA / EC key pairs (private PEM, public PEM, JWK) in a directory.
//! - [`write_jwks`]: the private JWKS the provider signs with.
//! - [`Oidc::start`] / [`Oidc::restart`]: the provider process (killed on drop).
//! - [`sign_in`]: the whole flow a host runs: protected resource metadata → authorization server
//!   metadata → authorization code + PKCE (S256) → login form → consent → token for the resource.
//! - [`TestKey::forge`]: tokens signed with a test key, for the negative cases.
//!
//! Needs `node` (or `GIFTGENIUS_NODE`) and `npm ci --prefix preview/oidc`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The public client the provider knows.
pub const CLIENT_ID: &str = "giftgenius-host";
/// Its redirect URI (never listened on: the flow stops at the redirect and reads the code).
pub const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

pub fn oidc_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../preview/oidc")
}

fn node() -> String {
    std::env::var("GIFTGENIUS_NODE").unwrap_or_else(|_| "node".to_string())
}

fn check_installed() {
    let dir = oidc_dir();
    assert!(
        dir.join("node_modules/oidc-provider/package.json").exists(),
        "oidc-provider is not installed: run `npm ci --prefix preview/oidc` (cargo xtask test does it) in {}",
        dir.canonicalize().unwrap_or(dir.clone()).display()
    );
}

/// A key pair made by keys.mjs.
#[derive(Clone, Debug)]
pub struct TestKey {
    pub kid: String,
    pub alg: Algorithm,
    /// The private JWK (what the provider loads).
    pub jwk: Value,
    pub private_pem: Vec<u8>,
    pub public_pem: Vec<u8>,
}

impl TestKey {
    /// A JWT over `claims` signed with this key, with header `alg` and `kid` as given (they need
    /// not match this key: that is the point of some negative tests).
    pub fn forge(&self, claims: &Value, alg: Algorithm, kid: Option<&str>) -> String {
        let key = match self.alg {
            Algorithm::ES256 => EncodingKey::from_ec_pem(&self.private_pem),
            _ => EncodingKey::from_rsa_pem(&self.private_pem),
        }
        .expect("test key PEM");
        let mut header = Header::new(alg);
        header.kid = kid.map(str::to_string);
        header.typ = Some("at+jwt".into());
        jsonwebtoken::encode(&header, claims, &key).expect("sign a test token")
    }

    /// A JWT over `claims` signed with the key of the same kid.
    pub fn sign(&self, claims: &Value) -> String {
        self.forge(claims, self.alg, Some(&self.kid))
    }
}

/// `alg: none`, no signature.
pub fn unsigned(claims: &Value, kid: Option<&str>) -> String {
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let mut header = json!({"alg": "none", "typ": "at+jwt"});
    if let Some(kid) = kid {
        header["kid"] = json!(kid);
    }
    format!("{}.{}.", b64(&header), b64(claims))
}

/// HS256 with `secret` as the HMAC key (the classic confusion: the RSA public key's bytes).
pub fn hs256(claims: &Value, secret: &[u8], kid: Option<&str>) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = kid.map(str::to_string);
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret).expect("hmac key")).expect("sign")
}

/// Generates keys into `dir`: `specs` like `[("rsa-1", "rsa"), ("ec-1", "ec")]`.
pub fn generate_keys(dir: &Path, specs: &[(&str, &str)]) -> Vec<TestKey> {
    check_installed();
    let args: Vec<String> = specs.iter().map(|(kid, kind)| format!("{kid}:{kind}")).collect();
    let status = Command::new(node())
        .arg(oidc_dir().join("keys.mjs"))
        .arg(dir)
        .args(&args)
        .status()
        .expect("cannot run node (set GIFTGENIUS_NODE to its path)");
    assert!(status.success(), "keys.mjs failed");
    specs
        .iter()
        .map(|(kid, kind)| {
            let read = |suffix: &str| std::fs::read(dir.join(format!("{kid}{suffix}"))).expect("key file");
            TestKey {
                kid: kid.to_string(),
                alg: if *kind == "ec" { Algorithm::ES256 } else { Algorithm::RS256 },
                jwk: serde_json::from_slice(&read(".json")).expect("jwk"),
                private_pem: read(".pem"),
                public_pem: read(".pub.pem"),
            }
        })
        .collect()
}

/// Writes the private JWKS of `keys` (in order: the provider signs with the first RSA key).
pub fn write_jwks(path: &Path, keys: &[&TestKey]) {
    let jwks = json!({"keys": keys.iter().map(|k| k.jwk.clone()).collect::<Vec<_>>()});
    std::fs::write(path, jwks.to_string()).expect("write jwks");
}

/// The public JWKS of `keys` (what a JWKS endpoint serves).
pub fn public_jwks(keys: &[&TestKey]) -> Value {
    let public = |k: &TestKey| {
        let mut jwk = k.jwk.clone();
        let object = jwk.as_object_mut().expect("jwk object");
        for private in ["d", "p", "q", "dp", "dq", "qi"] {
            object.remove(private);
        }
        jwk
    };
    json!({"keys": keys.iter().map(|k| public(k)).collect::<Vec<_>>()})
}

/// A running oidc-provider.
pub struct Oidc {
    child: Child,
    /// `http://127.0.0.1:PORT`, exactly as the provider's `iss`.
    pub issuer: String,
    pub port: u16,
    log: PathBuf,
}

impl Oidc {
    /// Starts the provider on `port` (0: a free one) with the private JWKS at `jwks`, and waits
    /// for its `listening …` line. The provider's stderr goes to a log file next to `jwks`.
    pub fn start(jwks: &Path, port: u16) -> Oidc {
        Oidc::try_start(jwks, port).unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_start(jwks: &Path, port: u16) -> Result<Oidc, String> {
        check_installed();
        let log = jwks.with_file_name(format!("oidc-{}.log", std::process::id()));
        let stderr = std::fs::OpenOptions::new().create(true).append(true).open(&log).expect("oidc log file");
        let mut child = Command::new(node())
            .arg(oidc_dir().join("server.mjs"))
            .args(["--jwks", &jwks.to_string_lossy(), "--port", &port.to_string()])
            .args(["--client-id", CLIENT_ID, "--redirect-uri", REDIRECT_URI])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot run node (set GIFTGENIUS_NODE to its path): {e}"))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next().and_then(Result::ok));
            for _ in lines {} // keep the pipe drained
        });
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Some(line)) => line,
            other => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "oidc-provider did not start ({other:?}); its log:\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                ));
            }
        };
        let issuer =
            line.strip_prefix("listening ").ok_or_else(|| format!("unexpected first line: {line}"))?.to_string();
        let port = url::Url::parse(&issuer).ok().and_then(|u| u.port()).ok_or("no port in the issuer")?;
        Ok(Oidc { child, issuer, port, log })
    }

    /// Stops the provider and starts it again on the same port (same issuer) with another JWKS.
    pub fn restart(&mut self, jwks: &Path) {
        self.stop();
        let mut last = String::new();
        for _ in 0..50 {
            // The port may linger for a moment after the old process exits.
            match Oidc::try_start(jwks, self.port) {
                Ok(new) => {
                    assert_eq!(new.issuer, self.issuer);
                    *self = new;
                    return;
                }
                Err(e) => last = e,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("oidc-provider did not restart on port {}: {last}", self.port);
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Oidc {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What the token endpoint answered.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub access_token: String,
    pub scope: String,
    pub issuer: String,
    pub resource: String,
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// The value of the first `attr="…"` in `html`, HTML entities for `&` and `/` undone.
fn attribute(html: &str, attr: &str) -> Option<String> {
    let start = html.find(&format!("{attr}=\""))? + attr.len() + 2;
    let end = start + html[start..].find('"')?;
    Some(html[start..end].replace("&amp;", "&").replace("&#x2F;", "/").replace("&#47;", "/"))
}

/// Runs the flow a host runs, as `user`, asking for `scope`:
/// 1. GET the protected resource metadata at `resource_metadata_url`; its `resource` and first
///    `authorization_servers` entry drive the rest;
/// 2. GET the authorization server metadata (RFC 8414, else OpenID Connect discovery) and check
///    its issuer and S256 support;
/// 3. authorization request with PKCE S256, `resource` (RFC 8707) and `state`;
/// 4. the login form (any username), then the consent form;
/// 5. the redirect carries `code`, our `state` and `iss` (RFC 9207);
/// 6. the token request with the code verifier and `resource`.
pub async fn sign_in(resource_metadata_url: &str, user: &str, scope: &str) -> SignedIn {
    let http = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .expect("client");

    let prm: Value = http.get(resource_metadata_url).send().await.expect("PRM").json().await.expect("PRM JSON");
    let resource = prm["resource"].as_str().expect("PRM resource").to_string();
    let issuer = prm["authorization_servers"][0].as_str().expect("PRM authorization_servers").to_string();

    let mut metadata = None;
    for well_known in ["oauth-authorization-server", "openid-configuration"] {
        let response = http.get(format!("{issuer}/.well-known/{well_known}")).send().await.expect("AS metadata");
        if response.status().is_success() {
            metadata = Some(response.json::<Value>().await.expect("AS metadata JSON"));
            break;
        }
    }
    let metadata = metadata.expect("no authorization server metadata");
    assert_eq!(metadata["issuer"], issuer, "RFC 8414 §3.3: the metadata names the issuer we asked");
    assert!(
        metadata["code_challenge_methods_supported"].as_array().is_some_and(|m| m.contains(&json!("S256"))),
        "the authorization server must support PKCE S256"
    );
    let authorization_endpoint = metadata["authorization_endpoint"].as_str().expect("authorization_endpoint");
    let token_endpoint = metadata["token_endpoint"].as_str().expect("token_endpoint");

    let verifier = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    let challenge = b64url(&Sha256::digest(verifier.as_bytes()));
    let state = uuid::Uuid::new_v4().simple().to_string();
    let mut next = url::Url::parse_with_params(
        authorization_endpoint,
        [
            ("response_type", "code"),
            ("client_id", CLIENT_ID),
            ("redirect_uri", REDIRECT_URI),
            ("scope", scope),
            ("state", &state),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("resource", &resource),
        ],
    )
    .expect("authorization URL");

    let mut post: Option<Vec<(&str, &str)>> = None;
    let redirect = 'flow: {
        for _ in 0..12 {
            let response = match post.take() {
                Some(form) => http.post(next.clone()).form(&form).send().await,
                None => http.get(next.clone()).send().await,
            }
            .expect("authorization step");
            let status = response.status();
            if status.is_redirection() {
                let location = response.headers()[reqwest::header::LOCATION].to_str().expect("Location").to_string();
                let location = next.join(&location).expect("Location URL");
                if location.as_str().starts_with(REDIRECT_URI) {
                    break 'flow location;
                }
                next = location;
                continue;
            }
            let html = response.text().await.expect("interaction page");
            assert!(status.is_success(), "authorization step {next} answered {status}: {html}");
            let action = attribute(&html, "action").unwrap_or_else(|| panic!("no form on {next}: {html}"));
            next = next.join(&action).expect("form action");
            post = Some(if html.contains(r#"value="login""#) {
                vec![("prompt", "login"), ("login", user), ("password", "any")]
            } else if html.contains(r#"value="consent""#) {
                vec![("prompt", "consent")]
            } else {
                panic!("unknown interaction on {next}: {html}")
            });
        }
        panic!("the authorization flow did not reach the redirect URI");
    };

    let query: std::collections::HashMap<String, String> = redirect.query_pairs().into_owned().collect();
    assert!(!query.contains_key("error"), "authorization error: {query:?}");
    assert_eq!(query.get("state"), Some(&state), "state must round-trip");
    assert_eq!(query.get("iss"), Some(&issuer), "RFC 9207 iss");
    let code = query.get("code").expect("authorization code");

    let response = http
        .post(token_endpoint)
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT_URI),
            ("client_id", CLIENT_ID),
            ("code_verifier", &verifier),
            ("resource", &resource),
        ])
        .send()
        .await
        .expect("token request");
    let status = response.status();
    let token: Value = response.json().await.expect("token JSON");
    assert!(status.is_success(), "token endpoint answered {status}: {token}");
    assert_eq!(token["token_type"], "Bearer");
    SignedIn {
        access_token: token["access_token"].as_str().expect("access_token").to_string(),
        scope: token["scope"].as_str().unwrap_or_default().to_string(),
        issuer,
        resource,
    }
}
