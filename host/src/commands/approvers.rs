//! `equinix-mcp approvers`: the people who approve creates on this machine's local servers with
//! a passkey. Every local server of this user reads the same file at each approval, so an
//! enrollment or a removal holds at once; each records it in its own audit log as it first
//! sees it.

use std::process::ExitCode;

use serde_json::json;

use super::passkeys::{now_ms, operator};
use crate::approvers::{PREFIX, check_name, principal};
use crate::cli::ApproversCommand;
use crate::outln;
use crate::passkeys::Revocation;
use crate::passkeys::offline::{EXPORT_FORMAT, Export};

pub async fn run(command: &ApproversCommand) -> anyhow::Result<ExitCode> {
    match command {
        ApproversCommand::Add { name, listen, valid_secs, file } => {
            check_name(name)?;
            let path = file.file()?;
            let valid = std::time::Duration::from_secs(*valid_secs);
            let within = match valid_secs % 60 {
                0 => format!("{} minutes", valid_secs / 60),
                _ => format!("{valid_secs} seconds"),
            };
            let enrolled = crate::approval_page::enrollment::run(name, file.store()?, *listen, valid, |link| {
                outln!(
                    "To enroll {name} as an approver on this machine, open this link in a browser here within \
                     {within} (it works once) and create a passkey:\n\n    {link}\n"
                );
            })
            .await?;
            outln!(
                "{name} is an approver on this machine (passkey {}), kept in {}. Local servers let {name} approve \
                 creates on their approval page from now on.",
                enrolled.credential_id,
                path.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        ApproversCommand::List { json, file } => {
            let path = file.file()?;
            let all: Vec<_> = file.store()?.all().await.map_err(anyhow::Error::msg)?;
            let mine: Vec<_> = all.iter().filter(|e| e.principal.starts_with(PREFIX)).collect();
            if *json {
                for e in &mine {
                    let line = json!({
                        "name": e.principal.strip_prefix(PREFIX),
                        "principal": e.principal,
                        "credential_id": e.credential_id,
                        "origin": e.origin,
                        "enrolled_at": crate::audit::rfc3339(e.enrolled_at_ms),
                        "last_used_at": e.last_used_ms.map(crate::audit::rfc3339),
                        "removed": e.revoked,
                    });
                    outln!("{line}");
                }
            } else if mine.is_empty() {
                outln!("no approver is enrolled in {}: add one with `equinix-mcp approvers add NAME`", path.display());
            } else {
                outln!("{:<24}  {:<44}  {:<24}  state", "name", "passkey", "enrolled");
                for e in &mine {
                    let state = match &e.revoked {
                        Some(r) => format!("removed {} by {}", crate::audit::rfc3339(r.at_ms), r.by),
                        None => "active".into(),
                    };
                    let name = e.principal.strip_prefix(PREFIX).unwrap_or(&e.principal);
                    outln!(
                        "{name:<24}  {:<44}  {:<24}  {state}",
                        e.credential_id,
                        crate::audit::rfc3339(e.enrolled_at_ms)
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ApproversCommand::Remove { name, reason, file } => {
            check_name(name)?;
            let reason = reason.trim().to_string();
            if reason.is_empty() {
                anyhow::bail!("--reason must say why, for the audit log");
            }
            let store = file.store()?;
            let who = principal(name);
            let active: Vec<_> = crate::approvers::enrolled(&store)
                .await
                .map_err(anyhow::Error::msg)?
                .into_iter()
                .filter(|e| e.principal == who)
                .collect();
            if active.is_empty() {
                anyhow::bail!("{name} is no approver on this machine (see `equinix-mcp approvers list`)");
            }
            let revocation = Revocation { at_ms: now_ms(), by: operator(), reason };
            for e in &active {
                let removal = revocation.clone();
                store
                    .update(&e.credential_id, move |e| {
                        if e.revoked.is_none() {
                            e.revoked = Some(removal.clone());
                        }
                        Ok(())
                    })
                    .await
                    .map_err(|why| anyhow::anyhow!("passkey {} of {name} was not removed: {why}", e.credential_id))?;
            }
            outln!(
                "removed {name} ({} passkey(s)): every local server refuses them from its next approval, and records \
                 the removal in its audit log",
                active.len()
            );
            Ok(ExitCode::SUCCESS)
        }
        ApproversCommand::Export { file } => {
            let all = file.store()?.all().await.map_err(anyhow::Error::msg)?;
            let enrollments = all.into_iter().filter(|e| e.principal.starts_with(PREFIX)).collect();
            let export =
                Export { format: EXPORT_FORMAT.into(), exported_at: crate::audit::rfc3339(now_ms()), enrollments };
            outln!("{}", serde_json::to_string_pretty(&export)?);
            Ok(ExitCode::SUCCESS)
        }
    }
}
