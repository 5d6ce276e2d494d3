//! `--proposal-store-ca-file`: the authorities a TLS store's certificates must chain to, read
//! once at start. With it, only those authorities are trusted for the store (not the system's
//! too): a store's CA is usually the team's own, and nothing else should vouch for it.

use std::path::Path;

/// The PEM file's bytes, checked to hold at least one certificate. `tls` says whether the store's
/// URL asks for TLS (`rediss://`, `etcds://`, ...): a CA for a plain store is a mistake to name.
pub(crate) fn read(file: &Path, tls: bool, tls_scheme: &str) -> anyhow::Result<Vec<u8>> {
    if !tls {
        anyhow::bail!(
            "--proposal-store-ca-file {}: a CA is for a store reached over TLS; write {tls_scheme} to use it",
            file.display()
        );
    }
    let pem = std::fs::read(file).map_err(|e| anyhow::anyhow!("--proposal-store-ca-file {}: {e}", file.display()))?;
    match reqwest::Certificate::from_pem_bundle(&pem) {
        Ok(certs) if !certs.is_empty() => Ok(pem),
        _ => anyhow::bail!("--proposal-store-ca-file {}: no PEM certificate in it", file.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_store_a_missing_file_and_a_file_without_a_certificate_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ca.pem");
        let err = read(&file, false, "rediss://").unwrap_err().to_string();
        assert!(err.contains("write rediss://") && err.contains("ca.pem"), "{err}");
        let err = read(&file, true, "rediss://").unwrap_err().to_string();
        assert!(err.contains("ca.pem") && err.contains("No such file"), "{err}");
        std::fs::write(&file, "not a certificate\n").unwrap();
        let err = read(&file, true, "rediss://").unwrap_err().to_string();
        assert!(err.contains("no PEM certificate"), "{err}");
    }
}
