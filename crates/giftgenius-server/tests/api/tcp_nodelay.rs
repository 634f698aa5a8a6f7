//! Kept-alive connections must not wait for Nagle's algorithm: a response written in a few
//! small pieces without `TCP_NODELAY` waits for the client's delayed ACK (about 40 ms on Linux)
//! on every call after the first. Hosts keep connections alive, so every accepted socket gets
//! `TCP_NODELAY`. Asserted on the server's own accepted socket, which lives in this process, not
//! by timing (`examples/keepalive.rs` measures the effect).

#![cfg(target_os = "linux")]

use std::net::SocketAddr;
use std::os::fd::BorrowedFd;

use socket2::SockRef;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::spawn_app;

/// The TCP_NODELAY setting of this process's socket from `local` to `peer`, if there is one.
fn nodelay_of_socket(local: SocketAddr, peer: SocketAddr) -> Option<bool> {
    for entry in std::fs::read_dir("/proc/self/fd").ok()?.flatten() {
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let is_socket = std::fs::read_link(entry.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:"));
        if !is_socket {
            continue;
        }
        // SAFETY: only borrowed for the getsockopt calls below; if another test closes the fd
        // meanwhile, the calls fail (EBADF) or describe another socket, which the address
        // checks then skip. Nothing is written through it.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let socket = SockRef::from(&fd);
        let addresses =
            (socket.local_addr().ok().and_then(|a| a.as_socket()), socket.peer_addr().ok().and_then(|a| a.as_socket()));
        if addresses == (Some(local), Some(peer)) {
            return socket.tcp_nodelay().ok();
        }
    }
    None
}

#[tokio::test]
async fn every_accepted_connection_has_tcp_nodelay() {
    let app = spawn_app().await;
    let server: SocketAddr = app.local_url.trim_start_matches("http://").parse().unwrap();
    let mut client = tokio::net::TcpStream::connect(server).await.unwrap();
    // One whole request and response, so the server has surely accepted and set up the socket.
    client.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {server}\r\n\r\n").as_bytes()).await.unwrap();
    let mut buf = [0u8; 512];
    let n = client.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&buf[..n]));

    let found = nodelay_of_socket(server, client.local_addr().unwrap());
    assert_eq!(found, Some(true), "the server's accepted socket must have TCP_NODELAY set");
    // The check can tell the difference: the client's own socket does not have it.
    assert_eq!(nodelay_of_socket(client.local_addr().unwrap(), server), Some(false));
}
