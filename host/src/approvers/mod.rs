//! Local approvers: people enrolled on this machine with a passkey, who approve creates on a
//! local server's approval page with no identity provider. The passkey is the sign-in: its
//! assertion, made after the authenticator verified the person, signs the exact request.
//!
//! Only the person at the machine enrolls, with a command run in a terminal
//! (`equinix-mcp approvers add NAME`, `approval_page::enrollment`), which serves a one-time link on loopback. The
//! public keys live in one file of the user's state directory ([`default_file`], owner-only),
//! which every local server of that user reads at each approval (so a removal holds at once)
//! and records in its own audit log as it first sees each enrollment and removal.

pub mod loopback;

use std::path::{Path, PathBuf};

use clap::Args;

use crate::passkeys::{Enrollment, PasskeyStore};

/// What an approver's name is prefixed with as a principal (`local:dana`).
pub use crate::passkeys::LOCAL_PREFIX as PREFIX;

/// Where the approvers file is.
#[derive(Args, Debug, Clone, Default)]
pub struct ApproversArgs {
    /// The local approvers' passkeys, shared by every local server of this user (default:
    /// `$XDG_STATE_HOME/equinix-mcp/approvers.json`).
    #[arg(long, env = "EQUINIX_MCP_APPROVERS_FILE", value_name = "PATH")]
    pub approvers_file: Option<PathBuf>,
}

impl ApproversArgs {
    /// The file: the one given, or the user's.
    pub fn file(&self) -> anyhow::Result<PathBuf> {
        match &self.approvers_file {
            Some(path) => Ok(path.clone()),
            None => default_file()
                .ok_or_else(|| anyhow::anyhow!("no state directory is known for this user: give --approvers-file")),
        }
    }

    pub fn store(&self) -> anyhow::Result<PasskeyStore> {
        Ok(PasskeyStore::File(self.file()?))
    }
}

/// `$XDG_STATE_HOME/equinix-mcp/approvers.json` (or the platform's local data dir).
pub fn default_file() -> Option<PathBuf> {
    dirs::state_dir().or_else(dirs::data_local_dir).map(|d| d.join("equinix-mcp").join("approvers.json"))
}

/// Checks an approver's name: 1 to 64 letters, digits, `.`, `_` or `-` (it is shown on the
/// page, recorded in the audit log and named in a policy as `local:NAME`).
pub fn check_name(name: &str) -> Result<(), String> {
    let fits = (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !name.starts_with('-');
    match fits {
        true => Ok(()),
        false => Err(format!(
            "{:?} is no approver name: 1 to 64 letters, digits, `.`, `_` or `-`, not beginning with `-`",
            equinix_broker_contract::clip(name, 80)
        )),
    }
}

/// The principal of approver `name`.
pub fn principal(name: &str) -> String {
    format!("{PREFIX}{name}")
}

/// Whether `e` is a local approver's passkey that is not removed.
pub fn active(e: &Enrollment) -> bool {
    e.principal.starts_with(PREFIX) && e.revoked.is_none()
}

/// The approvers with a passkey that is not removed, in `path` (none when it does not exist).
pub async fn enrolled(store: &PasskeyStore) -> Result<Vec<Enrollment>, String> {
    Ok(store.all().await?.into_iter().filter(active).collect())
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
        assert_eq!(principal("dana"), "local:dana");
    }
}
