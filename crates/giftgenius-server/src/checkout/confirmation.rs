//! The confirmation token: proof that a person saw a draft's confirmation card (and, with
//! another purpose in the MAC, that a person pressed Cancel order or Delete my data).
//!
//! `prepare_order` puts an HMAC of (draft, subject) into the result's widget-only `_meta`;
//! only the widget's Confirm button sends it back to `commit_order`. The model never sees it,
//! so it cannot buy anything on its own, and another user's token fails for this subject.
//!
//! Tokens are `ct_<key id>.<hex HMAC>`. The keys come from `--token-secret-file` (one
//! `KEY_ID SECRET` per line: the first signs, every one verifies, so a rotation puts the new key
//! first and keeps the old one until its drafts have expired), or, in local mode only, from a
//! key generated into the database (key id `db`).

use std::path::Path;

use anyhow::{Context, bail, ensure};
use hmac::{Hmac, Mac};
use sha2::Sha256;

const PREFIX: &str = "ct_";
/// The key id of the key generated into the database (local mode).
pub const DATABASE_KEY_ID: &str = "db";
/// A secret shorter than this is refused: HMAC-SHA-256 wants at least 256 bits.
const MIN_SECRET_BYTES: usize = 32;

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

struct Key {
    id: String,
    secret: Vec<u8>,
}

/// The keys tokens are signed and verified with.
pub struct ConfirmationKeys {
    /// `keys[0]` signs; all verify.
    keys: Vec<Key>,
}

impl std::fmt::Debug for ConfirmationKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|k| k.id.as_str()).collect();
        f.debug_struct("ConfirmationKeys").field("ids", &ids).finish_non_exhaustive()
    }
}

fn valid_key_id(id: &str) -> bool {
    (1..=32).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl ConfirmationKeys {
    /// One key generated into the database (local mode).
    pub fn generated(secret: Vec<u8>) -> Self {
        Self { keys: vec![Key { id: DATABASE_KEY_ID.into(), secret }] }
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
        Ok(Self { keys })
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

    /// The MAC of one purpose (`confirm`, `cancel`, `delete`) for `id` and `subject`: a token
    /// for one purpose never passes for another.
    fn mac(secret: &[u8], purpose: Purpose, id: &str, subject: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
        mac.update(format!("{}\n{id}\n{subject}", purpose.as_str()).as_bytes());
        mac
    }

    fn sign(&self, purpose: Purpose, id: &str, subject: &str) -> String {
        let key = &self.keys[0];
        let mac = Self::mac(&key.secret, purpose, id, subject).finalize().into_bytes();
        format!("{PREFIX}{}.{}", key.id, hex::encode(mac))
    }

    fn check(&self, purpose: Purpose, token: &str, id: &str, subject: &str) -> bool {
        let Some((key_id, mac)) = token.strip_prefix(PREFIX).and_then(|rest| rest.split_once('.')) else {
            return false;
        };
        let (Some(key), Ok(bytes)) = (self.keys.iter().find(|k| k.id == key_id), hex::decode(mac)) else {
            return false;
        };
        Self::mac(&key.secret, purpose, id, subject).verify_slice(&bytes).is_ok()
    }

    /// The token for `subject`'s draft `draft_id`, signed with the first key.
    pub fn token(&self, draft_id: &str, subject: &str) -> String {
        self.sign(Purpose::Confirm, draft_id, subject)
    }

    /// Whether `token` was signed by one of the keys for `subject`'s draft `draft_id`
    /// (constant-time comparison).
    pub fn verify(&self, token: &str, draft_id: &str, subject: &str) -> bool {
        self.check(Purpose::Confirm, token, draft_id, subject)
    }

    /// The token the widget's Cancel order button sends for `subject`'s order `order_id`.
    pub fn cancel_token(&self, order_id: &str, subject: &str) -> String {
        self.sign(Purpose::Cancel, order_id, subject)
    }

    pub fn verify_cancel(&self, token: &str, order_id: &str, subject: &str) -> bool {
        self.check(Purpose::Cancel, token, order_id, subject)
    }

    /// The token the widget's Delete my data button sends for `subject`.
    pub fn delete_token(&self, subject: &str) -> String {
        self.sign(Purpose::DeleteData, "", subject)
    }

    pub fn verify_delete(&self, token: &str, subject: &str) -> bool {
        self.check(Purpose::DeleteData, token, "", subject)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "a-secret-of-thirty-two-bytes-or-more-0001";
    const B: &str = "b-secret-of-thirty-two-bytes-or-more-0002";

    #[test]
    fn a_token_is_bound_to_its_draft_subject_and_keys() {
        let keys = ConfirmationKeys::parse(&format!("k1 {A}\n")).unwrap();
        let token = keys.token("drf_1", "alice");
        assert!(token.starts_with("ct_k1."));
        assert!(keys.verify(&token, "drf_1", "alice"));
        assert!(!keys.verify(&token, "drf_2", "alice"));
        assert!(!keys.verify(&token, "drf_1", "bob"));
        assert!(!ConfirmationKeys::parse(&format!("k1 {B}")).unwrap().verify(&token, "drf_1", "alice"));
        assert!(!keys.verify("ct_k1.zz", "drf_1", "alice"));
        assert!(!keys.verify(token.trim_start_matches(PREFIX), "drf_1", "alice"));
    }

    #[test]
    fn a_token_proves_one_purpose_only() {
        let keys = ConfirmationKeys::parse(&format!("k1 {A}\n")).unwrap();
        let confirm = keys.token("ord_1", "alice");
        let cancel = keys.cancel_token("ord_1", "alice");
        assert_ne!(confirm, cancel);
        assert!(keys.verify_cancel(&cancel, "ord_1", "alice"));
        assert!(!keys.verify_cancel(&confirm, "ord_1", "alice"), "a confirm token cancels nothing");
        assert!(!keys.verify(&cancel, "ord_1", "alice"), "a cancel token confirms nothing");
        assert!(!keys.verify_cancel(&cancel, "ord_1", "bob"));
        let delete = keys.delete_token("alice");
        assert!(keys.verify_delete(&delete, "alice"));
        assert!(!keys.verify_delete(&delete, "bob"));
        assert!(!keys.verify_delete(&cancel, "alice"));
    }

    #[test]
    fn during_a_rotation_the_new_key_signs_and_the_old_one_still_verifies() {
        let old = ConfirmationKeys::parse(&format!("k1 {A}")).unwrap();
        let issued_before = old.token("drf_1", "alice");
        let rotated = ConfirmationKeys::parse(&format!("# new key first\nk2 {B}\n\nk1 {A}\n")).unwrap();
        assert_eq!(rotated.signing_key_id(), "k2");
        assert!(rotated.verify(&issued_before, "drf_1", "alice"), "old tokens still confirm");
        assert!(rotated.token("drf_1", "alice").starts_with("ct_k2."));
        let retired = ConfirmationKeys::parse(&format!("k2 {B}")).unwrap();
        assert!(!retired.verify(&issued_before, "drf_1", "alice"), "a removed key confirms nothing");
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
