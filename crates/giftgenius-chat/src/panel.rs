//! `giftgenius-chat --listen 127.0.0.1:PORT`: the same loop behind a small HTTP API, for the
//! preview's chat panel (`cargo xtask preview` starts this process and the server forwards the
//! page's `/preview/chat/*` requests here). The model's key stays in this process; the page only
//! ever sees the conversation.
//!
//! - `GET /api/state`: `{busy, pending, problem, tools, turns}`; `turns` is the conversation as
//!   the person sees it, in order (`user`, `call`, `result` (the whole tool result, `_meta`
//!   included, for the tool's view, with `has_view`), `refused`, `tool_error`, `confirm`,
//!   `purchase`, `answer`, `stopped`, `error`), each with a `seq`.
//! - `POST /api/messages` `{"text": …}`: starts a task (202); 409 while one runs.
//! - `POST /api/purchases/{draft_id}` `{"decision": "declined"}` or
//!   `{"decision": "placed", "order_id": …}`: the person's answer to the pending draft. The
//!   widget's Confirm commits through the page's bridge and the page reports the order here; this
//!   process reads it back with `get_order` and never commits itself (see `purchase`).
//!
//! Only the server calls this API, never a browser: it listens on loopback only, refuses any
//! request that carries an `Origin` header (every browser `POST` and cross-origin `fetch` does)
//! or names a `Host` other than its own loopback address (DNS rebinding), and POSTs must be JSON.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::agent::Session;
use crate::config::Config;
use crate::host::{Confirmation, Event, Host, render};
use crate::purchase::{Draft, card};

/// How long a draft waits for the person's answer before it counts as declined (drafts are
/// valid for 30 minutes).
const ANSWER_WAIT: Duration = Duration::from_secs(25 * 60);
/// The conversation kept for the page; older turns are dropped first.
const MAX_TURNS: usize = 1_000;
/// How long a request to this API may carry a body.
const MAX_TEXT_CHARS: usize = 4_000;

/// The draft waiting for the person.
struct Pending {
    draft_id: String,
    answer: oneshot::Sender<Confirmation>,
}

#[derive(Default)]
struct Conversation {
    turns: Vec<Value>,
    next_seq: u64,
    busy: bool,
    pending: Option<Pending>,
    /// Why the chat cannot run right now (no key, MCP server unreachable), for the page.
    problem: Option<String>,
    tools: Vec<String>,
}

impl Conversation {
    fn push(&mut self, mut turn: Value) {
        self.next_seq += 1;
        turn["seq"] = json!(self.next_seq);
        self.turns.push(turn);
        if self.turns.len() > MAX_TURNS {
            let extra = self.turns.len() - MAX_TURNS;
            self.turns.drain(..extra);
        }
    }
}

struct Shared {
    config: Config,
    conversation: Mutex<Conversation>,
    /// Connected on first success; held for the whole task while one runs.
    session: tokio::sync::Mutex<Option<Session>>,
}

impl Shared {
    fn with<T>(&self, f: impl FnOnce(&mut Conversation) -> T) -> T {
        let mut guard = match self.conversation.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    /// The session, connecting first if there is none yet. On failure the reason is kept for the page.
    async fn connected(&self) -> Option<tokio::sync::MutexGuard<'_, Option<Session>>> {
        let mut session = self.session.lock().await;
        if session.is_none() {
            match Session::connect(&self.config).await {
                Ok(s) => {
                    let tools = s.tool_names();
                    self.with(|c| {
                        c.tools = tools;
                        c.problem = None;
                    });
                    *session = Some(s);
                }
                Err(e) => {
                    let why = format!("{e:#}");
                    self.with(|c| c.problem = Some(why));
                    return None;
                }
            }
        }
        Some(session)
    }
}

/// The panel's side of the loop: events become turns, a draft waits for the page's answer.
struct PanelHost {
    shared: Arc<Shared>,
}

impl Host for PanelHost {
    fn show(&mut self, event: Event<'_>) {
        let turn = match &event {
            Event::ToolCall { turn, name, arguments } => {
                json!({"kind": "call", "turn": turn, "name": name, "arguments": arguments})
            }
            Event::ToolError { turn, name, message } => {
                json!({"kind": "tool_error", "turn": turn, "name": name, "text": message})
            }
            Event::Refused { turn, name, reason } => {
                json!({"kind": "refused", "turn": turn, "name": name, "text": reason})
            }
            Event::Purchase(text) => json!({"kind": "purchase", "text": text}),
            Event::Answer(text) => json!({"kind": "answer", "text": text}),
            Event::Stopped(text) => json!({"kind": "stopped", "text": text}),
        };
        eprintln!("{}", render(&event));
        self.shared.with(|c| c.push(turn));
    }

    fn tool_result(&mut self, turn: u32, name: &str, arguments: &Value, result: &CallToolResult, has_view: bool) {
        let result = serde_json::to_value(result).unwrap_or(Value::Null);
        self.shared.with(|c| {
            c.push(json!({"kind": "result", "turn": turn, "name": name, "arguments": arguments,
                          "is_error": result["isError"] == json!(true), "has_view": has_view, "result": result}))
        });
    }

    fn confirm(&mut self, draft: &Draft) -> impl Future<Output = Confirmation> + Send {
        let (tx, rx) = oneshot::channel();
        let draft_id = draft.draft.id.clone();
        let text = card(&draft.draft);
        self.shared.with(|c| {
            c.pending = Some(Pending { draft_id: draft_id.clone(), answer: tx });
            c.push(json!({"kind": "confirm", "draft_id": draft_id, "card": text}));
        });
        let shared = self.shared.clone();
        async move {
            // No answer in time, or the page gone: nothing is bought.
            let answer = match tokio::time::timeout(ANSWER_WAIT, rx).await {
                Ok(Ok(answer)) => answer,
                _ => Confirmation::Declined,
            };
            shared.with(|c| c.pending = None);
            answer
        }
    }
}

/// Serves the API on `addr` (loopback only) until the process ends.
pub async fn serve(config: Config, addr: SocketAddr) -> anyhow::Result<()> {
    let (local, server) = bind(config, addr).await?;
    eprintln!("giftgenius-chat: chat API on http://{local}/api/state");
    server.await?;
    Ok(())
}

/// Binds `addr` (loopback only; port 0 picks one) and returns the bound address and the server,
/// which runs when awaited (tests spawn it).
pub async fn bind(
    config: Config,
    addr: SocketAddr,
) -> anyhow::Result<(SocketAddr, impl Future<Output = std::io::Result<()>> + Send)> {
    if !addr.ip().is_loopback() {
        anyhow::bail!("--listen {addr}: the chat API listens on a loopback address only (127.0.0.1)");
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let shared = Arc::new(Shared {
        config,
        conversation: Mutex::new(Conversation::default()),
        session: tokio::sync::Mutex::new(None),
    });
    // Connect early so the page can show the tools, retrying while the server starts up
    // (the preview starts this process before the server answers).
    let early = shared.clone();
    tokio::spawn(async move {
        for _ in 0..120 {
            if early.connected().await.is_some() {
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let server = axum::serve(listener, router(shared, local)).into_future();
    Ok((local, server))
}

fn router(shared: Arc<Shared>, local: SocketAddr) -> Router {
    let hosts = Arc::new(vec![format!("127.0.0.1:{}", local.port()), format!("localhost:{}", local.port())]);
    Router::new()
        .route("/api/state", get(state))
        .route("/api/messages", post(message))
        .route("/api/purchases/{draft_id}", post(purchase))
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let hosts = hosts.clone();
            async move { guard(&hosts, request, next).await }
        }))
        .with_state(shared)
}

/// Refuses browsers (any `Origin`) and foreign `Host` names.
async fn guard(hosts: &[String], request: Request, next: Next) -> Response {
    if request.headers().contains_key(header::ORIGIN) {
        return problem(StatusCode::FORBIDDEN, "this API is for the preview server, not for pages");
    }
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if !hosts.iter().any(|h| h == host) {
        return problem(StatusCode::FORBIDDEN, "unexpected Host");
    }
    next.run(request).await
}

fn problem(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({"error": message}))).into_response()
}

async fn state(State(shared): State<Arc<Shared>>) -> Response {
    let body = shared.with(|c| {
        json!({
            "busy": c.busy,
            "pending": c.pending.as_ref().map(|p| json!({"draft_id": p.draft_id})),
            "problem": c.problem,
            "tools": c.tools,
            "turns": c.turns,
        })
    });
    ([(header::CACHE_CONTROL, "no-store")], Json(body)).into_response()
}

#[derive(Deserialize)]
struct MessageBody {
    text: String,
}

async fn message(State(shared): State<Arc<Shared>>, Json(body): Json<MessageBody>) -> Response {
    let text = body.text.trim().to_string();
    if text.is_empty() || text.chars().count() > MAX_TEXT_CHARS {
        return problem(StatusCode::BAD_REQUEST, "a message is 1 to 4000 characters");
    }
    let started = shared.with(|c| {
        if c.busy {
            return false;
        }
        c.busy = true;
        c.push(json!({"kind": "user", "text": text}));
        true
    });
    if !started {
        return problem(StatusCode::CONFLICT, "the model is still working on the last message");
    }
    tokio::spawn(run_task(shared, text));
    (StatusCode::ACCEPTED, Json(json!({"accepted": true}))).into_response()
}

/// One task to its end; whatever happens, the conversation says so and `busy` ends.
async fn run_task(shared: Arc<Shared>, text: String) {
    let outcome = match shared.connected().await {
        None => Err(shared.with(|c| c.problem.clone()).unwrap_or_else(|| "the chat could not start".into())),
        Some(mut session) => {
            let session = session.as_mut().expect("connected");
            let mut host = PanelHost { shared: shared.clone() };
            session.run_task(&mut host, &text).await.map(|_| ()).map_err(|e| format!("{e:#}"))
        }
    };
    shared.with(|c| {
        if let Err(why) = outcome {
            c.push(json!({"kind": "error", "text": why}));
        }
        c.busy = false;
    });
}

#[derive(Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
enum Decision {
    Declined,
    Placed { order_id: String },
}

async fn purchase(
    State(shared): State<Arc<Shared>>,
    Path(draft_id): Path<String>,
    Json(decision): Json<Decision>,
) -> Response {
    let answer = match decision {
        Decision::Declined => Confirmation::Declined,
        Decision::Placed { order_id } if !order_id.trim().is_empty() && order_id.len() <= 64 => {
            Confirmation::PlacedByView { order_id }
        }
        Decision::Placed { .. } => return problem(StatusCode::BAD_REQUEST, "order_id: 1 to 64 characters"),
    };
    let pending = shared.with(|c| match &c.pending {
        Some(p) if p.draft_id == draft_id => c.pending.take(),
        _ => None,
    });
    match pending {
        Some(p) => {
            // The loop may have stopped waiting (timed out) a moment ago: then nothing happens.
            let _ = p.answer.send(answer);
            Json(json!({"ok": true})).into_response()
        }
        None => problem(StatusCode::NOT_FOUND, "no draft with that id is waiting for an answer"),
    }
}
