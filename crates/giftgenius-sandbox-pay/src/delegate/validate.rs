//! A delegate_payment body → what to store, or the ACP error naming the field at fault
//! (docs/acp.md §8). Two kinds of refusal, each with `code: invalid_card` (the schema's only
//! validation code) and the field's JSONPath in `param`:
//!
//! - **400**: the body does not have the schema's shape (a missing, unknown or mistyped field,
//!   a value off an enum), or one of our format rules: the number 12–19 digits, `exp_month`
//!   `01`–`12`, `exp_year` four digits, `cvc` 3–4 digits, `display_last4` four digits, the
//!   schema's lengths, `max_amount` > 0, `currency` `^[a-z]{3}$`, `expires_at` RFC 3339, a
//!   session and merchant id of 1–256 characters, at least one risk signal.
//! - **422**: well formed, but not acceptable: the number fails Luhn, `display_last4` is not
//!   its last four, the card has expired, the allowance has already ended or ends more than
//!   24 hours ahead, a risk signal says `blocked`.
//!
//! No message repeats a value from the body: an error answer is stored for its idempotency key,
//! and the body holds a card number.

use serde_json::Value;

use super::card::{self, CardOutcome};
use super::{DelegatePaymentRequest, MAX_ALLOWANCE_MS, RiskAction, rfc3339};

/// The largest `max_amount` taken (the provider's largest charge).
pub const MAX_AMOUNT: i64 = 1_000_000_000_000;
/// The longest session or merchant id kept.
const MAX_ID_CHARS: usize = 256;

/// Why a body is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// 422 (well formed, not acceptable) rather than 400 (malformed).
    pub unprocessable: bool,
    /// JSONPath (`$.payment_method.number`).
    pub param: String,
    pub message: String,
}

impl Invalid {
    fn malformed(param: &str, message: &str) -> Self {
        Self { unprocessable: false, param: param.into(), message: message.into() }
    }

    fn unacceptable(param: &str, message: &str) -> Self {
        Self { unprocessable: true, param: param.into(), message: message.into() }
    }
}

/// A request that passed every check, with what the vault keeps of its card.
#[derive(Debug, Clone)]
pub struct Tokenize {
    pub request: DelegatePaymentRequest,
    pub expires_at_ms: i64,
    pub outcome: CardOutcome,
    pub brand: &'static str,
    pub last4: String,
}

/// Checks `body` at `now_ms` (in the order of the module docs: shape, then acceptability).
pub fn validate(body: &Value, now_ms: i64) -> Result<Tokenize, Invalid> {
    let request = parse(body)?;
    let expires_at_ms = well_formed(&request)?;
    acceptable(&request, expires_at_ms, now_ms)?;
    let number = request.payment_method.number.0.as_str();
    Ok(Tokenize {
        outcome: CardOutcome::of(number),
        brand: card::brand(number),
        last4: card::last4(number).to_string(),
        expires_at_ms,
        request,
    })
}

/// The schema's shape (closed objects, types, enums, required fields), with the JSONPath of the
/// first field that breaks it. serde's own message is never used: it can quote a value.
fn parse(body: &Value) -> Result<DelegatePaymentRequest, Invalid> {
    serde_path_to_error::deserialize(body).map_err(|e| {
        let inner = e.inner().to_string();
        let mut path = match e.path().to_string() {
            root if root == "." => "$".to_string(),
            path => format!("$.{path}"),
        };
        // serde names the field of a missing or unknown-field error in its message only.
        let missing = inner.starts_with("missing field");
        let unknown = inner.starts_with("unknown field");
        if let Some(field) = inner.split('`').nth(1).filter(|_| missing || unknown)
            && !path.ends_with(&format!(".{field}"))
        {
            path = format!("{path}.{field}");
        }
        let message = if missing {
            "A required field is missing."
        } else if unknown {
            "This field is not part of the object (objects are closed)."
        } else {
            "This field has the wrong type or a value outside those allowed."
        };
        Invalid::malformed(&path, message)
    })
}

fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// Our format rules and the schema's lengths; returns the allowance's end.
fn well_formed(request: &DelegatePaymentRequest) -> Result<i64, Invalid> {
    let card = &request.payment_method;
    let bad = |param: &str, message: &str| Err(Invalid::malformed(param, message));
    let number = card.number.0.as_str();
    if !all_digits(number) || !(12..=19).contains(&number.len()) {
        return bad("$.payment_method.number", "The card number must be 12 to 19 digits.");
    }
    if card.exp_month.as_deref().is_some_and(|m| m.len() != 2 || !all_digits(m) || !("01"..="12").contains(&m)) {
        return bad("$.payment_method.exp_month", "The expiry month must be two digits, 01 to 12.");
    }
    if card.exp_year.as_deref().is_some_and(|y| y.len() != 4 || !all_digits(y)) {
        return bad("$.payment_method.exp_year", "The expiry year must be four digits.");
    }
    if card.cvc.as_ref().is_some_and(|c| !all_digits(&c.0) || !(3..=4).contains(&c.0.len())) {
        return bad("$.payment_method.cvc", "The card verification code must be 3 or 4 digits.");
    }
    if card.eci_value.as_deref().is_some_and(|e| e.chars().count() > 2) {
        return bad("$.payment_method.eci_value", "The ECI value is at most 2 characters.");
    }
    if card.iin.as_deref().is_some_and(|i| i.chars().count() > 8) {
        return bad("$.payment_method.iin", "The IIN is at most 8 characters.");
    }
    if card.display_last4.as_deref().is_some_and(|l| l.len() != 4 || !all_digits(l)) {
        return bad("$.payment_method.display_last4", "display_last4 must be exactly 4 digits.");
    }
    let allowance = &request.allowance;
    if !(1..=MAX_AMOUNT).contains(&allowance.max_amount) {
        return bad("$.allowance.max_amount", "max_amount must be a positive integer of minor units.");
    }
    if allowance.currency.len() != 3 || !allowance.currency.bytes().all(|b| b.is_ascii_lowercase()) {
        return bad("$.allowance.currency", "The currency must be three lower-case letters (ISO 4217, e.g. usd).");
    }
    let id_ok = |id: &str| !id.is_empty() && id.chars().count() <= MAX_ID_CHARS;
    if !id_ok(&allowance.checkout_session_id) {
        return bad("$.allowance.checkout_session_id", "The checkout session id must be 1 to 256 characters.");
    }
    if !id_ok(&allowance.merchant_id) {
        return bad("$.allowance.merchant_id", "The merchant id must be 1 to 256 characters.");
    }
    let Some(expires_at_ms) = rfc3339::parse_ms(&allowance.expires_at) else {
        return bad("$.allowance.expires_at", "expires_at must be an RFC 3339 date-time.");
    };
    if let Some(address) = &request.billing_address {
        let longer = |text: &str, max: usize| text.chars().count() > max;
        let too_long = [
            ("name", longer(&address.name, 256)),
            ("line_one", longer(&address.line_one, 60)),
            ("line_two", address.line_two.as_deref().is_some_and(|l| longer(l, 60))),
            ("city", longer(&address.city, 60)),
            ("postal_code", longer(&address.postal_code, 20)),
        ];
        if let Some((field, _)) = too_long.iter().find(|(_, long)| *long) {
            return bad(&format!("$.billing_address.{field}"), "This address field is too long.");
        }
        if address.country.len() != 2 || !address.country.bytes().all(|b| b.is_ascii_alphabetic()) {
            return bad("$.billing_address.country", "The country must be a two-letter ISO 3166-1 code.");
        }
    }
    if request.risk_signals.is_empty() {
        return bad("$.risk_signals", "At least one risk signal is required.");
    }
    Ok(expires_at_ms)
}

/// Well formed, but is it acceptable at `now_ms`?
fn acceptable(request: &DelegatePaymentRequest, expires_at_ms: i64, now_ms: i64) -> Result<(), Invalid> {
    let card = &request.payment_method;
    let refused = |param: &str, message: &str| Err(Invalid::unacceptable(param, message));
    let number = card.number.0.as_str();
    if !card::luhn(number) {
        return refused("$.payment_method.number", "The card number is not valid (its check digit is wrong).");
    }
    if card.display_last4.as_deref().is_some_and(|l| l != card::last4(number)) {
        return refused("$.payment_method.display_last4", "display_last4 is not the card number's last four digits.");
    }
    if let (Some(month), Some(year)) = (&card.exp_month, &card.exp_year) {
        // Both were checked to be digits; a card is good through the end of its month.
        let (month, year) = (month.parse::<u32>().unwrap_or(0), year.parse::<u32>().unwrap_or(0));
        let (this_year, this_month) = rfc3339::year_month(now_ms);
        if year < this_year {
            return refused("$.payment_method.exp_year", "The card has expired.");
        }
        if year == this_year && month < this_month {
            return refused("$.payment_method.exp_month", "The card has expired.");
        }
    }
    if expires_at_ms <= now_ms {
        return refused("$.allowance.expires_at", "The allowance has already ended.");
    }
    if expires_at_ms > now_ms + MAX_ALLOWANCE_MS {
        return refused("$.allowance.expires_at", "The allowance may end at most 24 hours from now.");
    }
    if let Some(i) = request.risk_signals.iter().position(|s| s.action == RiskAction::Blocked) {
        return refused(&format!("$.risk_signals[{i}].action"), "A risk signal blocks this payment method.");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// 2026-06-15T12:00:00Z
    const NOW: i64 = 1_781_524_800_000;

    fn body() -> Value {
        json!({
            "payment_method": {
                "type": "card", "card_number_type": "fpan", "number": "4242424242424242",
                "exp_month": "11", "exp_year": "2027", "cvc": "223", "display_card_funding_type": "credit",
                "display_last4": "4242", "metadata": {}
            },
            "allowance": {
                "reason": "one_time", "max_amount": 5000, "currency": "usd",
                "checkout_session_id": "acs_1", "merchant_id": "giftgenius", "expires_at": "2026-06-15T12:15:00Z"
            },
            "risk_signals": [{"type": "card_testing", "score": 5, "action": "authorized"}],
            "metadata": {}
        })
    }

    fn with(path: &[&str], value: Value) -> Value {
        let mut body = body();
        let (last, parents) = path.split_last().unwrap();
        let mut at = &mut body;
        for p in parents {
            at = match p.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*p],
            };
        }
        at[*last] = value;
        body
    }

    fn refusal(body: Value) -> (u16, String) {
        let invalid = validate(&body, NOW).expect_err("refused");
        (if invalid.unprocessable { 422 } else { 400 }, invalid.param)
    }

    #[test]
    fn the_schema_example_is_taken_with_its_facts() {
        assert_eq!(rfc3339::format_ms(NOW), "2026-06-15T12:00:00Z");
        let ok = validate(&body(), NOW).unwrap();
        assert_eq!((ok.outcome, ok.brand, ok.last4.as_str()), (CardOutcome::Approve, "visa", "4242"));
        assert_eq!(ok.expires_at_ms, NOW + 15 * 60 * 1000);
        // An integral float is an integer, as in JSON Schema.
        assert!(validate(&with(&["allowance", "max_amount"], json!(5000.0)), NOW).is_ok());
    }

    #[test]
    fn shape_errors_are_400_at_the_fields_path() {
        let cases = [
            (with(&["payment_method", "extra"], json!(1)), "$.payment_method.extra"),
            (with(&["surprise"], json!(1)), "$.surprise"),
            (with(&["payment_method", "type"], json!("paypal")), "$.payment_method.type"),
            (with(&["payment_method", "number"], json!(4242424242424242u64)), "$.payment_method.number"),
            (with(&["payment_method", "number"], json!("4242")), "$.payment_method.number"),
            (with(&["payment_method", "exp_month"], json!("13")), "$.payment_method.exp_month"),
            (with(&["payment_method", "exp_year"], json!("27")), "$.payment_method.exp_year"),
            (with(&["payment_method", "cvc"], json!("12")), "$.payment_method.cvc"),
            (with(&["payment_method", "display_last4"], json!("42a2")), "$.payment_method.display_last4"),
            (with(&["allowance", "max_amount"], json!(0)), "$.allowance.max_amount"),
            (with(&["allowance", "max_amount"], json!(10.5)), "$.allowance.max_amount"),
            (with(&["allowance", "currency"], json!("USD")), "$.allowance.currency"),
            (with(&["allowance", "reason"], json!("recurring")), "$.allowance.reason"),
            (with(&["allowance", "expires_at"], json!("soon")), "$.allowance.expires_at"),
            (with(&["allowance", "merchant_id"], json!("m".repeat(257))), "$.allowance.merchant_id"),
            (with(&["risk_signals"], json!([])), "$.risk_signals"),
            (with(&["risk_signals", "0", "action"], json!("maybe")), "$.risk_signals[0].action"),
            (with(&["metadata", "n"], json!(1)), "$.metadata.n"),
            (
                with(
                    &["billing_address"],
                    json!({"name": "A", "line_one": "x", "city": "c", "state": "s", "country": "USA", "postal_code": "1"}),
                ),
                "$.billing_address.country",
            ),
        ];
        for (body, param) in cases {
            assert_eq!(refusal(body), (400, param.to_string()), "{param}");
        }
        let mut no_metadata = body();
        no_metadata.as_object_mut().unwrap().remove("metadata");
        assert_eq!(refusal(no_metadata), (400, "$.metadata".into()));
        let mut no_funding = body();
        no_funding["payment_method"].as_object_mut().unwrap().remove("display_card_funding_type");
        assert_eq!(refusal(no_funding), (400, "$.payment_method.display_card_funding_type".into()));
    }

    #[test]
    fn acceptability_errors_are_422() {
        let cases = [
            (with(&["payment_method", "number"], json!("4242424242424241")), "$.payment_method.number"),
            (with(&["payment_method", "display_last4"], json!("1111")), "$.payment_method.display_last4"),
            (with(&["payment_method", "exp_year"], json!("2025")), "$.payment_method.exp_year"),
            (with(&["payment_method", "exp_month"], json!("05")), "$.payment_method.exp_month"),
            (with(&["allowance", "expires_at"], json!("2026-06-15T11:59:59Z")), "$.allowance.expires_at"),
            (with(&["allowance", "expires_at"], json!("2026-06-16T12:00:01Z")), "$.allowance.expires_at"),
            (with(&["risk_signals", "0", "action"], json!("blocked")), "$.risk_signals[0].action"),
        ];
        for (mut body, param) in cases {
            if param == "$.payment_method.exp_month" {
                body["payment_method"]["exp_year"] = json!("2026");
            }
            assert_eq!(refusal(body), (422, param.to_string()), "{param}");
        }
        // This month is still good.
        let mut this_month = with(&["payment_method", "exp_month"], json!("06"));
        this_month["payment_method"]["exp_year"] = json!("2026");
        assert!(validate(&this_month, NOW).is_ok());
    }

    #[test]
    fn no_message_repeats_the_card_number() {
        for body in [
            with(&["payment_method", "number"], json!(4242424242424242u64)),
            with(&["payment_method", "number"], json!("4242424242424241")),
            with(&["payment_method", "number"], json!("42424242424242424242")),
        ] {
            let invalid = validate(&body, NOW).unwrap_err();
            assert!(!invalid.message.contains("424242"), "{invalid:?}");
        }
    }
}
