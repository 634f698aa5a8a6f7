//! `suggest_gifts`: its input, the normalized query we actually ran, and the gift cards.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::{FieldError, Validate};
use crate::delivery::too_long;
use crate::field_rule::FieldRule;
use crate::money::{Currency, Money};

/// Who the gift is for, relative to the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RelationshipType {
    Partner,
    Parent,
    Child,
    Sibling,
    Grandparent,
    Grandchild,
    Friend,
    Colleague,
    Boss,
    Teacher,
    Neighbor,
    Other,
}

impl RelationshipType {
    pub const ALL: [RelationshipType; 12] = [
        Self::Partner,
        Self::Parent,
        Self::Child,
        Self::Sibling,
        Self::Grandparent,
        Self::Grandchild,
        Self::Friend,
        Self::Colleague,
        Self::Boss,
        Self::Teacher,
        Self::Neighbor,
        Self::Other,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Partner => "partner",
            Self::Parent => "parent",
            Self::Child => "child",
            Self::Sibling => "sibling",
            Self::Grandparent => "grandparent",
            Self::Grandchild => "grandchild",
            Self::Friend => "friend",
            Self::Colleague => "colleague",
            Self::Boss => "boss",
            Self::Teacher => "teacher",
            Self::Neighbor => "neighbor",
            Self::Other => "other",
        }
    }
}

/// What the gift is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Occasion {
    Birthday,
    Anniversary,
    Wedding,
    Graduation,
    Holiday,
    Valentines,
    MothersDay,
    FathersDay,
    Housewarming,
    BabyShower,
    Retirement,
    ThankYou,
    GetWell,
    JustBecause,
}

impl Occasion {
    pub const ALL: [Occasion; 14] = [
        Self::Birthday,
        Self::Anniversary,
        Self::Wedding,
        Self::Graduation,
        Self::Holiday,
        Self::Valentines,
        Self::MothersDay,
        Self::FathersDay,
        Self::Housewarming,
        Self::BabyShower,
        Self::Retirement,
        Self::ThankYou,
        Self::GetWell,
        Self::JustBecause,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Birthday => "birthday",
            Self::Anniversary => "anniversary",
            Self::Wedding => "wedding",
            Self::Graduation => "graduation",
            Self::Holiday => "holiday",
            Self::Valentines => "valentines",
            Self::MothersDay => "mothers_day",
            Self::FathersDay => "fathers_day",
            Self::Housewarming => "housewarming",
            Self::BabyShower => "baby_shower",
            Self::Retirement => "retirement",
            Self::ThankYou => "thank_you",
            Self::GetWell => "get_well",
            Self::JustBecause => "just_because",
        }
    }

    /// Words for sentences: "a birthday gift".
    pub const fn phrase(self) -> &'static str {
        match self {
            Self::MothersDay => "Mother's Day",
            Self::FathersDay => "Father's Day",
            Self::BabyShower => "baby shower",
            Self::ThankYou => "thank-you",
            Self::GetWell => "get-well",
            Self::JustBecause => "just-because",
            Self::Valentines => "Valentine's Day",
            other => other.as_str(),
        }
    }
}

/// Arguments of `suggest_gifts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestGiftsInput {
    /// Who the gift is for, relative to the user. Use "other" if none fits.
    pub relationship_type: RelationshipType,
    /// Recipient's age in years, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 120))]
    pub age: Option<i64>,
    /// The recipient's interests or hobbies, short words like "coffee" or "hiking".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 10), inner(length(min = 1, max = 40)))]
    pub interests: Vec<String>,
    /// Lowest price to consider, in `currency` major units (e.g. 20 or 19.99).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1000000))]
    pub budget_min: Option<f64>,
    /// Highest price to consider, in `currency` major units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1000000))]
    pub budget_max: Option<f64>,
    /// The occasion, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occasion: Option<Occasion>,
    /// ISO 4217 currency for the budget and the prices. Defaults to USD.
    #[serde(default)]
    pub currency: Currency,
    /// How many gifts to return (1-12). Defaults to 6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 12))]
    pub limit: Option<i64>,
    /// What the user said about the recipient, in their words, one line of plain text (at most
    /// 300 characters), e.g. "just moved to a flat with a balcony, always cooking for friends".
    /// Used only to understand who the recipient is and rank gifts by fit; it is not stored,
    /// logged or repeated in the result. Leave it out when the user said nothing more than the
    /// other arguments already carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 300))]
    pub about: Option<String>,
}

impl SuggestGiftsInput {
    pub const DEFAULT_LIMIT: usize = 6;
    pub const MAX_INTERESTS: usize = 10;
    pub const MAX_BUDGET: f64 = 1_000_000.0;
    /// Longest `about`, in characters (not bytes).
    pub const MAX_ABOUT_CHARS: usize = 300;

    /// A minimal valid input, handy for tests and fixtures.
    pub fn for_relationship(relationship_type: RelationshipType) -> Self {
        Self {
            relationship_type,
            age: None,
            interests: Vec::new(),
            budget_min: None,
            budget_max: None,
            occasion: None,
            currency: Currency::USD,
            limit: None,
            about: None,
        }
    }

    /// `about` as the ranking reads it: trimmed, and `None` when absent or blank. It travels
    /// beside the [`SuggestGiftsQuery`], never in it: the query is echoed to the model
    /// (`data.query`, an error's `attempted`), and what the user said about someone is not.
    pub fn about(&self) -> Option<&str> {
        self.about.as_deref().map(str::trim).filter(|about| !about.is_empty())
    }

    /// The query as we will run it: interests trimmed, lowercased and de-duplicated, money
    /// in minor units. Call after `validate()`.
    pub fn normalize(&self) -> SuggestGiftsQuery {
        let mut interests: Vec<String> = Vec::new();
        for interest in &self.interests {
            let clean = interest.trim().to_lowercase();
            if !clean.is_empty() && !interests.contains(&clean) {
                interests.push(clean);
            }
        }
        let money = |v: Option<f64>| v.and_then(|v| self.currency.to_minor(v)).map(|m| Money::new(m, self.currency));
        SuggestGiftsQuery {
            relationship_type: self.relationship_type,
            age: self.age.map(|a| a as u8),
            interests,
            budget_min: money(self.budget_min),
            budget_max: money(self.budget_max),
            occasion: self.occasion,
            currency: self.currency,
            limit: self.limit.map(|l| l as u8).unwrap_or(Self::DEFAULT_LIMIT as u8),
        }
    }
}

impl Validate for SuggestGiftsInput {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        if let Some(age) = self.age
            && !(0..=120).contains(&age)
        {
            errors.push(FieldError::new("age", format!("must be between 0 and 120 (got {age})")));
        }
        if self.interests.len() > Self::MAX_INTERESTS {
            errors.push(FieldError::new(
                "interests",
                format!("must have at most {} items (got {})", Self::MAX_INTERESTS, self.interests.len()),
            ));
        }
        for (i, interest) in self.interests.iter().enumerate() {
            let len = interest.trim().chars().count();
            if len == 0 || len > 40 {
                errors.push(FieldError::new(format!("interests[{i}]"), "must be 1 to 40 characters, not blank"));
            }
        }
        for (name, value) in [("budget_min", self.budget_min), ("budget_max", self.budget_max)] {
            if let Some(v) = value
                && (!v.is_finite() || !(0.0..=Self::MAX_BUDGET).contains(&v))
            {
                errors.push(FieldError::new(name, format!("must be a number from 0 to {}", Self::MAX_BUDGET)));
            }
        }
        if let (Some(min), Some(max)) = (self.budget_min, self.budget_max) {
            // Compare in minor units, as the query runs: 50.004 and 50.001 are both 5000 cents.
            if let (Some(min_minor), Some(max_minor)) = (self.currency.to_minor(min), self.currency.to_minor(max))
                && min_minor > max_minor
            {
                errors.push(FieldError::new(
                    "budget_min",
                    format!("budget_min ({min}) is greater than budget_max ({max})"),
                ));
            }
        }
        if let Some(limit) = self.limit
            && !(1..=12).contains(&limit)
        {
            errors.push(FieldError::new("limit", format!("must be between 1 and 12 (got {limit})")));
        }
        if let Some(about) = &self.about {
            check_about(about, &mut errors);
        }
        if errors.is_empty() { Ok(()) } else { Err(errors) }
    }
}

/// Checks `about`: at most [`SuggestGiftsInput::MAX_ABOUT_CHARS`] characters of one-line plain
/// text (a line break at either end is trimmed away like blanks, so it is let through). The messages never quote the text: an error's field messages are read by the model and
/// may reach a log, and what the user said about someone goes to neither.
fn check_about(about: &str, errors: &mut Vec<FieldError>) {
    let max = SuggestGiftsInput::MAX_ABOUT_CHARS;
    let len = about.chars().count();
    if len > max {
        errors.push(FieldError::broke(
            "about",
            too_long(max),
            format!("must have at most {max} characters (got {len}); keep what matters about the recipient"),
        ));
    } else if about.trim().chars().any(char::is_control) {
        errors.push(FieldError::broke(
            "about",
            FieldRule::OneLine,
            "must be one line of plain text: no line breaks, tabs or other control characters",
        ));
    }
}

/// The normalized query a `suggest_gifts` call ran (also the `attempted` of its errors).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestGiftsQuery {
    pub relationship_type: RelationshipType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<u8>,
    #[serde(default)]
    pub interests: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_min: Option<Money>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_max: Option<Money>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occasion: Option<Occasion>,
    pub currency: Currency,
    pub limit: u8,
}

/// A store that sells gifts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Merchant {
    pub id: String,
    pub name: String,
}

/// One suggested gift, as the widget shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GiftCard {
    /// Stable catalog id; pass it to prepare_order.
    pub id: String,
    pub title: String,
    pub description: String,
    pub price: Money,
    pub merchant: Merchant,
    pub tags: Vec<String>,
    /// Why this gift fits this request, most specific first; none is shared by every card of a
    /// result (such filler is left out), none is on more than two cards, and each card has one
    /// of its own where anything tells it apart.
    pub reasons: Vec<Reason>,
    pub in_stock: bool,
    /// Picture served by the GiftGenius server itself.
    pub image_url: String,
}

/// Why one gift fits this request: `text` in English (what the model reads), `why` the same fact in parts,
/// so the widget can say it in the person's language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reason {
    pub text: String,
    pub why: Why,
}

/// The fact behind a `Reason`, in parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Why {
    /// One asked interest matched, through one of the gift's tags (`term` = that tag) or a word of its title or description (`term` = that word).
    Interest { interest: String, via: MatchVia, term: String },
    /// No gift met any asked interest, and this one is only the nearest we have to `interest`:
    /// through `term`, a word near it in meaning (a tag, or the gift's short name for `title`,
    /// or a word of its description). Never a match; the answer's notice says nothing fits.
    Nearest { interest: String, via: MatchVia, term: String },
    /// How the price sits in the asked maximum: `left` = budget_max − price.
    Budget { price: Money, budget_max: Money, left: Money },
    /// The gift's own age range, given only when it distinguishes the gift.
    Age { age_min: u8, age_max: u8 },
    /// The gift suits the asked relationship, given only when that distinguishes it.
    Relationship { relationship: RelationshipType },
    /// The gift suits the asked occasion, given only when that distinguishes it.
    Occasion { occasion: Occasion },
    /// Nothing more specific: one of the gift's tags, the first that says something no other
    /// card of the result says, where it has one.
    Popular { tag: String },
    /// What sets the gift apart from the others shown: a tag no other card of the result has.
    OnlyTag { tag: String },
    /// Its price, when nothing else tells this card apart (the last thing a card may say).
    Price { price: Money },
}

/// Where an interest matched a gift.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchVia {
    Tag,
    Title,
    Description,
}

/// The data of a successful `suggest_gifts` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestGiftsData {
    /// The request as understood.
    pub query: SuggestGiftsQuery,
    /// Best first. Empty when nothing matched (see `notice`).
    pub gifts: Vec<GiftCard>,
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn with_about(about: &str) -> SuggestGiftsInput {
        SuggestGiftsInput {
            about: Some(about.to_string()),
            ..SuggestGiftsInput::for_relationship(RelationshipType::Friend)
        }
    }

    fn about_errors(about: &str) -> Vec<FieldError> {
        with_about(about).validate().err().unwrap_or_default()
    }

    #[test]
    fn about_is_trimmed_and_blank_is_absent() {
        assert_eq!(with_about("  loves her balcony garden \n").about(), Some("loves her balcony garden"));
        for blank in ["", "   ", "\n", " \t \r\n "] {
            assert_eq!(with_about(blank).about(), None, "{blank:?}");
            assert!(with_about(blank).validate().is_ok(), "{blank:?} counts as absent");
        }
        assert_eq!(SuggestGiftsInput::for_relationship(RelationshipType::Friend).about(), None);
    }

    #[test]
    fn about_counts_characters_not_bytes() {
        // 300 three-byte characters (900 bytes) are within the limit; 301 are not.
        assert!(about_errors(&"é".repeat(300)).is_empty());
        assert!(about_errors(&"€".repeat(300)).is_empty());
        let errors = about_errors(&"€".repeat(301));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].field, "about");
        assert_eq!(errors[0].rule, Some(FieldRule::TooLong { max: 300 }));
        assert!(errors[0].message.starts_with("must have at most 300 characters (got 301)"), "{}", errors[0].message);
    }

    #[test]
    fn about_must_be_one_line_of_plain_text() {
        for bad in ["likes jazz\nand cats", "tab\there", "bell\u{7}", "nul\u{0}", "del\u{7f}", "c1\u{85}x"] {
            let errors = about_errors(bad);
            assert_eq!(errors.len(), 1, "{bad:?}: {errors:?}");
            assert_eq!(errors[0].field, "about");
            assert_eq!(errors[0].rule, Some(FieldRule::OneLine), "{bad:?}");
        }
        assert!(about_errors("Ana, 34: runs marathons, “loves” café culture — 🏃‍♀️☕").is_empty());
    }

    #[test]
    fn about_errors_never_quote_the_text() {
        let marker = "ZQX-private-words";
        for about in [format!("{marker}\n"), format!("a\n{marker}"), format!("{marker}{}", "x".repeat(300))] {
            for error in about_errors(&about) {
                assert!(!error.message.contains(marker), "{error:?}");
            }
        }
    }

    #[test]
    fn about_stays_out_of_the_normalized_query() {
        let marker = "ZQX-private-words";
        let query = with_about(marker).normalize();
        let echoed = serde_json::to_string(&query).unwrap();
        assert!(!echoed.contains(marker), "{echoed}");
        assert!(!echoed.contains("about"), "{echoed}");
    }

    proptest! {
        /// Any text at all: validation and trimming answer, never panic, and a text the rules
        /// accept is at most 300 characters of one line.
        #[test]
        fn any_about_is_checked_without_panicking(about in any::<String>()) {
            let input = with_about(&about);
            let verdict = input.validate();
            let _ = input.about();
            if verdict.is_ok() {
                prop_assert!(about.chars().count() <= SuggestGiftsInput::MAX_ABOUT_CHARS);
                prop_assert!(input.about().is_none_or(|a| !a.chars().any(char::is_control)));
            }
        }
    }
}
