//! The TLS crypto provider of every HTTPS client the host builds (the
//! `http` host import's clients, the OCI registry client).
//!
//! reqwest and oci-client are built without a provider of their own
//! (`rustls-no-provider`), so the process installs `ring`'s before it
//! builds a client. `ring` rather than reqwest's default AWS-LC: the same
//! TLS 1.2/1.3 suites for a client, and a fraction of AWS-LC's C build in a
//! cold `cargo install` (bench/README.md, "Build profiles").

use std::sync::Once;

/// Installs the process-wide rustls crypto provider, once; call before
/// building a reqwest client. Harmless when one is installed already.
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err only when another provider is installed: that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_https_client_builds_after_the_provider_is_installed() {
        install_crypto_provider();
        install_crypto_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        reqwest::Client::builder()
            .build()
            .expect("an HTTPS client with the system's certificates");
    }
}
