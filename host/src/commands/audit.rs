//! `equinix-mcp audit verify`: what a reviewer runs on their own machine to check a log (and,
//! after rotations, its files oldest first: each must continue the one before).

use crate::outln;

use std::path::PathBuf;
use std::process::ExitCode;

use super::audit_files::{Failure, Read, read_files};
use crate::audit::checkpoints::{check, load_public_key};
use crate::cli::AuditCommand;
use crate::passkeys::offline::{Export, check_log};

/// EX_NOINPUT of sysexits.h: a file to check could not be read, which says nothing of the log
/// (1 is a broken chain, 2 a torn tail).
const NO_INPUT: u8 = 66;

pub fn run(command: &AuditCommand) -> ExitCode {
    let (files, checkpoints, public_key, passkeys) = match command {
        AuditCommand::Verify { files, checkpoints, public_key, passkeys } => (files, checkpoints, public_key, passkeys),
        AuditCommand::Changes { paths, public_key, json } => {
            return super::changes::run(paths, public_key.as_deref(), *json);
        }
    };
    let (read, torn) = match read_files(files) {
        Ok(r) => r,
        Err(Failure::Unreadable(why)) => {
            eprintln!("equinix-mcp audit verify: {why}");
            return ExitCode::from(NO_INPUT);
        }
        Err(Failure::Broken(why)) => {
            outln!("{why}");
            return ExitCode::from(1);
        }
    };
    let shown = files.last().map(|f| f.display().to_string()).unwrap_or_default();
    if let (Some(cfile), Some(key)) = (checkpoints, public_key) {
        let key = match load_public_key(key) {
            Ok(k) => k,
            Err(e) => {
                eprintln!("{e:#}");
                return ExitCode::from(1);
            }
        };
        let text = match std::fs::read_to_string(cfile) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("equinix-mcp audit verify: {}: {e}", cfile.display());
                return ExitCode::from(NO_INPUT);
            }
        };
        if read.hashes.is_empty() {
            outln!("{shown}: BROKEN: the log holds no record for the checkpoints to vouch for");
            return ExitCode::from(1);
        }
        match check(&text, &key, &read.chain, read.first_seq, &read.hashes) {
            Ok(n) => outln!("{}: {n} checkpoints of this chain agree with the log", cfile.display()),
            Err(why) => {
                outln!("{shown}: BROKEN: {why}");
                return ExitCode::from(1);
            }
        }
    }
    match check_plans(files) {
        Ok(0) => {}
        Ok(n) => outln!("{shown}: {n} plans shown to a person match the hashes their records name"),
        Err(why) => {
            outln!("{shown}: BROKEN: {why}");
            return ExitCode::from(1);
        }
    }
    if let Some(export) = passkeys {
        match check_passkeys(files, export) {
            Ok(n) => outln!("{}: {n} passkey approvals verify against its keys", export.display()),
            Err(why) => {
                outln!("{shown}: BROKEN: {why}");
                return ExitCode::from(1);
            }
        }
    }
    let Read { records, first_seq, last_seq, head, chain, .. } = read;
    let files_note = if files.len() > 1 { format!(" in {} files", files.len()) } else { String::new() };
    match torn {
        Some((last_good, bytes)) => {
            let good = last_good.map_or("none".to_string(), |s| s.to_string());
            outln!(
                "{shown}: TORN TAIL: the last {bytes} bytes are an incomplete record (a crash during a write, or a \
                 cut); the {records} records before it verify{files_note}, the last good one is seq {good}"
            );
            ExitCode::from(2)
        }
        None => {
            outln!(
                "{shown}: intact: {records} records{files_note} (seq {first_seq}-{last_seq}), chain {chain}, head \
                 sha256 {head}"
            );
            ExitCode::SUCCESS
        }
    }
}

/// Checks every passkey approval in `files` against the export `export`: how many verified.
fn check_passkeys(files: &[PathBuf], export: &std::path::Path) -> Result<usize, String> {
    let text = std::fs::read_to_string(export).map_err(|e| format!("{}: {e}", export.display()))?;
    let export_read = Export::parse(&text).map_err(|e| format!("{}: {e}", export.display()))?;
    check_log(&records_of(files)?, &export_read).map(|c| c.approvals).map_err(|refused| refused.to_string())
}

/// Checks that every plan a record keeps (what a person was shown) hashes to the `plan_sha256`
/// the record names, which a passkey's signature covers: how many did.
fn check_plans(files: &[PathBuf]) -> Result<usize, String> {
    let mut checked = 0;
    for record in records_of(files)? {
        let Some(kept) = record.get("plan").filter(|p| !p.is_null()) else { continue };
        let seq = record["seq"].as_u64().map_or("?".into(), |s| s.to_string());
        let plan: crate::plan::Plan = serde_json::from_value(kept.clone())
            .map_err(|e| format!("record {seq}: a plan that does not read: {e}"))?;
        let named = record["plan_sha256"].as_str().unwrap_or_default();
        if plan.sha256() != named {
            return Err(format!(
                "record {seq}: the plan it keeps hashes to {}, and the record names {named:?}: the plan or its hash \
                 was edited",
                plan.sha256()
            ));
        }
        checked += 1;
    }
    Ok(checked)
}

/// The records of `files` (the chain was verified first; a torn last line is no record).
fn records_of(files: &[PathBuf]) -> Result<Vec<serde_json::Value>, String> {
    let mut records = Vec::new();
    for file in files {
        let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            if let Ok(record) = serde_json::from_slice::<serde_json::Value>(line) {
                records.push(record);
            }
        }
    }
    Ok(records)
}
