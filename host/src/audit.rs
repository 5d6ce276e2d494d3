//! The durable audit log: one JSON line per call of a mutating tool (every propose and every
//! confirm outcome), and, whatever the component, one line when an approval is minted, one before
//! its create is sent and one with the create's outcome. Each is synced to disk before the result
//! returns or the create leaves, so a crash cannot lose what happened. It records tokens, hashes,
//! answers and Fabric ids; never a credential.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use serde_json::{Map, Value, json};

pub struct AuditLog {
    path: PathBuf,
    file: Mutex<File>,
}

/// `$XDG_STATE_HOME/equinix-mcp/audit.jsonl` (or the platform's local data dir).
pub fn default_path() -> Option<PathBuf> {
    dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("equinix-mcp").join("audit.jsonl"))
}

/// Opens (or creates) the log file at `path`: a regular file, never through a symbolic link.
fn open_file(path: &Path) -> anyhow::Result<File> {
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            anyhow::bail!("the audit log {shown} is a symbolic link; refusing to follow it (give the real path)")
        }
        Ok(m) if !m.file_type().is_file() => anyhow::bail!("the audit log {shown} is not a regular file"),
        _ => {}
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        // a link planted between the check above and this open is refused too
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .with_context(|| format!("opening the audit log {shown}"))?;
    if !file.metadata()?.file_type().is_file() {
        anyhow::bail!("the audit log {shown} is not a regular file");
    }
    Ok(file)
}

impl AuditLog {
    pub fn open(path: &Path) -> anyhow::Result<AuditLog> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let file = open_file(path)?;
        Ok(AuditLog { path: path.to_path_buf(), file: Mutex::new(file) })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` on the blocking pool (the write and fsync never stall other calls) and
    /// waits until it is on disk; the error names the file.
    pub async fn record(log: Arc<AuditLog>, entry: Value) -> Result<(), String> {
        tokio::task::spawn_blocking(move || log.append(&entry).map_err(|e| format!("{}: {e}", log.path().display())))
            .await
            .unwrap_or_else(|e| Err(format!("the audit writer failed: {e}")))
    }

    /// Appends one entry and waits until it is on disk. If the file at the path is no longer the
    /// one open (deleted, or rotated away), the path is opened afresh first and that is said
    /// both in the log of the process and as the new file's first line.
    pub fn append(&self, entry: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_string(entry).expect("a JSON value always serializes");
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(why) = self.replaced(&file) {
            tracing::warn!("the audit log {} {why}; reopening it", self.path.display());
            *file = open_file(&self.path).map_err(std::io::Error::other)?;
            let note = json!({"ts": rfc3339(now_ms()), "event": "audit_log_reopened", "reason": why});
            let mut first = serde_json::to_string(&note).expect("a JSON value always serializes");
            first.push('\n');
            file.write_all(first.as_bytes())?;
        }
        let before = file.metadata()?.len();
        if let Err(e) = file.write_all(line.as_bytes()) {
            // a full disk (or a file-size limit) may have let part of the line through: cut it
            // off, so the log never holds a torn record
            let _ = file.set_len(before);
            return Err(e);
        }
        file.sync_data()
    }

    /// Why the open file is not the one at the path any more, if it is not.
    fn replaced(&self, file: &File) -> Option<&'static str> {
        let open = file.metadata().ok()?;
        match std::fs::symlink_metadata(&self.path) {
            Err(_) => Some("is no longer at its path (deleted, or moved away by a rotation)"),
            Ok(at_path) if (at_path.dev(), at_path.ino()) != (open.dev(), open.ino()) => {
                Some("was replaced by another file at its path")
            }
            Ok(_) => None,
        }
    }
}

/// The audit entry for one mutating call, from its result (or tool error) JSON.
pub fn entry(tool: &str, started_ms: u64, finished_ms: u64, result: &Value, is_error: bool) -> Value {
    // Tool errors nest the confirm result under error.result; read both places.
    let body = if is_error { result["error"].get("result").unwrap_or(&Value::Null) } else { result };
    let field = |pointer: &str| -> Value {
        body.pointer(pointer).or_else(|| result.pointer(pointer)).cloned().unwrap_or(Value::Null)
    };
    let mut e = Map::new();
    e.insert("ts".into(), json!(rfc3339(finished_ms)));
    e.insert("started".into(), json!(rfc3339(started_ms)));
    e.insert("tool".into(), json!(tool));
    e.insert("outcome".into(), json!(if is_error { "error" } else { "ok" }));
    for (key, pointer) in [
        ("confirm_token", "/confirm_token"),
        ("change_type", "/change_type"),
        ("request_sha256", "/request_sha256"),
        ("expires_at", "/expires_at"),
        ("evicted_proposals", "/evicted_proposals"),
        ("human_status", "/human_confirmation/status"),
        ("executed", "/executed"),
        ("fabric_uuid", "/created/uuid"),
        ("correlation_id", "/correlation_id"),
        ("outcome_unknown", "/outcome_unknown"),
    ] {
        let v = field(pointer);
        if !v.is_null() {
            e.insert(key.into(), v);
        }
    }
    if is_error {
        e.insert("error_kind".into(), result["error"]["kind"].clone());
        e.insert("error".into(), result["error"]["message"].clone());
    }
    Value::Object(e)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// `ms` since the epoch as an RFC 3339 timestamp.
pub fn rfc3339(ms: u64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_pick_the_confirm_fields_from_results_and_errors() {
        let ok = json!({"confirm_token": "chg-1", "change_type": "connection_create", "request_sha256": "ab",
                        "human_confirmation": {"status": "accepted"}, "executed": true,
                        "created": {"uuid": "u-1"}, "correlation_id": "c-1"});
        let e = entry("fabric_confirm_change", 1_000, 2_000, &ok, false);
        assert_eq!(
            (e["executed"].as_bool(), e["fabric_uuid"].as_str(), e["human_status"].as_str()),
            (Some(true), Some("u-1"), Some("accepted"))
        );
        let err = json!({"error": {"kind": "outcome_unknown", "message": "m", "result": {"confirm_token": "chg-2", "executed": null, "outcome_unknown": true}}});
        let e = entry("fabric_confirm_change", 1_000, 2_000, &err, true);
        assert_eq!(e["confirm_token"], "chg-2");
        assert_eq!(e["outcome_unknown"], true);
        assert_eq!(e["error_kind"], "outcome_unknown");
    }

    #[test]
    fn a_symlink_or_a_non_regular_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere.txt");
        std::fs::write(&target, "precious\n").unwrap();
        let link = dir.path().join("audit.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = AuditLog::open(&link).err().unwrap().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
        let e = AuditLog::open(Path::new("/dev/null")).err().unwrap().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = AuditLog::open(dir.path()).err().unwrap().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn a_deleted_or_rotated_log_is_reopened_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path).unwrap();
        log.append(&json!({"n": 1})).unwrap();
        std::fs::remove_file(&path).unwrap();
        log.append(&json!({"n": 2})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"event\":\"audit_log_reopened\"") && text.contains("no longer at its path"), "{text}");
        assert!(text.ends_with("{\"n\":2}\n"), "{text}");
        // a rotation that puts a fresh file in place
        std::fs::rename(&path, dir.path().join("audit.jsonl.1")).unwrap();
        std::fs::write(&path, "").unwrap();
        log.append(&json!({"n": 3})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("replaced by another file") && text.ends_with("{\"n\":3}\n"), "{text}");
        let rotated = std::fs::read_to_string(dir.path().join("audit.jsonl.1")).unwrap();
        assert!(rotated.ends_with("{\"n\":2}\n"), "nothing written to the rotated file: {rotated}");
    }

    #[test]
    fn append_is_one_synced_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::open(&dir.path().join("a/audit.jsonl")).unwrap();
        log.append(&json!({"n": 1})).unwrap();
        log.append(&json!({"n": 2})).unwrap();
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert_eq!(text, "{\"n\":1}\n{\"n\":2}\n");
    }
}
