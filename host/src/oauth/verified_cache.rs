//! Tokens already verified, by their SHA-256: a client sends the same access token with every
//! request until it expires, and checking its signature again each time would be most of what a
//! request costs (an ES256 or Ed25519 verification takes 50-70 µs here). A hit is only as good as
//! the token's `exp` (checked again at every hit), and the cache is emptied whenever the
//! issuer's keys change, so a withdrawn key stops vouching for the tokens it signed.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::jwt::Verified;

/// Most tokens remembered (about 200 bytes each). Beyond it the expired ones are dropped, and if
/// that is not enough, all of them: the next request of each pays one verification again.
pub(crate) const MAX_ENTRIES: usize = 8192;

#[derive(Default)]
pub struct VerifiedCache {
    state: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    tokens: HashMap<[u8; 32], Verified>,
    /// Counts the clears: a token verified with keys read before a clear is not remembered
    /// after it (it may have been signed by the key the clear was for).
    generation: u64,
}

impl VerifiedCache {
    fn state(&self) -> std::sync::MutexGuard<'_, Entries> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Read before the keys a verification uses, and handed back to [`VerifiedCache::put`].
    pub fn generation(&self) -> u64 {
        self.state().generation
    }

    /// The verified result of `token`, if it was verified before and has not expired at `now`
    /// (seconds since the epoch) with `leeway_secs`.
    pub fn get(&self, token: &str, now: u64, leeway_secs: u64) -> Option<Verified> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut state = self.state();
        let hit = state.tokens.get(&digest)?;
        if now >= hit.expires_at.saturating_add(leeway_secs) {
            state.tokens.remove(&digest);
            return None;
        }
        Some(hit.clone())
    }

    /// Remembers a token that passed every check at `now` with the keys of `generation`.
    pub fn put(&self, token: &str, verified: &Verified, generation: u64, now: u64, leeway_secs: u64) {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut state = self.state();
        if state.generation != generation {
            return;
        }
        if state.tokens.len() >= MAX_ENTRIES {
            state.tokens.retain(|_, v| now < v.expires_at.saturating_add(leeway_secs));
            if state.tokens.len() >= MAX_ENTRIES {
                state.tokens.clear();
            }
        }
        state.tokens.insert(digest, verified.clone());
    }

    /// Forgets every token (the keys changed), and any verification under way.
    pub(crate) fn clear(&self) {
        let mut state = self.state();
        state.tokens.clear();
        state.generation += 1;
    }

    pub fn len(&self) -> usize {
        self.state().tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::Scopes;
    use crate::principal::Principal;

    fn verified(expires_at: u64) -> Verified {
        Verified { principal: Principal::subject("https://idp", "a"), scopes: Scopes::ALL, expires_at }
    }

    #[test]
    fn a_hit_holds_only_until_the_token_expires_and_only_for_the_same_token() {
        let cache = VerifiedCache::default();
        cache.put("token-a", &verified(1000), 0, 900, 30);
        assert_eq!(cache.get("token-a", 1029, 30), Some(verified(1000)));
        assert_eq!(cache.get("token-b", 1000, 30), None);
        assert_eq!(cache.get("token-a", 1030, 30), None, "expired (with the leeway)");
        assert!(cache.is_empty(), "an expired entry is dropped when met");
        cache.put("token-a", &verified(u64::MAX), 0, 900, 30);
        assert!(cache.get("token-a", u64::MAX - 1, 30).is_some(), "no overflow");
        let before = cache.generation();
        cache.clear();
        assert!(cache.get("token-a", 900, 30).is_none());
        cache.put("token-a", &verified(1000), before, 900, 30);
        assert!(cache.get("token-a", 900, 30).is_none(), "verified with the keys before the clear: not kept");
    }

    #[test]
    fn the_cache_stays_bounded() {
        let cache = VerifiedCache::default();
        for i in 0..MAX_ENTRIES {
            cache.put(&format!("expired-{i}"), &verified(10), 0, 5, 0);
        }
        cache.put("fresh", &verified(1000), 0, 500, 0);
        assert_eq!(cache.len(), 1, "the expired ones made room");
        for i in 0..MAX_ENTRIES + 10 {
            cache.put(&format!("live-{i}"), &verified(1000), 0, 500, 0);
        }
        assert!(cache.len() <= MAX_ENTRIES);
    }
}
