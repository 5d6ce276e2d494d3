//! Signed checkpoints of the audit log's chain. A chain shows an edited, inserted, removed or
//! reordered record, but not a cut tail: the last records can go and what is left still links.
//! With `--audit-signing-key`, the server appends to `--audit-checkpoints` (another file, ideally
//! on another volume or host) a line signed with Ed25519 that vouches for the chain's head:
//!
//! ```text
//! {"v":1,"chain":"…","instance":"…","seq":812,"head":"…","ts":"…","key_id":"…","sig":"…"}
//! ```
//!
//! every N records or 60 s, whichever comes first, and at shutdown. A checkpoint only names
//! records already synced, and syncs its own file once per checkpoint, never per record.
//! `audit verify --checkpoints --public-key` then finds a log that ends before a checkpoint, a
//! record that differs from what a checkpoint vouched for, and a checkpoint forged or edited.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, bail};
use base64::Engine;
use ring::signature::{ED25519, Ed25519KeyPair, KeyPair, UnparsedPublicKey};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{PrivateKeyDer, SubjectPublicKeyInfoDer};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::audit::AuditLog;

/// The longest the newest synced records go without a checkpoint.
pub(crate) const EVERY: Duration = Duration::from_secs(60);

/// The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410), before the 32 key bytes.
const ED25519_SPKI_PREFIX: [u8; 12] = [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00];

/// A key's id in checkpoints: the first 16 hex digits of the SHA-256 of its 32 public bytes.
pub(crate) fn key_id(public: &[u8]) -> String {
    hex::encode(Sha256::digest(public))[..16].to_string()
}

/// What a checkpoint's signature covers.
fn message(chain: &str, instance: &str, seq: u64, head: &str, ts: &str) -> String {
    format!("equinix-mcp audit checkpoint v1\nchain={chain}\ninstance={instance}\nseq={seq}\nhead={head}\nts={ts}\n")
}

/// The server's signing key: an Ed25519 private key as PKCS#8 PEM (`openssl genpkey -algorithm
/// ed25519`), readable by its owner only.
pub(crate) fn load_signing_key(path: &Path) -> anyhow::Result<Ed25519KeyPair> {
    let shown = path.display();
    let meta = std::fs::metadata(path).with_context(|| format!("reading --audit-signing-key {shown}"))?;
    if let Some(mode) = crate::platform::mode(&meta)
        && mode & 0o077 != 0
    {
        bail!(
            "--audit-signing-key {shown} has mode {mode:03o}: a signing key must be readable by its owner only (chmod 600 {shown})"
        );
    }
    let der = PrivateKeyDer::from_pem_file(path).map_err(|e| {
        anyhow::anyhow!("--audit-signing-key {shown}: not a PEM private key ({e}); write one with `openssl genpkey -algorithm ed25519 -out {shown}`")
    })?;
    let PrivateKeyDer::Pkcs8(pkcs8) = der else {
        bail!(
            "--audit-signing-key {shown}: the key is not PKCS#8; write one with `openssl genpkey -algorithm ed25519`"
        );
    };
    Ed25519KeyPair::from_pkcs8_maybe_unchecked(pkcs8.secret_pkcs8_der())
        .map_err(|e| anyhow::anyhow!("--audit-signing-key {shown}: not an Ed25519 PKCS#8 key ({e})"))
}

/// A public key as PEM (`openssl pkey -pubout`): its 32 Ed25519 bytes.
pub(crate) fn load_public_key(path: &Path) -> anyhow::Result<[u8; 32]> {
    let shown = path.display();
    let spki = SubjectPublicKeyInfoDer::from_pem_file(path)
        .map_err(|e| anyhow::anyhow!("--public-key {shown}: not a PEM public key ({e})"))?;
    let bytes = spki.as_ref();
    match bytes.strip_prefix(&ED25519_SPKI_PREFIX[..]) {
        Some(key) if key.len() == 32 => Ok(key.try_into().expect("32 bytes")),
        _ => bail!("--public-key {shown}: not an Ed25519 public key"),
    }
}

/// Writes checkpoints of one log.
pub(crate) struct Checkpointer {
    key: Ed25519KeyPair,
    key_id: String,
    file: Mutex<File>,
    /// The sequence number of the last checkpoint written.
    last: Mutex<Option<u64>>,
}

impl Checkpointer {
    pub(crate) fn open(key: Ed25519KeyPair, path: &Path) -> anyhow::Result<Checkpointer> {
        let mut file = crate::audit::open_append(path, "the checkpoint file (--audit-checkpoints)")?;
        // a checkpoint torn by a crash is cut off, so the next one starts on a line of its own
        let resumed = crate::audit::chain::resume(&mut file)
            .with_context(|| format!("reading the end of --audit-checkpoints {}", path.display()))?;
        if let Some((bytes, _)) = resumed.torn_tail {
            tracing::warn!(
                "--audit-checkpoints {} ended inside a checkpoint ({bytes} bytes); cut it off",
                path.display()
            );
        }
        let key_id = key_id(key.public_key().as_ref());
        Ok(Checkpointer { key, key_id, file: Mutex::new(file), last: Mutex::new(None) })
    }

    pub(crate) fn key_id(&self) -> &str {
        &self.key_id
    }

    /// Signs the log's synced head, unless the last checkpoint already names it.
    pub(crate) fn checkpoint(&self, log: &AuditLog) -> std::io::Result<bool> {
        let (chain, seq, head) = log.synced_head();
        let Some(seq) = seq else { return Ok(false) };
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if *last == Some(seq) {
            return Ok(false);
        }
        let ts = crate::audit::rfc3339(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
        );
        let signed = message(&chain, log.instance(), seq, &head, &ts);
        let sig = base64::engine::general_purpose::STANDARD.encode(self.key.sign(signed.as_bytes()).as_ref());
        let line = json!({"v": 1, "chain": chain, "instance": log.instance(), "seq": seq, "head": head, "ts": ts,
            "key_id": self.key_id, "sig": sig});
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(format!("{line}\n").as_bytes())?;
        file.sync_data()?;
        *last = Some(seq);
        Ok(true)
    }

    /// Checkpoints every `every` records (when the log says so) or [`EVERY`], until `stop`; then
    /// one last time.
    pub(crate) async fn run(self: Arc<Self>, log: Arc<AuditLog>, stop: tokio_util::sync::CancellationToken) {
        // one at once, for the start record: a log is vouched for from its first minute
        self.write_logged(&log).await;
        loop {
            tokio::select! {
                _ = tokio::time::sleep(EVERY) => {}
                _ = log.checkpoint_due() => {}
                _ = stop.cancelled() => break,
            }
            self.write_logged(&log).await;
        }
        self.write_logged(&log).await;
    }

    async fn write_logged(self: &Arc<Self>, log: &Arc<AuditLog>) {
        let (me, log) = (self.clone(), log.clone());
        match tokio::task::spawn_blocking(move || me.checkpoint(&log)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::error!("could not write an audit checkpoint: {e}"),
            Err(e) => tracing::error!("the audit checkpoint writer failed: {e}"),
        }
    }
}

/// What the checkpoints say of a log whose chain verified: `Ok(n)` checkpoints of its chain
/// agree with it; `Err` names the first that does not, or is not genuine.
pub(crate) fn check(
    checkpoints: &str,
    public: &[u8; 32],
    chain: &str,
    first_seq: u64,
    hashes: &[String],
) -> Result<usize, String> {
    let (key, id) = (UnparsedPublicKey::new(&ED25519, public), key_id(public));
    let last_seq = first_seq + hashes.len() as u64 - 1;
    let (mut agreeing, mut earlier) = (0, 0);
    for (i, line) in checkpoints.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = format!("checkpoint line {}", i + 1);
        let c: Value = serde_json::from_str(line).map_err(|_| format!("{at} is not JSON (edited or torn)"))?;
        let text = |k: &str| c[k].as_str().map(str::to_string).ok_or_else(|| format!("{at} has no {k}"));
        let (seq, head, ts, instance) = (
            c["seq"].as_u64().ok_or_else(|| format!("{at} has no seq"))?,
            text("head")?,
            text("ts")?,
            text("instance")?,
        );
        let key_of = text("key_id")?;
        if key_of != id {
            return Err(format!("{at} was signed by key {key_of}, not by the given public key ({id})"));
        }
        let sig = base64::engine::general_purpose::STANDARD
            .decode(text("sig")?)
            .map_err(|_| format!("{at}: its signature is not base64"))?;
        let signed = message(&text("chain")?, &instance, seq, &head, &ts);
        if key.verify(signed.as_bytes(), &sig).is_err() {
            return Err(format!("{at}: the signature does not verify: the checkpoint was forged or edited"));
        }
        if c["chain"] != chain {
            continue; // another log's (another replica's)
        }
        if seq > last_seq {
            return Err(format!(
                "{at} vouches for record {seq} (head {head}, {ts}), but the log ends at record {last_seq}: its end was cut off"
            ));
        }
        if seq < first_seq {
            earlier += 1; // an earlier (rotated) file's
            continue;
        }
        if hashes[(seq - first_seq) as usize] != head {
            return Err(format!(
                "{at} vouches for record {seq} with head {head}, but the log's record {seq} hashes differently: it was replaced"
            ));
        }
        agreeing += 1;
    }
    // a chain rewritten under another id, or a file replaced from past the last checkpoint on,
    // meets none of its checkpoints
    if agreeing == 0 {
        return Err(format!(
            "no checkpoint vouches for any record of this file (chain {chain}, records {first_seq}-{last_seq}; {earlier} \
             name earlier records): the chain was rewritten, or these checkpoints are another log's"
        ));
    }
    Ok(agreeing)
}
