//! The confirm card's delivery form: every detail of where the gift goes, editable before Confirm.
//!
//! Each input's `name` is the field path the server's field errors use
//! (`recipient.address.postal_code`, `gift_message`…), so the runtime shows an error next to
//! its field, and it reads the form into a call's arguments by those names (a `form` call). The
//! values the card was rendered with are the inputs' default values: a field whose value differs
//! from its default was edited (Confirm then makes its `edited` call).
//!
//! Each input and the textarea holding a detail is marked `data-private`: the runtime
//! empties every such element (its `value` attribute and its text) in the copy of the screen it
//! writes to the host's widget state, which the model can read.

use giftgenius_types::delivery::{Address, DeliveryDetails, MAX_GIFT_MESSAGE_CHARS};
use leptos::prelude::*;

use crate::i18n::{Lang, Msg};

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
/// The field paths of the gift options' checkboxes (prepare_order's arguments).
pub const GIFT_WRAP: &str = "gift_wrap";
pub const GIFT_RECEIPT: &str = "gift_receipt";

/// The gift options the card offers and what the draft has: the wrap (its price per gift, shown
/// in the person's format; `None` where the merchant does not wrap) and the gift receipt. They
/// are not personal, so not `data-private`.
pub struct GiftOptions {
    pub wrap_price: Option<String>,
    pub wrap: bool,
    pub receipt: bool,
}

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

/// The form with the shown details. A refused field's message is put next to it by the runtime
/// (from the error's markup, `view/error.rs`), which marks the field `data-invalid` and its input
/// `aria-invalid`.
pub fn delivery_form(delivery: Option<DeliveryDetails>, gift: GiftOptions, lang: Lang) -> impl IntoView {
    let inputs = FIELDS
        .iter()
        .map(|field| {
            let id = field_id(field.name);
            view! {
                <div class="gg-field" data-invalid="false">
                    <label for=id.clone()>{lang.t(field.label)}</label>
                    <input
                        type="text"
                        id=id
                        name=field.name
                        autocomplete=field.autocomplete
                        value=value_of(delivery.as_ref(), field.name)
                        data-private=""
                        aria-invalid="false"
                        aria-required=field.required.then_some("true")
                    />
                </div>
            }
        })
        .collect_view();
    let message = delivery.as_ref().and_then(|d| d.gift_message.clone()).unwrap_or_default();
    let save = delivery.as_ref().is_some_and(|d| d.save_address);
    let from_saved = delivery.as_ref().is_some_and(|d| d.from_saved_address).then(|| {
        view! { <p class="gg-muted gg-fine gg-from-saved">{lang.t(Msg::SavedAddress)}</p> }
    });
    let wrap = gift.wrap_price.map(|price| {
        view! {
            <label class="gg-check">
                <input type="checkbox" id=field_id(GIFT_WRAP) name=GIFT_WRAP checked=gift.wrap/>
                " "{lang.f(Msg::GiftWrapOffer, &[("price", &price)])}
            </label>
        }
    });
    view! {
        <fieldset class="gg-delivery" id="gg-delivery-form">
            <legend>{lang.t(Msg::DeliverTo)}</legend>
            {from_saved}
            {inputs}
            <div class="gg-field" data-invalid="false">
                <label for=field_id(GIFT_MESSAGE)>{lang.f(Msg::GiftMessageLabel, &[("max", &MAX_GIFT_MESSAGE_CHARS.to_string())])}</label>
                <textarea
                    id=field_id(GIFT_MESSAGE)
                    name=GIFT_MESSAGE
                    rows="3"
                    maxlength=MAX_GIFT_MESSAGE_CHARS.to_string()
                    aria-invalid="false"
                    data-private=""
                >
                    {message}
                </textarea>
            </div>
            {wrap}
            <label class="gg-check">
                <input type="checkbox" id=field_id(GIFT_RECEIPT) name=GIFT_RECEIPT checked=gift.receipt/>
                " "{lang.t(Msg::GiftReceipt)}
            </label>
            <label class="gg-check">
                <input type="checkbox" id=field_id(SAVE_ADDRESS) name=SAVE_ADDRESS checked=save/>
                " "{lang.t(Msg::SaveAddress)}
            </label>
        </fieldset>
    }
}
