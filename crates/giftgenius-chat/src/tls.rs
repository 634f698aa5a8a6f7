//! TLS for the MCP connection and the sign-in, with *ring*, the crypto the rest of the workspace
//! already uses (the server's reqwest 0.12 `rustls-tls`).
//!
//! rmcp's HTTP client is reqwest 0.13, whose `rustls` feature brings aws-lc-rs (a C/asm build of
//! its own, with cmake). We enable rmcp's `reqwest-tls-no-provider` instead, and then reqwest
//! takes rustls's process-wide default provider, panicking when a client is built without one.
//! So every place that builds an rmcp client installs ring first; installing is idempotent.

/// Makes ring the process's rustls crypto provider, unless one is installed already (a test
/// binary, or the embedding program, may have done it first: any installed provider will do).
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Losing a race to another thread installing one is fine: there is a provider either way.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_provider_is_installed_and_a_second_install_is_harmless() {
        super::install_crypto_provider();
        super::install_crypto_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
    }
}
