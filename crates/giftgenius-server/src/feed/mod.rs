//! `giftgenius-server feed export --out DIR`: the ACP product feed of every gift we sell
//! (`giftgenius_types::feed`), for ChatGPT's shopping search and any agent that reads ACP feeds.
//!
//! It writes `products.jsonl` (one `Product` per line, in the catalog's id order) and
//! `metadata.json`. The products are deterministic: the same catalog files and the same orders
//! give the same bytes (only `metadata.json`'s `updated_at` says when it ran). It streams: each
//! product is written as it is built, so memory is the catalog's (which the server holds anyway)
//! plus the units sold per gift that has any; a file is written beside its final name and
//! renamed, so a reader never sees half a feed. Availability is live stock: the catalog's units
//! less those in live orders, as checkout counts them.
//!
//! `push.rs` sends the feed's changes to the feed receivers as they happen.

pub mod push;
pub mod receivers;

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use giftgenius_catalog::{CatalogGift, live::CatalogSpec, live::LiveCatalog};
use giftgenius_commerce::clock::{Clock, rfc3339};
use giftgenius_commerce::store::{OutboxStatus, Redeliver};
use giftgenius_types::feed::{
    FeedAvailability, FeedCategory, FeedDescription, FeedLink, FeedMedia, FeedMetadata, FeedPrice, FeedProduct,
    FeedSeller, FeedVariant,
};
use serde::Serialize;

use crate::checkout::LOW_STOCK;
use crate::config::Config;

/// The feed's files.
pub const PRODUCTS_FILE: &str = "products.jsonl";
pub const METADATA_FILE: &str = "metadata.json";

/// Where a gift's page is, under our origin.
pub const GIFT_PAGE_PATH: &str = "/gifts/";

/// What an export wrote, printed as JSON.
#[derive(Debug, Serialize)]
pub struct Exported {
    pub products: u64,
    pub bytes: u64,
    pub available: u64,
    pub dir: PathBuf,
    pub seconds: f64,
}

/// `giftgenius-server feed export`: the feed of `config`'s catalog (its built-in gifts and
/// `--catalog` files) with the stock left in `config`'s database, into `out`.
pub async fn export(
    config: &Config,
    out: &Path,
    feed_id: &str,
    target_country: Option<&str>,
) -> anyhow::Result<Exported> {
    let started = Instant::now();
    let spec = CatalogSpec {
        builtin: config.builtin_catalog,
        files: config.catalogs.clone(),
        bad_rows: config.catalog_bad_rows,
        // Meaning ranks suggestions; a feed lists every gift as it is.
        meaning: None,
    };
    let catalog = tokio::task::spawn_blocking(move || LiveCatalog::load(spec)).await??.current();
    let store = config.open_store().await?;
    let sold = store.units_sold_by_gift().await?;
    let public_url = config.public_url_or_local();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let written =
        write_atomically(&out.join(PRODUCTS_FILE), |file| write_products(file, catalog.gifts(), &sold, &public_url))?;
    let metadata = FeedMetadata {
        id: feed_id.to_string(),
        target_country: target_country.map(str::to_string),
        updated_at: rfc3339(Clock::System.now_ms()),
    };
    write_atomically(&out.join(METADATA_FILE), |file| {
        serde_json::to_writer_pretty(&mut *file, &metadata)?;
        file.write_all(b"\n")?;
        Ok(Counts::default())
    })?;
    let bytes = std::fs::metadata(out.join(PRODUCTS_FILE))?.len();
    Ok(Exported {
        products: written.products,
        bytes,
        available: written.available,
        dir: out.to_path_buf(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// `giftgenius-server feed pushes`: up to `limit` pushes of `config`'s database (of `receiver`,
/// with `status`, when given).
pub async fn pushes(
    config: &Config,
    receiver: Option<&str>,
    status: Option<OutboxStatus>,
    limit: u32,
) -> anyhow::Result<Vec<push::PushListing>> {
    let store = config.open_store().await?;
    let rows = store.feed_pushes(receiver, status, i64::from(limit)).await?;
    Ok(rows.iter().map(push::PushListing::from).collect())
}

/// What `feed redeliver` did.
#[derive(Debug, Serialize)]
pub struct Redelivered {
    pub receiver: String,
    /// Products pending again.
    pub redelivered: u64,
    /// Ids named that the receiver has no push of (a typo, or never pushed).
    pub unknown: Vec<String>,
}

/// `giftgenius-server feed redeliver`: `receiver`'s products `which` pending again from now.
pub async fn redeliver(config: &Config, receiver: &str, which: Redeliver<'_>) -> anyhow::Result<Redelivered> {
    let store = config.open_store().await?;
    let (redelivered, unknown) = store.redeliver_feed_pushes(receiver, which, Clock::System.now_ms()).await?;
    Ok(Redelivered { receiver: receiver.to_string(), redelivered, unknown })
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub products: u64,
    pub available: u64,
}

/// Writes `path` through `fill` into `path.partial`, flushed and synced, then renames it over
/// `path`: a reader sees the old file or the new one, never a half.
fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<std::fs::File>) -> anyhow::Result<Counts>,
) -> anyhow::Result<Counts> {
    let partial = path.with_extension("partial");
    let file = std::fs::File::create(&partial).with_context(|| format!("cannot write {}", partial.display()))?;
    let mut writer = BufWriter::with_capacity(1 << 20, file);
    let counts = fill(&mut writer)?;
    let file = writer.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    std::fs::rename(&partial, path)
        .with_context(|| format!("cannot rename {} over {}", partial.display(), path.display()))?;
    Ok(counts)
}

/// One JSON line per gift of `gifts` (in their order), with the stock `sold` leaves.
pub fn write_products(
    out: &mut impl Write,
    gifts: &[CatalogGift],
    sold: &HashMap<String, i64>,
    public_url: &str,
) -> anyhow::Result<Counts> {
    let mut counts = Counts::default();
    for gift in gifts {
        let left = i64::from(gift.stock) - sold.get(&*gift.id).copied().unwrap_or(0);
        let product = product(gift, left, public_url);
        counts.products += 1;
        counts.available += u64::from(product.variants[0].availability.available);
        serde_json::to_writer(&mut *out, &product)?;
        out.write_all(b"\n")?;
    }
    Ok(counts)
}

/// `gift` as a feed product with one variant, `left` units still for sale.
pub fn product(gift: &CatalogGift, left: i64, public_url: &str) -> FeedProduct {
    let url = format!("{public_url}{GIFT_PAGE_PATH}{}", gift.id);
    let description = FeedDescription { plain: gift.description.to_string() };
    let media: Vec<FeedMedia> = gift
        .photo_url(public_url)
        .map(|url| FeedMedia { kind: "image".into(), url, alt_text: gift.title.to_string() })
        .into_iter()
        .collect();
    let status = match left {
        ..=0 => "out_of_stock",
        1..=LOW_STOCK => "limited_stock",
        _ => "in_stock",
    };
    let link = |kind: &str, title: &str, path: &str| FeedLink {
        kind: kind.into(),
        title: title.into(),
        url: format!("{public_url}{path}"),
    };
    let variant = FeedVariant {
        id: gift.id.to_string(),
        title: gift.title.to_string(),
        description: description.clone(),
        url: url.clone(),
        price: FeedPrice { amount: gift.price_cents, currency: "USD".into() },
        availability: FeedAvailability { available: left > 0, status: status.into() },
        categories: gift
            .tags
            .iter()
            .map(|tag| FeedCategory { value: tag.to_string(), taxonomy: "merchant".into() })
            .collect(),
        media: media.clone(),
        seller: FeedSeller {
            name: gift.merchant.name.clone(),
            links: vec![
                link("terms_of_service", "Terms of use", "/terms"),
                link("privacy_policy", "Privacy policy", "/privacy"),
                link("refund_policy", "Cancellations and refunds", "/terms"),
                link("faq", "Support", "/support"),
            ],
        },
    };
    FeedProduct {
        id: gift.id.to_string(),
        title: gift.title.to_string(),
        description,
        url,
        media,
        variants: vec![variant],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_catalog::Catalog;

    #[test]
    fn stock_left_reads_as_the_spec_s_availability_words() {
        let catalog = Catalog::builtin();
        let gift = &catalog.gifts()[0];
        let status = |left| {
            let p = product(gift, left, "https://g.example");
            (p.variants[0].availability.available, p.variants[0].availability.status.clone())
        };
        assert_eq!(status(-2), (false, "out_of_stock".to_string()), "oversold reads as none left");
        assert_eq!(status(0), (false, "out_of_stock".to_string()));
        assert_eq!(status(1), (true, "limited_stock".to_string()));
        assert_eq!(status(LOW_STOCK), (true, "limited_stock".to_string()));
        assert_eq!(status(LOW_STOCK + 1), (true, "in_stock".to_string()));
    }

    #[test]
    fn the_lines_are_the_same_bytes_for_the_same_catalog_and_orders() {
        let catalog = Catalog::builtin();
        let sold = HashMap::from([(catalog.gifts()[3].id.to_string(), 2)]);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let counts = write_products(&mut a, catalog.gifts(), &sold, "https://g.example").unwrap();
        write_products(&mut b, catalog.gifts(), &sold, "https://g.example").unwrap();
        assert_eq!(a, b);
        assert_eq!(counts.products, catalog.len() as u64);
        assert_eq!(a.iter().filter(|&&c| c == b'\n').count(), catalog.len());
        assert!(counts.available < counts.products, "the built-in catalog has sold-out gifts");
    }
}
