//! The ranges the numeric flags of every settings group are checked against, so a limit of 0 (which
//! would refuse or expire everything) is refused by clap with the flag's name.

/// A count limit: 1 to a million (0 would refuse everything), refused by clap otherwise.
pub(crate) fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000)
}

/// A time limit in milliseconds: 1 ms to a day (0 would expire everything at once).
pub(crate) fn at_least_one_ms() -> clap::builder::RangedU64ValueParser<u64> {
    clap::builder::RangedU64ValueParser::<u64>::new().range(1..=86_400_000)
}
