//! Vault tokens (ACP delegated payment, docs/acp.md §8): made by
//! `POST /agentic_commerce/delegate_payment` (`delegate/`), used by a charge that names one
//! (`api::PaymentToken`).
//!
//! A charge with a token is decided in one transaction ([`Ledger::decide_with_token`]): the
//! token is checked against its allowance ([`check`]: exists, not expired, unused, amount,
//! currency, session, merchant — the first failure is the refusal's code, one of
//! `api::TOKEN_REFUSALS`), then its test card decides, and an approval marks the token used by
//! that charge. A refusal or a decline is recorded as the charge's failure and leaves the token
//! as it was; so two charges can never both spend one token, and a declined card declines again.

use sqlx::SqliteConnection;

use crate::api::{ChargeRequest, ChargeStatus, PaymentToken};
use crate::card::CardOutcome;
use crate::ledger::{ChargeRow, Ledger, LedgerResult};

/// A token as `delegate_payment` stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVaultToken {
    pub id: String,
    pub created_at_ms: i64,
    pub max_amount: i64,
    pub currency: String,
    pub checkout_session_id: String,
    pub merchant_id: String,
    pub expires_at_ms: i64,
    pub outcome: CardOutcome,
    pub brand: String,
    pub last4: String,
    pub funding: String,
}

/// A stored token.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct VaultTokenRow {
    pub id: String,
    pub created_at_ms: i64,
    pub reason: String,
    pub max_amount: i64,
    pub currency: String,
    pub checkout_session_id: String,
    pub merchant_id: String,
    pub expires_at_ms: i64,
    pub outcome: String,
    pub brand: String,
    pub last4: String,
    pub funding: String,
    pub used_by_charge: Option<String>,
    pub used_at_ms: Option<i64>,
}

/// Stores `token` (inside the caller's transaction: the one that also records the answer for
/// its idempotency key).
pub async fn insert(conn: &mut SqliteConnection, token: &NewVaultToken) -> LedgerResult<()> {
    sqlx::query(
        "INSERT INTO acp_vault_tokens (id, created_at_ms, reason, max_amount, currency, checkout_session_id, \
         merchant_id, expires_at_ms, outcome, brand, last4, funding) \
         VALUES ($1, $2, 'one_time', $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&token.id)
    .bind(token.created_at_ms)
    .bind(token.max_amount)
    .bind(&token.currency)
    .bind(&token.checkout_session_id)
    .bind(&token.merchant_id)
    .bind(token.expires_at_ms)
    .bind(token.outcome.as_str())
    .bind(&token.brand)
    .bind(&token.last4)
    .bind(&token.funding)
    .execute(conn)
    .await?;
    Ok(())
}

/// What the charge `charge_id` for `request` may do with `token` (`row` is the stored token of
/// that id, if any) at `now_ms`: its card's outcome, or the code of the first allowance rule it
/// breaks. `request.currency` is already lower case, as the token's is.
pub fn check(
    row: Option<&VaultTokenRow>,
    charge_id: &str,
    request: &ChargeRequest,
    token: &PaymentToken,
    now_ms: i64,
) -> Result<CardOutcome, &'static str> {
    let Some(row) = row else { return Err("token_unknown") };
    if now_ms >= row.expires_at_ms {
        return Err("token_expired");
    }
    if row.used_by_charge.as_deref().is_some_and(|used_by| used_by != charge_id) {
        return Err("token_used");
    }
    if request.amount > row.max_amount {
        return Err("token_over_allowance");
    }
    if !request.currency.eq_ignore_ascii_case(&row.currency) {
        return Err("token_wrong_currency");
    }
    if token.checkout_session_id != row.checkout_session_id {
        return Err("token_wrong_session");
    }
    if token.merchant_id != row.merchant_id {
        return Err("token_wrong_merchant");
    }
    // Only `delegate_payment` writes the column, from `CardOutcome::as_str`.
    Ok(CardOutcome::parse(&row.outcome).unwrap_or(CardOutcome::Decline))
}

/// The message of a failed charge's answer, by its `failure_code`.
pub fn failure_message(code: &str) -> &'static str {
    match code {
        "insufficient_funds" => "Your card has insufficient funds.",
        "token_unknown" => "No such payment token.",
        "token_expired" => "The payment token has expired.",
        "token_used" => "The payment token has already been used.",
        "token_over_allowance" => "The amount exceeds what the payment token allows.",
        "token_wrong_currency" => "The payment token is for another currency.",
        "token_wrong_session" => "The payment token is for another checkout session.",
        "token_wrong_merchant" => "The payment token is for another merchant.",
        _ => "Your card was declined.",
    }
}

impl Ledger {
    /// Decides the charge under `key` that names `request.payment_token`, if `attempt` still
    /// owns it: checks the token and charges its card (marking it used) in one transaction.
    /// False if the attempt was taken over (nothing decided).
    pub async fn decide_with_token(
        &self,
        key: &str,
        attempt: &str,
        request: &ChargeRequest,
        token: &PaymentToken,
        now_ms: i64,
    ) -> LedgerResult<bool> {
        let mut tx = self.pool().begin_with("BEGIN IMMEDIATE").await?;
        let won = decide_with_token_on(&mut tx, key, attempt, request, token, now_ms).await?;
        tx.commit().await?;
        Ok(won)
    }

    /// The stored token `id`, if any.
    pub async fn vault_token(&self, id: &str) -> LedgerResult<Option<VaultTokenRow>> {
        sqlx::query_as("SELECT * FROM acp_vault_tokens WHERE id = $1").bind(id).fetch_optional(self.pool()).await
    }
}

/// [`Ledger::decide_with_token`]'s statements, inside the caller's transaction (the writer's
/// group commit, `group.rs`, or a transaction of its own).
pub(crate) async fn decide_with_token_on(
    conn: &mut SqliteConnection,
    key: &str,
    attempt: &str,
    request: &ChargeRequest,
    token: &PaymentToken,
    now_ms: i64,
) -> LedgerResult<bool> {
    let charge: Option<ChargeRow> =
        sqlx::query_as("SELECT * FROM charges WHERE idempotency_key = $1 AND attempt = $2 AND status = $3")
            .bind(key)
            .bind(attempt)
            .bind(ChargeStatus::Processing.as_str())
            .fetch_optional(&mut *conn)
            .await?;
    let Some(charge) = charge else {
        return Ok(false);
    };
    let row: Option<VaultTokenRow> = sqlx::query_as("SELECT * FROM acp_vault_tokens WHERE id = $1")
        .bind(&token.token)
        .fetch_optional(&mut *conn)
        .await?;
    let (status, failure) = match check(row.as_ref(), &charge.id, request, token, now_ms) {
        Err(refusal) => (ChargeStatus::Failed, Some(refusal)),
        Ok(CardOutcome::Approve) => (ChargeStatus::Succeeded, None),
        Ok(declined) => (ChargeStatus::Failed, Some(declined.as_str())),
    };
    sqlx::query("UPDATE charges SET status = $2, failure_code = $3 WHERE idempotency_key = $1")
        .bind(key)
        .bind(status.as_str())
        .bind(failure)
        .execute(&mut *conn)
        .await?;
    if status == ChargeStatus::Succeeded {
        sqlx::query("UPDATE acp_vault_tokens SET used_by_charge = $2, used_at_ms = $3 WHERE id = $1")
            .bind(&token.token)
            .bind(&charge.id)
            .bind(now_ms)
            .execute(&mut *conn)
            .await?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row() -> VaultTokenRow {
        VaultTokenRow {
            id: "vt_1".into(),
            created_at_ms: 0,
            reason: "one_time".into(),
            max_amount: 5000,
            currency: "usd".into(),
            checkout_session_id: "acs_1".into(),
            merchant_id: "m".into(),
            expires_at_ms: 1000,
            outcome: "approve".into(),
            brand: "visa".into(),
            last4: "4242".into(),
            funding: "credit".into(),
            used_by_charge: None,
            used_at_ms: None,
        }
    }

    fn token() -> PaymentToken {
        PaymentToken { token: "vt_1".into(), checkout_session_id: "acs_1".into(), merchant_id: "m".into() }
    }

    fn charge(amount: i64, currency: &str) -> ChargeRequest {
        ChargeRequest { amount, currency: currency.into(), description: String::new(), payment_token: Some(token()) }
    }

    #[test]
    fn a_token_within_its_allowance_gives_its_cards_outcome() {
        assert_eq!(check(Some(&row()), "ch_1", &charge(5000, "usd"), &token(), 999), Ok(CardOutcome::Approve));
        let declining = VaultTokenRow { outcome: "card_declined".into(), ..row() };
        assert_eq!(check(Some(&declining), "ch_1", &charge(1, "USD"), &token(), 0), Ok(CardOutcome::Decline));
        // Used by this very charge: a takeover of its own attempt, not another use.
        let used_here = VaultTokenRow { used_by_charge: Some("ch_1".into()), ..row() };
        assert_eq!(check(Some(&used_here), "ch_1", &charge(1, "usd"), &token(), 0), Ok(CardOutcome::Approve));
    }

    #[test]
    fn each_broken_rule_has_its_code_first_failure_first() {
        let (fresh, used) = (row(), VaultTokenRow { used_by_charge: Some("ch_0".into()), ..row() });
        let other_session = PaymentToken { checkout_session_id: "acs_2".into(), ..token() };
        let other_merchant = PaymentToken { merchant_id: "n".into(), ..token() };
        let cases: [(Option<&VaultTokenRow>, ChargeRequest, PaymentToken, i64, &str); 8] = [
            (None, charge(1, "usd"), token(), 0, "token_unknown"),
            (Some(&fresh), charge(1, "usd"), token(), 1000, "token_expired"),
            (Some(&used), charge(1, "usd"), token(), 0, "token_used"),
            (Some(&fresh), charge(5001, "usd"), token(), 0, "token_over_allowance"),
            (Some(&fresh), charge(1, "eur"), token(), 0, "token_wrong_currency"),
            (Some(&fresh), charge(1, "usd"), other_session, 0, "token_wrong_session"),
            (Some(&fresh), charge(1, "usd"), other_merchant, 0, "token_wrong_merchant"),
            // Expired and used and over: expiry is named first.
            (Some(&used), charge(9999, "eur"), token(), 5000, "token_expired"),
        ];
        for (stored, request, token, now, code) in cases {
            assert_eq!(check(stored, "ch_1", &request, &token, now), Err(code), "{code}");
            assert!(crate::api::TOKEN_REFUSALS.contains(&code));
            assert_ne!(failure_message(code), failure_message("card_declined"), "{code} has its own message");
        }
    }
}
