//! One change's evidence, whole. Two replicas behind one public address, each with its
//! own audit log, checkpoints signed with the team's key, one of them rotated as logrotate does:
//! the person decides on replica a's page, the agent's confirm creates on replica b. A reviewer
//! gives both folders to `equinix-mcp audit changes` and reads each change's story with where
//! each record is; a create whose decision is in a log not given is an error.

use std::path::Path;

use serde_json::json;

use crate::approval_page::replica_args;
use crate::evidence::{ed25519_keys, run_verify};
use crate::harness::*;

const ALL: &str = "fabric:read fabric:propose fabric:confirm";
const PROPOSER: &str = "full-es256";

async fn changes(args: &[&Path], extra: &[&str]) -> (i32, String) {
    let mut argv = vec!["audit".to_string(), "changes".into()];
    argv.extend(args.iter().map(|p| p.display().to_string()));
    argv.extend(extra.iter().map(|s| s.to_string()));
    run_verify(argv).await
}

/// Proposes `name` and has the proposer approve it on a's page; the confirm (on b) creates.
async fn approved_on_a_created_on_b(agent: &Client, name: &str, vlan: u64) -> String {
    let proposal = propose_on(agent, name, vlan).await;
    let token = proposal["confirm_token"].as_str().unwrap().to_string();
    let asked = structured(&call_on(agent, "fabric_confirm_change", json!({"confirm_token": token})).await);
    let link = asked["human_confirmation"]["approval_url"].as_str().unwrap().to_string();
    let person = Browser::default();
    let page = person.sign_in(&link, PROPOSER).await;
    assert!(person.decide(&page, "approve").await.body.contains("Approved by"));
    let done = structured(&call_on(agent, "fabric_confirm_change", json!({"confirm_token": token})).await);
    assert_eq!(done["executed"], true, "{done}");
    token
}

#[tokio::test]
async fn a_reviewer_reads_each_change_whole_from_every_replicas_logs() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = ed25519_keys(dir.path(), "team");
    let provider = OidcProvider::start().await;
    let redis = crate::harness::redis::RedisServer::start();
    let sim = sim(equinix_fabric_sim::SimConfig::default()).await;
    let port = free_port();
    let public_url = format!("http://127.0.0.1:{port}/mcp");
    let args = replica_args(&redis.url(0), &provider.issuer, &public_url);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let state = crate::replicas::rand_key();
    let state = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, state);
    let mut replicas = Vec::new();
    for (name, listen) in [("a", format!("127.0.0.1:{port}")), ("b", "127.0.0.1:0".to_string())] {
        let folder = dir.path().join(name);
        std::fs::create_dir(&folder).unwrap();
        let (log, checkpoints) = (folder.join("audit.jsonl"), folder.join("checkpoints.jsonl"));
        let env = [
            ("EQUINIX_MCP_AUDIT_LOG", log.to_str().unwrap()),
            ("EQUINIX_MCP_AUDIT_CHECKPOINTS", checkpoints.to_str().unwrap()),
            ("EQUINIX_MCP_AUDIT_SIGNING_KEY", key.to_str().unwrap()),
            ("EQUINIX_MCP_STATE_KEY", state.as_str()),
        ];
        let server = Launch::serve().against(&sim).args(&args).env(&env).http(&listen).await;
        replicas.push((server, folder));
    }
    let token = provider.token(PROPOSER, ALL, &public_url).await;
    let agent = replicas[1].0.connect(Some(&token), TestClient::plain(), false).await;
    let first = approved_on_a_created_on_b(&agent, "story-1", 3701).await;
    // b's log rotated as logrotate does (renamed; the server starts a new file at its next write)
    std::fs::rename(replicas[1].1.join("audit.jsonl"), replicas[1].1.join("audit.jsonl.1")).unwrap();
    let second = approved_on_a_created_on_b(&agent, "story-2", 3702).await;
    let unconfirmed = propose_on(&agent, "story-3", 3703).await;
    for (server, _) in &mut replicas {
        server.terminate();
        assert!(server.child.wait().await.unwrap().success());
    }
    let (a, b) = (replicas[0].1.clone(), replicas[1].1.clone());

    let (code, said) = changes(&[&a, &b], &["--public-key", public.to_str().unwrap()]).await;
    assert_eq!(code, 0, "{said}");
    assert_eq!(said.matches(": intact, ").count(), 2, "one chain per replica, b's across its two files: {said}");
    assert!(said.contains("audit.jsonl.1") && said.contains("checkpoints of"), "{said}");
    for token in [&first, &second] {
        let story = &said[said.find(&format!("change {token}")).unwrap_or_else(|| panic!("{token}: {said}"))..];
        let story = &story[..story[1..].find("\nchange ").map_or(story.len(), |e| e + 1)];
        let a_log = a.join("audit.jsonl").display().to_string();
        for line in ["proposed", "decided ", "approve by", "approved ", "page by", "create ", "outcome ", "executed"] {
            assert!(story.contains(line), "{line:?} in {story}");
        }
        let decided = story.lines().find(|l| l.contains("decided")).unwrap();
        assert!(decided.contains(&a_log), "the decision read from a's log: {decided}");
        let outcome = story.lines().find(|l| l.contains("outcome")).unwrap();
        assert!(outcome.contains(&b.display().to_string()), "the create read from b's: {outcome}");
    }
    assert!(said.contains(&format!("change {}", unconfirmed["confirm_token"].as_str().unwrap())), "{said}");
    assert!(
        said.contains("3 changes, 2 created, 2 decisions stood (0 refused, not kept), 2 chains; 0 problems"),
        "{said}"
    );
    // as JSON lines, one per change
    let (code, json_said) = changes(&[&a, &b], &["--json"]).await;
    assert_eq!(code, 0, "{json_said}");
    let first_story: serde_json::Value = json_said
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["token"] == first.as_str())
        .expect("the first change as JSON");
    assert_eq!(first_story["outcomes"][0]["outcome"], "executed", "{first_story}");

    // b's logs alone: its creates name a person's decision no log given holds
    let (code, said) = changes(&[&b], &[]).await;
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("no log given holds that person's decision"), "{said}");
    // a rotated file left out: said, and the first change's proposal is missing from its story
    let (code, said) = changes(&[&a, &b.join("audit.jsonl")], &[]).await;
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("the files before it, rotated away, were not given"), "{said}");
    assert!(said.contains("proposed  (not in the logs given)"), "{said}");
    // a checkpoint edited: the chain it vouches for is BROKEN
    let cp = b.join("checkpoints.jsonl");
    let text = std::fs::read_to_string(&cp).unwrap();
    std::fs::write(&cp, text.replacen("\"seq\":0", "\"seq\":1", 1)).unwrap();
    let (code, said) = changes(&[&a, &b], &["--public-key", public.to_str().unwrap()]).await;
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("BROKEN"), "{said}");
    provider.stop().await;
}
