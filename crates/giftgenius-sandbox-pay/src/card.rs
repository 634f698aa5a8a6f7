//! What the sandbox knows about a card number: whether it is one (Luhn), its brand, and what
//! charging it does. Like a real provider's test mode, a few numbers are kept for the unhappy
//! paths and every other valid number approves:
//!
//! | number | a charge |
//! |---|---|
//! | `4000000000000002` | declined, `card_declined` |
//! | `4000000000009995` | declined, `insufficient_funds` |
//! | any other (`4242424242424242`, …) | approved |
//!
//! Only the outcome, the brand and the last four digits are kept; the number itself never is.

/// What charging a card does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardOutcome {
    Approve,
    /// Declined: `card_declined`.
    Decline,
    /// Declined: `insufficient_funds`.
    InsufficientFunds,
}

impl CardOutcome {
    /// As stored (and, for a decline, the charge's `failure_code`).
    pub const fn as_str(self) -> &'static str {
        match self {
            CardOutcome::Approve => "approve",
            CardOutcome::Decline => "card_declined",
            CardOutcome::InsufficientFunds => "insufficient_funds",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [CardOutcome::Approve, CardOutcome::Decline, CardOutcome::InsufficientFunds]
            .into_iter()
            .find(|o| o.as_str() == text)
    }

    /// What charging a card with this number does.
    pub fn of(number: &str) -> Self {
        match number {
            "4000000000000002" => CardOutcome::Decline,
            "4000000000009995" => CardOutcome::InsufficientFunds,
            _ => CardOutcome::Approve,
        }
    }
}

/// Whether a string of ASCII digits passes the Luhn check (false for anything else).
pub fn luhn(number: &str) -> bool {
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let sum: u32 = number
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let digit = u32::from(b - b'0');
            if i % 2 == 1 {
                let doubled = digit * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                digit
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The card network a number belongs to, from its first digits (`unknown` when none fits).
pub fn brand(number: &str) -> &'static str {
    let prefix = |len: usize| number.get(..len).and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    if number.starts_with('4') {
        "visa"
    } else if (51..=55).contains(&prefix(2)) || (2221..=2720).contains(&prefix(4)) {
        "mastercard"
    } else if matches!(prefix(2), 34 | 37) {
        "amex"
    } else if number.starts_with("6011") || number.starts_with("65") || (644..=649).contains(&prefix(3)) {
        "discover"
    } else if (3528..=3589).contains(&prefix(4)) {
        "jcb"
    } else if matches!(prefix(2), 36 | 38 | 39) || (300..=305).contains(&prefix(3)) {
        "diners"
    } else {
        "unknown"
    }
}

/// The last four characters of a number (all of it when shorter).
pub fn last4(number: &str) -> &str {
    number.get(number.len().saturating_sub(4)..).unwrap_or(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn_takes_the_test_cards_and_refuses_a_changed_digit() {
        for good in ["4242424242424242", "4000000000000002", "4000000000009995", "5555555555554444", "378282246310005"]
        {
            assert!(luhn(good), "{good}");
        }
        for bad in ["4242424242424241", "4000000000000001", "", "4242 4242 4242 4242", "42424242424242a2"] {
            assert!(!luhn(bad), "{bad}");
        }
    }

    #[test]
    fn the_test_cards_decide_the_outcome_and_others_approve() {
        assert_eq!(CardOutcome::of("4242424242424242"), CardOutcome::Approve);
        assert_eq!(CardOutcome::of("4000000000000002"), CardOutcome::Decline);
        assert_eq!(CardOutcome::of("4000000000009995"), CardOutcome::InsufficientFunds);
        assert_eq!(CardOutcome::of("5555555555554444"), CardOutcome::Approve);
        for outcome in [CardOutcome::Approve, CardOutcome::Decline, CardOutcome::InsufficientFunds] {
            assert_eq!(CardOutcome::parse(outcome.as_str()), Some(outcome));
        }
        assert_eq!(CardOutcome::parse("maybe"), None);
    }

    #[test]
    fn brands_and_last_four_come_from_the_number() {
        assert_eq!(brand("4242424242424242"), "visa");
        assert_eq!(brand("5555555555554444"), "mastercard");
        assert_eq!(brand("2223003122003222"), "mastercard");
        assert_eq!(brand("378282246310005"), "amex");
        assert_eq!(brand("6011111111111117"), "discover");
        assert_eq!(brand("3566002020360505"), "jcb");
        assert_eq!(brand("30569309025904"), "diners");
        assert_eq!(brand("9999999999999995"), "unknown");
        assert_eq!(last4("4242424242424242"), "4242");
        assert_eq!(last4("42"), "42");
    }
}
