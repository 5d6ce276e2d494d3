//! Where enrolled passkeys are kept: in the shared store when replicas share one (a collection
//! every replica reads, each record changed by compare-and-swap), else in a JSON file beside the
//! audit log (replaced whole under a lock, so the operator's `equinix-mcp passkeys` commands and a
//! running server never lose each other's changes).
//!
//! Why these: a passkey's public key is not secret, but who may add one is the whole point, so it
//! must live where only this server's code writes (the store the server already trusts, never the
//! browser), survive a restart (a memory store would make everyone enroll again), and reach every
//! replica at once (a revocation must hold on all of them before the next approval).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use webauthn_rs::prelude::Passkey;

use crate::proposals::ProposalStore;

/// At most this many passkeys per person, and in all: enrollment is for people, not a store for
/// anyone who can sign in.
pub(crate) const MAX_PER_PERSON: usize = 10;
pub(crate) const MAX_ENROLLMENTS: usize = 10_000;

const HASH: &str = "passkeys";
const FILE_FORMAT: &str = "equinix-mcp passkeys v1";

/// What a local approver's principal begins with (`local:dana`): no sign-in's principal
/// (`ISSUER#SUBJECT`) or token label has a `:` followed by a name.
pub(crate) const LOCAL_PREFIX: &str = "local:";

/// One enrolled passkey.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Enrollment {
    /// The credential id, base64url.
    pub credential_id: String,
    /// `ISSUER#SUBJECT` of the person who enrolled it (signed in, recently).
    pub principal: String,
    /// The WebAuthn relying party it was made for, and the page's origin then.
    pub(crate) rp_id: String,
    pub origin: String,
    pub(crate) enrolled_at_ms: u64,
    /// The public key, its algorithm and the signature counter (webauthn-rs's own record).
    pub passkey: Passkey,
    #[serde(default)]
    pub(crate) last_used_ms: Option<u64>,
    #[serde(default)]
    pub revoked: Option<Revocation>,
    /// The audit logs (by chain id) that have recorded the revocation: every replica records it
    /// in its own log before it refuses or could accept the passkey again.
    #[serde(default)]
    pub(crate) revocation_audited_by: Vec<String>,
    /// The audit logs (by chain id) that have recorded a local approver's enrollment, which a
    /// command makes and every local server records as it first sees it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) enrollment_audited_by: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Revocation {
    pub at_ms: u64,
    /// Who revoked it: the operator's login on the command line.
    pub by: String,
    pub reason: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileForm {
    format: String,
    enrollments: Vec<Enrollment>,
}

/// Why the passkey store did not do what it was asked: what a caller can match on, worded as the
/// person or operator reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("this passkey is enrolled already")]
    AlreadyEnrolled,
    #[error("you have {0} passkeys enrolled, the most one person may; revoke one first")]
    PersonFull(usize),
    #[error("the server holds {MAX_ENROLLMENTS} passkeys, the most it keeps")]
    ServerFull,
    #[error("no passkey {0} is enrolled")]
    Unknown(String),
    /// The change the caller asked for refused the record as it stands (its own words).
    #[error("{0}")]
    Refused(String),
    #[error("the passkey's record kept changing under this change; try again")]
    Contended,
    /// A record or file that is not this server's (its name and what is wrong with it).
    #[error("{0}")]
    NotOurs(String),
    /// The file or the shared store could not be read or written (what, and the system's words).
    #[error("{0}")]
    Unavailable(String),
}

/// The words, for the callers that still pass errors on as text.
impl From<StoreError> for String {
    fn from(e: StoreError) -> String {
        e.to_string()
    }
}

#[derive(Clone)]
pub enum PasskeyStore {
    Shared(Arc<ProposalStore>),
    File(PathBuf),
}

/// The default file: beside the audit log and named after it (`audit.jsonl` keeps its passkeys
/// in `audit.passkeys.json`), so two servers with two logs never share one by accident.
pub(crate) fn default_file(audit_log: Option<&Path>) -> Option<PathBuf> {
    let log = audit_log.map(Path::to_path_buf).or_else(crate::audit::default_path)?;
    let stem = log.file_stem()?.to_string_lossy().into_owned();
    Some(log.with_file_name(format!("{stem}.passkeys.json")))
}

impl PasskeyStore {
    /// The shared store when `proposals` is Redis, else `file` (or the one beside `audit_log`).
    pub(crate) fn choose(
        proposals: &Arc<ProposalStore>,
        file: Option<&Path>,
        audit_log: Option<&Path>,
    ) -> anyhow::Result<Self> {
        if proposals.is_shared() {
            if let Some(file) = file {
                anyhow::bail!(
                    "--passkeys-file {} with a shared --proposal-store: replicas keep passkeys in the shared store, so \
                     leave the file out",
                    file.display()
                );
            }
            return Ok(PasskeyStore::Shared(proposals.clone()));
        }
        match file.map(Path::to_path_buf).or_else(|| default_file(audit_log)) {
            Some(path) => Ok(PasskeyStore::File(path)),
            None => anyhow::bail!("no home directory to keep passkeys in; give --passkeys-file"),
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            PasskeyStore::Shared(s) => s.describe(),
            PasskeyStore::File(p) => p.display().to_string(),
        }
    }

    /// Every enrollment, revoked ones included.
    pub(crate) async fn all(&self) -> Result<Vec<Enrollment>, StoreError> {
        match self {
            PasskeyStore::Shared(s) => {
                let records = s.shared_records().expect("a shared store keeps shared records");
                let values = records.values(HASH).await?;
                let mut all = Vec::with_capacity(values.len());
                for v in values {
                    all.push(parse(&v)?);
                }
                all.sort_by_key(|e| e.enrolled_at_ms);
                Ok(all)
            }
            PasskeyStore::File(path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || read_file(&path)).await.map_err(unavailable)?
            }
        }
    }

    /// Adds `new`, unless its credential id is enrolled already (by anyone) or its owner or the
    /// store has no room. `Err` names why.
    pub(crate) async fn insert(&self, new: Enrollment) -> Result<(), StoreError> {
        match self {
            PasskeyStore::Shared(s) => {
                check_room(&self.all().await?, &new)?;
                let records = s.shared_records().expect("a shared store keeps shared records");
                let bytes = serde_json::to_vec(&new).expect("an enrollment serializes");
                if !records.put_new(HASH, &new.credential_id, &bytes).await? {
                    return Err(StoreError::AlreadyEnrolled);
                }
                Ok(())
            }
            PasskeyStore::File(path) => {
                let path = path.clone();
                tokio::task::spawn_blocking(move || {
                    change_file(&path, |all| {
                        check_room(all, &new)?;
                        all.push(new);
                        Ok(())
                    })
                })
                .await
                .map_err(unavailable)?
            }
        }
    }

    /// Changes the enrollment `credential_id` with `change`, which sees the current record and may
    /// refuse; retried when another replica changed it meanwhile. The record as changed.
    pub(crate) async fn update(
        &self,
        credential_id: &str,
        change: impl Fn(&mut Enrollment) -> Result<(), String> + Send + Sync + 'static,
    ) -> Result<Enrollment, StoreError> {
        match self {
            PasskeyStore::Shared(s) => {
                let records = s.shared_records().expect("a shared store keeps shared records");
                for _ in 0..8 {
                    let Some(stored) = records.get(HASH, credential_id).await? else {
                        return Err(StoreError::Unknown(credential_id.to_string()));
                    };
                    let mut new = parse(&stored)?;
                    change(&mut new).map_err(StoreError::Refused)?;
                    let after = serde_json::to_vec(&new).expect("an enrollment serializes");
                    if records.swap(HASH, credential_id, &stored, &after).await? {
                        return Ok(new);
                    }
                }
                Err(StoreError::Contended)
            }
            PasskeyStore::File(path) => {
                let (path, id) = (path.clone(), credential_id.to_string());
                tokio::task::spawn_blocking(move || {
                    let mut changed = None;
                    change_file(&path, |all| {
                        let Some(e) = all.iter_mut().find(|e| e.credential_id == id) else {
                            return Err(StoreError::Unknown(id.clone()));
                        };
                        change(e).map_err(StoreError::Refused)?;
                        changed = Some(e.clone());
                        Ok(())
                    })?;
                    Ok(changed.expect("changed when Ok"))
                })
                .await
                .map_err(unavailable)?
            }
        }
    }
}

/// What a blocking task answered instead (its own words).
fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

/// The shared store's outage, in its fixed words (its address and own error go to the
/// operator's log only, under the reference these words give): what every `?` on a store call
/// of the passkeys makes of it, so none shows the store's own words.
impl From<crate::proposals::StoreUnavailable> for StoreError {
    fn from(e: crate::proposals::StoreUnavailable) -> Self {
        StoreError::Unavailable(e.told())
    }
}

fn parse(bytes: &[u8]) -> Result<Enrollment, StoreError> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::NotOurs(format!("a passkey record in the store is not one of ours: {e}")))
}

fn check_room(all: &[Enrollment], new: &Enrollment) -> Result<(), StoreError> {
    if all.iter().any(|e| e.credential_id == new.credential_id) {
        return Err(StoreError::AlreadyEnrolled);
    }
    let own = all.iter().filter(|e| e.principal == new.principal && e.revoked.is_none()).count();
    if own >= MAX_PER_PERSON {
        return Err(StoreError::PersonFull(own));
    }
    if all.len() >= MAX_ENROLLMENTS {
        return Err(StoreError::ServerFull);
    }
    Ok(())
}

fn read_file(path: &Path) -> Result<Vec<Enrollment>, StoreError> {
    let shown = path.display();
    let text = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::Unavailable(format!("reading the passkeys file {shown}: {e}"))),
    };
    let form: FileForm = serde_json::from_slice(&text)
        .map_err(|e| StoreError::NotOurs(format!("the passkeys file {shown} is not one of ours: {e}")))?;
    if form.format != FILE_FORMAT {
        let why = format!("the passkeys file {shown} has format {:?}, not {FILE_FORMAT:?}", form.format);
        return Err(StoreError::NotOurs(why));
    }
    Ok(form.enrollments)
}

/// Reads, changes and replaces the file whole under an exclusive lock of `PATH.lock`; the new
/// file is written beside it, synced and renamed over it, so a reader sees the old or the new.
fn change_file(
    path: &Path,
    change: impl FnOnce(&mut Vec<Enrollment>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let shown = path.display();
    let io = |what: String| move |e: std::io::Error| StoreError::Unavailable(format!("{what}: {e}"));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    }
    let lock_path = path.with_extension("json.lock");
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io(format!("opening {}", lock_path.display())))?;
    lock.lock().map_err(io(format!("locking {}", lock_path.display())))?;
    let mut all = read_file(path)?;
    change(&mut all)?;
    let form = FileForm { format: FILE_FORMAT.into(), enrollments: all };
    let bytes = serde_json::to_vec_pretty(&form).expect("enrollments serialize");
    let tmp = path.with_extension("json.new");
    // the public keys are no secret, but who may approve is: the file is the user's alone
    let mut file = crate::platform::owner_only(File::options().create(true).write(true).truncate(true))
        .open(&tmp)
        .map_err(io(format!("writing {}", tmp.display())))?;
    file.write_all(&bytes).and_then(|_| file.sync_all()).map_err(io(format!("writing {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(io(format!("replacing {shown}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enrollment(id: &str, principal: &str) -> Enrollment {
        let export = super::super::offline::Export::parse(include_str!("testdata/export.json")).unwrap();
        let mut e = export.enrollments.into_iter().next().unwrap();
        e.credential_id = id.into();
        e.principal = principal.into();
        e
    }

    fn file_store() -> (tempfile::TempDir, PasskeyStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = PasskeyStore::File(dir.path().join("state").join("audit.passkeys.json"));
        (dir, store)
    }

    #[tokio::test]
    async fn the_file_keeps_enrollments_refuses_a_second_of_one_id_and_bounds_each_person() {
        let (_dir, store) = file_store();
        assert!(store.all().await.unwrap().is_empty(), "no file yet: no passkeys");
        store.insert(enrollment("a", "alice")).await.unwrap();
        let twice = store.insert(enrollment("a", "bob")).await.unwrap_err();
        assert_eq!(twice, StoreError::AlreadyEnrolled);
        assert_eq!(twice.to_string(), "this passkey is enrolled already");
        for i in 1..MAX_PER_PERSON {
            store.insert(enrollment(&format!("a{i}"), "alice")).await.unwrap();
        }
        let full = store.insert(enrollment("one-more", "alice")).await.unwrap_err();
        assert_eq!(full, StoreError::PersonFull(MAX_PER_PERSON));
        assert!(full.to_string().contains("revoke one first"), "{full}");
        store.insert(enrollment("b", "bob")).await.unwrap();
        let all = store.all().await.unwrap();
        assert_eq!(all.len(), MAX_PER_PERSON + 1);
        assert!(all.iter().any(|e| e.credential_id == "b" && e.principal == "bob"));
    }

    #[tokio::test]
    async fn an_update_changes_one_record_and_a_refused_one_changes_nothing() {
        let (_dir, store) = file_store();
        store.insert(enrollment("a", "alice")).await.unwrap();
        let revocation = Revocation { at_ms: 5, by: "ops".into(), reason: "lost".into() };
        let r = revocation.clone();
        let changed = store.update("a", move |e| {
            e.revoked = Some(r.clone());
            Ok(())
        });
        assert_eq!(changed.await.unwrap().revoked, Some(revocation.clone()));
        let refused = store.update("a", |_| Err("no".into())).await.unwrap_err();
        assert_eq!(refused, StoreError::Refused("no".into()));
        assert_eq!(refused.to_string(), "no");
        assert_eq!(store.all().await.unwrap()[0].revoked, Some(revocation));
        let unknown = store.update("zz", |_| Ok(())).await.unwrap_err();
        assert_eq!(
            (unknown.to_string().as_str(), unknown),
            ("no passkey zz is enrolled", StoreError::Unknown("zz".into()))
        );
    }

    #[tokio::test]
    async fn concurrent_changes_to_the_file_are_never_lost() {
        let (_dir, store) = file_store();
        let mut tasks = Vec::new();
        for i in 0..16 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move { store.insert(enrollment(&format!("k{i}"), &format!("p{i}"))).await }));
        }
        for t in tasks {
            t.await.unwrap().unwrap();
        }
        assert_eq!(store.all().await.unwrap().len(), 16);
    }

    #[tokio::test]
    async fn a_file_not_ours_is_refused_by_name() {
        let (dir, store) = file_store();
        let PasskeyStore::File(path) = &store else { unreachable!() };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "{\"format\":\"other\",\"enrollments\":[]}").unwrap();
        let why = store.all().await.unwrap_err();
        assert!(matches!(&why, StoreError::NotOurs(w) if w.contains("has format \"other\"")), "{why}");
        drop(dir);
    }

    #[test]
    fn the_default_file_is_named_after_the_audit_log() {
        let p = default_file(Some(Path::new("/var/lib/equinix-mcp/audit.jsonl"))).unwrap();
        assert_eq!(p, Path::new("/var/lib/equinix-mcp/audit.passkeys.json"));
    }
}
