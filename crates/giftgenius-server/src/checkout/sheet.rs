//! The host's payment sheet (docs/acp.md §14): the session `prepare_order` hands the widget for
//! `window.openai.requestCheckout`, and `complete_checkout`, which the host calls with the
//! sheet's vault token.
//!
//! A sheet session is the draft itself (`cs_<draft id>`): no row of its own. Paying it runs
//! `commit_order`'s keyed path (the draft's one live order, the provider key `gg_<order id>`,
//! the reconciler for orders nobody finishes), charged with the token. The host sends no
//! idempotency key, so the key is derived from the session and the token: the same call
//! retried replays its answer (a decline stays a decline for that token), a new token after
//! a decline pays afresh, and any call after the draft was paid answers with its order.
//!
//! Before any order exists, `complete_checkout` (docs/acp.md §14):
//! - is refused when the provider takes no vault tokens (Stripe charges saved cards: the sheet
//!   is not even offered then, and the person confirms in the widget);
//! - counts the attempt against the account's limit for that draft (`--hourly-sheet-payment-limit`,
//!   HOURLY_LIMIT_EXCEEDED with `retry_after_ms` past it), so no script can try tokens at will;
//! - asks the provider whether the token would be taken for the draft's total at all
//!   (`check_token`, which records nothing): a made-up, used, expired or foreign token is
//!   refused there, and costs neither an order nor a charge in the provider's ledger.
//!
//! A token never pays an order another key created nor one awaiting the person's bank (3-D
//! Secure): that is REQUEST_IN_PROGRESS and the order is left as it is (`commit.rs`).

use giftgenius_pay_api::api::PaymentToken;
use giftgenius_types::sheet::{
    CompleteCheckoutInput, SheetAddress, SheetCheckoutSession, SheetFulfillmentOption, SheetItem, SheetLineItem,
    SheetLink, SheetPaymentProvider, SheetTotal, draft_of_sheet_session, sheet_session_id,
};
use giftgenius_types::{CommitOrderInput, DeliveryDetails, ErrorCode, Money, OrderData, ToolError};
use sha2::{Digest, Sha256};

use super::Checkout;
use crate::context::CallContext;
use crate::error::internal;
use crate::outcome::Outcome;
use giftgenius_commerce::payments::PaymentError;
use giftgenius_commerce::store::DraftRow;

/// The longest vault token taken (the provider's ids are far shorter).
const MAX_TOKEN_CHARS: usize = 255;

/// The provider name the sheet shows (the ACP 2025-09-29 enum has only `stripe`; our sandbox
/// provider speaks its delegate_payment shape).
pub const SHEET_PROVIDER: &str = "stripe";

/// The idempotency key a sheet payment claims (under `commit_order`'s scope, so the reconciler
/// finishes it like any commit): one per session and token, never the token itself.
pub fn sheet_key(session_id: &str, token: &str) -> String {
    let digest = Sha256::digest(format!("{session_id}\n{token}").as_bytes());
    format!("sheet_{}", &hex::encode(digest)[..40])
}

impl Checkout {
    /// `complete_checkout`: pays the caller's draft named by the session with the sheet's token.
    pub async fn complete_checkout(&self, call: &CallContext, input: &CompleteCheckoutInput) -> Outcome<OrderData> {
        let Some(draft_id) = draft_of_sheet_session(&input.checkout_session_id) else {
            return not_found(call).into();
        };
        if !self.payments.takes_vault_tokens() {
            return sheet_not_taken(call).into();
        }
        let draft = match self.store.draft(&call.subject, draft_id).await {
            Ok(Some(draft)) => draft,
            Ok(None) => return not_found(call).into(),
            Err(e) => return internal(call, &e).into(),
        };
        if let Err(limited) = self.limits.take_sheet_payment(call, &draft.id).await {
            return limited.into();
        }
        let token = PaymentToken {
            token: input.payment_data.token.trim().to_string(),
            checkout_session_id: input.checkout_session_id.clone(),
            merchant_id: self.merchant_id.clone(),
        };
        let plausible = !token.token.is_empty()
            && token.token.len() <= MAX_TOKEN_CHARS
            && token.token.bytes().all(|b| b.is_ascii_graphic());
        if !plausible {
            return token_refused(call).into();
        }
        // Only a draft with no order yet needs the token checked first: a paid one answers with
        // its order, and a pending one is this token's own to resume or another payment's to
        // finish (`commit.rs` decides which, before asking the provider anything).
        match self.store.live_order_for_draft(&draft.id).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                let total = Money::new(draft.total_minor, draft.currency.into());
                match self.payments.check_token(&token, total).await {
                    Ok(()) => {}
                    Err(PaymentError::Refused(code)) => {
                        tracing::info!(code, "the sheet's vault token was refused before any order");
                        return token_refused(call).into();
                    }
                    Err(e) => {
                        tracing::warn!(error = ?e, "the sheet's vault token could not be checked");
                        return super::commit::unavailable(call, "the token check did not finish");
                    }
                }
            }
            Err(e) => return internal(call, &e).into(),
        }
        let commit = CommitOrderInput {
            draft_id: draft_id.to_string(),
            idempotency_key: sheet_key(&input.checkout_session_id, &token.token),
            confirmation_token: None,
        };
        // The key lives in commit_order's scope: one key space, one reconciler.
        let keyed = CallContext { tool: giftgenius_types::ToolName::CommitOrder, ..call.clone() };
        self.pay_with_token(&keyed, &commit, token, draft).await
    }

    /// The sheet session of a draft with delivery details (`None` without them: nothing to ship to).
    /// Never offered when the provider cannot take the sheet's tokens.
    pub fn sheet_session(&self, row: &DraftRow, delivery: Option<&DeliveryDetails>) -> Option<SheetCheckoutSession> {
        if !self.payments.takes_vault_tokens() {
            return None;
        }
        let recipient = &delivery?.recipient;
        let currency = giftgenius_types::Currency::from(row.currency);
        let display = |minor: i64| Money::new(minor, currency).display();
        let total =
            |kind: &str, amount: i64| SheetTotal { kind: kind.to_string(), display_text: display(amount), amount };
        let shipping = giftgenius_types::ShippingSpeed::from(row.shipping);
        // One line item per line: the first keeps the id a one-gift draft always had.
        let line_items = row
            .lines()
            .into_iter()
            .enumerate()
            .map(|(i, line)| {
                Some(SheetLineItem {
                    id: if i == 0 { format!("li_{}", row.id) } else { format!("li_{}_{}", row.id, i + 1) },
                    item: SheetItem { id: line.gift_id, quantity: u32::try_from(line.quantity).ok()? },
                    base_amount: line.subtotal_minor,
                    discount: 0,
                    subtotal: line.subtotal_minor,
                    tax: 0,
                    total: line.subtotal_minor,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let link =
            |kind: &str, path: &str| SheetLink { kind: kind.to_string(), url: format!("{}{path}", self.public_url) };
        Some(SheetCheckoutSession {
            id: sheet_session_id(&row.id),
            payment_provider: SheetPaymentProvider {
                provider: SHEET_PROVIDER.to_string(),
                merchant_id: self.merchant_id.clone(),
                supported_payment_methods: vec!["card".to_string()],
            },
            status: "ready_for_payment".to_string(),
            currency: currency.code().to_string(),
            line_items,
            fulfillment_address: SheetAddress {
                name: recipient.name.clone(),
                line_one: recipient.address.line1.clone(),
                line_two: recipient.address.line2.clone(),
                city: recipient.address.city.clone(),
                state: recipient.address.region.clone().unwrap_or_default(),
                country: recipient.address.country.clone(),
                postal_code: recipient.address.postal_code.clone().unwrap_or_default(),
            },
            fulfillment_option_id: shipping.as_str().to_string(),
            fulfillment_options: vec![SheetFulfillmentOption {
                kind: "shipping".to_string(),
                id: shipping.as_str().to_string(),
                title: shipping.as_str().to_string(),
                subtotal: row.shipping_minor,
                tax: 0,
                total: row.shipping_minor,
            }],
            // ACP 2025-09-29 has no gift wrap total: the wrap is a `fee` (the only charge it
            // names besides the items and the shipping), so the totals still add up.
            totals: [
                Some(total("items_base_amount", row.subtotal_minor)),
                Some(total("subtotal", row.subtotal_minor)),
                Some(total("fulfillment", row.shipping_minor)),
                row.gift_wrap_minor.map(|wrap| total("fee", wrap)),
                Some(total("total", row.total_minor)),
            ]
            .into_iter()
            .flatten()
            .collect(),
            messages: vec![],
            links: vec![link("terms_of_use", "/terms"), link("privacy_policy", "/privacy")],
            payment_mode: "test".to_string(),
        })
    }
}

/// A session that is not the caller's draft: the answer a foreign draft gets.
fn not_found(call: &CallContext) -> ToolError {
    ToolError::new(ErrorCode::DraftNotFound, "There is no such checkout session.", &call.reference)
}

/// `complete_checkout` when the provider takes no vault tokens: the sheet was never offered.
fn sheet_not_taken(call: &CallContext) -> ToolError {
    ToolError::new(
        ErrorCode::ConfirmationRequired,
        "This shop does not take payments from the host's payment sheet; nothing was charged. The user reviews \
         the order and presses Confirm in the widget.",
        &call.reference,
    )
}

/// A vault token the provider refused (another session's, used, expired, over its allowance).
pub(super) fn token_refused(call: &CallContext) -> ToolError {
    ToolError::new(
        ErrorCode::PaymentDeclined,
        "The payment was refused for this checkout; nothing was charged. Pay again in the sheet.",
        &call.reference,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sheet_key_is_per_session_and_token_and_hides_the_token() {
        let key = sheet_key("cs_drf_1", "vt_secret");
        assert_eq!(key, sheet_key("cs_drf_1", "vt_secret"));
        assert_ne!(key, sheet_key("cs_drf_1", "vt_other"));
        assert_ne!(key, sheet_key("cs_drf_2", "vt_secret"));
        assert!(!key.contains("secret") && key.len() <= 255);
    }
}
