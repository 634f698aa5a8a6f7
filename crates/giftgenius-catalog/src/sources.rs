//! Where `suggest_gifts` gets its gifts: the local catalog (built-in merchants and `--catalog`
//! files, always there, see `live.rs`) and, optionally, HTTP catalogs (`--catalog-url`) that
//! answer `GET` with the catalog schema (a JSON array of gifts, `docs/catalog.md`) or the older
//! merchant file `{"merchant": {"id", "name"}, "gifts": [...]}` with `price_cents`.
//!
//! Without HTTP catalogs a suggestion just takes the local catalog: no task, no timer, no copy.
//! With them, every request asks them all at once, each under its own timeout
//! (`--source-timeout-ms`) and all under one deadline (`--suggest-deadline-ms`). An HTTP
//! catalog's good answer is kept for a while and fetches are shared and capped (`cache.rs`);
//! the merged, indexed catalog is kept as long as the answers it was made of. A source that
//! fails or is late is reported by id with a short public reason; the detail (URL, status,
//! parser message) goes to the log under the request reference and nowhere else.
//!
//! Gifts from HTTP catalogs are suggestable only: `prepare_order` looks gifts up in the local
//! catalog, whose files a merchant controls (import them with `--catalog` to sell them); a
//! remote gift answers `GIFT_NOT_FOUND` there; its picture is served from the last merge
//! ([`Sources::remote_gift`]). A remote gift whose id is already taken (by a local gift or an
//! earlier source) or is not a plain id is skipped and logged.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use giftgenius_types::{ErrorCode, FailedSource};

use super::cache::{FetchPolicy, Fetched, SourceCache};
use super::import::{self, Format, Merchants};
use super::live::LiveCatalog;
use super::{Catalog, CatalogGift, plain_id};
use crate::meaning::Meaning;

/// Largest HTTP catalog body we read; a merchant file is far smaller.
pub const MAX_CATALOG_BYTES: usize = 4 * 1024 * 1024;

/// A catalog fetched over HTTP, its answer kept in `cache`.
#[derive(Debug, Clone)]
pub struct CatalogSource {
    id: String,
    url: url::Url,
    client: reqwest::Client,
    cache: Arc<SourceCache>,
}

/// Why a source gave no gifts. `detail` is for the log only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceFailure {
    /// No answer within the source's timeout.
    Timeout { after_ms: u64 },
    /// No answer before the request's overall deadline.
    Deadline,
    /// It answered, but not with a catalog we can use (or could not be reached at all).
    Unavailable { reason: &'static str, detail: String },
}

impl SourceFailure {
    pub fn code(&self) -> ErrorCode {
        match self {
            SourceFailure::Timeout { .. } | SourceFailure::Deadline => ErrorCode::UpstreamTimeout,
            SourceFailure::Unavailable { .. } => ErrorCode::UpstreamUnavailable,
        }
    }

    /// What happened, for the model and the widget: no URL, host name or parser text.
    pub fn public_message(&self) -> String {
        match self {
            SourceFailure::Timeout { after_ms } => format!("did not answer within {after_ms} ms"),
            SourceFailure::Deadline => "did not answer before the search deadline".into(),
            SourceFailure::Unavailable { reason, .. } => (*reason).to_string(),
        }
    }

    fn detail(&self) -> String {
        match self {
            SourceFailure::Timeout { after_ms } => format!("timed out after {after_ms} ms"),
            SourceFailure::Deadline => "overall deadline reached".into(),
            SourceFailure::Unavailable { detail, .. } => detail.clone(),
        }
    }
}

fn unavailable(reason: &'static str, detail: impl Into<String>) -> SourceFailure {
    SourceFailure::Unavailable { reason, detail: detail.into() }
}

impl CatalogSource {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The source's gifts, merchant attached.
    pub async fn fetch(&self) -> Fetched {
        let (id, url, client) = (self.id.clone(), self.url.clone(), self.client.clone());
        self.cache.get(move || Box::pin(async move { fetch_http(&id, &url, &client).await })).await
    }
}

async fn fetch_http(id: &str, url: &url::Url, client: &reqwest::Client) -> Fetched {
    let failed = |e: reqwest::Error, during: &str| {
        if e.is_timeout() {
            SourceFailure::Timeout { after_ms: 0 }
        } else if e.is_connect() {
            unavailable("could not be reached", format!("{during}: {}", e.without_url()))
        } else {
            unavailable("failed while answering", format!("{during}: {}", e.without_url()))
        }
    };
    let mut response = client
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| failed(e, "request"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(unavailable("answered with an error", format!("HTTP status {status}")));
    }
    if response.content_length().is_some_and(|n| n > MAX_CATALOG_BYTES as u64) {
        return Err(unavailable(
            "sent a catalog that is too large",
            format!("content-length {:?}", response.content_length()),
        ));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| failed(e, "body"))? {
        if body.len() + chunk.len() > MAX_CATALOG_BYTES {
            return Err(unavailable(
                "sent a catalog that is too large",
                format!("body over {MAX_CATALOG_BYTES} bytes"),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    let parsed = read_remote(id, &body)
        .map_err(|e| unavailable("sent a catalog we could not read", format!("invalid catalog: {e}")))?;
    for e in parsed.errors.iter().take(20) {
        tracing::warn!(source = id, line = e.line, field = %e.field, problem = %e.message, "skipping an invalid remote gift");
    }
    Ok(parsed.gifts.into())
}

/// An HTTP catalog's body: the catalog schema (a JSON array of gifts), or the older merchant
/// file, whose gifts are rewritten into that schema first.
fn read_remote(id: &str, body: &[u8]) -> Result<import::Parsed, String> {
    let mut merchants = Merchants::default();
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return import::parse(id, body, Format::JsonArray, &mut merchants);
    }
    let serde_json::Value::Object(mut file) = serde_json::from_slice(body).map_err(|e| e.to_string())? else {
        return Err("neither a JSON array of gifts nor a merchant file".into());
    };
    let merchant = file.remove("merchant").unwrap_or_default();
    let (Some(merchant_id), Some(name)) = (merchant["id"].as_str(), merchant["name"].as_str()) else {
        return Err("a merchant file needs merchant.id and merchant.name".into());
    };
    if !plain_id(merchant_id) || name.trim().is_empty() {
        return Err("merchant id or name is invalid".into());
    }
    let Some(serde_json::Value::Array(gifts)) = file.remove("gifts") else {
        return Err("a merchant file needs a gifts array".into());
    };
    let rows: Vec<serde_json::Value> = gifts
        .into_iter()
        .map(|mut gift| {
            if let Some(object) = gift.as_object_mut() {
                if let Some(price) = object.remove("price_cents") {
                    object.insert("price_minor".into(), price);
                }
                object.insert("merchant".into(), name.into());
                object.insert("merchant_id".into(), merchant_id.into());
            }
            gift
        })
        .collect();
    let array = serde_json::to_vec(&rows).map_err(|e| e.to_string())?;
    import::parse(id, &array, Format::JsonArray, &mut merchants)
}

/// The outcome of asking every source.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The catalogs to rank together: the local one (as is, never copied) and the merge of
    /// the HTTP answers that arrived. No id is in two of them.
    pub catalogs: Vec<Arc<Catalog>>,
    /// Failed sources in configuration order, with public reasons.
    pub failed: Vec<FailedSource>,
    /// How many sources were asked.
    pub asked: usize,
}

impl Gathered {
    pub fn all_failed(&self) -> bool {
        self.asked > 0 && self.failed.len() == self.asked
    }
}

/// Every source `suggest_gifts` asks, with the timeouts that bound them.
#[derive(Debug)]
pub struct Sources {
    /// The built-in merchants and `--catalog` files, if any.
    local: Option<Arc<LiveCatalog>>,
    sources: Vec<CatalogSource>,
    source_timeout: Duration,
    deadline: Duration,
    /// The last merge of the local catalog with HTTP answers, and what it was made of: reused
    /// while the same answers (kept by `cache.rs`) arrive, so the index is built once per change.
    merged: Mutex<Option<Merged>>,
    /// The embedding model a merge of HTTP answers has its words embedded with, if any.
    meaning: Option<Arc<Meaning>>,
}

impl Sources {
    /// The sources, with `meaning` for the catalogs the HTTP answers make.
    pub fn with_meaning(self, meaning: Option<Arc<Meaning>>) -> Self {
        Self { meaning, ..self }
    }

    /// The local catalog (if any) first, then the HTTP catalogs in order (ids `http-catalog-1`,
    /// `http-catalog-2`, …), fetched under `policy`.
    pub fn new(
        local: Option<Arc<LiveCatalog>>,
        urls: &[String],
        source_timeout: Duration,
        deadline: Duration,
        policy: FetchPolicy,
    ) -> anyhow::Result<Self> {
        let mut sources = Vec::new();
        let urls: Vec<&str> = urls.iter().map(|u| u.trim()).filter(|u| !u.is_empty()).collect();
        if !urls.is_empty() {
            let client = reqwest::Client::builder()
                .connect_timeout(source_timeout)
                .read_timeout(source_timeout)
                .timeout(source_timeout)
                .redirect(reqwest::redirect::Policy::none())
                .user_agent(concat!("giftgenius/", env!("CARGO_PKG_VERSION")))
                .build()?;
            for (i, raw) in urls.iter().enumerate() {
                let url =
                    url::Url::parse(raw).map_err(|e| anyhow::anyhow!("--catalog-url {} is not a URL: {e}", i + 1))?;
                if !matches!(url.scheme(), "http" | "https") {
                    anyhow::bail!("--catalog-url {} must be an http:// or https:// URL", i + 1);
                }
                sources.push(CatalogSource {
                    id: format!("http-catalog-{}", i + 1),
                    url,
                    client: client.clone(),
                    cache: SourceCache::new(policy.clone()),
                });
            }
        }
        if sources.is_empty() && local.is_none() {
            anyhow::bail!("no catalog sources: keep the built-in catalog, give --catalog files or --catalog-url");
        }
        Ok(Self { local, sources, source_timeout, deadline, merged: Mutex::new(None), meaning: None })
    }

    pub fn sources(&self) -> &[CatalogSource] {
        &self.sources
    }

    /// A gift of the last merge of HTTP answers (what the latest suggestions showed), for its
    /// picture: remote gifts are not sold, but their cards show a photo or tile like any other.
    pub fn remote_gift(&self, id: &str) -> Option<CatalogGift> {
        let memo = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        memo.as_ref().and_then(|m| m.catalog.get(id).cloned())
    }

    /// Forgets every HTTP catalog's kept answer (the preview does when its catalog goes up or
    /// down, so the change shows at once).
    pub fn forget_cached(&self) {
        for source in &self.sources {
            source.cache.forget();
        }
    }

    /// Asks every source concurrently; sources that fail or miss a timeout are reported (and
    /// logged in full under the call's span), the rest are merged.
    pub async fn gather(&self) -> Gathered {
        let local = self.local.as_ref().map(|l| l.current());
        let asked = self.sources.len() + usize::from(local.is_some());
        if self.sources.is_empty()
            && let Some(catalog) = local
        {
            return Gathered { catalogs: vec![catalog], failed: Vec::new(), asked };
        }
        let per_source = self.source_timeout;
        let per_source_ms = per_source.as_millis() as u64;
        let deadline = tokio::time::Instant::now() + self.deadline;
        let mut pending: FuturesUnordered<_> = self
            .sources
            .iter()
            .enumerate()
            .map(|(i, source)| async move {
                let outcome = match tokio::time::timeout(per_source, source.fetch()).await {
                    Ok(Err(SourceFailure::Timeout { .. })) | Err(_) => {
                        Err(SourceFailure::Timeout { after_ms: per_source_ms })
                    }
                    Ok(outcome) => outcome,
                };
                (i, outcome)
            })
            .collect();
        let mut outcomes: Vec<Option<Fetched>> = vec![None; self.sources.len()];
        while let Ok(Some((i, outcome))) = tokio::time::timeout_at(deadline, pending.next()).await {
            outcomes[i] = Some(outcome);
        }
        drop(pending);

        let mut failed = Vec::new();
        let mut arrived = Vec::new();
        for (source, outcome) in self.sources.iter().zip(outcomes) {
            match outcome.unwrap_or(Err(SourceFailure::Deadline)) {
                Ok(gifts) => arrived.push((source.id(), gifts)),
                Err(failure) => {
                    tracing::warn!(
                        source = source.id(), url = %giftgenius_telemetry::url_for_log(source.url.as_str()), code = %failure.code(), error = %failure.detail(),
                        "catalog source failed"
                    );
                    failed.push(FailedSource {
                        source: source.id().to_string(),
                        code: failure.code(),
                        message: failure.public_message(),
                    });
                }
            }
        }
        let remote = self.merged(local.as_deref(), arrived);
        let catalogs = local.into_iter().chain((!remote.is_empty()).then_some(remote)).collect();
        Gathered { catalogs, failed, asked }
    }

    /// The HTTP answers that arrived as one catalog (without the ids the local catalog has),
    /// reusing the last merge when it was made of the very same answers (the memo holds them,
    /// so their addresses stay theirs).
    fn merged(&self, local: Option<&Catalog>, arrived: Vec<(&str, Arc<[CatalogGift]>)>) -> Arc<Catalog> {
        let mut memo = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        let local_ptr = local.map(|c| c as *const Catalog as usize);
        if let Some(m) = &*memo
            && m.local == local_ptr
            && m.arrived.len() == arrived.len()
            && m.arrived.iter().zip(&arrived).all(|(a, (_, b))| Arc::ptr_eq(a, b))
        {
            return m.catalog.clone();
        }
        let kept: Vec<Arc<[CatalogGift]>> = arrived.iter().map(|(_, gifts)| gifts.clone()).collect();
        let merged = merge(local, arrived);
        let catalog = Arc::new(match &self.meaning {
            Some(meaning) if !merged.is_empty() => meaning.attach(merged),
            _ => merged,
        });
        *memo = Some(Merged { local: local_ptr, arrived: kept, catalog: catalog.clone() });
        catalog
    }
}

/// One merge and what it was made of. `local` is only compared (a reloaded local catalog is a
/// new allocation while the old one is held by calls; at worst a stale pointer match reuses a
/// merge whose shadow check ran against an older local catalog, which `rank` tolerates: ids
/// are still unique within each catalog and ties break by id).
#[derive(Debug)]
struct Merged {
    local: Option<usize>,
    arrived: Vec<Arc<[CatalogGift]>>,
    catalog: Arc<Catalog>,
}

/// The union of the HTTP sources' gifts. The first to use an id keeps it (the local catalog
/// first, so a remote catalog can never shadow a local gift); later duplicates are skipped.
fn merge(local: Option<&Catalog>, arrived: Vec<(&str, Arc<[CatalogGift]>)>) -> Catalog {
    let mut seen = HashSet::new();
    let mut gifts = Vec::new();
    for (source, batch) in arrived {
        for gift in batch.iter() {
            if local.is_none_or(|l| l.get(&gift.id).is_none()) && seen.insert(gift.id.clone()) {
                gifts.push(gift.clone());
            } else {
                tracing::warn!(source, gift = %gift.id, "skipping a gift whose id another source already uses");
            }
        }
    }
    Catalog::from_gifts(gifts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local_only() -> Sources {
        Sources::new(
            Some(LiveCatalog::fixed(Catalog::builtin())),
            &[],
            Duration::from_millis(800),
            Duration::from_millis(1500),
            FetchPolicy::new(Duration::ZERO, 0),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn gathering_only_the_local_catalog_takes_it_as_is() {
        let sources = local_only();
        let first = sources.gather().await;
        let second = sources.gather().await;
        assert!(first.failed.is_empty());
        assert_eq!(first.asked, 1);
        assert_eq!(first.catalogs.len(), 1);
        assert_eq!(first.catalogs[0].len(), Catalog::builtin().len());
        assert!(Arc::ptr_eq(&first.catalogs[0], &second.catalogs[0]), "no copy per call");
    }

    #[test]
    fn merging_keeps_the_first_source_that_uses_an_id() {
        let first = Catalog::builtin().gifts()[0].clone();
        let mut impostor = first.clone();
        impostor.title = "Impostor".into();
        let merged = merge(None, vec![("a", vec![first.clone()].into()), ("b", vec![impostor.clone()].into())]);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged.get(&first.id).unwrap().title, first.title);
        let local = Catalog::builtin();
        assert!(merge(Some(&local), vec![("b", vec![impostor].into())]).is_empty(), "a local id is never shadowed");
    }

    #[test]
    fn a_remote_catalog_may_use_the_catalog_schema_or_the_older_merchant_file() {
        let schema = br#"[{"id":"r-1","title":"Kite","price_minor":1200,"merchant":"Sky Co"}]"#;
        let parsed = read_remote("http-catalog-1", schema).unwrap();
        assert_eq!((parsed.gifts[0].price_cents, parsed.gifts[0].merchant.id.as_str()), (1200, "sky-co"));
        let legacy = br#"{"merchant":{"id":"sky","name":"Sky Co"},"gifts":[{"id":"r-1","title":"Kite","description":"","price_cents":1200,"tags":[],"age_min":0,"age_max":120,"relationships":["friend"],"occasions":[],"stock":3}]}"#;
        let parsed = read_remote("http-catalog-1", legacy).unwrap();
        assert_eq!((parsed.gifts[0].price_cents, parsed.gifts[0].stock), (1200, 3));
        assert_eq!(parsed.gifts[0].merchant.id, "sky");
        assert!(read_remote("http-catalog-1", br#"{"items":[1,2,3]}"#).is_err());
    }

    #[test]
    fn catalog_urls_must_be_http() {
        let ms = Duration::from_millis(1);
        let err = Sources::new(None, &["ftp://x/y".into()], ms, ms, FetchPolicy::new(ms, 1)).unwrap_err();
        assert!(err.to_string().contains("http"));
        assert!(Sources::new(None, &[], ms, ms, FetchPolicy::new(ms, 1)).is_err());
    }
}
