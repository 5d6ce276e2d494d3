//! The audit log: every propose and confirm recorded durably, and no create without a record.

use super::*;

#[tokio::test]
async fn every_propose_and_confirm_is_in_the_audit_log_even_after_kill_9() {
    let b = broker(TestClient::accepting(), &[]).await;
    let p = b.propose("audited", 1001).await;
    let (err, out) = b.confirm(&token(&p)).await;
    assert!(!err, "{out}");
    // kill -9 the moment the confirm result is back: the line must already be on disk
    let pid = b.server.pid.unwrap();
    let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    assert!(killed.success());
    let entries = b.server.audit_entries();
    let events: Vec<&str> = entries.iter().map(|e| e["event"].as_str().unwrap_or("tool_call")).collect();
    assert_eq!(
        events,
        ["tool_call", "approval_minted", "create_sending", "create_outcome", "tool_call"],
        "{entries:?}"
    );
    assert_eq!(entries[0]["tool"], "fabric_propose_change");
    assert_eq!(entries[0]["confirm_token"], token(&p));
    assert_eq!(entries[0]["request_sha256"], p["request_sha256"]);
    // the host's own records of the approval and its create, whatever the component reports
    for e in &entries[1..4] {
        assert_eq!(e["request_sha256"], p["request_sha256"], "{e}");
        assert_eq!((e["tool"].as_str(), e["principal"].as_str()), (Some("fabric_confirm_change"), Some("local")));
    }
    assert_eq!(entries[1]["human_status"], "accepted");
    assert_eq!(entries[3]["outcome"], "executed");
    assert_eq!(entries[3]["fabric_uuid"], out["created"]["uuid"]);
    let c = &entries[4];
    assert_eq!(c["tool"], "fabric_confirm_change");
    assert_eq!(c["confirm_token"], token(&p));
    assert_eq!(c["change_type"], "connection_create");
    assert_eq!(c["request_sha256"], p["request_sha256"]);
    assert_eq!(c["human_status"], "accepted");
    assert_eq!(c["executed"], true);
    assert_eq!(c["fabric_uuid"], out["created"]["uuid"]);
    assert_eq!(c["correlation_id"], out["correlation_id"]);
    assert!(c["ts"].as_str().unwrap().ends_with('Z') && c["started"].is_string());
}

#[tokio::test]
async fn failed_confirms_are_audited_too() {
    let b = broker(TestClient::answering(Answer::Decline), &[]).await;
    let p = b.propose("audited-decline", 1001).await;
    b.confirm(&token(&p)).await;
    b.confirm(&token(&p)).await;
    let entries = b.server.audit_entries();
    assert_eq!(entries.len(), 3, "no approval, so no approval records: {entries:?}");
    assert_eq!(entries[1]["human_status"], "declined");
    assert_eq!(entries[1]["executed"], false);
    assert_eq!(entries[2]["error_kind"], "replayed_token");
    b.server.stop().await;
}

#[tokio::test]
async fn no_create_is_sent_when_the_audit_record_cannot_be_made_durable() {
    // once the server has started (its start record written, the component's code mapped), its
    // file-size limit (RLIMIT_FSIZE) is lowered to the log's length, so every record fails with
    // EFBIG, as on a full disk. (The log is not grown from outside: it may be shared by several
    // servers, and bytes that no server wrote there are refused as foreign.)
    let audit = fresh_audit_path();
    let args = ["serve", "--fabric-sim", "--toolsets", "metros,mutate", "--no-cache"];
    let env = [("EQUINIX_MCP_AUDIT_LOG", audit.to_str().unwrap())];
    let server = Launch::command(&args).env(&env).client(TestClient::accepting()).stdio().await;
    let started = std::fs::metadata(&audit).unwrap().len();
    let pid = server.pid.expect("the server's pid").to_string();
    let limit = format!("--fsize={started}");
    let lowered = tokio::process::Command::new("prlimit").args(["--pid", &pid, &limit]).status().await.unwrap();
    assert!(lowered.success(), "util-linux's prlimit lowers the running server's limit");
    let sim = embedded_sim_url(&server).await;
    let b = Broker { server, sim };
    let p = b.propose("full-disk", 1001).await;
    assert!(p["audit_warning"].as_str().unwrap().contains("File too large"), "{p}");
    // where the log lives is the operator's to read, not the agent's
    let file = audit.file_name().unwrap().to_str().unwrap();
    assert!(!p.to_string().contains(file), "{p}");
    let (err, out) = b.confirm(&token(&p)).await;
    assert!(err, "{out}");
    assert_eq!(out["error"]["kind"], "confirmation_refused", "{out}");
    assert!(out["error"]["message"].as_str().unwrap().contains("audit log"), "{out}");
    assert!(!out.to_string().contains(file), "{out}");
    assert_eq!(out["error"]["result"]["executed"], false);
    assert!(out["confirm_checks"].is_object());
    assert_eq!(b.creates().await, 0, "nothing created without a durable record");
    assert_eq!(std::fs::metadata(&audit).unwrap().len(), started, "no torn record was left");
    b.server.stop().await;
    let _ = std::fs::remove_file(&audit);
}
