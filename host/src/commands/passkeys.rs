//! `equinix-mcp passkeys`: the operator's view of the passkeys people enrolled on the approval
//! page. It reads and changes the same store the servers use; a revocation holds on every server
//! from its next use of passkeys, and each server's audit log records it before that.

use crate::outln;

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;

use crate::cli::{PasskeysAt, PasskeysCommand};
use crate::passkeys::offline::{EXPORT_FORMAT, Export};
use crate::passkeys::{PasskeyStore, Revocation};
use crate::proposals::ProposalStore;

async fn open(at: &PasskeysAt) -> anyhow::Result<PasskeyStore> {
    let proposals = Arc::new(ProposalStore::open(&at.store).await?);
    PasskeyStore::choose(&proposals, at.passkeys_file.as_deref(), at.audit_log.as_deref())
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Who runs the command, for the audit record of a revocation.
pub(crate) fn operator() -> String {
    crate::platform::user_description()
}

pub async fn run(command: &PasskeysCommand) -> anyhow::Result<ExitCode> {
    match command {
        PasskeysCommand::List { at, json } => {
            let store = open(at).await?;
            let all = store.all().await.map_err(anyhow::Error::msg)?;
            if *json {
                for e in &all {
                    let line = json!({
                        "credential_id": e.credential_id,
                        "principal": e.principal,
                        "origin": e.origin,
                        "enrolled_at": crate::audit::rfc3339(e.enrolled_at_ms),
                        "last_used_at": e.last_used_ms.map(crate::audit::rfc3339),
                        "revoked": e.revoked,
                    });
                    outln!("{line}");
                }
            } else if all.is_empty() {
                outln!("no passkey is enrolled in {}", store.describe());
            } else {
                outln!("{:<44}  {:<40}  {:<24}  state", "credential id", "person", "enrolled");
                for e in &all {
                    let state = match &e.revoked {
                        Some(r) => format!("revoked {} by {}", crate::audit::rfc3339(r.at_ms), r.by),
                        None => "active".into(),
                    };
                    outln!(
                        "{:<44}  {:<40}  {:<24}  {state}",
                        e.credential_id,
                        e.principal,
                        crate::audit::rfc3339(e.enrolled_at_ms)
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        PasskeysCommand::Revoke { credential_id, reason, at } => {
            let reason = reason.trim().to_string();
            if reason.is_empty() {
                anyhow::bail!("--reason must say why, for the audit log");
            }
            let store = open(at).await?;
            let revocation = Revocation { at_ms: now_ms(), by: operator(), reason };
            let changed = store
                .update(credential_id, move |e| {
                    if let Some(r) = &e.revoked {
                        return Err(format!("it was revoked already, by {} ({})", r.by, r.reason));
                    }
                    e.revoked = Some(revocation.clone());
                    Ok(())
                })
                .await
                .map_err(|why| anyhow::anyhow!("passkey {credential_id} was not revoked: {why}"))?;
            outln!(
                "revoked passkey {} of {}; every server refuses it from its next use of passkeys, and records the \
                 revocation in its audit log first",
                changed.credential_id,
                changed.principal
            );
            Ok(ExitCode::SUCCESS)
        }
        PasskeysCommand::Export { at } => {
            let store = open(at).await?;
            let enrollments = store.all().await.map_err(anyhow::Error::msg)?;
            let export =
                Export { format: EXPORT_FORMAT.into(), exported_at: crate::audit::rfc3339(now_ms()), enrollments };
            outln!("{}", serde_json::to_string_pretty(&export)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}
