//! `suggest_gifts`: its input, the normalized query we actually ran, and the gift cards.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::{FieldError, Validate};
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
}

impl SuggestGiftsInput {
    pub const DEFAULT_LIMIT: usize = 6;
    pub const MAX_INTERESTS: usize = 10;
    pub const MAX_BUDGET: f64 = 1_000_000.0;

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
        }
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
        if errors.is_empty() { Ok(()) } else { Err(errors) }
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
