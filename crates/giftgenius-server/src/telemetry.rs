//! Structured logs on stderr (text or JSON). Internal details of failures go here, under the
//! request reference, and never into a tool result.

use tracing_subscriber::{EnvFilter, fmt};

use crate::config::LogFormat;

pub fn init(format: LogFormat, stdio: bool) {
    let filter = EnvFilter::try_from_env("GIFTGENIUS_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    // stdout carries the protocol in stdio mode, so logs always go to stderr.
    let builder = fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(!stdio);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
