//! Which rule a field broke, in parts: what the widget says in the person's language.
//!
//! A [`FieldError`](crate::FieldError)'s `message` is English and written for the model (it
//! reads it in `structuredContent` and in the result's text). The person reads the same problem
//! in the widget, in English, Spanish or Portuguese: the widget's catalog has one sentence per
//! rule (`giftgenius_words::i18n`, keys `FieldRule*`) and fills in the parts below, so no
//! translated text travels in the result and the server never writes a language but English.
//! Only the rules a person can break in the widget's delivery form carry one; any other field
//! error has `rule: null` and the widget says "check this field".

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The broken rule; the field names are the placeholders of the widget's sentences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum FieldRule {
    /// Left empty, and required.
    Required,
    /// Longer than `max` characters.
    TooLong { max: u32 },
    /// A control character (a line break) in a one-line field.
    OneLine,
    /// Not an ISO 3166-1 alpha-2 country code.
    CountryCode,
    /// `country` needs a state or province code; `example` is one of them.
    RegionRequired { country: String, example: String },
    /// Not a state or province code of `country`.
    RegionUnknown { country: String, example: String },
    /// `country` needs a postal code.
    PostalCodeRequired { country: String },
    /// Not a postal code of the shape `country` uses, e.g. `example`.
    PostalCodeShape { country: String, example: String },
    /// A postal code of a country whose shape is not checked: 2 to 12 letters, digits, spaces or hyphens.
    PostalCodeChars,
    /// More than `max` lines.
    TooManyLines { max: u32 },
    /// Control characters other than line breaks.
    PlainText,
    /// No recipient to deliver to (no address given and none saved).
    RecipientMissing,
}
