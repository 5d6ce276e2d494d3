//! The host's own short-lived notes beside the proposals (the approval page's records and the
//! decisions made on it), in the memory store: bounded in count and size whatever the callers
//! do, forgotten when their time is up. The Redis store keeps them as plain keys with a TTL.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

/// The largest note kept (a page record holds one form, at most 16 KiB, and a little more).
pub const MAX_NOTE_BYTES: usize = 32 * 1024;
/// Notes kept at most in memory; beyond it a new note is refused (the live ones stay).
pub const MAX_NOTES: usize = 4096;

#[derive(Default)]
pub struct Notes {
    inner: Mutex<Inner>,
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

impl Notes {
    /// Writes `key` for `ttl_ms`; see [`super::ProposalStore::note_put`]. `Err` says why a note
    /// was refused (too large, or the store full of live notes).
    pub fn put(&self, key: &str, value: &[u8], ttl_ms: u64, only_if_absent: bool, now_ms: u64) -> Result<bool, String> {
        if value.len() > MAX_NOTE_BYTES {
            return Err(format!("a note of {} bytes is more than the {MAX_NOTE_BYTES} kept", value.len()));
        }
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.forget_expired(now_ms);
        if let Some((until, _)) = inner.values.get(key) {
            if only_if_absent {
                return Ok(false);
            }
            let old = (*until, key.to_string());
            inner.by_expiry.remove(&old);
        } else if inner.values.len() >= MAX_NOTES {
            return Err(format!("{MAX_NOTES} notes are live, the most this server keeps in memory"));
        }
        let until = now_ms.saturating_add(ttl_ms);
        inner.values.insert(key.to_string(), (until, value.to_vec()));
        inner.by_expiry.insert((until, key.to_string()));
        Ok(true)
    }

    pub fn get(&self, key: &str, now_ms: u64) -> Option<Vec<u8>> {
        let inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        inner.values.get(key).filter(|(until, _)| *until > now_ms).map(|(_, v)| v.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn notes_are_bounded_in_size_and_count() {
        let notes = Notes::default();
        assert!(notes.put("big", &vec![0; MAX_NOTE_BYTES + 1], 10, false, 0).unwrap_err().contains("bytes"));
        for i in 0..MAX_NOTES {
            assert_eq!(notes.put(&i.to_string(), b"v", 100, false, 0), Ok(true));
        }
        assert!(notes.put("one more", b"v", 100, false, 0).unwrap_err().contains("live"));
        assert_eq!(notes.put("0", b"w", 100, false, 0), Ok(true), "an existing note may be rewritten");
        assert_eq!(notes.put("one more", b"v", 100, false, 100), Ok(true), "room once the others expired");
    }
}
