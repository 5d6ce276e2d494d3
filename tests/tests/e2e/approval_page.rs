//! The approval page: a client with no elicitation gets a link, a person signs in at
//! the real identity provider (`oidc-provider`, harness::oidc) and decides there, and the call
//! made again collects the decision. Every test ends on the simulator's create counter.

use std::time::Duration;

use crate::harness::*;
use serde_json::{Value, json};

pub(crate) const ALL: &str = "fabric:read fabric:propose fabric:confirm";
/// The MCP client's identity at the provider: its access tokens' `sub` (client credentials).
pub(crate) const PROPOSER: &str = "full-es256";

/// A server with OAuth (the OAuth tests' own) and the approval page.
pub(crate) async fn serve(provider: &OidcProvider, extra: &[&str]) -> (HttpServer, String) {
    let args: Vec<&str> = ["--approval-client-id", "approval-page"].into_iter().chain(extra.iter().copied()).collect();
    crate::oauth::serve(provider, &args).await
}

pub(crate) async fn confirm(client: &Client, token: &str) -> (bool, Value) {
    let r = call_on(client, "fabric_confirm_change", json!({"confirm_token": token})).await;
    (is_error(&r), structured(&r))
}

/// The link of an `approval_pending` result.
pub(crate) fn link_of(result: &Value) -> String {
    assert_eq!(result["human_confirmation"]["status"], "approval_pending", "{result}");
    result["human_confirmation"]["approval_url"].as_str().unwrap().to_string()
}

fn audit_events<'a>(entries: &'a [Value], event: &str) -> Vec<&'a Value> {
    entries.iter().filter(|e| e["event"] == event).collect()
}

#[tokio::test]
async fn a_client_without_elicitation_gets_a_link_and_only_the_signed_in_proposer_approves_once() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let client = server.connect(Some(&token), TestClient::plain(), false).await;
    let proposal = propose_on(&client, "page-1", 301).await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap().to_string();
    let sha = proposal["request_sha256"].as_str().unwrap().to_string();

    let (failed, first) = confirm(&client, &confirm_token).await;
    assert!(!failed, "approval_pending is no error: {first}");
    let link = link_of(&first);
    assert_eq!(first["executed"], Value::Null);
    let base = public.trim_end_matches("/mcp");
    let id = link.strip_prefix(&format!("{base}/approve/")).unwrap_or_else(|| panic!("{link}"));
    assert!(id.len() == 36 && id.starts_with("apv-"), "the link carries a random id and nothing else: {link}");
    // asking again before anyone decided: the same link, nothing used up, nothing sent
    let (_, again) = confirm(&client, &confirm_token).await;
    assert_eq!(link_of(&again), link);

    let browser = Browser::default();
    let signed_out = browser.get(&link).await;
    assert_eq!(signed_out.status, 200);
    for hidden in [sha.as_str(), "page-1", "connection_create", PROPOSER] {
        assert!(!signed_out.body.contains(hidden), "signed out, the page shows nothing of the request ({hidden})");
    }
    let csp = signed_out.header("content-security-policy");
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains("script-src 'self';") && !csp.contains("unsafe"), "only the page's own script file: {csp}");
    assert_eq!(signed_out.header("x-content-type-options"), "nosniff");
    assert_eq!(signed_out.header("referrer-policy"), "no-referrer");
    assert_eq!(signed_out.header("cache-control"), "no-store");
    assert_eq!(signed_out.header("x-frame-options"), "DENY");

    // someone else signs in: may not decide, so reads nothing of the request by its link, and a
    // forged decision decides nothing
    let mallory = Browser::default();
    let hers = mallory.sign_in(&link, "mallory").await;
    assert_eq!(hers.status, 403, "{}", hers.body);
    assert!(hers.body.contains("Not yours to read"), "{}", hers.body);
    for hidden in [sha.as_str(), "page-1", "connection_create", "DC-PRI-01"] {
        assert!(!hers.body.contains(hidden), "a person who may not decide reads nothing of it ({hidden})");
    }
    assert!(!hers.body.contains("name=\"csrf\""));
    let session = mallory.cookies_of("127.0.0.1")["equinix-mcp-session"].clone();
    assert!(!session.is_empty());
    let url = reqwest::Url::parse(&link).unwrap();
    let forged = mallory.post(&url, &[("csrf", "guess"), ("decision", "approve")], base).await;
    assert_eq!(forged.status, 403, "{}", forged.body);

    let proposer = Browser::default();
    let page = proposer.sign_in(&link, PROPOSER).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert_eq!(page.url.as_str(), link, "back on the page the sign-in began on");
    for shown in [sha.as_str(), "page-1", "change_type: connection_create", "From the component", "You may decide"] {
        assert!(page.body.contains(shown), "the page shows {shown:?}: {}", page.body);
    }
    let cookie = page.headers.get_all("set-cookie").iter().count();
    assert_eq!(cookie, 0, "the session was set on the callback, not here");
    // a cross-site form carrying the person's cookies, and one without the page's token
    let csrf = page.attr_after("name=\"csrf\"", "value").unwrap();
    let cross = proposer.post(&url, &[("csrf", &csrf), ("decision", "approve")], "http://evil.example").await;
    assert_eq!(cross.status, 403, "{}", cross.body);
    let tokenless = proposer.post(&url, &[("decision", "approve")], base).await;
    assert_eq!(tokenless.status, 403, "{}", tokenless.body);
    assert_eq!(creates(&server.sim, "connections").await, 0);

    let decided = proposer.decide(&page, "approve").await;
    assert_eq!(decided.status, 200, "{}", decided.body);
    assert!(decided.body.contains("Approved by"), "{}", decided.body);
    let late = mallory.decide(&page, "decline").await;
    assert_ne!(late.status, 200, "a second decision is refused: {}", late.body);

    let (failed, done) = confirm(&client, &confirm_token).await;
    assert!(!failed, "{done}");
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 1);
    let (failed, replay) = confirm(&client, &confirm_token).await;
    assert!(failed, "the token was used: {replay}");
    assert_eq!(creates(&server.sim, "connections").await, 1, "one decision, one create");

    let entries = server.audit_entries();
    let decisions = audit_events(&entries, "page_decision");
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    let approver = format!("{}#{PROPOSER}", provider.issuer);
    assert_eq!(decisions[0]["approver"], approver.as_str());
    assert_eq!(decisions[0]["decision"], "approve");
    assert_eq!(decisions[0]["request_sha256"], sha.as_str());
    assert!(decisions[0]["peer"].as_str().unwrap().starts_with("127.0.0.1:"), "{}", decisions[0]);
    let minted = audit_events(&entries, "approval_minted");
    assert_eq!((minted[0]["method"].as_str(), minted[0]["approver"].as_str()), (Some("page"), Some(approver.as_str())));
    let (ok, out, err) = run_to_exit(&["audit", "verify", server.audit_log.to_str().unwrap()], &[]).await;
    assert!(ok, "{out}{err}");
    provider.stop().await;
}

#[tokio::test]
async fn declining_on_the_page_uses_the_token_and_creates_nothing_and_a_decision_fits_one_proposal_only() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let client = server.connect(Some(&token), TestClient::plain(), false).await;
    let browser = Browser::default();

    let declined = propose_on(&client, "page-2", 302).await;
    let declined_token = declined["confirm_token"].as_str().unwrap();
    let link = link_of(&confirm(&client, declined_token).await.1);
    let page = browser.sign_in(&link, PROPOSER).await;
    // a decline without a reason, as a program posting past the page's script would send it:
    // refused, naming what is missing, and nothing decided; an oversized reason likewise
    for (reason, says) in [("", "A decline needs a reason"), ("   ", "A decline needs a reason")] {
        let refused = browser.decide_saying(&page, "decline", reason).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert!(refused.body.contains(says), "{}", refused.body);
    }
    let long = "x".repeat(501);
    let refused = browser.decide_saying(&page, "decline", &long).await;
    assert!(refused.status == 400 && refused.body.contains("at most 500"), "{}", refused.body);
    assert!(server.audit_entries().iter().all(|e| e["event"] != "page_decision"), "nothing was decided");
    let declined_page = browser.decide_saying(&page, "decline", "wrong metro <b>SV</b>").await;
    assert!(declined_page.body.contains("Declined by"), "{}", declined_page.body);
    assert!(
        declined_page.body.contains("wrong metro &lt;b&gt;SV&lt;/b&gt;"),
        "the reason, as text: {}",
        declined_page.body
    );
    let (_, result) = confirm(&client, declined_token).await;
    assert_eq!(result["page_decision"]["reason"], "wrong metro <b>SV</b>", "{result}");
    assert_eq!(result["human_confirmation"]["status"], "declined", "{result}");
    assert_eq!(result["executed"], false);
    let (failed, _) = confirm(&client, declined_token).await;
    assert!(failed, "declining used the token up");

    // an approval given on one proposal's page is no answer for another proposal
    let a = propose_on(&client, "page-3", 303).await;
    let b = propose_on(&client, "page-4", 304).await;
    let (a_token, b_token) = (a["confirm_token"].as_str().unwrap(), b["confirm_token"].as_str().unwrap());
    let a_link = link_of(&confirm(&client, a_token).await.1);
    let b_link = link_of(&confirm(&client, b_token).await.1);
    assert_ne!(a_link, b_link);
    // a minute on, the component's context (the proposal's age) reads differently: the link stays
    advance_clock(&server.sim, 61_000).await;
    assert_eq!(link_of(&confirm(&client, a_token).await.1), a_link, "the person keeps the one link");
    let page = browser.get(&a_link).await;
    assert!(browser.decide(&page, "approve").await.body.contains("Approved by"));
    let (_, still) = confirm(&client, b_token).await;
    assert_eq!(link_of(&still), b_link, "b still waits for its own decision");
    assert_eq!(creates(&server.sim, "connections").await, 0);
    let (_, done) = confirm(&client, a_token).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 1);
    provider.stop().await;
}

#[tokio::test]
async fn a_decision_after_the_proposals_ttl_creates_nothing() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let client = server.connect(Some(&token), TestClient::plain(), false).await;
    let proposal = propose_on(&client, "page-5", 305).await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap();
    let link = link_of(&confirm(&client, confirm_token).await.1);
    let browser = Browser::default();
    let page = browser.sign_in(&link, PROPOSER).await;
    advance_clock(&server.sim, 10 * 60 * 1000 + 1000).await;
    let late = browser.decide(&page, "approve").await;
    assert_eq!(late.status, 409, "{}", late.body);
    assert!(late.body.contains("10 minutes"), "{}", late.body);
    let (failed, result) = confirm(&client, confirm_token).await;
    assert!(failed, "an expired proposal: {result}");
    assert_eq!(creates(&server.sim, "connections").await, 0);
    provider.stop().await;
}

#[tokio::test]
async fn two_browsers_approving_at_once_create_once() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let client = server.connect(Some(&token), TestClient::plain(), false).await;
    let proposal = propose_on(&client, "page-6", 306).await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap();
    let link = link_of(&confirm(&client, confirm_token).await.1);
    let (one, two) = (Browser::default(), Browser::default());
    let (page_one, page_two) = (one.sign_in(&link, PROPOSER).await, two.sign_in(&link, PROPOSER).await);
    let (a, b) = tokio::join!(one.decide(&page_one, "approve"), two.decide(&page_two, "approve"));
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [200, 409], "one decision stands, the other is refused: {} / {}", a.body, b.body);
    // the second is told who decided first (the same person: "you"), what and when, never a blank
    let second = if a.status == 409 { &a } else { &b };
    assert!(second.body.contains("Approved by you at 20") && second.body.contains("not kept"), "{}", second.body);
    let (_, done) = confirm(&client, confirm_token).await;
    assert_eq!(done["executed"], true, "{done}");
    let (failed, _) = confirm(&client, confirm_token).await;
    assert!(failed);
    assert_eq!(creates(&server.sim, "connections").await, 1);
    let entries = server.audit_entries();
    let decisions = audit_events(&entries, "page_decision");
    assert_eq!(decisions.len(), 2, "both were recorded before the store chose one");
    let not_kept = audit_events(&entries, "page_decision_not_kept");
    assert_eq!(not_kept.len(), 1, "and the one not kept is marked");
    let kept: Vec<_> = decisions.iter().filter(|d| d["decision_id"] != not_kept[0]["decision_id"]).collect();
    assert_eq!(kept.len(), 1);
    // the reviewer's story counts the decision that stood, and the other as refused
    let (ok, said, err) = run_to_exit(&["audit", "changes", server.audit_log.to_str().unwrap()], &[]).await;
    assert!(ok, "{said}{err}");
    assert!(said.contains("1 decisions stood (1 refused, not kept)") && said.contains("  refused "), "{said}");
    provider.stop().await;
}

#[tokio::test]
async fn a_client_with_url_elicitation_gets_the_link_waits_and_hears_the_approval_is_complete() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let (test_client, mut links) = TestClient::following_links();
    let completed = test_client.completed.clone();
    let client = server.connect(Some(&token), test_client, false).await;
    let proposal = propose_on(&client, "page-7", 307).await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap().to_string();
    let person = tokio::spawn(async move {
        let (link, id) = links.recv().await.expect("a link arrives");
        let browser = Browser::default();
        let page = browser.sign_in(&link, PROPOSER).await;
        assert!(browser.decide(&page, "approve").await.body.contains("Approved by"));
        (link, id)
    });
    let (failed, done) = confirm(&client, &confirm_token).await;
    assert!(!failed, "{done}");
    assert_eq!(done["executed"], true, "{done}");
    let (link, id) = person.await.unwrap();
    assert!(link.ends_with(&format!("/approve/{id}")), "{link} {id}");
    assert_eq!(creates(&server.sim, "connections").await, 1);
    wait_until("the elicitation-complete notification", async || completed.lock().unwrap().contains(&id)).await;
    provider.stop().await;
}

/// A Redis store, a simulator, and the arguments of a replica of the page's server on both, whose
/// public URL is `public` when it listens on `port`.
struct OnRedis {
    redis: crate::harness::redis::RedisServer,
    sim: equinix_fabric_sim::SimHandle,
    port: u16,
    public: String,
    args: Vec<String>,
}

async fn on_redis(provider: &OidcProvider) -> OnRedis {
    let redis = crate::harness::redis::RedisServer::start();
    let sim = sim(equinix_fabric_sim::SimConfig::default()).await;
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}/mcp");
    let args = replica_args(&redis.url(0), &provider.issuer, &public);
    OnRedis { redis, sim, port, public, args }
}

/// A call waiting for the person's decision on the page when the shared store stops answering:
/// the agent is told that nothing was approved, in the store's fixed words with the reference the
/// operator's log has the details under, never the store's address or its own error.
#[tokio::test]
async fn a_call_waiting_on_the_page_when_the_store_fails_is_told_without_the_stores_address() {
    let provider = OidcProvider::start().await;
    let OnRedis { mut redis, sim, port, public, args } = on_redis(&provider).await;
    let store = redis.url(0);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Launch::serve().against(&sim).args(&args).http(&format!("127.0.0.1:{port}")).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let (test_client, mut links) = TestClient::following_links();
    let client = server.connect(Some(&token), test_client, false).await;
    let proposal = propose_on(&client, "page-store-fails", 310).await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap().to_string();
    let waiting = tokio::spawn(async move { confirm(&client, &confirm_token).await });
    links.recv().await.expect("a link arrives");
    redis.stop();
    let (failed, said) = waiting.await.unwrap();
    let text = said.to_string();
    assert!(failed, "{said}");
    assert!(text.contains("nothing was approved") && text.contains("reference"), "{said}");
    let address = store.trim_end_matches("/0").trim_start_matches("redis://");
    assert!(!text.contains(address) && !text.contains("redis://"), "the store's address reached the agent: {said}");
    assert_eq!(creates(&sim.base_url(), "connections").await, 0);
    provider.stop().await;
}

#[tokio::test]
async fn a_decision_made_through_one_replica_is_found_by_the_call_on_another() {
    let provider = OidcProvider::start().await;
    let OnRedis { redis, sim, port, public, args } = on_redis(&provider).await;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let a = Launch::serve().against(&sim).args(&args).http(&format!("127.0.0.1:{port}")).await;
    let b = Launch::serve().against(&sim).args(&args).http("127.0.0.1:0").await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let on_b = b.connect(Some(&token), TestClient::plain(), false).await;
    let proposal = propose_on(&on_b, "page-8", 308).await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap();
    let link = link_of(&confirm(&on_b, confirm_token).await.1);
    assert!(link.starts_with(&format!("http://127.0.0.1:{port}/approve/")), "the page is where browsers reach: {link}");
    // browsers that only begin signing in write nothing to the shared store
    let keys = redis.dbsize();
    for _ in 0..50 {
        let started = Browser::default()
            .send(reqwest::Method::GET, &reqwest::Url::parse(&format!("{link}/sign-in")).unwrap(), None, &[])
            .await;
        assert_eq!(started.status, 303, "{}", started.body);
    }
    assert_eq!(redis.dbsize(), keys, "a sign-in under way lives in its browser's sealed cookie");
    let browser = Browser::default();
    let page = browser.sign_in(&link, PROPOSER).await;
    assert!(page.body.contains("You may decide"), "replica a shows b's question: {}", page.body);
    assert!(browser.decide(&page, "approve").await.body.contains("Approved by"));
    let (_, done) = confirm(&on_b, confirm_token).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(connection_creates(&sim), 1);
    assert_eq!(audit_events(&a.audit_entries(), "page_decision").len(), 1, "the page's replica recorded the decision");
    drop(a);
    drop(b);
    provider.stop().await;
}

/// Proposes `change` on `form`, whose person answers forms, and asks for its confirm, which the
/// policy allows only on the page: the proposal, the call under way, and the page the form names.
pub(crate) async fn confirm_by_form(
    form: &std::sync::Arc<Client>,
    person: &TestClient,
    change: Value,
) -> (Value, tokio::task::JoinHandle<Value>, String) {
    let proposed = structured(&call_on(form, "fabric_propose_change", change).await);
    let token = proposed["confirm_token"].as_str().unwrap_or_else(|| panic!("{proposed}")).to_string();
    let confirming = {
        let form = form.clone();
        tokio::spawn(async move { confirm(&form, &token).await.1 })
    };
    let prompt = wait::until_some("the form", wait::WITHIN, async || person.prompt_texts().into_iter().next()).await;
    assert!(prompt.contains("allows this create only on the approval page"), "{prompt}");
    let at = prompt.find("http://").expect("the form names the page");
    let link: String = prompt[at..].chars().take_while(|c| !c.is_whitespace() && *c != ',').collect();
    (proposed, confirming, link)
}

/// A replica's arguments: the shared `store`, OAuth at `issuer`, the MCP URL `public` (the page at
/// its origin, unless more arguments say otherwise).
pub(crate) fn replica_args(store: &str, issuer: &str, public: &str) -> Vec<String> {
    let args =
        ["--toolsets", "metros,mutate", "--proposal-store", store, "--oauth-issuer", issuer, "--public-url", public];
    args.iter().chain(&["--approval-client-id", "approval-page"]).map(|s| s.to_string()).collect()
}

/// The four-eyes set of docs/approval-page.md, exactly as printed there.
pub(crate) fn four_eyes_policy() -> String {
    let readme = include_str!("../../../docs/approval-page.md");
    let section = &readme[readme.find("# The approval page").expect("the approval page's section")..];
    let start = section.find("```cedar\n").expect("a cedar block") + "```cedar\n".len();
    section[start..start + section[start..].find("```").unwrap()].to_string()
}

pub(crate) fn connection_at(name: &str, vlan: u64, bandwidth: u64) -> Value {
    let mut spec = connection_spec(name, vlan);
    spec["bandwidth"] = json!(bandwidth);
    json!({"change_type": "connection_create", "spec": spec})
}

/// A network create (no charge of its own, no access for anyone), in no metro.
pub(crate) fn network_named(name: &str) -> Value {
    json!({"change_type": "network_create", "spec": {"type": "EVPLAN", "name": name, "scope": "REGIONAL",
        "location": {"region": "AMER"}, "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]}})
}

/// A service token on [`PORT_A`]'s VLAN `vlan`, that lets its holder connect until 2031.
pub(crate) fn token_on(vlan: u64) -> Value {
    json!({"change_type": "service_token_create", "spec": {"type": "VC_TOKEN", "expirationDateTime": "2031-01-01T00:00:00Z",
        "connection": {"type": "EVPL_VC", "bandwidthLimit": 100, "aSide": {"accessPointSelectors": [
            {"type": "COLO", "port": {"uuid": PORT_A}, "linkProtocol": {"type": "DOT1Q", "vlanTag": vlan}}]}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]}})
}

#[tokio::test]
async fn the_readme_four_eyes_policy_wants_a_second_engineer_of_netops_on_the_page_for_what_costs_or_grants_access() {
    let path = crate::policy::policy_file(&four_eyes_policy());
    let (ok, out, err) = run_to_exit(&["policy", "check", path.to_str().unwrap()], &[]).await;
    assert!(ok && out.contains("4 policies"), "{out}{err}");
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &["--policy", path.to_str().unwrap()]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = server.connect(Some(&token), TestClient::plain(), false).await;
    // a connection of any size costs money: even 50 Mbps
    let proposed = call_on(&agent, "fabric_propose_change", connection_at("four-eyes-1", 311, 50)).await;
    assert!(!is_error(&proposed), "a 50 Mbps proposal is validated: {:?}", proposed.structured_content);
    let confirm_token = structured(&proposed)["confirm_token"].as_str().unwrap().to_string();
    let link = link_of(&confirm(&agent, &confirm_token).await.1);

    // the proposer is in netops, but may not approve their own connection
    let proposer = Browser::default();
    let own = proposer.sign_in(&link, PROPOSER).await;
    assert!(
        own.body.contains("You may not decide") && own.body.contains("billable-or-access-four-eyes"),
        "{}",
        own.body
    );
    // not even with the anti-CSRF token of their session, taken from a page they may decide: a network's
    let network = call_on(&agent, "fabric_propose_change", network_named("four-eyes-network")).await;
    let network_token = structured(&network)["confirm_token"].as_str().unwrap().to_string();
    let network_link = link_of(&confirm(&agent, &network_token).await.1);
    let theirs = proposer.get(&network_link).await;
    let csrf = theirs.attr_after("name=\"csrf\"", "value").expect("the proposer may decide their own network");
    let url = reqwest::Url::parse(&link).unwrap();
    let base = url.origin().ascii_serialization();
    let forced = proposer.post(&url, &[("csrf", &csrf), ("decision", "approve")], &base).await;
    assert_eq!(forced.status, 403, "{}", forced.body);
    assert!(forced.body.contains("billable-or-access-four-eyes"), "{}", forced.body);
    // someone outside netops may not either, nor read it
    let outsider = Browser::default().sign_in(&link, "mallory").await;
    assert!(outsider.body.contains("Not yours to read") && !outsider.body.contains("four-eyes-1"), "{}", outsider.body);
    // a second engineer of netops may
    let alice = Browser::default();
    let page = alice.sign_in(&link, "alice").await;
    assert!(page.body.contains("You may decide") && page.body.contains("our-metros"), "{}", page.body);
    assert!(alice.decide(&page, "approve").await.body.contains("Approved by"));
    let (_, done) = confirm(&agent, &confirm_token).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 1);
    let decision = audit_events(&server.audit_entries(), "page_decision")[0].clone();
    assert_eq!(decision["approver"], format!("{}#alice", provider.issuer), "{decision}");
    assert_eq!(decision["approver_groups"], json!(["netops"]));
    assert_eq!(decision["policy_ids"], json!(["our-metros"]), "the policies that let alice decide");

    // a service token grants access: the proposer may not approve their own either (the gap the
    // set once left: a token lets a third party connect to a VLAN of ours until a date)
    let granted = call_on(&agent, "fabric_propose_change", token_on(319)).await;
    assert!(!is_error(&granted), "{:?}", granted.structured_content);
    let granted_token = structured(&granted)["confirm_token"].as_str().unwrap().to_string();
    let granted_link = link_of(&confirm(&agent, &granted_token).await.1);
    let own = proposer.get(&granted_link).await;
    assert!(own.body.contains("billable-or-access-four-eyes") && !own.body.contains("name=\"csrf\""), "{}", own.body);
    assert!(
        own.body.contains("whoever holds it may connect to A side port"),
        "the plan says what it grants: {}",
        own.body
    );
    let page = alice.get(&granted_link).await;
    assert!(alice.decide(&page, "approve").await.body.contains("Approved by"));
    assert_eq!(confirm(&agent, &granted_token).await.1["executed"], true);
    assert_eq!(creates(&server.sim, "serviceTokens").await, 1);

    // a client with the form: a connection's form sends the person to the page (never a refusal
    // that leaves no way to approve); a network's form is enough
    let person = TestClient::accepting();
    let form = std::sync::Arc::new(server.connect(Some(&token), person.clone(), false).await);
    let (big, confirming, big_link) = confirm_by_form(&form, &person, connection_at("four-eyes-2", 312, 2000)).await;
    assert_eq!(creates(&server.sim, "connections").await, 1, "nothing is sent before the page decides");
    let alice = Browser::default();
    let page = alice.sign_in(&big_link, "alice").await;
    assert!(alice.decide(&page, "approve").await.body.contains("Approved by"));
    let done = confirming.await.unwrap();
    assert_eq!(done["executed"], true, "{done}");
    let network = call_on(&form, "fabric_propose_change", network_named("four-eyes-3")).await;
    let network_token = structured(&network)["confirm_token"].as_str().unwrap().to_string();
    let (_, done) = confirm(&form, &network_token).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 2, "the 2 Gbps request once, on the page's decision");
    assert_eq!(creates(&server.sim, "networks").await, 1, "the network on its form");
    let minted = audit_events(&server.audit_entries(), "approval_minted").into_iter().cloned().collect::<Vec<_>>();
    let form_minted = minted.iter().find(|m| m["request_sha256"] == big["request_sha256"]).unwrap();
    assert_eq!(form_minted["method"], "page", "{minted:?}");
    assert_eq!(form_minted["approver"], format!("{}#alice", provider.issuer));
    provider.stop().await;
}

/// Entra ID's documented setting (`--oauth-principal-claim oid`) under a provider that gives the
/// page its own pairwise `sub` for each person: the proposer who signs in to the page is the
/// proposer still, so the four-eyes set refuses them their own 10 Gbps, and the approver is named
/// by `oid` in the audit. Before one rule named the person, the page read `sub`, saw a stranger,
/// and let the proposer approve their own change.
#[tokio::test]
async fn under_pairwise_subjects_the_page_names_the_proposer_by_the_principal_claim_and_four_eyes_holds() {
    let path = crate::policy::policy_file(&four_eyes_policy());
    let provider = OidcProvider::start().await;
    let args = [
        "--approval-client-id",
        "approval-page-pairwise",
        "--oauth-principal-claim",
        "oid",
        "--policy",
        path.to_str().unwrap(),
    ];
    let (server, public) = crate::oauth::serve(&provider, &args).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = server.connect(Some(&token), TestClient::plain(), false).await;
    let proposed = call_on(&agent, "fabric_propose_change", connection_at("pairwise-1", 322, 5000)).await;
    assert!(!is_error(&proposed), "{:?}", proposed.structured_content);
    let confirm_token = structured(&proposed)["confirm_token"].as_str().unwrap().to_string();
    let link = link_of(&confirm(&agent, &confirm_token).await.1);
    let proposer_id = format!("{}#{PROPOSER}", provider.issuer);

    // the proposer signs in with a `sub` no access token of theirs carries, and is still the proposer
    let proposer = Browser::default();
    let own = proposer.sign_in(&link, PROPOSER).await;
    assert_eq!(own.status, 200, "{}", own.body);
    assert!(own.body.contains(&format!(", {proposer_id}</span>")), "named by oid: {}", own.body);
    assert!(
        own.body.contains("You may not decide") && own.body.contains("billable-or-access-four-eyes"),
        "{}",
        own.body
    );
    assert!(!own.body.contains("name=\"csrf\""), "no buttons for the proposer");
    // a person the provider names by `sub` alone is refused at sign-in, never read by `sub`
    let nameless = Browser::default().sign_in(&link, "no-oid-carol").await;
    assert_eq!(nameless.status, 403, "{}", nameless.body);
    assert!(nameless.body.contains("has no `oid` claim"), "{}", nameless.body);
    assert_eq!(creates(&server.sim, "connections").await, 0);

    let alice = Browser::default();
    let page = alice.sign_in(&link, "alice").await;
    assert!(page.body.contains("You may decide"), "{}", page.body);
    assert!(alice.decide(&page, "approve").await.body.contains("Approved by"));
    let (_, done) = confirm(&agent, &confirm_token).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 1);
    let entries = server.audit_entries();
    let decision = audit_events(&entries, "page_decision")[0].clone();
    assert_eq!(decision["approver"], format!("{}#alice", provider.issuer), "by oid, not the pairwise sub: {decision}");
    assert_eq!(decision["proposer"], proposer_id.as_str());
    provider.stop().await;
}

#[tokio::test]
async fn the_groups_come_only_under_the_scope_the_provider_releases_them_with() {
    // the fixture releases `groups` only under the `groups` scope, as Okta, Dex and Authelia do
    let path = crate::policy::policy_file(&four_eyes_policy());
    let provider = OidcProvider::start().await;
    for (scopes, decides) in [("openid groups", true), ("openid", false)] {
        let args = ["--policy", path.to_str().unwrap(), "--approval-scopes", scopes];
        let (server, public) = serve(&provider, &args).await;
        let token = provider.token(PROPOSER, ALL, &public).await;
        let agent = server.connect(Some(&token), TestClient::plain(), false).await;
        let proposed = call_on(&agent, "fabric_propose_change", connection_at("scoped", 314, 50)).await;
        let confirm_token = structured(&proposed)["confirm_token"].as_str().unwrap().to_string();
        let link = link_of(&confirm(&agent, &confirm_token).await.1);
        let page = Browser::default().sign_in(&link, "alice").await;
        assert_eq!(page.body.contains("<span id=\"groups\">netops</span>"), decides, "{scopes}: {}", page.body);
        assert_eq!(page.body.contains("You may decide"), decides, "{scopes}: {}", page.body);
    }
    provider.stop().await;
}

#[tokio::test]
async fn a_2026_07_28_client_with_url_elicitation_retries_until_the_page_decided() {
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let (mut test_client, mut links) = TestClient::following_links();
    let done = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    test_client.done = Some(done.clone());
    let prompts = test_client.prompts.clone();
    let client = server.connect(Some(&token), test_client, true).await;
    let proposal = propose_on(&client, "page-9", 309).await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap().to_string();
    let person = tokio::spawn(async move {
        let (link, _) = links.recv().await.expect("a link arrives");
        // "done" before deciding: the retry finds no decision and gets the link again
        done.add_permits(1);
        let (again, _) = links.recv().await.expect("the link again");
        assert_eq!(again, link, "the same page");
        let browser = Browser::default();
        let page = browser.sign_in(&link, PROPOSER).await;
        assert!(browser.decide(&page, "approve").await.body.contains("Approved by"));
        done.add_permits(1);
        link
    });
    let (failed, result) = confirm(&client, &confirm_token).await;
    assert!(!failed, "{result}");
    assert_eq!(result["executed"], true, "{result}");
    person.await.unwrap();
    assert_eq!(prompts.lock().unwrap().len(), 2, "two rounds: one before the decision, one after");
    assert_eq!(creates(&server.sim, "connections").await, 1);
    provider.stop().await;
}

#[tokio::test]
async fn a_stdio_server_serves_its_page_on_a_loopback_listener_and_its_policy_names_who_may_approve() {
    let provider = OidcProvider::start().await;
    // the local user of a stdio server is no signed-in person: only a policy can name approvers
    let policy = crate::policy::policy_file(
        r#"@id("everything") permit (principal, action, resource);
@id("netops-approve-on-the-page")
forbid (principal, action, resource)
when { context has approver && !(context has approver_groups && context.approver_groups.contains("netops")) };"#,
    );
    let server = Launch::serve()
        .args(&["--toolsets", "metros,mutate", "--policy", policy.to_str().unwrap()])
        .args(&["--approval-client-id", "approval-page", "--approval-issuer", &provider.issuer])
        .client(TestClient::plain())
        .stdio()
        .await;
    let proposal = server
        .ok(
            "fabric_propose_change",
            json!({"change_type": "connection_create", "spec": connection_spec("stdio-page", 310)}),
        )
        .await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap();
    let pending = server.ok("fabric_confirm_change", json!({"confirm_token": confirm_token})).await;
    let link = link_of(&pending);
    assert!(link.starts_with("http://127.0.0.1:"), "{link}");
    let outsider = Browser::default().sign_in(&link, "mallory").await;
    assert!(outsider.body.contains("Not yours to read"), "{}", outsider.body);
    let alice = Browser::default();
    let page = alice.sign_in(&link, "alice").await;
    assert!(page.body.contains("Proposed by") && page.body.contains("<summary>local</summary>"), "{}", page.body);
    assert!(alice.decide(&page, "approve").await.body.contains("Approved by"));
    let done = server.ok("fabric_confirm_change", json!({"confirm_token": confirm_token})).await;
    assert_eq!(done["executed"], true, "{done}");
    let sim = embedded_sim_url(&server).await;
    assert_eq!(creates(&sim, "connections").await, 1);
    server.stop().await;
    provider.stop().await;
}

/// A login of the test provider whose `sub` and group (tests/oauth/provider.mjs) are markup.
const HOSTILE_LOGIN: &str = "<img src=x onerror=\"window.__hostile=1\">";

/// Markup an agent could put in a body field: it would set `window.__hostile` if it ever ran.
const HOSTILE_NAME: &str = "<img src=x onerror=\"window.__hostile=1\"><script>window.__hostile=2</script>";

#[tokio::test]
async fn in_a_real_browser_a_person_signs_in_reads_the_request_and_approves_and_no_markup_runs() {
    use crate::harness::webdriver::Chrome;
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = server.connect(Some(&token), TestClient::plain(), false).await;
    let proposal = propose_on(&agent, HOSTILE_NAME, 320).await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap().to_string();
    let sha = proposal["request_sha256"].as_str().unwrap().to_string();
    let link = link_of(&confirm(&agent, &confirm_token).await.1);

    let chrome = Chrome::start().await;
    chrome.goto(&link).await;
    chrome.find("#sign-in").await;
    assert!(!chrome.source().await.contains(&sha), "signed out, nothing of the request");
    chrome.sign_in(&link, PROPOSER).await;
    assert_eq!(chrome.url().await, link, "back on the page the sign-in began on");
    // the exact bytes are folded below the plan and the decision, whole, one click away
    chrome.click("#exact summary").await;
    let request = chrome.text("#request").await;
    // the body's JSON escapes the quotes; the markup is there, as text
    for shown in [sha.as_str(), "<img src=x onerror=", "<script>window.__hostile=2</script>"] {
        assert!(request.contains(shown), "the request shows {shown:?} as text: {request}");
    }
    // the plan names the connection by the same markup, quoted, as text, after the host's figures
    let summary = chrome.text("#plan-summary").await;
    assert!(
        summary.starts_with(
            "+ create connection (billable): EVPL_VC, 1000 Mbps, USD 300.00 per month; named \"<img src=x onerror="
        ),
        "{summary}"
    );
    assert!(chrome.text("#plan").await.contains("\"DC-PRI-01\""), "the host's names");
    assert_eq!(chrome.run("return typeof window.__hostile;").await, "undefined", "no markup from the body ran");
    let shot = chrome.screenshot().await;
    assert!(shot.starts_with(b"\x89PNG"), "a PNG");
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/approval-page.png");
    std::fs::write(&out, &shot).unwrap();

    // a hostile site's form, submitted in the same signed-in browser, decides nothing
    let forged = format!(
        "data:text/html,<form id=f method=post action=\"{link}\"><input name=csrf value=x><input name=decision \
         value=approve></form><script>document.getElementById('f').submit()</script>"
    );
    chrome.goto(&forged).await;
    wait::until("the forged form to be submitted", Duration::from_secs(20), async || {
        chrome.url().await.starts_with("http")
    })
    .await;
    chrome.find("h1").await;
    let refused = chrome.source().await;
    assert!(refused.contains("Refused") || refused.contains("Sign in first"), "{refused}");
    assert_eq!(link_of(&confirm(&agent, &confirm_token).await.1), link, "still waiting: nothing was decided");

    // a person whose very name and group are markup: may not decide, so reads nothing of the
    // request; their name is shown as text, and nothing runs
    let hostile = Chrome::start().await;
    hostile.log_in_at(&link, HOSTILE_LOGIN).await;
    assert_eq!(hostile.text("h1").await, "Not yours to read");
    let said = hostile.text("p").await;
    assert!(said.contains(HOSTILE_LOGIN), "{said}");
    assert!(!hostile.source().await.contains(&sha), "nothing of the request");
    assert_eq!(hostile.run("return typeof window.__hostile;").await, "undefined", "no markup from the ID token ran");
    drop(hostile);

    chrome.goto(&link).await;
    chrome.click("#approve").await;
    let outcome = chrome.text("#outcome").await;
    assert!(outcome.starts_with("Approved by"), "{outcome}");
    assert_eq!(chrome.run("return typeof window.__hostile;").await, "undefined");
    let (_, done) = confirm(&agent, &confirm_token).await;
    assert_eq!(done["executed"], true, "{done}");
    assert_eq!(creates(&server.sim, "connections").await, 1, "exactly one create");
    provider.stop().await;
}

#[tokio::test]
async fn the_official_typescript_sdk_with_url_elicitation_follows_the_link_to_one_create() {
    use crate::harness::webdriver::Chrome;
    use tokio::io::AsyncBufReadExt;
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let propose = json!({"change_type": "connection_create", "spec": connection_spec("ts-sdk-page", 321)});
    let mut sdk = tokio::process::Command::new(node())
        .arg(oauth_dir().join("url-client.mjs"))
        .arg(&public)
        .arg(propose.to_string())
        .env("EQUINIX_MCP_TEST_TOKEN", &token)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let printed = crate::harness::printed::Printed::new("tests/oauth/url-client.mjs");
    printed.collect(sdk.stderr.take().unwrap());
    let mut lines = tokio::io::BufReader::new(sdk.stdout.take().unwrap()).lines();
    let mut next = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await;
        let Ok(Ok(Some(line))) = line else { panic!("the SDK client said nothing more: {line:?}") };
        serde_json::from_str(&line).unwrap()
    };
    let asked = next().await;
    let (link, id) =
        (asked["link"].as_str().unwrap().to_string(), asked["elicitationId"].as_str().unwrap().to_string());
    assert!(link.ends_with(&format!("/approve/{id}")), "{asked}");
    let chrome = Chrome::start().await;
    chrome.sign_in(&link, PROPOSER).await;
    chrome.click("#exact summary").await;
    assert!(chrome.text("#request").await.contains("ts-sdk-page"));
    chrome.click("#approve").await;
    assert!(chrome.text("#outcome").await.starts_with("Approved by"));
    let end = next().await;
    assert_eq!(end["isError"], false, "{end}");
    assert_eq!(end["result"]["executed"], true, "{end}");
    assert_eq!(end["result"]["human_confirmation"]["status"], "accepted", "{end}");
    assert_eq!(end["completed"], json!([id]), "the client heard the approval is complete");
    assert!(sdk.wait().await.unwrap().success());
    assert_eq!(creates(&server.sim, "connections").await, 1, "exactly one create");
    provider.stop().await;
}

/// The sign-in under way lives in its browser's cookie sealed with an AEAD: reading it
/// shows nothing of the sign-in (its `state`, `nonce`, PKCE verifier or page), and a cookie edited
/// by one bit signs nobody in.
#[tokio::test]
async fn the_sign_in_cookie_is_sealed_unreadable_and_unforgeable() {
    use base64::Engine as _;
    let provider = OidcProvider::start().await;
    let (server, public) = serve(&provider, &[]).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let client = server.connect(Some(&token), TestClient::plain(), false).await;
    let proposal = propose_on(&client, "page-sealed", 321).await;
    let confirm_token = proposal["confirm_token"].as_str().unwrap().to_string();
    let link = link_of(&confirm(&client, &confirm_token).await.1);
    let page_id = link.rsplit('/').next().unwrap().to_string();

    let browser = Browser::default();
    let url = reqwest::Url::parse(&format!("{link}/sign-in")).unwrap();
    let started = browser.send(reqwest::Method::GET, &url, None, &[]).await;
    assert_eq!(started.status, 303, "{}", started.body);
    let to_provider = reqwest::Url::parse(&started.header("location")).unwrap();
    let asked: std::collections::HashMap<_, _> = to_provider.query_pairs().into_owned().collect();
    let sealed = browser.cookies_of("127.0.0.1")["equinix-mcp-signin"].clone();
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(&sealed).expect("base64url");
    let shown = String::from_utf8_lossy(&raw);
    // the values, as bytes or in the cookie's text; the field names as bytes (four random base64
    // characters spell `page` too often to look for it in the text)
    for value in [asked["state"].as_str(), &asked["nonce"], &page_id] {
        assert!(!shown.contains(value) && !sealed.contains(value), "the cookie shows {value}");
    }
    for name in ["verifier", "nonce", "state", "page"] {
        assert!(!shown.contains(name), "the cookie shows the field {name}");
    }

    // one bit edited: the sign-in finishes at the provider, and the page refuses it
    let login_page = browser.get(to_provider.as_str()).await;
    let mut edited = raw.clone();
    edited[raw.len() / 2] ^= 1;
    let edited = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&edited);
    browser.set_cookie("127.0.0.1", "equinix-mcp-signin", &edited);
    let refused = browser.log_in(&login_page, PROPOSER).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("holds no sign-in that is still open"), "{}", refused.body);
    assert!(!browser.cookies_of("127.0.0.1").contains_key("equinix-mcp-session"), "nobody is signed in");

    // unedited, the same steps sign the proposer in and the create goes once
    let browser = Browser::default();
    let page = browser.sign_in(&link, PROPOSER).await;
    assert!(page.body.contains("You may decide"), "{}", page.body);
    assert!(browser.decide(&page, "approve").await.body.contains("Approved by"));
    assert_eq!(confirm(&client, &confirm_token).await.1["executed"], true);
    assert_eq!(creates(&server.sim, "connections").await, 1);
    provider.stop().await;
}
