//! The inbox of the approval page: `/approve` lists, for the person signed in, the
//! changes waiting that they may decide, by the operator's four-eyes policy, shared by the store
//! every replica reads; it follows new changes without a reload, works without JavaScript, and a
//! decision taken from it creates once.

use std::time::Duration;

use clap::Parser;
use equinix_mcp::proposals::{IndexKey, MAX_INDEXED, ProposalStore, StoreArgs};
use serde_json::Value;

use crate::approval_page::{connection_at, four_eyes_policy, network_named, replica_args};
use crate::harness::*;

const ALL: &str = "fabric:read fabric:propose fabric:confirm";
const PROPOSER: &str = "full-es256";

#[derive(Parser)]
struct Store {
    #[command(flatten)]
    args: StoreArgs,
}

async fn open(spec: &str) -> ProposalStore {
    let store = Store::parse_from(["store", "--proposal-store", spec]);
    ProposalStore::open(&store.args).await.unwrap_or_else(|e| panic!("{spec}: {e:#}"))
}

fn members(found: &[equinix_mcp::proposals::Indexed]) -> Vec<&str> {
    found.iter().map(|e| e.member.as_str()).collect()
}

/// The same sequence on two handles of one backend (two replicas): newest first, paged, moved,
/// removed, expired, bounded.
async fn one_index_for_every_replica(a: &ProposalStore, b: &ProposalStore, what: &str) {
    let now = 1_000_000;
    for i in 0..5u64 {
        let on = if i % 2 == 0 { a } else { b };
        on.index_put(IndexKey::Waiting, &format!("m{i}"), now + i, now + 60_000, format!("v{i}").as_bytes(), now)
            .await
            .unwrap();
    }
    let all = b.index_newest(IndexKey::Waiting, None, 10, now).await.unwrap();
    assert_eq!(members(&all), ["m4", "m3", "m2", "m1", "m0"], "{what}: either replica's puts, newest first");
    assert_eq!((all[0].at_ms, all[0].value.as_slice()), (now + 4, &b"v4"[..]), "{what}");
    let page = a.index_newest(IndexKey::Waiting, Some(now + 2), 10, now).await.unwrap();
    assert_eq!(members(&page), ["m1", "m0"], "{what}: the next page begins before the last one shown");
    assert_eq!(members(&a.index_newest(IndexKey::Waiting, None, 2, now).await.unwrap()), ["m4", "m3"], "{what}");
    assert!(a.index_newest(IndexKey::Decided, None, 10, now).await.unwrap().is_empty(), "{what}: its own index");
    b.index_remove(IndexKey::Waiting, "m3").await.unwrap();
    a.index_put(IndexKey::Waiting, "m0", now + 9, now + 60_000, b"moved", now).await.unwrap();
    let after = b.index_newest(IndexKey::Waiting, None, 10, now).await.unwrap();
    assert_eq!(members(&after), ["m0", "m4", "m2", "m1"], "{what}: removed, and moved without a double");
    a.index_put(IndexKey::Waiting, "ended", now + 20, now + 1, b"", now).await.unwrap();
    let later = a.index_newest(IndexKey::Waiting, None, 10, now + 2).await.unwrap();
    assert_eq!(members(&later), ["m0", "m4", "m2", "m1"], "{what}: an entry past its end is not read");
}

#[tokio::test]
async fn every_store_keeps_one_inbox_for_every_replica_newest_first_and_bounded() {
    let memory = ProposalStore::new();
    one_index_for_every_replica(&memory, &memory, "memory").await;
    let redis = crate::harness::redis::RedisServer::start();
    let (a, b) = (open(&redis.url(0)).await, open(&redis.url(0)).await);
    one_index_for_every_replica(&a, &b, "redis").await;
    let etcd = crate::harness::etcd::EtcdCluster::start();
    let (c, d) = (open(&etcd.url()).await, open(&etcd.url()).await);
    one_index_for_every_replica(&c, &d, "etcd").await;
    // bounded: a user proposing in a loop cannot grow it past the cap, on any backend
    for (store, what) in [(&memory, "memory"), (&a, "redis"), (&c, "etcd")] {
        let now = 5_000_000;
        use futures_util::StreamExt;
        futures_util::stream::iter(0..MAX_INDEXED as u64 + 3)
            .for_each_concurrent(32, |i| async move {
                let member = format!("n{i}");
                store.index_put(IndexKey::Decided, &member, now + i, now + 600_000, b"", now).await.unwrap()
            })
            .await;
        let kept = store.index_newest(IndexKey::Decided, None, usize::MAX, now).await.unwrap();
        assert_eq!(kept.len(), MAX_INDEXED, "{what}");
        assert_eq!(kept[0].member, format!("n{}", MAX_INDEXED + 2), "{what}: the newest kept");
        assert!(kept.iter().all(|e| !["n0", "n1", "n2"].contains(&e.member.as_str())), "{what}: the oldest went");
    }
}

/// Proposes `change` with `agent` and asks for its confirm: the token and the page's link.
async fn waiting(agent: &Client, change: Value) -> (String, String) {
    let proposed = call_on(agent, "fabric_propose_change", change).await;
    assert!(!is_error(&proposed), "{:?}", proposed.structured_content);
    let token = structured(&proposed)["confirm_token"].as_str().unwrap().to_string();
    let asked = call_on(agent, "fabric_confirm_change", serde_json::json!({"confirm_token": token})).await;
    let asked = structured(&asked);
    assert_eq!(asked["human_confirmation"]["status"], "approval_pending", "{asked}");
    (token, asked["human_confirmation"]["approval_url"].as_str().unwrap().to_string())
}

fn page_id(link: &str) -> &str {
    &link[link.rfind('/').unwrap() + 1..]
}

/// Signs in on `/approve` itself in Chromium: back on the inbox afterwards.
async fn chrome_inbox(base: &str, login: &str) -> crate::harness::webdriver::Chrome {
    let chrome = crate::harness::webdriver::Chrome::start().await;
    chrome.goto(&format!("{base}/approve")).await;
    chrome.click("#sign-in").await;
    chrome.type_into("#login", login).await;
    chrome.type_into("#password", &format!("pw-{login}")).await;
    chrome.click("#submit").await;
    chrome.find("#inbox").await;
    assert_eq!(chrome.url().await, format!("{base}/approve"), "the sign-in returns to the inbox");
    chrome
}

/// The pages of the rows of class `class` in served HTML, in order.
fn rows_in(html: &str, class: &str) -> Vec<String> {
    let marker = format!("<tr class=\"{class}\" data-page=\"");
    html.match_indices(&marker)
        .map(|(at, _)| html[at + marker.len()..].split('"').next().unwrap().to_string())
        .collect()
}

async fn rows(chrome: &crate::harness::webdriver::Chrome, css: &str) -> Vec<String> {
    let script = format!("return [...document.querySelectorAll('{css}')].map(r => r.dataset.page);");
    chrome.run(&script).await.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn two_people_see_only_what_each_may_decide_and_a_decision_from_the_inbox_creates_once() {
    let path = crate::policy::policy_file(&four_eyes_policy());
    let provider = OidcProvider::start().await;
    let redis = crate::harness::redis::RedisServer::start();
    let sim = sim(equinix_fabric_sim::SimConfig::default()).await;
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}/mcp");
    let base = format!("http://127.0.0.1:{port}");
    let args = replica_args(&redis.url(0), &provider.issuer, &public);
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.extend(["--policy", path.to_str().unwrap()]);
    // two replicas: the agent on b, the people's browsers on a, as behind a load balancer
    let a = Launch::serve().against(&sim).args(&args).http(&format!("127.0.0.1:{port}")).await;
    let b = Launch::serve().against(&sim).args(&args).http("127.0.0.1:0").await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let agent = b.connect(Some(&token), TestClient::plain(), false).await;
    // a connection: a second engineer of netops, never the proposer; a network: the proposer or netops
    let (big_token, big) = waiting(&agent, connection_at("inbox-big", 331, 5000)).await;
    let (_, small) = waiting(&agent, network_named("inbox-small")).await;

    // the proposer (a browser without JavaScript: the list is in the page as served): their
    // network to decide, their connection waiting for someone else
    let proposer = Browser::default();
    let theirs = proposer.sign_in(&format!("{base}/approve"), PROPOSER).await.body;
    assert_eq!(rows_in(&theirs, "waiting"), [page_id(&small)]);
    assert_eq!(rows_in(&theirs, "yours"), [page_id(&big)]);
    // their own change links to its page, where they read it and cannot decide it
    assert!(theirs.contains(&format!("href=\"/approve/{}\"", page_id(&big))), "{theirs}");
    let own = proposer.get(&big).await.body;
    assert!(own.contains("You may not decide") && !own.contains("name=\"csrf\""), "{own}");
    // a second engineer: both, newest first, with the plan's summary and who proposed them
    let alice = chrome_inbox(&base, "alice").await;
    assert_eq!(rows(&alice, "tr.waiting").await, [page_id(&small), page_id(&big)]);
    let listed = alice.text("#waiting").await;
    assert!(listed.contains("inbox-big") && listed.contains(PROPOSER), "{listed}");
    // someone outside netops: nothing, and nothing of the changes on the page
    let outsider = Browser::default();
    let theirs = outsider.sign_in(&format!("{base}/approve"), "mallory").await;
    assert!(theirs.body.contains("Nothing waits for your decision"), "{}", theirs.body);
    assert!(!theirs.body.contains("inbox-big") && !theirs.body.contains(page_id(&big)), "{}", theirs.body);
    // without JavaScript: the same list, and the page refreshes itself
    let plain = Browser::default();
    let listed = plain.sign_in(&format!("{base}/approve"), "alice").await;
    assert!(listed.body.contains(page_id(&big)) && listed.body.contains(page_id(&small)), "{}", listed.body);
    assert!(listed.body.contains("<noscript><meta http-equiv=\"refresh\""), "{}", listed.body);

    // a change proposed while alice reads appears without a reload
    alice.run("window.__same_document = true;").await;
    let (_, third) = waiting(&agent, connection_at("inbox-third", 333, 2_000)).await;
    wait::until("the new change in alice's inbox", Duration::from_secs(20), async || {
        rows(&alice, "tr.waiting").await.first().map(String::as_str) == Some(page_id(&third))
    })
    .await;
    assert_eq!(alice.run("return window.__same_document === true;").await, true, "the list changed in place");

    // alice decides the connection from her inbox: its page, the approve, one create
    alice.click(&format!("tr[data-page='{}'] a", page_id(&big))).await;
    assert_eq!(alice.url().await, big);
    alice.click("#approve").await;
    assert!(alice.text("#outcome").await.starts_with("Approved by"));
    let done = call_on(&agent, "fabric_confirm_change", serde_json::json!({"confirm_token": big_token})).await;
    assert_eq!(structured(&done)["executed"], true, "{:?}", done.structured_content);
    assert_eq!(connection_creates(&sim), 1);
    // back in the inbox: no longer waiting, among the latest decisions with who and what
    alice.goto(&format!("{base}/approve")).await;
    assert!(!rows(&alice, "tr.waiting").await.contains(&page_id(&big).to_string()));
    assert_eq!(rows(&alice, "tr.decided").await, [page_id(&big)]);
    let decided = alice.text("#decided").await;
    // where it stands (created, once the agent collected it), decided by "you"
    assert!(decided.contains("Created") && decided.contains("you at") && decided.contains("inbox-big"), "{decided}");
    // the proposer sees the decision on their change too, alice named as her sign-in named her;
    // the outsider does not
    let theirs = proposer.get(&format!("{base}/approve")).await.body;
    assert_eq!(rows_in(&theirs, "decided"), [page_id(&big)]);
    assert!(theirs.contains("<summary>Alice Example (alice@example.com)</summary>"), "{theirs}");
    let created = proposer.get(&format!("{base}/approve?state=created")).await.body;
    assert_eq!(rows_in(&created, "decided"), [page_id(&big)], "read by its state");
    let declined = proposer.get(&format!("{base}/approve?state=declined")).await.body;
    assert!(rows_in(&declined, "decided").is_empty(), "{declined}");
    assert!(!outsider.get(&format!("{base}/approve")).await.body.contains(page_id(&big)));
    // the confirm made again creates nothing more
    let again = call_on(&agent, "fabric_confirm_change", serde_json::json!({"confirm_token": big_token})).await;
    assert_ne!(structured(&again)["executed"], true, "{:?}", again.structured_content);
    assert_eq!(connection_creates(&sim), 1, "a decision from the inbox creates once");
    drop((a, b));
    provider.stop().await;
}

#[tokio::test]
async fn a_local_server_lists_nothing() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let server = Launch::serve().args(&["--toolsets", "metros,mutate", "--approval-listen", &listen]).stdio().await;
    let said = format!("approval page at http://localhost:{port}");
    wait::until("the page's address in the log", wait::WITHIN, async || server.stderr_text().contains(&said)).await;
    let answer = Browser::default().get(&format!("http://localhost:{port}/approve")).await;
    assert_eq!(answer.status, 404, "{}", answer.body);
    assert!(answer.body.contains("lists nothing"), "{}", answer.body);
}

/// A page whose call stopped waiting (the person never decided within the elicitation's time)
/// leaves the inbox: no call would collect a decision made there.
#[tokio::test]
async fn a_page_no_call_waits_on_any_more_leaves_the_inbox() {
    let provider = OidcProvider::start().await;
    let args = ["--approval-client-id", "approval-page", "--elicit-timeout-ms", "3000"];
    let (server, public) = crate::oauth::serve(&provider, &args).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let (person_at_client, mut links) = TestClient::following_links();
    let client = server.connect(Some(&token), person_at_client, false).await;
    let proposal = propose_on(&client, "left-waiting", 341).await;
    let confirming = tokio::spawn(async move {
        call_on(&client, "fabric_confirm_change", serde_json::json!({"confirm_token": proposal["confirm_token"]})).await
    });
    let (link, id) = links.recv().await.expect("the link");
    let base = link[..link.find("/approve/").unwrap()].to_string();
    let person = Browser::default();
    let listed = person.sign_in(&format!("{base}/approve"), PROPOSER).await.body;
    assert_eq!(rows_in(&listed, "waiting"), [id], "{listed}");
    let ended = structured(&confirming.await.unwrap());
    assert_eq!(ended["human_confirmation"]["status"], "timed_out", "{ended}");
    let listed = person.get(&format!("{base}/approve")).await.body;
    assert!(rows_in(&listed, "waiting").is_empty(), "{listed}");
    assert_eq!(creates(&server.sim, "connections").await, 0);
    provider.stop().await;
}
