//! The things that count once across every replica sharing the proposal store: each is claimed
//! in the store by a key derived here, and nowhere else, so no two paths can spell one
//! differently (and let it count twice) or two things alike (and let one block the other).

use sha2::{Digest, Sha256};

/// Something that counts once.
#[derive(Clone, Copy, Debug)]
pub enum Once<'a> {
    /// A 2026-07-28 first round's answer, by the id sealed into its `requestState`.
    StatelessAnswer(&'a str),
    /// A decision made on the approval page, by its id.
    PageDecision(&'a str),
    /// The approval page's sign-in callback, by its OpenID `state`.
    PageSignIn(&'a str),
    /// A passkey enrollment's state, as stored while the browser makes the key.
    PasskeyEnrollment(&'a [u8]),
    /// A notification of one event, by what makes the event one: sent once across replicas.
    Notice(&'a str),
}

impl Once<'_> {
    /// The store key claimed for it. The spellings are those of earlier versions, so replicas of
    /// two versions sharing a store during an upgrade claim the same keys.
    pub(crate) fn key(&self) -> String {
        match self {
            // 128 random bits in hex, unprefixed: no other key is 32 hex digits
            Once::StatelessAnswer(id) => id.to_string(),
            Once::PageDecision(id) => format!("page:{id}"),
            Once::PageSignIn(state) => format!("page-signin:{}", hex::encode(Sha256::digest(state.as_bytes()))),
            Once::PasskeyEnrollment(state) => format!("passkey-enroll-used:{}", hex::encode(Sha256::digest(state))),
            Once::Notice(event) => format!("notice:{}", hex::encode(Sha256::digest(event.as_bytes()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_keys() {
        let id = "0123456789abcdef0123456789abcdef";
        let keys = [
            Once::StatelessAnswer(id).key(),
            Once::PageDecision(id).key(),
            Once::PageSignIn(id).key(),
            Once::PasskeyEnrollment(id.as_bytes()).key(),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b, "two kinds share a key");
            }
        }
        assert_ne!(Once::PageSignIn("a").key(), Once::PageSignIn("b").key());
    }

    #[test]
    fn the_keys_are_the_earlier_versions_spellings() {
        assert_eq!(Once::StatelessAnswer("ab12").key(), "ab12");
        assert_eq!(Once::PageDecision("d-1").key(), "page:d-1");
        // sha256("s") and sha256("e"), as `printf s | sha256sum` prints them
        assert_eq!(
            Once::PageSignIn("s").key(),
            "page-signin:043a718774c572bd8a25adbeb1bfcd5c0256ae11cecf9f9c3f925d0e52beaf89"
        );
        assert_eq!(
            Once::PasskeyEnrollment(b"e").key(),
            "passkey-enroll-used:3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea"
        );
    }
}
