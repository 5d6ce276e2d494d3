//! The operator's page says what the server says. `docs/deploying.md`'s tables of
//! metrics and health answers are read here and compared with a real server's `/metrics`,
//! `/readyz` and `/readyz/mutations` in each state the tables name: a memory store and a shared
//! one, the store answering, down, demoted to a replica, and the drain.

use std::collections::{BTreeMap, BTreeSet};

use crate::harness::redis::RedisServer;
use crate::harness::*;
use serde_json::json;

const DEPLOYING: &str = include_str!("../../../docs/deploying.md");

/// The rows of the markdown table whose header row begins with `first`: each row's cells.
fn table(first: &str) -> Vec<Vec<String>> {
    let mut lines = DEPLOYING.lines().map(str::trim).skip_while(|l| !l.starts_with(&format!("| {first} |")));
    lines.next().unwrap_or_else(|| panic!("docs/deploying.md has a table headed `{first}`"));
    lines
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
        .collect()
}

/// The `code` spans of `text`, a span broken over lines read as one line.
fn spans(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ")).collect()
}

/// The documented metrics: each family's name and, per label, the values listed (empty when the
/// docs describe the values instead of listing them).
fn documented_metrics() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut out = BTreeMap::new();
    for row in table("metric") {
        let name = spans(&row[0]).into_iter().next().expect("a metric name in code");
        let mut labels = BTreeMap::new();
        // `a`, `b` (`v1`, `v2`): the labels are the spans before a part's parentheses, and the
        // values listed in them are the last label's; what follows them describes
        for part in row[1].split("), ") {
            let (before, inside) = part.split_once('(').unwrap_or((part, ""));
            let names = spans(before);
            let values: BTreeSet<String> = spans(inside.split(')').next().unwrap()).into_iter().collect();
            for (i, label) in names.iter().enumerate() {
                let listed = if i + 1 == names.len() && values.len() > 1 { values.clone() } else { BTreeSet::new() };
                labels.insert(label.clone(), listed);
            }
        }
        out.insert(name, labels);
    }
    out
}

/// The families of a classic-format scrape, each with the label names and values of its samples.
fn scraped(text: &str) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let mut out: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for line in text.lines() {
        if let Some(family) = line.strip_prefix("# TYPE ") {
            out.entry(family.split(' ').next().unwrap().to_string()).or_default();
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let Some((series, _)) = line.rsplit_once(' ') else { continue };
        let (name, labels) = series.split_once('{').unwrap_or((series, ""));
        let family = out
            .keys()
            .filter(|f| name.starts_with(f.as_str()))
            .max_by_key(|f| f.len())
            .unwrap_or_else(|| panic!("a sample of no family: {line}"))
            .clone();
        for pair in labels.trim_end_matches('}').split(',').filter(|p| !p.is_empty()) {
            let (label, value) = pair.split_once('=').unwrap();
            if label == "le" {
                continue; // a histogram's buckets
            }
            out.get_mut(&family).unwrap().entry(label.into()).or_default().insert(value.trim_matches('"').into());
        }
    }
    out
}

/// Every family and label scraped is documented, with a documented value; every documented
/// family without labels is exported (a labelled one appears with its first series), and the
/// pending-proposal gauge exactly where the store is not shared.
fn assert_metrics_documented(text: &str, shared_store: bool) {
    let documented = documented_metrics();
    let scraped = scraped(text);
    for family in scraped.keys() {
        assert!(documented.contains_key(family), "{family} is exported but not in docs/deploying.md's table");
    }
    let pending = "equinix_mcp_pending_proposals";
    for family in documented.iter().filter(|(f, labels)| labels.is_empty() && *f != pending).map(|(f, _)| f) {
        assert!(scraped.contains_key(family), "{family} is documented but not exported:\n{text}");
    }
    assert_eq!(scraped.contains_key(pending), !shared_store, "{text}");
    for (family, labels) in &scraped {
        let documented = &documented[family];
        for (label, values) in labels {
            let listed =
                documented.get(label).unwrap_or_else(|| panic!("{family}'s label `{label}` is not documented"));
            for value in values.iter().filter(|_| !listed.is_empty()) {
                assert!(label == "tool" || listed.contains(value), "{family}{{{label}=\"{value}\"}} is not documented");
            }
        }
    }
}

/// The documented answers of the health table: (path, each `STATUS body` it may give), and the
/// reasons `WHY` stands for.
fn documented_answers() -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let answers = table("probe")
        .into_iter()
        .map(|row| (spans(&row[0])[0].trim_start_matches("GET ").to_string(), spans(&row[1])))
        .collect();
    let at = DEPLOYING.find("WHY is one of").expect("the reasons WHY stands for");
    let sentence = &DEPLOYING[at..at + DEPLOYING[at..].find("; the log").unwrap()];
    (answers, spans(sentence))
}

async fn assert_answer_documented(base: &str, path: &str) -> String {
    let (answers, reasons) = documented_answers();
    let r = http().get(format!("{base}{path}")).send().await.unwrap();
    let said = format!("{} {}", r.status().as_u16(), r.text().await.unwrap().trim_end());
    let allowed = &answers[path];
    let documented = allowed.iter().any(|a| match a.contains("WHY") {
        true => reasons.iter().any(|why| a.replace("WHY", why) == said),
        false => *a == said,
    });
    assert!(documented, "{path} answered `{said}`, which docs/deploying.md does not list ({allowed:?}, {reasons:?})");
    said
}

pub(crate) async fn metrics_of(server: &HttpServer) -> String {
    let said = server.stderr_text();
    let at = said.find("Prometheus metrics at ").expect("the metrics line is logged") + "Prometheus metrics at ".len();
    let url = said[at..].split_whitespace().next().unwrap().to_string();
    http().get(url).send().await.unwrap().text().await.unwrap()
}

#[tokio::test]
async fn the_metrics_and_health_answers_are_the_ones_docs_deploying_lists() {
    // the memory store: every family, the pending gauge among them, after calls that label them
    let args = ["--toolsets", "metros,mutate", "--metrics-listen", "127.0.0.1:0", "--shutdown-grace-ms", "4000"];
    let server = Launch::serve().args(&args).http("127.0.0.1:0").await;
    let client = server.connect(None, TestClient::accepting(), false).await;
    assert!(!is_error(&call_on(&client, "fabric_list_metros", json!({"limit": 1})).await));
    let proposal = propose_on(&client, "docs-match", 3301).await;
    let r = call_on(&client, "fabric_confirm_change", json!({"confirm_token": proposal["confirm_token"]})).await;
    assert_eq!(structured(&r)["executed"], true, "{:?}", r.structured_content);
    let text = metrics_of(&server).await;
    assert!(text.contains("equinix_mcp_creates_total{outcome=\"executed\"} 1"), "{text}");
    assert_metrics_documented(&text, false);
    let base = server.url.trim_end_matches("/mcp").to_string();
    assert_eq!(assert_answer_documented(&base, "/healthz").await, "200 ok");
    assert_eq!(assert_answer_documented(&base, "/readyz").await, "200 ready");
    assert_eq!(assert_answer_documented(&base, "/readyz/mutations").await, "200 ready");
    // the drain, held open by a confirmation nobody answers
    let person = TestClient::answering(Answer::Never);
    let waiting = server.connect(None, person.clone(), false).await;
    let held = propose_on(&waiting, "docs-held", 3302).await;
    let pending = tokio::spawn(async move {
        call_on(&waiting, "fabric_confirm_change", json!({"confirm_token": held["confirm_token"]})).await
    });
    wait_until("the form is open", async || !person.prompt_texts().is_empty()).await;
    server.terminate();
    wait::until("the drain to begin", wait::WITHIN, async || {
        http().get(format!("{base}/readyz")).send().await.is_ok_and(|r| r.status().as_u16() == 503)
    })
    .await;
    assert_eq!(assert_answer_documented(&base, "/readyz").await, "503 draining");
    assert_eq!(assert_answer_documented(&base, "/readyz/mutations").await, "503 draining");
    pending.abort();
    drop(client);
    drop(server);

    // a shared store: answering, demoted to a replica, down
    let mut redis = RedisServer::start();
    let store = redis.url(0);
    let args = ["--toolsets", "metros,mutate", "--metrics-listen", "127.0.0.1:0", "--proposal-store", &store];
    let server = Launch::serve().args(&args).http("127.0.0.1:0").await;
    let base = server.url.trim_end_matches("/mcp").to_string();
    // a shared store and no state key of its own: each replica would draw its own, and is told
    assert!(server.stderr_text().contains("the proposal store is shared but no state key is set"));
    assert_metrics_documented(&metrics_of(&server).await, true);
    assert_eq!(assert_answer_documented(&base, "/readyz").await, "200 ready");
    redis.replica_of(Some(free_port()));
    let demoted = "proposal store is a read-only replica";
    assert_eq!(assert_answer_documented(&base, "/readyz").await, format!("200 ready; creates fail closed: {demoted}"));
    assert_eq!(assert_answer_documented(&base, "/readyz/mutations").await, format!("503 {demoted}"));
    redis.replica_of(None);
    redis.stop();
    assert_eq!(assert_answer_documented(&base, "/readyz/mutations").await, "503 proposal store unreachable");
    assert_answer_documented(&base, "/readyz").await;
    assert_metrics_documented(&metrics_of(&server).await, true);
}
