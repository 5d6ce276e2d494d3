//! The operator's Cedar policy, judged by the host on the exact bytes of every create:
//! the README's platform-team set as written, a denied propose that sends nothing, a metro rule
//! no body can slip past, SIGHUP, HTTP principals and the approval phase.

use std::path::PathBuf;

use crate::harness::*;
use equinix_fabric_sim::PORTS;
use serde_json::{Value, json};

const ALICE: &str = "alice-0123456789abcdef0123456789abcdef";
const NETOPS: &str = "netops-0123456789abcdef0123456789abcd";

/// The policy set of docs/policy.md, as a platform team would write it.
pub fn readme_policy() -> String {
    docs_block("# Operator policy")
}

pub fn policy_file(text: &str) -> PathBuf {
    let path = fresh_audit_path().with_extension("cedar");
    std::fs::write(&path, text).unwrap();
    path
}

fn connection(name: &str, bandwidth: u64, z_port: usize) -> Value {
    let mut spec = connection_spec(name, 1001);
    spec["bandwidth"] = json!(bandwidth);
    spec["zSide"]["accessPoint"]["port"]["uuid"] = json!(PORTS[z_port].0);
    json!({"change_type": "connection_create", "spec": spec})
}

fn token() -> Value {
    json!({"change_type": "service_token_create", "spec": {"type": "VC_TOKEN", "name": "t-1",
        "expirationDateTime": "2031-01-01T00:00:00Z",
        "connection": {"type": "EVPL_VC", "bandwidthLimit": 100, "aSide": {"accessPointSelectors": [{"type": "COLO",
            "port": {"uuid": PORTS[0].0}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 700}}]}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]}})
}

fn network() -> Value {
    json!({"change_type": "network_create", "spec": {"type": "EVPLAN", "name": "n-1", "scope": "REGIONAL",
        "location": {"region": "AMER"}, "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]}})
}

async fn dry_runs(sim: &str) -> u64 {
    let stats = sim_stats(sim).await;
    ["connections", "networks", "serviceTokens"].iter().map(|c| stats["dry_runs"][c].as_u64().unwrap_or(0)).sum()
}

fn denied_by(error: &Value, policy: &str) {
    assert_eq!(error["kind"], "policy_denied", "{error}");
    assert!(error["message"].as_str().unwrap().contains(policy), "{error}");
}

#[tokio::test]
async fn the_readme_policy_checks_and_decides_as_a_platform_team_wrote_it() {
    let path = policy_file(&readme_policy());
    let (ok, stdout, stderr) = run_to_exit(&["policy", "check", path.to_str().unwrap()], &[]).await;
    assert!(ok && stdout.contains("4 policies, valid against the EquinixMcp schema"), "{stdout}{stderr}");
    let args = ["--toolsets", "all,mutate", "--policy", path.to_str().unwrap()];
    let person = TestClient::accepting();
    let server = Launch::serve().args(&args).client(person.clone()).stdio().await;
    let sim = embedded_sim_url(&server).await;
    assert!(server.stderr_text().contains("policy=") && server.stderr_text().contains("4 policies"));

    // DC to SV at 1 Gbps: permitted, and confirmed through the approval phase's second look
    let p = server.ok("fabric_propose_change", connection("dc-to-sv", 1000, 3)).await;
    let done = server.ok("fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    assert_eq!(done["executed"], true, "{done}");
    let form = &person.prompt_texts()[0];
    let (host_part, _) = form.split_once("From the component").unwrap();
    assert!(host_part.contains("operator policy: permitted by \"our-metros-only\" (policy set sha256 "), "{form}");

    // above 1 Gbps, a service token, a network for `local`: denied before anything is sent
    let before = dry_runs(&sim).await;
    let too_fast = server.refused("fabric_propose_change", connection("too-fast", 10_000, 3)).await;
    denied_by(&too_fast, "at-most-1-gbps");
    // the denial says what the policy read of the request, and where to go from there
    let said = too_fast["message"].as_str().unwrap();
    assert!(said.contains("bandwidth 10000 Mbps") && said.contains("named \"too-fast\""), "{said}");
    assert!(said.contains("equinix-mcp policy schema"), "{said}");
    denied_by(&server.refused("fabric_propose_change", token()).await, "no-service-tokens");
    denied_by(&server.refused("fabric_propose_change", network()).await, "networks-only-for-netops");
    assert_eq!(dry_runs(&sim).await, before, "a denied propose sends nothing to Fabric");
    assert_eq!(creates(&sim, "connections").await, 1);

    // every decision is audited with the policies that decided, the principal and the hash
    let decisions: Vec<Value> = server
        .audit_entries()
        .into_iter()
        .filter(|e| e["event"].is_null())
        .flat_map(|e| e["policy_decisions"].as_array().cloned().unwrap_or_default())
        .collect();
    let phases: Vec<(&str, &str)> =
        decisions.iter().map(|d| (d["phase"].as_str().unwrap(), d["decision"].as_str().unwrap())).collect();
    // the approval phase twice: when the person is asked, and again at the create, just before
    // it is sent (what a freeze window that begins in between is judged by)
    assert_eq!(
        phases,
        [
            ("dry_run", "allow"),
            ("approval", "allow"),
            ("approval", "allow"),
            ("dry_run", "deny"),
            ("dry_run", "deny"),
            ("dry_run", "deny")
        ]
    );
    assert_eq!(decisions[0]["policies"], json!(["our-metros-only"]));
    assert_eq!(decisions[0]["request_sha256"], p["request_sha256"]);
    assert_eq!(decisions[3]["policies"], json!(["at-most-1-gbps"]));
    assert!(decisions.iter().all(|d| d["principal"] == "local" && d["policy_sha256"].as_str().unwrap().len() == 64));
    server.stop().await;
}

#[tokio::test]
async fn a_body_without_a_metro_code_cannot_slip_past_a_metro_rule() {
    let path = policy_file(
        r#"@id("dc-only") permit (principal, action, resource) when { ["DC"].containsAll(resource.metros) };"#,
    );
    let args = ["--toolsets", "all,mutate", "--policy", path.to_str().unwrap()];
    let server = Launch::serve().args(&args).client(TestClient::accepting()).stdio().await;
    let sim = embedded_sim_url(&server).await;
    // ports only: the host learns their metros from Fabric (DC-PRI-01 and DC-SEC-01 are in DC)
    server.ok("fabric_propose_change", connection("dc-to-dc", 1000, 1)).await;
    let before = dry_runs(&sim).await;
    let err = server.refused("fabric_propose_change", connection("dc-to-sv", 1000, 3)).await;
    denied_by(&err, "no policy of the operator's set permits it");
    assert_eq!(dry_runs(&sim).await, before);
    let denied = server.audit_entries().into_iter().rfind(|e| e["tool"] == "fabric_propose_change").unwrap();
    assert_eq!(denied["error_kind"], "policy_denied");
    assert_eq!(denied["policy_decisions"][0]["decision"], "deny", "{denied}");
    server.stop().await;
}

#[tokio::test]
async fn http_principals_sighup_and_the_approval_phase() {
    let path = policy_file(&readme_policy());
    let tokens = token_file(&[("alice", ALICE), ("netops", NETOPS)]);
    let args =
        ["--toolsets", "all,mutate", "--auth-token-file", tokens.to_str().unwrap(), "--policy", path.to_str().unwrap()];
    let server = Launch::serve().args(&args).http("127.0.0.1:0").await;
    let alice = server.connect(Some(ALICE), TestClient::accepting(), false).await;
    let netops = server.connect(Some(NETOPS), TestClient::accepting(), false).await;
    let call = async |client: &Client, args: Value| structured(&call_on(client, "fabric_propose_change", args).await);

    // the principal is the token's label
    denied_by(&call(&alice, network()).await["error"], "networks-only-for-netops");
    assert!(call(&netops, network()).await["confirm_token"].is_string());

    // SIGHUP: a permissive set takes over; a broken one leaves it in force
    denied_by(&call(&alice, connection("fast", 5000, 3)).await["error"], "at-most-1-gbps");
    std::fs::write(&path, r#"@id("anything") permit (principal, action, resource);"#).unwrap();
    server.hangup();
    wait_until("the reread", async || server.stderr_text().contains("policy reread")).await;
    let fast = call(&alice, connection("fast", 5000, 3)).await;
    assert!(fast["confirm_token"].is_string(), "{fast}");
    std::fs::write(&path, r#"permit (principal, action, resource) when { resource.nonsense };"#).unwrap();
    server.hangup();
    wait_until("the refusal", async || server.stderr_text().contains("the previous set stays")).await;
    assert!(server.stderr_text().contains("nonsense"), "the log names the problem");
    let again = call(&alice, connection("fast-again", 5000, 3)).await;
    assert!(again["confirm_token"].is_string(), "the last good set stays: {again}");

    // the approval phase judges the same bytes again: the team's set, back, refuses the confirm
    std::fs::write(&path, readme_policy()).unwrap();
    server.hangup();
    wait_until("the second reread", async || server.stderr_text().matches("policy reread").count() >= 2).await;
    let r = call_on(&alice, "fabric_confirm_change", json!({"confirm_token": fast["confirm_token"]})).await;
    let refused = structured(&r);
    assert_eq!(refused["error"]["kind"], "confirmation_refused", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("at-most-1-gbps"), "{refused}");
    assert_eq!(creates(&server.sim, "connections").await, 0);
    let confirm = server.audit_entries().into_iter().rfind(|e| e["tool"] == "fabric_confirm_change").unwrap();
    let last = &confirm["policy_decisions"][0];
    assert_eq!((last["phase"].as_str(), last["principal"].as_str()), (Some("approval"), Some("alice")), "{confirm}");
    server.terminate();
}

/// The first cedar block of docs/policy.md after `heading`, as written.
pub(crate) fn docs_block(heading: &str) -> String {
    let docs = include_str!("../../../docs/policy.md");
    let section = &docs[docs.find(heading).unwrap_or_else(|| panic!("{heading} in docs/policy.md"))..];
    let start = section.find("```cedar\n").expect("a cedar block") + "```cedar\n".len();
    section[start..start + section[start..].find("```").unwrap()].to_string()
}

/// docs/policy.md's cost rule, as written, beside a rule that permits everything.
fn cost_policy() -> String {
    format!("@id(\"anything\") permit (principal, action, resource);\n{}", docs_block("**Cost.**"))
}

/// The price the host itself read from Fabric is a fact a rule names a sum with, and an
/// unknown price is refused like a price too high, never read as zero.
#[tokio::test]
async fn the_documented_cost_rule_reads_the_price_the_host_resolved_and_refuses_an_unknown_one() {
    let path = policy_file(&cost_policy());
    let (ok, stdout, stderr) = run_to_exit(&["policy", "check", path.to_str().unwrap()], &[]).await;
    assert!(ok && stdout.contains("2 policies, valid against the EquinixMcp schema"), "{stdout}{stderr}");
    let args = ["--toolsets", "all,mutate", "--policy", path.to_str().unwrap()];
    let server = Launch::serve().args(&args).client(TestClient::accepting()).stdio().await;

    let connection = |name: &str, bandwidth: u64, vlan: u64| {
        let mut c = connection(name, bandwidth, 3);
        for side in ["aSide", "zSide"] {
            c["spec"][side]["accessPoint"]["linkProtocol"]["vlanTag"] = json!(vlan);
        }
        c
    };
    // 1 Gbps lists at USD 300.00 a month: put before the person, created
    let p = server.ok("fabric_propose_change", connection("cheap", 1000, 1501)).await;
    let done = server.ok("fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    assert_eq!(done["executed"], true, "{done}");
    // 5 Gbps lists at USD 800.00: the dry run passes (nothing is priced before it), the
    // approval phase refuses it, naming the rule and the price it read
    let dear = server.ok("fabric_propose_change", connection("dear", 5000, 1502)).await;
    let refused = server.refused("fabric_confirm_change", json!({"confirm_token": dear["confirm_token"]})).await;
    assert_eq!(refused["kind"], "confirmation_refused", "{refused}");
    let said = refused["message"].as_str().unwrap();
    assert!(said.contains("at-most-usd-500-a-month") && said.contains("USD 800.00 a month"), "{said}");
    // 300 Mbps is on no rate card row: no known price, refused as well
    let unpriced = server.ok("fabric_propose_change", connection("unpriced", 300, 1503)).await;
    let refused = server.refused("fabric_confirm_change", json!({"confirm_token": unpriced["confirm_token"]})).await;
    let said = refused["message"].as_str().unwrap();
    assert!(said.contains("at-most-usd-500-a-month") && said.contains("no known price"), "{said}");
    let sim = embedded_sim_url(&server).await;
    assert_eq!(creates(&sim, "connections").await, 1, "only the one the rule let through");
    server.stop().await;
}

/// The next Friday's 17:55 UTC (from tomorrow on) that no year-end freeze covers, in ms.
fn next_friday_before_the_weekend_freeze() -> u64 {
    use equinix_mcp::policy::Moment;
    const DAY: u64 = 86_400_000;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let mut day = now / DAY * DAY;
    loop {
        day += DAY;
        let m = Moment::at(day);
        let year_end = (m.month == 12 && m.day >= 20) || (m.month == 1 && m.day <= 4);
        if m.weekday == 5 && !year_end {
            return day + (17 * 60 + 55) * 60_000;
        }
    }
}

/// Docs/policy.md's freeze set, as written. A change approved on the page at 17:55 on a
/// Friday and collected at 18:01 is not created inside the weekend freeze: the agent and the page
/// are told which rule stopped it and that the policy allows it again on Monday at 06:00.
#[tokio::test]
async fn a_change_approved_before_a_freeze_is_not_created_inside_it_and_says_when_it_may_be() {
    use crate::local_approvers::{confirm, enrolled, pending};
    let freeze = docs_block("**Time.**");
    let path = policy_file(&format!("@id(\"anything\") permit (principal, action, resource);\n{freeze}"));
    let file = fresh_approvers_path();
    let chrome = crate::harness::webdriver::Chrome::start().await;
    chrome.add_authenticator().await;
    enrolled(&chrome, &file, "dana").await;
    let server = Launch::serve()
        .args(&["--toolsets", "metros,mutate", "--policy", path.to_str().unwrap()])
        .env(&[("EQUINIX_MCP_APPROVERS_FILE", file.to_str().unwrap())])
        .stdio()
        .await;
    let sim = embedded_sim_url(&server).await;
    // the server's clock to Friday 17:55 UTC, five minutes before the freeze
    let friday = next_friday_before_the_weekend_freeze();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    advance_clock(&sim, friday - now).await;
    let (token, link) = pending(&server.client, "before-the-freeze", 1601).await;
    chrome.goto(&link).await;
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
    // collected at 18:01: inside the freeze
    advance_clock(&sim, 6 * 60 * 1000).await;
    let late = confirm(&server.client, &token).await;
    assert_ne!(late["executed"], true, "{late}");
    let monday = equinix_mcp::audit::rfc3339(friday + (2 * 24 + 12) * 3600 * 1000 + 5 * 60 * 1000);
    let said = late.to_string();
    assert!(said.contains("weekend-freeze") && said.contains(&format!("allows it again from {monday}")), "{late}");
    chrome.goto(&link).await;
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.contains("nothing was sent") && outcome.contains("weekend-freeze"), "{outcome}");
    assert_eq!(creates(&sim, "connections").await, 0, "nothing created inside the freeze");
    // the decision at 18:01 is in the audit log, with the rule that made it
    let confirm_line = server.audit_entries().into_iter().rfind(|e| e["tool"] == "fabric_confirm_change").unwrap();
    let last = confirm_line["policy_decisions"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["decision"].as_str(), last["policies"][0].as_str()),
        (Some("deny"), Some("weekend-freeze")),
        "{last}"
    );
}

/// `policy explain` says, before anyone proposes, what the documented sets decide of
/// a request at a given time and price, which policy decides, and when a freeze ends.
#[tokio::test]
async fn policy_explain_says_what_decides_a_request_and_when_a_freeze_ends() {
    let freeze = docs_block("**Time.**");
    let cost = cost_policy();
    let set = policy_file(&format!("{cost}\n{freeze}"));
    let request = fresh_audit_path().with_extension("json");
    std::fs::write(&request, connection("explained", 1000, 3).to_string()).unwrap();
    let explain = async |extra: &[&str]| {
        let mut args = vec!["policy", "explain", set.to_str().unwrap(), "--request", request.to_str().unwrap()];
        args.extend_from_slice(extra);
        run_to_exit(&args, &[]).await
    };
    // a Wednesday noon at USD 300.00 a month: allowed in both phases, by the rule that permits all
    let (ok, out, err) = explain(&["--at", "2026-12-09T12:00:00Z", "--monthly-price-cents", "30000"]).await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("at the dry run (propose): allowed, by \"anything\""), "{out}");
    assert!(out.contains("when a person is asked (form): allowed"), "{out}");
    assert!(out.contains("not read: the metro of"), "offline, it says what it could not read: {out}");
    // unpriced: the dry run passes, the approval is refused by the cost rule
    let (ok, out, _) = explain(&["--at", "2026-12-09T12:00:00Z"]).await;
    assert!(
        !ok && out.contains("when a person is asked (form): denied: forbidden by \"at-most-usd-500-a-month\""),
        "{out}"
    );
    assert!(out.contains("no known price"), "{out}");
    // Friday 18:30: both phases inside the weekend freeze, and when it ends
    let (ok, out, _) = explain(&["--at", "2026-12-11T18:30:00Z", "--monthly-price-cents", "30000"]).await;
    assert!(!ok, "{out}");
    assert!(
        out.contains(
            "at the dry run (propose): denied: forbidden by \"weekend-freeze\"; allowed again from 2026-12-14T06:00:00Z"
        ),
        "{out}"
    );
    // what cannot be read is named, and nothing is guessed
    let (ok, _, err) = explain(&["--at", "yesterday"]).await;
    assert!(!ok && err.contains("--at \"yesterday\": not an RFC 3339 time"), "{err}");
}

#[tokio::test]
async fn policy_check_names_the_policy_and_the_problem() {
    let typo =
        policy_file(r#"@id("fast-links") forbid (principal, action, resource) when { resource.bandwith_mbps > 1 };"#);
    let (ok, _, stderr) = run_to_exit(&["policy", "check", typo.to_str().unwrap()], &[]).await;
    assert!(!ok, "a set naming an unknown attribute fails");
    assert!(
        stderr.contains("fast-links") && stderr.contains("bandwith_mbps") && stderr.contains("bandwidth_mbps"),
        "{stderr}"
    );
    // behind `has`, the same typo would make a policy that never applies: refused as well
    let hidden = policy_file(
        r#"@id("hidden") forbid (principal, action, resource) when { resource has bandwith_mbps && resource.bandwith_mbps > 1 };"#,
    );
    let (ok, _, stderr) = run_to_exit(&["policy", "check", hidden.to_str().unwrap()], &[]).await;
    assert!(!ok && stderr.contains("hidden") && stderr.contains("impossible"), "{stderr}");
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--policy", typo.to_str().unwrap()], &[]).await;
    assert!(!ok && stderr.contains("fast-links"), "serve refuses it too: {stderr}");
    let (ok, schema, _) = run_to_exit(&["policy", "schema"], &[]).await;
    assert!(ok && schema.contains("namespace EquinixMcp") && schema.contains("action connection_create"), "{schema}");
    let (ok, inspected, _) =
        run_to_exit(&["inspect", "--policy", policy_file(&readme_policy()).to_str().unwrap()], &[]).await;
    assert!(ok && inspected.contains("4 policies, sha256 "), "{inspected}");
}

/// A swapped component meets the same policy on the bytes it sends: a bandwidth written as text
/// is refused (Fabric's parser would read it as a number), one above the limit is denied, and
/// neither reaches Fabric.
#[tokio::test]
async fn a_hostile_component_meets_the_policy_on_its_bytes() {
    let path = policy_file(&readme_policy());
    let probe = probe_component();
    let args =
        ["--component", probe.to_str().unwrap(), "--toolsets", "probe,echo,mutate", "--policy", path.to_str().unwrap()];
    let server = Launch::serve().args(&args).client(TestClient::accepting()).stdio().await;
    let sim = embedded_sim_url(&server).await;
    let spec = connection_spec("hostile", 1001).to_string();
    for (raw, why) in [
        (spec.replace(r#""bandwidth":1000"#, r#""bandwidth":"10000""#), "must be an integer, not a string"),
        (spec.replace(r#""bandwidth":1000"#, r#""bandwidth":10000"#), "at-most-1-gbps"),
    ] {
        let err = server.refused("rogue_propose", json!({"raw": raw})).await;
        assert!(err["message"].as_str().unwrap().contains(why), "{why}: {err}");
    }
    assert_eq!(dry_runs(&sim).await, 0, "nothing reached Fabric");
    let ok = server.ok("rogue_propose", json!({"raw": spec})).await;
    assert!(ok["token"].is_string(), "{ok}");
    server.stop().await;
}
