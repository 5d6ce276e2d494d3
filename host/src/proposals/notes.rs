//! The host's own short-lived notes beside the proposals (the approval page's records and the
//! decisions made on it), in the memory store: bounded in count and size whatever the callers
//! do, forgotten when their time is up. The Redis store keeps them as plain keys with a TTL.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

/// The largest note kept (a page record holds one form, at most 16 KiB, and a little more).
pub const MAX_NOTE_BYTES: usize = 32 * 1024;
/// Notes kept at most in memory; beyond it a new note is refused (the live ones stay).
pub const MAX_NOTES: usize = 4096;
/// Signed-in sessions kept at most in memory, apart from the other notes: beyond it the oldest
/// ends, so people signing in again and again cannot crowd out the pages' records.
pub const MAX_SESSIONS: usize = 1024;

/// What a note is: each kind's store key is derived here, and nowhere else.
#[derive(Clone, Copy, Debug)]
pub enum NoteKey<'a> {
    /// A question put on the approval page, by the page's id.
    PageRecord(&'a str),
    /// The page a call opened, by the call's page index (`CallKey::page_index`).
    PageOfCall(&'a str),
    /// The decision made about a page, by the page's id.
    PageDecision(&'a str),
    /// A signed-in session on the page, by the SHA-256 of its cookie.
    Session(&'a str),
    /// A passkey enrollment under way, by the key of the session it was begun in.
    Enrollment(&'a str),
    /// What became of a page's approved request once an agent's call collected it, by the page's id.
    PageOutcome(&'a str),
    /// The name and e-mail a person signed in with, by the SHA-256 of their principal.
    Person(&'a str),
    /// The reason an agent gave with a proposal, by the SHA-256 of its principal and the token.
    AgentReason(&'a str),
    /// One approval of a page's request, by the page's id and its place (from 1; see `ballot`).
    PageApproval(&'a str, u8),
}

impl NoteKey<'_> {
    /// The key in the store (the spellings of earlier versions, which replicas share).
    pub(crate) fn key(&self) -> String {
        match self {
            NoteKey::PageRecord(id) => format!("page:{id}"),
            NoteKey::PageOfCall(index) => format!("page-call:{index}"),
            NoteKey::PageDecision(id) => format!("page-decision:{id}"),
            NoteKey::Session(hash) => format!("page-session:{hash}"),
            NoteKey::Enrollment(session) => format!("passkey-enroll:{session}"),
            NoteKey::PageOutcome(id) => format!("page-outcome:{id}"),
            NoteKey::Person(hash) => format!("person:{hash}"),
            NoteKey::AgentReason(token) => format!("agent-reason:{token}"),
            NoteKey::PageApproval(id, place) => format!("page-approval:{id}:{place}"),
        }
    }

    /// Sessions are kept apart from the other notes (see [`MAX_SESSIONS`]).
    fn is_session(&self) -> bool {
        matches!(self, NoteKey::Session(_))
    }
}

/// A list the approval page reads newest first (the inbox's waiting changes and its recent
/// decisions): members with a time, a small value each, kept until their own end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexKey {
    /// Pages whose question waits for a decision, by when they were put.
    Waiting,
    /// Pages decided, by when.
    Decided,
}

impl IndexKey {
    /// The key in the store.
    pub(crate) fn key(&self) -> &'static str {
        match self {
            IndexKey::Waiting => "inbox-waiting",
            IndexKey::Decided => "inbox-decided",
        }
    }
}

/// The most members an index keeps: beyond it the oldest goes (a reader never needs more than a
/// page of the newest, and a user proposing in a loop cannot grow it).
pub const MAX_INDEXED: usize = 1024;

/// A member put in an index: its name, when (the index's order), until when it is read, and
/// its value.
#[derive(Clone, Copy, Debug)]
pub struct IndexEntry<'a> {
    pub index: IndexKey,
    pub member: &'a str,
    pub at_ms: u64,
    pub(crate) until_ms: u64,
    pub value: &'a [u8],
}

/// One member of an index, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Indexed {
    pub at_ms: u64,
    pub member: String,
    pub value: Vec<u8>,
}

/// The memory store's indexes.
#[derive(Default)]
pub(crate) struct Indexes(Mutex<HashMap<IndexKey, Index>>);

#[derive(Default)]
struct Index {
    /// (at, member) -> (until, value)
    by_at: BTreeMap<(u64, String), (u64, Vec<u8>)>,
    at_of: HashMap<String, u64>,
}

impl Index {
    fn remove(&mut self, member: &str) {
        if let Some(at) = self.at_of.remove(member) {
            self.by_at.remove(&(at, member.to_string()));
        }
    }
}

impl Indexes {
    /// Puts (or moves) `member` at `at_ms` with `value`, kept until `until_ms`; forgets the
    /// expired and the oldest beyond [`MAX_INDEXED`].
    pub(crate) fn put(&self, entry: IndexEntry, now_ms: u64) {
        let IndexEntry { index, member, at_ms, until_ms, value } = entry;
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let index = all.entry(index).or_default();
        index.remove(member);
        let gone: Vec<String> =
            index.by_at.iter().filter(|(_, (until, _))| *until <= now_ms).map(|((_, m), _)| m.clone()).collect();
        for m in gone {
            index.remove(&m);
        }
        index.by_at.insert((at_ms, member.to_string()), (until_ms, value.to_vec()));
        index.at_of.insert(member.to_string(), at_ms);
        while index.by_at.len() > MAX_INDEXED {
            let ((_, oldest), _) = index.by_at.pop_first().expect("a full index has a first member");
            index.at_of.remove(&oldest);
        }
    }

    pub(crate) fn remove(&self, index: IndexKey, member: &str) {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(index) = all.get_mut(&index) {
            index.remove(member);
        }
    }

    /// The live members, newest first, older than `before_ms` when given, at most `limit`.
    pub(crate) fn newest(&self, index: IndexKey, before_ms: Option<u64>, limit: usize, now_ms: u64) -> Vec<Indexed> {
        let all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(index) = all.get(&index) else { return Vec::new() };
        let end = before_ms.unwrap_or(u64::MAX);
        index
            .by_at
            .range(..(end, String::new()))
            .rev()
            .filter(|(_, (until, _))| *until > now_ms)
            .take(limit)
            .map(|((at, member), (_, value))| Indexed { at_ms: *at, member: member.clone(), value: value.clone() })
            .collect()
    }
}

pub(crate) struct Notes {
    inner: Mutex<Inner>,
    /// How many live notes are kept, and whether a new one beyond that pushes out the one that
    /// would expire first (else it is refused).
    cap: usize,
    evicts: bool,
}

impl Default for Notes {
    fn default() -> Self {
        Notes::new(MAX_NOTES, false)
    }
}

/// The memory store's notes: the sessions apart from the rest.
#[derive(Default)]
pub(crate) struct AllNotes {
    sessions: SessionNotes,
    others: Notes,
}

struct SessionNotes(Notes);

impl Default for SessionNotes {
    fn default() -> Self {
        SessionNotes(Notes::new(MAX_SESSIONS, true))
    }
}

impl AllNotes {
    fn of(&self, key: &NoteKey) -> &Notes {
        if key.is_session() { &self.sessions.0 } else { &self.others }
    }

    pub(crate) fn put(
        &self,
        key: &NoteKey,
        value: &[u8],
        ttl_ms: u64,
        only_if_absent: bool,
        now_ms: u64,
    ) -> Result<bool, NoRoom> {
        self.of(key).put(&key.key(), value, ttl_ms, only_if_absent, now_ms)
    }

    pub(crate) fn get(&self, key: &NoteKey, now_ms: u64) -> Option<Vec<u8>> {
        self.of(key).get(&key.key(), now_ms)
    }
}

#[derive(Default)]
struct Inner {
    values: HashMap<String, (u64, Vec<u8>)>,
    /// (until, key), to forget the expired ones first.
    by_expiry: BTreeSet<(u64, String)>,
}

impl Inner {
    fn forget_expired(&mut self, now_ms: u64) {
        while let Some((until, _)) = self.by_expiry.first()
            && *until <= now_ms
        {
            let (_, key) = self.by_expiry.pop_first().expect("just seen");
            self.values.remove(&key);
        }
    }
}

/// A note refused because the store is full of live notes and does not evict them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{live} notes are live, the most this server keeps in memory")]
pub(crate) struct NoRoom {
    pub(crate) live: usize,
}

impl Notes {
    pub(crate) fn new(cap: usize, evicts: bool) -> Self {
        Notes { inner: Mutex::default(), cap, evicts }
    }

    /// Writes `key` for `ttl_ms`; see [`super::ProposalStore::note_put`], which refuses a note of
    /// more than [`MAX_NOTE_BYTES`] first. `Err` says why a note was refused (the store full of
    /// live notes).
    pub(crate) fn put(
        &self,
        key: &str,
        value: &[u8],
        ttl_ms: u64,
        only_if_absent: bool,
        now_ms: u64,
    ) -> Result<bool, NoRoom> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.forget_expired(now_ms);
        if let Some((until, _)) = inner.values.get(key) {
            if only_if_absent {
                return Ok(false);
            }
            let old = (*until, key.to_string());
            inner.by_expiry.remove(&old);
        } else if inner.values.len() >= self.cap {
            if !self.evicts {
                return Err(NoRoom { live: self.cap });
            }
            let (_, first) = inner.by_expiry.pop_first().expect("a full store has a first note");
            inner.values.remove(&first);
        }
        let until = now_ms.saturating_add(ttl_ms);
        inner.values.insert(key.to_string(), (until, value.to_vec()));
        inner.by_expiry.insert((until, key.to_string()));
        Ok(true)
    }

    pub(crate) fn get(&self, key: &str, now_ms: u64) -> Option<Vec<u8>> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.values.get(key).filter(|(until, _)| *until > now_ms).map(|(_, v)| v.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_note_has_its_own_keys_in_the_earlier_spellings() {
        let keys: Vec<String> = [
            NoteKey::PageRecord("x"),
            NoteKey::PageOfCall("x"),
            NoteKey::PageDecision("x"),
            NoteKey::Session("x"),
            NoteKey::Enrollment("x"),
            NoteKey::PageOutcome("x"),
            NoteKey::Person("x"),
            NoteKey::AgentReason("x"),
            NoteKey::PageApproval("x", 2),
        ]
        .iter()
        .map(NoteKey::key)
        .collect();
        assert_eq!(
            keys,
            [
                "page:x",
                "page-call:x",
                "page-decision:x",
                "page-session:x",
                "passkey-enroll:x",
                "page-outcome:x",
                "person:x",
                "agent-reason:x",
                "page-approval:x:2"
            ]
        );
    }

    #[test]
    fn a_first_write_wins_once_and_notes_expire() {
        let notes = Notes::default();
        assert_eq!(notes.put("d", b"approve", 1000, true, 0), Ok(true));
        assert_eq!(notes.put("d", b"decline", 1000, true, 10), Ok(false), "the second decision is refused");
        assert_eq!(notes.get("d", 999).as_deref(), Some(&b"approve"[..]));
        assert_eq!(notes.get("d", 1000), None, "expired");
        assert_eq!(notes.put("d", b"decline", 1000, true, 1000), Ok(true), "an expired note is absent");
        assert_eq!(notes.put("d", b"x", 5, false, 1001), Ok(true), "an overwrite");
        assert_eq!(notes.get("d", 1006), None, "with its own time");
    }

    fn entry<'a>(index: IndexKey, member: &'a str, at_ms: u64, until_ms: u64, value: &'a [u8]) -> IndexEntry<'a> {
        IndexEntry { index, member, at_ms, until_ms, value }
    }

    #[test]
    fn an_index_is_newest_first_paged_bounded_and_forgets_the_expired() {
        let index = Indexes::default();
        for i in 0..5u64 {
            let member = format!("m{i}");
            index.put(entry(IndexKey::Waiting, &member, 100 + i, 1000 + i, b"v"), 0);
        }
        let names = |v: Vec<Indexed>| v.into_iter().map(|e| e.member).collect::<Vec<_>>();
        assert_eq!(names(index.newest(IndexKey::Waiting, None, 3, 0)), ["m4", "m3", "m2"]);
        assert_eq!(names(index.newest(IndexKey::Waiting, Some(102), 3, 0)), ["m1", "m0"], "the next page");
        assert!(index.newest(IndexKey::Decided, None, 3, 0).is_empty(), "each index is its own");
        index.remove(IndexKey::Waiting, "m3");
        index.put(entry(IndexKey::Waiting, "m0", 200, 2000, b"w"), 0);
        assert_eq!(names(index.newest(IndexKey::Waiting, None, 9, 0)), ["m0", "m4", "m2", "m1"], "moved, not doubled");
        assert_eq!(names(index.newest(IndexKey::Waiting, None, 9, 1002)), ["m0", "m4"], "the expired are not read");
        for i in 0..MAX_INDEXED as u64 + 10 {
            index.put(entry(IndexKey::Decided, &i.to_string(), i, u64::MAX, b""), 0);
        }
        let kept = index.newest(IndexKey::Decided, None, usize::MAX, 0);
        assert_eq!(kept.len(), MAX_INDEXED);
        assert_eq!(kept.last().unwrap().member, "10", "the oldest went");
    }

    #[test]
    fn notes_are_bounded_in_count() {
        let notes = Notes::default();
        for i in 0..MAX_NOTES {
            assert_eq!(notes.put(&i.to_string(), b"v", 100, false, 0), Ok(true));
        }
        let refused = notes.put("one more", b"v", 100, false, 0).unwrap_err();
        assert_eq!(refused, NoRoom { live: MAX_NOTES });
        assert!(refused.to_string().contains("live"), "{refused}");
        assert_eq!(notes.put("0", b"w", 100, false, 0), Ok(true), "an existing note may be rewritten");
        assert_eq!(notes.put("one more", b"v", 100, false, 100), Ok(true), "room once the others expired");
    }

    #[tokio::test]
    async fn a_note_is_bounded_in_size_whatever_the_backend() {
        let store = super::super::ProposalStore::new();
        let (big, fits) = (NoteKey::PageRecord("big"), NoteKey::PageRecord("fits"));
        let refused = store.note_put(&big, &vec![0; MAX_NOTE_BYTES + 1], 10, false, 0).await.unwrap_err();
        assert!(refused.to_string().contains("bytes"), "{refused}");
        assert!(store.note_put(&fits, &vec![0; MAX_NOTE_BYTES], 10, false, 0).await.unwrap());
        assert_eq!(store.note_get(&big, 1).await.unwrap(), None, "nothing of it was kept");
    }

    #[test]
    fn sessions_are_kept_apart_and_push_out_the_oldest() {
        let notes = AllNotes::default();
        let names: Vec<String> = (0..MAX_SESSIONS).map(|i| i.to_string()).collect();
        for (i, name) in names.iter().enumerate() {
            assert_eq!(notes.put(&NoteKey::Session(name), b"s", 1000 + i as u64, false, 0), Ok(true));
        }
        assert_eq!(notes.put(&NoteKey::Session("new"), b"s", 5000, false, 0), Ok(true), "never refused");
        assert_eq!(notes.get(&NoteKey::Session("0"), 1), None, "the one to expire first ended");
        assert!(notes.get(&NoteKey::Session("1"), 1).is_some());
        let page = NoteKey::PageRecord("a");
        assert_eq!(notes.put(&page, b"r", 1000, false, 0), Ok(true), "sessions take no room from the pages");
    }
}
