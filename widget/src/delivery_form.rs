//! Reads the confirm card's delivery form (see `view/delivery.rs`) into [`DeliveryDetails`].
//!
//! The inputs are plain, uncontrolled DOM inputs: typing does not re-render the card (which would
//! lose the caret), and a button reads them when clicked. Whether anything was edited is the
//! DOM's own answer: a value that differs from the default the card was rendered with.
//! Natively (SSR) there is no DOM and nothing to read.

use giftgenius_types::delivery::{Address, DeliveryDetails, Recipient};

/// The form's values as entered, and whether any differs from what the card showed.
#[derive(Debug, Clone, PartialEq)]
pub struct FormValues {
    pub details: DeliveryDetails,
    pub changed: bool,
}

/// Builds the details from `(field path, value)` pairs; empty optional parts are left out and
/// required ones kept empty, so the server names what is missing.
pub fn details_from(get: impl Fn(&str) -> String, save_address: bool) -> DeliveryDetails {
    let opt = |name: &str| Some(get(name).trim().to_string()).filter(|s| !s.is_empty());
    DeliveryDetails {
        recipient: Recipient {
            name: get("recipient.name").trim().to_string(),
            address: Address {
                line1: get("recipient.address.line1").trim().to_string(),
                line2: opt("recipient.address.line2"),
                city: get("recipient.address.city").trim().to_string(),
                region: opt("recipient.address.region"),
                postal_code: opt("recipient.address.postal_code"),
                // ISO 3166 codes are ASCII (the server refuses anything else); `to_uppercase` would bring
                // Unicode case tables into the wasm.
                country: get("recipient.address.country").trim().to_ascii_uppercase(),
            },
        },
        gift_message: opt(crate::view::delivery::GIFT_MESSAGE),
        save_address,
        from_saved_address: false,
    }
}

/// The values in the page's delivery form, if there is one.
#[cfg(target_arch = "wasm32")]
pub fn read() -> Option<FormValues> {
    use crate::view::delivery::{GIFT_MESSAGE, SAVE_ADDRESS, field_id, text_field_names};
    use std::cell::Cell;
    use wasm_bindgen::JsCast;
    let document = web_sys::window()?.document()?;
    document.get_element_by_id("gg-delivery-form")?;
    let changed = Cell::new(false);
    let get = |name: &str| -> String {
        let Some(el) = document.get_element_by_id(&field_id(name)) else { return String::new() };
        if let Some(input) = el.dyn_ref::<web_sys::HtmlInputElement>() {
            if input.value() != input.default_value() {
                changed.set(true);
            }
            return input.value();
        }
        if let Some(area) = el.dyn_ref::<web_sys::HtmlTextAreaElement>() {
            if Ok(area.value()) != area.default_value().map_err(|_| ()) {
                changed.set(true);
            }
            return area.value();
        }
        String::new()
    };
    for name in text_field_names().chain([GIFT_MESSAGE]) {
        get(name);
    }
    let save = document
        .get_element_by_id(&field_id(SAVE_ADDRESS))
        .and_then(|el| el.dyn_into::<web_sys::HtmlInputElement>().ok())
        .map(|b| {
            if b.checked() != b.default_checked() {
                changed.set(true);
            }
            b.checked()
        })
        .unwrap_or(false);
    let details = details_from(get, save);
    Some(FormValues { details, changed: changed.get() })
}

/// No DOM natively: SSR output is never clicked.
#[cfg(not(target_arch = "wasm32"))]
pub fn read() -> Option<FormValues> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_optional_parts_are_left_out_and_required_ones_kept_for_the_server_to_name() {
        let d = details_from(
            |name| match name {
                "recipient.name" => " Ana ".into(),
                "recipient.address.city" => "Porto".into(),
                "recipient.address.country" => "pt".into(),
                "recipient.address.postal_code" => "4000-001".into(),
                _ => "  ".into(),
            },
            true,
        );
        assert_eq!(d.recipient.name, "Ana");
        assert_eq!(d.recipient.address.line1, "", "required: kept, so the server says it is missing");
        assert_eq!(d.recipient.address.line2, None);
        assert_eq!(d.recipient.address.country, "PT");
        assert_eq!(d.gift_message, None);
        assert!(d.save_address && !d.from_saved_address);
    }
}
