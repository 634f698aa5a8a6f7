//! Gift photos through our own origin: the catalog's image URL is fetched by the server
//! (`fetch.rs`, from public addresses only: `address.rs`), checked and resized to the card's
//! two sizes (`decode.rs`) on a blocking thread, and kept (`cache.rs`), so the widget's CSP
//! names only us and the buyer's browser never talks to a merchant's image host. Whatever
//! fails, the route answers the lettered tile instead (`http/images.rs`).

pub mod address;
pub mod cache;
pub mod decode;
pub mod fetch;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use futures::FutureExt;
use giftgenius_types::wire::PHOTO_SIDE;
use tokio::sync::Semaphore;

use cache::{Lifetimes, Outcome, PhotoCache};
use fetch::Fetcher;

/// The photo settings (flags of the server).
#[derive(Debug, Clone, clap::Args)]
pub struct PhotoSettings {
    /// How long fetching one gift photo from the merchant may take; past it the card shows
    /// the lettered tile.
    #[arg(long, env = "GIFTGENIUS_IMAGES_FETCH_TIMEOUT_MS", default_value_t = 3000)]
    pub images_fetch_timeout_ms: u64,
    /// Largest photo body read from a merchant, in bytes.
    #[arg(long, env = "GIFTGENIUS_IMAGES_MAX_BYTES", default_value_t = 5 * 1024 * 1024)]
    pub images_max_bytes: usize,
    /// Largest photo decoded, in pixels (width × height from the file's header, checked
    /// before decoding: a small file can declare a huge image).
    #[arg(long, env = "GIFTGENIUS_IMAGES_MAX_PIXELS", default_value_t = 4096 * 4096)]
    pub images_max_pixels: u64,
    /// Photos kept in memory (both sizes of one gift count once); 0 keeps none.
    #[arg(long, env = "GIFTGENIUS_IMAGES_CACHE_ENTRIES", default_value_t = 2000)]
    pub images_cache_entries: usize,
    /// Bytes of resized photos kept in memory.
    #[arg(long, env = "GIFTGENIUS_IMAGES_CACHE_BYTES", default_value_t = 32 * 1024 * 1024)]
    pub images_cache_bytes: usize,
    /// Fetch photos from private, loopback and link-local addresses too. For tests and a
    /// catalog served on your own machine only: it lets catalog rows reach your network.
    #[arg(long, env = "GIFTGENIUS_IMAGES_ALLOW_PRIVATE_HOSTS")]
    pub images_allow_private_hosts: bool,
}

/// How long a photo is kept before it is fetched again (a merchant may change it).
const PHOTO_LIFETIME: Duration = Duration::from_secs(6 * 3600);

/// How long a failed fetch is remembered (the tile is shown meanwhile, without asking again).
const FAILURE_LIFETIME: Duration = Duration::from_secs(60);

/// Fetches to merchants at once, across all photos.
const FETCHES_AT_ONCE: usize = 16;

/// Which of the two sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// [`PHOTO_SIDE`] pixels square.
    Small,
    /// Twice that.
    Large,
}

/// The photo service: fetch, resize and keep.
#[derive(Debug, Clone)]
pub struct Photos {
    fetcher: Fetcher,
    fetch_timeout: Duration,
    cache: Arc<PhotoCache>,
    max_pixels: u64,
    fetches: Arc<Semaphore>,
    /// Decodes at once: each may hold `max_pixels` × 4 bytes, and takes a core.
    decodes: Arc<Semaphore>,
}

impl Photos {
    pub fn new(settings: &PhotoSettings) -> anyhow::Result<Self> {
        let fetch_timeout = Duration::from_millis(settings.images_fetch_timeout_ms);
        let fetcher = Fetcher::new(fetch_timeout, settings.images_max_bytes, settings.images_allow_private_hosts)?;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Ok(Self {
            fetcher,
            fetch_timeout,
            cache: PhotoCache::new(
                settings.images_cache_entries,
                settings.images_cache_bytes,
                Lifetimes { photo: PHOTO_LIFETIME, failure: FAILURE_LIFETIME },
            ),
            max_pixels: settings.images_max_pixels,
            fetches: Arc::new(Semaphore::new(FETCHES_AT_ONCE)),
            decodes: Arc::new(Semaphore::new(cores.clamp(1, 4))),
        })
    }

    /// Entries and bytes the cache holds now.
    pub fn cache_usage(&self) -> (usize, usize) {
        self.cache.usage()
    }

    /// The JPEG of the photo at `url` in `size`, fetched once for both sizes and kept; the
    /// error says why not (for the log only).
    pub async fn jpeg(&self, url: &str, size: Size) -> Result<Bytes, Arc<str>> {
        let this = self.clone();
        let owned = url.to_string();
        let resized = self.cache.get(url, move || this.fetch_and_resize(owned).boxed()).await?;
        Ok(match size {
            Size::Small => resized.small,
            Size::Large => resized.large,
        })
    }

    async fn fetch_and_resize(self, url: String) -> Outcome {
        let outcome = self.fetch_and_resize_quietly(&url).await;
        if let Err(why) = &outcome {
            // Once per fetch (failures are kept a minute), never to the client.
            tracing::warn!(url = %crate::telemetry::url_for_log(&url), error = %why, "gift photo unavailable; its cards show the tile");
        }
        outcome
    }

    async fn fetch_and_resize_quietly(&self, url: &str) -> Outcome {
        // The wait for a turn counts against the timeout too: the card waits for neither.
        let fetched = tokio::time::timeout(self.fetch_timeout, async {
            let _permit = self.fetches.acquire().await.map_err(|_| Arc::<str>::from("closed"))?;
            self.fetcher.fetch(url).await.map_err(|e| Arc::<str>::from(e.to_string()))
        });
        let bytes = fetched.await.map_err(|_| Arc::<str>::from("timed out waiting for a turn to fetch"))??;
        let _permit = self.decodes.acquire().await.map_err(|_| Arc::<str>::from("closed"))?;
        let max_pixels = self.max_pixels;
        tokio::task::spawn_blocking(move || decode::resize(&bytes, max_pixels, PHOTO_SIDE))
            .await
            .map_err(|_| Arc::<str>::from("the resize stopped"))?
            .map_err(|e| Arc::<str>::from(e.to_string()))
    }
}
