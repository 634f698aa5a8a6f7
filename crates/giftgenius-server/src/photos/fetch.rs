//! Fetching a merchant's photo: one shared client that sends nothing of the buyer (no cookies,
//! no referrer, no client header, our own User-Agent), uses no proxy (a proxy would resolve the
//! host itself, past our checks), resolves names only through [`CheckedResolver`], refuses
//! address literals that are not public, follows at most [`MAX_REDIRECTS`] redirects and checks
//! each one the same way, gives up after the timeout, and stops reading at the byte cap.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};

use super::address::{CheckedResolver, check_literal};

/// Redirects followed per photo (CDNs redirect to a regional host; more is a loop or a trick).
pub const MAX_REDIRECTS: usize = 3;

/// Content types a photo may be sent as: ours, and the generic ones servers fall back to. The
/// bytes are what decide ([`super::decode::sniff`]); this only stops early what says it is not.
const ACCEPTED_TYPES: [&str; 7] = [
    "image/jpeg",
    "image/jpg",
    "image/pjpeg",
    "image/png",
    "image/webp",
    "application/octet-stream",
    "binary/octet-stream",
];

/// Why no bytes came back; for the log only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchFailure {
    Refused(String),
    Timeout,
    Status(u16),
    ContentType(String),
    TooLarge,
    Network(String),
}

impl std::fmt::Display for FetchFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchFailure::Refused(why) => write!(f, "refused: {why}"),
            FetchFailure::Timeout => f.write_str("timed out"),
            FetchFailure::Status(code) => write!(f, "HTTP status {code}"),
            FetchFailure::ContentType(t) => write!(f, "content type {t} is not a photo"),
            FetchFailure::TooLarge => f.write_str("over the byte cap"),
            FetchFailure::Network(e) => write!(f, "network: {e}"),
        }
    }
}

/// The photo client and its limits.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    timeout: Duration,
    max_bytes: usize,
    allow_private: bool,
}

impl Fetcher {
    pub fn new(timeout: Duration, max_bytes: usize, allow_private: bool) -> anyhow::Result<Self> {
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                return attempt.error(FetchFailure::Refused("too many redirects".into()).to_string());
            }
            if !matches!(attempt.url().scheme(), "http" | "https") {
                return attempt.error("redirect to a scheme that is not http(s)");
            }
            // Names are checked when resolved; literals here, since the client never resolves them.
            match check_literal(attempt.url(), allow_private) {
                Ok(()) => attempt.follow(),
                Err(refused) => attempt.error(refused),
            }
        });
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(CheckedResolver { allow_private }))
            .no_proxy()
            .referer(false)
            .redirect(redirects)
            .connect_timeout(timeout)
            .timeout(timeout)
            .user_agent(concat!("giftgenius-photos/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { client, timeout, max_bytes, allow_private })
    }

    /// The body at `url`, at most `max_bytes` of it, within the timeout.
    pub async fn fetch(&self, url: &str) -> Result<Vec<u8>, FetchFailure> {
        match tokio::time::timeout(self.timeout, self.fetch_unbounded(url)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(FetchFailure::Timeout),
        }
    }

    async fn fetch_unbounded(&self, url: &str) -> Result<Vec<u8>, FetchFailure> {
        let url = url::Url::parse(url).map_err(|e| FetchFailure::Refused(format!("not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchFailure::Refused("not an http(s) URL".into()));
        }
        check_literal(&url, self.allow_private).map_err(|r| FetchFailure::Refused(r.0))?;
        let failed = |e: reqwest::Error| {
            if e.is_timeout() {
                FetchFailure::Timeout
            } else {
                // The chain names the refused address or redirect; never shown to clients.
                let e = e.without_url();
                let mut text = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(s) = source {
                    text.push_str(": ");
                    text.push_str(&s.to_string());
                    source = s.source();
                }
                FetchFailure::Network(text)
            }
        };
        let mut response = self
            .client
            .get(url)
            .header(ACCEPT, "image/webp,image/jpeg,image/png;q=0.9")
            .send()
            .await
            .map_err(failed)?;
        if !response.status().is_success() {
            return Err(FetchFailure::Status(response.status().as_u16()));
        }
        if let Some(kind) = response.headers().get(CONTENT_TYPE) {
            let kind = kind.to_str().unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            if !ACCEPTED_TYPES.contains(&kind.as_str()) {
                return Err(FetchFailure::ContentType(kind));
            }
        }
        if response.content_length().is_some_and(|n| n > self.max_bytes as u64) {
            return Err(FetchFailure::TooLarge);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(FetchFailure::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}
