//! The accept loop: HTTP/1.1 connections with a header-read timeout, under a cap on open
//! connections, with graceful shutdown. (`axum::serve` has neither a header timeout nor a cap.)
//!
//! - Header-read timeout (`--header-read-timeout-ms`): a connection must deliver a request's
//!   complete headers within this time of starting to wait for them, or it is closed. That
//!   ends slowloris clients (headers sent a byte at a time) and also idle keep-alive
//!   connections, which wait for the next request's headers.
//! - Connection cap (`--max-connections`): at the cap the loop stops accepting; new clients
//!   wait in the kernel's backlog until a connection closes (backpressure, not refusal: a
//!   burst is served late rather than failed).
//! - Per-peer cap (`--max-connections-per-peer`, default 64): a peer address (an IPv6 peer's
//!   /64) with that many connections open has its next one closed at once, so one client
//!   holding connections with slow headers cannot take every slot of the cap above and lock
//!   everyone else out. 64 is a sixteenth of the default cap, and ten times what a browser
//!   opens to one host (6). Exempt: `--trusted-proxies`, since every client behind a proxy
//!   arrives from its address, and loopback peers, which are this machine (the developer, or a
//!   tunnel or proxy here relaying many clients). The count per peer lives only while
//!   connections are open, so that table never holds more entries than open connections.
//! - Request heads (`--max-request-headers`, default 100; `--max-request-header-bytes`,
//!   default 32 KiB): a request with more header fields, or whose request line and headers
//!   take more bytes, is answered `431 Request Header Fields Too Large` by hyper and its
//!   connection closed, before any route runs. Without it hyper's only size bound was its read
//!   buffer's, ~400 KiB: room for one `Stripe-Signature` of 65,000 entries. 100 fields is hyper's default and several times
//!   what a browser or a proxy chain sends; 32 KiB holds the largest access tokens
//!   (identity providers' JWTs with group claims run to 8 KiB) several times over.
//! - HTTP/1.1 only: hyper's HTTP/2 (which `axum::serve` also spoke, as cleartext h2c) has no
//!   header-read timeout, and the clients and proxies in front of us speak HTTP/1.1 to us.
//!
//! Every request carries `ConnectInfo<SocketAddr>` (the peer), as with
//! `into_make_service_with_connect_info`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use prometheus_client::metrics::gauge::Gauge;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::auth::mode::is_loopback_ip;
use crate::client_addr::{TrustedProxies, client_group};

/// The connection-level limits; `None` is off.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    pub header_read_timeout: Option<Duration>,
    pub max_connections: Option<usize>,
    pub max_connections_per_peer: Option<usize>,
    /// Peers the per-peer cap does not apply to (`--trusted-proxies`).
    pub uncapped_peers: TrustedProxies,
    /// `TCP_NODELAY` on every accepted socket. Always on when serving: hyper writes a response
    /// in more than one piece, and with Nagle's algorithm the second piece waits for the
    /// client's delayed ACK (~40 ms) on every kept-alive call. Off only to measure that
    /// (`examples/keepalive.rs`).
    pub tcp_nodelay: bool,
    /// Header fields one request may carry.
    pub max_headers: usize,
    /// Bytes a request's line and headers may take.
    pub max_header_bytes: usize,
    /// Counts the connections open now (`giftgenius_open_connections` when it is the
    /// application's gauge: `startup` hands it over).
    pub open_connections: Gauge,
}

/// Serves `router` on `listener` until `shutdown` fires, then closes the listener and waits up
/// to `drain_limit` for the open connections to finish their requests (and streams).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
    drain_limit: Duration,
) -> anyhow::Result<()> {
    let slots = limits.max_connections.map(|n| Arc::new(Semaphore::new(n)));
    let per_peer = limits.max_connections_per_peer.map(|max| PeerSlots::new(max, limits.uncapped_peers.clone()));
    let mut http = hyper::server::conn::http1::Builder::new();
    // `None` turns hyper's own 30 s default off too.
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    // `max_header_size` is checked on the parsed head: hyper's read-buffer bound
    // (`max_buf_size`) is not, since one read may fill the buffer past it.
    http.max_headers(limits.max_headers).max_header_size(limits.max_header_bytes);
    let graceful = GracefulShutdown::new();
    loop {
        // At the cap, wait for a slot before accepting (the backlog holds the rest).
        let slot = match &slots {
            Some(slots) => tokio::select! {
                slot = slots.clone().acquire_owned() => Some(slot?),
                _ = shutdown.cancelled() => break,
            },
            None => None,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        let peer_slot = match per_peer.as_ref().map(|per_peer| per_peer.take(peer.ip())) {
            Some(None) => {
                // Closed before a byte is read; the global slot goes back with `slot`.
                tracing::debug!(peer = %peer, "closed a connection over --max-connections-per-peer");
                continue;
            }
            Some(Some(peer_slot)) => peer_slot,
            None => None,
        };
        if let Err(e) = stream.set_nodelay(limits.tcp_nodelay) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on an accepted socket");
        }
        let router = router.clone();
        let open = OpenConnection::count(&limits.open_connections);
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            router.clone().oneshot(request)
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                // Header timeouts, resets and clients that vanished: routine, not our failure.
                tracing::debug!(peer = %peer, error = %e, "connection ended with an error");
            }
            drop((slot, peer_slot, open));
        });
    }
    drop(listener);
    if tokio::time::timeout(drain_limit, graceful.shutdown()).await.is_err() {
        tracing::warn!(after_ms = drain_limit.as_millis() as u64, "shutdown left connections that were still busy");
    }
    Ok(())
}

/// One open connection in the gauge, counted down when dropped (the connection ended).
struct OpenConnection(Gauge);

impl OpenConnection {
    fn count(gauge: &Gauge) -> Self {
        gauge.inc();
        Self(gauge.clone())
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Open connections per peer group, for `--max-connections-per-peer`. An entry exists only while
/// its group has a connection open.
struct PeerSlots {
    max: usize,
    uncapped: TrustedProxies,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of a group; counted down when dropped (the connection ended).
struct PeerSlot {
    slots: Arc<PeerSlots>,
    group: IpAddr,
}

impl PeerSlots {
    fn new(max: usize, uncapped: TrustedProxies) -> Arc<PeerSlots> {
        Arc::new(PeerSlots { max, uncapped, open: Mutex::new(HashMap::new()) })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a connection from `peer`: `None` when its group is at the cap; an uncounted
    /// slot for a trusted proxy or this machine.
    fn take(self: &Arc<Self>, peer: IpAddr) -> Option<Option<PeerSlot>> {
        if is_loopback_ip(peer) || self.uncapped.trusts(peer) {
            return Some(None);
        }
        let group = client_group(peer);
        let mut open = self.open();
        let count = open.entry(group).or_insert(0);
        if *count >= self.max {
            return None;
        }
        *count += 1;
        Some(Some(PeerSlot { slots: self.clone(), group }))
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open();
        if let Some(count) = open.get_mut(&self.group) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.group);
            }
        }
    }
}

/// An accept error: a connection that failed before we took it is skipped; anything else (out
/// of file descriptors, …) is logged and retried after a pause instead of ending the server.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed; retrying in 1 s");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_peer_group_gets_its_cap_and_a_slot_back_when_a_connection_ends() {
        let trusted = TrustedProxies::new(vec!["10.0.0.1".parse().unwrap()], Default::default());
        let slots = PeerSlots::new(2, trusted);
        let a = slots.take(ip("192.0.2.1")).expect("first").expect("counted");
        let _b = slots.take(ip("192.0.2.1")).expect("second").expect("counted");
        assert!(slots.take(ip("192.0.2.1")).is_none(), "over the cap");
        assert!(slots.take(ip("192.0.2.2")).is_some(), "another peer has its own count");
        // One /64 is one peer.
        let _v6 = slots.take(ip("2001:db8::1")).unwrap();
        let _v6 = slots.take(ip("2001:db8::ffff:2")).unwrap();
        assert!(slots.take(ip("2001:db8::3")).is_none());
        // A trusted proxy and this machine are not counted.
        for peer in ["10.0.0.1", "127.0.0.1", "::1"] {
            for _ in 0..5 {
                assert!(matches!(slots.take(ip(peer)), Some(None)), "{peer}");
            }
        }
        drop(a);
        assert!(slots.take(ip("192.0.2.1")).is_some(), "a closed connection frees its slot");
    }

    #[test]
    fn a_group_without_open_connections_leaves_the_table() {
        let slots = PeerSlots::new(3, TrustedProxies::default());
        let held: Vec<_> = (1..=50).map(|i| slots.take(ip(&format!("192.0.2.{i}"))).unwrap()).collect();
        assert_eq!(slots.open().len(), 50);
        drop(held);
        assert!(slots.open().is_empty());
    }
}
