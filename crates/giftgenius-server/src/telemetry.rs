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
    log_panics();
}

/// Panics go to the log as structured events (message, source location, thread) instead of raw
/// text on stderr, so JSON logs stay JSON. `call_tool` still catches a handler's panic and logs
/// it again under the call's reference.
fn log_panics() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let panic = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(non-string panic payload)".into());
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
