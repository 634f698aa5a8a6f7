//! `giftgenius-server`: MCP over Streamable HTTP (default) or stdio (`--stdio`).

use clap::Parser;
use giftgenius_server::{config::Config, startup::Application, telemetry};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = Config::parse();
    telemetry::init(config.log_format, config.stdio);
    let result = if config.stdio {
        Application::run_stdio(config).await
    } else {
        match Application::build(config).await {
            Ok(app) => {
                tracing::info!(url = %app.mcp_url(), "GiftGenius is serving MCP");
                app.run_until_stopped().await
            }
            Err(e) => Err(e),
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("giftgenius-server: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
