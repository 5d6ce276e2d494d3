//! Evidence a reviewer can check on their own machine: the audit log's hash chain
//! (`audit verify`), signed checkpoints that reveal a cut tail, keys made with `openssl`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::*;

/// `openssl genpkey -algorithm ed25519` and its public half, in `dir`: (private, public).
pub(crate) fn ed25519_keys(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let (private, public) = (dir.join(format!("{name}.pem")), dir.join(format!("{name}.pub.pem")));
    let made = std::process::Command::new("openssl")
        .args(["genpkey", "-algorithm", "ed25519", "-out"])
        .arg(&private)
        .status()
        .expect("openssl is installed");
    assert!(made.success());
    let out = std::process::Command::new("openssl")
        .args(["pkey", "-pubout", "-in"])
        .arg(&private)
        .arg("-out")
        .arg(&public)
        .status()
        .unwrap();
    assert!(out.success());
    std::fs::set_permissions(&private, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    (private, public)
}

/// `equinix-mcp audit verify FILES...`: (exit code, stdout and stderr).
async fn verify_files(files: &[&Path]) -> (i32, String) {
    let mut argv = vec!["audit".to_string(), "verify".into()];
    argv.extend(files.iter().map(|f| f.display().to_string()));
    run_verify(argv).await
}

/// `equinix-mcp audit verify LOG [CHECKPOINTS PUBLIC_KEY]`: (exit code, stdout and stderr).
async fn verify(args: &[&Path]) -> (i32, String) {
    let mut argv: Vec<String> = vec!["audit".into(), "verify".into(), args[0].display().to_string()];
    if let [_, checkpoints, key] = args {
        argv.extend(["--checkpoints".into(), checkpoints.display().to_string()]);
        argv.extend(["--public-key".into(), key.display().to_string()]);
    }
    run_verify(argv).await
}

pub(crate) async fn run_verify(argv: Vec<String>) -> (i32, String) {
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let out = tokio::time::timeout(Duration::from_secs(30), command(&argv, &[]).output()).await.unwrap().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout) + &text(&out.stderr))
}

/// Waits until the process `pid` has exited (its last checkpoint written); a zombie not yet
/// reaped by the harness has.
async fn exited(pid: u32) {
    let gone = async || match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().next()) == Some("Z"),
        Err(_) => true,
    };
    wait_until("the server to exit", gone).await;
}

/// A server that signs checkpoints every two records, three proposes and a confirm, stopped;
/// its log, its checkpoints, the keys' directory.
async fn signed_log() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = ed25519_keys(dir.path(), "audit");
    let (log, checkpoints) = (dir.path().join("audit.jsonl"), dir.path().join("checkpoints.jsonl"));
    let server = Launch::command(&["serve", "--fabric-sim", "--toolsets", "metros,mutate"])
        .args(&["--audit-signing-key", key.to_str().unwrap(), "--audit-checkpoints", checkpoints.to_str().unwrap()])
        .args(&["--audit-checkpoint-every", "2"])
        .env(&[("EQUINIX_MCP_AUDIT_LOG", log.to_str().unwrap())])
        .client(TestClient::accepting())
        .stdio()
        .await;
    let mut last = Value::Null;
    for i in 0..3 {
        last = propose_on(&server.client, &format!("chained-{i}"), 1400 + i).await;
    }
    let done = server.ok("fabric_confirm_change", json!({"confirm_token": last["confirm_token"]})).await;
    assert_eq!(done["executed"], true, "{done}");
    let pid = server.pid.unwrap();
    server.stop().await;
    exited(pid).await;
    (dir, log, checkpoints, public)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| format!("{l}\n")).collect()
}

#[tokio::test]
async fn a_served_log_verifies_and_every_kind_of_tampering_is_named() {
    let (dir, log, checkpoints, public) = signed_log().await;
    let records = read_audit_chain(&log);
    assert_eq!(records[0]["event"], "audit_log_opened");
    for r in records.iter().filter(|r| r["tool"].is_string()) {
        assert!(r["principal"].is_string(), "every call record names its principal: {r}");
    }
    let (code, out) = verify(&[&log]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("intact: {} records", records.len())) && out.contains("head sha256"), "{out}");
    let (code, out) = verify(&[&log, &checkpoints, &public]).await;
    assert_eq!(code, 0, "{out}");
    assert!(lines(&checkpoints).len() >= 2, "every two records and at shutdown");

    let original = lines(&log);
    let tampered = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    // one byte edited
    let mut edited = original.clone();
    edited[2] = edited[2].replacen("fabric_", "fabriC_", 1);
    assert_ne!(edited[2], original[2]);
    let edited = edited.concat();
    let (code, out) = verify(&[&tampered("edited", edited), &checkpoints, &public]).await;
    assert!(code == 1 && out.contains("BROKEN at line"), "{out}");
    // a middle line deleted
    let mut deleted = original.clone();
    deleted.remove(3);
    let (code, out) = verify(&[&tampered("deleted", deleted.concat())]).await;
    assert!(code == 1 && out.contains("removed"), "{out}");
    // two lines swapped
    let mut swapped = original.clone();
    swapped.swap(2, 3);
    let (code, out) = verify(&[&tampered("swapped", swapped.concat())]).await;
    assert!(code == 1 && out.contains("BROKEN at line 3"), "{out}");
    // the tail cut: the chain alone cannot tell, the last checkpoint can
    let cut = tampered("cut", original[..original.len() - 2].concat());
    let (code, out) = verify(&[&cut]).await;
    assert_eq!(code, 0, "a chain alone cannot reveal a cut tail: {out}");
    let (code, out) = verify(&[&cut, &checkpoints, &public]).await;
    assert!(code == 1 && out.contains("its end was cut off"), "{out}");
    // a torn last line (a crash mid-write) is not tampering
    let torn = tampered("torn", format!("{}{}", original.concat(), &original[1][..30]));
    let (code, out) = verify(&[&torn]).await;
    assert!(code == 2 && out.contains("TORN TAIL") && out.contains("last good one is seq"), "{out}");

    // the whole chain rewritten (every record re-linked, under a new chain id), and a file
    // replaced by a made-up "rotated" one that starts past the last checkpoint: both link, and
    // no checkpoint vouches for them
    use equinix_mcp::audit::chain::Chain;
    let relink = |records: &[Value], mut chain: Chain| -> String {
        let mut out = String::new();
        for r in records {
            let mut r = r.clone();
            let m = r.as_object_mut().unwrap();
            m.remove("seq");
            m.remove("prev");
            if m.contains_key("chain") {
                m.insert("chain".into(), json!(chain.id));
            }
            if m.contains_key("previous_file_head") {
                m.insert("previous_file_head".into(), json!(chain.prev));
            }
            let line = chain.link(&serde_json::to_string(&r).unwrap());
            chain.advance(&line);
            out.push_str(&line);
        }
        out
    };
    let mut rewritten_records = records.clone();
    rewritten_records[2]["request_sha256"] = json!("00".repeat(32));
    let rewritten = tampered("rewritten", relink(&rewritten_records, Chain::fresh()));
    let (code, out) = verify(&[&rewritten]).await;
    assert_eq!(code, 0, "a rewritten chain links: {out}");
    let (code, out) = verify(&[&rewritten, &checkpoints, &public]).await;
    assert!(code == 1 && out.contains("no checkpoint vouches"), "{out}");
    let last_checkpoint = lines(&checkpoints)
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["seq"].as_u64().unwrap())
        .max()
        .unwrap();
    let chain_id = records[0]["chain"].as_str().unwrap().to_string();
    let mut fake =
        vec![json!({"event": "audit_log_reopened", "chain": chain_id, "previous_file_head": "ab".repeat(32)})];
    fake.extend(records[1..].iter().cloned());
    let start = Chain { id: chain_id, next_seq: last_checkpoint + 1, prev: "ab".repeat(32) };
    let replaced = tampered("replaced", relink(&fake, start));
    let (code, out) = verify(&[&replaced, &checkpoints, &public]).await;
    assert!(code == 1 && out.contains("no checkpoint vouches"), "{out}");

    // a checkpoint edited (its seq moved back), and checkpoints checked with another key
    let mut forged: Vec<Value> = lines(&checkpoints).iter().map(|l| serde_json::from_str(l).unwrap()).collect();
    let newest = forged.len() - 1;
    forged[newest]["seq"] = json!(forged[newest]["seq"].as_u64().unwrap() - 1);
    let forged_text: String = forged.iter().map(|c| format!("{c}\n")).collect();
    let (code, out) = verify(&[&log, &tampered("forged.jsonl", forged_text), &public]).await;
    assert!(code == 1 && out.contains("the signature does not verify"), "{out}");
    let (_, other) = ed25519_keys(dir.path(), "other");
    let (code, out) = verify(&[&log, &checkpoints, &other]).await;
    assert!(code == 1 && out.contains("not by the given public key"), "{out}");
}

#[tokio::test]
async fn a_kill_9_while_writing_leaves_a_log_that_verifies_or_ends_in_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let env = [("EQUINIX_MCP_AUDIT_LOG", log.to_str().unwrap())];
    let mut server = Launch::serve().args(&["--toolsets", "metros,mutate"]).env(&env).http("127.0.0.1:0").await;
    let clients: Vec<_> =
        futures_util::future::join_all((0..4).map(|_| server.connect(None, TestClient::plain(), false))).await;
    let proposing = clients.iter().enumerate().map(|(c, client)| async move {
        for i in 0..200u64 {
            let _ = call_on(
                client,
                "fabric_propose_change",
                json!({"change_type": "connection_create",
                "spec": light_connection_spec(&format!("kill-{c}-{i}"), 1500 + i)}),
            )
            .await;
        }
    });
    let pid = server.child.id().unwrap();
    let killer = async {
        // mid-write: the clients' records are flowing into the log
        let lines = || std::fs::read(&log).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count());
        wait::until("proposes to be writing the audit log", wait::WITHIN, async || lines() >= 12).await;
        assert!(std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap().success());
    };
    tokio::select! {
        _ = futures_util::future::join_all(proposing) => panic!("the kill came too late"),
        _ = killer => {}
    }
    drop(clients);
    // reaped, not only a zombie: the leader shows `Z` while a thread killed in an fsync still
    // holds the log's lock
    tokio::time::timeout(Duration::from_secs(10), server.child.wait()).await.expect("the server exits").unwrap();
    let (code, out) = verify(&[&log]).await;
    assert!(code == 0 || code == 2, "a crash is never tampering: {out}");
    // the next process cuts a torn record off, says so, and continues the chain
    let again = Launch::serve().args(&["--toolsets", "metros,mutate"]).env(&env).http("127.0.0.1:0").await;
    wait_until("the second start record", async || {
        read_audit_chain(&log).iter().filter(|r| r["event"] == "audit_log_opened").count() == 2
    })
    .await;
    let start = read_audit_chain(&log).into_iter().rfind(|r| r["event"] == "audit_log_opened").unwrap();
    assert_eq!(start["torn_tail_cut"].is_object(), code == 2, "{start}");
    let (code, out) = verify(&[&log]).await;
    assert_eq!(code, 0, "{out}");
    drop(again);
}

#[tokio::test]
async fn signing_keys_are_checked_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let (key, _) = ed25519_keys(dir.path(), "audit");
    let checkpoints = dir.path().join("c.jsonl");
    let base = ["serve", "--fabric-sim", "--toolsets", "mutate", "--audit-checkpoints", checkpoints.to_str().unwrap()];
    let run = async |key: &Path| {
        let mut args = base.to_vec();
        args.extend(["--audit-signing-key", key.to_str().unwrap()]);
        run_to_exit(&args, &[]).await
    };
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let (ok, _, stderr) = run(&key).await;
    assert!(!ok && stderr.contains("chmod 600"), "{stderr}");
    // an RSA key, and a file that is no key at all
    let rsa = dir.path().join("rsa.pem");
    let made = std::process::Command::new("openssl")
        .args(["genpkey", "-algorithm", "rsa", "-pkeyopt", "rsa_keygen_bits:1024", "-out"])
        .arg(&rsa)
        .status()
        .unwrap();
    assert!(made.success());
    let junk = dir.path().join("junk.pem");
    std::fs::write(&junk, "not a key\n").unwrap();
    for (path, says) in [(&rsa, "not an Ed25519 PKCS#8 key"), (&junk, "not a PEM private key")] {
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        let (ok, _, stderr) = run(path).await;
        assert!(!ok && stderr.contains(says), "{stderr}");
    }
    let (ok, _, stderr) =
        run_to_exit(&["serve", "--fabric-sim", "--audit-signing-key", key.to_str().unwrap()], &[]).await;
    assert!(!ok && stderr.contains("--audit-checkpoints"), "{stderr}");
}

/// `minisign -G` without a password, in `dir`: (secret key, public key).
fn minisign_keys(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let (secret, public) = (dir.join(format!("{name}.key")), dir.join(format!("{name}.pub")));
    let made = std::process::Command::new("minisign")
        .args(["-G", "-W", "-p"])
        .arg(&public)
        .arg("-s")
        .arg(&secret)
        .output()
        .expect("minisign is installed (.ci/install-minisign)");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    (secret, public)
}

/// `minisign -Sm FILE` (with `extra` flags): the signature next to it.
fn minisign_sign(secret: &Path, file: &Path, extra: &[&str]) {
    let signed = std::process::Command::new("minisign")
        .args(["-S", "-s"])
        .arg(secret)
        .arg("-m")
        .arg(file)
        .args(["-t", "platform release 2026.12"])
        .args(extra)
        .output()
        .unwrap();
    assert!(signed.status.success(), "{}", String::from_utf8_lossy(&signed.stderr));
}

/// The key id `minisign` prints for a public key file, as the server names it (16 digits:
/// minisign 0.11 drops leading zeros, 0.12 pads them).
fn minisign_key_id(public: &Path) -> String {
    let text = std::fs::read_to_string(public).unwrap();
    let printed = text.lines().next().unwrap().rsplit(' ').next().unwrap();
    format!("{:016X}", u64::from_str_radix(printed, 16).unwrap())
}

#[tokio::test]
async fn a_component_runs_only_when_a_trusted_key_signed_its_exact_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let wasm = dir.path().join("probe.wasm");
    std::fs::copy(probe_component(), &wasm).unwrap();
    let (ours, ours_pub) = minisign_keys(dir.path(), "release");
    let (theirs, theirs_pub) = minisign_keys(dir.path(), "other");
    let inspect = async |keys: &[&Path]| {
        let mut args = vec!["inspect".to_string(), "--component".into(), wasm.display().to_string(), "--json".into()];
        for k in keys {
            args.extend(["--component-public-key".into(), k.display().to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_to_exit(&args, &[]).await
    };
    // no signature yet
    let (ok, _, stderr) = inspect(&[&ours_pub]).await;
    assert!(!ok && stderr.contains("has no signature") && stderr.contains(&minisign_key_id(&ours_pub)), "{stderr}");
    // signed by the release key (prehashed, minisign's default): inspect names the signer
    minisign_sign(&ours, &wasm, &[]);
    let (ok, stdout, stderr) = inspect(&[&theirs_pub, &ours_pub]).await;
    assert!(ok, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["signature"]["key_id"], minisign_key_id(&ours_pub), "{out}");
    assert_eq!(out["signature"]["trusted_comment"], "platform release 2026.12", "{out}");
    // serve starts with it, and says who signed
    let server = Launch::serve()
        .args(&["--component", wasm.to_str().unwrap(), "--toolsets", "probe"])
        .args(&["--component-public-key", ours_pub.to_str().unwrap()])
        .stdio()
        .await;
    // the stdio launch returns once MCP answers; the banner's stderr is read in the background
    let signer = format!("signed by minisign key {}", minisign_key_id(&ours_pub));
    wait_until("the banner naming the signer", async || server.stderr_text().contains(&signer)).await;
    server.stop().await;
    // a key that is not trusted
    let (ok, _, stderr) = inspect(&[&theirs_pub]).await;
    assert!(!ok && stderr.contains("which is not a trusted key"), "{stderr}");
    // one byte of the component changed
    let mut bytes = std::fs::read(&wasm).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(dir.path().join("tampered.wasm"), &bytes).unwrap();
    std::fs::copy(dir.path().join("probe.wasm.minisig"), dir.path().join("tampered.wasm.minisig")).unwrap();
    let tampered = dir.path().join("tampered.wasm");
    let args =
        ["inspect", "--component", tampered.to_str().unwrap(), "--component-public-key", ours_pub.to_str().unwrap()];
    let (ok, _, stderr) = run_to_exit(&args, &[]).await;
    assert!(!ok && stderr.contains("does not match the bytes"), "{stderr}");
    // a legacy signature, a malformed one, and a key file that is no minisign key
    minisign_sign(&theirs, &wasm, &["-l"]);
    let (ok, _, stderr) = inspect(&[&theirs_pub]).await;
    assert!(!ok && stderr.contains("legacy"), "{stderr}");
    std::fs::write(dir.path().join("probe.wasm.minisig"), "untrusted comment: x\nnot base64\n").unwrap();
    let (ok, _, stderr) = inspect(&[&ours_pub]).await;
    assert!(!ok && stderr.contains("is malformed"), "{stderr}");
    let (_, pem) = ed25519_keys(dir.path(), "pem");
    let (ok, _, stderr) = inspect(&[&pem]).await;
    assert!(!ok && stderr.contains("not a minisign public key"), "{stderr}");
    // the embedded component needs no signature
    let (ok, _, stderr) = run_to_exit(&["inspect", "--component-public-key", ours_pub.to_str().unwrap()], &[]).await;
    assert!(ok, "{stderr}");
}

#[tokio::test]
async fn a_rotated_log_verifies_file_by_file_and_only_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let server = Launch::command(&["serve", "--fabric-sim", "--toolsets", "metros,mutate"])
        .env(&[("EQUINIX_MCP_AUDIT_LOG", log.to_str().unwrap())])
        .stdio()
        .await;
    propose_on(&server.client, "before-rotation", 1601).await;
    let old = dir.path().join("audit.jsonl.1");
    std::fs::rename(&log, &old).unwrap(); // as logrotate does
    propose_on(&server.client, "after-rotation", 1602).await;
    server.stop().await;
    let (code, out) = verify_files(&[&old, &log]).await;
    assert!(code == 0 && out.contains("in 2 files"), "{out}");
    let (code, out) = verify_files(&[&log]).await;
    assert_eq!(code, 0, "a rotated file alone verifies by itself: {out}");
    let (code, out) = verify_files(&[&log, &old]).await;
    assert!(code == 1 && out.contains("does not continue the file before it"), "{out}");
    // a record dropped at the seam: the second file no longer continues the first
    let mut first = lines(&old);
    first.pop();
    let cut = dir.path().join("cut.1");
    std::fs::write(&cut, first.concat()).unwrap();
    let (code, out) = verify_files(&[&cut, &log]).await;
    assert!(code == 1 && out.contains("does not continue"), "{out}");
    // the old file's last record edited: that file alone still links, the next one names its
    // real head
    let mut edited = lines(&old);
    let last = edited.len() - 1;
    edited[last] = edited[last].replacen("fabric_", "fabriC_", 1);
    let edited_path = dir.path().join("edited.1");
    std::fs::write(&edited_path, edited.concat()).unwrap();
    assert_eq!(verify_files(&[&edited_path]).await.0, 0, "a file's own last record is vouched for by nothing in it");
    let (code, out) = verify_files(&[&edited_path, &log]).await;
    assert!(code == 1 && out.contains("does not continue"), "{out}");
}
