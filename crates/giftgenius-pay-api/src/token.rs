//! The provider's secrets. Every request but `GET /healthz` carries one as
//! `Authorization: Bearer SECRET`, so a web page the developer happens to visit cannot charge,
//! read the ledger or switch the fault plan (it cannot know the secret; see `guard.rs` for the
//! rest of what a request must show). There are two, each good for its own paths only:
//!
//! - [`AdminToken`]: the charges, refunds and settings API (the merchant's key).
//! - [`DelegateKey`]: `POST /agentic_commerce/delegate_payment` only (the agent platform's key,
//!   docs/acp.md §8), so whoever tokenizes cards cannot charge them, and the merchant cannot
//!   tokenize.
//!
//! One type for the provider, which checks them, and for its clients, which send them: both read
//! a secret file the same way, and neither can print it (its `Debug` hides the value). The kind is
//! a type parameter, so one secret can never be passed where the other is expected.

use std::io::Write;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use axum::http::{HeaderMap, HeaderValue, header};
use subtle::ConstantTimeEq;

/// The shortest secret taken from a file: 128 bits written in hex.
pub const MIN_LEN: usize = 32;

/// Whether `secret` may be a shared secret: at least [`MIN_LEN`] characters of visible ASCII (it
/// travels in an HTTP header). The one rule for every token and key a client shows or a
/// receiver checks; the error says why, never the secret.
pub fn check_strength(secret: &str) -> Result<(), String> {
    if secret.len() < MIN_LEN {
        return Err(format!("the secret must be at least {MIN_LEN} characters"));
    }
    if !secret.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the secret must be printable ASCII without spaces".into());
    }
    Ok(())
}

/// What a secret is for (its `Debug` name); see [`AdminToken`] and [`DelegateKey`].
pub trait SecretKind {
    const NAME: &'static str;
}

/// Marks the admin secret: charges, refunds, settings.
#[derive(Debug, Clone, Copy)]
pub enum Admin {}

impl SecretKind for Admin {
    const NAME: &'static str = "AdminToken";
}

/// Marks the delegate-payment key: `POST /agentic_commerce/delegate_payment` only.
#[derive(Debug, Clone, Copy)]
pub enum Delegate {}

impl SecretKind for Delegate {
    const NAME: &'static str = "DelegateKey";
}

/// A secret a client must show, of kind `K`.
pub struct Secret<K> {
    value: String,
    kind: PhantomData<K>,
}

/// The secret the provider's merchant-side clients must show (charges, refunds, settings).
pub type AdminToken = Secret<Admin>;
/// The key an ACP agent platform (or the app's preview relay) shows to tokenize a card.
pub type DelegateKey = Secret<Delegate>;

impl<K> Clone for Secret<K> {
    fn clone(&self) -> Self {
        Self::new(self.value.clone())
    }
}

impl<K: SecretKind> std::fmt::Debug for Secret<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}(<hidden>)", K::NAME)
    }
}

impl<K> Secret<K> {
    fn new(value: String) -> Self {
        Self { value, kind: PhantomData }
    }

    /// A fresh random secret: 64 hex digits (244 random bits from the operating system).
    pub fn generate() -> Self {
        Self::new(format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple()))
    }

    /// The secret on the first line of `text` (surrounding white space dropped), or why not.
    pub fn parse(text: &str) -> Result<Self, String> {
        let secret = text.lines().next().unwrap_or_default().trim();
        check_strength(secret)?;
        Ok(Self::new(secret.to_string()))
    }

    /// The secret in the file at `path` (its first line).
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text).map_err(|why| {
            anyhow::anyhow!(
                "{} holds no usable secret: {why} (write one with `openssl rand -hex 32 > {}`)",
                path.display(),
                path.display()
            )
        })
    }

    /// The secret in the file at `path`, which is created first (readable by its owner only,
    /// holding a fresh secret) when it does not exist. Returns whether it was created. Several
    /// processes starting at once on one file all end up with the same secret: the file appears
    /// whole (a hard link to a finished file) or not at all.
    pub fn read_or_create(path: &Path) -> anyhow::Result<(Self, bool)> {
        if path.exists() {
            return Ok((Self::read(path)?, false));
        }
        let fresh = Self::generate();
        let draft = draft_path(path);
        write_owner_only(&draft, &fresh.value).with_context(|| format!("cannot write {}", draft.display()))?;
        let linked = std::fs::hard_link(&draft, path);
        let _ = std::fs::remove_file(&draft);
        match linked {
            Ok(()) => Ok((fresh, true)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok((Self::read(path)?, false)),
            Err(e) => bail!("cannot create {}: {e}", path.display()),
        }
    }

    /// The secret itself: only for a request header or a pipe to the process that checks it.
    pub fn expose(&self) -> &str {
        &self.value
    }

    /// `Bearer SECRET`, marked sensitive (HTTP/2 never indexes it; debug output hides it).
    pub fn bearer(&self) -> HeaderValue {
        let mut value = HeaderValue::from_str(&format!("Bearer {}", self.value)).expect("visible ASCII (checked)");
        value.set_sensitive(true);
        value
    }

    /// `Authorization: Bearer SECRET` as a header map: a client's default headers.
    pub fn authorization(&self) -> HeaderMap {
        HeaderMap::from_iter([(header::AUTHORIZATION, self.bearer())])
    }

    /// Whether an `Authorization` header shows this secret, compared in constant time.
    pub fn admits(&self, authorization: Option<&HeaderValue>) -> bool {
        let Some(shown) = authorization.and_then(|v| v.as_bytes().strip_prefix(b"Bearer ")) else {
            return false;
        };
        bool::from(shown.ct_eq(self.value.as_bytes()))
    }
}

/// A file beside `path` that no other process picks (named by a fresh id).
fn draft_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}", uuid::Uuid::new_v4().simple()))
}

/// Creates `path` (it must not exist) holding `secret`, readable and writable by its owner only.
fn write_owner_only(path: &Path, secret: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(format!("{secret}\n").as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_secret_after_bearer_is_admitted() {
        let token = AdminToken::parse("0123456789abcdef0123456789abcdef\n").unwrap();
        assert!(token.admits(Some(&token.bearer())));
        for shown in [
            "Bearer 0123456789abcdef0123456789abcdeX",
            "Bearer 0123456789abcdef",
            "0123456789abcdef0123456789abcdef",
            "Basic 0123456789abcdef0123456789abcdef",
            "Bearer ",
        ] {
            assert!(!token.admits(Some(&HeaderValue::from_static(shown))), "{shown}");
        }
        assert!(!token.admits(None));
    }

    #[test]
    fn a_short_or_spaced_secret_is_refused_and_the_value_never_printed() {
        assert!(AdminToken::parse("short").is_err());
        assert!(AdminToken::parse("0123456789abcdef 0123456789abcdef").is_err());
        assert!(AdminToken::parse("").is_err());
        let token = AdminToken::generate();
        assert_eq!(token.expose().len(), 64);
        assert!(!format!("{token:?}").contains(token.expose()));
        let key = DelegateKey::generate();
        assert_eq!(format!("{key:?}"), "DelegateKey(<hidden>)");
        assert_ne!(key.expose(), token.expose());
    }

    #[test]
    fn a_missing_file_is_created_for_its_owner_only_and_then_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pay.token");
        let (created, was_created) = AdminToken::read_or_create(&path).unwrap();
        assert!(was_created);
        let (again, was_created) = AdminToken::read_or_create(&path).unwrap();
        assert!(!was_created);
        assert_eq!(created.expose(), again.expose());
        assert_eq!(AdminToken::read(&path).unwrap().expose(), created.expose());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no draft file left behind");
    }
}
