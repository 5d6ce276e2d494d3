//! `equinix-mcp audit verify`: what a reviewer runs on their own machine to check a log.

use std::process::ExitCode;

use crate::audit_chain::{Verdict, verify};
use crate::audit_checkpoints::{check, load_public_key};
use crate::cli::AuditCommand;

pub fn run(command: &AuditCommand) -> ExitCode {
    let AuditCommand::Verify { file, checkpoints, public_key } = command;
    let shown = file.display();
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{shown}: {e}");
            return ExitCode::from(1);
        }
    };
    let (intact, torn) = match verify(&bytes) {
        Verdict::Broken { line, why } => {
            println!("{shown}: BROKEN at line {line}: {why}");
            return ExitCode::from(1);
        }
        Verdict::TornTail { last_good_seq, bytes, intact } => (*intact, Some((last_good_seq, bytes))),
        intact => (intact, None),
    };
    let Verdict::Intact { records, first_seq, last_seq, head, chain, hashes } = intact else {
        unreachable!("verify returns an intact prefix")
    };
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
                eprintln!("{}: {e}", cfile.display());
                return ExitCode::from(1);
            }
        };
        if hashes.is_empty() {
            println!("{shown}: BROKEN: the log holds no record for the checkpoints to vouch for");
            return ExitCode::from(1);
        }
        match check(&text, &key, &chain, first_seq, &hashes) {
            Ok(n) => println!("{}: {n} checkpoints of this chain agree with the log", cfile.display()),
            Err(why) => {
                println!("{shown}: BROKEN: {why}");
                return ExitCode::from(1);
            }
        }
    }
    match torn {
        Some((last_good, bytes)) => {
            let good = last_good.map_or("none".to_string(), |s| s.to_string());
            println!(
                "{shown}: TORN TAIL: the last {bytes} bytes are an incomplete record (a crash during a write, or a \
                 cut); the {records} records before it verify, the last good one is seq {good}"
            );
            ExitCode::from(2)
        }
        None => {
            println!(
                "{shown}: intact: {records} records (seq {first_seq}-{last_seq}), chain {chain}, head sha256 {head}"
            );
            ExitCode::SUCCESS
        }
    }
}
