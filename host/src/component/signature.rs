//! Components that run only when a trusted key signed them. With `--component-public-key`, the
//! component's exact bytes must carry a minisign signature (`COMPONENT.wasm.minisig`, as
//! `minisign -Sm COMPONENT.wasm` writes it) by one of those keys; anything else refuses to start,
//! saying why and naming the key ids. A signature says who signed the bytes, not that the code
//! is safe: the host's rules hold for a signed component as for any other.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use base64::Engine;
use minisign_verify::{PublicKey, Signature};

/// Who signed a component, as `inspect` shows it.
#[derive(Clone, Debug)]
pub(crate) struct Signer {
    pub key_id: String,
    pub trusted_comment: String,
    pub key_file: PathBuf,
}

/// A minisign key id as `minisign` prints it: the 8 id bytes of a key or signature line (after
/// the 2 algorithm bytes), little-endian, in 16 upper-case hex digits (minisign 0.12 pads them;
/// 0.11 prints no leading zeros).
fn key_id_of(line: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(line.trim()).ok()?;
    let id: [u8; 8] = bytes.get(2..10)?.try_into().ok()?;
    Some(format!("{:016X}", u64::from_le_bytes(id)))
}

/// The signature file of `component`: its name with `.minisig` added.
pub(crate) fn signature_path(component: &Path) -> PathBuf {
    let mut name = component.file_name().unwrap_or_default().to_os_string();
    name.push(".minisig");
    component.with_file_name(name)
}

/// Checks that `wasm` (read from `component`) is signed by one of `keys`.
pub(crate) fn verify(wasm: &[u8], component: &Path, keys: &[PathBuf]) -> anyhow::Result<Signer> {
    let mut trusted = Vec::new();
    for file in keys {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading --component-public-key {}", file.display()))?;
        let key = PublicKey::decode(&text).map_err(|e| {
            anyhow::anyhow!(
                "--component-public-key {}: not a minisign public key ({e}); `minisign -G` writes one",
                file.display()
            )
        })?;
        let id = text.lines().nth(1).and_then(key_id_of).unwrap_or_default();
        trusted.push((id, key, file.clone()));
    }
    let ids: Vec<&str> = trusted.iter().map(|(id, _, _)| id.as_str()).collect();
    let ids = ids.join(", ");
    let sig_path = signature_path(component);
    let shown = component.display();
    let text = match std::fs::read_to_string(&sig_path) {
        Ok(t) => t,
        Err(e) => bail!(
            "component {shown} has no signature at {} ({e}); the trusted keys are {ids}: sign it with `minisign -Sm {shown}`; refusing to start",
            sig_path.display()
        ),
    };
    let signature = Signature::decode(&text)
        .map_err(|e| anyhow::anyhow!("the signature {} is malformed ({e}); refusing to start", sig_path.display()))?;
    let signed_by = text.lines().nth(1).and_then(key_id_of).unwrap_or_default();
    let Some((id, key, key_file)) = trusted.iter().find(|(id, _, _)| *id == signed_by) else {
        bail!("component {shown} is signed by key {signed_by}, which is not a trusted key ({ids}); refusing to start");
    };
    match key.verify(wasm, &signature, false) {
        Ok(()) => Ok(Signer {
            key_id: id.clone(),
            trusted_comment: signature.trusted_comment().to_string(),
            key_file: key_file.clone(),
        }),
        Err(minisign_verify::Error::UnexpectedAlgorithm) => bail!(
            "the signature {} by key {id} is a legacy one (`minisign -l`), which signs the bytes without hashing them first; sign the component again without -l; refusing to start",
            sig_path.display()
        ),
        Err(e) => bail!(
            "the signature {} by key {id} does not match the bytes of component {shown} ({e}): the component or its signature was changed; refusing to start",
            sig_path.display()
        ),
    }
}
