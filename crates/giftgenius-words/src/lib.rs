//! What GiftGenius says, in English, Spanish and Portuguese, and how it writes money: the one
//! source of every text a person reads, used by the widget, the server's pages, ACP's messages
//! and the order events alike.
//!
//! - `i18n`: the languages ([`i18n::Lang`]), the messages ([`i18n::Msg`]) in each, and filling
//!   in their parts.
//! - `format`: money as each language writes it (CLDR's patterns, checked against its cases).
//! - `field_text`: a field error said in the person's language.
//!
//! Plain data and functions over `giftgenius-types`: it builds for wasm32 with the widget.

pub mod field_text;
pub mod format;
pub mod i18n;
