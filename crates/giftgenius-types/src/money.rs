//! Money as integer minor units plus an ISO 4217 currency. Nothing stores or compares floats.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The currencies GiftGenius prices in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize, JsonSchema)]
pub enum Currency {
    #[default]
    USD,
    EUR,
    GBP,
    CAD,
    AUD,
    JPY,
}

impl Currency {
    pub const ALL: [Currency; 6] =
        [Currency::USD, Currency::EUR, Currency::GBP, Currency::CAD, Currency::AUD, Currency::JPY];

    pub const fn code(self) -> &'static str {
        match self {
            Currency::USD => "USD",
            Currency::EUR => "EUR",
            Currency::GBP => "GBP",
            Currency::CAD => "CAD",
            Currency::AUD => "AUD",
            Currency::JPY => "JPY",
        }
    }

    /// Digits after the decimal point (ISO 4217 exponent).
    pub const fn exponent(self) -> u32 {
        match self {
            Currency::JPY => 0,
            _ => 2,
        }
    }

    pub const fn symbol(self) -> &'static str {
        match self {
            Currency::USD => "$",
            Currency::EUR => "€",
            Currency::GBP => "£",
            Currency::CAD => "CA$",
            Currency::AUD => "A$",
            Currency::JPY => "¥",
        }
    }

    /// Converts a decimal amount in major units (as a model types it) to minor units,
    /// rounding half away from zero. `None` for amounts that are not finite or too large.
    pub fn to_minor(self, major: f64) -> Option<i64> {
        let minor = (major * 10f64.powi(self.exponent() as i32)).round();
        (minor.is_finite() && minor.abs() < 1e15).then_some(minor as i64)
    }
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

/// An amount of money: integer minor units (cents) and a currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Money {
    /// Amount in the currency's minor unit (cents for USD, yen for JPY).
    pub amount_minor: i64,
    pub currency: Currency,
}

impl Money {
    pub const fn new(amount_minor: i64, currency: Currency) -> Self {
        Self { amount_minor, currency }
    }

    /// Locale-neutral text for the model and logs, e.g. `$24.99` or `¥3,200`.
    pub fn display(&self) -> String {
        let exp = self.currency.exponent();
        let sign = if self.amount_minor < 0 { "-" } else { "" };
        let abs = self.amount_minor.unsigned_abs();
        let scale = 10u64.pow(exp);
        let whole = group_thousands(abs / scale);
        if exp == 0 {
            format!("{sign}{}{whole}", self.currency.symbol())
        } else {
            format!("{sign}{}{whole}.{:0width$}", self.currency.symbol(), abs % scale, width = exp as usize)
        }
    }

    /// `display` without a zero fraction, for sentences: `$42`, but `$42.50`.
    pub fn display_short(&self) -> String {
        let full = self.display();
        let zero_fraction = format!(".{}", "0".repeat(self.currency.exponent() as usize));
        match full.strip_suffix(&zero_fraction) {
            Some(whole) if self.currency.exponent() > 0 => whole.to_string(),
            _ => full,
        }
    }

    /// `self * quantity`, or `None` on overflow.
    pub fn times(&self, quantity: u32) -> Option<Money> {
        self.amount_minor.checked_mul(quantity as i64).map(|a| Money::new(a, self.currency))
    }
}

fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_groups_and_pads() {
        assert_eq!(Money::new(2499, Currency::USD).display(), "$24.99");
        assert_eq!(Money::new(123456705, Currency::EUR).display(), "€1,234,567.05");
        assert_eq!(Money::new(3200, Currency::JPY).display(), "¥3,200");
        assert_eq!(Money::new(-5, Currency::GBP).display(), "-£0.05");
    }

    #[test]
    fn display_short_drops_only_a_zero_fraction() {
        assert_eq!(Money::new(4200, Currency::USD).display_short(), "$42");
        assert_eq!(Money::new(4250, Currency::USD).display_short(), "$42.50");
        assert_eq!(Money::new(3200, Currency::JPY).display_short(), "¥3,200");
        assert_eq!(Money::new(100000000, Currency::EUR).display_short(), "€1,000,000");
    }

    #[test]
    fn to_minor_rounds_and_refuses_non_finite() {
        assert_eq!(Currency::USD.to_minor(19.999), Some(2000));
        assert_eq!(Currency::USD.to_minor(0.1 + 0.2), Some(30));
        assert_eq!(Currency::JPY.to_minor(1500.4), Some(1500));
        assert_eq!(Currency::USD.to_minor(f64::INFINITY), None);
        assert_eq!(Currency::USD.to_minor(f64::NAN), None);
    }
}
