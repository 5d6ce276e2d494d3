//! TLS for HTTPS tests: a self-signed certificate for the loopback names, and clients that trust
//! only it.

use std::path::{Path, PathBuf};

/// A self-signed certificate for 127.0.0.1 and localhost, as PEM files (key mode 600).
pub fn certificate(dir: &Path, name: &str) -> (PathBuf, PathBuf, String) {
    let issued = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let (cert, key) = (dir.join(format!("{name}.crt")), dir.join(format!("{name}.key")));
    let pem = issued.cert.pem();
    std::fs::write(&cert, &pem).unwrap();
    std::fs::write(&key, issued.signing_key.serialize_pem()).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    (cert, key, pem)
}

/// A client that trusts only `pem`.
pub fn trusting(pem: &str) -> reqwest::Client {
    equinix_mcp::install_crypto_provider();
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(pem.as_bytes()).unwrap()])
        .build()
        .unwrap()
}

/// An MCP client over HTTPS to `url`, trusting only `pem`, with bearer `token`.
pub async fn connect_trusting(url: &str, pem: &str, token: &str, client: super::TestClient) -> super::Client {
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.to_string())
            .auth_header(token.to_string());
    let transport = rmcp::transport::StreamableHttpClientTransport::with_client(trusting(pem), config);
    rmcp::ServiceExt::serve(client, transport).await.unwrap()
}
