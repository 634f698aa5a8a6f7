//! Strings that cross a process boundary and must be spelled the same on both sides: the
//! widget-only `_meta` keys of tool results, the server routes links point at, and the prefixes
//! of keys the widget derives. Server, widget, packer, preview and tests all use these.

/// Widget-only `_meta` key of a `prepare_order` result: the confirmation token that only the
/// widget's Confirm button may send back. Hosts hand `_meta` to the widget, never to the model.
pub const META_CONFIRMATION_TOKEN: &str = "giftgenius/confirmation_token";

/// Widget-only `_meta` key holding the result's state rendered to HTML by the widget's own
/// components on the server: what the packed document shows before (or without) WebAssembly.
pub const META_HTML: &str = "giftgenius/html";

/// `_meta` key set to `true` on a result that is the stored answer of an earlier call with the
/// same idempotency key.
pub const META_REPLAYED: &str = "giftgenius/replayed";

/// The route of the hosted checkout page; a session's link is `{public_url}{CHECKOUT_PATH}{id}`.
pub const CHECKOUT_PATH: &str = "/checkout/";

/// The route gift pictures are served from: `{public_url}{IMAGES_PATH}{id}.svg` is the lettered
/// tile the server draws; a gift with a catalog photo links `{id}{PHOTO_SUFFIX}` instead (the
/// merchant's photo fetched and resized by the server, the tile when that fails).
pub const IMAGES_PATH: &str = "/images/";

/// End of a gift photo's URL: a square JPEG of [`PHOTO_SIDE`] pixels.
pub const PHOTO_SUFFIX: &str = ".jpg";

/// End of the same photo's URL at twice the pixels ([`PHOTO_SIDE`] × 2), for high-density screens.
pub const PHOTO_2X_SUFFIX: &str = "@2x.jpg";

/// Side of a gift photo in pixels: the largest card picture (96 CSS px in the full-screen grid).
pub const PHOTO_SIDE: u32 = 96;

/// The `srcset` of a gift photo's URL (`…{id}.jpg`): itself at [`PHOTO_SIDE`] pixels and its
/// `@2x` twin at twice that; `None` for any other picture (the tile is a vector and needs none).
pub fn photo_srcset(image_url: &str) -> Option<String> {
    let stem = image_url.strip_suffix(PHOTO_SUFFIX)?;
    if stem.ends_with("@2x") {
        return None;
    }
    Some(format!("{image_url} {PHOTO_SIDE}w, {stem}{PHOTO_2X_SUFFIX} {}w", PHOTO_SIDE * 2))
}

/// Prefix of every idempotency key the widget mints.
pub const IDEMPOTENCY_KEY_PREFIX: &str = "ik_";

/// Domain-separation prefix of the idempotency key the widget derives from a draft id:
/// `ik_` + hex(SHA-256(`{IDEMPOTENCY_KEY_DERIVATION}{draft id}`)[..16]) (and `ck_` + the same of
/// an order id for a cancellation). Never from a token: tokens expire, keys must not change.
pub const IDEMPOTENCY_KEY_DERIVATION: &str = "giftgenius/idempotency-key\n";

/// Prefix of the widget-state / storage entry that remembers a draft's idempotency key.
pub const CHECKOUT_STORAGE_PREFIX: &str = "giftgenius/checkout/";

/// `_meta` key of every tool result: a unique id of the view that result opens (ext-apps'
/// documented `viewUUID`), under which an MCP Apps view keeps its screen in `localStorage`.
pub const META_VIEW_UUID: &str = "viewUUID";

/// Prefix of the storage entry that keeps a view's screen: `{VIEW_STORAGE_PREFIX}{viewUUID}`.
pub const VIEW_STORAGE_PREFIX: &str = "giftgenius/view/";

/// Widget-only `_meta` key of a `prepare_order` result: the draft's full [`DeliveryDetails`]
/// (recipient, address, gift message), which the model never reads.
///
/// [`DeliveryDetails`]: crate::delivery::DeliveryDetails
pub const META_DELIVERY: &str = "giftgenius/delivery";

/// Widget-only `_meta` key of order results (`commit_order`, `get_order`, `list_orders`,
/// `cancel_order`): a map from order id to that order's full delivery details.
pub const META_DELIVERIES: &str = "giftgenius/deliveries";

/// Widget-only `_meta` key of `get_order` / `list_orders` results: a map from order id to the
/// token `cancel_order` needs, for each order that may still be cancelled.
pub const META_CANCEL_TOKENS: &str = "giftgenius/cancel_tokens";

/// Widget-only `_meta` key of order results (`commit_order`, `get_order`, `list_orders`): a map
/// from order id to the hosted page where the person confirms the payment with their bank
/// (3-D Secure), for each order awaiting authentication. A capability (whoever holds the link
/// may complete that payment), so never in the model-visible result.
pub const META_AUTHENTICATION_URLS: &str = "giftgenius/authentication_urls";

/// Widget-only `_meta` key of `list_orders` results: the token `delete_my_data` needs.
pub const META_DELETE_DATA_TOKEN: &str = "giftgenius/delete_data_token";

/// Prefix of every idempotency key the widget mints for a cancellation.
pub const CANCEL_KEY_PREFIX: &str = "ck_";

/// Widget-only `_meta` key of `prepare_order` / `reopen_order_draft` / `remove_saved_card`
/// results when Stripe charges: `{"card": {"brand": "visa", "last4": "4242"} | null,
/// "add_url": link}` — the card a Confirm charges, if any, and the hosted card page's link (a
/// capability of the caller's own, short-lived). Absent with the sandbox provider.
pub const META_PAYMENT_CARD: &str = "giftgenius/payment_card";

/// The route of the hosted card page: `{public_url}{CARD_PAGE_PATH}{capability}`.
pub const CARD_PAGE_PATH: &str = "/pay/card/";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_photo_gets_its_2x_twin_and_a_tile_gets_no_srcset() {
        assert_eq!(
            photo_srcset("https://gg.example/images/hh-001.jpg").as_deref(),
            Some("https://gg.example/images/hh-001.jpg 96w, https://gg.example/images/hh-001@2x.jpg 192w")
        );
        assert_eq!(photo_srcset("https://gg.example/images/hh-001.svg"), None);
        assert_eq!(photo_srcset("https://gg.example/images/hh-001@2x.jpg"), None);
    }
}
