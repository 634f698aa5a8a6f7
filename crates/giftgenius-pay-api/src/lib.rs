//! The SANDBOX payment provider's wire contract, shared by the provider
//! (`giftgenius-sandbox-pay`) and the app's client of it (`giftgenius-server`), so the app
//! speaks the provider's API without linking the provider:
//!
//! - `api`: the HTTP API as types (Stripe-shaped): charges, refunds, settings, errors, paths.
//! - `token`: the secrets a request shows (the admin secret, the delegate key), read from files
//!   and compared in constant time.
//! - `delegate`: the ACP delegated-payment endpoint's path, versions and times.
//! - `loopback`: whether a request comes from this machine and names it.

pub mod api;
pub mod delegate;
pub mod loopback;
pub mod token;
