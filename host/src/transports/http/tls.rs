//! TLS for the HTTP transport (rustls): the certificate chain and key are PEM files, read at
//! start and again on SIGHUP, so a renewed certificate is served without a restart.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use anyhow::Context;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

pub(crate) struct TlsFiles {
    cert: PathBuf,
    key: PathBuf,
    acceptor: RwLock<TlsAcceptor>,
}

impl TlsFiles {
    pub(crate) fn load(cert: &Path, key: &Path) -> anyhow::Result<Self> {
        let acceptor = RwLock::new(acceptor(cert, key)?);
        Ok(TlsFiles { cert: cert.to_path_buf(), key: key.to_path_buf(), acceptor })
    }

    /// The acceptor for the next connection.
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        self.acceptor.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Rereads both files; on any error the served certificate stays as it was.
    pub(crate) fn reload(&self) -> anyhow::Result<()> {
        let fresh = acceptor(&self.cert, &self.key)?;
        *self.acceptor.write().unwrap_or_else(|p| p.into_inner()) = fresh;
        Ok(())
    }
}

fn acceptor(cert: &Path, key: &Path) -> anyhow::Result<TlsAcceptor> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("reading --tls-cert {}", cert.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("--tls-cert {}: not a PEM certificate chain", cert.display()))?;
    if chain.is_empty() {
        anyhow::bail!("--tls-cert {}: no certificate in the file", cert.display());
    }
    // the key's own bytes never reach an error message
    let key_der = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| anyhow::anyhow!("--tls-key {}: no usable PEM private key ({})", key.display(), kind_of(&e)))?;
    let mut config =
        rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(chain, key_der).with_context(|| {
            format!("--tls-cert {} and --tls-key {} do not make a certificate", cert.display(), key.display())
        })?;
    // The accept loop serves HTTP/1.1 only.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn kind_of(e: &rustls_pki_types::pem::Error) -> &'static str {
    use rustls_pki_types::pem::Error;
    match e {
        Error::NoItemsFound => "no key found",
        Error::Io(_) => "cannot read the file",
        _ => "malformed PEM",
    }
}
