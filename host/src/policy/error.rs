//! Why a policy set was not loaded, as a caller can match it and a test assert it; each says
//! what a person reads, naming the file, the policy and the problem.

use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyError {
    /// The file could not be read.
    Unreadable {
        path: PathBuf,
        why: String,
    },
    NotUtf8 {
        path: PathBuf,
    },
    /// Not Cedar's policy syntax.
    NotCedar(String),
    /// Templates are not taken: each policy is written out.
    Templates,
    /// A policy Cedar does not take into the set (an id given twice, say).
    Rejected {
        id: String,
        why: String,
    },
    /// The set does not validate against the schema (warnings count).
    Invalid(Vec<String>),
    /// An `@approvals` or `@break_glass` rule that cannot be read, is on the wrong kind of
    /// policy, or reads the approver.
    Quorum {
        id: String,
        why: String,
    },
    /// A quorum naming a group that no policy of a set judging approvers by group names.
    Unmeetable {
        id: String,
        rule: String,
        group: String,
        named: Vec<String>,
    },
    /// One of the above, in the file `path`.
    InFile {
        path: PathBuf,
        error: Box<PolicyError>,
    },
}

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PolicyError::Unreadable { path, why } => write!(f, "cannot read policy file {}: {why}", path.display()),
            PolicyError::NotUtf8 { path } => write!(f, "policy file {} is not UTF-8", path.display()),
            PolicyError::NotCedar(why) => write!(f, "not a Cedar policy set: {why}"),
            PolicyError::Templates => f.write_str("policy templates are not supported: write each policy out"),
            PolicyError::Rejected { id, why } | PolicyError::Quorum { id, why } => write!(f, "policy {id:?}: {why}"),
            PolicyError::Invalid(problems) => write!(
                f,
                "the policy set does not validate against `equinix-mcp policy schema`: {}",
                problems.join("; ")
            ),
            PolicyError::Unmeetable { id, rule, group, named } => {
                let names: Vec<String> = named.iter().map(|n| format!("{n:?}")).collect();
                write!(
                    f,
                    "policy {id:?}: {rule} counts approvals of group {group:?}, but the set judges approvers by their \
                     groups and no policy of it names {group:?} (it names {}): no group could meet that quorum",
                    names.join(", ")
                )
            }
            PolicyError::InFile { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for PolicyError {}

impl PolicyError {
    /// The error itself, whichever file it is in.
    pub fn kind(&self) -> &PolicyError {
        match self {
            PolicyError::InFile { error, .. } => error.kind(),
            other => other,
        }
    }
}
