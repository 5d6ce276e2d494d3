//! Who must say yes. docs/policy.md's team set, as written, on two replicas sharing one
//! Redis store: a large change needs an engineer of netops and a person of finance; the first
//! approves in Chromium on one replica, the agent is told how far it has come, a second engineer's
//! approval fills nothing and is refused, and the person of finance completes it on the other
//! replica; each approval is a record of its own, and the create names them. A decline after a
//! partial approval ends a request. Then the break-glass freeze on one server whose clock is moved:
//! a change approved before the freeze is not created inside it, and inside it only two of
//! security beside the engineer create one.

use crate::approval_page::{ALL, PROPOSER, confirm, confirm_by_form, connection_at, link_of, replica_args};
use crate::harness::*;
use crate::notifications::{Answers, KEY_NEW, Receiver, private_file};
use crate::policy::{docs_block, policy_file};
use serde_json::{Value, json};

fn team_set() -> String {
    docs_block("A team's set, tested as written")
}

fn freeze_with_break_glass() -> String {
    docs_block("And a weekend freeze that two people of security")
}

/// Proposes `change` and asks for its confirm: the token, and the pending answer.
async fn pending(agent: &Client, change: Value) -> (String, Value) {
    let proposed = call_on(agent, "fabric_propose_change", change).await;
    assert!(!is_error(&proposed), "{:?}", proposed.structured_content);
    let token = structured(&proposed)["confirm_token"].as_str().unwrap().to_string();
    let (_, asked) = confirm(agent, &token).await;
    (token, asked)
}

fn events<'a>(entries: &'a [Value], event: &str) -> Vec<&'a Value> {
    entries.iter().filter(|e| e["event"] == event).collect()
}

/// Decides on `page` (served by either replica) as Chromium submits the page's own form: the
/// replicas answer for one public origin, as behind a load balancer.
async fn decide_on(browser: &Browser, page: &Page, decision: &str, reason: &str) -> Page {
    let csrf = page.attr_after("name=\"csrf\"", "value").unwrap_or_else(|| panic!("no decision form: {}", page.body));
    let fields = [("csrf", csrf.as_str()), ("decision", decision), ("reason", reason)];
    let from_the_page = [("origin", "null"), ("sec-fetch-site", "same-origin")];
    let sent = browser.send(reqwest::Method::POST, &page.url, Some(&fields), &from_the_page).await;
    match sent.status {
        300..400 => browser.get(sent.url.join(&sent.header("location")).unwrap().as_str()).await,
        _ => sent,
    }
}

/// `link` served by the replica at `addr` (both answer for the one public URL, as behind a load
/// balancer; a browser's cookies are the host's, whatever the port).
fn on(link: &str, addr: &str) -> String {
    let mut url = reqwest::Url::parse(link).unwrap();
    let other = reqwest::Url::parse(addr).unwrap();
    url.set_port(other.port()).unwrap();
    url.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_documented_team_set_needs_netops_and_finance_across_replicas_and_a_decline_ends_it() {
    let path = policy_file(&team_set());
    let (ok, out, err) = run_to_exit(&["policy", "check", path.to_str().unwrap()], &[]).await;
    assert!(ok && out.contains("5 policies (2 with @approvals)"), "{out}{err}");
    let provider = OidcProvider::start().await;
    let redis = crate::harness::redis::RedisServer::start();
    let sim = sim(equinix_fabric_sim::SimConfig::default()).await;
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}/mcp");
    let mut args = replica_args(&redis.url(0), &provider.issuer, &public);
    args.extend(["--policy".to_string(), path.to_str().unwrap().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let a = Launch::serve().against(&sim).args(&args).http(&format!("127.0.0.1:{port}")).await;
    let b = Launch::serve().against(&sim).args(&args).http("127.0.0.1:0").await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = b.connect(Some(&token), TestClient::plain(), false).await;

    // 2 Gbps: large, so an engineer of netops and a person of finance
    let (big, asked) = pending(&agent, connection_at("quorum-1", 1701, 2000)).await;
    let link = link_of(&asked);
    assert_eq!(asked["human_confirmation"]["state"], "waiting", "{asked}");
    let chrome = crate::harness::webdriver::Chrome::start().await;
    chrome.sign_in(&link, "alice").await;
    let quorum = chrome.text("#quorum").await;
    assert!(quorum.contains("\"large-or-costly-two-groups\": 1 of netops and 1 of finance"), "{quorum}");
    chrome.click("#approve").await;
    // the list of approvals is on the page once there is one
    chrome.find("#approvals").await;
    let state = chrome.text("#state").await;
    assert!(state.contains("Partly approved: 1 of 2 approvals; waiting for 1 of finance"), "{state}");
    let approvals = chrome.text("#approvals").await;
    assert!(approvals.contains("Approved by you") && approvals.contains("(netops)"), "{approvals}");
    // her inbox lists it as hers to wait on, with how far it has come
    chrome.goto(&format!("http://127.0.0.1:{port}/approve")).await;
    let yours = chrome.text("#yours").await;
    assert!(yours.contains("Partly approved: 1 of 2 approvals"), "{yours}");

    // the agent, on the other replica, is told how far it has come; nothing is sent
    let (_, again) = confirm(&agent, &big).await;
    let said = &again["human_confirmation"];
    assert_eq!((said["state"].as_str(), said["progress"]["approvals"].as_u64()), (Some("partly_approved"), Some(1)));
    assert_eq!(
        (said["progress"]["needed"].as_u64(), said["progress"]["missing"].as_str()),
        (Some(2), Some("1 of finance"))
    );
    assert!(said["progress"]["approved_by"][0]["by"].as_str().unwrap().contains("Alice"), "{again}");
    assert!(again["message"].as_str().unwrap().contains("So far: 1 of 2 approvals: Alice"), "{again}");
    assert_eq!(connection_creates(&sim), 0);

    // a second engineer fills no open place: refused, on either replica, and nothing recorded
    let bob = Browser::default();
    bob.sign_in(&link, "bob").await;
    let page = bob.get(&on(&link, &b.url)).await;
    assert!(page.body.contains("Your approval would not count"), "{}", page.body);
    let refused = decide_on(&bob, &page, "approve", "").await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(refused.body.contains("fills none of the places still open"), "{}", refused.body);

    // the person of finance, on the other replica, makes it whole
    let carol = Browser::default();
    carol.sign_in(&link, "carol").await;
    let page = carol.get(&on(&link, &b.url)).await;
    assert!(page.body.contains("Partly approved") && page.body.contains("Alice"), "{}", page.body);
    let decided = decide_on(&carol, &page, "approve", "within this quarter's budget").await;
    assert!(decided.body.contains("Approved by"), "{}", decided.body);
    let (_, done) = confirm(&agent, &big).await;
    assert_eq!(done["executed"], true, "{done}");
    let approvals = done["page_decision"]["approvals"].as_array().unwrap().clone();
    let by: Vec<&str> = approvals.iter().map(|a| a["by_id"].as_str().unwrap()).collect();
    let (alice_id, carol_id) = (format!("{}#alice", provider.issuer), format!("{}#carol", provider.issuer));
    assert_eq!(by, [alice_id.as_str(), carol_id.as_str()], "{done}");
    assert_eq!(approvals[1]["comment"], "within this quarter's budget");
    assert_eq!(connection_creates(&sim), 1);

    // each approval is its own record, in the log of the replica it was given on; the create names both
    let on_a = a.audit_entries();
    let on_b = b.audit_entries();
    let alices = events(&on_a, "page_decision");
    let carols = events(&on_b, "page_decision");
    assert_eq!((alices.len(), carols.len()), (1, 1), "bob's refused approval was never recorded");
    assert_eq!((alices[0]["approver"].as_str(), carols[0]["approver"].as_str()), (Some(&*alice_id), Some(&*carol_id)));
    assert!(alices[0]["quorum"][1].as_str().unwrap().contains("1 of netops and 1 of finance"), "{}", alices[0]);
    assert_eq!(alices[0]["plan_sha256"], carols[0]["plan_sha256"], "both saw the one plan");
    let minted = events(&on_b, "approval_minted")[0];
    let counted: Vec<&str> =
        minted["approvals"].as_array().unwrap().iter().map(|c| c["decision_id"].as_str().unwrap()).collect();
    assert_eq!(counted, [alices[0]["decision_id"].as_str().unwrap(), carols[0]["decision_id"].as_str().unwrap()]);
    // a reviewer given only b's log is told an approval the quorum counted is missing; with both, none is
    let (ok, said, _) = run_to_exit(&["audit", "changes", b.audit_log.to_str().unwrap()], &[]).await;
    assert!(
        !ok && said.contains("counted an approval by") && said.contains(alices[0]["decision_id"].as_str().unwrap()),
        "{said}"
    );
    let (a_log, b_log) = (a.audit_log.to_str().unwrap(), b.audit_log.to_str().unwrap());
    let (ok, said, err) = run_to_exit(&["audit", "changes", a_log, b_log], &[]).await;
    assert!(ok && said.contains("; 0 problems"), "{said}{err}");

    // a decline after a partial approval ends the request
    let (second, asked) = pending(&agent, connection_at("quorum-2", 1702, 2000)).await;
    let second_link = link_of(&asked);
    let alice = Browser::default();
    let page = alice.sign_in(&second_link, "alice").await;
    assert!(alice.decide(&page, "approve").await.body.contains("Partly approved"));
    let page = carol.get(&on(&second_link, &b.url)).await;
    let declined = decide_on(&carol, &page, "decline", "not in this quarter").await;
    assert!(declined.body.contains("Declined by"), "{}", declined.body);
    let (_, ended) = confirm(&agent, &second).await;
    assert_ne!(ended["executed"], true, "{ended}");
    assert_eq!(ended["page_decision"]["state"], "declined", "{ended}");
    assert_eq!(connection_creates(&sim), 1, "nothing more created");

    // a small change: one engineer is enough, and finance alone cannot decide it
    let (small, asked) = pending(&agent, connection_at("quorum-3", 1703, 1000)).await;
    let small_link = link_of(&asked);
    let page = carol.get(&small_link).await;
    assert!(page.body.contains("You may not decide") && page.body.contains("1 of netops"), "{}", page.body);
    let page = alice.get(&small_link).await;
    assert!(alice.decide(&page, "approve").await.body.contains("Approved by"));
    let (_, done) = confirm(&agent, &small).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(connection_creates(&sim), 2);
    provider.stop().await;
}

/// The next `weekday` (1 Monday .. 7 Sunday) at `hour`:`minute` UTC after `from_ms`.
fn next(from_ms: u64, weekday: i64, hour: u64, minute: u64) -> u64 {
    const DAY: u64 = 86_400_000;
    let mut day = from_ms / DAY * DAY;
    loop {
        day += DAY;
        if equinix_mcp::policy::Moment::at(day).weekday == weekday {
            return day + (hour * 60 + minute) * 60_000;
        }
    }
}

#[tokio::test]
async fn a_break_glass_freeze_is_opened_only_by_its_quorum_and_holds_for_what_was_approved_before() {
    let path = policy_file(&format!("{}\n{}", team_set(), freeze_with_break_glass()));
    let provider = OidcProvider::start().await;
    let receiver = Receiver::start(Answers::Status(200)).await;
    let key = private_file(KEY_NEW);
    let notify = ["--notify-webhook", &receiver.url, "--notify-webhook-key-file", key.to_str().unwrap()];
    let args = [&["--policy", path.to_str().unwrap()][..], &notify[..]].concat();
    let (server, public) = crate::approval_page::serve(&provider, &args).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = server.connect(Some(&token), TestClient::plain(), false).await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let friday = next(now, 5, 17, 55);
    advance_clock(&server.sim, friday - now).await;

    // approved by the engineer at 17:55, collected at 18:01: not created inside the freeze
    let (before, asked) = pending(&agent, connection_at("glass-1", 1711, 1000)).await;
    assert!(
        asked["human_confirmation"].get("break_glass").is_none(),
        "not yet in the freeze: {asked}\n{}",
        server.stderr_text()
    );
    let link = link_of(&asked);
    let alice = Browser::default();
    let page = alice.sign_in(&link, "alice").await;
    assert!(alice.decide(&page, "approve").await.body.contains("Approved by"));
    advance_clock(&server.sim, 6 * 60_000).await;
    let (_, late) = confirm(&agent, &before).await;
    assert_ne!(late["executed"], true, "{late}");
    let monday = equinix_mcp::audit::rfc3339(friday + (2 * 24 + 12) * 3_600_000 + 5 * 60_000);
    let said = late.to_string();
    assert!(
        said.contains("weekend-freeze-break-glass") && said.contains(&format!("allows it again from {monday}")),
        "{late}"
    );
    assert_eq!(creates(&server.sim, "connections").await, 0);

    // inside the freeze: the engineer and two of security
    let (inside, asked) = pending(&agent, connection_at("glass-2", 1712, 1000)).await;
    assert_eq!(asked["human_confirmation"]["break_glass"], json!(["weekend-freeze-break-glass"]), "{asked}");
    assert!(asked["message"].as_str().unwrap().contains("Break-glass"), "{asked}");
    let link = link_of(&asked);
    let page = alice.get(&link).await;
    assert!(page.body.contains("id=\"break-glass\""), "{}", page.body);
    let base = reqwest::Url::parse(&link).unwrap().origin().ascii_serialization();
    let inbox = alice.get(&format!("{base}/approve")).await;
    assert!(inbox.body.contains("Break-glass: inside &quot;weekend-freeze-break-glass&quot;"), "{}", inbox.body);
    let after_alice = alice.decide(&page, "approve").await;
    assert!(after_alice.body.contains("1 of 3 approvals; waiting for 2 of security"), "{}", after_alice.body);
    let sam = Browser::default();
    let page = sam.sign_in(&link, "sam").await;
    assert!(sam.decide(&page, "approve").await.body.contains("2 of 3 approvals; waiting for 1 more of security"));
    assert_eq!(creates(&server.sim, "connections").await, 0, "not before the quorum is whole");
    // each approval that leaves it short is a notice of its own, marked break-glass
    let partly = receiver.wait_for("change_partly_approved", 2).await;
    let said: Vec<String> = partly.iter().map(|g| g.json()["progress"].as_str().unwrap().to_string()).collect();
    assert!(said.contains(&"2 of 3 approvals; waiting for 1 more of security".to_string()), "{said:?}");
    let notice = partly[0].json();
    assert_eq!(
        (notice["state"].as_str(), &notice["break_glass"]),
        (Some("partly_approved"), &json!(["weekend-freeze-break-glass"]))
    );
    let sasha = Browser::default();
    let page = sasha.sign_in(&link, "sasha").await;
    assert!(sasha.decide(&page, "approve").await.body.contains("Approved by"));
    let (_, done) = confirm(&agent, &inside).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 1);
    let minted = server.audit_entries().into_iter().rfind(|e| e["event"] == "approval_minted").unwrap();
    assert!(minted["quorum"].to_string().contains("(break-glass): 2 of security"), "{minted}");
    assert_eq!(minted["approvals"].as_array().unwrap().len(), 3, "{minted}");
    provider.stop().await;
}

#[tokio::test]
async fn policy_explain_counts_the_approvals_given_and_says_what_is_missing() {
    let set = policy_file(&team_set());
    let request = fresh_audit_path().with_extension("json");
    std::fs::write(&request, connection_at("explained", 1721, 2000).to_string()).unwrap();
    let explain = async |extra: &[&str]| {
        let mut args = vec!["policy", "explain", set.to_str().unwrap(), "--request", request.to_str().unwrap()];
        args.extend_from_slice(&["--method", "page"]);
        args.extend_from_slice(extra);
        run_to_exit(&args, &[]).await
    };
    let (_, out, err) = explain(&[]).await;
    assert!(
        out.contains("approvals: it needs \"one-engineer\": 1 of netops; \"large-or-costly-two-groups\": 1 of netops and 1 of finance"),
        "{out}{err}"
    );
    assert!(out.contains("approvals: 0 of 2 approvals; waiting for"), "{out}");
    let (_, out, _) =
        explain(&["--approved-by", "i#alice=netops", "--approver", "i#carol", "--approver-groups", "finance"]).await;
    assert!(out.contains("approvals: 1 of 2 approvals; waiting for 1 of finance"), "{out}");
    assert!(out.contains("approvals: i#carol: would count, and make it whole"), "{out}");
    let (_, out, _) =
        explain(&["--approved-by", "i#alice=netops", "--approver", "i#bob", "--approver-groups", "netops"]).await;
    assert!(out.contains("i#bob: would fill no place still open"), "{out}");
    let (ok, _, err) = explain(&["--approved-by", "local=netops"]).await;
    assert!(!ok && err.contains("the proposer's own approval never counts"), "{err}");
    // a typo in a group is refused by check, naming the policy and the group
    let typo = policy_file(&team_set().replace("1 of finance", "1 of fnance"));
    let (ok, _, err) = run_to_exit(&["policy", "check", typo.to_str().unwrap()], &[]).await;
    assert!(!ok && err.contains("\"fnance\"") && err.contains("no group could meet"), "{err}");
}

/// A quorum is met by named people on the page only: a client whose person answers a form is sent
/// to the page (the form's yes approves nothing), two people approve there, and the create is
/// made once; a server with no page refuses the create, naming the quorum.
#[tokio::test]
async fn a_form_never_meets_a_quorum_its_person_is_sent_to_the_page() {
    let set = "@id(\"anything\") permit (principal, action, resource);\n\
               @id(\"two-people\") @approvals(\"2\") permit (principal, action, resource);";
    let path = policy_file(set);
    let provider = OidcProvider::start().await;
    let (server, public) = crate::approval_page::serve(&provider, &["--policy", path.to_str().unwrap()]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let person = TestClient::accepting();
    let form = std::sync::Arc::new(server.connect(Some(&token), person.clone(), false).await);
    let (_, confirming, link) = confirm_by_form(&form, &person, connection_at("two-people-1", 1731, 50)).await;
    assert_eq!(creates(&server.sim, "connections").await, 0, "the form's yes approved nothing");
    // the proposer, whom this set lets decide, is offered no decision on their own request, and a
    // post of one, as a hostile client would send it, is refused
    let own = Browser::default();
    let page = own.sign_in(&link, PROPOSER).await;
    assert!(page.body.contains("proposer&#39;s own decision never counts") && !page.body.contains("name=\"csrf\""));
    let forged = own
        .send(
            reqwest::Method::POST,
            &page.url,
            Some(&[("csrf", "forged"), ("decision", "approve"), ("reason", "")]),
            &[("origin", "null"), ("sec-fetch-site", "same-origin")],
        )
        .await;
    assert!(forged.status >= 400, "{} {}", forged.status, forged.body);
    let alice = Browser::default();
    let page = alice.sign_in(&link, "alice").await;
    assert!(alice.decide(&page, "approve").await.body.contains("1 of 2 approvals"));
    let bob = Browser::default();
    let page = bob.sign_in(&link, "bob").await;
    assert!(bob.decide(&page, "approve").await.body.contains("Approved by"));
    let done = confirming.await.unwrap();
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 1);

    // without a page, nothing meets it: refused before anyone is asked, naming the quorum
    let bare = Launch::serve().args(&["--toolsets", "metros,mutate", "--policy", path.to_str().unwrap()]).stdio().await;
    let proposed = call_on(&bare.client, "fabric_propose_change", connection_at("two-people-2", 1732, 50)).await;
    let token_of = structured(&proposed)["confirm_token"].as_str().unwrap().to_string();
    let refused = call_on(&bare.client, "fabric_confirm_change", json!({"confirm_token": token_of})).await;
    let said = format!("{:?}", refused.structured_content);
    assert!(said.contains("\\\"two-people\\\": 2") && said.contains("on the approval page"), "{said}");
    assert_eq!(creates(&embedded_sim_url(&bare).await, "connections").await, 0);
    provider.stop().await;
}
