//! The durable audit log: one JSON line per call of a mutating tool (every propose and every
//! confirm outcome), and, whatever the component, one line when an approval is minted, one before
//! its create is sent and one with the create's outcome. Each is synced to disk before the result
//! returns or the create leaves, so a crash cannot lose what happened. It records tokens, hashes,
//! answers and Fabric ids; never a credential.
//!
//! Every record is a link of a hash chain ([`chain`]): its sequence number and the
//! SHA-256 of the previous record's bytes come first, and each process opening the log first
//! appends a start record naming itself. `equinix-mcp audit verify` checks the chain.
//!
//! Group commit: records that arrive while a sync is running wait for the next one together, so
//! a team's concurrent proposes share `fsync`s; each caller still returns only once its own line
//! is on disk. When other mutating calls are under way (and not waiting for a person), the
//! writer also waits up to [`GATHER`] for their records to join before it syncs, as PostgreSQL's
//! `commit_delay` does with its `commit_siblings`; a lone record is synced at once, as before.
//!
//! Several processes may append to one log (two, three local servers of one user, each started
//! with the default path): each write takes the file's exclusive lock, first reads past what the
//! others appended since (the chain continues from the file's last record, not from this
//! process's), and holds the lock until its lines are synced, so the chain stays one.
//!
//! The chain's own rules are [`chain`]'s; the signed checkpoints kept beside the log are
//! [`checkpoints`]'; what each record says is a type of [`events`].

pub mod chain;
pub(crate) mod checkpoints;
pub(crate) mod events;
pub(crate) mod settings;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;

use chain::{Chain, resume};
pub(crate) use events::{Event, Record};

/// The longest a sync waits for the records of mutating calls still under way.
pub(crate) const GATHER: Duration = Duration::from_millis(2);

/// The longest a write waits for another process's write to the same log (a write and its sync
/// take milliseconds; a process stopped while it held the lock is what this bounds).
const LOCK_WAIT: Duration = Duration::from_secs(10);

pub struct AuditLog {
    path: PathBuf,
    file: Mutex<Writing>,
    /// This process, as its records' start record names it.
    instance: String,
    queue: Mutex<Queue>,
    /// Signalled when a record joins the queue.
    arrived: Condvar,
    /// Mutating calls under way that will write a record soon (see [`AuditLog::writer`]).
    writers: AtomicUsize,
    syncs: AtomicU64,
    gather: Duration,
    /// The last record known to be on disk: its sequence number and hash (what a checkpoint
    /// may vouch for).
    synced: Mutex<(Option<u64>, String)>,
    /// Records synced since the last checkpoint was asked for, and how many ask for one (0: never).
    since_checkpoint: AtomicU64,
    checkpoint_every: AtomicU64,
    checkpoint_due: tokio::sync::Notify,
}

/// A mutating call under way, counted while it lives (see [`AuditLog::writer`]).
pub(crate) struct Writer(Arc<AuditLog>);

impl Drop for Writer {
    fn drop(&mut self) {
        self.0.writers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A mutating call that stepped aside (a person is reading its form), counted back on drop.
pub(crate) struct Away(Arc<AuditLog>);

impl Drop for Away {
    fn drop(&mut self) {
        self.0.writers.fetch_add(1, Ordering::Relaxed);
    }
}

/// A record that is not on disk. Its Display names the file, for the operator's log; a client,
/// the component or a browser is told only [`NotRecorded::reason`], never where the log lives.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{}: {reason}", .path.display())]
pub(crate) struct NotRecorded {
    path: PathBuf,
    reason: String,
}

impl NotRecorded {
    /// Why, in the system's words ("No space left on device (os error 28)"), without the path.
    pub(crate) fn reason(&self) -> &str {
        &self.reason
    }
}

/// The open file and where its chain stands.
struct Writing {
    file: File,
    chain: Chain,
    /// The file's length after this process's last write: another length means another process
    /// appended since (or the file was cut), and the chain is read again from the file.
    end: u64,
}

/// Lines waiting for the writer, each with whoever waits for it to be durable.
#[derive(Default)]
struct Queue {
    waiting: Vec<(String, tokio::sync::oneshot::Sender<Result<(), NotRecorded>>)>,
    /// A writer is draining the queue (at most one at a time).
    writing: bool,
}

/// `$XDG_STATE_HOME/equinix-mcp/audit.jsonl` (or the platform's local data dir).
pub(crate) fn default_path() -> Option<PathBuf> {
    dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("equinix-mcp").join("audit.jsonl"))
}

/// Opens (or creates) `what` ("the checkpoint file") at `path` for appending: a regular file,
/// never through a symbolic link, and written by this process alone.
pub(crate) fn open_append(path: &Path, what: &str) -> anyhow::Result<File> {
    let file = open_regular(path, what)?;
    // two writers would fork the chain
    file.try_lock().map_err(|e| {
        anyhow::anyhow!("{what} {} is in use by another process ({e}): give each server its own file", path.display())
    })?;
    Ok(file)
}

/// Opens (or creates) `what` at `path` for appending: a regular file, never through a symbolic
/// link. Who else may write it is the caller's to settle.
fn open_regular(path: &Path, what: &str) -> anyhow::Result<File> {
    let shown = path.display();
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            anyhow::bail!("{what} {shown} is a symbolic link; refusing to follow it (give the real path)")
        }
        Ok(m) if !m.file_type().is_file() => anyhow::bail!("{what} {shown} is not a regular file"),
        _ => {}
    }
    let mut options = OpenOptions::new();
    options.create(true).read(true).append(true);
    // a link planted between the check above and this open is refused too
    let file = crate::platform::no_follow(crate::platform::owner_only(&mut options))
        .open(path)
        .with_context(|| format!("opening {what} {shown}"))?;
    if !file.metadata()?.file_type().is_file() {
        anyhow::bail!("{what} {shown} is not a regular file");
    }
    Ok(file)
}

/// Takes `file`'s exclusive lock, waiting up to [`LOCK_WAIT`] for another process's write.
fn lock_for_writing(file: &File) -> std::io::Result<()> {
    let until = Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(std::io::Error::other(format!(
                    "another process has held its lock for over {} s (stopped in the middle of a write?)",
                    LOCK_WAIT.as_secs()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

impl AuditLog {
    pub(crate) fn open(path: &Path) -> anyhow::Result<AuditLog> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut file = open_regular(path, "the audit log")?;
        let shown = path.display();
        // released when `file` closes, should anything below fail
        lock_for_writing(&file).with_context(|| format!("locking the audit log {shown}"))?;
        let resumed = resume(&mut file).with_context(|| format!("reading the end of the audit log {shown}"))?;
        let instance = format!("{}-{}", std::process::id(), hex::encode(rand::random::<[u8; 6]>()));
        let mut chain = resumed.chain.clone().unwrap_or_else(Chain::fresh);
        let torn_tail_cut = resumed.torn_tail.as_ref().map(|(bytes, sha256)| {
            // a record torn by a crash was never acknowledged; what was cut is said here
            tracing::warn!("the audit log {shown} ended inside a record ({bytes} bytes, torn by a crash); cut it off");
            events::TornTail { bytes: *bytes, sha256: sha256.clone() }
        });
        let start = Event::AuditLogOpened(events::Opened {
            instance: instance.clone(),
            chain: chain.id.clone(),
            server: concat!("equinix-mcp ", env!("CARGO_PKG_VERSION")).into(),
            torn_tail_cut,
        });
        if resumed.unchained {
            anyhow::bail!(
                "the audit log {shown} was written before its records were chained (an older equinix-mcp): move it \
                 aside (it stays readable) and start again, so the new log verifies from its first line"
            );
        }
        let line = chain.link(&start.at(now_ms()).line());
        file.write_all(line.as_bytes()).and_then(|()| file.sync_data()).with_context(|| format!("writing {shown}"))?;
        chain.advance(&line);
        let end = file.metadata().with_context(|| format!("reading {shown}"))?.len();
        file.unlock().with_context(|| format!("unlocking {shown}"))?;
        let synced = Mutex::new((chain.next_seq.checked_sub(1), chain.prev.clone()));
        Ok(AuditLog {
            path: path.to_path_buf(),
            synced,
            since_checkpoint: AtomicU64::new(0),
            checkpoint_every: AtomicU64::new(0),
            checkpoint_due: tokio::sync::Notify::new(),
            file: Mutex::new(Writing { file, chain, end }),
            instance,
            queue: Mutex::default(),
            arrived: Condvar::new(),
            writers: AtomicUsize::new(0),
            syncs: Default::default(),
            gather: GATHER,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// This process's name in the log's start record.
    pub(crate) fn instance(&self) -> &str {
        &self.instance
    }

    /// The chain's id, and the sequence number and hash of its last synced record (what a
    /// checkpoint signs).
    pub(crate) fn synced_head(&self) -> (String, Option<u64>, String) {
        let id = self.file.lock().unwrap_or_else(|p| p.into_inner()).chain.id.clone();
        let (seq, head) = self.synced.lock().unwrap_or_else(|p| p.into_inner()).clone();
        (id, seq, head)
    }

    /// Asks for a checkpoint after every `n` synced records.
    pub(crate) fn checkpoint_after(&self, n: u64) {
        self.checkpoint_every.store(n, Ordering::Relaxed);
    }

    /// Resolves when `n` records were synced since it last resolved.
    pub(crate) async fn checkpoint_due(&self) {
        self.checkpoint_due.notified().await
    }

    /// Syncs of this log so far.
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    /// Counts a mutating call as one whose record a sync may wait for, while the guard lives.
    pub(crate) fn writer(log: &Arc<AuditLog>) -> Writer {
        log.writers.fetch_add(1, Ordering::Relaxed);
        Writer(log.clone())
    }

    /// Uncounts a call while it waits for a person (minutes, not milliseconds).
    pub(crate) fn away(log: &Arc<AuditLog>) -> Away {
        log.writers.fetch_sub(1, Ordering::Relaxed);
        Away(log.clone())
    }

    /// Appends `record` and waits until it is on disk. The write and sync run on the blocking
    /// pool (they never stall other calls), shared with the records that arrive meanwhile.
    pub(crate) async fn record(log: Arc<AuditLog>, record: Record) -> Result<(), NotRecorded> {
        // the line is what waits for the sync: the record goes now, not after the fsync
        let line = record.line();
        drop(record);
        AuditLog::record_line(log, line).await
    }

    /// [`AuditLog::record`] of a record already made into its line.
    async fn record_line(log: Arc<AuditLog>, line: String) -> Result<(), NotRecorded> {
        let (done, durable) = tokio::sync::oneshot::channel();
        let start_writer = {
            let mut queue = log.queue.lock().unwrap_or_else(|p| p.into_inner());
            queue.waiting.push((line, done));
            !std::mem::replace(&mut queue.writing, true)
        };
        log.arrived.notify_one();
        if start_writer {
            let writer = log.clone();
            tokio::task::spawn_blocking(move || writer.drain());
        }
        let stopped = || NotRecorded { path: log.path.clone(), reason: "the audit writer stopped".into() };
        durable.await.unwrap_or_else(|_| Err(stopped()))
    }

    /// Writes and syncs batches until nobody is waiting.
    fn drain(&self) {
        loop {
            let batch = {
                let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                if queue.waiting.is_empty() {
                    queue.writing = false;
                    return;
                }
                // other calls under way will write soon: let their records join this sync
                let until = Instant::now() + self.gather;
                while queue.waiting.len() < self.writers.load(Ordering::Relaxed) {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    queue = self.arrived.wait_timeout(queue, left).unwrap_or_else(|p| p.into_inner()).0;
                }
                std::mem::take(&mut queue.waiting)
            };
            let (lines, waiters): (Vec<String>, Vec<_>) = batch.into_iter().unzip();
            // a writer that panicked must not leave `writing` set with callers waiting forever
            let outcomes = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.append_lines(&lines)))
                .unwrap_or_else(|_| {
                    lines.iter().map(|_| Err(std::io::Error::other("the audit writer failed"))).collect()
                });
            for (waiter, outcome) in waiters.into_iter().zip(outcomes) {
                let _ =
                    waiter.send(outcome.map_err(|e| NotRecorded { path: self.path.clone(), reason: e.to_string() }));
            }
        }
    }

    /// Appends one line and waits until it is on disk (what [`AuditLog::record`] does, without
    /// sharing the sync): for the tests of the file handling below.
    #[cfg(test)]
    fn append(&self, entry: &serde_json::Value) -> std::io::Result<()> {
        self.append_lines(&[entry.to_string()]).pop().expect("one outcome per line")
    }

    /// Appends `lines` with one sync for all of them; the outcome of each. If the file at the
    /// path is no longer the one open (deleted, or rotated away), the path is opened afresh first
    /// and that is said both in the log of the process and as the new file's first line.
    fn append_lines(&self, lines: &[String]) -> Vec<std::io::Result<()>> {
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        let w = &mut *guard;
        if let Err(e) = lock_for_writing(&w.file) {
            return lines.iter().map(|_| Err(std::io::Error::new(e.kind(), e.to_string()))).collect();
        }
        let outcomes = self.append_locked(w, lines);
        // the lock of whichever file is open now (a rotation may have switched it)
        if let Err(e) = w.file.unlock() {
            tracing::warn!("the audit log {} could not be unlocked: {e}", self.path.display());
        }
        outcomes
    }

    /// [`AuditLog::append_lines`] with the open file's lock held.
    fn append_locked(&self, w: &mut Writing, lines: &[String]) -> Vec<std::io::Result<()>> {
        let ready = self.catch_up(w).and_then(|()| self.reopen_if_replaced(w));
        let mut outcomes: Vec<std::io::Result<()>> = match ready {
            Ok(()) => lines
                .iter()
                .map(|record| {
                    let line = w.chain.link(record);
                    write_whole(&mut w.file, &line).map(|()| w.chain.advance(&line))
                })
                .collect(),
            Err(e) => return lines.iter().map(|_| Err(std::io::Error::new(e.kind(), e.to_string()))).collect(),
        };
        let file = &mut w.file;
        if outcomes.iter().any(Result::is_ok) {
            let synced = file.sync_data();
            // counted once the sync is over, and its records only if it succeeded
            self.syncs.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = synced {
                for outcome in outcomes.iter_mut().filter(|o| o.is_ok()) {
                    *outcome = Err(std::io::Error::new(e.kind(), e.to_string()));
                }
            }
            if let Ok(m) = file.metadata() {
                w.end = m.len();
            }
            let durable = outcomes.iter().filter(|o| o.is_ok()).count();
            crate::metrics::metrics().audit_sync(durable);
            if durable > 0 {
                *self.synced.lock().unwrap_or_else(|p| p.into_inner()) =
                    (w.chain.next_seq.checked_sub(1), w.chain.prev.clone());
                let every = self.checkpoint_every.load(Ordering::Relaxed);
                let since = self.since_checkpoint.fetch_add(durable as u64, Ordering::Relaxed) + durable as u64;
                if every > 0 && since >= every {
                    self.since_checkpoint.store(0, Ordering::Relaxed);
                    self.checkpoint_due.notify_one();
                }
            }
        }
        outcomes
    }

    /// Moves the chain past what other processes appended since this one last wrote (the file's
    /// lock held): its last record, a torn tail cut off and said, or a file emptied in place
    /// started again with a note naming the chain's head.
    fn catch_up(&self, w: &mut Writing) -> std::io::Result<()> {
        if w.file.metadata()?.len() == w.end {
            return Ok(());
        }
        let resumed = resume(&mut w.file)?;
        if resumed.unchained {
            return Err(std::io::Error::other(
                "the file now ends with a line that is no chained record: something other than equinix-mcp wrote it",
            ));
        }
        match resumed.chain {
            Some(chain) => w.chain = chain,
            None => {
                self.note_new_file(w, "was emptied in place (truncated)")?;
            }
        }
        if let Some((bytes, sha256)) = resumed.torn_tail {
            // another process crashed in the middle of a record it never acknowledged
            tracing::warn!("the audit log {} ended inside a record ({bytes} bytes); cut it off", self.path.display());
            let note = Event::AuditLogTailCut(events::TailCut {
                instance: self.instance.clone(),
                torn_tail_cut: events::TornTail { bytes, sha256 },
            });
            let line = w.chain.link(&note.at(now_ms()).line());
            write_whole(&mut w.file, &line)?;
            w.chain.advance(&line);
        }
        w.end = w.file.metadata()?.len();
        Ok(())
    }

    /// Switches to the file now at the path, if the open one was replaced (the old file's lock
    /// held, so its head is final): a new empty file starts with the chain's next link naming the
    /// old file's head; one another process started already is caught up with.
    fn reopen_if_replaced(&self, w: &mut Writing) -> std::io::Result<()> {
        let Some(why) = self.replaced(&w.file) else { return Ok(()) };
        tracing::warn!("the audit log {} {why}; reopening it", self.path.display());
        let file = open_regular(&self.path, "the audit log").map_err(std::io::Error::other)?;
        lock_for_writing(&file)?;
        let old = std::mem::replace(&mut w.file, file);
        let _ = old.unlock();
        w.end = 0;
        match w.file.metadata()?.len() {
            0 => self.note_new_file(w, why),
            _ => self.catch_up(w),
        }
    }

    /// Starts the empty open file with the chain's next link, naming the last file's head.
    fn note_new_file(&self, w: &mut Writing, why: &str) -> std::io::Result<()> {
        let note = Event::AuditLogReopened(events::Reopened {
            reason: why.into(),
            instance: self.instance.clone(),
            chain: w.chain.id.clone(),
            previous_file_head: w.chain.prev.clone(),
        });
        let line = w.chain.link(&note.at(now_ms()).line());
        write_whole(&mut w.file, &line)?;
        w.chain.advance(&line);
        Ok(())
    }

    /// Why the open file is not the one at the path any more, if it is not.
    fn replaced(&self, file: &File) -> Option<&'static str> {
        let open = file.metadata().ok()?;
        match std::fs::symlink_metadata(&self.path) {
            Err(_) => Some("is no longer at its path (deleted, or moved away by a rotation)"),
            Ok(at_path) if crate::platform::file_id(&at_path) != crate::platform::file_id(&open) => {
                Some("was replaced by another file at its path")
            }
            Ok(_) => None,
        }
    }
}

/// Writes `line` whole or not at all: a full disk (or a file-size limit) may let part of a line
/// through, which is cut off again, so the log never holds a torn record.
fn write_whole(file: &mut File, line: &str) -> std::io::Result<()> {
    let before = file.metadata()?.len();
    file.write_all(line.as_bytes()).inspect_err(|_| {
        let _ = file.set_len(before);
    })
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// `ms` since the epoch as an RFC 3339 timestamp.
pub fn rfc3339(ms: u64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    t.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_not_on_disk_names_its_file_to_the_operator_only() {
        let e = NotRecorded { path: "/srv/equinix/audit.jsonl".into(), reason: "File too large (os error 27)".into() };
        assert_eq!(e.to_string(), "/srv/equinix/audit.jsonl: File too large (os error 27)");
        assert_eq!(e.reason(), "File too large (os error 27)");
    }
    use crate::audit::chain::{Verdict, verify};
    use serde_json::{Value, json};

    #[test]
    fn a_symlink_or_a_non_regular_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere.txt");
        std::fs::write(&target, "precious\n").unwrap();
        let link = dir.path().join("audit.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = AuditLog::open(&link).err().unwrap().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
        let e = AuditLog::open(Path::new("/dev/null")).err().unwrap().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e = AuditLog::open(dir.path()).err().unwrap().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn a_deleted_or_rotated_log_is_reopened_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path).unwrap();
        log.append(&json!({"n": 1})).unwrap();
        std::fs::remove_file(&path).unwrap();
        log.append(&json!({"n": 2})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"event\":\"audit_log_reopened\"") && text.contains("no longer at its path"), "{text}");
        assert_eq!(payloads(&path).last(), Some(&json!({"n": 2})), "{text}");
        // the new file continues the chain, naming the old file's head
        let Verdict::Intact { first_seq, .. } = verify(text.as_bytes()) else { panic!("{text}") };
        assert_eq!(first_seq, 2);
        // a rotation that puts a fresh file in place
        std::fs::rename(&path, dir.path().join("audit.jsonl.1")).unwrap();
        std::fs::write(&path, "").unwrap();
        log.append(&json!({"n": 3})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("replaced by another file"), "{text}");
        assert_eq!(payloads(&path).last(), Some(&json!({"n": 3})), "{text}");
        let rotated = payloads(&dir.path().join("audit.jsonl.1"));
        assert_eq!(rotated.last(), Some(&json!({"n": 2})), "nothing written to the rotated file: {rotated:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_records_share_syncs_and_each_is_written_once() {
        let dir = tempfile::tempdir().unwrap();
        let log = Arc::new(AuditLog::open(&dir.path().join("audit.jsonl")).unwrap());
        let writers: Vec<_> =
            (0..64).map(|n| AuditLog::record_line(log.clone(), json!({"n": n}).to_string())).collect();
        for outcome in futures_util::future::join_all(writers).await {
            outcome.unwrap();
        }
        let mut seen: Vec<u64> = payloads(log.path()).iter().map(|r| r["n"].as_u64().unwrap()).collect();
        seen.sort();
        assert_eq!(seen, (0..64).collect::<Vec<_>>(), "every record once, none torn");
        assert!(log.syncs() < 64, "64 concurrent records took {} syncs", log.syncs());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_sync_waits_briefly_for_calls_under_way_and_never_for_a_lone_record() {
        let dir = tempfile::tempdir().unwrap();
        // a long window, so each check below is seconds apart from its limit and cannot race
        let mut log = AuditLog::open(&dir.path().join("audit.jsonl")).unwrap();
        log.gather = Duration::from_secs(5);
        let log = Arc::new(log);
        // alone: synced at once
        let lone = AuditLog::writer(&log);
        let t = Instant::now();
        AuditLog::record_line(log.clone(), json!({"n": 0}).to_string()).await.unwrap();
        assert!(t.elapsed() < Duration::from_secs(2), "a lone record does not wait");
        // returned only once its line was written and synced
        assert_eq!(log.syncs(), 1, "the record returned before its sync");
        assert_eq!(payloads(log.path()), [json!({"n": 0})]);
        drop(lone);
        // two calls under way: the first record waits for the second to share its sync
        let (a, b) = (AuditLog::writer(&log), AuditLog::writer(&log));
        let t = Instant::now();
        let first = tokio::spawn(AuditLog::record_line(log.clone(), json!({"n": 1}).to_string()));
        // a sleep: what is checked is that no sync happens meanwhile, which no event announces
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(log.syncs(), 1, "the first record waits for the second call");
        AuditLog::record_line(log.clone(), json!({"n": 2}).to_string()).await.unwrap();
        first.await.unwrap().unwrap();
        assert_eq!(log.syncs(), 2, "two records, one sync");
        assert!(t.elapsed() < Duration::from_secs(2), "and no longer than the second took to come");
        drop((a, b));
        // a call waiting for a person is not waited for
        let (c, waiting) = (AuditLog::writer(&log), AuditLog::writer(&log));
        let away = AuditLog::away(&log);
        let t = Instant::now();
        AuditLog::record_line(log.clone(), json!({"n": 3}).to_string()).await.unwrap();
        assert!(t.elapsed() < Duration::from_secs(2), "no wait for a call whose person is reading a form");
        drop((c, away, waiting));
    }

    #[test]
    fn append_is_one_synced_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = AuditLog::open(&dir.path().join("a/audit.jsonl")).unwrap();
        log.append(&json!({"n": 1})).unwrap();
        log.append(&json!({"n": 2})).unwrap();
        assert_eq!(payloads(log.path()), [json!({"n": 1}), json!({"n": 2})]);
    }

    #[test]
    fn every_record_is_a_link_and_a_reopened_log_continues_its_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path).unwrap();
        log.append(&json!({"n": 1})).unwrap();
        let (chain, seq, head) = log.synced_head();
        assert_eq!(seq, Some(1));
        drop(log);
        let again = AuditLog::open(&path).unwrap();
        again.append(&json!({"n": 2})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let Verdict::Intact { records, last_seq, chain: id, hashes, .. } = verify(text.as_bytes()) else {
            panic!("{text}")
        };
        assert_eq!((records, last_seq, id), (4, 3, chain), "two start records, two records, one chain");
        assert_eq!(hashes[1], head);
        let starts: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["event"] == "audit_log_opened")
            .collect();
        assert_ne!(starts[0]["instance"], starts[1]["instance"], "each process names itself");
    }

    /// Two, three local servers of one user append to the default log at once; each
    /// write continues the chain from the file's last record, whoever wrote it.
    #[test]
    fn several_processes_share_one_log_and_its_chain_stays_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        // each open is its own file description, so their locks exclude each other as two
        // processes' would
        let logs: Vec<Arc<AuditLog>> = (0..3).map(|_| Arc::new(AuditLog::open(&path).unwrap())).collect();
        let writers: Vec<_> = logs
            .iter()
            .enumerate()
            .map(|(i, log)| {
                let log = log.clone();
                std::thread::spawn(move || {
                    for n in 0..40 {
                        log.append(&json!({"server": i, "n": n})).unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let Verdict::Intact { records, chain, .. } = verify(text.as_bytes()) else {
            panic!("{:?}", verify(text.as_bytes()))
        };
        assert_eq!(records, 3 + 120, "three start records and every record once");
        assert_eq!(chain, logs[0].synced_head().0);
        assert!(logs.iter().all(|l| l.synced_head().0 == chain), "one chain for all three");
        let mut seen: Vec<(u64, u64)> =
            payloads(&path).iter().map(|r| (r["server"].as_u64().unwrap(), r["n"].as_u64().unwrap())).collect();
        seen.sort();
        assert_eq!(seen, (0..3).flat_map(|i| (0..40).map(move |n| (i, n))).collect::<Vec<_>>());
    }

    #[test]
    fn a_record_torn_by_another_process_or_a_file_emptied_in_place_keeps_the_chain_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let (a, b) = (AuditLog::open(&path).unwrap(), AuditLog::open(&path).unwrap());
        a.append(&json!({"n": 1})).unwrap();
        // b "crashes" in the middle of a line
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"{\"seq\":9,\"pr").unwrap();
        a.append(&json!({"n": 2})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(matches!(verify(text.as_bytes()), Verdict::Intact { .. }), "{text}");
        assert!(text.contains("\"event\":\"audit_log_tail_cut\"") && text.contains("\"bytes\":12"), "{text}");
        // emptied in place (a copy-and-truncate rotation): a new file that names the head the
        // writer knew (the last writer's, here; another process knows only its own last head,
        // which is why the docs ask for rotation by renaming)
        let head = a.synced_head().2;
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(0).unwrap();
        a.append(&json!({"n": 3})).unwrap();
        b.append(&json!({"n": 4})).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let Verdict::Intact { first_prev, .. } = verify(text.as_bytes()) else { panic!("{text}") };
        assert_eq!(first_prev, head, "{text}");
        assert!(text.contains("emptied in place"), "{text}");
        assert_eq!(payloads(&path), [json!({"n": 3}), json!({"n": 4})]);
    }

    #[test]
    fn a_write_waits_for_another_processs_lock_and_gives_up_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path).unwrap();
        let other = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        other.lock().unwrap();
        let released = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            other.unlock().unwrap();
        });
        let t = Instant::now();
        log.append(&json!({"n": 1})).unwrap();
        assert!(t.elapsed() >= Duration::from_millis(250), "the write waited for the lock");
        released.join().unwrap();
        assert_eq!(payloads(&path), [json!({"n": 1})]);
    }

    /// The records of the file at `path` without their links, start records left out.
    fn payloads(path: &Path) -> Vec<Value> {
        let text = std::fs::read_to_string(path).unwrap();
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| {
                !matches!(r["event"].as_str(), Some("audit_log_opened" | "audit_log_reopened" | "audit_log_tail_cut"))
            })
            .map(|mut r| {
                let m = r.as_object_mut().unwrap();
                assert!(m.remove("seq").is_some() && m.remove("prev").is_some(), "every record is a link");
                r
            })
            .collect()
    }
}
