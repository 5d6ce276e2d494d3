//! The tokens proposals are stored under.

/// `chg-` followed by 128 bits from the OS-seeded CSPRNG, in hex.
pub fn mint_token() -> String {
    let bits: u128 = rand::random();
    format!("chg-{bits:032x}")
}
