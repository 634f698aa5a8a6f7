//! Deleting an ACP buyer's personal data (docs/acp.md §13.6): the store deletes the platform
//! sessions this module recognizes as the buyer's (ACP's `buyer.email` or
//! `fulfillment_details.email` in the session's state, which only ACP reads), the platforms'
//! stored answers that show them, and their orders' delivery details.

use giftgenius_commerce::store::{Deleted, Store, StoreResult};

/// Where every ACP platform's subjects start (`acp:<platform>`): its keys and its orders.
const PLATFORM_SUBJECTS: &str = "acp:";

/// An ACP buyer's data, deleted by e-mail (`giftgenius-server delete-my-data --acp-buyer-email`).
pub trait AcpBuyerData {
    /// Deletes the data of the ACP buyer with `email` (any case, surrounding space ignored; an
    /// empty one deletes nothing). See `Store::delete_platform_buyer_data`.
    fn delete_acp_buyer_data(&self, email: &str, now_ms: i64) -> impl Future<Output = StoreResult<Deleted>> + Send;
}

impl AcpBuyerData for Store {
    async fn delete_acp_buyer_data(&self, email: &str, now_ms: i64) -> StoreResult<Deleted> {
        let email = email.trim().to_lowercase();
        if email.is_empty() {
            return Ok(Deleted::default());
        }
        self.delete_platform_buyer_data(|state| buyer_is(state, &email), PLATFORM_SUBJECTS, now_ms).await
    }
}

/// Whether an ACP session's stored state names `email` (lower case) as its buyer's or its
/// fulfilment contact's address.
fn buyer_is(state: &str, email: &str) -> bool {
    let Ok(state) = serde_json::from_str::<serde_json::Value>(state) else { return false };
    [&state["buyer"]["email"], &state["fulfillment_details"]["email"]]
        .into_iter()
        .filter_map(serde_json::Value::as_str)
        .any(|found| found.trim().to_lowercase() == email)
}

#[cfg(test)]
mod tests {
    use super::buyer_is;

    #[test]
    fn the_buyer_or_the_fulfilment_contact_names_the_session_by_email_in_any_case() {
        let state = r#"{"buyer": {"email": " Ana@Example.com"}, "fulfillment_details": {"email": "gift@example.com"}}"#;
        assert!(buyer_is(state, "ana@example.com"));
        assert!(buyer_is(state, "gift@example.com"));
        assert!(!buyer_is(state, "bo@example.com"));
        assert!(!buyer_is("not json", "ana@example.com"));
        assert!(!buyer_is(r#"{"buyer": {"email": 7}}"#, "7"));
    }
}
