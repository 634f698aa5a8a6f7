//! The confirmation token: proof that a person saw a draft's confirmation card.
//!
//! `prepare_order` puts an HMAC of (draft, subject) into the result's widget-only `_meta`;
//! only the widget's Confirm button sends it back to `commit_order`. The model never sees it,
//! so it cannot buy anything on its own, and another user's token fails for this subject.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The key tokens are signed with; shared by replicas through the database.
pub struct ConfirmationKey {
    key: Vec<u8>,
}

impl std::fmt::Debug for ConfirmationKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConfirmationKey(…)")
    }
}

const PREFIX: &str = "ct_";

impl ConfirmationKey {
    pub fn new(key: Vec<u8>) -> Self {
        Self { key }
    }

    fn mac(&self, draft_id: &str, subject: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(format!("confirm\n{draft_id}\n{subject}").as_bytes());
        mac
    }

    /// The token for `subject`'s draft `draft_id`.
    pub fn token(&self, draft_id: &str, subject: &str) -> String {
        format!("{PREFIX}{}", hex::encode(self.mac(draft_id, subject).finalize().into_bytes()))
    }

    /// Whether `token` is this key's token for `subject`'s draft `draft_id` (constant-time).
    pub fn verify(&self, token: &str, draft_id: &str, subject: &str) -> bool {
        let Some(bytes) = token.strip_prefix(PREFIX).and_then(|h| hex::decode(h).ok()) else {
            return false;
        };
        self.mac(draft_id, subject).verify_slice(&bytes).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_bound_to_its_draft_and_subject() {
        let key = ConfirmationKey::new(b"secret".to_vec());
        let token = key.token("drf_1", "alice");
        assert!(key.verify(&token, "drf_1", "alice"));
        assert!(!key.verify(&token, "drf_2", "alice"));
        assert!(!key.verify(&token, "drf_1", "bob"));
        assert!(!ConfirmationKey::new(b"other".to_vec()).verify(&token, "drf_1", "alice"));
        assert!(!key.verify("ct_zz", "drf_1", "alice"));
        assert!(!key.verify(token.trim_start_matches(PREFIX), "drf_1", "alice"));
    }
}
