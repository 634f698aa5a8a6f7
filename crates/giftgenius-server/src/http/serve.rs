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
//! - HTTP/1.1 only: hyper's HTTP/2 (which `axum::serve` also spoke, as cleartext h2c) has no
//!   header-read timeout, and the clients and proxies in front of us speak HTTP/1.1 to us.
//!
//! Every request carries `ConnectInfo<SocketAddr>` (the peer), as with
//! `into_make_service_with_connect_info`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// How long shutdown waits for open requests (and streams) to finish before it lets them go.
const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// The connection-level limits; `None` is off.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_read_timeout: Option<Duration>,
    pub max_connections: Option<usize>,
    /// `TCP_NODELAY` on every accepted socket. Always on when serving: hyper writes a response
    /// in more than one piece, and with Nagle's algorithm the second piece waits for the
    /// client's delayed ACK (~40 ms) on every kept-alive call. Off only to measure that
    /// (`examples/keepalive.rs`).
    pub tcp_nodelay: bool,
}

/// Serves `router` on `listener` until `shutdown` fires, then drains.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let slots = limits.max_connections.map(|n| Arc::new(Semaphore::new(n)));
    let mut http = hyper::server::conn::http1::Builder::new();
    // `None` turns hyper's own 30 s default off too.
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
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
        if let Err(e) = stream.set_nodelay(limits.tcp_nodelay) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on an accepted socket");
        }
        let router = router.clone();
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
            drop(slot);
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_LIMIT, graceful.shutdown()).await.is_err() {
        tracing::warn!(after_s = DRAIN_LIMIT.as_secs(), "shutdown left connections that were still busy");
    }
    Ok(())
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
