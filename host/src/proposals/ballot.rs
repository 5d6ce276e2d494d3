//! The approvals a request gathers on the page before its decision closes: a request is waiting,
//! then partly approved (some places of its quorum filled), then closed by the one decision
//! written for it (approved when the quorum is whole, or declined), in every store alike.
//!
//! Built only from two atomic steps every backend has: the first write of a note, and its read.
//! The approvals fill numbered places in order (`page-approval:ID:1`, `:2`, ...), each written
//! only if absent, so two replicas approving at once take two places and neither is lost; a
//! person already in a place is told so and takes no second one. The decision is one more note
//! written only if absent ([`super::NoteKey::PageDecision`]): of an approval that makes the quorum
//! whole and a decline racing it, exactly one closes the request. [`Model`] is the same steps on
//! plain data; the conformance suite runs both on every store.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{NoteKey, ProposalStore, StoreUnavailable};

/// The most approvals one request keeps (a quorum asks for at most nine places per rule).
pub(crate) const MAX_APPROVALS: u8 = 16;

/// An approval, as kept: whose it is.
pub trait Vote: Serialize + DeserializeOwned {
    fn person(&self) -> &str;
}

/// What casting an approval did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cast {
    /// Kept, in place `n` (from 1): the approvals before it and this one are the request's.
    Counted(u8),
    /// This person's approval was kept already (in that place): no second one.
    Again(u8),
    /// The request was decided before this approval was kept: it counts for nothing.
    Closed,
    /// All [`MAX_APPROVALS`] places are taken.
    Full,
}

/// Where a request's approvals stand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// No approval yet, no decision.
    Waiting,
    /// Some approvals, no decision yet.
    PartlyApproved(usize),
    /// The decision is written.
    Closed,
}

/// A request's approvals in `store`: page `page`'s, kept for `ttl_ms` from `now_ms`.
pub struct Ballot<'a> {
    pub store: &'a ProposalStore,
    pub page: &'a str,
    pub ttl_ms: u64,
    pub now_ms: u64,
}

fn unreadable(e: serde_json::Error) -> StoreUnavailable {
    StoreUnavailable::full(format!("a stored approval does not read: {e}"))
}

impl Ballot<'_> {
    /// The approvals kept, in their places' order.
    pub async fn votes<V: DeserializeOwned>(&self) -> Result<Vec<V>, StoreUnavailable> {
        let mut votes = Vec::new();
        for place in 1..=MAX_APPROVALS {
            match self.store.note_get(&NoteKey::PageApproval(self.page, place), self.now_ms).await? {
                Some(bytes) => votes.push(serde_json::from_slice(&bytes).map_err(unreadable)?),
                None => break,
            }
        }
        Ok(votes)
    }

    /// The decision, once written.
    pub async fn closing(&self) -> Result<Option<Vec<u8>>, StoreUnavailable> {
        self.store.note_get(&NoteKey::PageDecision(self.page), self.now_ms).await
    }

    pub async fn standing(&self) -> Result<Standing, StoreUnavailable> {
        if self.closing().await?.is_some() {
            return Ok(Standing::Closed);
        }
        let kept = self.store.note_get(&NoteKey::PageApproval(self.page, 1), self.now_ms).await?;
        match kept {
            None => Ok(Standing::Waiting),
            Some(_) => Ok(Standing::PartlyApproved(self.votes::<serde_json::Value>().await?.len())),
        }
    }

    /// Keeps `vote` in the first free place, unless the request is decided or its person has a
    /// place already.
    pub async fn cast<V: Vote>(&self, vote: &V) -> Result<Cast, StoreUnavailable> {
        if self.closing().await?.is_some() {
            return Ok(Cast::Closed);
        }
        let bytes = serde_json::to_vec(vote).expect("an approval serializes");
        for place in 1..=MAX_APPROVALS {
            let key = NoteKey::PageApproval(self.page, place);
            if self.store.note_put(&key, &bytes, self.ttl_ms, true, self.now_ms).await? {
                return Ok(Cast::Counted(place));
            }
            let Some(held) = self.store.note_get(&key, self.now_ms).await? else {
                // kept a moment ago and gone already: its time is up, and so is the request's
                return Ok(Cast::Closed);
            };
            if held == bytes {
                // this very approval, written by an earlier sending whose answer was lost
                return Ok(Cast::Counted(place));
            }
            let held: V = serde_json::from_slice(&held).map_err(unreadable)?;
            if held.person() == vote.person() {
                return Ok(Cast::Again(place));
            }
        }
        Ok(Cast::Full)
    }

    /// Writes the decision unless one was written: `true` when this one closes the request.
    pub async fn close(&self, decision: &[u8]) -> Result<bool, StoreUnavailable> {
        self.store.note_put(&NoteKey::PageDecision(self.page), decision, self.ttl_ms, true, self.now_ms).await
    }
}

/// The same steps on plain data: what every store must answer, one step at a time.
#[derive(Default, Debug)]
pub struct Model {
    /// Each place's approval: whose, and which (its id).
    votes: Vec<(String, String)>,
    closed: Option<Vec<u8>>,
}

impl Model {
    /// `person`'s approval `id`: the same approval sent again finds its own place.
    pub fn cast(&mut self, person: &str, id: &str) -> Cast {
        if self.closed.is_some() {
            return Cast::Closed;
        }
        if let Some(at) = self.votes.iter().position(|(p, _)| p == person) {
            return match self.votes[at].1 == id {
                true => Cast::Counted(at as u8 + 1),
                false => Cast::Again(at as u8 + 1),
            };
        }
        if self.votes.len() >= MAX_APPROVALS as usize {
            return Cast::Full;
        }
        self.votes.push((person.to_string(), id.to_string()));
        Cast::Counted(self.votes.len() as u8)
    }

    pub fn close(&mut self, decision: &[u8]) -> bool {
        let first = self.closed.is_none();
        if first {
            self.closed = Some(decision.to_vec());
        }
        first
    }

    /// Whose approval each place holds, in order.
    pub fn votes(&self) -> Vec<String> {
        self.votes.iter().map(|(p, _)| p.clone()).collect()
    }

    pub fn closing(&self) -> Option<&[u8]> {
        self.closed.as_deref()
    }

    pub fn standing(&self) -> Standing {
        match (&self.closed, self.votes.len()) {
            (Some(_), _) => Standing::Closed,
            (None, 0) => Standing::Waiting,
            (None, n) => Standing::PartlyApproved(n),
        }
    }
}

/// The simplest approval, for the model's and the suite's sequences: a person, and which of
/// their approvals it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Person {
    pub person: String,
    pub id: String,
}

impl Vote for Person {
    fn person(&self) -> &str {
        &self.person
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(p: &str, id: &str) -> Person {
        Person { person: p.into(), id: id.into() }
    }

    /// Every sequence of up to four steps (three people casting, one sending again, two decisions
    /// closing) on the
    /// memory store and on the model gives the same answers and leaves the same standing.
    #[tokio::test]
    async fn every_short_sequence_answers_as_the_model_does() {
        // "again": the last approval sent again (its answer lost), which finds its own place
        let steps = ["alice", "bob", "alice", "close:approve", "close:decline", "carol", "again"];
        let mut sequences: Vec<Vec<usize>> = vec![vec![]];
        for _ in 0..4 {
            let longer: Vec<Vec<usize>> = sequences
                .iter()
                .filter(|s| s.len() == sequences.last().unwrap().len())
                .flat_map(|s| (0..steps.len()).map(move |i| [s.clone(), vec![i]].concat()))
                .collect();
            sequences.extend(longer);
        }
        for (n, sequence) in sequences.iter().enumerate() {
            let store = ProposalStore::new();
            let page = format!("apv-{n}");
            let ballot = Ballot { store: &store, page: &page, ttl_ms: 60_000, now_ms: 1 };
            let mut model = Model::default();
            let mut last: Option<Person> = None;
            for (k, &i) in sequence.iter().enumerate() {
                let vote = match (steps[i], &last) {
                    ("again", Some(sent)) => sent.clone(),
                    ("again", None) => person("nobody", "n"),
                    (who, _) => person(who, &format!("{who}-{k}")),
                };
                match steps[i].strip_prefix("close:") {
                    Some(d) => assert_eq!(ballot.close(d.as_bytes()).await.unwrap(), model.close(d.as_bytes())),
                    None => {
                        let cast = ballot.cast(&vote).await.unwrap();
                        assert_eq!(cast, model.cast(&vote.person, &vote.id), "{sequence:?}");
                        last = Some(vote);
                    }
                }
                assert_eq!(ballot.standing().await.unwrap(), model.standing(), "{sequence:?}");
            }
            let kept: Vec<String> = ballot.votes::<Person>().await.unwrap().into_iter().map(|p| p.person).collect();
            assert_eq!(kept, model.votes(), "{sequence:?}");
            assert_eq!(ballot.closing().await.unwrap().as_deref(), model.closing(), "{sequence:?}");
        }
    }

    #[tokio::test]
    async fn a_ballot_keeps_at_most_its_places() {
        let store = ProposalStore::new();
        let ballot = Ballot { store: &store, page: "apv-full", ttl_ms: 60_000, now_ms: 1 };
        for i in 1..=MAX_APPROVALS {
            assert_eq!(ballot.cast(&person(&format!("p{i}"), "1")).await.unwrap(), Cast::Counted(i));
        }
        assert_eq!(ballot.cast(&person("one-too-many", "1")).await.unwrap(), Cast::Full);
        assert_eq!(ballot.cast(&person("p3", "2")).await.unwrap(), Cast::Again(3));
        assert_eq!(ballot.cast(&person("p3", "1")).await.unwrap(), Cast::Counted(3), "the same one, sent again");
    }
}
