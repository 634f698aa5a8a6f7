//! The chaos proof: money is never lost or doubled. Two replicas of the server binary on one
//! PostgreSQL database and one on a SQLite file, all charging one SANDBOX provider process;
//! concurrent buyers with duplicate submits and retries across replicas; the provider told to
//! time out (after charging), fail (503) or decline at random; replicas SIGKILLed at random
//! moments and restarted; then the reconciler. The invariants are read from the databases and
//! the provider's ledger, never from responses:
//! - succeeded charges = paid orders, each paid order's charge is in the ledger under its
//!   provider key for its total, and no money moved without a paid order;
//! - no provider key charged twice, no draft paid twice;
//! - no order left pending after the reconciler;
//! - no gift sold beyond its stock;
//! - every key that got a definitive answer answers the same again;
//! - cancellations (half the buyers who paid cancel, with duplicate submits across replicas
//!   under the same faults and kills): each cancelled order has exactly one refund at the
//!   provider, of its charge and for its total; no charge is refunded twice; no refund is left
//!   pending after the reconciler; every cancel key answers its first answer again.
//!
//! ACP platforms buy too (issue 25): sessions created over `/acp/checkout_sessions` on the same
//! replicas and the same stock as the app's buyers, paid with delegated-payment vault tokens by
//! completes submitted twice at once, retried and repeated under a second key, through the same
//! faults and kills: the invariants above cover their orders (one per session), every key's
//! definitive answer is its only one, and a completed session's answers name one order. Every
//! order change is announced from the outbox to a receiver that fails at random (503, 429 with
//! `Retry-After`, no answer): after dedupe by `Request-Id` it holds exactly one `order_create`
//! per order that was paid and one `order_update` per cancellation, nothing for an order that
//! was not, every signature verified, and no event dead.
//!
//! A run must also have done something: a floor of definitive answers, settled purchases and
//! SIGKILLs (see [`Floors`]), so a run in which every call was lost, or no replica died, fails
//! instead of passing on an empty database.
//!
//! The same buyers and checks run against containers (issue 45): `containers_small` and
//! `containers_long` take the compose deployment that `cargo xtask cluster chaos [--long]` (and
//! `cargo xtask test`) starts fresh: three replicas on PostgreSQL behind HAProxy, each beside
//! its provider, all on one ledger. Buyers call through HAProxy while replicas are killed
//! (`podman kill --signal KILL`) and started again; the ledger is read, and the faults set, by
//! a provider process of this test on the same ledger file. Then one rolling restart: each
//! replica in turn is stopped (SIGTERM: the drain) and started again while clients keep calling
//! through HAProxy, and every call must be answered (none may fail or answer 5xx). Without
//! the cluster's variables (`GIFTGENIUS_CLUSTER_*`) they fail, naming the command to run.
//!
//! `chaos_small` runs on every `cargo test` (seconds) with a fixed seed ([`SMALL_SEED`]; `cargo
//! xtask test` removes a `GIFTGENIUS_CHAOS_SEED` of the caller's shell); the long run is
//! `GIFTGENIUS_CHAOS_BUYERS=200 GIFTGENIUS_CHAOS_SECS=120 cargo test -p giftgenius-server --test
//! api chaos::chaos_long -- --ignored --nocapture`, seeded from the clock (`GIFTGENIUS_CHAOS_SEED`
//! replays a run, of either size).

use crate::support::with_recipient;
use giftgenius_commerce::order::Order;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use giftgenius_catalog::Catalog;
use giftgenius_commerce::store::{OrderStatusColumn, RefundStatusColumn, Store};
use giftgenius_sandbox_pay::api::ChargeStatus;
use giftgenius_types::wire::META_CANCEL_TOKENS;
use serde_json::{Value, json};
use tokio::sync::Mutex as AsyncMutex;

use crate::postgres::TestDb;
use crate::stateless;
use crate::support::{
    Receiver, Reply, SandboxPay, ServerProcess, TOKEN, commit_args, connect, delegate_body, meta_of, request,
    start_server_binary,
};

/// tr-055 has 3 in stock: more buyers want it than it has.
const GIFTS: [&str; 4] = ["tr-055", "tr-004", "hh-010", "pp-001"];
const WINDOW_SECS: &str = "3";
/// No request may wait longer (a killed replica's connection hangs otherwise).
const CALL_LIMIT: Duration = Duration::from_secs(3);

/// A small deterministic generator (xorshift64*), so a failing run can be replayed by its seed.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

#[derive(Debug, Clone, Copy)]
struct Size {
    buyers: usize,
    chaos: Duration,
    seed: u64,
    /// The killer's pause between two kills: at least `.0` ms, plus up to `.1` ms more.
    pause: (u64, u64),
}

/// Processes start in a fraction of a second: a kill every 0.3–1.2 s.
const PROCESS_PAUSE: (u64, u64) = (300, 900);
/// A container restarts in seconds (podman, then the server's start): a kill every 1.5–3.5 s.
const CONTAINER_PAUSE: (u64, u64) = (1500, 2000);

/// The seed of `chaos_small`: the same draws on every `cargo test`.
const SMALL_SEED: u64 = 0x6966_7467_656e_6975;

/// The least a run must have done, from its size. A healthy `chaos_small` on a loaded 2-core
/// machine clears each by a wide margin (its buyers have 20 s past the chaos to get an answer,
/// and the killer kills every 0.3–1.2 s); a run whose calls are all lost has no definitive
/// answer and no charge, a run with the killer broken has no kill.
#[derive(Debug)]
struct Floors {
    definitive: usize,
    succeeded_charges: usize,
    kills: u64,
}

impl Floors {
    fn of(size: Size) -> Floors {
        Floors {
            // Most buyers get a draft and then an answer; a third is far below that.
            definitive: size.buyers / 3,
            // Declines are one fault plan in six, and only tr-055 runs out of stock.
            succeeded_charges: size.buyers / 4,
            // One kill per 1.2 s at the slowest draw, plus a restart: a third of that rate.
            kills: (size.chaos.as_secs() / 4).max(1),
        }
    }

    /// Err naming each floor the run did not reach.
    fn check(&self, definitive: usize, succeeded_charges: usize, kills: u64) -> Result<(), String> {
        let mut short = Vec::new();
        if definitive < self.definitive {
            short.push(format!("{definitive} definitive answers (at least {})", self.definitive));
        }
        if succeeded_charges < self.succeeded_charges {
            short.push(format!("{succeeded_charges} succeeded charges (at least {})", self.succeeded_charges));
        }
        if kills < self.kills {
            short.push(format!("{kills} SIGKILLs (at least {})", self.kills));
        }
        if short.is_empty() { Ok(()) } else { Err(format!("the run did too little: {}", short.join(", "))) }
    }
}

/// What a run did, printed at its end.
#[derive(Debug, Default)]
struct Counts {
    commit_calls: AtomicU64,
    duplicate_submits: AtomicU64,
    transient_answers: AtomicU64,
    lost_calls: AtomicU64,
    kills: AtomicU64,
    fault_plans: AtomicU64,
    cancel_calls: AtomicU64,
    acp_calls: AtomicU64,
}

/// One deployment: its database and its replicas.
struct Deployment {
    name: &'static str,
    db: String,
    replicas: Replicas,
}

/// The replicas of a deployment: processes this test starts, or the containers of the compose
/// deployment (`cargo xtask cluster`), reached through its HAProxy.
enum Replicas {
    /// Server processes (slots are restarted in place).
    Processes { flags: Vec<String>, slots: Vec<AsyncMutex<Option<ServerProcess>>>, urls: Mutex<Vec<Option<String>>> },
    /// Containers by name, behind the load balancer at `url`.
    Containers { url: String, names: Vec<String> },
}

impl Deployment {
    async fn start(
        name: &'static str,
        db: String,
        replicas: usize,
        provider: &SandboxPay,
        events: &[String],
    ) -> Arc<Deployment> {
        let mut flags: Vec<String> = [
            "--payments-url",
            &provider.url,
            "--payments-token-file",
            provider.token_file(),
            "--payments-timeout-ms",
            "400",
            "--idempotency-lease-ms",
            "1500",
            "--reconcile-interval-secs",
            "1",
            "--reconcile-after-secs",
            WINDOW_SECS,
            "--hourly-draft-limit",
            "0",
            "--hourly-checkout-limit",
            "0",
        ]
        .map(String::from)
        .to_vec();
        flags.extend(events.iter().cloned());
        let deployment = Arc::new(Deployment {
            name,
            db,
            replicas: Replicas::Processes {
                flags,
                slots: (0..replicas).map(|_| AsyncMutex::new(None)).collect(),
                urls: Mutex::new(vec![None; replicas]),
            },
        });
        for slot in 0..replicas {
            deployment.restart(slot).await;
        }
        deployment
    }

    fn count(&self) -> usize {
        match &self.replicas {
            Replicas::Processes { slots, .. } => slots.len(),
            Replicas::Containers { names, .. } => names.len(),
        }
    }

    /// Kills the slot's replica (SIGKILL) if it runs, and starts it again on the same database.
    async fn restart(&self, slot: usize) {
        match &self.replicas {
            Replicas::Processes { flags, slots, urls } => {
                let mut process = slots[slot].lock().await;
                urls.lock().unwrap()[slot] = None;
                drop(process.take());
                let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
                let started = start_server_binary(Path::new(&self.db), &flags, "error", Stdio::null()).await;
                urls.lock().unwrap()[slot] = Some(started.url.clone());
                *process = Some(started);
            }
            Replicas::Containers { names, .. } => {
                // podman 4.3 does not restart a container killed by `podman kill`: we do.
                podman(&["kill", "--signal", "KILL", &names[slot]]).await;
                podman(&["start", &names[slot]]).await;
            }
        }
    }

    /// The URL of a running replica, picked at random (None while all are restarting); the
    /// load balancer's for containers.
    fn pick(&self, rng: &mut Rng) -> Option<String> {
        match &self.replicas {
            Replicas::Processes { urls, .. } => {
                let live: Vec<String> = urls.lock().unwrap().iter().flatten().cloned().collect();
                (!live.is_empty()).then(|| live[rng.below(live.len() as u64) as usize].clone())
            }
            Replicas::Containers { url, .. } => Some(url.clone()),
        }
    }

    async fn stop(&self) {
        if let Replicas::Processes { slots, .. } = &self.replicas {
            for slot in slots {
                drop(slot.lock().await.take());
            }
        }
    }
}

/// `podman ARGS` (with the caller's CONTAINERS_CONF), which must succeed.
async fn podman(args: &[&str]) {
    let out = tokio::process::Command::new("podman").args(args).output().await.expect("podman runs");
    assert!(out.status.success(), "podman {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

impl Deployment {
    /// One tools/call, bounded in time; Err when the replica is gone. The second value is the
    /// confirmation token of the result's widget `_meta`, if any.
    async fn call(
        &self,
        url: &str,
        subject: &str,
        tool: &'static str,
        arguments: Value,
    ) -> Result<(Value, Value), String> {
        self.call_with_meta(url, subject, tool, arguments, TOKEN).await
    }

    /// [`Deployment::call`], returning the widget `_meta` value under `key`. Processes are
    /// called as most clients do today (initialize, then the call, on one fresh connection);
    /// containers behind the load balancer, which routes each request to any replica, as MCP
    /// 2026-07-28 clients do: one request, no session (docs/running.md, MCP revisions, sessions and
    /// replicas).
    async fn call_with_meta(
        &self,
        url: &str,
        subject: &str,
        tool: &'static str,
        arguments: Value,
        key: &str,
    ) -> Result<(Value, Value), String> {
        match self.replicas {
            Replicas::Processes { .. } => call_with_session(url, subject, tool, arguments, key).await,
            Replicas::Containers { .. } => call_stateless(url, subject, tool, arguments, key).await,
        }
    }
}

/// initialize and tools/call on a fresh connection (rmcp's client), bounded in time.
async fn call_with_session(
    url: &str,
    subject: &str,
    tool: &'static str,
    arguments: Value,
    key: &str,
) -> Result<(Value, Value), String> {
    let attempt = async {
        let client = connect(&format!("{url}/mcp")).await?;
        let result = client.call_tool(request(Some(subject), tool, arguments)).await.map_err(|e| e.to_string())?;
        let meta = meta_of(&result, key).cloned().unwrap_or(Value::Null);
        Ok::<_, String>((result.structured_content.unwrap_or(Value::Null), meta))
    };
    tokio::time::timeout(CALL_LIMIT, attempt).await.map_err(|_| "timed out".to_string())?
}

/// One MCP 2026-07-28 tools/call (no initialize, no session), bounded in time; Err for no
/// answer, an HTTP error status (a 5xx of the load balancer included) or no JSON-RPC result.
async fn call_stateless(
    url: &str,
    subject: &str,
    tool: &'static str,
    arguments: Value,
    key: &str,
) -> Result<(Value, Value), String> {
    let attempt = async {
        let (status, message) = stateless::post(url, tool, arguments, subject).await?;
        if status != 200 {
            return Err(format!("HTTP {status}: {message}"));
        }
        let result = &message["result"];
        if result.is_null() {
            return Err(format!("no result: {message}"));
        }
        Ok((result["structuredContent"].clone(), result["_meta"][key].clone()))
    };
    tokio::time::timeout(CALL_LIMIT, attempt).await.map_err(|_| "timed out".to_string())?
}

/// A checking call after the chaos (a replay): retried while it gets no answer at all (a
/// replica still starting, a loaded machine past [`CALL_LIMIT`]), since only an answer can break
/// an invariant; up to five tries.
async fn reached<T, F: Future<Output = Result<T, String>>>(mut call: impl FnMut() -> F) -> Result<T, String> {
    let mut tries = 0;
    loop {
        match call().await {
            Ok(answer) => return Ok(answer),
            Err(e) if tries >= 4 => return Err(format!("no answer after 5 tries: {e}")),
            Err(_) => tries += 1,
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A definitive answer: success, or an error that says not to retry.
fn definitive(answer: &Value) -> bool {
    answer["ok"] == true || answer["error"]["retryable"] == false
}

/// What one buyer saw: its deployment, key, and its first definitive answer (if any came);
/// and, for a buyer who cancelled, the cancel_order arguments and their first definitive answer.
struct Purchase {
    deployment: usize,
    subject: String,
    commit: Value,
    first: Option<Value>,
    cancel: Option<(Value, Option<Value>)>,
}

/// Calls `tool` with `arguments` (sometimes twice at once, on two replicas) until a definitive
/// answer comes or time is up; Err when two definitive answers for one key differ.
async fn until_definitive(
    site: &Deployment,
    subject: &str,
    tool: &'static str,
    arguments: &Value,
    rng: &mut Rng,
    counts: &Counts,
    stop_by: Instant,
) -> Result<Option<Value>, String> {
    let calls = if tool == "cancel_order" { &counts.cancel_calls } else { &counts.commit_calls };
    let mut first: Option<Value> = None;
    while first.is_none() && Instant::now() < stop_by {
        // Sometimes the same submit twice at once, on two replicas (a double click, a host retry).
        let copies = if rng.below(3) == 0 { 2 } else { 1 };
        if copies == 2 {
            counts.duplicate_submits.fetch_add(1, Ordering::Relaxed);
        }
        let urls: Vec<Option<String>> = (0..copies).map(|_| site.pick(rng)).collect();
        let pending = urls.into_iter().flatten().map(|url| {
            calls.fetch_add(1, Ordering::Relaxed);
            let (subject, arguments) = (subject.to_string(), arguments.clone());
            async move { site.call(&url, &subject, tool, arguments).await }
        });
        for answer in futures::future::join_all(pending).await {
            match answer {
                Ok((answer, _)) if definitive(&answer) => match &first {
                    None => first = Some(answer),
                    Some(seen) if *seen != answer => {
                        return Err(format!("{subject}: two definitive {tool} answers for one key:\n{seen}\n{answer}"));
                    }
                    Some(_) => {}
                },
                Ok(_) => {
                    counts.transient_answers.fetch_add(1, Ordering::Relaxed);
                }
                Err(_) => {
                    counts.lost_calls.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        if first.is_none() {
            tokio::time::sleep(Duration::from_millis(50 + rng.below(200))).await;
        }
    }
    Ok(first)
}

async fn buyer(
    index: usize,
    deployments: Arc<Vec<Arc<Deployment>>>,
    mut rng: Rng,
    counts: Arc<Counts>,
    stop_by: Instant,
) -> Result<Option<Purchase>, String> {
    let deployment = index % deployments.len();
    let site = &deployments[deployment];
    let subject = format!("buyer{index}");
    let gift = GIFTS[rng.below(GIFTS.len() as u64) as usize];
    // Prepare until a replica answers (stock may already be gone: then this buyer buys nothing).
    let (draft, token) = loop {
        if Instant::now() > stop_by {
            return Ok(None);
        }
        let Some(url) = site.pick(&mut rng) else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        // A message of its own: each buyer its own draft, also where every caller is one account
        // (the compose deployment runs --single-user).
        let arguments = with_recipient(json!({"gift_id": gift, "gift_message": format!("from buyer {index}")}));
        match site.call(&url, &subject, "prepare_order", arguments).await {
            Ok((answer, token)) if answer["ok"] == true => {
                break (
                    answer["draft"]["id"].as_str().unwrap_or_default().to_string(),
                    token.as_str().unwrap_or_default().to_string(),
                );
            }
            Ok((answer, _)) if answer["error"]["code"] == "GIFT_UNAVAILABLE" => return Ok(None),
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    let commit = commit_args(&draft, &format!("ik_{index}"), &token);
    let first = until_definitive(site, &subject, "commit_order", &commit, &mut rng, &counts, stop_by).await?;
    // Half of those who paid change their mind: the cancel token from get_order's widget
    // `_meta` (as the widget's list has it), then cancel_order under one key.
    let order_id = first.as_ref().filter(|f| f["ok"] == true).and_then(|f| f["order"]["id"].as_str());
    let cancel = match order_id {
        Some(order_id) if rng.below(2) == 0 => {
            let token = loop {
                if Instant::now() > stop_by {
                    break None;
                }
                let Some(url) = site.pick(&mut rng) else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let asked = json!({"order_id": order_id});
                match site.call_with_meta(&url, &subject, "get_order", asked, META_CANCEL_TOKENS).await {
                    Ok((answer, tokens)) if answer["ok"] == true => {
                        break tokens[order_id].as_str().map(str::to_string);
                    }
                    _ => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            };
            match token {
                Some(token) => {
                    let args = json!({"order_id": order_id, "idempotency_key": format!("ck_{index}"),
                        "confirmation_token": token});
                    let answer =
                        until_definitive(site, &subject, "cancel_order", &args, &mut rng, &counts, stop_by).await?;
                    Some((args, answer))
                }
                None => None,
            }
        }
        _ => None,
    };
    Ok(Some(Purchase { deployment, subject, commit, first, cancel }))
}

/// The ACP platform of the run: its key, and the receiver of every order event.
const PLATFORM_KEY: &str = "chaos-platform-key-0123456789abcdef";
const WEBHOOK_SECRET: &str = "whsec_chaos_0123456789abcdef0123456789";

/// An ACP answer: its HTTP status and body.
type AcpAnswer = (u16, Value);

/// What one ACP buyer saw: its deployment, its session, and each complete key with its body and
/// first definitive answer.
struct AcpPurchase {
    deployment: usize,
    session: String,
    completes: Vec<(String, Value, Option<AcpAnswer>)>,
}

/// One ACP request on a fresh connection, bounded in time; Err when the replica is gone.
async fn acp_once(
    url: &str,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> Result<(u16, Value), String> {
    let client = reqwest::Client::new();
    let mut request = match method {
        "GET" => client.get(format!("{url}/acp/checkout_sessions{path}")),
        _ => client.post(format!("{url}/acp/checkout_sessions{path}")),
    }
    .bearer_auth(PLATFORM_KEY)
    .header("API-Version", "2026-04-17")
    .timeout(CALL_LIMIT);
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    if let Some(body) = body {
        request = request.json(body);
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    Ok((status, response.json().await.map_err(|e| e.to_string())?))
}

/// An ACP answer to keep: anything stored under its key (2xx, and 4xx but 409).
fn acp_definitive(status: u16) -> bool {
    (200..300).contains(&status) || ((400..500).contains(&status) && status != 409)
}

/// An ACP buyer: a session for a gift (with an address: ready at once if in stock), a vault token
/// for its total, then completes (sometimes twice at once on two replicas; sometimes again under
/// a second key, as a platform that lost its answer does) until each key has a definitive answer.
async fn acp_buyer(
    index: usize,
    deployments: Arc<Vec<Arc<Deployment>>>,
    provider: Arc<SandboxPay>,
    mut rng: Rng,
    counts: Arc<Counts>,
    stop_by: Instant,
) -> Result<Option<AcpPurchase>, String> {
    let deployment = index % deployments.len();
    let site = &deployments[deployment];
    let gift = GIFTS[rng.below(GIFTS.len() as u64) as usize];
    let create = json!({"line_items": [{"id": gift}], "currency": "usd", "capabilities": {},
        "fulfillment_details": {"email": "buyer@example.com", "address": {"name": "Ana Lima", "line_one": "1 Main St",
            "city": "San Francisco", "state": "CA", "country": "US", "postal_code": "94103"}}});
    let created = loop {
        if Instant::now() > stop_by {
            return Ok(None);
        }
        let Some(url) = site.pick(&mut rng) else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        counts.acp_calls.fetch_add(1, Ordering::Relaxed);
        match acp_once(&url, "POST", "", Some(&format!("acp-create-{index}")), Some(&create)).await {
            Ok((201, session)) => break session,
            Ok((status, answer)) if acp_definitive(status) => return Err(format!("acp create refused: {answer}")),
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    if created["status"] != "ready_for_payment" {
        return Ok(None); // out of stock already
    }
    let session = created["id"].as_str().unwrap_or_default().to_string();
    let total = created["totals"].as_array().and_then(|t| t.iter().find(|t| t["type"] == "total"));
    let total = total.and_then(|t| t["amount"].as_i64()).ok_or("a session without a total")?;
    let mut token_body = delegate_body("4242424242424242");
    token_body["allowance"]["max_amount"] = json!(total);
    token_body["allowance"]["checkout_session_id"] = json!(session);
    token_body["allowance"]["merchant_id"] = json!("giftgenius");
    let token = provider.vault_token(&format!("vt-{index}"), &token_body).await;
    let body = json!({"payment_data": {"handler_id": "card_tokenized",
        "instrument": {"type": "card", "credential": {"type": "spt", "token": token}}}});
    let mut keys = vec![format!("acp-pay-{index}")];
    if rng.below(2) == 0 {
        keys.push(format!("acp-pay-{index}-again"));
    }
    let mut completes = Vec::new();
    for key in keys {
        let path = format!("/{session}/complete");
        let mut first: Option<AcpAnswer> = None;
        while first.is_none() && Instant::now() < stop_by {
            let copies = if rng.below(3) == 0 { 2 } else { 1 };
            if copies == 2 {
                counts.duplicate_submits.fetch_add(1, Ordering::Relaxed);
            }
            let urls: Vec<Option<String>> = (0..copies).map(|_| site.pick(&mut rng)).collect();
            let pending = urls.into_iter().flatten().map(|url| {
                counts.acp_calls.fetch_add(1, Ordering::Relaxed);
                let (path, key, body) = (path.clone(), key.clone(), body.clone());
                async move { acp_once(&url, "POST", &path, Some(&key), Some(&body)).await }
            });
            for answer in futures::future::join_all(pending).await {
                match answer {
                    Ok((status, answer)) if acp_definitive(status) => match &first {
                        None => first = Some((status, answer)),
                        Some(seen) if *seen != (status, answer.clone()) => {
                            return Err(format!("{session} {key}: two definitive answers:\n{seen:?}\n{answer}"));
                        }
                        Some(_) => {}
                    },
                    Ok(_) => {
                        counts.transient_answers.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => {
                        counts.lost_calls.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            if first.is_none() {
                tokio::time::sleep(Duration::from_millis(50 + rng.below(200))).await;
            }
        }
        completes.push((key, body.clone(), first));
    }
    Ok(Some(AcpPurchase { deployment, session, completes }))
}

/// The ACP purchases: a key answers its first answer again; a session's completed answers name
/// one order, which is paid (or cancelled) under the session's id.
async fn check_acp(
    deployments: &[Arc<Deployment>],
    purchases: &[AcpPurchase],
) -> Result<BTreeMap<&'static str, usize>, String> {
    let mut rng = Rng(11);
    let (mut replayed, mut completed) = (0, 0);
    for purchase in purchases {
        let site = &deployments[purchase.deployment];
        let mut orders = HashSet::new();
        for (key, body, first) in &purchase.completes {
            let Some(first) = first else { continue };
            let url = site.pick(&mut rng).ok_or("no replica runs")?;
            let path = format!("/{}/complete", purchase.session);
            let again = reached(|| acp_once(&url, "POST", &path, Some(key), Some(body))).await?;
            if again != *first {
                return Err(format!("{} {key}: answered\n{first:?}\nthen\n{again:?}", purchase.session));
            }
            replayed += 1;
            if first.1["status"] == "completed" {
                orders.insert(first.1["order"]["id"].as_str().unwrap_or_default().to_string());
            }
        }
        if orders.len() > 1 {
            return Err(format!("session {} completed with two orders: {orders:?}", purchase.session));
        }
        if let Some(order) = orders.into_iter().next() {
            let store = Store::connect(&site.db).await.map_err(|e| e.to_string())?;
            let row = store.order_by_id(&order).await.map_err(|e| e.to_string())?.ok_or("a completed order is gone")?;
            if row.draft_id != purchase.session || row.status != OrderStatusColumn::Paid {
                return Err(format!("session {} answered order {order}, which is {row:?}", purchase.session));
            }
            completed += 1;
        }
    }
    Ok(BTreeMap::from([
        ("ACP complete keys answering their first answer again", replayed),
        ("ACP sessions completed", completed),
    ]))
}

/// The receiver holds, after dedupe by `Request-Id`, exactly one `order_create` per order that was
/// paid and one `order_update` per cancellation, all signed; nothing is dead in any outbox.
async fn check_events(
    deployments: &[Arc<Deployment>],
    receiver: &Receiver,
) -> Result<BTreeMap<&'static str, usize>, String> {
    let mut expected = BTreeMap::new();
    for deployment in deployments {
        let store = Store::connect(&deployment.db).await.map_err(|e| e.to_string())?;
        for order in store.orders_with_status(OrderStatusColumn::Paid).await.map_err(|e| e.to_string())? {
            expected.insert((order.id.clone(), "order_create"), 1);
        }
        for order in store.orders_with_status(OrderStatusColumn::Cancelled).await.map_err(|e| e.to_string())? {
            expected.insert((order.id.clone(), "order_create"), 1);
            expected.insert((order.id.clone(), "order_update"), 1);
        }
    }
    // Delivery goes on after the purchases settle: wait (bounded) for the set to be complete.
    let deadline = Instant::now() + Duration::from_secs(60);
    let got = loop {
        let mut got: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
        for body in receiver.accepted().values() {
            let kind = if body["type"] == "order_create" { "order_create" } else { "order_update" };
            *got.entry((body["data"]["id"].as_str().unwrap_or_default().to_string(), kind)).or_default() += 1;
        }
        if got == expected || Instant::now() > deadline {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    if got != expected {
        let missing: Vec<_> = expected.keys().filter(|k| !got.contains_key(*k)).collect();
        let extra: Vec<_> = got.iter().filter(|(k, n)| expected.get(*k) != Some(*n)).collect();
        return Err(format!("order events: missing {missing:?}; unexpected or duplicated {extra:?}"));
    }
    let seen = receiver.seen();
    if let Some(forged) = seen.iter().find(|s| !s.signature_ok) {
        return Err(format!("an event failed its signature check: {}", forged.request_id));
    }
    Ok(BTreeMap::from([
        ("order events expected and delivered (after dedupe)", expected.len()),
        ("webhook requests received (retries and re-sends included)", seen.len()),
        (
            "webhook requests refused or unanswered by the receiver",
            seen.iter().filter(|s| !(200..300).contains(&s.answered)).count(),
        ),
    ]))
}

/// The ledger and the databases agree; returns a summary line per fact checked.
async fn check_invariants(
    deployments: &[Arc<Deployment>],
    provider: &SandboxPay,
    purchases: &[Purchase],
) -> Result<BTreeMap<&'static str, usize>, String> {
    let catalog = Catalog::builtin();
    let ledger = provider.ledger().await;
    let mut keys = HashSet::new();
    for charge in &ledger {
        if !keys.insert(charge.idempotency_key.clone()) {
            return Err(format!("provider key {} charged twice", charge.idempotency_key));
        }
    }
    let succeeded: HashMap<&str, _> = ledger
        .iter()
        .filter(|c| c.status == ChargeStatus::Succeeded)
        .map(|c| (c.idempotency_key.as_str(), c))
        .collect();
    let refunds = provider.refunds().await;
    let mut refunded_charges = HashSet::new();
    let mut refund_keys = HashSet::new();
    for refund in &refunds {
        if !refunded_charges.insert(refund.charge.clone()) {
            return Err(format!("charge {} refunded twice", refund.charge));
        }
        if !refund_keys.insert(refund.idempotency_key.clone()) {
            return Err(format!("refund key {} used twice", refund.idempotency_key));
        }
    }
    let refund_of: HashMap<&str, _> = refunds.iter().map(|r| (r.charge.as_str(), r)).collect();
    let mut facts = BTreeMap::new();
    let mut paid_total = 0;
    let mut cancelled_total = 0;
    for deployment in deployments {
        let store = Store::connect(&deployment.db).await.map_err(|e| e.to_string())?;
        let pending = store.orders_with_status(OrderStatusColumn::PendingPayment).await.map_err(|e| e.to_string())?;
        if !pending.is_empty() {
            return Err(format!(
                "{}: {} orders still pending after the reconciler: {pending:?}",
                deployment.name,
                pending.len()
            ));
        }
        let paid: Vec<Order> = store.orders_with_status(OrderStatusColumn::Paid).await.map_err(|e| e.to_string())?;
        let declined = store.orders_with_status(OrderStatusColumn::PaymentDeclined).await.map_err(|e| e.to_string())?;
        let mut drafts = HashSet::new();
        let mut sold: HashMap<&str, i64> = HashMap::new();
        for order in &paid {
            let key = format!("gg_{}", order.id);
            let charge = succeeded.get(key.as_str()).ok_or_else(|| format!("paid order {} has no charge", order.id))?;
            if charge.amount != order.total_minor || order.charge_id.as_deref() != Some(charge.id.as_str()) {
                return Err(format!("paid order {} does not match its charge {charge:?}", order.id));
            }
            if !drafts.insert(order.draft_id.clone()) {
                return Err(format!("draft {} paid twice", order.draft_id));
            }
            *sold.entry(order.gift_id.as_str()).or_default() += order.quantity;
        }
        for (gift, units) in sold {
            let stock = catalog.get(gift).map(|g| i64::from(g.stock)).unwrap_or(0);
            if units > stock {
                return Err(format!("{}: {units} × {gift} sold, {stock} in stock", deployment.name));
            }
        }
        // A cancelled order was paid: its charge is in the ledger, and exactly one refund of it,
        // for its total; a paid order has none; no refund is left pending.
        let cancelled = store.orders_with_status(OrderStatusColumn::Cancelled).await.map_err(|e| e.to_string())?;
        for order in &cancelled {
            let key = format!("gg_{}", order.id);
            let charge =
                succeeded.get(key.as_str()).ok_or_else(|| format!("cancelled order {} has no charge", order.id))?;
            let refund = refund_of
                .get(charge.id.as_str())
                .ok_or_else(|| format!("cancelled order {} has no refund", order.id))?;
            if refund.amount != order.total_minor || order.charge_id.as_deref() != Some(charge.id.as_str()) {
                return Err(format!("cancelled order {} does not match its refund {refund:?}", order.id));
            }
            if !drafts.insert(order.draft_id.clone()) {
                return Err(format!("draft {} paid twice", order.draft_id));
            }
        }
        for order in &paid {
            if let Some(charge) = order.charge_id.as_deref().and_then(|c| refund_of.get(c)) {
                return Err(format!("paid order {} was refunded ({charge:?}) but is not cancelled", order.id));
            }
        }
        let pending_refunds =
            store.refunds_with_status(RefundStatusColumn::Pending).await.map_err(|e| e.to_string())?;
        if !pending_refunds.is_empty() {
            return Err(format!(
                "{}: {} refunds still pending after the reconciler",
                deployment.name,
                pending_refunds.len()
            ));
        }
        facts.insert(
            if pg_name(deployment) { "cancelled orders (postgres)" } else { "cancelled orders (sqlite)" },
            cancelled.len(),
        );
        cancelled_total += cancelled.len();
        paid_total += paid.len();
        // Abandoned: declined without any record at the provider (never charged, stock released).
        let abandoned = declined.iter().filter(|o| !keys.contains(&format!("gg_{}", o.id))).count();
        let pg = deployment.name == "postgres";
        facts.insert(if pg { "paid orders (postgres)" } else { "paid orders (sqlite)" }, paid.len());
        facts.insert(
            if pg { "declined orders (postgres)" } else { "declined orders (sqlite)" },
            declined.len() - abandoned,
        );
        facts.insert(if pg { "abandoned orders (postgres)" } else { "abandoned orders (sqlite)" }, abandoned);
    }
    if succeeded.len() != paid_total + cancelled_total {
        return Err(format!(
            "{} succeeded charges but {paid_total} paid and {cancelled_total} cancelled orders",
            succeeded.len()
        ));
    }
    if refunds.len() != cancelled_total {
        return Err(format!("{} refunds at the provider but {cancelled_total} cancelled orders", refunds.len()));
    }
    facts.insert("refunds", refunds.len());
    facts.insert("succeeded charges", succeeded.len());
    facts.insert("declined charges", ledger.iter().filter(|c| c.status == ChargeStatus::Failed).count());

    // Every key that got a definitive answer gives it again.
    let mut rng = Rng(7);
    let mut replayed = 0;
    for purchase in purchases {
        let Some(first) = &purchase.first else { continue };
        let site = &deployments[purchase.deployment];
        let url = site.pick(&mut rng).ok_or("no replica runs")?;
        let (again, _) =
            reached(|| site.call(&url, &purchase.subject, "commit_order", purchase.commit.clone())).await?;
        if again != *first {
            return Err(format!("{}: the key answered\n{first}\nthen\n{again}", purchase.subject));
        }
        replayed += 1;
        if let Some((args, Some(first))) = &purchase.cancel {
            let (again, _) = reached(|| site.call(&url, &purchase.subject, "cancel_order", args.clone())).await?;
            if again != *first {
                return Err(format!("{}: the cancel key answered\n{first}\nthen\n{again}", purchase.subject));
            }
            replayed += 1;
        }
    }
    facts.insert("keys answering their first answer again", replayed);
    Ok(facts)
}

/// The provider misbehaves at random (faults and latency, through the ledger's stored
/// settings, which every provider process on it reads) until `calm`.
fn misbehave(
    provider: &SandboxPay,
    counts: &Arc<Counts>,
    mut rng: Rng,
    calm: &Arc<AtomicBool>,
) -> tokio::task::JoinHandle<()> {
    let (provider_url, counts, calm) = (provider.url.clone(), counts.clone(), calm.clone());
    let http = provider.client();
    tokio::spawn(async move {
        let plans = ["", "5xx*1", "timeout*1", "decline*1", "5xx*2,timeout*1", "timeout*2"];
        while !calm.load(Ordering::Relaxed) {
            let plan = plans[rng.below(plans.len() as u64) as usize];
            let body = json!({"faults": plan, "latency_ms": rng.below(60)});
            let _ = http.post(format!("{provider_url}/admin/settings")).json(&body).send().await;
            counts.fault_plans.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(150 + rng.below(450))).await;
        }
    })
}

/// Replicas die (SIGKILL) at random moments, `pause` apart, and come back, until `until`.
fn kill_at_random(
    deployments: &Arc<Vec<Arc<Deployment>>>,
    counts: &Arc<Counts>,
    mut rng: Rng,
    until: Instant,
    pause: (u64, u64),
) -> tokio::task::JoinHandle<()> {
    let (deployments, counts) = (deployments.clone(), counts.clone());
    tokio::spawn(async move {
        while Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(pause.0 + rng.below(pause.1))).await;
            let site = &deployments[rng.below(deployments.len() as u64) as usize];
            let slot = rng.below(site.count() as u64) as usize;
            site.restart(slot).await;
            counts.kills.fetch_add(1, Ordering::Relaxed);
        }
    })
}

type Buyers = Vec<tokio::task::JoinHandle<Result<Option<Purchase>, String>>>;

/// The buyers, arriving over the chaos period.
fn spawn_buyers(
    size: Size,
    deployments: &Arc<Vec<Arc<Deployment>>>,
    counts: &Arc<Counts>,
    rng: &mut Rng,
    stop_by: Instant,
) -> Buyers {
    (0..size.buyers)
        .map(|i| {
            let (deployments, counts, mut rng) = (deployments.clone(), counts.clone(), Rng(rng.next()));
            let delay = Duration::from_millis(rng.below(size.chaos.as_millis() as u64));
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                buyer(i, deployments, rng, counts, stop_by).await
            })
        })
        .collect()
}

/// What the buyers saw; a violation one of them found fails the run.
async fn purchases_of(buyers: Buyers, seed: u64) -> Vec<Purchase> {
    let mut purchases = Vec::new();
    for b in buyers {
        match b.await.unwrap() {
            Ok(Some(purchase)) => purchases.push(purchase),
            Ok(None) => {}
            Err(violation) => panic!("chaos seed {seed}: {violation}"),
        }
    }
    purchases
}

/// Past every lease, charging window and reconcile window: the reconcile passes of the
/// replicas (every second) settle what is left. Bounded generously: on a loaded machine the
/// provider lookups of a pass time out and the next pass tries again; a healthy run settles
/// within a few seconds and leaves the loop then.
async fn settle(deployments: &[Arc<Deployment>]) {
    let settle_by = Instant::now() + Duration::from_secs(90);
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let mut left = 0;
        for d in deployments.iter() {
            let store = Store::connect(&d.db).await.unwrap();
            left += store.orders_with_status(OrderStatusColumn::PendingPayment).await.unwrap().len();
            left += store.refunds_with_status(RefundStatusColumn::Pending).await.unwrap().len();
        }
        if left == 0 || Instant::now() > settle_by {
            break;
        }
    }
}

async fn run(size: Size) {
    eprintln!("chaos: seed {} ({} buyers, {:?} of chaos)", size.seed, size.buyers, size.chaos);
    let started = Instant::now();
    let pg = TestDb::create().await;
    let dir = tempfile::tempdir().unwrap();
    let provider = Arc::new(SandboxPay::start());
    let mut rng = Rng(size.seed | 1);
    // One receiver for every order event (the platform's and the app's), failing at random.
    let receiver = Receiver::start(WEBHOOK_SECRET, giftgenius_commerce::clock::Clock::System).await;
    receiver.script((0..2000).map(|_| match rng.below(10) {
        0..=2 => Reply::Status(503),
        3 => Reply::RetryAfter(429, 1),
        4 => Reply::Hang,
        _ => Reply::Status(200),
    }));
    let platforms = dir.path().join("platforms.json");
    let list = json!([{"name": "agent", "api_key": PLATFORM_KEY, "webhook_url": receiver.url, "webhook_secret": WEBHOOK_SECRET}]);
    std::fs::write(&platforms, list.to_string()).unwrap();
    let secret_file = dir.path().join("order-webhook.secret");
    std::fs::write(&secret_file, WEBHOOK_SECRET).unwrap();
    let events: Vec<String> = [
        "--acp-platforms",
        &platforms.to_string_lossy(),
        "--order-webhook-url",
        &receiver.url,
        "--order-webhook-secret-file",
        &secret_file.to_string_lossy(),
        "--webhook-poll-ms",
        "50",
        "--webhook-timeout-ms",
        "300",
        "--webhook-retry-base",
        "200ms",
    ]
    .map(String::from)
    .to_vec();
    let deployments = Arc::new(vec![
        Deployment::start("postgres", pg.url.clone(), 2, &provider, &events).await,
        Deployment::start(
            "sqlite",
            dir.path().join("giftgenius.db").to_string_lossy().into_owned(),
            1,
            &provider,
            &events,
        )
        .await,
    ]);
    let counts = Arc::new(Counts::default());
    let chaos_until = Instant::now() + size.chaos;
    let stop_by = chaos_until + Duration::from_secs(20);

    let calm = Arc::new(AtomicBool::new(false));
    let faults = misbehave(&provider, &counts, Rng(rng.next()), &calm);
    let killer = kill_at_random(&deployments, &counts, Rng(rng.next()), chaos_until, size.pause);
    let buyers = spawn_buyers(size, &deployments, &counts, &mut rng, stop_by);
    // ACP platforms buy the same gifts on the same replicas meanwhile (a third as many).
    let acp_buyers: Vec<_> = (0..size.buyers.div_ceil(3))
        .map(|i| {
            let (deployments, provider, counts, mut rng) =
                (deployments.clone(), provider.clone(), counts.clone(), Rng(rng.next()));
            let delay = Duration::from_millis(rng.below(size.chaos.as_millis() as u64));
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                acp_buyer(i, deployments, provider, rng, counts, stop_by).await
            })
        })
        .collect();
    killer.await.unwrap();
    let mut acp_purchases = Vec::new();
    for b in acp_buyers {
        match b.await.unwrap() {
            Ok(Some(purchase)) => acp_purchases.push(purchase),
            Ok(None) => {}
            Err(violation) => panic!("chaos seed {}: {violation}", size.seed),
        }
    }
    let purchases = purchases_of(buyers, size.seed).await;
    calm.store(true, Ordering::Relaxed);
    faults.await.unwrap();
    provider.set_faults("").await;
    settle(&deployments).await;
    let mut facts = check_invariants(&deployments, &provider, &purchases)
        .await
        .unwrap_or_else(|violation| panic!("chaos seed {}: {violation}", size.seed));
    let acp_facts = check_acp(&deployments, &acp_purchases)
        .await
        .unwrap_or_else(|violation| panic!("chaos seed {}: {violation}", size.seed));
    facts.extend(acp_facts);
    let event_facts = check_events(&deployments, &receiver)
        .await
        .unwrap_or_else(|violation| panic!("chaos seed {}: {violation}", size.seed));
    facts.extend(event_facts);
    for d in deployments.iter() {
        d.stop().await;
    }
    report("chaos", size, started, &purchases, Some(acp_purchases.len()), &counts, &facts);
}

/// Prints what a run did and the facts it checked (`label` first on each line), then holds the
/// run to its floors. `acp_buyers`: how many ACP buyers bought, where they took part.
fn report(
    label: &str,
    size: Size,
    started: Instant,
    purchases: &[Purchase],
    acp_buyers: Option<usize>,
    counts: &Counts,
    facts: &BTreeMap<&'static str, usize>,
) {
    let definitive = purchases.iter().filter(|p| p.first.is_some()).count();
    let acp = acp_buyers
        .map(|n| format!(", {} ACP calls by {n} ACP buyers", counts.acp_calls.load(Ordering::Relaxed)))
        .unwrap_or_default();
    eprintln!(
        "{label}: seed {} in {:.1?}: {} buyers, {} got a draft, {definitive} a definitive answer; {} commit calls, {} \
         cancel calls{acp} ({} duplicate submits, {} transient answers, {} calls lost to killed replicas); {} SIGKILLs \
         + restarts; {} fault plans",
        size.seed,
        started.elapsed(),
        size.buyers,
        purchases.len(),
        counts.commit_calls.load(Ordering::Relaxed),
        counts.cancel_calls.load(Ordering::Relaxed),
        counts.duplicate_submits.load(Ordering::Relaxed),
        counts.transient_answers.load(Ordering::Relaxed),
        counts.lost_calls.load(Ordering::Relaxed),
        counts.kills.load(Ordering::Relaxed),
        counts.fault_plans.load(Ordering::Relaxed),
    );
    for (fact, n) in facts {
        eprintln!("{label}:   {fact}: {n}");
    }
    Floors::of(size)
        .check(definitive, facts["succeeded charges"], counts.kills.load(Ordering::Relaxed))
        .unwrap_or_else(|short| panic!("chaos seed {}: {short}", size.seed));
}

fn pg_name(deployment: &Deployment) -> bool {
    deployment.name == "postgres"
}

/// `GIFTGENIUS_CHAOS_SEED` when set (a replay), else `otherwise()`.
fn seed_or(otherwise: impl FnOnce() -> u64) -> u64 {
    std::env::var("GIFTGENIUS_CHAOS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(otherwise)
}

fn clock_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_small() {
    run(Size { buyers: 12, chaos: Duration::from_secs(6), seed: seed_or(|| SMALL_SEED), pause: PROCESS_PAUSE }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the long chaos run: minutes; see the module docs"]
async fn chaos_long() {
    run(long_size(200, 120, PROCESS_PAUSE)).await;
}

/// A long run's size: `GIFTGENIUS_CHAOS_BUYERS` and `GIFTGENIUS_CHAOS_SECS` if set, else these
/// defaults; seeded from the clock unless `GIFTGENIUS_CHAOS_SEED` replays a run.
fn long_size(buyers: u64, secs: u64, pause: (u64, u64)) -> Size {
    Size {
        buyers: env_or("GIFTGENIUS_CHAOS_BUYERS", buyers) as usize,
        chaos: Duration::from_secs(env_or("GIFTGENIUS_CHAOS_SECS", secs)),
        seed: seed_or(clock_seed),
        pause,
    }
}

/// The floors refuse what a broken run looks like: every call lost (no definitive answer, no
/// charge), or the killer idle.
#[test]
fn the_floors_refuse_a_run_that_did_nothing() {
    let small = Floors::of(Size { buyers: 12, chaos: Duration::from_secs(6), seed: SMALL_SEED, pause: PROCESS_PAUSE });
    assert!(small.check(12, 8, 6).is_ok());
    let lost = small.check(0, 0, 6).unwrap_err();
    assert!(lost.contains("0 definitive answers") && lost.contains("0 succeeded charges"), "{lost}");
    assert!(small.check(12, 8, 0).unwrap_err().contains("0 SIGKILLs"));
}

/// The compose deployment of `cargo xtask cluster`, from the variables xtask sets.
struct Cluster {
    url: String,
    stats: String,
    db: String,
    ledger: String,
    replicas: Vec<String>,
}

impl Cluster {
    fn from_env() -> Cluster {
        let var = |name: &str| {
            std::env::var(name).unwrap_or_else(|_| {
                panic!("{name} is not set: run this test with `cargo xtask cluster chaos` (it starts the cluster)")
            })
        };
        Cluster {
            url: var("GIFTGENIUS_CLUSTER_URL"),
            stats: var("GIFTGENIUS_CLUSTER_STATS"),
            db: std::fs::read_to_string(var("GIFTGENIUS_CLUSTER_DB_FILE"))
                .expect("the database URL's file")
                .trim()
                .into(),
            ledger: var("GIFTGENIUS_CLUSTER_LEDGER"),
            replicas: var("GIFTGENIUS_CLUSTER_REPLICAS").split(',').map(str::to_string).collect(),
        }
    }

    /// How many replicas HAProxy has in rotation.
    async fn in_rotation(&self) -> usize {
        let Ok(answer) = reqwest::get(&self.stats).await else { return 0 };
        let csv = answer.text().await.unwrap_or_default();
        csv.lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f.len() > 17 && f[0] == "replicas" && f[1].starts_with("replica") && f[17] == "UP")
            .count()
    }

    /// Waits until HAProxy has every replica in rotation.
    async fn all_in_rotation(&self, within: Duration) {
        let until = Instant::now() + within;
        while self.in_rotation().await < self.replicas.len() {
            assert!(Instant::now() < until, "HAProxy did not get every replica back within {within:?}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// One rolling restart under load: each replica in turn is stopped with SIGTERM (the drain:
/// `/readyz` 503, HAProxy takes it out, calls in flight finish) and started again, the next one
/// only once HAProxy has it back. Meanwhile `clients` keep calling suggest_gifts through
/// HAProxy. Returns (answered, failed): a call fails when it gets no MCP answer (a 5xx, a
/// reset, a timeout).
async fn rolling_restart(cluster: &Cluster, clients: usize) -> (u64, u64) {
    let done = Arc::new(AtomicBool::new(false));
    let (answered, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let load: Vec<_> = (0..clients)
        .map(|i| {
            let (url, done, answered, failed) = (cluster.url.clone(), done.clone(), answered.clone(), failed.clone());
            tokio::spawn(async move {
                let interest = ["tea", "books", "hiking"][i % 3];
                let arguments = json!({"relationship_type": "friend", "interests": [interest]});
                while !done.load(Ordering::Relaxed) {
                    match call_stateless(&url, &format!("roller{i}"), "suggest_gifts", arguments.clone(), TOKEN).await {
                        Ok((answer, _)) if answer["ok"] == true => answered.fetch_add(1, Ordering::Relaxed),
                        Ok((answer, _)) => {
                            panic!("suggest_gifts answered an error during the rolling restart: {answer}")
                        }
                        Err(e) => {
                            eprintln!("rolling restart: a call failed: {e}");
                            failed.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    for name in &cluster.replicas {
        let began = Instant::now();
        podman(&["stop", "--time", "30", name]).await;
        let stopped = began.elapsed();
        podman(&["start", name]).await;
        cluster.all_in_rotation(Duration::from_secs(90)).await;
        eprintln!(
            "rolling restart: {name} drained and stopped in {stopped:.1?}, back in rotation after {:.1?}",
            began.elapsed()
        );
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    done.store(true, Ordering::Relaxed);
    for task in load {
        task.await.unwrap();
    }
    (answered.load(Ordering::Relaxed), failed.load(Ordering::Relaxed))
}

/// The chaos proof against the compose deployment: the same buyers and invariants as [`run`]
/// (without ACP platforms and order events: the containers cannot reach this test's
/// receiver), then the rolling restart.
async fn run_containers(size: Size) {
    eprintln!("chaos (containers): seed {} ({} buyers, {:?} of chaos)", size.seed, size.buyers, size.chaos);
    let started = Instant::now();
    let cluster = Cluster::from_env();
    cluster.all_in_rotation(Duration::from_secs(60)).await;
    // A provider process of our own on the cluster's ledger file: reads the ledger, sets the
    // faults (stored in the ledger: every provider on it reads them).
    let provider = Arc::new(SandboxPay::start_on(Path::new(&cluster.ledger), &[]));
    let mut rng = Rng(size.seed | 1);
    let deployments = Arc::new(vec![Arc::new(Deployment {
        name: "postgres",
        db: cluster.db.clone(),
        replicas: Replicas::Containers { url: cluster.url.clone(), names: cluster.replicas.clone() },
    })]);
    let counts = Arc::new(Counts::default());
    let chaos_until = Instant::now() + size.chaos;
    let stop_by = chaos_until + Duration::from_secs(30);
    let calm = Arc::new(AtomicBool::new(false));
    let faults = misbehave(&provider, &counts, Rng(rng.next()), &calm);
    let killer = kill_at_random(&deployments, &counts, Rng(rng.next()), chaos_until, size.pause);
    let buyers = spawn_buyers(size, &deployments, &counts, &mut rng, stop_by);
    killer.await.unwrap();
    let purchases = purchases_of(buyers, size.seed).await;
    calm.store(true, Ordering::Relaxed);
    faults.await.unwrap();
    provider.set_faults("").await;
    cluster.all_in_rotation(Duration::from_secs(90)).await;
    settle(&deployments).await;
    let facts = check_invariants(&deployments, &provider, &purchases)
        .await
        .unwrap_or_else(|violation| panic!("chaos seed {}: {violation}", size.seed));
    report("chaos (containers)", size, started, &purchases, None, &counts, &facts);

    let (answered, failed) = rolling_restart(&cluster, 4).await;
    eprintln!(
        "chaos (containers): rolling restart of {} replicas: {answered} calls answered, {failed} failed",
        cluster.replicas.len()
    );
    assert!(answered > 0, "no call was answered during the rolling restart");
    assert_eq!(failed, 0, "calls failed during the rolling restart (a drain must lose none)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the compose deployment: `cargo xtask cluster chaos` (and `cargo xtask test`) runs it"]
async fn containers_small() {
    let size = Size { buyers: 12, chaos: Duration::from_secs(8), seed: seed_or(|| SMALL_SEED), pause: CONTAINER_PAUSE };
    run_containers(size).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the long run against the compose deployment: `cargo xtask cluster chaos --long`"]
async fn containers_long() {
    run_containers(long_size(120, 60, CONTAINER_PAUSE)).await;
}
