//! The tool loop (seed 002), with its safety valves:
//!
//! - **turn limit**: at most `--max-turns` model requests per task; a model still asking for
//!   tools after that is stopped with a message saying so, never left to spin;
//! - **repeated-call valve**: the same tool with the same arguments (key order aside) a third
//!   time in one task is not run; the model gets an error result telling it to change approach;
//! - **one result per call**: every call of a reply gets exactly one result in the next request,
//!   in order: unknown or hidden tools, arguments that are not JSON or break the tool's
//!   `inputSchema`, tool errors (`isError`, with the structured error the tool returned), calls
//!   that time out and transport failures all become error results, never a crash or a gap;
//! - **bounded outputs**: a result longer than `--max-result-chars` is cut with a note;
//! - **no buying by the model**: a draft goes to the person (see `purchase`), and the host-only
//!   `commit_order` is never offered and refused when named.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::config::Config;
use crate::host::{Event, Host};
use crate::log::{Log, redacted};
use crate::mcp::{CallFailure, ConnectError, Mcp};
use crate::provider::{Message, Provider, ToolCall, ToolResult};
use crate::purchase::{Purchases, draft_of};
use crate::registry::{Lookup, Registry};
use crate::text::{bounded, canonical, model_view};

/// How many times one exact call may run in a task; the next one is refused.
pub const MAX_IDENTICAL_CALLS: u32 = 2;

/// What the model is told about its situation. Generic: the host may face any MCP server.
pub const SYSTEM_PROMPT: &str = "You are a helpful assistant in a chat app. You can call tools from an MCP server; \
use them when they help, and build each call on what earlier results returned (ids, prices). \
Purchases: you can prepare an order, but only the person can confirm it. The app shows them the draft and asks; \
a HOST NOTE in the tool result then tells you what they decided and what the order became. Never claim a purchase \
that no HOST NOTE confirms. If a tool result is an error, read it and change your approach instead of repeating \
the same call. Answer briefly and plainly.";

/// How a task ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskEnd {
    /// The model answered in text.
    Answered(String),
    /// The turn limit stopped a model that kept calling tools.
    TurnLimit(u32),
}

/// The loop's knobs (from `Config`).
#[derive(Debug, Clone)]
pub struct Limits {
    pub max_turns: u32,
    pub tool_timeout: Duration,
    pub max_result_chars: usize,
}

impl Limits {
    pub fn from_config(config: &Config) -> Self {
        Self {
            max_turns: config.max_turns,
            tool_timeout: config.tool_timeout(),
            max_result_chars: config.max_result_chars,
        }
    }
}

/// A conversation with one model and one MCP server.
pub struct Session {
    mcp: Mcp,
    registry: Registry,
    provider: Provider,
    limits: Limits,
    log: Log,
    messages: Vec<Message>,
    purchases: Purchases,
    /// How to sign in when a tool asks for an account (`AUTH_REQUIRED` with
    /// `_meta["mcp/www_authenticate"]`); `None` once signed in or when `--token` was given.
    sign_in: Option<SignIn>,
}

/// What the sign-in needs (from the flags).
#[derive(Debug, Clone)]
pub struct SignIn {
    pub client_id: Option<String>,
    pub scopes: Vec<String>,
    pub callback_port: u16,
}

/// The `WWW-Authenticate` challenge a tool result carries when it needs a signed-in caller.
fn auth_challenge(result: &rmcp::model::CallToolResult) -> Option<String> {
    let value = result.meta.as_ref()?.0.get("mcp/www_authenticate")?;
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => items.first().and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

impl Session {
    /// Connects to the MCP server (signing in when it asks for it) and lists its tools.
    pub async fn connect(config: &Config) -> anyhow::Result<Self> {
        let provider = Provider::from_config(config)?;
        let log = match &config.log {
            Some(path) => Log::open(path)?,
            None => Log::off(),
        };
        let sign_in = SignIn {
            client_id: config.client_id.clone(),
            scopes: config.scopes.clone(),
            callback_port: config.callback_port,
        };
        let (mcp, signed_in) = match Mcp::connect(&config.mcp, config.token.as_deref()).await {
            Ok(mcp) => (mcp, config.token.is_some()),
            Err(ConnectError::AuthRequired(challenge)) if config.token.is_none() => {
                let token = crate::auth::sign_in(
                    &config.mcp,
                    challenge,
                    sign_in.client_id.as_deref(),
                    &sign_in.scopes,
                    sign_in.callback_port,
                )
                .await?;
                (Mcp::connect(&config.mcp, Some(&token)).await?, true)
            }
            Err(e) => return Err(e.into()),
        };
        eprintln!("giftgenius-chat: MCP server {}; {}", config.mcp, provider.describe());
        let mut session = Self::new(mcp, provider, Limits::from_config(config), log).await?;
        if !signed_in {
            session.sign_in = Some(sign_in);
        }
        Ok(session)
    }

    /// A session over an open connection (tests build theirs this way).
    pub async fn new(mcp: Mcp, provider: Provider, limits: Limits, log: Log) -> anyhow::Result<Self> {
        let started = Instant::now();
        let tools = mcp.list_tools().await?;
        let registry = Registry::new(tools);
        log.write(
            "tools",
            json!({"ms": started.elapsed().as_millis() as u64, "offered": registry.offered_names(), "mcp": mcp.url}),
        );
        Ok(Self {
            mcp,
            registry,
            provider,
            limits,
            log,
            messages: Vec::new(),
            purchases: Purchases::default(),
            sign_in: None,
        })
    }

    /// The tools the model is offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.registry.offered_names()
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Runs one request of the person's to its end: an answer, or the turn limit. A provider
    /// failure that outlasted its retries ends the task with that error.
    pub async fn run_task<H: Host>(&mut self, host: &mut H, request: &str) -> anyhow::Result<TaskEnd> {
        self.messages.push(Message::User(request.to_string()));
        self.log.write("task", json!({"request": request}));
        let definitions = self.registry.definitions();
        // Per task: a new request may legitimately ask for what an earlier one did.
        let mut seen: HashMap<String, u32> = HashMap::new();
        for turn in 1..=self.limits.max_turns {
            let reply = self.provider.complete(SYSTEM_PROMPT, &self.messages, &definitions, &self.log, turn).await?;
            self.messages.push(Message::Assistant(reply.clone()));
            if reply.calls.is_empty() {
                let text = reply.text.unwrap_or_else(|| "(the model ended without an answer)".to_string());
                self.log.write("answer", json!({"turn": turn, "text": text}));
                host.show(Event::Answer(&text));
                return Ok(TaskEnd::Answered(text));
            }
            let mut results = Vec::with_capacity(reply.calls.len());
            for call in &reply.calls {
                results.push(self.execute(host, turn, call, &mut seen).await);
            }
            self.messages.push(Message::ToolResults(results));
        }
        let max = self.limits.max_turns;
        let text = format!(
            "Stopped: the model was still calling tools after {max} turns (--max-turns {max}) without answering. \
             Rephrase the request, or allow more turns with --max-turns."
        );
        self.log.write("turn_limit", json!({"max_turns": max}));
        host.show(Event::Stopped(&text));
        Ok(TaskEnd::TurnLimit(max))
    }

    /// Runs the sign-in and reconnects with the token.
    async fn signed_in(&mut self, sign_in: &SignIn, challenge: String) -> anyhow::Result<()> {
        let url = self.mcp.url.clone();
        let token = crate::auth::sign_in(
            &url,
            Some(challenge),
            sign_in.client_id.as_deref(),
            &sign_in.scopes,
            sign_in.callback_port,
        )
        .await?;
        self.mcp = Mcp::connect(&url, Some(&token)).await?;
        self.sign_in = None;
        self.log.write("signed_in", json!({"mcp": url}));
        Ok(())
    }

    /// Exactly one result for one call, whatever happens to it.
    async fn execute<H: Host>(
        &mut self,
        host: &mut H,
        turn: u32,
        call: &ToolCall,
        seen: &mut HashMap<String, u32>,
    ) -> ToolResult {
        host.show(Event::ToolCall { turn, name: &call.name, arguments: &call.arguments });
        let refuse = |host: &mut H, log: &Log, reason: String| {
            host.show(Event::Refused { turn, name: &call.name, reason: &reason });
            log.write(
                "refused",
                json!({"turn": turn, "tool": call.name, "arguments": redacted(&call.arguments), "reason": reason}),
            );
            ToolResult { call_id: call.id.clone(), content: reason, is_error: true }
        };
        if let Some(raw) = &call.unparsed {
            let reason = format!(
                "The arguments of {} were not valid JSON ({}). Send one JSON object that matches the tool's inputSchema.",
                call.name,
                bounded(raw, 200)
            );
            return refuse(host, &self.log, reason);
        }
        let entry = match self.registry.lookup(&call.name) {
            Lookup::Offered(entry) => entry,
            Lookup::Hidden => {
                let reason = format!(
                    "{} is not available to you: only the app may call it, after the person confirms on screen. \
                     Nothing was done. To buy, prepare the order; the app will ask the person.",
                    call.name
                );
                return refuse(host, &self.log, reason);
            }
            Lookup::Unknown => {
                let reason = format!(
                    "There is no tool named {:?}. The tools you can call are: {}.",
                    call.name,
                    self.registry.offered_names().join(", ")
                );
                return refuse(host, &self.log, reason);
            }
        };
        let count = seen.entry(format!("{}\n{}", call.name, canonical(&call.arguments))).or_insert(0);
        *count += 1;
        if *count > MAX_IDENTICAL_CALLS {
            let reason = format!(
                "Not run: this is call number {} of {} with exactly these arguments in this task, and its result \
                 will not change. Do not repeat it. Change the arguments, use another tool, or answer the person \
                 with what you already have.",
                *count, call.name
            );
            return refuse(host, &self.log, reason);
        }
        let violations = entry.violations(&call.arguments);
        if !violations.is_empty() {
            let reason = format!(
                "The arguments do not match the inputSchema of {}; nothing was run:\n- {}\nFix them and call again.",
                call.name,
                violations.join("\n- ")
            );
            return refuse(host, &self.log, reason);
        }
        let entry_has_view = entry.has_view();
        let arguments = match &call.arguments {
            Value::Object(map) => map.clone(),
            _ => serde_json::Map::new(),
        };

        let started = Instant::now();
        let mut outcome = self.mcp.call(&call.name, arguments.clone(), self.limits.tool_timeout).await;
        // A tool that needs an account: sign in once (the person opens the printed URL), then
        // run the same call again on the signed-in connection.
        if let (Ok(result), Some(sign_in)) = (&outcome, &self.sign_in)
            && let Some(challenge) = auth_challenge(result)
        {
            let sign_in = sign_in.clone();
            match self.signed_in(&sign_in, challenge).await {
                Ok(()) => outcome = self.mcp.call(&call.name, arguments, self.limits.tool_timeout).await,
                Err(e) => eprintln!("giftgenius-chat: sign-in failed: {e:#}"),
            }
        }
        let ms = started.elapsed().as_millis() as u64;
        let (content, is_error) = match outcome {
            Ok(result) => {
                let is_error = result.is_error == Some(true);
                let mut content = bounded(&model_view(&result), self.limits.max_result_chars);
                self.log.write(
                    "tool_result",
                    json!({"turn": turn, "tool": call.name, "arguments": redacted(&call.arguments), "ms": ms,
                           "is_error": is_error, "content": content,
                           "meta_keys": result.meta.as_ref().map(|m| m.0.keys().cloned().collect::<Vec<_>>())}),
                );
                host.tool_result(turn, &call.name, &call.arguments, &result, entry_has_view);
                if is_error {
                    host.show(Event::ToolError { turn, name: &call.name, message: &content });
                } else if let Some(draft) = draft_of(&result) {
                    let answer = host.confirm(&draft).await;
                    let decision =
                        self.purchases.decide(&self.mcp, &draft, answer, self.limits.tool_timeout, &self.log).await;
                    host.show(Event::Purchase(&decision.shown));
                    content.push_str("\n\n");
                    content.push_str(&decision.for_model);
                }
                (content, is_error)
            }
            Err(failure) => {
                let content = match &failure {
                    CallFailure::Timeout(t) => format!(
                        "{} did not answer within {} ms; the host stopped waiting. It may be slow or stuck: try \
                         once more later or with narrower arguments, or tell the person it is unavailable.",
                        call.name,
                        t.as_millis()
                    ),
                    CallFailure::Transport(_) => format!(
                        "{} could not be run: the MCP server could not be reached or broke the connection. \
                         Tell the person the service is unavailable right now.",
                        call.name
                    ),
                };
                self.log.write(
                    "tool_failure",
                    json!({"turn": turn, "tool": call.name, "arguments": redacted(&call.arguments), "ms": ms,
                           "failure": format!("{failure:?}")}),
                );
                host.show(Event::ToolError { turn, name: &call.name, message: &content });
                (content, true)
            }
        };
        ToolResult { call_id: call.id.clone(), content, is_error }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock, MetaObject};

    #[test]
    fn a_result_that_needs_an_account_names_its_challenge() {
        let mut result = CallToolResult::error(vec![ContentBlock::text("AUTH_REQUIRED")]);
        assert_eq!(auth_challenge(&result), None);
        let mut meta = serde_json::Map::new();
        meta.insert("mcp/www_authenticate".into(), json!(["Bearer resource_metadata=\"http://x/.well-known\""]));
        result.meta = Some(MetaObject(meta));
        assert_eq!(auth_challenge(&result).as_deref(), Some("Bearer resource_metadata=\"http://x/.well-known\""));
    }
}
