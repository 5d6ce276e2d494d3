//! Quoting untrusted text back to its sender: errors name what was wrong with a short prefix of
//! it, never the whole value (a 1 MiB argument must not come back as a 4 MB error).

/// The longest quote of an untrusted value in an error.
pub const QUOTE_CHARS: usize = 200;

/// `s` cut to `max` characters, saying how much was left out.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((end, _)) => format!("{}… ({} more characters)", &s[..end], s[end..].chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_clipped_with_a_count() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("abcdef", 3), "abc… (3 more characters)");
        assert_eq!(clip("ééééé", 2), "éé… (3 more characters)");
    }
}
