//! `giftgenius-server`: MCP over Streamable HTTP (default) or stdio (`--stdio`); `giftgenius-server
//! reconcile` settles pending orders once and exits; `giftgenius-server delete-my-data --subject S`
//! deletes one account's personal data and exits; `giftgenius-server registry-json` prints the MCP
//! registry's server.json; `giftgenius-server outbox list|redeliver` lists order events or sends
//! some again; `giftgenius-server orders show|processing|ship|complete|refund` moves an order
//! along after payment; `giftgenius-server migrate` applies the database's migrations and exits;
//! `giftgenius-server feed export|pushes|redeliver` writes the product feed, lists its pushes to
//! the feed receivers, or pushes some again.

use clap::Parser;
use giftgenius_server::config::{Command, Config, FeedCommand, OutboxCommand};
use giftgenius_server::{registry, startup, startup::Application, telemetry};

/// mimalloc instead of glibc malloc: a call allocates and frees thousands of small strings on
/// two threads, and glibc's arenas were a third of its CPU under load (perf; docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let mut config = Config::parse();
    telemetry::install_tls_provider();
    telemetry::init(config.log_format, config.otlp_endpoint.as_deref(), "giftgenius-server");
    if let Err(e) = config.resolve_db_file() {
        return failed("start", &e);
    }
    match &config.command {
        Some(Command::Migrate) => return printed("migrate", startup::migrate_once(&config).await),
        Some(Command::Reconcile) => return printed("reconcile", startup::reconcile_once(&config).await),
        Some(Command::DeleteMyData { subject: Some(subject), .. }) => {
            return printed("delete-my-data", startup::delete_my_data_once(&config, subject).await);
        }
        Some(Command::DeleteMyData { acp_buyer_email: Some(email), .. }) => {
            return printed("delete-my-data", startup::delete_acp_buyer_data_once(&config, email).await);
        }
        Some(Command::DeleteMyData { .. }) => {
            return failed("delete-my-data", &anyhow::anyhow!("name --subject or --acp-buyer-email"));
        }
        Some(Command::RegistryJson) => return printed("registry-json", registry::server_json(&config)),
        Some(Command::Outbox(OutboxCommand::List { status, limit })) => {
            return match startup::outbox_list(&config, *status, *limit).await {
                Ok(events) => lines("outbox list", &events),
                Err(e) => failed("outbox list", &e),
            };
        }
        Some(Command::Outbox(OutboxCommand::Redeliver { ids })) => {
            return printed("outbox redeliver", startup::outbox_redeliver(&config, ids).await);
        }
        Some(Command::Feed(FeedCommand::Export { out, feed_id, target_country })) => {
            let exported = giftgenius_server::feed::export(&config, out, feed_id, target_country.as_deref()).await;
            return printed("feed export", exported);
        }
        Some(Command::Feed(FeedCommand::Pushes { receiver, status, limit })) => {
            return match giftgenius_server::feed::pushes(&config, receiver.as_deref(), status.map(Into::into), *limit)
                .await
            {
                Ok(pushes) => lines("feed pushes", &pushes),
                Err(e) => failed("feed pushes", &e),
            };
        }
        Some(Command::Feed(FeedCommand::Redeliver { receiver, dead, all, ids })) => {
            use giftgenius_commerce::store::{OutboxStatus, Redeliver};
            let which = match (*dead, *all) {
                (_, true) => Redeliver::All,
                (true, false) => Redeliver::WithStatus(OutboxStatus::Dead),
                (false, false) => Redeliver::Products(ids),
            };
            return printed("feed redeliver", giftgenius_server::feed::redeliver(&config, receiver, which).await);
        }
        Some(Command::Orders(command)) => {
            return printed("orders", startup::orders(&config, command).await);
        }
        None => {}
    }
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
    // The spans of the last calls are still queued for export.
    giftgenius_server::traces::shutdown();
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("giftgenius-server: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// A subcommand's result: its JSON on stdout, or why it failed on stderr.
fn printed(command: &str, result: anyhow::Result<impl serde::Serialize>) -> std::process::ExitCode {
    match result.and_then(|value| Ok(serde_json::to_string(&value)?)) {
        Ok(json) => {
            println!("{json}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => failed(command, &e),
    }
}

/// A subcommand's list: one JSON line per item on stdout.
fn lines(command: &str, items: &[impl serde::Serialize]) -> std::process::ExitCode {
    let mut out = String::new();
    for item in items {
        match serde_json::to_string(item) {
            Ok(json) => {
                out.push_str(&json);
                out.push('\n');
            }
            Err(e) => return failed(command, &e.into()),
        }
    }
    print!("{out}");
    std::process::ExitCode::SUCCESS
}

fn failed(command: &str, e: &anyhow::Error) -> std::process::ExitCode {
    eprintln!("giftgenius-server {command}: {e:#}");
    std::process::ExitCode::FAILURE
}
