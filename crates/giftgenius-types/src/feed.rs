//! The product feed (ACP 2026-04-17 `openapi.feed.yaml` / `schema.feed.json`): what
//! `giftgenius-server feed export` writes, one [`FeedProduct`] per line of `products.jsonl`
//! and a [`FeedMetadata`] in `metadata.json`, so ChatGPT's shopping search (or any agent that
//! reads ACP feeds) finds our gifts and buys them through our checkout.
//!
//! Each type is closed (`deny_unknown_fields`, as the spec's `additionalProperties: false`) and
//! carries only the fields we fill; the spec's other optional fields (barcodes, unit prices,
//! variant options…) have nothing of ours to say. One gift is one product with one variant,
//! both named by the gift's id: the id an ACP checkout's `line_items[].id` takes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `metadata.json`: the feed resource (`FeedMetadata`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedMetadata {
    pub id: String,
    /// ISO 3166-1 alpha-2, when the feed targets one market.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_country: Option<String>,
    /// RFC 3339: when the export ran.
    pub updated_at: String,
}

/// One line of `products.jsonl` (`Product`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedProduct {
    pub id: String,
    pub title: String,
    pub description: FeedDescription,
    /// The gift's page on our origin (`/gifts/{id}`).
    pub url: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<FeedMedia>,
    pub variants: Vec<FeedVariant>,
}

/// `Variant`: what is bought.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedVariant {
    pub id: String,
    pub title: String,
    pub description: FeedDescription,
    pub url: String,
    pub price: FeedPrice,
    pub availability: FeedAvailability,
    /// The gift's tags, in the merchant's own taxonomy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<FeedCategory>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<FeedMedia>,
    pub seller: FeedSeller,
}

/// `Description`: plain text only (our descriptions are plain).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedDescription {
    pub plain: String,
}

/// `Price`: minor units and an upper-case ISO 4217 code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedPrice {
    #[schemars(range(min = 0))]
    pub amount: i64,
    pub currency: String,
}

/// `Availability`: purchasable now, and the spec's known status words (`in_stock`,
/// `limited_stock`, `out_of_stock`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedAvailability {
    pub available: bool,
    pub status: String,
}

/// `Media`: our own copy of the gift's photo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedMedia {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    pub alt_text: String,
}

/// `Category`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedCategory {
    pub value: String,
    pub taxonomy: String,
}

/// `Seller`: the merchant of record, with our policy pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedSeller {
    pub name: String,
    pub links: Vec<FeedLink>,
}

/// `Link`: `terms_of_service`, `privacy_policy`, `refund_policy`…
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedLink {
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub url: String,
}

/// The body of `PATCH /feeds/{id}/products` (`UpsertProductsRequest`): the products that
/// changed, each whole (the receiver replaces a product by its id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedUpsert {
    pub products: Vec<FeedListing>,
}

/// A product in an upsert: listed as the export lists it, or gone from the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FeedListing {
    Listed(FeedProduct),
    Gone(FeedProductGone),
}

impl FeedListing {
    pub fn id(&self) -> &str {
        match self {
            FeedListing::Listed(product) => &product.id,
            FeedListing::Gone(product) => &product.id,
        }
    }
}

/// A product the catalog no longer holds (`Product` with only what the spec requires): its one
/// variant `discontinued`, under the title it was last listed with. The spec's upsert cannot
/// delete, so this is how a receiver learns a gift is no longer sold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedProductGone {
    pub id: String,
    pub variants: Vec<FeedVariantGone>,
}

/// The variant of a [`FeedProductGone`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedVariantGone {
    pub id: String,
    pub title: String,
    pub availability: FeedAvailability,
}

/// A receiver's answer to an upsert (`UpsertProductsResponse`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedUpsertAccepted {
    pub id: String,
    pub accepted: bool,
}
