//! Every client is sent only what it declared it can show, on both protocol generations, and
//! where the operator's policy allows a create only on the approval page it is sent there rather
//! than refused: both protocol generations x what the client declared (form, URL, none) x an
//! approval page or not x the docs' four-eyes policy (a connection only on the page, by a second
//! engineer of netops) or none. Every case proposes a 10 Mbps connection (dozens fit the seeded
//! ports, whose use the simulator counts) and ends on the simulator's create count.

use std::sync::Arc;

use crate::approval_page::{connection_at, four_eyes_policy};
use crate::harness::*;
use serde_json::{Value, json};

const ALL: &str = "fabric:read fabric:propose fabric:confirm";
const PROPOSER: &str = "full-es256";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Declares {
    Form,
    Url,
    Nothing,
}

/// How a case ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ends {
    /// The client's own form approves: one create.
    InTheForm,
    /// A person approves on the page (reached however this client can): one create.
    OnThePage,
    /// Nobody can approve it here: nothing is created.
    Nowhere,
}

/// What the matrix expects of a case.
fn expected(declares: Declares, page: bool, policy: bool) -> Ends {
    match (declares, page, policy) {
        (Declares::Form, false, false) | (Declares::Form, true, false) => Ends::InTheForm,
        (Declares::Form, false, true) => Ends::Nowhere,
        (_, true, _) => Ends::OnThePage,
        (_, false, _) => Ends::Nowhere,
    }
}

fn link_in(text: &str) -> Option<String> {
    let at = text.find("http://")?;
    let link: String = text[at..].chars().take_while(|c| !c.is_whitespace() && *c != ',').collect();
    link.contains("/approve/apv-").then(|| link.trim_end_matches('.').to_string())
}

/// Approves `link` on the page as the person the policy lets decide.
async fn approve(link: &str, policy: bool) {
    // without a policy only the proposer's own sign-in decides; the four-eyes policy wants a
    // second engineer of netops
    let person = if policy { "alice" } else { PROPOSER };
    let browser = Browser::default();
    let page = browser.sign_in(link, person).await;
    assert!(page.body.contains("You may decide"), "{person} on {link}: {}", page.body);
    assert!(browser.decide(&page, "approve").await.body.contains("Approved by"));
}

/// The confirm of `token`, made on `client`'s connection by a task of its own (the client runs
/// any 2026-07-28 input rounds itself).
fn in_background(client: &Arc<Client>, token: String) -> tokio::task::JoinHandle<Value> {
    let client = client.clone();
    tokio::spawn(async move { confirm_on(&client, &token).await })
}

async fn confirm_on(client: &Client, token: &str) -> Value {
    structured(&call_on(client, "fabric_confirm_change", json!({"confirm_token": token})).await)
}

/// One case: a client of `declares` (stateless or not) proposes a connection and confirms.
async fn case(server: &HttpServer, token: &str, stateless: bool, declares: Declares, page: bool, policy: bool, n: u64) {
    let label = format!("{}/{declares:?}/page {page}/policy {policy}", if stateless { "2026-07-28" } else { "2025" });
    let before = creates(&server.sim, "connections").await;
    let ends = expected(declares, page, policy);
    // before any token is spent, the propose result's next step says what this client's confirm will do
    let told = match (declares, page) {
        (Declares::Form, _) => "shows the person a form",
        (Declares::Url, true) => "opens the approval page",
        (Declares::Nothing, true) => "approval_pending",
        (_, false) => "Do not call fabric_confirm_change",
    };
    let proposal = async |client: &Client| {
        let r = call_on(client, "fabric_propose_change", connection_at(&format!("matrix-{n}"), 400 + n, 10)).await;
        assert!(!is_error(&r), "{:?}", r.structured_content);
        let out = structured(&r);
        assert!(out["next_step"].as_str().unwrap().contains(told), "{label}: {out}");
        out["confirm_token"].as_str().unwrap().to_string()
    };
    match declares {
        Declares::Form => {
            let read = Arc::new(tokio::sync::Semaphore::new(0));
            let person = TestClient::answering(Answer::AcceptWhen(read.clone()));
            let client = Arc::new(server.connect(Some(token), person.clone(), stateless).await);
            let confirm_token = proposal(&client).await;
            let confirming = in_background(&client, confirm_token);
            let done = if ends == Ends::Nowhere {
                confirming.await.unwrap()
            } else {
                let prompt = wait::until_some(&format!("{label}: the form"), wait::WITHIN, async || {
                    person.prompt_texts().into_iter().next()
                })
                .await;
                match (ends, link_in(&prompt)) {
                    (Ends::OnThePage, Some(link)) => approve(&link, policy).await,
                    (Ends::OnThePage, None) => panic!("{label}: the form names no page: {prompt}"),
                    (_, Some(link)) => panic!("{label}: sent to the page ({link}) where the form suffices"),
                    _ => {}
                }
                read.add_permits(8);
                confirming.await.unwrap()
            };
            check(&label, ends, &done);
        }
        Declares::Url => {
            let (mut person, mut links) = TestClient::following_links();
            let read = Arc::new(tokio::sync::Semaphore::new(0));
            if stateless {
                person.done = Some(read.clone());
            }
            let client = Arc::new(server.connect(Some(token), person, stateless).await);
            let confirm_token = proposal(&client).await;
            let confirming = in_background(&client, confirm_token);
            if ends == Ends::OnThePage {
                let (link, _) = links.recv().await.expect("a link arrives");
                approve(&link, policy).await;
                read.add_permits(8);
            }
            check(&label, ends, &confirming.await.unwrap());
        }
        Declares::Nothing => {
            let client = server.connect(Some(token), TestClient::plain(), stateless).await;
            let confirm_token = proposal(&client).await;
            let first = confirm_on(&client, &confirm_token).await;
            if ends == Ends::OnThePage {
                assert_eq!(first["human_confirmation"]["status"], "approval_pending", "{label}: {first}");
                let link = first["human_confirmation"]["approval_url"].as_str().unwrap();
                approve(link, policy).await;
                check(&label, ends, &confirm_on(&client, &confirm_token).await);
            } else {
                check(&label, ends, &first);
            }
        }
    }
    let made = creates(&server.sim, "connections").await - before;
    assert_eq!(made, u64::from(ends != Ends::Nowhere), "{label}: {ends:?}");
}

fn check(label: &str, ends: Ends, result: &Value) {
    match ends {
        Ends::Nowhere => assert_ne!(result["executed"], true, "{label}: {result}"),
        _ => assert_eq!(result["executed"], true, "{label}: {result}"),
    }
}

async fn matrix(page: bool, policy: bool, first: u64) {
    let provider = OidcProvider::start().await;
    let policy_file = crate::policy::policy_file(&four_eyes_policy());
    let mut args = vec![];
    if page {
        args.extend(["--approval-client-id", "approval-page"]);
    }
    if policy {
        args.extend(["--policy", policy_file.to_str().unwrap()]);
    }
    let (server, public) = crate::oauth::serve(&provider, &args).await;
    let token = provider.token(PROPOSER, ALL, &public).await;
    let mut n = first;
    for stateless in [false, true] {
        for declares in [Declares::Form, Declares::Url, Declares::Nothing] {
            case(&server, &token, stateless, declares, page, policy, n).await;
            n += 1;
        }
    }
    provider.stop().await;
}

#[tokio::test]
async fn without_a_page_or_a_policy_only_a_form_reaches_a_person() {
    matrix(false, false, 0).await;
}

#[tokio::test]
async fn without_a_page_a_policy_that_wants_one_lets_nobody_approve() {
    matrix(false, true, 10).await;
}

#[tokio::test]
async fn with_a_page_every_client_reaches_a_person() {
    matrix(true, false, 20).await;
}

#[tokio::test]
async fn with_a_page_and_a_policy_that_wants_it_every_client_is_sent_there() {
    matrix(true, true, 30).await;
}
