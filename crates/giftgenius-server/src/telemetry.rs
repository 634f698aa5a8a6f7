//! Structured logs on stderr (text or JSON), and what may go into them. Internal details of
//! failures go here, under the request reference, and never into a tool result.

use std::io::IsTerminal;

use tracing_subscriber::{EnvFilter, fmt};

use crate::config::LogFormat;

/// Without GIFTGENIUS_LOG: our own lines from info up, the MCP SDK's from warn up (at info it
/// writes a few lifecycle lines per stateless request: a third of the log volume and a few
/// percent of a call's CPU under load, issue 12).
const DEFAULT_FILTER: &str = "info,rmcp=warn";

pub fn init(format: LogFormat) {
    // The MCP SDK logs whole messages below info (arguments with confirmation tokens, results
    // with widget-only `_meta`); whatever GIFTGENIUS_LOG asks, it stops at info. (Bearer tokens
    // never reach it: the auth middleware removes the Authorization header first.)
    let filter = match EnvFilter::try_from_env("GIFTGENIUS_LOG") {
        Ok(asked) => asked.add_directive("rmcp=info".parse().expect("a valid directive")),
        Err(_) => EnvFilter::new(DEFAULT_FILTER),
    };
    // stdout carries the protocol in stdio mode, so logs always go to stderr; colours only when
    // a person watches it (a log redirected to a file or a pipe gets plain text).
    let colour = std::io::stderr().is_terminal();
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(colour);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    log_panics();
}

/// Panics go to the log as structured events (message, source location, thread) instead of raw
/// text on stderr, so JSON logs stay JSON. `call_tool` still catches a handler's panic and logs
/// it again under the call's reference.
fn log_panics() {
    std::panic::set_hook(Box::new(|info| {
        let panic = panic_message(info.payload());
        let location = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column())).unwrap_or_default();
        let thread = std::thread::current().name().unwrap_or("unnamed").to_string();
        let backtrace = std::backtrace::Backtrace::capture();
        if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            tracing::error!(panic, location, thread, backtrace = %backtrace, "a thread panicked");
        } else {
            tracing::error!(panic, location, thread, "a thread panicked");
        }
    }));
}

/// The message a panic carried (`panic!` with a literal or a formatted string), for the log.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(non-string panic payload)".into())
}

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
    use super::url_for_log;

    #[test]
    fn urls_lose_credentials_query_and_fragment() {
        assert_eq!(url_for_log("postgres://gift:s3cret@db:5432/gg?sslmode=require"), "postgres://db:5432/gg");
        assert_eq!(url_for_log("https://u:p@shop.example/feed.json?token=x#f"), "https://shop.example/feed.json");
        assert_eq!(url_for_log("giftgenius.db"), "giftgenius.db");
        assert_eq!(url_for_log("/var/lib/gg/giftgenius.db"), "/var/lib/gg/giftgenius.db");
    }
}
