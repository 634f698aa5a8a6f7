//! `giftgenius-sandbox-pay`: the SANDBOX payment provider as its own process (its own port, its
//! own SQLite file). The provider is the `giftgenius-sandbox-pay` crate; its binary is declared
//! in this package so that it is built with the server, lands next to the server's executable
//! (where the server finds it to start its own sandbox), and the server's integration tests get
//! its path from cargo (`CARGO_BIN_EXE_giftgenius-sandbox-pay`), which cargo gives only for the
//! tested package's own binaries. Nothing here uses the server's code but its TLS provider setup
//! (`telemetry::install_tls_provider`, for the OTLP exporter's client).

use clap::Parser;
use giftgenius_sandbox_pay::{Config, init_logs, run};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let config = Config::parse();
    giftgenius_server::telemetry::install_tls_provider();
    init_logs(config.log_format, config.otlp_endpoint.as_deref());
    let result = run(config).await;
    // The last requests' spans are still queued for export.
    giftgenius_sandbox_pay::traces::shutdown();
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("giftgenius-sandbox-pay: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
