//! An audit log's files read as one chain, oldest first (each must continue the one before):
//! what `audit verify` checks and `audit changes` tells the story of.

use std::path::PathBuf;

use crate::audit::chain::{Verdict, verify};

/// The chain read so far across the files.
pub(super) struct Read {
    pub records: u64,
    pub(crate) first_seq: u64,
    pub(crate) last_seq: u64,
    pub head: String,
    pub chain: String,
    pub(crate) hashes: Vec<String>,
}

/// Why the files do not verify.
pub(super) enum Failure {
    /// A file could not be read at all.
    Unreadable(String),
    /// The chain is broken.
    Broken(String),
}

/// A torn last record: the last good sequence number, and the torn bytes.
pub(super) type Torn = Option<(Option<u64>, usize)>;

/// Verifies each file and that it continues the one before: the chain read, and a torn tail of
/// the last file (an earlier file must end whole). `Err`: why not, naming the file.
pub(super) fn read_files(files: &[PathBuf]) -> Result<(Read, Torn), Failure> {
    let mut read: Option<Read> = None;
    let mut torn = None;
    for (i, file) in files.iter().enumerate() {
        let shown = file.display();
        let bytes = std::fs::read(file).map_err(|e| Failure::Unreadable(format!("{shown}: {e}")))?;
        let intact = match verify(&bytes) {
            Verdict::Broken { line, why } => {
                return Err(Failure::Broken(format!("{shown}: BROKEN at line {line}: {why}")));
            }
            Verdict::TornTail { last_good_seq, bytes, intact } if i + 1 == files.len() => {
                torn = Some((last_good_seq, bytes));
                *intact
            }
            Verdict::TornTail { .. } => {
                return Err(Failure::Broken(format!(
                    "{shown}: BROKEN: it ends inside a record, but a later file follows it"
                )));
            }
            intact => intact,
        };
        let Verdict::Intact { records, first_seq, last_seq, head, chain, first_prev, hashes } = intact else {
            unreachable!("verify returns an intact prefix")
        };
        read = Some(match read.take() {
            None => Read { records, first_seq, last_seq, head, chain, hashes },
            Some(mut before) => {
                if chain != before.chain || first_seq != before.last_seq + 1 || first_prev != before.head {
                    return Err(Failure::Broken(format!(
                        "{shown}: BROKEN at line 1: it does not continue the file before it (that one ends at record \
                         {} with head {} of chain {}; this one starts at record {first_seq} naming {first_prev} of \
                         chain {chain}): a file is missing, out of order, or edited",
                        before.last_seq, before.head, before.chain
                    )));
                }
                before.records += records;
                before.last_seq = last_seq;
                before.head = head;
                before.hashes.extend(hashes);
                before
            }
        });
    }
    read.map(|r| (r, torn)).ok_or_else(|| Failure::Unreadable("no file given".to_string()))
}
