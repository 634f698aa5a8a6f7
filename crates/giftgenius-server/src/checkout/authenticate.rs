//! The server side of the hosted 3-D Secure page (issue 26 item 3). When the card's bank asks
//! the person to confirm an off-session payment, `commit_order` answers with the order
//! `awaiting_authentication` and, in the widget's `_meta` only ([`META_AUTHENTICATION_URLS`]),
//! the page's link `{public}/pay/authenticate/{order id}.{tag}` (`permalink.rs`: an HMAC
//! capability under its own purpose, nothing stored per order).
//!
//! The page (`GET /pay/authenticate/{token}`, rendered by the hosted pages) asks
//! [`Checkout::authentication_page`] what to show: the provider's payment, its client secret and
//! the publishable key for Stripe.js `confirmCardPayment`, or the order's status once it no
//! longer waits. The browser's word never pays an order: after the page completes, it may call
//! [`Checkout::settle_authentication`], which asks the provider (Stripe's word) and settles the
//! order as the reconciler would; a verified webhook or the reconciler's pass does the same.
//!
//! [`META_AUTHENTICATION_URLS`]: giftgenius_types::wire::META_AUTHENTICATION_URLS

use giftgenius_types::Order;

use super::Checkout;
use giftgenius_commerce::order;
use giftgenius_commerce::payments::{Authentication, PaymentError};
use giftgenius_commerce::store::StoreError;

/// What the hosted authentication page shows for a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthenticationPage {
    /// The token is not one of ours, or its order is gone: a plain "link not valid" page.
    Unknown,
    /// The order no longer waits for the person's bank (paid, declined, given up): its status.
    Settled(Box<Order>),
    /// Load the provider's script with `authentication.publishable_key` and complete
    /// `authentication.payment` with `authentication.client_secret` (Stripe.js
    /// `confirmCardPayment(client_secret)`).
    Ready { order: Box<Order>, authentication: Authentication },
    /// The provider did not answer (or does not authenticate payments): "try again shortly".
    Unavailable,
}

impl Checkout {
    /// Settles pending orders on the provider's word, as the reconciler does.
    pub fn settler(&self) -> super::reconcile::Settler {
        super::reconcile::Settler {
            store: self.store.clone(),
            payments: self.payments.clone(),
            clock: self.clock.clone(),
            events: self.events.clone(),
        }
    }

    /// The order a hosted authentication page's token names, if the token is ours.
    async fn authentication_order(&self, token: &str) -> Result<Option<order::Order>, StoreError> {
        let Some(order_id) = self.permalinks.authentication_order(token) else { return Ok(None) };
        self.store.order_by_id(order_id).await
    }

    /// What `GET /pay/authenticate/{token}` shows: see [`AuthenticationPage`].
    pub async fn authentication_page(&self, token: &str) -> Result<AuthenticationPage, StoreError> {
        let Some(row) = self.authentication_order(token).await? else { return Ok(AuthenticationPage::Unknown) };
        let order = Box::new(self.order_view(&row).await?);
        let payment = match row.payment_ref.as_deref() {
            Some(payment) if row.awaits_authentication() => payment,
            _ => return Ok(AuthenticationPage::Settled(order)),
        };
        match self.payments.authentication(payment).await {
            Ok(Some(authentication)) => Ok(AuthenticationPage::Ready { order, authentication }),
            Ok(None) => Ok(AuthenticationPage::Unavailable),
            Err(e) => {
                tracing::warn!(order = row.id, error = ?e, "the provider did not give the payment's authentication");
                Ok(AuthenticationPage::Unavailable)
            }
        }
    }

    /// After the page says the person confirmed: asks the provider what happened to the order's
    /// payment and settles it on the provider's word (paid, declined, or still waiting), like
    /// the reconciler's pass; answers the page's next view. The browser's claim alone changes
    /// nothing.
    pub async fn settle_authentication(&self, token: &str) -> Result<AuthenticationPage, StoreError> {
        let Some(row) = self.authentication_order(token).await? else { return Ok(AuthenticationPage::Unknown) };
        if row.awaits_authentication() {
            match self.settler().settle(&row).await {
                Ok(_) => {}
                Err(super::reconcile::SettleError::Store(e)) => return Err(e),
                Err(super::reconcile::SettleError::Provider(PaymentError::Unavailable(_))) => {
                    return Ok(AuthenticationPage::Unavailable);
                }
                Err(super::reconcile::SettleError::Provider(e)) => {
                    tracing::error!(order = row.id, error = ?e, "the provider's payment is not the order's");
                }
            }
        }
        self.authentication_page(token).await
    }
}
