//! The confirm card's delivery form: every detail of where the gift goes, editable before Confirm.
//!
//! Each input's `name` is the field path the server's field errors use
//! (`recipient.address.postal_code`, `gift_message`…), so an error is shown next to its field,
//! and the runtime reads the form into a call's arguments by those names (a `form` call). The
//! values the card was rendered with are the inputs' default values: a field whose value differs
//! from its default was edited (Confirm then makes its `edited` call).
//!
//! Each input and the textarea holding a detail is marked `data-private`: the runtime
//! empties every such element (its `value` attribute and its text) in the copy of the screen it
//! writes to the host's widget state, which the model can read.

use giftgenius_types::delivery::{Address, DeliveryDetails, MAX_GIFT_MESSAGE_CHARS};
use giftgenius_types::{FieldError, ToolError};
use leptos::prelude::*;

use crate::i18n::{Lang, Msg};
use crate::view::error::field_message;

/// One input of the form: its field path and label.
struct Field {
    name: &'static str,
    label: Msg,
    autocomplete: &'static str,
    /// Sent even when empty (so the server names it as missing); an empty optional one is left out.
    required: bool,
}

/// The form's text inputs, in the order a postal address is read.
const FIELDS: [Field; 7] = [
    Field { name: "recipient.name", label: Msg::FieldName, autocomplete: "name", required: true },
    Field { name: "recipient.address.line1", label: Msg::FieldLine1, autocomplete: "address-line1", required: true },
    Field { name: "recipient.address.line2", label: Msg::FieldLine2, autocomplete: "address-line2", required: false },
    Field { name: "recipient.address.city", label: Msg::FieldCity, autocomplete: "address-level2", required: true },
    Field {
        name: "recipient.address.region",
        label: Msg::FieldRegion,
        autocomplete: "address-level1",
        required: false,
    },
    Field {
        name: "recipient.address.postal_code",
        label: Msg::FieldPostalCode,
        autocomplete: "postal-code",
        required: false,
    },
    Field { name: "recipient.address.country", label: Msg::FieldCountry, autocomplete: "country", required: true },
];

/// The field path of the gift message textarea.
pub const GIFT_MESSAGE: &str = "gift_message";
/// The field path of the "save this address" checkbox.
pub const SAVE_ADDRESS: &str = "save_address";

/// The element id of the input for `name` (`recipient.address.city` → `gg-field-recipient-address-city`).
pub fn field_id(name: &str) -> String {
    format!("gg-field-{}", name.replace('.', "-"))
}

/// Every text field's path, for the form readers.
pub fn text_field_names() -> impl Iterator<Item = &'static str> {
    FIELDS.iter().map(|f| f.name)
}

fn value_of(delivery: Option<&DeliveryDetails>, name: &str) -> String {
    let Some(d) = delivery else { return String::new() };
    let a: &Address = &d.recipient.address;
    let value = match name {
        "recipient.name" => Some(&d.recipient.name),
        "recipient.address.line1" => Some(&a.line1),
        "recipient.address.line2" => a.line2.as_ref(),
        "recipient.address.city" => Some(&a.city),
        "recipient.address.region" => a.region.as_ref(),
        "recipient.address.postal_code" => a.postal_code.as_ref(),
        "recipient.address.country" => Some(&a.country),
        _ => None,
    };
    value.cloned().unwrap_or_default()
}

/// The messages of the field errors about `name`.
fn errors_for<'a>(error: Option<&'a ToolError>, name: &'a str) -> impl Iterator<Item = &'a FieldError> + 'a {
    error.into_iter().flat_map(|e| e.field_errors.iter()).filter(move |f| f.field == name)
}

/// The form with the shown details and the server's field errors next to their fields.
pub fn delivery_form(
    delivery: Option<DeliveryDetails>,
    error: Option<ToolError>,
    busy: bool,
    lang: Lang,
) -> impl IntoView {
    let error = error.as_ref();
    let whole = errors_for(error, "recipient")
        .map(|f| view! { <p class="gg-field-error" data-field="recipient">{field_message(lang, f)}</p> })
        .collect_view();
    let inputs = FIELDS
        .iter()
        .map(|field| {
            let id = field_id(field.name);
            let err_id = format!("{id}-error");
            let messages: Vec<String> = errors_for(error, field.name).map(|f| field_message(lang, f)).collect();
            let invalid = !messages.is_empty();
            let note = invalid.then(|| {
                view! { <p class="gg-field-error" id=err_id.clone() data-field=field.name>{messages.join("; ")}</p> }
            });
            view! {
                <div class="gg-field" data-invalid=invalid.to_string()>
                    <label for=id.clone()>{lang.t(field.label)}</label>
                    <input
                        type="text"
                        id=id
                        name=field.name
                        autocomplete=field.autocomplete
                        value=value_of(delivery.as_ref(), field.name)
                        data-private=""
                        aria-invalid=invalid.to_string()
                        aria-required=field.required.then_some("true")
                        aria-describedby=invalid.then_some(err_id)
                        disabled=busy
                    />
                    {note}
                </div>
            }
        })
        .collect_view();
    let message = delivery.as_ref().and_then(|d| d.gift_message.clone()).unwrap_or_default();
    let message_errors: Vec<String> = errors_for(error, GIFT_MESSAGE).map(|f| field_message(lang, f)).collect();
    let message_invalid = !message_errors.is_empty();
    let message_note = message_invalid.then(|| {
        view! { <p class="gg-field-error" id="gg-field-gift_message-error" data-field=GIFT_MESSAGE>{message_errors.join("; ")}</p> }
    });
    let save = delivery.as_ref().is_some_and(|d| d.save_address);
    let from_saved = delivery.as_ref().is_some_and(|d| d.from_saved_address).then(|| {
        view! { <p class="gg-muted gg-fine gg-from-saved">{lang.t(Msg::SavedAddress)}</p> }
    });
    view! {
        <fieldset class="gg-delivery" id="gg-delivery-form" disabled=busy>
            <legend>{lang.t(Msg::DeliverTo)}</legend>
            {from_saved}
            {whole}
            {inputs}
            <div class="gg-field" data-invalid=message_invalid.to_string()>
                <label for=field_id(GIFT_MESSAGE)>{lang.f(Msg::GiftMessageLabel, &[("max", &MAX_GIFT_MESSAGE_CHARS.to_string())])}</label>
                <textarea
                    id=field_id(GIFT_MESSAGE)
                    name=GIFT_MESSAGE
                    rows="3"
                    maxlength=MAX_GIFT_MESSAGE_CHARS.to_string()
                    aria-invalid=message_invalid.to_string()
                    data-private=""
                    disabled=busy
                >
                    {message}
                </textarea>
                {message_note}
            </div>
            <label class="gg-check">
                <input type="checkbox" id=field_id(SAVE_ADDRESS) name=SAVE_ADDRESS checked=save disabled=busy/>
                " "{lang.t(Msg::SaveAddress)}
            </label>
        </fieldset>
    }
}
