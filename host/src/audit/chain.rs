//! The audit log's hash chain. Every record starts with its sequence number and the SHA-256 of
//! the previous record's exact bytes (its line without the newline):
//!
//! ```text
//! {"seq":41,"prev":"9f2c…","ts":"…","tool":"fabric_propose_change","principal":"alice",…}
//! ```
//!
//! Each process that opens the log first appends a start record (`audit_log_opened`: the
//! server instance, the time, the chain's id), and a log reopened after a rotation starts with
//! `audit_log_reopened` naming the previous file's head. Editing, inserting, removing or
//! reordering a record breaks the chain at that record; cutting the end off does not, which is
//! what signed checkpoints kept elsewhere are for (see [`crate::audit::checkpoints`]).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The `prev` of a chain's first record.
pub(crate) const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Where the next record goes: its sequence number, the hash it must name, the chain's id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub id: String,
    pub next_seq: u64,
    pub prev: String,
}

/// The SHA-256 of a record's line (without its newline), in hex.
pub(crate) fn digest(line: &str) -> String {
    hex::encode(Sha256::digest(line.as_bytes()))
}

impl Chain {
    /// A new chain with a fresh id.
    pub fn fresh() -> Chain {
        Chain { id: hex::encode(rand::random::<[u8; 16]>()), next_seq: 0, prev: GENESIS.to_string() }
    }

    /// `record` (one JSON object on one line, no newline) as the chain's next line, with its
    /// newline; the chain moves on only by [`Chain::advance`], once the line is written.
    pub fn link(&self, record: &str) -> String {
        let rest = record.strip_prefix('{').unwrap_or(record);
        let sep = if rest.starts_with('}') { "" } else { "," };
        format!("{{\"seq\":{},\"prev\":\"{}\"{sep}{rest}\n", self.next_seq, self.prev)
    }

    /// Moves past `line` (what [`Chain::link`] returned), written.
    pub fn advance(&mut self, line: &str) {
        self.prev = digest(line.strip_suffix('\n').unwrap_or(line));
        self.next_seq += 1;
    }
}

/// What opening an existing log found at its end.
#[derive(Debug, Default)]
pub(crate) struct Resumed {
    /// The chain to continue (`None`: an empty file, or one written before the chain).
    pub chain: Option<Chain>,
    /// Bytes after the last newline, cut off: a record torn by a crash mid-write (never
    /// acknowledged: a record returns only once its whole line is synced). Their length and hash.
    pub(crate) torn_tail: Option<(u64, String)>,
    /// The file holds lines that carry no chain (written before it).
    pub(crate) unchained: bool,
}

/// Reads where the log at `file` ends (its first line for the chain's id, its last complete
/// line for the sequence and hash) and cuts a torn tail off.
pub(crate) fn resume(file: &mut File) -> std::io::Result<Resumed> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(Resumed::default());
    }
    let tail_start = len.saturating_sub(256 << 10);
    file.seek(SeekFrom::Start(tail_start))?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail)?;
    let mut resumed = Resumed::default();
    let complete = match tail.iter().rposition(|b| *b == b'\n') {
        Some(end) => end + 1,
        None if tail_start == 0 => 0,
        None => return Err(std::io::Error::other("the audit log's last 256 KiB hold no complete record")),
    };
    if complete < tail.len() {
        let torn = &tail[complete..];
        resumed.torn_tail = Some((torn.len() as u64, hex::encode(Sha256::digest(torn))));
        file.set_len(tail_start + complete as u64)?;
        file.sync_data()?;
    }
    let lines = &tail[..complete];
    let body = lines.strip_suffix(b"\n").unwrap_or_default();
    if tail_start > 0 && !body.contains(&b'\n') {
        return Err(std::io::Error::other(
            "the audit log's last record is longer than 256 KiB: not a log this server wrote",
        ));
    }
    let last = body.rsplit(|b| *b == b'\n').next().unwrap_or_default();
    let last = String::from_utf8_lossy(last);
    let record: Value = serde_json::from_str(&last).unwrap_or_default();
    let Some(seq) = record["seq"].as_u64() else {
        resumed.unchained = !last.is_empty();
        return Ok(resumed);
    };
    file.seek(SeekFrom::Start(0))?;
    let mut first = Vec::new();
    std::io::BufRead::read_until(&mut std::io::BufReader::new(file.take(64 << 10)), b'\n', &mut first)?;
    let start: Value = serde_json::from_slice(first.strip_suffix(b"\n").unwrap_or(&first)).unwrap_or_default();
    let id = start["chain"].as_str().map(str::to_string).unwrap_or_else(|| Chain::fresh().id);
    let next_seq =
        seq.checked_add(1).ok_or_else(|| std::io::Error::other("the audit log's last seq is the largest there is"))?;
    resumed.chain = Some(Chain { id, next_seq, prev: digest(&last) });
    Ok(resumed)
}

/// What `audit verify` concludes about one log file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every record links to the one before; `head` is the last record's hash.
    Intact {
        records: u64,
        first_seq: u64,
        last_seq: u64,
        head: String,
        chain: String,
        /// The hash the first record names: GENESIS, or (a rotated file) the previous file's head.
        first_prev: String,
        hashes: Vec<String>,
    },
    /// The record at `line` (1-based) breaks the chain, for `why`.
    Broken { line: usize, why: String },
    /// The records verify up to `last_good_seq`, then the file ends inside a record (a crash
    /// mid-write, or a cut): `bytes` of it.
    TornTail { last_good_seq: Option<u64>, bytes: usize, intact: Box<Verdict> },
}

/// Checks the chain of one log file's bytes.
pub(crate) fn verify(bytes: &[u8]) -> Verdict {
    let (body, torn) = match bytes.iter().rposition(|b| *b == b'\n') {
        Some(end) => (&bytes[..=end], &bytes[end + 1..]),
        None => (&bytes[..0], bytes),
    };
    let mut previous: Option<(u64, String)> = None;
    let (mut first_seq, mut chain, mut records) = (None, String::new(), 0u64);
    let mut hashes = Vec::new();
    // the piece after the final newline is empty, and no line
    let mut lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
    lines.pop();
    let mut first_prev = String::new();
    for (i, raw) in lines.into_iter().enumerate() {
        let line_no = i + 1;
        let broken = |why: String| Verdict::Broken { line: line_no, why };
        let Ok(text) = std::str::from_utf8(raw) else {
            return broken("the line is not UTF-8".into());
        };
        let record: Value = match serde_json::from_str(text) {
            Ok(Value::Object(m)) => Value::Object(m),
            _ => return broken("the line is not a JSON object (edited, or a record was cut and joined)".into()),
        };
        let (Some(seq), Some(prev)) = (record["seq"].as_u64(), record["prev"].as_str()) else {
            return broken("the record carries no seq and prev: it is not part of a chain".into());
        };
        match &previous {
            None => {
                // a log starts at record 0; a rotated file with the reopening record that names
                // the last file's head (checked against that file by verifying the files in turn)
                match record["event"].as_str() {
                    Some("audit_log_opened") if seq == 0 && prev == GENESIS => {}
                    Some("audit_log_reopened") if seq > 0 && record["previous_file_head"] == prev => {}
                    _ => {
                        return broken(format!(
                            "the file starts with record {seq}, which is neither a log's first record (an \
                             audit_log_opened at seq 0) nor a rotated file's (audit_log_reopened): its beginning was \
                             cut or edited"
                        ));
                    }
                }
                first_seq = Some(seq);
                first_prev = prev.to_string();
                chain = record["chain"].as_str().unwrap_or_default().to_string();
            }
            Some((last_seq, last_hash)) => {
                if Some(seq) != last_seq.checked_add(1) {
                    return broken(format!(
                        "record {seq} follows record {last_seq}: a record was removed, inserted or moved"
                    ));
                }
                if prev != last_hash {
                    return broken(format!(
                        "record {seq} names {prev} as the hash of record {last_seq}, whose bytes hash to {last_hash}: \
                         one of the two was edited, or a record was put between them"
                    ));
                }
            }
        }
        if record["event"] == "audit_log_opened" && previous.is_some() {
            let id = record["chain"].as_str().unwrap_or_default();
            if id != chain {
                return broken(format!("record {seq} opens chain {id} inside chain {chain}"));
            }
        }
        records += 1;
        let hash = digest(text);
        hashes.push(hash.clone());
        previous = Some((seq, hash));
    }
    let intact = match (&previous, first_seq) {
        (Some((last_seq, head)), Some(first_seq)) => {
            Verdict::Intact { records, first_seq, last_seq: *last_seq, head: head.clone(), chain, first_prev, hashes }
        }
        _ => Verdict::Intact { records: 0, first_seq: 0, last_seq: 0, head: GENESIS.into(), chain, first_prev, hashes },
    };
    if torn.is_empty() {
        return intact;
    }
    Verdict::TornTail { last_good_seq: previous.map(|(s, _)| s), bytes: torn.len(), intact: Box::new(intact) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(records: usize) -> (String, Vec<String>) {
        let mut chain = Chain::fresh();
        let mut lines = vec![chain.link(&format!(r#"{{"event":"audit_log_opened","chain":"{}"}}"#, chain.id))];
        chain.advance(&lines[0]);
        for n in 0..records {
            let line = chain.link(&format!(r#"{{"tool":"t","n":{n}}}"#));
            chain.advance(&line);
            lines.push(line);
        }
        (lines.concat(), lines)
    }

    #[test]
    fn an_intact_log_verifies_and_every_kind_of_tampering_is_named() {
        let (text, lines) = log(5);
        let Verdict::Intact { records, last_seq, head, .. } = verify(text.as_bytes()) else { panic!() };
        assert_eq!((records, last_seq), (6, 5));
        assert_eq!(head, digest(lines[5].trim_end()));

        let edited = text.replacen(r#""n":2"#, r#""n":7"#, 1);
        assert!(
            matches!(verify(edited.as_bytes()), Verdict::Broken { line: 5, .. }),
            "{:?}",
            verify(edited.as_bytes())
        );
        let deleted: String = lines.iter().enumerate().filter(|(i, _)| *i != 3).map(|(_, l)| l.as_str()).collect();
        let Verdict::Broken { line, why } = verify(deleted.as_bytes()) else { panic!() };
        assert!(line == 4 && why.contains("removed"), "{why}");
        let mut swapped = lines.clone();
        swapped.swap(2, 3);
        assert!(matches!(verify(swapped.concat().as_bytes()), Verdict::Broken { line: 3, .. }));
        let headless: String = lines[1..].concat();
        let Verdict::Broken { line: 1, why } = verify(headless.as_bytes()) else { panic!() };
        assert!(why.contains("neither a log's first record"), "{why}");
        // cut back to a later process's start record: a log's first record is at seq 0
        let mut chain = Chain { id: "x".into(), next_seq: 3, prev: digest(lines[2].trim_end()) };
        let later_start = chain.link(r#"{"event":"audit_log_opened","chain":"x"}"#);
        chain.advance(&later_start);
        let after = chain.link(r#"{"tool":"t"}"#);
        assert!(matches!(verify(format!("{later_start}{after}").as_bytes()), Verdict::Broken { line: 1, .. }));
        // an inserted record, properly linked to its predecessor, still breaks its successor
        let mut chain = Chain { id: "x".into(), next_seq: 3, prev: digest(lines[2].trim_end()) };
        let forged = chain.link(r#"{"tool":"forged"}"#);
        chain.advance(&forged);
        let mut inserted = lines.clone();
        inserted.insert(3, forged);
        assert!(matches!(verify(inserted.concat().as_bytes()), Verdict::Broken { line: 5, .. }));
    }

    #[test]
    fn a_torn_last_line_is_a_torn_tail_not_tampering() {
        let (text, lines) = log(3);
        let torn = format!("{text}{}", &lines[1][..20]);
        let Verdict::TornTail { last_good_seq, bytes, .. } = verify(torn.as_bytes()) else { panic!() };
        assert_eq!((last_good_seq, bytes), (Some(3), 20));
    }

    #[test]
    fn resuming_cuts_a_torn_tail_and_continues_the_chain() {
        let (text, lines) = log(2);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, format!("{text}{{\"seq\":3,\"pr")).unwrap();
        let mut file = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        let resumed = resume(&mut file).unwrap();
        assert_eq!(resumed.torn_tail.as_ref().map(|t| t.0), Some(12));
        let chain = resumed.chain.unwrap();
        assert_eq!((chain.next_seq, chain.prev.clone()), (3, digest(lines[2].trim_end())));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert_eq!(chain.id, serde_json::from_str::<Value>(lines[0].trim_end()).unwrap()["chain"]);
    }
}
