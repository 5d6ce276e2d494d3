//! `equinix-mcp audit changes PATH...`: one change's story across a team's replicas. A reviewer
//! gives the logs of every replica (files, or folders of them with their rotated files and the
//! checkpoints beside them); the command sorts the files into their chains (a chain's files
//! oldest first), verifies each chain and, with `--public-key`, its checkpoints, then tells per
//! change (a proposal's token) who proposed it, who decided it and how, the approval minted and
//! what the create came to, each with the log and record it was read from. A create with no
//! approval, or an approval on the page with no person's decision in any log given, is an error:
//! that is the reviewer's question the command answers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};

use super::audit_files::{Failure, read_files};
use crate::audit::checkpoints::{check, load_public_key};
use crate::outln;

/// EX_USAGE / EX_NOINPUT of sysexits.h, as `audit verify`.
const USAGE: u8 = 64;
const NO_INPUT: u8 = 66;

/// What the paths hold, each file sorted by its first line: the logs by the chain and first
/// record it names (verified afterwards, chain by chain), and the checkpoint files' text.
#[derive(Default)]
struct Found {
    logs: BTreeMap<String, Vec<(u64, PathBuf)>>,
    checkpoints: Vec<(PathBuf, String)>,
}

/// The files of `paths`: a folder's regular files whose names hold `.jsonl` (rotated ones too,
/// `audit.jsonl.1`, `audit.jsonl-20261205`), and each file named.
fn gather(paths: &[PathBuf]) -> Result<Found, (u8, String)> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| (NO_INPUT, format!("{}: {e}", path.display())))?;
        if !meta.is_dir() {
            files.push(path.clone());
            continue;
        }
        let entries = std::fs::read_dir(path).map_err(|e| (NO_INPUT, format!("{}: {e}", path.display())))?;
        let mut inside: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n.to_string_lossy().contains(".jsonl")))
            .collect();
        inside.sort();
        files.extend(inside);
    }
    let mut found = Found::default();
    for file in files {
        if file.extension().is_some_and(|e| e == "gz" || e == "zst" || e == "xz") {
            return Err((
                NO_INPUT,
                format!("{}: compressed; decompress it first (the chain is checked byte for byte)", file.display()),
            ));
        }
        let text = std::fs::read(&file).map_err(|e| (NO_INPUT, format!("{}: {e}", file.display())))?;
        let first = text.split(|b| *b == b'\n').find(|l| !l.is_empty()).unwrap_or_default();
        let first: Value = serde_json::from_slice(first).unwrap_or(Value::Null);
        if first.get("sig").is_some() && first.get("key_id").is_some() {
            found.checkpoints.push((file, String::from_utf8_lossy(&text).into_owned()));
        } else if let (Some(_), Some(seq)) = (first.get("prev"), first["seq"].as_u64()) {
            // a file begins with the record that opened or reopened its chain; one that lies
            // about it fails the chain's verification below
            let chain = first["chain"].as_str().unwrap_or_default().to_string();
            found.logs.entry(chain).or_default().push((seq, file));
        } else if !text.is_empty() {
            return Err((USAGE, format!("{}: neither an audit log nor its checkpoints", file.display())));
        }
    }
    if found.logs.is_empty() {
        return Err((USAGE, "no audit log among the paths given".into()));
    }
    Ok(found)
}

/// The log files by chain, each chain's files oldest first.
fn chains(logs: BTreeMap<String, Vec<(u64, PathBuf)>>) -> BTreeMap<String, Vec<PathBuf>> {
    logs.into_iter()
        .map(|(chain, mut files)| {
            files.sort();
            (chain, files.into_iter().map(|(_, f)| f).collect())
        })
        .collect()
}

/// Where a record was read: its file and sequence number.
fn at(file: &Path, record: &Value) -> String {
    format!("{} seq {}", file.display(), record["seq"].as_u64().map_or("?".into(), |s| s.to_string()))
}

fn text(record: &Value, key: &str) -> String {
    record[key].as_str().unwrap_or_default().to_string()
}

/// One change's story.
#[derive(Default)]
struct Change {
    token: String,
    change_type: String,
    request_sha256: String,
    proposed: Option<Value>,
    /// The page's decisions that stood.
    decisions: Vec<Value>,
    /// Decisions recorded and then not kept (`page_decision_not_kept`: another was kept first).
    refused: Vec<Value>,
    minted: Vec<Value>,
    sending: Vec<Value>,
    outcomes: Vec<Value>,
    confirms: Vec<Value>,
}

impl Change {
    /// What is wrong with this story, if anything.
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for sent in &self.sending {
            let sha = &sent["request_sha256"];
            let minted = self.minted.iter().find(|m| m["request_sha256"] == *sha);
            match minted {
                None => problems.push(format!(
                    "a create was sent ({}) with no approval minted for it in the logs given",
                    sent["at"].as_str().unwrap_or("?")
                )),
                Some(m) if m["method"] == "page" => {
                    let decided = self.decisions.iter().any(|d| {
                        d["request_sha256"] == *sha && d["decision"] == "approve" && d["approver"] == m["approver"]
                    });
                    if !decided {
                        problems.push(format!(
                            "a create was approved on the page by {} ({}), and no log given holds that person's \
                             decision: a replica's log is missing, or the approval was not a person's",
                            m["approver"].as_str().unwrap_or("nobody"),
                            m["at"].as_str().unwrap_or("?")
                        ));
                    }
                    // under a quorum, every approval it counted is a person's decision of its own
                    for counted in m["approvals"].as_array().into_iter().flatten() {
                        let found = self.decisions.iter().any(|d| {
                            d["decision_id"] == counted["decision_id"]
                                && d["approver"] == counted["approver"]
                                && d["request_sha256"] == *sha
                                && d["decision"] == "approve"
                        });
                        if !found {
                            problems.push(format!(
                                "the quorum of a create approved at {} counted an approval by {} (decision {}) that \
                                 no log given holds: give every replica's log",
                                m["at"].as_str().unwrap_or("?"),
                                counted["approver"].as_str().unwrap_or("nobody"),
                                counted["decision_id"].as_str().unwrap_or("?")
                            ));
                        }
                    }
                }
                Some(_) => {}
            }
        }
        for outcome in &self.outcomes {
            if !self.sending.iter().any(|s| s["request_sha256"] == outcome["request_sha256"]) {
                problems.push(format!(
                    "a create's outcome ({}) has no record of the create being sent: a log is missing",
                    outcome["at"].as_str().unwrap_or("?")
                ));
            }
        }
        problems
    }

    /// Where the change stands as far as the logs given say, named as the approval page, the inbox,
    /// the agent's answer and the notices name it. A decision to approve with nothing after it is
    /// `approved`: the logs cannot tell whether the agent may still collect it or its time ran out.
    fn state(&self) -> &'static str {
        if let Some(last) = self.outcomes.last() {
            return match last["outcome"].as_str() {
                Some("executed") => "created",
                Some("unknown") => "outcome_unknown",
                Some("not_sent") => "not_sent",
                _ => "failed",
            };
        }
        if !self.sending.is_empty() {
            return "sending";
        }
        if !self.minted.is_empty() {
            // minted and never sent: the approval was let go
            return "not_sent";
        }
        match self.decisions.last().and_then(|d| d["decision"].as_str()) {
            Some("decline") => "declined",
            Some(_) => "approved",
            None => "proposed",
        }
    }

    fn json(&self) -> Value {
        json!({
            "token": self.token,
            "state": self.state(),
            "change_type": self.change_type,
            "request_sha256": self.request_sha256,
            "proposed": self.proposed,
            "decisions": self.decisions,
            "refused_decisions": self.refused,
            "approvals": self.minted,
            "creates": self.sending,
            "outcomes": self.outcomes,
            "confirms": self.confirms,
            "problems": self.problems(),
        })
    }

    fn print(&self) {
        outln!("change {} ({}, request sha256 {})", self.token, self.change_type, self.request_sha256);
        match &self.proposed {
            Some(p) => outln!("  proposed  {} by {} [{}]", text(p, "ts"), text(p, "principal"), text(p, "at")),
            None => outln!("  proposed  (not in the logs given)"),
        }
        outln!("  stands    {}", self.state().replace('_', " "));
        for d in &self.decisions {
            let with = if d["passkey"].is_object() { ", with a passkey" } else { "" };
            // the person's words, quoted and one line (the log keeps them exactly)
            let said = match d["reason"].as_str() {
                Some(r) if !r.is_empty() => format!(", saying {:?}", equinix_broker_contract::clip(r, 200)),
                _ => String::new(),
            };
            outln!(
                "  decided   {} {} by {} on the page{with}{said} [{}]",
                text(d, "ts"),
                text(d, "decision"),
                text(d, "approver"),
                text(d, "at")
            );
        }
        for d in &self.refused {
            outln!(
                "  refused   {} {} by {} on the page, not kept: {} [{}]",
                text(d, "ts"),
                text(d, "decision"),
                text(d, "approver"),
                text(d, "not_kept"),
                text(d, "at")
            );
        }
        for m in &self.minted {
            let by = m["approver"].as_str().map(|a| format!(" by {a}")).unwrap_or_default();
            outln!("  approved  {} {}{by} [{}]", text(m, "ts"), text(m, "method"), text(m, "at"));
        }
        for s in &self.sending {
            outln!("  create    {} sent {} [{}]", text(s, "ts"), text(s, "request"), text(s, "at"));
        }
        for o in &self.outcomes {
            let status = o["http_status"].as_u64().map(|s| format!(" (HTTP {s})")).unwrap_or_default();
            let uuid = o["fabric_uuid"].as_str().map(|u| format!(", uuid {u}")).unwrap_or_default();
            outln!("  outcome   {} {}{status}{uuid} [{}]", text(o, "ts"), text(o, "outcome"), text(o, "at"));
        }
        if self.sending.is_empty() {
            let last = self.confirms.last();
            let said = last.map(|c| {
                let kind = c["error_kind"]
                    .as_str()
                    .or(c["human_status"].as_str())
                    .unwrap_or(c["outcome"].as_str().unwrap_or("?"));
                format!("last confirm {}: {kind}", text(c, "ts"))
            });
            outln!("  no create  ({})", said.unwrap_or_else(|| "never confirmed".into()));
        }
        for problem in self.problems() {
            outln!("  ERROR: {problem}");
        }
    }
}

/// Files each record under its change. A page decision that a `page_decision_not_kept` record (in
/// any log given) says the store did not keep is filed as refused, with that record's reason: it
/// decided nothing, and no count of decisions includes it.
fn collate(records: &[(PathBuf, Value)]) -> BTreeMap<String, Change> {
    let not_kept: BTreeMap<&str, (&str, String)> = records
        .iter()
        .filter(|(_, r)| r["event"] == "page_decision_not_kept")
        .filter_map(|(file, r)| Some((r["decision_id"].as_str()?, (r["reason"].as_str().unwrap_or(""), at(file, r)))))
        .collect();
    let mut changes: BTreeMap<String, Change> = BTreeMap::new();
    for (file, record) in records {
        let mut r = record.clone();
        r["at"] = json!(at(file, record));
        let event = record["event"].as_str();
        let token = match event {
            None => record["confirm_token"].as_str(),
            Some(_) => record["token"].as_str(),
        };
        let Some(token) = token.map(str::to_string) else { continue };
        let change = changes.entry(token.clone()).or_insert_with(|| Change { token, ..Change::default() });
        if change.request_sha256.is_empty()
            && let Some(sha) = record["request_sha256"].as_str()
        {
            change.request_sha256 = sha.to_string();
        }
        if change.change_type.is_empty()
            && let Some(t) = record["change_type"].as_str()
        {
            change.change_type = t.to_string();
        }
        match (event, record["tool"].as_str()) {
            (None, Some("fabric_propose_change")) if record["outcome"] == "ok" => change.proposed = Some(r),
            (None, Some("fabric_confirm_change")) => change.confirms.push(r),
            (Some("page_decision"), _) => match record["decision_id"].as_str().and_then(|id| not_kept.get(id)) {
                Some((reason, marked_at)) => {
                    r["not_kept"] = json!(format!("{reason} ({marked_at})"));
                    change.refused.push(r)
                }
                None => change.decisions.push(r),
            },
            (Some("approval_minted"), _) => change.minted.push(r),
            (Some("create_sending"), _) => change.sending.push(r),
            (Some("create_outcome"), _) => change.outcomes.push(r),
            _ => {}
        }
    }
    changes
}

pub(crate) fn run(paths: &[PathBuf], public_key: Option<&Path>, as_json: bool) -> ExitCode {
    let found = match gather(paths) {
        Ok(f) => f,
        Err((code, why)) => {
            eprintln!("equinix-mcp audit changes: {why}");
            return ExitCode::from(code);
        }
    };
    let key = match public_key.map(load_public_key).transpose() {
        Ok(k) => k,
        Err(e) => {
            eprintln!("equinix-mcp audit changes: {e:#}");
            return ExitCode::from(USAGE);
        }
    };
    if key.is_some() && found.checkpoints.is_empty() {
        eprintln!("equinix-mcp audit changes: --public-key is given, but no checkpoints file among the paths");
        return ExitCode::from(USAGE);
    }
    let checkpoints = found.checkpoints;
    let by_chain = chains(found.logs);
    let mut broken = false;
    let mut records = Vec::new();
    for (chain, files) in &by_chain {
        let shown: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let read = match read_files(files) {
            Ok((read, None)) => read,
            Ok((read, Some((_, bytes)))) => {
                outln!("chain {chain} ({}): its last {bytes} bytes are a torn record, left out", shown.join(", "));
                read
            }
            Err(Failure::Broken(why) | Failure::Unreadable(why)) => {
                outln!("chain {chain}: {why}");
                broken = true;
                continue;
            }
        };
        let mut vouched = String::new();
        if let Some(key) = &key {
            // each checkpoints file skips other chains' checkpoints; one of them must vouch for this chain
            let mut agreed = None;
            let mut refusals = Vec::new();
            for (file, text) in &checkpoints {
                match check(text, key, &read.chain, read.first_seq, &read.hashes) {
                    Ok(n) => agreed = Some((file.clone(), n)),
                    Err(why) => refusals.push(format!("{}: {why}", file.display())),
                }
            }
            match agreed {
                Some((file, n)) if refusals.iter().all(|r| r.contains("no checkpoint vouches")) => {
                    vouched = format!(", {n} checkpoints of {} agree", file.display())
                }
                _ => {
                    outln!("chain {chain} ({}): BROKEN: {}", shown.join(", "), refusals.join("; "));
                    broken = true;
                    continue;
                }
            }
        }
        let earlier = match read.first_seq {
            0 => String::new(),
            n => format!(" (it starts at record {n}: the files before it, rotated away, were not given)"),
        };
        outln!(
            "chain {chain}: intact, {} records (seq {}-{}) in {}{vouched}{earlier}",
            read.records,
            read.first_seq,
            read.last_seq,
            shown.join(", ")
        );
        for file in files {
            let Ok(bytes) = std::fs::read(file) else { continue };
            for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                if let Ok(record) = serde_json::from_slice::<Value>(line) {
                    records.push((file.clone(), record));
                }
            }
        }
    }
    // the changes in the order they were proposed (then by token)
    let changes = collate(&records);
    let mut ordered: Vec<&Change> = changes.values().collect();
    ordered.sort_by_key(|c| (c.proposed.as_ref().map(|p| text(p, "ts")).unwrap_or_default(), c.token.clone()));
    let mut problems = 0;
    for change in &ordered {
        problems += change.problems().len();
        if as_json {
            outln!("{}", change.json());
        } else {
            change.print();
        }
    }
    let created = ordered.iter().filter(|c| c.outcomes.iter().any(|o| o["outcome"] == "executed")).count();
    let stood: usize = ordered.iter().map(|c| c.decisions.len()).sum();
    let refused: usize = ordered.iter().map(|c| c.refused.len()).sum();
    outln!(
        "{} changes, {created} created, {stood} decisions stood ({refused} refused, not kept), {} chains{}; {problems} \
         problems",
        ordered.len(),
        by_chain.len(),
        if broken { " (some BROKEN)" } else { "" }
    );
    if broken || problems > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(event: &str, fields: Value) -> (PathBuf, Value) {
        let mut r = json!({"event": event, "seq": 1, "ts": "2026-12-06T00:00:00Z"});
        r.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        (PathBuf::from("a/audit.jsonl"), r)
    }

    #[test]
    fn a_decision_the_page_did_not_keep_is_refused_not_counted_and_cannot_stand_for_an_approval() {
        let decision = |id: &str, who: &str, decision: &str| {
            record(
                "page_decision",
                json!({"token": "chg-1", "decision_id": id, "approver": who, "decision": decision,
                       "request_sha256": "ab"}),
            )
        };
        let records = vec![
            decision("d-1", "i#bob", "decline"),
            decision("d-2", "i#alice", "approve"),
            record(
                "page_decision_not_kept",
                json!({"page": "apv-1", "decision_id": "d-2", "approver": "i#alice",
                       "reason": "another decision on this page was kept first"}),
            ),
            record(
                "approval_minted",
                json!({"token": "chg-1", "method": "page", "approver": "i#alice", "request_sha256": "ab"}),
            ),
            record("create_sending", json!({"token": "chg-1", "request_sha256": "ab"})),
        ];
        let changes = collate(&records);
        let change = &changes["chg-1"];
        assert_eq!(change.decisions.len(), 1, "bob's decline stood");
        assert_eq!(change.decisions[0]["approver"], "i#bob");
        assert_eq!(change.refused.len(), 1, "alice's approve was refused");
        assert!(change.refused[0]["not_kept"].as_str().unwrap().contains("kept first"), "{:?}", change.refused);
        let problems = change.problems();
        assert!(
            problems.iter().any(|p| p.contains("no log given holds that person's decision")),
            "a refused approval stands for no create: {problems:?}"
        );
        assert_eq!(change.json()["refused_decisions"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn each_change_stands_where_the_page_says_it_stands() {
        let decided = |decision: &str| {
            record(
                "page_decision",
                json!({"token": "chg-1", "decision_id": "d", "approver": "i#bob", "decision": decision,
                       "request_sha256": "ab", "reason": "wrong metro"}),
            )
        };
        let minted = record("approval_minted", json!({"token": "chg-1", "method": "page", "request_sha256": "ab"}));
        let sent = record("create_sending", json!({"token": "chg-1", "request_sha256": "ab"}));
        let outcome =
            |o: &str| record("create_outcome", json!({"token": "chg-1", "request_sha256": "ab", "outcome": o}));
        let cases = [
            (vec![], "proposed"),
            (vec![decided("decline")], "declined"),
            (vec![decided("approve")], "approved"),
            (vec![decided("approve"), minted.clone()], "not_sent"),
            (vec![decided("approve"), minted.clone(), sent.clone()], "sending"),
            (vec![decided("approve"), minted.clone(), sent.clone(), outcome("executed")], "created"),
            (vec![decided("approve"), minted.clone(), sent.clone(), outcome("rejected")], "failed"),
            (vec![decided("approve"), minted.clone(), sent.clone(), outcome("unknown")], "outcome_unknown"),
        ];
        for (records, state) in cases {
            let mut all = vec![record("tool_call", json!({"tool": "fabric_propose_change", "token": "chg-1"}))];
            all.extend(records);
            let changes = collate(&all);
            let stands = changes.get("chg-1").map_or("proposed", Change::state);
            assert_eq!(stands, state, "{all:?}");
        }
    }
}
