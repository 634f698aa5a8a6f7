//! The confirmation token: proof that a person saw a draft's confirmation card (and, with
//! another purpose in the MAC, that a person pressed Cancel order or Delete my data).
//!
//! `prepare_order` puts an HMAC of (draft, subject, expiry, nonce) into the result's widget-only
//! `_meta`; only the widget's Confirm button sends it back to `commit_order`. The model never
//! sees it, so it cannot buy anything on its own, and another user's token fails for this subject.
//!
//! Tokens are `ct_<key id>.<expires at, ms since the epoch>.<nonce>.<hex HMAC>`. Every token
//! expires (`--confirmation-token-ttl-secs`, `--cancel-token-ttl-secs`,
//! `--delete-token-ttl-secs`): one copied out of a transcript or a log is worth nothing an hour
//! later. The expiry is inside the MAC, and it is checked against the server's [`Clock`], so
//! tests expire tokens without sleeping. The random nonce makes every token handed out a new
//! one: a Delete my data token is spent when used (`privacy.rs`), and the next list_orders gives
//! a fresh one. The widget's idempotency keys come from the draft or order id, never from a
//! token, so a fresh token after a reload still replays the first call.
//!
//! The keys come from `--token-secret-file` (one `KEY_ID SECRET` per line: the first signs, every
//! one verifies, so a rotation puts the new key first and keeps the old one until its tokens have
//! expired), or, in local mode only, from a key generated into the database (key id `db`).
//!
//! [`Clock`]: giftgenius_commerce::clock::Clock

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use giftgenius_types::{ErrorCode, ToolError};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::context::CallContext;
use giftgenius_commerce::clock::rfc3339;

const PREFIX: &str = "ct_";
/// The key id of the key generated into the database (local mode).
pub const DATABASE_KEY_ID: &str = "db";
/// A secret shorter than this is refused: HMAC-SHA-256 wants at least 256 bits.
const MIN_SECRET_BYTES: usize = 32;
/// Hex digits of the nonce (128 random bits) and of the MAC (HMAC-SHA-256).
const NONCE_HEX: usize = 32;
const MAC_HEX: usize = 64;
/// The longest expiry a token may spell (ms since the epoch: 13 digits until the year 2286).
const MAX_EXPIRY_DIGITS: usize = 15;

/// What a token proves a person did; part of the MAC.
#[derive(Debug, Clone, Copy)]
enum Purpose {
    Confirm,
    Cancel,
    DeleteData,
}

impl Purpose {
    const fn as_str(self) -> &'static str {
        match self {
            Purpose::Confirm => "confirm",
            Purpose::Cancel => "cancel",
            Purpose::DeleteData => "delete-my-data",
        }
    }
}

/// How long each kind of token stays valid after it was handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenLifetimes {
    pub confirm: Duration,
    pub cancel: Duration,
    pub delete: Duration,
}

impl TokenLifetimes {
    /// The default of each: one hour.
    pub const DEFAULT: TokenLifetimes = TokenLifetimes {
        confirm: Duration::from_secs(3600),
        cancel: Duration::from_secs(3600),
        delete: Duration::from_secs(3600),
    };

    fn of(&self, purpose: Purpose) -> Duration {
        match purpose {
            Purpose::Confirm => self.confirm,
            Purpose::Cancel => self.cancel,
            Purpose::DeleteData => self.delete,
        }
    }
}

/// What checking a token found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Signed by one of our keys for this purpose, id and subject, and still valid.
    Valid(Accepted),
    /// Genuine, but its lifetime ended at `at_ms`.
    Expired { at_ms: i64 },
    /// Not a token of ours for this purpose, id and subject (or no token at all).
    Invalid,
}

impl Verdict {
    /// The accepted token, or the answer to a call whose token did not pass: CONFIRMATION_EXPIRED
    /// saying when, and `again` (how the person gets a fresh one), or else CONFIRMATION_REQUIRED
    /// with `missing`.
    pub fn accepted(self, call: &CallContext, missing: &str, again: &str) -> Result<Accepted, ToolError> {
        match self {
            Verdict::Valid(accepted) => Ok(accepted),
            Verdict::Expired { at_ms } => Err(ToolError::new(
                ErrorCode::ConfirmationExpired,
                format!("The user's confirmation expired at {}; nothing was done. {again}", rfc3339(at_ms)),
                &call.reference,
            )),
            Verdict::Invalid => Err(ToolError::new(ErrorCode::ConfirmationRequired, missing, &call.reference)),
        }
    }
}

/// A token that passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub expires_at_ms: i64,
    /// hex(SHA-256(MAC)): names this one token however it is spelled, and tells nothing about
    /// the account (the spent mark of a Delete my data token is stored under it).
    pub spent_key: String,
}

struct Key {
    id: String,
    secret: Vec<u8>,
}

/// The keys tokens are signed and verified with, and how long tokens live.
pub struct ConfirmationKeys {
    /// `keys[0]` signs; all verify.
    keys: Vec<Key>,
    lifetimes: TokenLifetimes,
}

impl std::fmt::Debug for ConfirmationKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|k| k.id.as_str()).collect();
        f.debug_struct("ConfirmationKeys")
            .field("ids", &ids)
            .field("lifetimes", &self.lifetimes)
            .finish_non_exhaustive()
    }
}

fn valid_key_id(id: &str) -> bool {
    (1..=32).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn lower_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The parts of a well-formed token, spelled one way only (no leading zeros, lower-case hex).
struct Parts<'a> {
    key_id: &'a str,
    expires: &'a str,
    expires_at_ms: i64,
    nonce: &'a str,
    mac: Vec<u8>,
}

fn parse(token: &str) -> Option<Parts<'_>> {
    let mut fields = token.strip_prefix(PREFIX)?.split('.');
    let (key_id, expires, nonce, mac) = (fields.next()?, fields.next()?, fields.next()?, fields.next()?);
    let canonical_number = !expires.is_empty()
        && expires.len() <= MAX_EXPIRY_DIGITS
        && expires.bytes().all(|b| b.is_ascii_digit())
        && (expires == "0" || !expires.starts_with('0'));
    if fields.next().is_some() || !canonical_number || !lower_hex(nonce, NONCE_HEX) || !lower_hex(mac, MAC_HEX) {
        return None;
    }
    Some(Parts { key_id, expires, expires_at_ms: expires.parse().ok()?, nonce, mac: hex::decode(mac).ok()? })
}

impl ConfirmationKeys {
    fn new(keys: Vec<Key>) -> Self {
        Self { keys, lifetimes: TokenLifetimes::DEFAULT }
    }

    /// One key generated into the database (local mode).
    pub fn generated(secret: Vec<u8>) -> Self {
        Self::new(vec![Key { id: DATABASE_KEY_ID.into(), secret }])
    }

    /// The same keys, handing out tokens that live for `lifetimes`.
    pub fn with_lifetimes(self, lifetimes: TokenLifetimes) -> Self {
        Self { lifetimes, ..self }
    }

    /// Parses a secret file: `KEY_ID SECRET` per line, `#` comments and blank lines ignored.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let mut keys: Vec<Key> = Vec::new();
        for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((id, secret)) = line.split_once(char::is_whitespace) else {
                bail!("line {n}: expected `KEY_ID SECRET`");
            };
            let secret = secret.trim();
            ensure!(valid_key_id(id), "line {n}: a key id is 1-32 letters, digits, '-' or '_'");
            ensure!(secret.len() >= MIN_SECRET_BYTES, "line {n}: the secret must be at least {MIN_SECRET_BYTES} bytes");
            ensure!(keys.iter().all(|k| k.id != id), "line {n}: key id {id} appears twice");
            keys.push(Key { id: id.to_string(), secret: secret.as_bytes().to_vec() });
        }
        ensure!(!keys.is_empty(), "no key in the file");
        Ok(Self::new(keys))
    }

    /// Reads `--token-secret-file`. Errors name the file and the line, never a secret.
    pub fn from_file(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("{} is not a valid token secret file", path.display()))
    }

    /// The id of the key that signs new tokens.
    pub fn signing_key_id(&self) -> &str {
        &self.keys[0].id
    }

    /// The MAC of one purpose (`confirm`, `cancel`, `delete-my-data`) for `id`, `subject`, the
    /// expiry and the nonce: a token for one purpose never passes for another, and neither the
    /// expiry nor the nonce can be changed.
    fn mac(secret: &[u8], purpose: Purpose, id: &str, subject: &str, expires: &str, nonce: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
        mac.update(format!("{}\n{id}\n{subject}\n{expires}\n{nonce}", purpose.as_str()).as_bytes());
        mac
    }

    fn sign(&self, purpose: Purpose, id: &str, subject: &str, now_ms: i64) -> String {
        let key = &self.keys[0];
        let lifetime = i64::try_from(self.lifetimes.of(purpose).as_millis()).unwrap_or(i64::MAX);
        let expires = now_ms.saturating_add(lifetime).max(0).to_string();
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let mac = Self::mac(&key.secret, purpose, id, subject, &expires, &nonce).finalize().into_bytes();
        format!("{PREFIX}{}.{expires}.{nonce}.{}", key.id, hex::encode(mac))
    }

    /// Checks the MAC (constant-time), then the expiry against `now_ms`.
    fn check(&self, purpose: Purpose, token: &str, id: &str, subject: &str, now_ms: i64) -> Verdict {
        let Some(parts) = parse(token) else {
            return Verdict::Invalid;
        };
        let Some(key) = self.keys.iter().find(|k| k.id == parts.key_id) else {
            return Verdict::Invalid;
        };
        if Self::mac(&key.secret, purpose, id, subject, parts.expires, parts.nonce).verify_slice(&parts.mac).is_err() {
            return Verdict::Invalid;
        }
        if now_ms >= parts.expires_at_ms {
            return Verdict::Expired { at_ms: parts.expires_at_ms };
        }
        Verdict::Valid(Accepted {
            expires_at_ms: parts.expires_at_ms,
            spent_key: hex::encode(Sha256::digest(&parts.mac)),
        })
    }

    /// A token (if any was sent) checked for one purpose: `Invalid` when there is none.
    fn check_sent(&self, purpose: Purpose, token: Option<&str>, id: &str, subject: &str, now_ms: i64) -> Verdict {
        token.map_or(Verdict::Invalid, |token| self.check(purpose, token, id, subject, now_ms))
    }

    /// The token for `subject`'s draft `draft_id`, signed with the first key at `now_ms`.
    pub fn token(&self, draft_id: &str, subject: &str, now_ms: i64) -> String {
        self.sign(Purpose::Confirm, draft_id, subject, now_ms)
    }

    /// Whether `token` was signed by one of the keys for `subject`'s draft `draft_id`, and is
    /// still valid at `now_ms`.
    pub fn verify(&self, token: Option<&str>, draft_id: &str, subject: &str, now_ms: i64) -> Verdict {
        self.check_sent(Purpose::Confirm, token, draft_id, subject, now_ms)
    }

    /// The token the widget's Cancel order button sends for `subject`'s order `order_id`.
    pub fn cancel_token(&self, order_id: &str, subject: &str, now_ms: i64) -> String {
        self.sign(Purpose::Cancel, order_id, subject, now_ms)
    }

    pub fn verify_cancel(&self, token: Option<&str>, order_id: &str, subject: &str, now_ms: i64) -> Verdict {
        self.check_sent(Purpose::Cancel, token, order_id, subject, now_ms)
    }

    /// The token the widget's Delete my data button sends for `subject`: a new one every time.
    pub fn delete_token(&self, subject: &str, now_ms: i64) -> String {
        self.sign(Purpose::DeleteData, "", subject, now_ms)
    }

    pub fn verify_delete(&self, token: Option<&str>, subject: &str, now_ms: i64) -> Verdict {
        self.check_sent(Purpose::DeleteData, token, "", subject, now_ms)
    }
}

impl crate::config::Config {
    /// The lifetimes of the widget's confirmation, cancel and Delete my data tokens, from the
    /// flags (here, beside the tokens, so the flags need not know them).
    pub fn token_lifetimes(&self) -> TokenLifetimes {
        TokenLifetimes {
            confirm: Duration::from_secs(self.confirmation_token_ttl_secs),
            cancel: Duration::from_secs(self.cancel_token_ttl_secs),
            delete: Duration::from_secs(self.delete_token_ttl_secs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "a-secret-of-thirty-two-bytes-or-more-0001";
    const B: &str = "b-secret-of-thirty-two-bytes-or-more-0002";
    const NOW: i64 = 1_780_000_000_000;

    fn valid(verdict: Verdict) -> bool {
        matches!(verdict, Verdict::Valid(_))
    }

    #[test]
    fn a_token_is_bound_to_its_draft_subject_and_keys() {
        let keys = ConfirmationKeys::parse(&format!("k1 {A}\n")).unwrap();
        let token = keys.token("drf_1", "alice", NOW);
        assert!(token.starts_with("ct_k1."));
        assert!(valid(keys.verify(Some(&token), "drf_1", "alice", NOW)));
        assert_eq!(keys.verify(Some(&token), "drf_2", "alice", NOW), Verdict::Invalid);
        assert_eq!(keys.verify(Some(&token), "drf_1", "bob", NOW), Verdict::Invalid);
        let other = ConfirmationKeys::parse(&format!("k1 {B}")).unwrap();
        assert_eq!(other.verify(Some(&token), "drf_1", "alice", NOW), Verdict::Invalid);
        assert_eq!(keys.verify(Some("ct_k1.zz"), "drf_1", "alice", NOW), Verdict::Invalid);
        assert_eq!(keys.verify(Some(token.trim_start_matches(PREFIX)), "drf_1", "alice", NOW), Verdict::Invalid);
        assert_eq!(keys.verify(None, "drf_1", "alice", NOW), Verdict::Invalid);
    }

    #[test]
    fn a_token_expires_after_its_lifetime_and_its_expiry_cannot_be_changed() {
        let lifetimes = TokenLifetimes {
            confirm: Duration::from_secs(1800),
            cancel: Duration::from_secs(3600),
            delete: Duration::from_secs(7200),
        };
        let keys = ConfirmationKeys::parse(&format!("k1 {A}")).unwrap().with_lifetimes(lifetimes);
        for (token, check, lifetime) in [
            (keys.token("drf_1", "alice", NOW), Purpose::Confirm, 1_800_000),
            (keys.cancel_token("drf_1", "alice", NOW), Purpose::Cancel, 3_600_000),
            (keys.delete_token("alice", NOW), Purpose::DeleteData, 7_200_000),
        ] {
            let id = if matches!(check, Purpose::DeleteData) { "" } else { "drf_1" };
            let at = NOW + lifetime;
            let Verdict::Valid(accepted) = keys.check(check, &token, id, "alice", at - 1) else {
                panic!("{token} is valid until {at}");
            };
            assert_eq!(accepted.expires_at_ms, at);
            assert_eq!(keys.check(check, &token, id, "alice", at), Verdict::Expired { at_ms: at });
            // A later expiry spliced in breaks the MAC; so does another spelling of the same one.
            let moved = token.replacen(&format!(".{at}."), &format!(".{}.", at + 3_600_000), 1);
            assert_eq!(keys.check(check, &moved, id, "alice", at), Verdict::Invalid);
            let padded = token.replacen(&format!(".{at}."), &format!(".0{at}."), 1);
            assert_eq!(keys.check(check, &padded, id, "alice", NOW), Verdict::Invalid);
            assert_eq!(keys.check(check, &token.to_uppercase(), id, "alice", NOW), Verdict::Invalid);
        }
    }

    #[test]
    fn every_token_handed_out_is_a_new_one_with_its_own_spent_key() {
        let keys = ConfirmationKeys::parse(&format!("k1 {A}")).unwrap();
        let (first, second) = (keys.delete_token("alice", NOW), keys.delete_token("alice", NOW));
        assert_ne!(first, second);
        let spent = |t: &str| match keys.verify_delete(Some(t), "alice", NOW) {
            Verdict::Valid(accepted) => accepted.spent_key,
            other => panic!("{other:?}"),
        };
        assert_ne!(spent(&first), spent(&second));
        assert_eq!(spent(&first), spent(&first));
        assert!(!spent(&first).contains("alice"));
    }

    #[test]
    fn a_token_proves_one_purpose_only() {
        let keys = ConfirmationKeys::parse(&format!("k1 {A}\n")).unwrap();
        let confirm = keys.token("ord_1", "alice", NOW);
        let cancel = keys.cancel_token("ord_1", "alice", NOW);
        assert!(valid(keys.verify_cancel(Some(&cancel), "ord_1", "alice", NOW)));
        assert_eq!(
            keys.verify_cancel(Some(&confirm), "ord_1", "alice", NOW),
            Verdict::Invalid,
            "a confirm token cancels nothing"
        );
        assert_eq!(
            keys.verify(Some(&cancel), "ord_1", "alice", NOW),
            Verdict::Invalid,
            "a cancel token confirms nothing"
        );
        assert_eq!(keys.verify_cancel(Some(&cancel), "ord_1", "bob", NOW), Verdict::Invalid);
        let delete = keys.delete_token("alice", NOW);
        assert!(valid(keys.verify_delete(Some(&delete), "alice", NOW)));
        assert_eq!(keys.verify_delete(Some(&delete), "bob", NOW), Verdict::Invalid);
        assert_eq!(keys.verify_delete(Some(&cancel), "alice", NOW), Verdict::Invalid);
    }

    #[test]
    fn during_a_rotation_the_new_key_signs_and_the_old_one_still_verifies() {
        let old = ConfirmationKeys::parse(&format!("k1 {A}")).unwrap();
        let issued_before = old.token("drf_1", "alice", NOW);
        let rotated = ConfirmationKeys::parse(&format!("# new key first\nk2 {B}\n\nk1 {A}\n")).unwrap();
        assert_eq!(rotated.signing_key_id(), "k2");
        assert!(valid(rotated.verify(Some(&issued_before), "drf_1", "alice", NOW)), "old tokens still confirm");
        assert!(rotated.token("drf_1", "alice", NOW).starts_with("ct_k2."));
        let retired = ConfirmationKeys::parse(&format!("k2 {B}")).unwrap();
        assert_eq!(
            retired.verify(Some(&issued_before), "drf_1", "alice", NOW),
            Verdict::Invalid,
            "a removed key confirms nothing"
        );
    }

    #[test]
    fn bad_files_are_refused_without_showing_a_secret() {
        for (text, expected) in [
            ("", "no key"),
            ("k1", "expected `KEY_ID SECRET`"),
            ("k1 short", "at least 32 bytes"),
            (&format!("bad/id {A}") as &str, "key id"),
            (&format!("k1 {A}\nk1 {B}"), "appears twice"),
        ] {
            let error = ConfirmationKeys::parse(text).expect_err(text).to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
            assert!(!error.contains(A) && !error.contains(B));
        }
    }
}
