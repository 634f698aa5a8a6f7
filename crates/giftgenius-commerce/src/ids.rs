//! Random ids: a prefix that says what the thing is (`ord`, `evt`, `adj`…) and 80 random bits,
//! for every row and message the server makes.

/// `prefix` and 20 hex digits of a v4 UUID.
pub fn random_id(prefix: &str) -> String {
    format!("{prefix}_{}", &uuid::Uuid::new_v4().simple().to_string()[..20])
}
