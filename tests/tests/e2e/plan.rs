//! The person reads a plan the host resolved itself, before the bytes: the ports, the
//! metros, the price and the checks, each value saying where it came from; a component that lies
//! in its own words leaves the plan true; what cannot be read says so without hiding the bytes;
//! the plan's hash is bound to the answer and kept in the audit log, which `audit verify` checks.

use equinix_fabric_sim::SimConfig;
use serde_json::json;

use super::local_origin::relink;
use super::passkeys::events;
use crate::harness::*;
use crate::hostile::rogue;

/// `text`'s plan section (from its heading to the request's).
fn plan_of(text: &str) -> &str {
    let start = text.find("The plan, resolved by equinix-mcp").unwrap_or_else(|| panic!("no plan in:\n{text}"));
    let end = text.find("The request, rendered by equinix-mcp").unwrap_or_else(|| panic!("no request in:\n{text}"));
    assert!(start < end, "the plan comes first:\n{text}");
    &text[start..end]
}

async fn form_server(sim: &equinix_fabric_sim::SimHandle, client: &TestClient) -> Server {
    Launch::serve().against(sim).args(&["--toolsets", "metros,mutate"]).client(client.clone()).stdio().await
}

#[tokio::test]
async fn the_form_shows_the_hosts_plan_first_and_the_audit_log_keeps_what_was_shown() {
    let sim = sim(SimConfig::default()).await;
    let client = TestClient::accepting();
    let server = form_server(&sim, &client).await;
    let proposal = propose_on(&server.client, "plan-shown", 1201).await;
    let done = structured(
        &call_on(&server.client, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await,
    );
    assert_eq!(done["executed"], true, "{done}");
    let texts = client.prompt_texts();
    let text = &texts[0];
    let plan = plan_of(text);
    for shown in [
        "+ create connection (billable): EVPL_VC, 1000 Mbps, USD 300.00 per month; named \"plan-shown\"",
        "A side: port \"DC-PRI-01\" (…306a5c00a600) in DC (Ashburn), IBX DC1, 10000 Mbps (9000 Mbps available), ACTIVE, \
         DOT1Q   [Fabric: GET /fabric/v4/ports/",
        "Z side: port \"SV-PRI-01\"",
        "A side VLAN: DOT1Q VLAN 1201   [the exact bytes]",
        "price: USD 300.00 per month + USD 0.00 one-time, term 1 month(s)   [Fabric: POST /fabric/v4/prices/search",
        "notifications: ALL to \"noc@example.com\"   [the exact bytes]",
        "ok: A side port \"DC-PRI-01\" (…306a5c00a600) is operationally UP",
        "ok: 1000 Mbps fits the 9000 Mbps the A side port has available",
        "ok: A side VLAN 1201 is free on port \"DC-PRI-01\"",
        "ok: no other connection has the name \"plan-shown\"",
        "ok: Z side port \"SV-PRI-01\" (…306a5c00a610) is ACTIVE",
    ] {
        assert!(plan.contains(shown), "the plan lacks {shown:?}:\n{plan}");
    }
    assert!(!plan.contains("FAILED"), "{plan}");
    let sha = plan.lines().find_map(|l| l.strip_prefix("plan_sha256: ")).expect("the plan names its hash").to_string();

    // the approval's record keeps the plan whole and its hash, which verify checks
    let entries = server.audit_entries();
    let minted = events(&entries, "approval_minted")[0].clone();
    assert_eq!(minted["plan_sha256"], sha, "{minted}");
    assert_eq!(
        minted["plan"]["summary"],
        "+ create connection (billable): EVPL_VC, 1000 Mbps, USD 300.00 per month; named \"plan-shown\""
    );
    for event in ["create_sending", "create_outcome"] {
        assert_eq!(events(&entries, event)[0]["plan_sha256"], sha, "{event}");
    }
    let log = server.audit_log.clone();
    let (ok, out, err) = run_to_exit(&["audit", "verify", log.to_str().unwrap()], &[]).await;
    assert!(ok && out.contains("1 plans shown to a person match"), "{out}{err}");
    // the plan edited in a copy whose chain was made whole again: refused by its hash
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let at = lines.iter().position(|l| l.contains("\"event\":\"approval_minted\"")).unwrap();
    lines[at] = lines[at].replacen("USD 300.00 per month", "USD 3.00 per month", 1);
    relink(&mut lines);
    let dir = tempfile::tempdir().unwrap();
    let edited = dir.path().join("edited.jsonl");
    std::fs::write(&edited, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let (ok, out, _) = run_to_exit(&["audit", "verify", edited.to_str().unwrap()], &[]).await;
    assert!(!ok && out.contains("the plan or its hash was edited"), "{out}");
}

/// A component that says the create is harmless and free: the host's plan above its words says
/// what the bytes will do and what Fabric prices it at.
#[tokio::test]
async fn the_plan_tells_the_truth_whatever_the_component_says() {
    let r = rogue().await;
    let body = connection_spec("lied-about", 1202);
    let (_, proposed) = r.call("rogue_propose", json!({"body": body})).await;
    let token = proposed["token"].as_str().unwrap_or_else(|| panic!("{proposed}")).to_string();
    let lie = json!([["price", "USD 0.00/month"], ["A side", "a harmless test port"]]);
    let (_, asked) = r.call("rogue_confirm", json!({"token": token, "body": body, "fields": lie})).await;
    assert_eq!(asked["status"], "Status::Accepted", "{asked}");
    let texts = r.client.prompt_texts();
    let plan = plan_of(&texts[0]);
    assert!(plan.contains("price: USD 300.00 per month"), "{plan}");
    assert!(plan.contains("A side: port \"DC-PRI-01\""), "{plan}");
    assert!(!plan.contains("harmless") && !plan.contains("USD 0.00/month"), "{plan}");
    let words = &texts[0][texts[0].find("From the component").unwrap()..];
    assert!(words.contains("| price: USD 0.00/month"), "the component's words stay below, marked: {words}");
    r.ends_with(1).await;
}

/// Fabric errs on one read and is slow on another, and a bandwidth has no rate-card row: the plan
/// says which value it could not resolve and why, the propose still succeeds, the bytes are whole.
#[tokio::test]
async fn what_fabric_cannot_answer_is_said_and_never_hides_the_bytes() {
    let sim = sim(SimConfig::default()).await;
    let url = sim.base_url();
    inject(&url, json!({"route": format!("GET /fabric/v4/ports/{PORT_A}"), "status": 500})).await;
    inject(&url, json!({"route": "GET /fabric/v4/metros/SV", "mode": "stall", "stall_ms": 4000})).await;
    // the Z-side port answers with another port's object
    let other = json!({"uuid": "ffffffff-0000-4000-8000-00000000beef", "name": "NOT-THE-ONE", "state": "ACTIVE"});
    inject(&url, json!({"route": format!("GET /fabric/v4/ports/{PORT_Z}"), "status": 200, "body": other.to_string()}))
        .await;
    let client = TestClient::accepting();
    let server = form_server(&sim, &client).await;
    let mut spec = connection_spec("half-known", 1203);
    spec["bandwidth"] = json!(300);
    spec["zSide"]["accessPoint"]["location"] = json!({"metroCode": "SV"});
    let r = call_on(&server.client, "fabric_propose_change", json!({"change_type": "connection_create", "spec": spec}))
        .await;
    assert!(!is_error(&r), "{:?}", r.structured_content);
    let token = structured(&r)["confirm_token"].clone();
    let _ = call_on(&server.client, "fabric_confirm_change", json!({"confirm_token": token})).await;
    let texts = client.prompt_texts();
    let plan = plan_of(&texts[0]);
    assert!(plan.contains("A side: …306a5c00a600 not resolved: Fabric answered HTTP 500"), "{plan}");
    assert!(
        plan.contains("Z side: …306a5c00a610 not resolved: Fabric answered about another object (…00000000beef)"),
        "{plan}"
    );
    assert!(!plan.contains("NOT-THE-ONE"), "{plan}");
    assert!(plan.contains("Z side metro: SV (its name not resolved: Fabric did not answer within 3 s)"), "{plan}");
    assert!(plan.contains("price: no rate-card row matched this connection"), "{plan}");
    assert!(
        plan.contains("not checked: A side VLAN 1203 is free") || plan.contains("ok: A side VLAN 1203 is free"),
        "{plan}"
    );
    assert!(texts[0].contains(&format!("body.aSide.accessPoint.port.uuid: \"{PORT_A}\"")), "the bytes, whole");
}

/// A second connection of the same name: the plan's check says so before anyone approves.
#[tokio::test]
async fn a_name_already_taken_fails_its_check_in_the_plan() {
    let sim = sim(SimConfig::default()).await;
    let client = TestClient::accepting();
    let server = form_server(&sim, &client).await;
    for vlan in [1204, 1205] {
        let p = propose_on(&server.client, "twice-named", vlan).await;
        let _ = call_on(&server.client, "fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    }
    let texts = client.prompt_texts();
    assert!(plan_of(&texts[0]).contains("ok: no other connection has the name \"twice-named\""));
    let second = plan_of(&texts[1]);
    assert!(second.contains("FAILED: no other connection has the name \"twice-named\":"), "{second}");
}

/// The propose result the model reads stays within its 1.5 KB budget, whatever road its confirm
/// takes (the plan is for the person, never in the model's result).
#[tokio::test]
async fn the_propose_result_the_model_reads_stays_within_its_budget() {
    // the README walk-through's spec
    let spec = json!({"type": "EVPL_VC", "name": "to-aws", "bandwidth": 500,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": PORT_A}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 102}}},
        "zSide": {"accessPoint": {"type": "SP", "profile": {"type": "L2_PROFILE", "uuid": "9f4b3a7e-1c2d-4e5f-8a9b-0c1d2e3f4a01"},
            "location": {"metroCode": "DC"}, "authenticationKey": "123456789012", "sellerRegion": "us-east-1"}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]});
    let args = json!({"change_type": "connection_create", "spec": spec});
    // a client with the form, and one without as Claude Desktop starts it (the longest next step:
    // nobody enrolled yet, the enrollment command with this binary's path)
    let account = Account::fresh();
    let documented = ["serve", "--fabric-sim", "--toolsets", "all,mutate"];
    let with_form =
        Launch::serve().args(&["--toolsets", "metros,mutate"]).client(TestClient::accepting()).stdio().await;
    let without = account.serve(&documented, TestClient::plain()).await;
    for server in [&with_form, &without] {
        let r = call_on(&server.client, "fabric_propose_change", args.clone()).await;
        let text = r.content[0].as_text().unwrap().text.clone();
        assert!(text.len() <= 1536, "{} bytes: {text}", text.len());
        assert!(!text.contains("plan_sha256") && !text.contains("The plan"), "{text}");
    }
}

/// On a local approver's page in Chromium the plan comes first, the passkey signs it beside the
/// request (its hash is in the challenge), and a log whose decision names another plan hash fails
/// `audit verify --passkeys` even with its chain made whole.
#[tokio::test]
async fn the_page_shows_the_plan_first_and_the_passkey_signs_what_was_shown() {
    use super::local_approvers::{Exported, confirm, dana_at_her_server, pending};
    let (_sim, file, chrome, server) = dana_at_her_server().await;
    let (token, link) = pending(&server.client, "plan-on-the-page", 1207).await;
    chrome.goto(&link).await;
    let summary = chrome.text("#plan-summary").await;
    assert_eq!(
        summary,
        "+ create connection (billable): EVPL_VC, 1000 Mbps, USD 300.00 per month; named \"plan-on-the-page\""
    );
    let rows = chrome.text("#plan").await;
    assert!(rows.contains("\"DC-PRI-01\"") && rows.contains("USD 300.00 per month"), "{rows}");
    assert!(chrome.text("#checks").await.contains("VLAN 1207 is free"));
    let page = chrome.run("return document.body.innerText;").await.as_str().unwrap().to_string();
    let (plan_at, request_at) =
        (page.find("What this create will do").unwrap(), page.find("The exact request").unwrap());
    assert!(plan_at < request_at, "the plan first, the exact bytes below it:\n{page}");
    let shown_sha = chrome.text("#plan-sha256").await.trim_start_matches("plan_sha256: ").to_string();
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by local:dana"));
    assert_eq!(confirm(&server.client, &token).await["executed"], true);

    let entries = server.audit_entries();
    let decision = events(&entries, "page_decision")[0].clone();
    assert_eq!(decision["plan_sha256"], shown_sha, "{decision}");
    assert_eq!(events(&entries, "approval_minted")[0]["plan_sha256"], shown_sha);
    let exported = Exported::of(&file).await;
    let (ok, out, err) = exported.verify(&server.audit_log).await;
    assert!(
        ok && out.contains("1 passkey approvals verify") && out.contains("plans shown to a person match"),
        "{out}{err}"
    );
    // the decision's plan and its hash swapped for another plan's, the chain rebuilt: the
    // signature was over the plan shown, so it no longer verifies
    let edited = exported.edited(&server.audit_log, |line| {
        let start = line.find("\"value\":\"").unwrap() + 9;
        let end = start + line[start..].find("\",\"from\"").unwrap();
        let edited = format!("{}port \\\"SOMEWHERE-HARMLESS\\\"{}", &line[..start], &line[end..]);
        let parsed: serde_json::Value = serde_json::from_str(&edited).unwrap();
        let other: equinix_mcp::plan::Plan = serde_json::from_value(parsed["plan"].clone()).unwrap();
        assert!(other.lines[0].value.contains("SOMEWHERE-HARMLESS"));
        edited.replace(&shown_sha, &other.sha256())
    });
    let (ok, out, _) = exported.verify(&edited).await;
    assert!(!ok && out.contains("BROKEN") && out.contains("another request"), "{out}");
}

/// The 2026-07-28 round's form opens with the plan too, and its sealed answer is bound to it.
#[tokio::test]
async fn the_stateless_rounds_form_shows_the_plan_first() {
    use crate::harness::rounds::{accept, retry};
    let sim = sim(SimConfig::default()).await;
    let server = Launch::serve()
        .against(&sim)
        .args(&["--toolsets", "metros,mutate"])
        .client(TestClient::by_hand())
        .stateless()
        .stdio()
        .await;
    let proposal = propose_on(&server.client, "plan-stateless", 1208).await;
    let token = proposal["confirm_token"].as_str().unwrap();
    let sha = proposal["request_sha256"].as_str().unwrap();
    let r = server.client.call_tool_once(confirm_request(token)).await.unwrap();
    let rmcp::model::CallToolResponse::InputRequired(ir) = r else { panic!("{r:?}") };
    let requests = serde_json::to_value(ir.input_requests.as_ref().unwrap()).unwrap();
    let message = text_containing(&requests, "The plan, resolved").unwrap_or_else(|| panic!("{requests}"));
    assert!(plan_of(&message).contains("A side: port \"DC-PRI-01\""), "{message}");
    assert!(message.contains(sha), "and the bytes' hash below it");
    let state = ir.request_state.expect("a sealed requestState");
    let done = retry(&server.client, token, &state, accept()).await;
    assert_eq!(structured(&done)["executed"], true, "{:?}", done.structured_content);
}

/// What the simulator answers for a port that went down and a VLAN another connection took
/// after the dry run (both through its fault knob): the plan's checks fail, in words, before
/// anyone approves, and Fabric's own checks still stand behind them at the create.
#[tokio::test]
async fn a_port_that_is_down_and_a_vlan_in_use_fail_their_checks_before_anyone_approves() {
    let sim = sim(SimConfig::default()).await;
    let url = sim.base_url();
    let down = json!({"uuid": PORT_A, "name": "DC-PRI-01", "state": "INACTIVE", "bandwidth": 10000, "availableBandwidth": 0,
                      "location": {"metroCode": "DC", "ibx": "DC1"}, "encapsulation": {"type": "DOT1Q"}});
    inject(&url, json!({"route": format!("GET /fabric/v4/ports/{PORT_A}"), "status": 200, "body": down.to_string()}))
        .await;
    let taken = json!({"pagination": {"offset": 0, "limit": 100, "total": 1},
                       "data": [{"type": "DOT1Q", "vlanTag": 1209, "state": "RESERVED",
                                 "asset": {"uuid": "11111111-2222-4333-8444-00000000f00d", "type": "EVPL_VC"}}]});
    let vlans = format!("GET /fabric/v4/ports/{PORT_Z}/linkProtocols");
    inject(&url, json!({"route": vlans, "status": 200, "body": taken.to_string()})).await;
    let client = TestClient::answering(Answer::Decline);
    let server = form_server(&sim, &client).await;
    let p = propose_on(&server.client, "plan-checked", 1209).await;
    let _ = call_on(&server.client, "fabric_confirm_change", json!({"confirm_token": p["confirm_token"]})).await;
    let texts = client.prompt_texts();
    let plan = plan_of(&texts[0]);
    assert!(plan.contains("FAILED: A side port \"DC-PRI-01\" (…306a5c00a600) is ACTIVE: it is INACTIVE"), "{plan}");
    assert!(plan.contains("FAILED: 1000 Mbps fits the 0 Mbps the A side port has available"), "{plan}");
    assert!(
        plan.contains("FAILED: Z side VLAN 1209 is free on port \"SV-PRI-01\"")
            && plan.contains("held by …00000000f00d"),
        "{plan}"
    );
    assert_eq!(connection_creates(&sim), 0, "declined: nothing created");
}

/// The first string in `v` (at any depth) that contains `needle`.
fn text_containing(v: &serde_json::Value, needle: &str) -> Option<String> {
    match v {
        serde_json::Value::String(s) if s.contains(needle) => Some(s.clone()),
        serde_json::Value::Array(items) => items.iter().find_map(|i| text_containing(i, needle)),
        serde_json::Value::Object(map) => map.values().find_map(|i| text_containing(i, needle)),
        _ => None,
    }
}

/// POST requests `sim` saw to `path` with `dryRun=true`.
fn dry_runs(sim: &equinix_fabric_sim::SimHandle, path: &str) -> usize {
    sim.stats().requests.iter().filter(|r| r.method == "POST" && r.path == path && r.query.contains("dryRun")).count()
}

/// A component that sends a bandwidth as a JSON string (which would drop the price and both fit
/// checks from the plan without a word): the host refuses it at propose, naming the member, before
/// any dry run; and the simulator, asked directly, refuses it as Fabric does.
#[tokio::test]
async fn a_wrongly_typed_member_is_refused_at_propose_before_any_dry_run_and_by_the_simulator() {
    let r = rogue().await;
    let mut body = connection_spec("typed-wrong", 1210);
    body["bandwidth"] = json!("1000");
    let (err, out) = r.call("rogue_propose", json!({"body": body})).await;
    assert!(err, "{out}");
    let said = out.to_string();
    assert!(
        said.contains("`/bandwidth` must be an integer, not a string") && said.contains("no dry run was sent"),
        "the refusal names the member: {said}"
    );
    assert_eq!(dry_runs(&r.sim, "/fabric/v4/connections"), 0, "nothing reached Fabric");
    assert!(r.client.prompt_texts().is_empty(), "nobody was asked");

    // the simulator, as Fabric: 400, its error array, the member named in additionalInfo
    let token = http()
        .post(format!("{}/oauth2/v1/token", r.sim.base_url()))
        .json(&json!({"grant_type": "client_credentials", "client_id": equinix_fabric_sim::SIM_CLIENT_ID,
                      "client_secret": equinix_fabric_sim::SIM_CLIENT_SECRET}))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap()["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    for (pointer, value) in [("/bandwidth", json!("1000")), ("/aSide/accessPoint/linkProtocol/vlanTag", json!("1210"))]
    {
        let mut body = connection_spec("typed-wrong", 1210);
        *body.pointer_mut(pointer).unwrap() = value;
        let answer = http()
            .post(format!("{}/fabric/v4/connections?dryRun=true", r.sim.base_url()))
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 400);
        let errors: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(errors[0]["errorCode"], "EQ-3142501", "{errors}");
        assert_eq!(errors[0]["additionalInfo"][0]["property"], pointer, "{errors}");
        assert_eq!(errors[0]["additionalInfo"][0]["reason"], "must be an integer, not a string", "{errors}");
    }
    r.ends_with(0).await;
}

/// The simulator keeps what each create uses of a port: a second connection that does not fit is
/// refused as Fabric refuses it, and a plan read after the first create says how little is left;
/// an A-side metro the port is not in is flagged, and the port's metro is named as Fabric names it.
#[tokio::test]
async fn the_checks_read_figures_that_move_and_a_metro_the_port_is_not_in_is_flagged() {
    let sim = sim(SimConfig::default()).await;
    let client = TestClient::accepting();
    let server = form_server(&sim, &client).await;
    // SV-SEC-01 has 1000 Mbps: one 1 Gbps connection fills it
    let spec = |name: &str, vlan: u64| {
        let mut spec = connection_spec(name, vlan);
        spec["aSide"]["accessPoint"]["port"]["uuid"] = json!(equinix_fabric_sim::PORTS[1].0);
        spec["zSide"]["accessPoint"]["port"]["uuid"] = json!(equinix_fabric_sim::PORTS[4].0);
        spec
    };
    let args = |spec: serde_json::Value| json!({"change_type": "connection_create", "spec": spec});
    let first = call_on(&server.client, "fabric_propose_change", args(spec("fills-the-port", 1211))).await;
    let second = call_on(&server.client, "fabric_propose_change", args(spec("no-room-left", 1212))).await;
    assert!(!is_error(&first) && !is_error(&second), "both fit while nothing is created yet");
    let done =
        call_on(&server.client, "fabric_confirm_change", json!({"confirm_token": structured(&first)["confirm_token"]}))
            .await;
    assert_eq!(structured(&done)["executed"], true);
    // the second was validated before the first was created: Fabric's own check refuses it now
    let refused = call_on(
        &server.client,
        "fabric_confirm_change",
        json!({"confirm_token": structured(&second)["confirm_token"]}),
    )
    .await;
    assert_ne!(structured(&refused)["executed"], true, "{:?}", refused.structured_content);
    assert!(refused.structured_content.unwrap().to_string().contains("available bandwidth"));
    assert_eq!(connection_creates(&sim), 1, "the port holds one");
    // and a new proposal for it is refused at its dry run, naming the bandwidth
    let third = call_on(&server.client, "fabric_propose_change", args(spec("still-no-room", 1213))).await;
    assert!(is_error(&third), "{:?}", third.structured_content);
    assert!(third.structured_content.unwrap().to_string().contains("/bandwidth"));

    // even 50 Mbps no longer fits the full port; the same bytes on a port with room are validated,
    // and their plan flags an A-side metro the port is not in
    let mut small = spec("ten-megabits", 1214);
    small["bandwidth"] = json!(50);
    small["aSide"]["accessPoint"]["location"] = json!({"metroCode": "SV"});
    let p = call_on(&server.client, "fabric_propose_change", args(small)).await;
    assert!(is_error(&p), "the full port refuses even 50 Mbps: {:?}", p.structured_content);
    let mut elsewhere = connection_spec("metro-claimed", 1215);
    elsewhere["aSide"]["accessPoint"]["location"] = json!({"metroCode": "SV"});
    let p = call_on(&server.client, "fabric_propose_change", args(elsewhere)).await;
    assert!(!is_error(&p), "{:?}", p.structured_content);
    let _ = call_on(&server.client, "fabric_confirm_change", json!({"confirm_token": structured(&p)["confirm_token"]}))
        .await;
    let texts = client.prompt_texts();
    let plan = plan_of(texts.last().unwrap());
    assert!(
        plan.contains(
            "FAILED: A side metroCode SV in the exact bytes is port \"DC-PRI-01\" (…306a5c00a600)'s own metro: Fabric \
             places the port in DC (Ashburn)"
        ),
        "{plan}"
    );
    assert!(plan.contains("the A side is priced by its port"), "{plan}");
    assert!(plan.contains("Z side: port \"SV-PRI-01\" (…306a5c00a610) in SV (Silicon Valley)"), "{plan}");
}
