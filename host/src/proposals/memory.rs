//! The default backend: one process's proposals in memory, behind one mutex, so two concurrent
//! confirms of one token race on one `take`. Their lives are [`Model`]'s, the one every store is
//! walked against; this adds the tokens, a bound on all principals' finished proposals together
//! (so one process stays bounded whatever its number of principals) and the answers' claims.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use super::life::Model;
use super::token::mint_token;
use super::{IndexEntry, IndexKey, Indexed, NoteKey, StoreUnavailable, Stored};
use crate::bindings::proposal_store::Taken;
use crate::principal::Principal;

/// How many used, evicted and expired tokens are remembered of all principals together (each
/// principal's are [`super::life::FINISHED_PER_PRINCIPAL`] at most, as on every store), so replays and late
/// confirms get a precise answer; beyond it the oldest are forgotten (they then read as unknown),
/// which bounds the process's memory whatever the number of principals.
const REMEMBERED: usize = 4096;
/// And how many bytes they may keep (expired records, outcomes) in all; beyond it too the
/// oldest are forgotten.
const REMEMBERED_BYTES: usize = 16 << 20;

#[derive(Default)]
struct Inner {
    /// The proposals and their lives: the one model every store is walked against.
    model: Model,
    /// Every token in mint order, to forget the oldest finished ones of all principals together.
    minted: VecDeque<String>,
    /// The answers used, with when each may be forgotten, and in that order.
    answers: HashMap<String, u64>,
    answers_by_age: VecDeque<(u64, String)>,
}

#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
    /// The host's notes (the approval page's records and decisions).
    pub(super) notes: Box<super::notes::AllNotes>,
    /// The approval page's indexes.
    pub(super) indexes: super::notes::Indexes,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `record` for `who`; returns the new token and `who`'s tokens evicted to make room.
    pub fn put(
        &self,
        who: &Principal,
        record: Vec<u8>,
        expires_at_ms: u64,
        capacity: u32,
        now_ms: u64,
    ) -> (String, Vec<String>) {
        let mut inner = self.inner.lock().unwrap();
        let inner = &mut *inner;
        let token = mint_token();
        let evicted = inner.model.put(who, &token, record, expires_at_ms, capacity, now_ms);
        inner.minted.push_back(token.clone());
        forget_oldest_finished(inner, now_ms);
        // tokens forgotten per principal leave their place in the mint order: dropped in one pass
        // once they are most of it (amortised, the list stays within twice the proposals kept)
        if inner.minted.len() > 2 * inner.model.len() + 64 {
            let model = &inner.model;
            inner.minted.retain(|t| model.keeps(t));
        }
        (token, evicted)
    }

    pub(crate) fn peek(&self, who: &Principal, token: &str) -> Taken {
        self.inner.lock().unwrap().model.peek(who, token)
    }

    /// Single use: of any number of concurrent takes of one token, exactly one sees `Found`.
    pub fn take(&self, who: &Principal, token: &str) -> Taken {
        self.inner.lock().unwrap().model.take(who, token)
    }

    /// Records what the attempt that took `token` did. Ignored for tokens not taken.
    pub(crate) fn settle(&self, who: &Principal, token: &str, outcome: Vec<u8>) {
        self.inner.lock().unwrap().model.settle(who, token, outcome)
    }

    /// `true` the first time `answer` is claimed, `false` while it is remembered.
    pub(crate) fn claim_answer(&self, answer: &str, now_ms: u64) -> bool {
        let mut inner = self.inner.lock().unwrap();
        let inner = &mut *inner;
        while let Some((until, _)) = inner.answers_by_age.front()
            && *until <= now_ms
        {
            let (_, old) = inner.answers_by_age.pop_front().expect("just seen");
            inner.answers.remove(&old);
        }
        if inner.answers.contains_key(answer) {
            return false;
        }
        let until = now_ms + super::ANSWER_MEMORY_MS;
        inner.answers.insert(answer.to_string(), until);
        inner.answers_by_age.push_back((until, answer.to_string()));
        true
    }

    /// Number of proposals that count towards capacity, all principals together (for tests
    /// and metrics).
    pub(crate) fn pending_len(&self) -> usize {
        self.inner.lock().unwrap().model.queued_len()
    }
}

impl super::Backend for MemoryStore {
    fn describe(&self) -> String {
        "memory (this process)".into()
    }

    fn pending_len(&self) -> Option<usize> {
        Some(MemoryStore::pending_len(self))
    }

    fn ping(&self) -> Stored<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    fn put<'a>(
        &'a self,
        who: &'a Principal,
        record: Vec<u8>,
        expires_at_ms: u64,
        capacity: u32,
        now_ms: u64,
    ) -> Stored<'a, (String, Vec<String>)> {
        let stored = MemoryStore::put(self, who, record, expires_at_ms, capacity, now_ms);
        Box::pin(async { Ok(stored) })
    }

    fn peek<'a>(&'a self, who: &'a Principal, token: &'a str) -> Stored<'a, Taken> {
        let taken = MemoryStore::peek(self, who, token);
        Box::pin(async { Ok(taken) })
    }

    fn take<'a>(&'a self, who: &'a Principal, token: &'a str) -> Stored<'a, Taken> {
        let taken = MemoryStore::take(self, who, token);
        Box::pin(async { Ok(taken) })
    }

    fn settle<'a>(&'a self, who: &'a Principal, token: &'a str, outcome: Vec<u8>) -> Stored<'a, ()> {
        MemoryStore::settle(self, who, token, outcome);
        Box::pin(async { Ok(()) })
    }

    fn claim<'a>(&'a self, key: &'a str, now_ms: u64) -> Stored<'a, bool> {
        let first = self.claim_answer(key, now_ms);
        Box::pin(async move { Ok(first) })
    }

    fn note_put<'a>(
        &'a self,
        key: &'a NoteKey<'a>,
        value: &'a [u8],
        ttl_ms: u64,
        only_if_absent: bool,
        now_ms: u64,
    ) -> Stored<'a, bool> {
        let written = self
            .notes
            .put(key, value, ttl_ms, only_if_absent, now_ms)
            .map_err(|full| StoreUnavailable::full(full.to_string()));
        Box::pin(async { written })
    }

    fn note_get<'a>(&'a self, key: &'a NoteKey<'a>, now_ms: u64) -> Stored<'a, Option<Vec<u8>>> {
        let note = self.notes.get(key, now_ms);
        Box::pin(async { Ok(note) })
    }

    fn index_put<'a>(&'a self, entry: IndexEntry<'a>, now_ms: u64) -> Stored<'a, ()> {
        self.indexes.put(entry, now_ms);
        Box::pin(async { Ok(()) })
    }

    fn index_remove<'a>(&'a self, index: IndexKey, member: &'a str) -> Stored<'a, ()> {
        self.indexes.remove(index, member);
        Box::pin(async { Ok(()) })
    }

    fn index_newest(
        &self,
        index: IndexKey,
        before_ms: Option<u64>,
        limit: usize,
        now_ms: u64,
    ) -> Stored<'_, Vec<Indexed>> {
        let found = self.indexes.newest(index, before_ms, limit, now_ms);
        Box::pin(async { Ok(found) })
    }
}

/// Forgets the oldest tokens of all principals together that no longer count towards capacity
/// (taken, evicted, or pending past their expiry) while more than [`REMEMBERED`] of them are
/// kept, or they keep more than [`REMEMBERED_BYTES`].
fn forget_oldest_finished(inner: &mut Inner, now_ms: u64) {
    // the queues hold every live proposal (and at most a capacity's worth of expired ones per
    // principal), so these bounds cost little to compute and stay close
    let keep = REMEMBERED + inner.model.queued_len();
    let live_bytes = match inner.model.bytes() > REMEMBERED_BYTES {
        false => 0,
        true => inner.model.live_bytes(now_ms),
    };
    let mut scanned = 0;
    while (inner.model.len() > keep || inner.model.bytes() - live_bytes > REMEMBERED_BYTES)
        && scanned < inner.minted.len()
    {
        let Some(token) = inner.minted.pop_front() else {
            break;
        };
        if inner.model.holds_a_place(&token, now_ms) {
            inner.minted.push_back(token);
            scanned += 1;
        } else {
            inner.model.forget(&token);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> Principal {
        Principal::local()
    }

    #[test]
    fn tokens_are_chg_plus_128_bits() {
        let store = MemoryStore::new();
        let (a, _) = store.put(&me(), vec![1], 10, 20, 0);
        let (b, _) = store.put(&me(), vec![2], 10, 20, 0);
        assert_ne!(a, b);
        assert!(a.starts_with("chg-") && a.len() == 4 + 32 && a[4..].bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn capacity_evicts_oldest_once_and_expired_do_not_count() {
        let store = MemoryStore::new();
        let tokens: Vec<String> = (0..20).map(|i| store.put(&me(), vec![i], 1000, 20, 0).0).collect();
        let (_, evicted) = store.put(&me(), vec![99], 1000, 20, 0);
        assert_eq!(evicted, vec![tokens[0].clone()]);
        assert_eq!(format!("{:?}", store.take(&me(), &tokens[0])), format!("{:?}", Taken::Evicted));
        assert_eq!(store.pending_len(), 20);
        // at t=2000 every earlier proposal has expired: nothing is evicted, they stay findable
        let (_, evicted) = store.put(&me(), vec![100], 3000, 20, 2000);
        assert!(evicted.is_empty());
        assert_eq!(store.pending_len(), 1);
        assert_eq!(format!("{:?}", store.peek(&me(), &tokens[5])), format!("{:?}", Taken::Found(vec![5])));
    }

    #[test]
    fn expired_proposals_nobody_confirms_are_reclaimed() {
        let store = MemoryStore::new();
        // ten times what is remembered, each expired by the time the next arrives
        for i in 0..(REMEMBERED as u64 * 10) {
            store.put(&me(), vec![0; 64], i * 10 + 5, 20, i * 10);
        }
        let inner = store.inner.lock().unwrap();
        assert!(inner.model.len() <= REMEMBERED + 20, "{} proposals kept", inner.model.len());
        assert!(inner.minted.len() <= REMEMBERED + 20, "{} tokens listed", inner.minted.len());
    }

    #[test]
    fn what_finished_proposals_keep_is_bounded_in_bytes() {
        let store = MemoryStore::new();
        let big = super::super::MAX_RECORD_BYTES;
        // each expired by the time the next arrives, and each outcome as large as it may be
        for i in 0..2_000u64 {
            let (t, _) = store.put(&me(), vec![1; big], i * 10 + 5, 20, i * 10);
            if i % 2 == 0 {
                store.take(&me(), &t);
                store.settle(&me(), &t, vec![2; super::super::MAX_OUTCOME_BYTES]);
            }
        }
        let inner = store.inner.lock().unwrap();
        assert!(inner.model.bytes() <= REMEMBERED_BYTES + 21 * big, "{} bytes kept", inner.model.bytes());
    }

    #[test]
    fn an_answer_is_claimed_once_until_it_is_forgotten() {
        let store = MemoryStore::new();
        assert!(store.claim_answer("a", 1_000));
        assert!(!store.claim_answer("a", 2_000), "a second claim");
        assert!(store.claim_answer("b", 2_000), "another answer");
        let later = 1_000 + super::super::ANSWER_MEMORY_MS;
        assert!(store.claim_answer("a", later), "forgotten after ANSWER_MEMORY_MS");
        assert_eq!(store.inner.lock().unwrap().answers.len(), 2, "the old claims are gone: {later}");
    }
}
