//! The `giftgenius-chat` binary: flags in, one task or an interactive session out (or, with
//! `--listen`, the chat panel's HTTP API).

use std::process::ExitCode;

use clap::Parser;
use giftgenius_chat::agent::{Session, TaskEnd};
use giftgenius_chat::config::Config;
use giftgenius_chat::host::TerminalHost;

#[tokio::main]
async fn main() -> ExitCode {
    let config = Config::parse();
    match run(config).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("giftgenius-chat: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(config: Config) -> anyhow::Result<ExitCode> {
    if let Some(addr) = config.listen {
        giftgenius_chat::panel::serve(config, addr).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let message = config.message();
    let mut session = Session::connect(&config).await?;
    let mut host = TerminalHost::new();
    match message {
        Some(message) => {
            let end = session.run_task(&mut host, &message).await?;
            Ok(if matches!(end, TaskEnd::Answered(_)) { ExitCode::SUCCESS } else { ExitCode::from(2) })
        }
        None => {
            host.greet(session.tool_names());
            while let Some(line) = host.read_message().await? {
                if let Err(e) = session.run_task(&mut host, &line).await {
                    // A failed task (a provider that stays down) ends that task, not the session.
                    eprintln!("giftgenius-chat: {e:#}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
