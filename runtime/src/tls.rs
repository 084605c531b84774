//! TLS for the crate's HTTP clients (the provider clients, MCP over HTTP):
//! rustls with the `ring` crypto provider, given to each client explicitly
//! so that no process-wide default is needed or installed, and the
//! platform's root certificates. It builds with a C compiler alone: no
//! OpenSSL, no cmake (aws-lc's build needs one).

use std::sync::Arc;

use rustls_platform_verifier::BuilderVerifierExt;

/// A client configuration: safe protocol versions, the platform's roots.
pub(crate) fn client_config() -> Result<rustls::ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?
        .with_platform_verifier()
        .map_err(|error| error.to_string())?
        .with_no_client_auth())
}
