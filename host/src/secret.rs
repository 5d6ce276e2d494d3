//! A string that never prints: client secrets and bearer tokens live only in this type.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for the one place that must send it (an HTTP header or the token request).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// `url` with any credentials it carries (`user:password@`) replaced by `***`, for anything a
/// person or a log can read.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_urls_are_redacted() {
        assert_eq!(redact_url("http://user:pa%40ss@host:8080/x?y=1"), "http://***@host:8080/x?y=1");
        assert_eq!(redact_url("https://token@api.example.com"), "https://***@api.example.com");
        assert_eq!(redact_url("https://api.equinix.com/fabric@v4"), "https://api.equinix.com/fabric@v4");
        assert_eq!(redact_url("not a url"), "not a url");
    }

    #[test]
    fn secret_never_formats_its_value() {
        let s = Secret::new("s3cr3t-value");
        assert!(!format!("{s:?} {s}").contains("s3cr3t"));
        assert_eq!(s.expose(), "s3cr3t-value");
    }
}
