//! `giftgenius-server`: MCP over Streamable HTTP (default) or stdio (`--stdio`).

use clap::Parser;
use giftgenius_server::{config::Config, startup::Application, telemetry};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = Config::parse();
    telemetry::init(config.log_format);
    let stdio = config.stdio;
    let result = match Application::build(config).await {
        Ok(app) if stdio => {
            tracing::info!(http = %app.public_url(), "GiftGenius is serving MCP on stdio; images and checkout pages over HTTP");
            app.run_stdio().await
        }
        Ok(app) => {
            tracing::info!(url = %app.mcp_url(), "GiftGenius is serving MCP");
            app.run_until_stopped().await
        }
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("giftgenius-server: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
