//! Saved cards at Stripe, for the hosted card page (`http::card_page`) and the confirm card.
//!
//! - **Which card pays**: the Customer's `invoice_settings.default_payment_method` when it is
//!   still one of the Customer's cards, else the first card Stripe lists. The card page makes
//!   the card it saved the default, so the card a person saved last is the one charged, and the
//!   confirm card shows that one.
//! - **Saving**: a SetupIntent (`customer`, `usage=off_session`, `payment_method_types[]=card`)
//!   confirmed in the browser by Stripe.js (`confirmCardSetup`): the card number goes from the
//!   browser to Stripe only. When the page comes back, we read the SetupIntent from Stripe with
//!   our secret key — its Customer must be ours and its status `succeeded` — attach its
//!   PaymentMethod to the Customer (Stripe has done so already; localstripe does not, and
//!   attaching a card to the Customer it belongs to changes nothing) and make it the default.
//!   Nothing the browser says is taken as true: the page shows what Stripe answers. A SetupIntent
//!   is created only after the person confirmed on the page that the account is theirs, and says
//!   so in its metadata ([`ACCOUNT_CONFIRMED`]); one without it (made by anyone else with our
//!   key, or before that check existed) saves nothing.
//! - **Removing**: every card of the Customer detached (`POST /v1/payment_methods/{id}/detach`);
//!   removing none is a success, so the request is idempotent.

use super::wire::{self, List};
use super::{StripeClient, unavailable};
use crate::payments::PaymentError;

/// The SetupIntent metadata key saying the person confirmed the account was theirs.
pub const ACCOUNT_CONFIRMED: &str = "giftgenius_account_confirmed";

/// A saved card as it may be shown: the brand (`visa`) and last four digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedCard {
    pub id: String,
    pub brand: String,
    pub last4: String,
}

impl SavedCard {
    fn of(method: &wire::PaymentMethod) -> SavedCard {
        let (brand, last4) = match &method.card {
            Some(card) => (card.brand.clone(), card.last4.clone()),
            None => (String::new(), String::new()),
        };
        SavedCard { id: method.id.clone(), brand, last4 }
    }
}

/// A SetupIntent created for the card page: what Stripe.js confirms.
#[derive(Debug, Clone)]
pub struct Setup {
    pub id: String,
    pub client_secret: String,
}

/// Why a finished SetupIntent was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupRefused {
    /// Not this Customer's, not succeeded, or without a card: nothing saved.
    NotSaved,
    Unavailable(PaymentError),
}

impl StripeClient {
    /// `customer`'s cards, in Stripe's order.
    async fn cards(&self, customer: &str) -> Result<Vec<wire::PaymentMethod>, PaymentError> {
        let cards: List<wire::PaymentMethod> =
            self.get("/v1/payment_methods", &[("customer", customer), ("type", "card"), ("limit", "100")]).await?;
        Ok(cards.data)
    }

    /// The card a charge of `customer` uses (see the module doc), if any.
    pub async fn card_to_charge(&self, customer: &str) -> Result<Option<SavedCard>, PaymentError> {
        let cards = self.cards(customer).await?;
        if cards.is_empty() {
            return Ok(None);
        }
        let path = format!("/v1/customers/{}", encode(customer));
        let found: wire::Customer = self.get(&path, &[]).await?;
        let default = found.invoice_settings.and_then(|s| s.default_payment_method).map(|pm| pm.id().to_string());
        let chosen = default.and_then(|id| cards.iter().find(|card| card.id == id)).or(cards.first());
        Ok(chosen.map(SavedCard::of))
    }

    /// The card `subject` would be charged with, without creating a Customer.
    pub async fn saved_card_of(&self, subject: &str) -> Result<Option<SavedCard>, PaymentError> {
        match self.known_customer(subject).await? {
            Some(customer) => self.card_to_charge(&customer).await,
            None => Ok(None),
        }
    }

    /// A SetupIntent for `customer` to save one card for charges made without them
    /// (`usage=off_session`), under `key` (the same link makes the same one at Stripe), once the
    /// person confirmed the account is theirs (the card page checks that first).
    pub async fn create_setup(&self, customer: &str, key: &str) -> Result<Setup, PaymentError> {
        let confirmed = format!("metadata[{ACCOUNT_CONFIRMED}]");
        let fields = [
            ("customer", customer),
            ("usage", "off_session"),
            ("payment_method_types[]", "card"),
            (confirmed.as_str(), "true"),
        ];
        let response = self
            .post("/v1/setup_intents", Some(key), &fields)
            .await
            .map_err(|e| unavailable("setup request failed", e.without_url()))?;
        if !response.status().is_success() {
            return Err(unavailable("setup refused", response.status()));
        }
        let setup: wire::SetupIntent =
            response.json().await.map_err(|e| unavailable("setup answer unreadable", e.without_url()))?;
        match setup.client_secret {
            Some(secret) if !secret.is_empty() => Ok(Setup { id: setup.id, client_secret: secret }),
            _ => Err(unavailable("setup answer", "no client_secret")),
        }
    }

    /// Takes the card `setup_id` saved for `customer`, as Stripe reports it (see the module
    /// doc): attached, made the default, and returned as it may be shown.
    pub async fn finish_setup(&self, customer: &str, setup_id: &str) -> Result<SavedCard, SetupRefused> {
        let plausible = setup_id.starts_with("seti_")
            && setup_id.len() <= 100
            && setup_id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !plausible {
            return Err(SetupRefused::NotSaved);
        }
        let setup: wire::SetupIntent = match self.get(&format!("/v1/setup_intents/{setup_id}"), &[]).await {
            Ok(setup) => setup,
            // A made-up id is a 404 at Stripe, which `get` reports as unavailable: either way nothing is saved.
            Err(_) => return Err(SetupRefused::NotSaved),
        };
        let confirmed = setup.metadata.get(ACCOUNT_CONFIRMED).map(String::as_str) == Some("true");
        let method = match (&setup.customer, setup.status.as_str(), &setup.payment_method) {
            (Some(owner), "succeeded", Some(method)) if owner == customer && confirmed => method.id().to_string(),
            _ => return Err(SetupRefused::NotSaved),
        };
        let attach = format!("/v1/payment_methods/{}/attach", encode(&method));
        let attached = self
            .post(&attach, None, &[("customer", customer)])
            .await
            .map_err(|e| SetupRefused::Unavailable(unavailable("attach failed", e.without_url())))?;
        if !attached.status().is_success() {
            return Err(SetupRefused::Unavailable(unavailable("attach refused", attached.status())));
        }
        let card: wire::PaymentMethod = attached
            .json()
            .await
            .map_err(|e| SetupRefused::Unavailable(unavailable("attach answer unreadable", e.without_url())))?;
        let path = format!("/v1/customers/{}", encode(customer));
        let updated = self
            .post(&path, None, &[("invoice_settings[default_payment_method]", &method)])
            .await
            .map_err(|e| SetupRefused::Unavailable(unavailable("default card request failed", e.without_url())))?;
        if !updated.status().is_success() {
            return Err(SetupRefused::Unavailable(unavailable("default card refused", updated.status())));
        }
        Ok(SavedCard::of(&card))
    }

    /// Detaches every card of `subject`'s Customer; how many were detached (0: none was saved).
    pub async fn remove_cards(&self, subject: &str) -> Result<usize, PaymentError> {
        let Some(customer) = self.known_customer(subject).await? else { return Ok(0) };
        let cards = self.cards(&customer).await?;
        for card in &cards {
            let path = format!("/v1/payment_methods/{}/detach", encode(&card.id));
            let response =
                self.post(&path, None, &[]).await.map_err(|e| unavailable("detach request failed", e.without_url()))?;
            if !response.status().is_success() {
                return Err(unavailable("detach refused", response.status()));
            }
        }
        Ok(cards.len())
    }
}

/// An id as one path segment.
fn encode(id: &str) -> String {
    url::form_urlencoded::byte_serialize(id.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_card_reads_expanded_or_as_an_id() {
        let id_of = |value: &wire::IdOr<wire::PaymentMethod>| value.id().to_string();
        let bare: wire::Customer =
            serde_json::from_str(r#"{"id":"cus_1","invoice_settings":{"default_payment_method":"pm_1"}}"#).unwrap();
        assert_eq!(id_of(bare.invoice_settings.unwrap().default_payment_method.as_ref().unwrap()), "pm_1");
        let none: wire::Customer =
            serde_json::from_str(r#"{"id":"cus_1","invoice_settings":{"default_payment_method":null}}"#).unwrap();
        assert!(none.invoice_settings.unwrap().default_payment_method.is_none());
        let card: wire::PaymentMethod =
            serde_json::from_str(r#"{"id":"pm_1","customer":"cus_1","card":{"brand":"visa","last4":"4242"}}"#).unwrap();
        assert_eq!(SavedCard::of(&card), SavedCard { id: "pm_1".into(), brand: "visa".into(), last4: "4242".into() });
    }
}
