//! Local approvers: people enrolled on this machine with a passkey, who approve creates on a
//! local server's approval page with no identity provider. The passkey is the sign-in: its
//! assertion, made after the authenticator verified the person, signs the exact request.
//!
//! Only the person at the machine enrolls, with a command run in a terminal
//! (`equinix-mcp approvers add NAME`, `approval_page::enrollment`), which serves a one-time link on loopback. The
//! public keys live in one file of the user's state directory ([`default_file`], owner-only),
//! which every local server of that user reads at each approval (so a removal holds at once)
//! and records in its own audit log as it first sees each enrollment and removal.

pub(crate) mod loopback;

use std::path::{Path, PathBuf};

use clap::Args;

use crate::passkeys::store::StoreError;
use crate::passkeys::{Enrollment, PasskeyStore};

/// What an approver's name is prefixed with as a principal (`local:dana`).
pub(crate) use crate::passkeys::LOCAL_PREFIX as PREFIX;

/// Where the approvers file is.
#[derive(Args, Debug, Clone, Default)]
pub struct ApproversArgs {
    /// The local approvers' passkeys, shared by every local server of this user (default:
    /// `$XDG_STATE_HOME/equinix-mcp/approvers.json`).
    #[arg(long, env = "EQUINIX_MCP_APPROVERS_FILE", value_name = "PATH")]
    pub(crate) approvers_file: Option<PathBuf>,
}

impl ApproversArgs {
    /// The file: the one given, or the user's.
    pub(crate) fn file(&self) -> anyhow::Result<PathBuf> {
        match &self.approvers_file {
            Some(path) => Ok(path.clone()),
            None => default_file()
                .ok_or_else(|| anyhow::anyhow!("no state directory is known for this user: give --approvers-file")),
        }
    }

    pub(crate) fn store(&self) -> anyhow::Result<PasskeyStore> {
        Ok(PasskeyStore::File(self.file()?))
    }
}

/// `$XDG_STATE_HOME/equinix-mcp/approvers.json` (or the platform's local data dir).
pub(crate) fn default_file() -> Option<PathBuf> {
    dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("equinix-mcp").join("approvers.json"))
}

/// A name refused as an approver's (clipped to 80 characters).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is no approver name: 1 to 64 letters, digits, `.`, `_` or `-`, not beginning with `-`")]
pub(crate) struct NotAName(String);

/// Checks an approver's name: 1 to 64 letters, digits, `.`, `_` or `-` (it is shown on the
/// page, recorded in the audit log and named in a policy as `local:NAME`).
pub(crate) fn check_name(name: &str) -> Result<(), NotAName> {
    let fits = (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !name.starts_with('-');
    match fits {
        true => Ok(()),
        false => Err(NotAName(equinix_broker_contract::clip(name, 80))),
    }
}

/// The principal of approver `name`.
pub(crate) fn principal(name: &str) -> String {
    format!("{PREFIX}{name}")
}

/// Whether `e` is a local approver's passkey that is not removed.
pub(crate) fn active(e: &Enrollment) -> bool {
    e.principal.starts_with(PREFIX) && e.revoked.is_none()
}

/// The approvers with a passkey that is not removed, in `path` (none when it does not exist).
pub(crate) async fn enrolled(store: &PasskeyStore) -> Result<Vec<Enrollment>, StoreError> {
    Ok(store.all().await?.into_iter().filter(active).collect())
}

/// The command that enrolls an approver for a server whose approvers are in `file`, as a person
/// types it in a terminal of this machine: this very binary's path (one who installed the Claude
/// Desktop bundle has no `equinix-mcp` on their `PATH`, and the bundle's folder differs by
/// platform), quoted for the platform's shell, and the file when it is not the default one. It
/// holds no secret: the enrollment's one-time link is printed by the command, in that terminal,
/// and never passes through the agent.
pub(crate) fn add_command(file: &Path) -> String {
    let exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_else(|_| "equinix-mcp".into());
    let mut command = format!("{} approvers add NAME", invoked(&exe));
    if default_file().as_deref() != Some(file) {
        command.push_str(&format!(" --approvers-file {}", quoted(&file.display().to_string())));
    }
    command
}

/// `exe` as the first word of a command line.
fn invoked(exe: &str) -> String {
    // PowerShell, Windows' terminal, runs a quoted path only through its call operator
    if cfg!(windows) { format!("& {}", quoted(exe)) } else { quoted(exe) }
}

/// `text` as one word for the platform's shell (POSIX `sh`; PowerShell on Windows).
fn quoted(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+' | b':' | b'@' | b','));
    match (plain, cfg!(windows)) {
        (true, _) => text.to_string(),
        (false, true) => format!("\"{}\"", text.replace('`', "``").replace('"', "`\"").replace('$', "`$")),
        (false, false) => format!("'{}'", text.replace('\'', r"'\''")),
    }
}

/// Whether the file at `path` names any approver who may approve now.
pub async fn any(path: &Path) -> bool {
    enrolled(&PasskeyStore::File(path.to_path_buf())).await.is_ok_and(|all| !all.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_and_bounded() {
        for good in ["dana", "Dana.O-Neil_2", &"x".repeat(64)] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in ["", "-rf", "da na", "dana:admin", "dana#x", &"x".repeat(65), "dänä"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        let refused = check_name("da na").unwrap_err().to_string();
        assert_eq!(
            refused,
            "\"da na\" is no approver name: 1 to 64 letters, digits, `.`, `_` or `-`, not beginning with `-`"
        );
        assert_eq!(principal("dana"), "local:dana");
    }

    #[cfg(unix)]
    #[test]
    fn the_enrollment_command_is_this_binary_quoted_for_the_shell() {
        // macOS keeps Claude Desktop's extensions under "Application Support": a space
        assert_eq!(quoted("/home/dana/.local/bin/equinix-mcp"), "/home/dana/.local/bin/equinix-mcp");
        assert_eq!(quoted("/Users/dana/Library/Application Support/x"), "'/Users/dana/Library/Application Support/x'");
        assert_eq!(quoted("/tmp/it's"), r"'/tmp/it'\''s'");
        let exe = std::env::current_exe().unwrap().display().to_string();
        let default = default_file().unwrap();
        assert_eq!(add_command(&default), format!("{} approvers add NAME", quoted(&exe)));
        let other = Path::new("/srv/my approvers.json");
        assert!(add_command(other).ends_with(" approvers add NAME --approvers-file '/srv/my approvers.json'"));
    }
}
