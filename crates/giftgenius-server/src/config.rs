//! Server configuration: command-line flags, each with an environment variable.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Which MIME type (and so which host vocabulary) the widget resource is served as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum WidgetMime {
    /// `text/html+skybridge`, for ChatGPT (Apps SDK).
    #[default]
    Skybridge,
    /// `text/html;profile=mcp-app`, for MCP Apps hosts.
    McpApp,
}

impl WidgetMime {
    pub const fn mime_type(self) -> &'static str {
        match self {
            WidgetMime::Skybridge => "text/html+skybridge",
            WidgetMime::McpApp => "text/html;profile=mcp-app",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// GiftGenius MCP server.
#[derive(Debug, Clone, Parser)]
#[command(name = "giftgenius-server", version, about)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "GIFTGENIUS_HOST", default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0 picks a free one).
    #[arg(long, env = "GIFTGENIUS_PORT", default_value_t = 8000)]
    pub port: u16,
    /// The URL clients reach this server at (e.g. your HTTPS tunnel). Used for image URLs, the
    /// widget CSP and the allowed Host header. Defaults to http://HOST:PORT.
    #[arg(long, env = "GIFTGENIUS_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// SQLite database file (created on first run) or a postgres:// URL.
    #[arg(long, env = "GIFTGENIUS_DB", default_value = "giftgenius.db")]
    pub db: String,
    /// MIME type of the widget resource.
    #[arg(long, env = "GIFTGENIUS_WIDGET_MIME", value_enum, default_value_t = WidgetMime::Skybridge)]
    pub widget_mime: WidgetMime,
    /// The packed widget HTML built by `cargo xtask widget`.
    #[arg(long, env = "GIFTGENIUS_WIDGET_HTML", default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../../dist/giftgenius-widget.html"))]
    pub widget_html: PathBuf,
    /// Serve MCP over stdin/stdout instead of HTTP.
    #[arg(long)]
    pub stdio: bool,
    /// Log format on stderr.
    #[arg(long, env = "GIFTGENIUS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

impl Config {
    /// Defaults for tests and embedding: loopback, port 0, the built widget.
    pub fn for_tests() -> Self {
        Config::parse_from(["giftgenius-server", "--port", "0"])
    }
}
