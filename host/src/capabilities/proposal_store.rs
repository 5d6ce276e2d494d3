//! The host side of `proposal-store`: atomic, in-memory storage of pending proposals.
//!
//! Only mechanism lives here (minting tokens, capacity eviction, single use, tombstones); the
//! rules (10-minute TTL, 20 pending, the five confirm checks) are the component's. Keeping the
//! store in the host keeps the component stateless, so every call runs on a fresh instance and
//! two concurrent confirms of one token race on one mutex-guarded `take`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// How many used/evicted/expired tokens are remembered, so replays get a precise answer.
const REMEMBERED: usize = 4096;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Taken {
    Found(Vec<u8>),
    Used(Option<Vec<u8>>),
    Evicted,
    Unknown,
}

#[derive(Debug)]
enum Slot {
    Pending { record: Vec<u8>, expires_at_ms: u64 },
    Used { outcome: Option<Vec<u8>> },
    Evicted,
}

#[derive(Default)]
struct Inner {
    slots: HashMap<String, Slot>,
    /// Pending tokens that still count towards capacity, oldest first.
    pending: VecDeque<String>,
    /// Every token in mint order, to forget the oldest settled ones.
    minted: VecDeque<String>,
}

#[derive(Default)]
pub struct ProposalStore {
    inner: Mutex<Inner>,
}

impl ProposalStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `record`; returns the new token and the tokens evicted to make room.
    pub fn put(&self, record: Vec<u8>, expires_at_ms: u64, capacity: u32, now_ms: u64) -> (String, Vec<String>) {
        let mut inner = self.inner.lock().unwrap();
        let inner = &mut *inner;
        // Expired proposals no longer occupy a slot; they stay findable so a late confirm is
        // told "expired" rather than "unknown".
        inner.pending.retain(|t| match inner.slots.get(t) {
            Some(Slot::Pending { expires_at_ms, .. }) => *expires_at_ms > now_ms,
            _ => false,
        });
        let mut evicted = Vec::new();
        while inner.pending.len() >= capacity.max(1) as usize {
            let Some(oldest) = inner.pending.pop_front() else {
                break;
            };
            inner.slots.insert(oldest.clone(), Slot::Evicted);
            evicted.push(oldest);
        }
        let token = mint_token();
        inner.slots.insert(token.clone(), Slot::Pending { record, expires_at_ms });
        inner.pending.push_back(token.clone());
        inner.minted.push_back(token.clone());
        forget_oldest_settled(inner);
        (token, evicted)
    }

    pub fn peek(&self, token: &str) -> Taken {
        let inner = self.inner.lock().unwrap();
        match inner.slots.get(token) {
            Some(Slot::Pending { record, .. }) => Taken::Found(record.clone()),
            Some(Slot::Used { outcome }) => Taken::Used(outcome.clone()),
            Some(Slot::Evicted) => Taken::Evicted,
            None => Taken::Unknown,
        }
    }

    /// Single use: of any number of concurrent takes of one token, exactly one sees `Found`.
    pub fn take(&self, token: &str) -> Taken {
        let mut inner = self.inner.lock().unwrap();
        let Some(slot) = inner.slots.get_mut(token) else {
            return Taken::Unknown;
        };
        match std::mem::replace(slot, Slot::Used { outcome: None }) {
            Slot::Pending { record, .. } => {
                inner.pending.retain(|t| t != token);
                Taken::Found(record)
            }
            Slot::Used { outcome } => {
                *slot = Slot::Used { outcome: outcome.clone() };
                Taken::Used(outcome)
            }
            Slot::Evicted => {
                *slot = Slot::Evicted;
                Taken::Evicted
            }
        }
    }

    /// Records what the attempt that took `token` did. Ignored for tokens not taken.
    pub fn settle(&self, token: &str, outcome: Vec<u8>) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(Slot::Used { outcome: slot }) = inner.slots.get_mut(token) {
            *slot = Some(outcome);
        }
    }

    /// Number of proposals that count towards capacity (for tests and metrics).
    pub fn pending_len(&self) -> usize {
        self.inner.lock().unwrap().pending.len()
    }
}

fn forget_oldest_settled(inner: &mut Inner) {
    let mut scanned = 0;
    while inner.slots.len() > REMEMBERED + inner.pending.len() && scanned < inner.minted.len() {
        let Some(token) = inner.minted.pop_front() else {
            break;
        };
        if inner.pending.contains(&token) {
            inner.minted.push_back(token);
            scanned += 1;
        } else {
            inner.slots.remove(&token);
        }
    }
}

/// `chg-` followed by 128 bits from the OS-seeded CSPRNG, in hex.
fn mint_token() -> String {
    let bits: u128 = rand::random();
    format!("chg-{bits:032x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_chg_plus_128_bits() {
        let store = ProposalStore::new();
        let (a, _) = store.put(vec![1], 10, 20, 0);
        let (b, _) = store.put(vec![2], 10, 20, 0);
        assert_ne!(a, b);
        assert!(a.starts_with("chg-") && a.len() == 4 + 32 && a[4..].bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn take_is_single_use_and_settle_is_reported_on_replay() {
        let store = ProposalStore::new();
        let (t, _) = store.put(b"rec".to_vec(), 100, 20, 0);
        assert_eq!(store.peek(&t), Taken::Found(b"rec".to_vec()));
        assert_eq!(store.take(&t), Taken::Found(b"rec".to_vec()));
        assert_eq!(store.take(&t), Taken::Used(None));
        store.settle(&t, b"executed".to_vec());
        assert_eq!(store.take(&t), Taken::Used(Some(b"executed".to_vec())));
        assert_eq!(store.take("chg-nope"), Taken::Unknown);
    }

    #[test]
    fn capacity_evicts_oldest_once_and_expired_do_not_count() {
        let store = ProposalStore::new();
        let tokens: Vec<String> = (0..20).map(|i| store.put(vec![i], 1000, 20, 0).0).collect();
        let (_, evicted) = store.put(vec![99], 1000, 20, 0);
        assert_eq!(evicted, vec![tokens[0].clone()]);
        assert_eq!(store.take(&tokens[0]), Taken::Evicted);
        assert_eq!(store.pending_len(), 20);
        // at t=2000 every earlier proposal has expired: nothing is evicted, they stay findable
        let (_, evicted) = store.put(vec![100], 3000, 20, 2000);
        assert!(evicted.is_empty());
        assert_eq!(store.pending_len(), 1);
        assert_eq!(store.peek(&tokens[5]), Taken::Found(vec![5]));
    }

    #[test]
    fn concurrent_takes_have_exactly_one_winner() {
        let store = std::sync::Arc::new(ProposalStore::new());
        let (t, _) = store.put(vec![7], 100, 20, 0);
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (s, t) = (store.clone(), t.clone());
                std::thread::spawn(move || s.take(&t))
            })
            .collect();
        let wins = handles.into_iter().map(|h| h.join().unwrap()).filter(|r| matches!(r, Taken::Found(_))).count();
        assert_eq!(wins, 1);
    }
}
