//! The tokens proposals are stored under.

/// `chg-` followed by 128 bits from the OS-seeded CSPRNG, in hex.
pub(crate) fn mint_token() -> String {
    let bits: u128 = rand::random();
    format!("chg-{bits:032x}")
}

/// Whether `text` has the shape of a token this server mints (anything else names no proposal).
pub(crate) fn is_token(text: &str) -> bool {
    text.len() == 36 && text.starts_with("chg-") && text[4..].bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_minted_token_has_the_shape() {
        assert!(super::is_token(&super::mint_token()));
        for not in ["", "chg-", "chg-0123", &format!("chg-{}", "A".repeat(32)), &format!("chg-{}", "0".repeat(33))] {
            assert!(!super::is_token(not), "{not}");
        }
    }
}
