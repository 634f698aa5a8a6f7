//! A port on 127.0.0.1 that nobody listens on: where a server binary is told to listen, or
//! where a catalog URL points to be refused.

/// Binds 127.0.0.1:0, takes the port the OS gave and closes it again: free for a server to
/// take, refused for a client that connects (nothing else here grabs it in between).
pub fn unused_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}
