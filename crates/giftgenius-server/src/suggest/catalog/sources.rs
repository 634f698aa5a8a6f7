//! Where `suggest_gifts` gets its gifts: one source per built-in merchant (`catalog/*.json`)
//! and, optionally, HTTP catalogs (`--catalog-url`) that answer `GET` with the same JSON shape
//! as a merchant file: `{"merchant": {"id", "name"}, "gifts": [...]}`.
//!
//! Every request asks all sources at once, each under its own timeout (`--source-timeout-ms`)
//! and all under one deadline (`--suggest-deadline-ms`). An HTTP catalog's good answer is kept
//! for a while and fetches are shared and capped (`cache.rs`). A source that fails or is late is
//! reported by id with a short public reason; the detail (URL, status, parser message) goes to
//! the log under the request reference and nowhere else.
//!
//! Gifts from HTTP catalogs are suggestable only: `prepare_order` looks gifts up in the built-in
//! [`Catalog`], so ordering a remote gift is out of scope for now (it answers `GIFT_NOT_FOUND`),
//! and the server draws no picture for it. A remote gift whose id is already taken (by a
//! built-in gift or an earlier source) or is not a plain id is skipped and logged.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use giftgenius_types::{ErrorCode, FailedSource};

use super::cache::{FetchPolicy, Fetched, SourceCache};
use super::{Catalog, CatalogGift, MerchantFile, builtin_merchants};

/// Largest HTTP catalog body we read; a merchant file is far smaller.
pub const MAX_CATALOG_BYTES: usize = 4 * 1024 * 1024;

/// One place gifts come from.
#[derive(Debug, Clone)]
pub enum CatalogSource {
    /// A merchant compiled into the binary; answers at once.
    Builtin { id: String, gifts: Arc<[CatalogGift]> },
    /// A catalog fetched over HTTP, its answer kept in `cache`.
    Http { id: String, url: url::Url, client: reqwest::Client, cache: Arc<SourceCache> },
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

/// Ids go into URLs and the order tools: keep them plain.
fn plain_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

impl CatalogSource {
    pub fn id(&self) -> &str {
        match self {
            CatalogSource::Builtin { id, .. } | CatalogSource::Http { id, .. } => id,
        }
    }

    /// The source's gifts, merchant attached.
    pub async fn fetch(&self) -> Fetched {
        match self {
            CatalogSource::Builtin { gifts, .. } => Ok(gifts.clone()),
            CatalogSource::Http { id, url, client, cache } => {
                let (id, url, client) = (id.clone(), url.clone(), client.clone());
                cache.get(move || Box::pin(async move { fetch_http(&id, &url, &client).await })).await
            }
        }
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
    let file: MerchantFile = serde_json::from_slice(&body)
        .map_err(|e| unavailable("sent a catalog we could not read", format!("invalid catalog JSON: {e}")))?;
    if !plain_id(&file.merchant.id) || file.merchant.name.trim().is_empty() {
        return Err(unavailable("sent a catalog we could not read", "merchant id or name is invalid"));
    }
    let mut gifts = Vec::with_capacity(file.gifts.len());
    for gift in file.into_gifts() {
        let problem = if !plain_id(&gift.id) {
            Some("id is not 1-64 letters, digits, '-' or '_'")
        } else if gift.title.trim().is_empty() {
            Some("title is empty")
        } else if gift.price_cents <= 0 {
            Some("price_cents is not positive")
        } else if gift.age_min > gift.age_max {
            Some("age_min is greater than age_max")
        } else {
            None
        };
        match problem {
            Some(problem) => {
                tracing::warn!(source = id, gift = %gift.id.chars().take(80).collect::<String>(), problem, "skipping an invalid remote gift")
            }
            None => gifts.push(gift),
        }
    }
    Ok(gifts.into())
}

/// The outcome of asking every source.
#[derive(Debug, Clone)]
pub struct Gathered {
    /// The union of the gifts that arrived, sorted by id (ranking is deterministic over it).
    pub catalog: Arc<Catalog>,
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
#[derive(Debug, Clone)]
pub struct Sources {
    sources: Vec<CatalogSource>,
    source_timeout: Duration,
    deadline: Duration,
    /// The merged built-in catalog when every built-in merchant is a source: reused as is when
    /// they all answered and nothing else added gifts (the common case, no copying).
    builtin: Option<Arc<Catalog>>,
}

impl Sources {
    /// Built-in merchants (unless `builtin` is false) first, then the HTTP catalogs in order
    /// (ids `http-catalog-1`, `http-catalog-2`, …), fetched under `policy`.
    pub fn new(
        builtin: Option<Arc<Catalog>>,
        urls: &[String],
        source_timeout: Duration,
        deadline: Duration,
        policy: FetchPolicy,
    ) -> anyhow::Result<Self> {
        let mut sources = Vec::new();
        if builtin.is_some() {
            for file in builtin_merchants() {
                let id = file.merchant.id.clone();
                sources.push(CatalogSource::Builtin { id, gifts: file.into_gifts().into() });
            }
        }
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
                sources.push(CatalogSource::Http {
                    id: format!("http-catalog-{}", i + 1),
                    url,
                    client: client.clone(),
                    cache: SourceCache::new(policy.clone()),
                });
            }
        }
        if sources.is_empty() {
            anyhow::bail!("no catalog sources: keep the built-in catalog or pass --catalog-url");
        }
        Ok(Self { sources, source_timeout, deadline, builtin })
    }

    pub fn sources(&self) -> &[CatalogSource] {
        &self.sources
    }

    /// Forgets every HTTP catalog's kept answer (the preview does when its catalog goes up or
    /// down, so the change shows at once).
    pub fn forget_cached(&self) {
        for source in &self.sources {
            if let CatalogSource::Http { cache, .. } = source {
                cache.forget();
            }
        }
    }

    /// Asks every source concurrently; sources that fail or miss a timeout are reported (and
    /// logged in full under the call's span), the rest are merged.
    pub async fn gather(&self) -> Gathered {
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
        let mut only_builtin = true;
        for (source, outcome) in self.sources.iter().zip(outcomes) {
            match outcome.unwrap_or(Err(SourceFailure::Deadline)) {
                Ok(gifts) => {
                    if matches!(source, CatalogSource::Http { .. }) && !gifts.is_empty() {
                        only_builtin = false;
                    }
                    arrived.push((source, gifts));
                }
                Err(failure) => {
                    match source {
                        CatalogSource::Http { url, .. } => tracing::warn!(
                            source = source.id(), url = %crate::telemetry::url_for_log(url.as_str()), code = %failure.code(), error = %failure.detail(),
                            "catalog source failed"
                        ),
                        CatalogSource::Builtin { .. } => tracing::warn!(
                            source = source.id(), code = %failure.code(), error = %failure.detail(),
                            "catalog source failed"
                        ),
                    }
                    failed.push(FailedSource {
                        source: source.id().to_string(),
                        code: failure.code(),
                        message: failure.public_message(),
                    });
                }
            }
        }

        let catalog = match &self.builtin {
            Some(builtin) if failed.is_empty() && only_builtin => builtin.clone(),
            _ => Arc::new(merge(arrived)),
        };
        Gathered { catalog, failed, asked: self.sources.len() }
    }
}

/// The union of the sources' gifts. The first source to use an id keeps it (built-ins come
/// first, so a remote catalog can never shadow a built-in gift); later duplicates are skipped.
fn merge(arrived: Vec<(&CatalogSource, Arc<[CatalogGift]>)>) -> Catalog {
    let mut seen = HashSet::new();
    let mut gifts = Vec::new();
    for (source, batch) in arrived {
        for gift in batch.iter() {
            if seen.insert(gift.id.clone()) {
                gifts.push(gift.clone());
            } else {
                tracing::warn!(source = source.id(), gift = %gift.id, "skipping a gift whose id another source already uses");
            }
        }
    }
    Catalog::from_gifts(gifts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin_sources() -> Sources {
        Sources::new(
            Some(Arc::new(Catalog::builtin())),
            &[],
            Duration::from_millis(800),
            Duration::from_millis(1500),
            FetchPolicy::new(Duration::ZERO, 0),
        )
        .unwrap()
    }

    #[test]
    fn the_builtin_catalog_is_one_source_per_merchant_file() {
        let sources = builtin_sources();
        let ids: Vec<&str> = sources.sources().iter().map(CatalogSource::id).collect();
        assert_eq!(ids, ["hearth-home", "trailhead", "page-and-pixel", "little-wonders"]);
    }

    #[tokio::test]
    async fn gathering_only_builtin_sources_reuses_the_merged_catalog() {
        let sources = builtin_sources();
        let gathered = sources.gather().await;
        assert!(gathered.failed.is_empty());
        assert_eq!(gathered.catalog.len(), Catalog::builtin().len());
    }

    #[test]
    fn merging_keeps_the_first_source_that_uses_an_id() {
        let first = Catalog::builtin().gifts()[0].clone();
        let mut impostor = first.clone();
        impostor.title = "Impostor".into();
        let a = CatalogSource::Builtin { id: "a".into(), gifts: vec![first.clone()].into() };
        let b = CatalogSource::Builtin { id: "b".into(), gifts: vec![impostor.clone()].into() };
        let merged = merge(vec![(&a, vec![first.clone()].into()), (&b, vec![impostor].into())]);
        assert_eq!(merged.len(), 1);
        assert_eq!(merged.get(&first.id).unwrap().title, first.title);
    }

    #[test]
    fn catalog_urls_must_be_http() {
        let ms = Duration::from_millis(1);
        let err = Sources::new(None, &["ftp://x/y".into()], ms, ms, FetchPolicy::new(ms, 1)).unwrap_err();
        assert!(err.to_string().contains("http"));
        assert!(Sources::new(None, &[], ms, ms, FetchPolicy::new(ms, 1)).is_err());
    }
}
