//! What the person sees and answers. The loop reports [`Event`]s, hands every tool result to
//! [`Host::tool_result`] (a host with views renders them) and asks [`Host::confirm`] before any
//! purchase; [`TerminalHost`] prints them and reads stdin, `panel::PanelHost` serves them to the
//! preview page. Tests script their own host.

use std::future::Future;
use std::io::Write;

use rmcp::model::CallToolResult;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};

pub use crate::purchase::Confirmation;
use crate::purchase::{Draft, card};

/// Something the person should see.
#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    /// The model asked for a tool and the host is running it.
    ToolCall { turn: u32, name: &'a str, arguments: &'a Value },
    /// A tool answered with an error (`isError`), or the call failed on the way (timeout, transport).
    ToolError { turn: u32, name: &'a str, message: &'a str },
    /// The host answered the call itself without running it (unknown, hidden, repeated, bad arguments).
    Refused { turn: u32, name: &'a str, reason: &'a str },
    /// What happened to a purchase the person was asked about.
    Purchase(&'a str),
    /// The model's final answer.
    Answer(&'a str),
    /// The task ended without an answer (turn limit).
    Stopped(&'a str),
}

/// The person's side of the loop.
pub trait Host {
    fn show(&mut self, event: Event<'_>);
    /// A tool's whole result (with `_meta`, which the model never reads), for a host that renders
    /// the tool's view; `has_view` says whether the tool declares one. The terminal ignores it.
    fn tool_result(&mut self, _turn: u32, _name: &str, _arguments: &Value, _result: &CallToolResult, _has_view: bool) {}
    /// Shows the draft and returns what the person decided.
    fn confirm(&mut self, draft: &Draft) -> impl Future<Output = Confirmation> + Send;
}

/// The first line of `text`, for a one-line terminal summary.
fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// How an [`Event`] reads in a terminal (the seed's `[turn N] calls TOOL {arguments}`).
pub fn render(event: &Event<'_>) -> String {
    match event {
        Event::ToolCall { turn, name, arguments } => format!("[turn {turn}] calls {name} {arguments}"),
        Event::ToolError { turn, name, message } => format!("[turn {turn}]   {name} failed: {}", first_line(message)),
        Event::Refused { turn, name, reason } => format!("[turn {turn}]   {name} not run: {}", first_line(reason)),
        Event::Purchase(text) => text.to_string(),
        Event::Answer(text) => format!("\nFinal answer:\n{text}"),
        Event::Stopped(text) => format!("\n{text}"),
    }
}

/// Whether a typed answer is the one that buys: "yes", whatever the case and surrounding blanks.
pub fn is_yes(answer: &str) -> bool {
    answer.trim().eq_ignore_ascii_case("yes")
}

/// The terminal: events on stdout, answers from stdin.
pub struct TerminalHost {
    stdin: Lines<BufReader<Stdin>>,
}

impl Default for TerminalHost {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalHost {
    pub fn new() -> Self {
        Self { stdin: BufReader::new(tokio::io::stdin()).lines() }
    }

    pub fn greet(&self, tools: Vec<String>) {
        println!("Tools offered to the model: {}", tools.join(", "));
        println!("Type a request (an empty line or Ctrl-D ends the session).");
    }

    /// The next request typed at the prompt; `None` at the end of input or an empty line.
    pub async fn read_message(&mut self) -> anyhow::Result<Option<String>> {
        print!("\n> ");
        let _ = std::io::stdout().flush();
        let line = self.stdin.next_line().await?;
        Ok(line.map(|l| l.trim().to_string()).filter(|l| !l.is_empty()))
    }
}

impl Host for TerminalHost {
    fn show(&mut self, event: Event<'_>) {
        println!("{}", render(&event));
    }

    fn confirm(&mut self, draft: &Draft) -> impl Future<Output = Confirmation> + Send {
        println!("\n{}", card(&draft.draft));
        print!("Type \"yes\" to buy it (anything else cancels): ");
        let _ = std::io::stdout().flush();
        async move {
            match self.stdin.next_line().await {
                Ok(Some(line)) if is_yes(&line) => Confirmation::Confirmed,
                _ => Confirmation::Declined,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_reads_as_the_seed_prints_it() {
        let args = json!({"relationship_type": "parent"});
        assert_eq!(
            render(&Event::ToolCall { turn: 2, name: "suggest_gifts", arguments: &args }),
            r#"[turn 2] calls suggest_gifts {"relationship_type":"parent"}"#
        );
    }

    #[test]
    fn only_yes_buys() {
        assert!(is_yes("yes"));
        assert!(is_yes("  YES \n"));
        for no in ["y", "no", "", "yes please", "ok"] {
            assert!(!is_yes(no), "{no:?}");
        }
    }
}
