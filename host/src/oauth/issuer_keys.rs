//! An issuer's signing keys as this server knows them: read at start, fetched again
//! periodically and when a token names a key not known (at most every
//! [`super::UNKNOWN_KID_REFRESH`], one fetch at a time). The resource server verifies access
//! tokens with them, the approval page its ID tokens.

use std::sync::{Arc, RwLock};
use std::time::Instant;

use reqwest::Url;

use super::UNKNOWN_KID_REFRESH;
use super::discovery::Fetcher;
use super::jwks::{Alg, KeySet};

pub(crate) struct IssuerKeys {
    fetcher: Fetcher,
    jwks_uri: Url,
    keys: RwLock<Arc<KeySet>>,
    /// When a token with an unknown `kid` last made the keys be fetched; the lock makes such
    /// fetches one at a time.
    unknown_kid_refresh: tokio::sync::Mutex<Option<Instant>>,
}

impl IssuerKeys {
    pub(crate) fn new(fetcher: Fetcher, jwks_uri: Url, keys: KeySet) -> Self {
        IssuerKeys {
            fetcher,
            jwks_uri,
            keys: RwLock::new(Arc::new(keys)),
            unknown_kid_refresh: tokio::sync::Mutex::new(None),
        }
    }

    /// The HTTP client for the issuer (the approval page redeems its codes with it).
    pub(crate) fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    pub(crate) fn current(&self) -> Arc<KeySet> {
        self.keys.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Fetches the keys again; a failure keeps the ones known. `on_change` runs, under the keys'
    /// write lock, when the new set differs from the known one.
    pub(crate) async fn refresh(&self, why: &str, on_change: impl FnOnce()) {
        match self.fetcher.keys(&self.jwks_uri).await {
            Ok(set) if !set.keys.is_empty() => {
                tracing::info!(keys = set.keys.len(), skipped = set.skipped, "OAuth: signing keys fetched ({why})");
                let mut keys = self.keys.write().unwrap_or_else(|p| p.into_inner());
                if **keys != set {
                    on_change();
                }
                *keys = Arc::new(set);
            }
            Ok(_) => tracing::warn!("OAuth: the issuer's JWK Set has no usable key now ({why}); the known keys stay"),
            Err(e) => tracing::warn!("OAuth: fetching the signing keys failed ({why}): {e}; the known keys stay"),
        }
    }

    /// The keys to verify a token naming `kid` with `alg`: the known ones, fetched again first
    /// when none of them fits it (see [`IssuerKeys::refresh`] for `on_change`). The second value
    /// says whether this call fetched.
    pub(crate) async fn for_token(&self, kid: Option<&str>, alg: Alg, on_change: impl FnOnce()) -> (Arc<KeySet>, bool) {
        let keys = self.current();
        if keys.find(kid, alg).is_some() {
            return (keys, false);
        }
        let mut last = self.unknown_kid_refresh.lock().await;
        // another request may have fetched them while this one waited
        let keys = self.current();
        if keys.find(kid, alg).is_some() || last.is_some_and(|t| t.elapsed() < UNKNOWN_KID_REFRESH) {
            return (keys, false);
        }
        *last = Some(Instant::now());
        self.refresh("a token named a key not known", on_change).await;
        (self.current(), true)
    }
}
