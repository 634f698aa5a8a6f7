//! What may be written to a log line or an error message: a URL without its user name, password,
//! query or fragment. The logs and the trace exporter both use it, so it depends on neither.

/// A URL fit for a log line or an error message: scheme, host, port and path; never a user
/// name, password, query or fragment. Anything that is not a URL (a file path) is returned as is.
pub fn url_for_log(text: &str) -> String {
    match url::Url::parse(text) {
        Ok(url) if url.has_host() => {
            let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
            format!("{}://{}{port}{}", url.scheme(), url.host_str().unwrap_or("?"), url.path())
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_credentials_query_and_fragment() {
        assert_eq!(url_for_log("postgres://gift:s3cret@db:5432/gg?sslmode=require"), "postgres://db:5432/gg");
        assert_eq!(url_for_log("https://u:p@shop.example/feed.json?token=x#f"), "https://shop.example/feed.json");
        assert_eq!(url_for_log("giftgenius.db"), "giftgenius.db");
        assert_eq!(url_for_log("/var/lib/gg/giftgenius.db"), "/var/lib/gg/giftgenius.db");
    }
}
