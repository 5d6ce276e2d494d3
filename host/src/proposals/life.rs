//! A proposal's life, the same in every store: its phases and the pure steps between them.
//!
//! No I/O and no clock of its own (`now_ms` is passed in), so it is tested to exhaustion here.
//! [`Model`] is built from these steps alone, and the memory store is that model under its mutex;
//! etcd applies the steps under a revision compare, and the Redis store keeps each step one Lua
//! script for its atomicity, spelling the phases as [`Phase`] does. The conformance suite
//! (`tests/tests/e2e/store_conformance.rs`) runs the same sequences on every store against the
//! model, past the forgetting limit too.
//!
//! A pending proposal is found by a take whether or not it has expired: expiry is the
//! component's rule, and it is told apart from an unknown token. A take makes it used (single
//! use: the step that finds it is the step that spends it); a settle records what the attempt
//! did, and only on a used proposal. Capacity counts a principal's pending proposals that have
//! not expired: the oldest beyond it are evicted by the put that needs their place.
//!
//! What a person decides about a proposal on the approval page has a life of its own beside it
//! (waiting, partly approved under a quorum, decided): [`super::ballot`], with its own model.

use std::collections::HashMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::bindings::proposal_store::Taken;
use crate::principal::Principal;

/// How long used and evicted tokens are remembered after they stop being pending, so a replay
/// is answered precisely (a shared store's key expiry; the memory store bounds by count).
pub(crate) const TOMBSTONE: Duration = Duration::from_secs(24 * 3600);

/// How many tokens that stopped being pending (taken, evicted, or found expired by a later put of
/// theirs) every store remembers per principal, in the order they stopped; beyond it the oldest
/// are forgotten (they then read as unknown). With the host's limits this bounds what one
/// principal keeps: 20 pending records and 64 finished ones, each at most
/// [`super::MAX_RECORD_BYTES`].
pub const FINISHED_PER_PRINCIPAL: u32 = 64;

/// A proposal's phase, spelt the same in every store (etcd's JSON, Redis's hashes): serde writes
/// and reads [`Phase::name`] too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub(crate) enum Phase {
    Pending,
    Used,
    Evicted,
}

impl Phase {
    /// The phase a store wrote as `name`.
    pub(crate) fn named(name: &str) -> Option<Phase> {
        [Phase::Pending, Phase::Used, Phase::Evicted].into_iter().find(|p| p.name() == name)
    }

    /// The name stores write.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Phase::Pending => "pending",
            Phase::Used => "used",
            Phase::Evicted => "evicted",
        }
    }
}

impl From<Phase> for &'static str {
    fn from(phase: Phase) -> Self {
        phase.name()
    }
}

impl TryFrom<String> for Phase {
    type Error = String;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        Phase::named(&name).ok_or_else(|| format!("unknown proposal phase {name:?}"))
    }
}

/// One proposal's state and what it keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Life {
    Pending {
        record: Vec<u8>,
        expires_at_ms: u64,
    },
    /// Taken; `outcome` once the attempt that took it settled.
    Used {
        outcome: Option<Vec<u8>>,
    },
    /// Its place was needed by a newer proposal of its principal before anyone took it.
    Evicted,
}

impl Life {
    pub(crate) fn phase(&self) -> Phase {
        match self {
            Life::Pending { .. } => Phase::Pending,
            Life::Used { .. } => Phase::Used,
            Life::Evicted => Phase::Evicted,
        }
    }

    /// What a peek finds (a peek changes nothing).
    pub(crate) fn peek(&self) -> Taken {
        match self {
            Life::Pending { record, .. } => Taken::Found(record.clone()),
            Life::Used { outcome } => Taken::Used(outcome.clone()),
            Life::Evicted => Taken::Evicted,
        }
    }

    /// A take: what it finds, and what the proposal is afterwards. Only a pending proposal is
    /// found, and it is then used with no outcome yet; any other is left as it was.
    pub(crate) fn take(self) -> (Taken, Life) {
        match self {
            Life::Pending { record, .. } => (Taken::Found(record), Life::Used { outcome: None }),
            kept => (kept.peek(), kept),
        }
    }

    /// A settle: the proposal with `outcome` recorded, or `None` when there is nothing to settle
    /// (it was not taken). A later settle replaces an earlier one, as the attempt's last word.
    pub(crate) fn settle(&self, outcome: Vec<u8>) -> Option<Life> {
        matches!(self, Life::Used { .. }).then_some(Life::Used { outcome: Some(outcome) })
    }

    /// Whether it still holds one of its principal's places at `now_ms`.
    pub(crate) fn holds_a_place(&self, now_ms: u64) -> bool {
        matches!(self, Life::Pending { expires_at_ms, .. } if *expires_at_ms > now_ms)
    }

    /// The bytes it keeps (a memory bound counts them).
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Life::Pending { record, .. } => record.len(),
            Life::Used { outcome } => outcome.as_ref().map_or(0, Vec::len),
            Life::Evicted => 0,
        }
    }
}

/// What a put does to its principal's pending proposals, oldest first.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Room<T> {
    /// Past their expiry: they stop holding a place (and stay findable, to be told "expired").
    pub expired: Vec<T>,
    /// The oldest of the others beyond `capacity - 1`: evicted so that the new one fits.
    pub evicted: Vec<T>,
    /// Still pending, oldest first; the new proposal goes after them.
    pub kept: Vec<T>,
}

/// Makes room for one more of a principal's proposals among `pending` (oldest first, each with
/// when it expires) under `capacity` (at least one).
pub(crate) fn make_room<T>(pending: impl IntoIterator<Item = (T, u64)>, capacity: u32, now_ms: u64) -> Room<T> {
    let (mut expired, mut kept) = (Vec::new(), Vec::new());
    for (t, expires_at_ms) in pending {
        if expires_at_ms > now_ms { kept.push(t) } else { expired.push(t) }
    }
    let over = (kept.len() + 1).saturating_sub(capacity.max(1) as usize);
    let evicted = kept.drain(..over).collect();
    Room { expired, evicted, kept }
}

/// [`make_room`] among a principal's queued tokens (oldest first), each looked up by `life_of`:
/// the ones no longer pending (taken, evicted, forgotten) hold no place and leave the queue.
pub(crate) fn make_room_among<'a>(
    queue: Vec<String>,
    life_of: impl Fn(&str) -> Option<&'a Life>,
    capacity: u32,
    now_ms: u64,
) -> Room<String> {
    let pending: Vec<(String, u64)> = queue
        .into_iter()
        .filter_map(|t| match life_of(&t) {
            Some(Life::Pending { expires_at_ms, .. }) => Some((t, *expires_at_ms)),
            _ => None,
        })
        .collect();
    make_room(pending, capacity, now_ms)
}

/// Appends `tokens` to a principal's `finished` ones, in the order they stopped being pending (one
/// finished again, an expired one taken after a put found it expired, becomes the newest), and
/// returns the oldest beyond [`FINISHED_PER_PRINCIPAL`]: the store forgets them.
pub(crate) fn finish_among<'t>(
    finished: &mut std::collections::VecDeque<String>,
    tokens: impl IntoIterator<Item = &'t String>,
) -> Vec<String> {
    for token in tokens {
        finished.retain(|t| t != token);
        finished.push_back(token.clone());
    }
    let over = finished.len().saturating_sub(FINISHED_PER_PRINCIPAL as usize);
    finished.drain(..over).collect()
}

/// Whether `owner` (as a store wrote it) is `who`: another principal's token reads as unknown.
pub(crate) fn owned_by(owner: &str, who: &Principal) -> bool {
    owner == who.as_str()
}

/// A store built from these steps alone: what every backend must answer, forgetting included (a
/// principal's finished tokens beyond [`FINISHED_PER_PRINCIPAL`], oldest first). It is the memory
/// store's state too (`memory.rs` adds the tokens, the bound on all principals together and the
/// answers' claims), and the conformance suite walks the shared stores against it.
#[derive(Default)]
pub struct Model {
    proposals: HashMap<String, (Principal, Life)>,
    /// Per principal, the tokens still pending that may hold a place, oldest first.
    queues: HashMap<Principal, Vec<String>>,
    /// Per principal, the tokens that stopped being pending, in the order they did: beyond
    /// [`FINISHED_PER_PRINCIPAL`] the oldest are forgotten (they then read as unknown).
    finished: HashMap<Principal, std::collections::VecDeque<String>>,
    /// The bytes every proposal keeps (records, outcomes), live or not.
    bytes: usize,
}

impl Model {
    /// The tokens a put of `who` at `now_ms` evicts, in order; `token` is then pending.
    pub fn put(
        &mut self,
        who: &Principal,
        token: &str,
        record: Vec<u8>,
        expires_at_ms: u64,
        capacity: u32,
        now_ms: u64,
    ) -> Vec<String> {
        let queue = self.queues.remove(who).unwrap_or_default();
        let life_of = |t: &str| self.proposals.get(t).map(|(_, life)| life);
        let Room { expired, evicted, mut kept } = make_room_among(queue, life_of, capacity, now_ms);
        for t in &evicted {
            self.set(t, Life::Evicted);
        }
        self.finish(who, expired.iter().chain(&evicted));
        kept.push(token.to_string());
        self.queues.insert(who.clone(), kept);
        self.bytes += record.len();
        self.proposals.insert(token.to_string(), (who.clone(), Life::Pending { record, expires_at_ms }));
        evicted
    }

    /// Sets `token`'s life, keeping the byte count.
    fn set(&mut self, token: &str, life: Life) {
        if let Some((_, kept)) = self.proposals.get_mut(token) {
            self.bytes = self.bytes + life.bytes() - kept.bytes();
            *kept = life;
        }
    }

    /// `who`'s `tokens` stopped being pending, in this order; the oldest finished beyond
    /// [`FINISHED_PER_PRINCIPAL`] are forgotten.
    fn finish<'t>(&mut self, who: &Principal, tokens: impl IntoIterator<Item = &'t String>) {
        for oldest in finish_among(self.finished.entry(who.clone()).or_default(), tokens) {
            if let Some((_, life)) = self.proposals.remove(&oldest) {
                self.bytes -= life.bytes();
            }
        }
    }

    pub fn peek(&self, who: &Principal, token: &str) -> Taken {
        match self.proposals.get(token) {
            Some((owner, life)) if owner == who => life.peek(),
            _ => Taken::Unknown,
        }
    }

    pub fn take(&mut self, who: &Principal, token: &str) -> Taken {
        let Some((_, life)) = self.proposals.get_mut(token).filter(|(owner, _)| owner == who) else {
            return Taken::Unknown;
        };
        // the record leaves with the take, not copied
        let before = life.bytes();
        let (found, after) = std::mem::replace(life, Life::Evicted).take();
        self.bytes = self.bytes + after.bytes() - before;
        *life = after;
        if matches!(found, Taken::Found(_)) {
            if let Some(queue) = self.queues.get_mut(who) {
                queue.retain(|t| t != token);
            }
            self.finish(who, [&token.to_string()]);
        }
        found
    }

    pub fn settle(&mut self, who: &Principal, token: &str, outcome: Vec<u8>) {
        let settled = match self.proposals.get(token) {
            Some((owner, life)) if owner == who => life.settle(outcome),
            _ => None,
        };
        if let Some(after) = settled {
            self.set(token, after);
        }
    }

    /// The proposals of every principal that hold a place at `now_ms`.
    #[cfg(test)]
    pub(crate) fn pending_len(&self, now_ms: u64) -> usize {
        self.proposals.values().filter(|(_, life)| life.holds_a_place(now_ms)).count()
    }

    /// The proposals still queued for a place (pending, some perhaps past their expiry until a
    /// put of theirs finds them so), all principals together.
    pub(crate) fn queued_len(&self) -> usize {
        self.queues.values().map(Vec::len).sum()
    }

    /// The bytes the queued proposals that hold a place at `now_ms` keep.
    pub(crate) fn live_bytes(&self, now_ms: u64) -> usize {
        let queued = self.queues.values().flatten().filter_map(|t| self.proposals.get(t));
        queued.filter(|(_, life)| life.holds_a_place(now_ms)).map(|(_, life)| life.bytes()).sum()
    }

    /// How many proposals it keeps, live or not, and their bytes.
    pub(crate) fn len(&self) -> usize {
        self.proposals.len()
    }

    pub fn is_empty(&self) -> bool {
        self.proposals.is_empty()
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether `token` is kept and holds a place at `now_ms`.
    pub(crate) fn holds_a_place(&self, token: &str, now_ms: u64) -> bool {
        self.proposals.get(token).is_some_and(|(_, life)| life.holds_a_place(now_ms))
    }

    /// Whether `token` is kept at all.
    pub(crate) fn keeps(&self, token: &str) -> bool {
        self.proposals.contains_key(token)
    }

    /// Forgets `token` (a bound on the store as a whole): it then reads as unknown.
    pub(crate) fn forget(&mut self, token: &str) {
        let Some((owner, life)) = self.proposals.remove(token) else { return };
        self.bytes -= life.bytes();
        if let Some(queue) = self.queues.get_mut(&owner) {
            queue.retain(|t| t != token);
        }
        if let Some(finished) = self.finished.get_mut(&owner) {
            finished.retain(|t| t != token);
            if finished.is_empty() {
                self.finished.remove(&owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(t: &Taken) -> String {
        format!("{t:?}")
    }

    /// Every state a proposal can be in, with a record and an outcome where it keeps one.
    fn every_life() -> Vec<Life> {
        vec![
            Life::Pending { record: b"r".to_vec(), expires_at_ms: 100 },
            Life::Used { outcome: None },
            Life::Used { outcome: Some(b"o".to_vec()) },
            Life::Evicted,
        ]
    }

    #[test]
    fn every_step_from_every_state() {
        for life in every_life() {
            // a peek shows the state and changes nothing
            let peeked = life.peek();
            let (taken, after) = life.clone().take();
            match &life {
                Life::Pending { record, .. } => {
                    assert_eq!(seen(&peeked), seen(&Taken::Found(record.clone())));
                    assert_eq!(seen(&taken), seen(&peeked), "the take finds what a peek shows");
                    assert_eq!(after, Life::Used { outcome: None }, "and spends it");
                    let (again, still) = after.clone().take();
                    assert_eq!(seen(&again), seen(&Taken::Used(None)), "single use");
                    assert_eq!(still, after);
                }
                other => {
                    assert_eq!(seen(&taken), seen(&peeked), "{other:?}");
                    assert_eq!(&after, other, "a take of a proposal not pending changes nothing");
                }
            }
            let settled = life.settle(b"done".to_vec());
            match &life {
                Life::Used { .. } => assert_eq!(settled, Some(Life::Used { outcome: Some(b"done".to_vec()) })),
                other => assert_eq!(settled, None, "{other:?}: only a taken proposal is settled"),
            }
            let written = serde_json::to_value(life.phase()).unwrap();
            assert_eq!(life.phase().name(), written.as_str().unwrap());
            assert_eq!(Phase::named(life.phase().name()), Some(life.phase()));
            assert_eq!(serde_json::from_value::<Phase>(written).unwrap(), life.phase());
        }
        let unknown = serde_json::from_value::<Phase>(serde_json::json!("taken")).unwrap_err();
        assert!(unknown.to_string().contains(r#"unknown proposal phase "taken""#), "{unknown}");
    }

    #[test]
    fn only_a_pending_proposal_before_its_expiry_holds_a_place() {
        for life in every_life() {
            for now in [0, 99, 100, 101] {
                let holds = life.holds_a_place(now);
                assert_eq!(holds, matches!(life, Life::Pending { .. }) && now < 100, "{life:?} at {now}");
            }
        }
    }

    /// Every queue of up to six proposals, each expired or not, under every capacity up to seven.
    #[test]
    fn room_is_made_by_the_expired_first_then_the_oldest() {
        for n in 0..=6usize {
            for expired_mask in 0..(1u32 << n) {
                for capacity in 0..=7u32 {
                    let queue: Vec<(usize, u64)> =
                        (0..n).map(|i| (i, if expired_mask & (1 << i) != 0 { 10 } else { 1000 })).collect();
                    let room = make_room(queue.clone(), capacity, 500);
                    let live: Vec<usize> = queue.iter().filter(|(_, e)| *e > 500).map(|(i, _)| *i).collect();
                    let expired: Vec<usize> = queue.iter().filter(|(_, e)| *e <= 500).map(|(i, _)| *i).collect();
                    assert_eq!(room.expired, expired);
                    // the new proposal fits: the kept ones and it are within the capacity
                    assert!(room.kept.len() < capacity.max(1) as usize, "{room:?} under {capacity}");
                    // the evicted are the oldest live ones, and only as many as needed
                    let over = (live.len() + 1).saturating_sub(capacity.max(1) as usize);
                    assert_eq!(room.evicted, live[..over]);
                    assert_eq!(room.kept, live[over..]);
                }
            }
        }
    }

    /// The running count of bytes is what the proposals keep, through puts that evict, takes,
    /// settles, forgetting past the limit and forgetting by hand.
    #[test]
    fn the_model_counts_the_bytes_its_proposals_keep() {
        let who = Principal::named("bytes");
        let mut m = Model::default();
        let counted = |m: &Model| m.proposals.values().map(|(_, life)| life.bytes()).sum::<usize>();
        for i in 0..(FINISHED_PER_PRINCIPAL as usize + 30) {
            let token = format!("t{i}");
            m.put(&who, &token, vec![0; 10 + i], 1000, 3, i as u64);
            if i % 2 == 0 {
                m.take(&who, &token);
                m.settle(&who, &token, vec![1; 7]);
            }
            if i % 11 == 0 {
                m.forget(&format!("t{}", i / 2));
            }
            assert_eq!(m.bytes(), counted(&m), "after {i}");
        }
        assert!(m.len() <= FINISHED_PER_PRINCIPAL as usize + 3, "{} kept", m.len());
    }

    #[test]
    fn the_model_answers_each_principal_alone() {
        let (alice, bob) = (Principal::named("alice"), Principal::named("bob"));
        let mut m = Model::default();
        assert!(m.put(&alice, "a1", vec![1], 1000, 2, 0).is_empty());
        assert!(m.put(&alice, "a2", vec![2], 1000, 2, 0).is_empty());
        assert!(m.put(&bob, "b1", vec![3], 1000, 2, 0).is_empty(), "bob's capacity is his own");
        assert_eq!(m.put(&alice, "a3", vec![4], 1000, 2, 0), ["a1"]);
        assert_eq!(seen(&m.take(&alice, "a1")), seen(&Taken::Evicted));
        assert_eq!(seen(&m.take(&bob, "a2")), seen(&Taken::Unknown), "another's token is unknown");
        m.settle(&bob, "a2", b"forged".to_vec());
        assert_eq!(seen(&m.take(&alice, "a2")), seen(&Taken::Found(vec![2])));
        assert_eq!(seen(&m.peek(&alice, "a2")), seen(&Taken::Used(None)), "bob's settle was ignored");
        m.settle(&alice, "a2", b"sent".to_vec());
        assert_eq!(seen(&m.take(&alice, "a2")), seen(&Taken::Used(Some(b"sent".to_vec()))));
        assert_eq!(m.pending_len(0), 2, "a3 and b1");
        // at 2000 everything has expired: no place is held, and nothing is evicted for a new one
        assert!(m.put(&alice, "a4", vec![5], 3000, 1, 2000).is_empty());
        assert_eq!(seen(&m.peek(&alice, "a3")), seen(&Taken::Found(vec![4])), "expired, still findable");
    }
}
