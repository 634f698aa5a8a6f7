//! Structured logs on stderr (text or JSON), and what may go into them. Internal details of
//! failures go here, under the request reference, and never into a tool result. With
//! `--otlp-endpoint`, the same spans are also exported as traces (`crate::traces`), and a span
//! that joined a trace carries `trace_id` / `span_id`, so its log lines join the trace.

use std::io::IsTerminal;

use tracing::Level;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, fmt};

/// Where URLs are made fit for logs (the trace exporter needs it too, without the logs).
pub use giftgenius_telemetry::url_for_log;

/// Without GIFTGENIUS_LOG: our own lines from info up, the MCP SDK's from warn up (at info it
/// writes a few lifecycle lines per stateless request: a third of the log volume and a few
/// percent of a call's CPU under load, issue 12).
const DEFAULT_FILTER: &str = "info,rmcp=warn";

/// Libraries that log whole messages below some level, and the most verbose level each may
/// ever log at, whatever GIFTGENIUS_LOG asks (`rmcp::transport=trace` included: a cap holds for
/// every target under the name). The MCP SDK logs whole JSON-RPC messages at debug and trace
/// (arguments with confirmation tokens and addresses, results with widget-only `_meta`); the
/// HTTP stacks log raw reads, writes and headers at trace. (Bearer tokens never reach rmcp: the
/// auth middleware removes the Authorization header first.)
const CAPPED_TARGETS: &[(&str, Level)] = &[
    ("rmcp", Level::INFO),
    ("hyper", Level::DEBUG),
    ("hyper_util", Level::DEBUG),
    ("h2", Level::DEBUG),
    ("reqwest", Level::DEBUG),
    ("tower_http", Level::DEBUG),
];

/// The filter every log line passes besides the operator's: [`CAPPED_TARGETS`] at their cap,
/// everything else untouched.
fn caps() -> Targets {
    Targets::new().with_default(LevelFilter::TRACE).with_targets(CAPPED_TARGETS.iter().copied())
}

/// The operator's filter (`GIFTGENIUS_LOG`'s text, else [`DEFAULT_FILTER`]); an unreadable one
/// falls back to the default.
fn asked_filter(asked: Option<&str>) -> EnvFilter {
    asked.and_then(|text| EnvFilter::try_new(text).ok()).unwrap_or_else(|| EnvFilter::new(DEFAULT_FILTER))
}

/// The log subscriber: the caps for everything, then lines in `format` to `writer` through the
/// operator's filter, and to `tracer` (when traces are on) the spans that pass [`DEFAULT_FILTER`]:
/// the operator quieting the log (`GIFTGENIUS_LOG=warn`) must not switch the traces off.
fn subscriber<W>(
    asked: Option<&str>,
    format: LogFormat,
    writer: W,
    colour: bool,
    tracer: Option<opentelemetry_sdk::trace::Tracer>,
) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let lines = fmt::layer().with_writer(writer).with_ansi(colour);
    let lines = match format {
        LogFormat::Text => lines.boxed(),
        LogFormat::Json => lines.json().boxed(),
    };
    let lines = lines.with_filter(asked_filter(asked));
    let traces = tracer
        .map(|tracer| tracing_opentelemetry::layer().with_tracer(tracer).with_filter(EnvFilter::new(DEFAULT_FILTER)));
    tracing_subscriber::registry().with(caps()).with(traces).with(lines)
}

/// Logs on stderr, and traces to `otlp_endpoint` (as `service`) when one is given.
/// How log lines are written (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

pub fn init(format: LogFormat, otlp_endpoint: Option<&str>, service: &'static str) {
    let tracer = otlp_endpoint.and_then(|endpoint| crate::traces::start(endpoint, service));
    let asked = std::env::var("GIFTGENIUS_LOG").ok();
    // stdout carries the protocol in stdio mode, so logs always go to stderr; colours only when
    // a person watches it (a log redirected to a file or a pipe gets plain text).
    let colour = std::io::stderr().is_terminal();
    let _ = subscriber(asked.as_deref(), format, std::io::stderr, colour, tracer).try_init();
    log_panics();
}

/// Panics go to the log as structured events (source location, thread, and the message only
/// when it is a literal of ours: `panics::loggable_message`, since std's own messages quote the
/// text a slice cut) instead of raw text on stderr, so JSON logs stay JSON and hold no input.
/// The line is written inside the panicking request's span (its reference); the handler that
/// catches the panic logs it again under that reference (`panics.rs`).
fn log_panics() {
    std::panic::set_hook(Box::new(|info| {
        let panic = crate::panics::loggable_message(info.payload());
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

/// Makes ring the process's rustls provider, once, before any HTTPS-capable client is built: with
/// the whole workspace built together, reqwest 0.13 (the OTLP exporter's client) gets rustls
/// without a provider and would panic at `Client::build`, which left traces off in the test
/// command's build. Idempotent; harmless when nothing uses TLS.
pub fn install_tls_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Log lines written to memory.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'w> fmt::MakeWriter<'w> for Lines {
        type Writer = Lines;
        fn make_writer(&'w self) -> Lines {
            self.clone()
        }
    }

    #[test]
    fn no_filter_brings_back_whole_message_logging() {
        for asked in
            ["trace", "rmcp::transport=trace,rmcp::service=trace", "trace,rmcp=trace,hyper=trace,reqwest=trace"]
        {
            let lines = Lines::default();
            tracing::subscriber::with_default(
                subscriber(Some(asked), LogFormat::Text, lines.clone(), false, None),
                || {
                    tracing::trace!(target: "rmcp::transport::streamable_http_server::tower", "message ct_SECRET-1");
                    tracing::debug!(target: "rmcp::service", "received request Rua-Augusta-2");
                    tracing::trace!(target: "hyper::proto::h1::io", "read bytes SECRET-3");
                    tracing::trace!(target: "reqwest::connect", "SECRET-4");
                    tracing::info!(target: "rmcp::service", "lifecycle line kept");
                    tracing::trace!(target: "giftgenius_server::checkout", "our own trace line kept");
                },
            );
            let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
            for secret in ["ct_SECRET-1", "Rua-Augusta-2", "SECRET-3", "SECRET-4"] {
                assert!(!text.contains(secret), "{asked}: {secret} logged:\n{text}");
            }
            assert!(text.contains("lifecycle line kept"), "{asked}: {text}");
            if asked.starts_with("trace") {
                assert!(text.contains("our own trace line kept"), "{asked}: {text}");
            }
        }
    }
}
