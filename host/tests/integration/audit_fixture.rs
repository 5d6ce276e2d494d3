//! Logs written by the previous version still verify: the chain, its signed checkpoints, every
//! passkey approval against the keys enrolled then, and a rotation's two files in turn. The
//! records' own types read them too (`audit::events`' tests).

use std::path::{Path, PathBuf};
use std::process::Command;

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/audit/testdata").join(name)
}

fn verify(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_equinix-mcp")).args(["audit", "verify"]).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_log_of_the_previous_version_verifies_with_its_checkpoints_and_passkey_approvals() {
    let log = testdata("audit.jsonl");
    let (checkpoints, key, export) =
        (testdata("checkpoints.jsonl"), testdata("checkpoints.pub.pem"), testdata("passkeys.export.json"));
    let (code, text) = verify(&[
        log.to_str().unwrap(),
        "--checkpoints",
        checkpoints.to_str().unwrap(),
        "--public-key",
        key.to_str().unwrap(),
        "--passkeys",
        export.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("intact: 26 records"), "{text}");
    assert!(text.contains("5 checkpoints of this chain agree"), "{text}");
    assert!(text.contains("1 passkey approvals verify"), "{text}");
    for other in ["page-decisions.jsonl", "discarded.jsonl"] {
        let (code, text) = verify(&[testdata(other).to_str().unwrap()]);
        assert_eq!(code, 0, "{other}: {text}");
    }
    let (old, new) = (testdata("rotated.1.jsonl"), testdata("rotated.jsonl"));
    let (code, text) = verify(&[old.to_str().unwrap(), new.to_str().unwrap()]);
    assert!(code == 0 && text.contains("4 records in 2 files"), "{text}");
}
