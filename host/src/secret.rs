//! A string that never prints: client secrets and bearer tokens live only in this type.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for the one place that must send it (an HTTP header or the token request).
    pub(crate) fn expose(&self) -> &str {
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

/// A secret from environment variable `var` or from the owner-only file `flag` names (each such
/// flag also reads `{var}_FILE`: systemd's credentials and Kubernetes' secret volumes are files).
/// Given both ways is an error naming both; a file's surrounding whitespace (its last newline) is
/// not part of the secret. `from_env` is `var`'s value, passed in so tests need no environment.
pub(crate) fn from_env_or_file(
    from_env: Option<String>,
    file: Option<&std::path::Path>,
    var: &str,
    flag: &str,
) -> anyhow::Result<Option<Secret>> {
    match (from_env.filter(|s| !s.is_empty()), file) {
        (Some(_), Some(_)) => anyhow::bail!("{var} and {flag} (or {var}_FILE) are both set: keep one"),
        (Some(value), None) => Ok(Some(Secret::new(value))),
        (None, Some(path)) => {
            let text = read_private_file(path, flag)?;
            let text = text.trim();
            if text.is_empty() {
                anyhow::bail!("{flag} {} is empty", path.display());
            }
            Ok(Some(Secret::new(text)))
        }
        (None, None) => Ok(None),
    }
}

/// Reads a file that holds secrets (`flag` names it in errors): it must be owned by the user
/// running the server (or root) and readable by nobody else, as OpenSSH requires of its keys.
/// Owner and mode are those of the file read (a symlink is followed), taken from the open file,
/// so it cannot be swapped between the check and the read. Errors never hold the contents.
pub(crate) fn read_private_file(path: &std::path::Path, flag: &str) -> anyhow::Result<String> {
    use std::io::Read;
    let shown = path.display();
    let mut file = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("reading {flag} {shown}: {e}"))?;
    let meta = file.metadata().map_err(|e| anyhow::anyhow!("reading {flag} {shown}: {e}"))?;
    if let (Some(owner), Some(me)) = (crate::platform::owner(&meta), crate::platform::effective_uid())
        && owner != me
        && owner != 0
    {
        anyhow::bail!(
            "{flag} {shown} is owned by uid {owner}, not by the user running the server (uid {me}) or root: another user \
             could change it (chown it, as OpenSSH requires of its key files)"
        );
    }
    if let Some(mode) = crate::platform::mode(&meta)
        && mode & 0o077 != 0
    {
        anyhow::bail!(
            "{flag} {shown} has mode {mode:03o}: secrets must not be readable by group or others (chmod 600 {shown})"
        );
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(|e| anyhow::anyhow!("reading {flag} {shown}: {e}"))?;
    Ok(text)
}

/// `url` with any credentials it carries (`user:password@`) replaced by `***`, for anything a
/// person or a log can read.
pub(crate) fn redact_url(url: &str) -> String {
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
