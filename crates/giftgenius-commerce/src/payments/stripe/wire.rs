//! The parts of Stripe's API objects we read (PaymentIntent, Charge, Refund, Customer,
//! PaymentMethod, lists and errors), and the form bodies we send. Fields Stripe may add are
//! ignored; a field Stripe documents as "string id, or the object when expanded" takes both.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A PaymentIntent: the one charge attempt of one order (`metadata[order_id]`).
#[derive(Debug, Clone, Deserialize)]
pub struct PaymentIntent {
    pub id: String,
    pub amount: i64,
    pub currency: String,
    /// `succeeded`, `processing`, `requires_payment_method` (a decline), `requires_action`,
    /// `requires_confirmation`, `requires_capture`, `canceled`.
    pub status: String,
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// What lets the hosted page complete it with Stripe.js (never logged, never to the model).
    #[serde(default)]
    pub client_secret: Option<ClientSecret>,
    /// Why the last attempt failed: `authentication_required` (real Stripe's off-session 3-D
    /// Secure answer, the PaymentIntent left in `requires_payment_method`) is not a decline.
    #[serde(default)]
    pub last_payment_error: Option<ApiError>,
}

/// A PaymentIntent's client secret: never in a `Debug` (nor so in a log line).
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct ClientSecret(pub String);

impl std::fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientSecret(…)")
    }
}

/// A Charge, with its PaymentIntent expanded (`expand[]=data.payment_intent`).
#[derive(Debug, Clone, Deserialize)]
pub struct Charge {
    pub id: String,
    #[serde(default)]
    pub payment_intent: Option<IdOr<PaymentIntent>>,
}

/// An id, or the object it names when expanded.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum IdOr<T> {
    Object(Box<T>),
    /// Not expanded (Stripe's default, and a webhook's object).
    Id(String),
}

impl IdOr<PaymentMethod> {
    /// The id, expanded or not.
    pub fn id(&self) -> &str {
        match self {
            IdOr::Object(object) => &object.id,
            IdOr::Id(id) => id,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Refund {
    pub id: String,
    pub amount: i64,
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Customer {
    pub id: String,
    /// Which saved card pays (`default_payment_method`): the one the card page saved last.
    #[serde(default)]
    pub invoice_settings: Option<InvoiceSettings>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct InvoiceSettings {
    #[serde(default)]
    pub default_payment_method: Option<IdOr<PaymentMethod>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PaymentMethod {
    pub id: String,
    /// What may be shown of the card: its brand and last four digits (never the number).
    #[serde(default)]
    pub card: Option<CardDetails>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CardDetails {
    #[serde(default)]
    pub brand: String,
    #[serde(default)]
    pub last4: String,
}

/// A SetupIntent: the hosted card page saves one card into it with Stripe.js.
#[derive(Debug, Clone, Deserialize)]
pub struct SetupIntent {
    pub id: String,
    /// What Stripe.js confirms it with, in the card page only.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// `requires_payment_method`, `requires_action`, `succeeded`, `canceled`, …
    pub status: String,
    #[serde(default)]
    pub customer: Option<String>,
    #[serde(default)]
    pub payment_method: Option<IdOr<PaymentMethod>>,
    #[serde(default)]
    pub metadata: std::collections::HashMap<String, String>,
}

/// A page of a list endpoint.
#[derive(Debug, Clone, Deserialize)]
pub struct List<T> {
    pub data: Vec<T>,
    #[serde(default)]
    pub has_more: bool,
}

/// `{"error": {...}}`. `decline_code` is real Stripe's; localstripe sends `code` only.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ErrorBody {
    #[serde(default)]
    pub error: ApiError,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct ApiError {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub decline_code: Option<String>,
    /// Real Stripe's 402 for a PaymentIntent: the PaymentIntent as it was left.
    #[serde(default)]
    pub payment_intent: Option<Box<PaymentIntent>>,
}

/// An `application/x-www-form-urlencoded` body, as Stripe takes every POST.
pub fn form(fields: &[(&str, &str)]) -> String {
    let mut body = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in fields {
        body.append_pair(name, value);
    }
    body.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_reads_its_payment_intent_expanded_or_as_an_id() {
        let expanded: Charge = serde_json::from_str(
            r#"{"id":"ch_1","payment_intent":{"id":"pi_1","amount":4500,"currency":"eur","status":"succeeded","metadata":{"order_id":"ord_1"}}}"#,
        )
        .unwrap();
        assert!(matches!(expanded.payment_intent, Some(IdOr::Object(pi)) if pi.metadata["order_id"] == "ord_1"));
        let bare: Charge = serde_json::from_str(r#"{"id":"ch_1","payment_intent":"pi_1"}"#).unwrap();
        assert!(matches!(bare.payment_intent, Some(IdOr::Id(id)) if id == "pi_1"));
    }

    #[test]
    fn form_bodies_are_url_encoded() {
        assert_eq!(form(&[("metadata[order_id]", "ord 1&x")]), "metadata%5Border_id%5D=ord+1%26x");
    }
}
