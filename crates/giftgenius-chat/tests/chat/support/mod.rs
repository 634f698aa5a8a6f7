//! What the chat tests share: the real app, the scripted model, a scripted person, and a session
//! wired to them through the same flags a person would type.

mod app;
mod host;
mod model;

pub use app::{App, hanging_catalog, spawn_app};
pub use host::Person;
pub use model::{Format, Request, ScriptedModel, Step, field};

use clap::Parser;
use giftgenius_chat::agent::Session;
use giftgenius_chat::config::Config;

/// The chat's configuration against `app` and `model`, with `extra` flags (e.g. `--max-turns 3`).
pub fn config(app: &App, model: &ScriptedModel, extra: &[&str]) -> Config {
    let base_url = model.base_url();
    let mut args = vec![
        "giftgenius-chat",
        "--mcp",
        &app.mcp_url,
        "--provider",
        model.format.provider(),
        "--base-url",
        &base_url,
        "--model",
        "scripted",
        "--retry-base-ms",
        "10",
    ];
    args.extend_from_slice(extra);
    Config::parse_from(args)
}

/// A session against `app` and `model`, with `extra` flags.
pub async fn session(app: &App, model: &ScriptedModel, extra: &[&str]) -> Session {
    Session::connect(&config(app, model, extra)).await.expect("the session connects")
}

/// The JSON lines of a `--log` file.
pub fn log_lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Who a scripted model's order goes to (drafts need a recipient before they can be paid).
pub fn recipient() -> serde_json::Value {
    serde_json::json!({"name": "Ana Silva", "address": {"line1": "Rua Augusta 100", "city": "Lisboa", "postal_code": "1100-053", "country": "PT"}})
}
