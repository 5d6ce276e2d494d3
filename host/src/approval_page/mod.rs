//! The approval page: where a person signs in with the team's OpenID provider, reads the exact
//! request the host rendered for the form, and approves or declines it. It is one more way for
//! the host to learn the person's answer, and the only one that says who the person is; every
//! rule the host holds for the form holds here too (the answer counts only for the proposal and
//! validation it was given about, once, within the proposal's TTL on the host's clock), and each
//! decision is a record in the audit log before the host keeps it.
//!
//! The link carries a random page id and nothing else. Signed out, the page shows nothing of the
//! request. A sign-in under way travels sealed in a cookie (nothing is written on the server for
//! a browser that has not signed in); sessions live in the proposal store, so replicas sharing a
//! Redis store share them too. Cookies are `HttpOnly`, `SameSite=Lax`, host-only (`Secure` off
//! loopback).

pub(crate) mod enrollment;
pub mod html;
pub(crate) mod id_token;
pub mod inbox;
mod local;
pub mod people;
pub mod record;
pub(crate) mod respond;
pub(crate) mod routes;
pub mod sealed_cookie;
pub(crate) mod settings;
pub(crate) mod sign_in;
pub(crate) mod state;

use std::sync::{Arc, OnceLock};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::approval::Once;
use crate::approval::deciders::{DoesNotCount, Given};
use crate::audit::{AuditLog, Event, events};
use crate::clock::Clock;
use crate::notify::FollowUps;
use crate::passkeys::{ApprovedWith, Evidence, PasskeyStore, Passkeys};
use crate::policy::OperatorPolicy;
use crate::policy::{Approving, Asking, Requirement};
use crate::principal::Principal;
use crate::proposals::ballot::Cast;
use crate::proposals::{NoteKey, ProposalStore, StoreUnavailable};
use crate::secret::Secret;
pub(crate) use id_token::IdTokenRules;
pub use record::{Approval, Decision, PageRecord, Question};

/// How long a signed-in session on the page lasts: a little longer than one proposal's TTL, so a
/// person who signed in to read a request can still decide it, and no longer.
pub(crate) const SESSION_MS: u64 = 15 * 60 * 1000;
/// What a sign-in begun on the passkeys page returns to (no page id has this form).
pub(crate) const PASSKEYS_PAGE: &str = "passkeys";
/// The sign-in of the inbox returns to it (no page id is spelled so).
pub(crate) const INBOX_PAGE: &str = "inbox";

/// Where a sign-in begun for `page` returns to: always one of this server's own pages.
pub(crate) fn return_path(page: &str) -> String {
    if page == INBOX_PAGE { "/approve".into() } else { format!("/approve/{page}") }
}
/// How long a sign-in may take at the provider.
const SIGN_IN_MS: u64 = 10 * 60 * 1000;

/// The operator's settings (`--approval-*`).
#[derive(Clone, Debug)]
pub(crate) struct PageSettings {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<Secret>,
    pub(crate) max_age_secs: u64,
    pub(crate) groups_claim: String,
    /// The scopes the sign-in asks for (`--approval-scopes`).
    pub scopes: String,
    /// The claim naming the person: `--oauth-principal-claim`.
    pub principal_claim: String,
    pub leeway_secs: u64,
    /// Where browsers reach this server (scheme, host, port); default: `--public-url`'s origin,
    /// or the address the server listens on.
    pub base_url: Option<String>,
    /// `--passkeys-file`: where passkeys are kept without a shared store.
    pub(crate) passkeys_file: Option<std::path::PathBuf>,
}

/// A signed-in person's session, kept in the store under the SHA-256 of the cookie's value.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// `ISSUER#SUBJECT`.
    pub approver: String,
    pub subject: String,
    pub groups: Vec<String>,
    pub auth_time: u64,
    /// The anti-CSRF token every decision must carry.
    pub csrf: String,
    pub expires_at_ms: u64,
    /// The name and e-mail the ID token gave, for reading.
    #[serde(default)]
    pub named: people::Named,
}

/// A sign-in under way. It travels sealed (integrity-protected with the server's state key) in
/// an `HttpOnly` cookie of the browser that began it, so a request that is not yet signed in
/// writes nothing on the server; its `state` is used once, on every replica, at the callback.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignInNote {
    page: String,
    state: String,
    nonce: String,
    verifier: String,
}

/// Why a local page has no sign-in.
pub(crate) const LOCAL_SIGNS_NOBODY_IN: &str = "this machine's approval page signs nobody in: an approver's passkey is their \
     sign-in, enrolled in a terminal with `equinix-mcp approvers add NAME`";

/// Why a sign-in did not finish: the browser's (its sign-in is gone, another's or used), the
/// identity provider's, or the store's. A store that does not answer is no reason to tell a
/// person their sign-in failed: the browser is told to try again shortly (503).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SignInError {
    #[error("this browser holds no sign-in that is still open; open the approval link again")]
    NotOpen,
    #[error("this sign-in was begun in another browser or tab; open the approval link again here")]
    OtherBrowser,
    #[error("this sign-in was already used; open the approval link again")]
    Used,
    #[error("{}", LOCAL_SIGNS_NOBODY_IN)]
    NoProvider,
    #[error(transparent)]
    Provider(#[from] sign_in::ProviderFailed),
    /// Its words name no backend: where the store is and what it said go to the operator's log
    /// only ([`crate::proposals::StoreUnavailable::told`]).
    #[error("the proposal store did not answer")]
    Store(#[from] StoreUnavailable),
}

/// Why a person's decision on the page was not taken (the words are what the page shows them),
/// or the store's outage, which the page tells as one (503, try again shortly).
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotDecided {
    #[error("the proposal's 10 minutes have passed; a decision now counts for nothing. Ask the agent to propose again")]
    Expired,
    /// Under a quorum, why this person's decision would not count ([`crate::approval::deciders::counts`]).
    #[error(transparent)]
    WouldNotCount(DoesNotCount),
    #[error("this server has no audit log, so no decision can be recorded")]
    NoAuditLog,
    #[error("the audit log could not record the decision ({0}); nothing was decided")]
    NotAudited(String),
    #[error("you approved this request already: one person counts once")]
    Again,
    #[error("this request has all the approvals it can keep, and still no decision")]
    BallotFull,
    /// Its words name no backend: the page tells the person to try again shortly, and where the
    /// store is and what it said go to the operator's log only.
    #[error("the proposal store did not answer")]
    Store(#[from] StoreUnavailable),
}

pub struct ApprovalPage {
    /// The team's identity provider; none: local approvers, whose passkey is their sign-in.
    rp: Option<sign_in::RelyingParty>,
    /// Seals sign-ins under way (`EQUINIX_MCP_STATE_KEY`, or this process's own key).
    cookie_seal: sealed_cookie::CookieSeal,
    settings: PageSettings,
    base: OnceLock<Url>,
    pub(crate) store: Arc<ProposalStore>,
    pub(crate) clock: Clock,
    audit: Option<Arc<AuditLog>>,
    /// The operator's policy: who may decide, when it has one.
    policy: Arc<dyn OperatorPolicy>,
    /// `stdio` or `http`: the transport the questions come over, for the policy.
    pub transport: &'static str,
    /// Wakes the calls on this replica waiting for a decision (others poll the store).
    pub decided: tokio::sync::Notify,
    /// The people's enrolled passkeys, and the WebAuthn ceremonies.
    pub passkeys: Passkeys,
    /// The operator's notifications.
    notifier: Option<Arc<crate::notify::Notifier>>,
}

/// How often a waiting page's watcher reads the clock for its expiry.
const EXPIRY_WATCH: std::time::Duration = std::time::Duration::from_secs(2);

/// What casting an approval under a quorum came to.
enum Kept {
    /// It made every quorum whole, and its decision is the request's.
    Decided,
    /// Kept, and the request still needs more.
    Partly(crate::policy::Progress),
    /// Kept, and the request was decided by another decision meanwhile.
    Counted,
    /// Kept, and the store failed after: the next reader settles the request.
    Unsettled,
    /// The request was decided before it was kept: it counts for nothing.
    Late,
}

/// What the page shows of a request's quorum.
#[derive(Default)]
pub(crate) struct QuorumView {
    pub approvals: Vec<Approval>,
    /// How far it has come, while it waits.
    pub progress: Option<crate::policy::Progress>,
    /// Why the reader's approval would not count, when their decline would.
    pub note: Option<String>,
}

pub use crate::approval::deciders::Permission;

/// Whether `session`'s person may decide `record` when the operator has no policy
/// ([`crate::approval::deciders::without_policy`]).
pub fn permission(session: &Session, record: &Question) -> Permission {
    crate::approval::deciders::without_policy(&session.approver, record.proposer)
}

pub(crate) fn hashed(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// What a page shares with the rest of the server, whichever approvers it has.
pub struct PageDeps {
    pub store: Arc<ProposalStore>,
    pub clock: Clock,
    pub audit: Option<Arc<AuditLog>>,
    pub policy: Arc<dyn OperatorPolicy>,
    pub transport: &'static str,
    /// Seals sign-ins under way (`EQUINIX_MCP_STATE_KEY`, or this process's own key).
    pub cookie_seal: sealed_cookie::CookieSeal,
    /// The operator's notifications.
    pub notifier: Option<Arc<crate::notify::Notifier>>,
}

impl ApprovalPage {
    fn assemble(
        rp: Option<sign_in::RelyingParty>,
        settings: PageSettings,
        kept: PasskeyStore,
        deps: PageDeps,
    ) -> Arc<Self> {
        let PageDeps { store, clock, audit, policy, transport, cookie_seal, notifier } = deps;
        Arc::new(ApprovalPage {
            passkeys: Passkeys::new(kept, store.clone(), clock.clone(), audit.clone()),
            rp,
            cookie_seal,
            settings,
            base: OnceLock::new(),
            store,
            clock,
            audit,
            policy,
            transport,
            decided: tokio::sync::Notify::new(),
            notifier,
        })
    }

    /// Checks the settings and reads the issuer; `base` is known once the server listens.
    pub(crate) async fn start(settings: PageSettings, deps: PageDeps) -> anyhow::Result<Arc<Self>> {
        if settings.client_id.is_empty() {
            anyhow::bail!("--approval-client-id must name the page's client at the identity provider");
        }
        if settings.principal_claim.is_empty() {
            anyhow::bail!("--oauth-principal-claim must name the claim that names a person on the page too");
        }
        if settings.max_age_secs == 0 || settings.max_age_secs > 3600 {
            anyhow::bail!("--approval-max-age-secs {} must be 1 to 3600", settings.max_age_secs);
        }
        let rules = IdTokenRules {
            issuer: settings.issuer.clone(),
            client_id: settings.client_id.clone(),
            max_age_secs: settings.max_age_secs,
            groups_claim: settings.groups_claim.clone(),
            principal_claim: settings.principal_claim.clone(),
            leeway_secs: settings.leeway_secs,
        };
        let rp = sign_in::RelyingParty::start(rules, settings.client_secret.clone(), settings.scopes.clone()).await?;
        let log = deps.audit.as_ref().map(|a| a.path());
        let kept = PasskeyStore::choose(&deps.store, settings.passkeys_file.as_deref(), log)?;
        let page = Self::assemble(Some(rp), settings, kept, deps);
        if let Some(base) = page.settings.base_url.clone() {
            page.set_base(&base)?;
        }
        // revocations made while this server was down reach its audit log now
        let sweeping = page.clone();
        tokio::spawn(async move {
            if let Err(why) = sweeping.passkeys.all().await {
                tracing::warn!("the passkeys could not be read at start: {why}");
            }
        });
        Ok(page)
    }

    /// The page of a server that serves one local user and no identity provider: local approvers
    /// (people enrolled on this machine with `equinix-mcp approvers add`, in `approvers_file`)
    /// approve with their passkey, which is their sign-in. Its base is `http://localhost:PORT`,
    /// set once the server listens.
    pub fn start_local(approvers_file: std::path::PathBuf, deps: PageDeps) -> Arc<Self> {
        let kept = PasskeyStore::File(approvers_file.clone());
        let settings = PageSettings {
            issuer: String::new(),
            client_id: String::new(),
            client_secret: None,
            max_age_secs: 300,
            groups_claim: String::new(),
            scopes: String::new(),
            principal_claim: String::new(),
            leeway_secs: 0,
            base_url: None,
            passkeys_file: Some(approvers_file),
        };
        let page = Self::assemble(None, settings, kept, deps);
        // enrollments and removals made while this server was down reach its audit log now
        let sweeping = page.clone();
        tokio::spawn(async move {
            if let Err(why) = sweeping.passkeys.all().await {
                tracing::warn!("the local approvers could not be read at start: {why}");
            }
        });
        page
    }

    /// The command that enrolls an approver for this local page (this binary's own path, the
    /// page's approvers file when not the default); none for a team's page.
    pub(crate) fn enroll_command(&self) -> Option<String> {
        match (&self.passkeys.store, self.is_local()) {
            (PasskeyStore::File(file), true) => Some(crate::approvers::add_command(file)),
            _ => None,
        }
    }

    /// Whether this page's approvers are people enrolled on this machine (no identity provider).
    pub(crate) fn is_local(&self) -> bool {
        self.rp.is_none()
    }

    /// Whether someone may approve on the page now: with an identity provider, always; with local
    /// approvers, once one is enrolled (read at each call: an enrollment or removal holds at once).
    pub(crate) async fn offers(&self) -> bool {
        if !self.is_local() {
            return true;
        }
        self.base.get().is_some() && crate::approvers::enrolled(&self.passkeys.store).await.is_ok_and(|a| !a.is_empty())
    }

    /// How many approvers are enrolled on this machine now (0 for a team's page, or unreadable).
    pub(crate) async fn offers_enrolled(&self) -> usize {
        match self.is_local() {
            true => crate::approvers::enrolled(&self.passkeys.store)
                .await
                .map_or(0, |a| a.iter().map(|e| &e.principal).collect::<std::collections::BTreeSet<_>>().len()),
            false => 0,
        }
    }

    /// The one `Host` a local page answers (`localhost:PORT`, the name its passkeys are bound
    /// to); none for a team's page (the server's own Host check applies) or before it listens.
    pub(crate) fn local_host(&self) -> Option<String> {
        let base = self.base.get().filter(|_| self.is_local())?;
        Some(format!("{}:{}", base.host_str()?, base.port_or_known_default()?))
    }

    /// Where browsers reach this server (`http(s)://HOST:PORT`, no path); set once.
    pub(crate) fn set_base(&self, base: &str) -> anyhow::Result<()> {
        if self.base.get().is_some() {
            return Ok(());
        }
        let url = crate::oauth::discovery::check_url(base, "--approval-url")?;
        if url.path() != "/" {
            anyhow::bail!("--approval-url {base:?} must be an origin (scheme, host and port), with no path");
        }
        let _ = self.base.set(url);
        Ok(())
    }

    fn base(&self) -> &Url {
        self.base.get().expect("the page's base URL is set before the server serves")
    }

    /// The link to page `id`.
    pub(crate) fn link(&self, id: &str) -> String {
        self.base().join(&format!("/approve/{id}")).expect("a page path joins").to_string()
    }

    fn redirect_uri(&self) -> String {
        self.base().join("/approve/callback").expect("a path joins").to_string()
    }

    /// Whether the person's sign-in is recent enough to enroll a passkey (`--approval-max-age-secs`).
    pub(crate) fn recently_signed_in(&self, session: &Session) -> bool {
        let now_s = self.clock.now_ms() / 1000;
        now_s.saturating_sub(session.auth_time) <= self.settings.max_age_secs
    }

    pub(crate) fn max_age_secs(&self) -> u64 {
        self.settings.max_age_secs
    }

    /// Whether cookies must be `Secure` (everywhere but plain-HTTP loopback).
    pub(crate) fn secure_cookies(&self) -> bool {
        self.base().scheme() == "https"
    }

    /// The page's own origin (a decision's `Origin` must be this one).
    pub(crate) fn origin(&self) -> String {
        self.base().origin().ascii_serialization()
    }

    pub(crate) fn issuer(&self) -> &str {
        self.rp.as_ref().map_or("", |rp| rp.issuer())
    }

    pub fn notes(&self) -> record::Notes<'_> {
        record::Notes { store: &self.store, now_ms: self.clock.now_ms() }
    }

    /// Begins a sign-in for page `page`: the browser's cookie value (the sealed sign-in) and the
    /// provider's URL.
    pub(crate) fn begin_sign_in(&self, page: &str) -> Result<(String, Url), SignInError> {
        let rp = self.rp.as_ref().ok_or(SignInError::NoProvider)?;
        let started = rp.begin(&self.redirect_uri());
        let note = SignInNote {
            page: page.to_string(),
            state: started.state,
            nonce: started.nonce,
            verifier: started.verifier,
        };
        let sealed = self.cookie_seal.seal(&note, self.clock.now_ms().saturating_add(SIGN_IN_MS));
        Ok((sealed, started.url))
    }

    /// Finishes the sign-in `state` in the browser holding the sealed sign-in `cookie`: the new
    /// session's cookie value and the page to return to (always one of this server's own pages).
    pub(crate) async fn finish_sign_in(
        &self,
        state: &str,
        code: &str,
        cookie: &str,
    ) -> Result<(String, String), SignInError> {
        let now = self.clock.now_ms();
        let Some(note) = self.cookie_seal.open::<SignInNote>(cookie, now) else {
            return Err(SignInError::NotOpen);
        };
        use subtle::ConstantTimeEq;
        if !bool::from(note.state.as_bytes().ct_eq(state.as_bytes())) {
            return Err(SignInError::OtherBrowser);
        }
        // a callback is used once, on every replica
        if !self.store.claim(Once::PageSignIn(state), now).await? {
            return Err(SignInError::Used);
        }
        let rp = self.rp.as_ref().ok_or(SignInError::NoProvider)?;
        let signed = rp.finish(code, &self.redirect_uri(), &note.verifier, &note.nonce).await?;
        let session = Session {
            approver: Principal::subject(self.issuer(), &signed.subject).as_str().to_string(),
            subject: signed.subject,
            groups: signed.groups,
            auth_time: signed.auth_time,
            csrf: URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>()),
            expires_at_ms: now + SESSION_MS,
            named: signed.named,
        };
        people::remember(&self.store, &session.approver, &session.named, now).await;
        let cookie = URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>());
        let bytes = serde_json::to_vec(&session).expect("a session serializes");
        self.store.note_put(&NoteKey::Session(&hashed(&cookie)), &bytes, SESSION_MS, false, now).await?;
        tracing::info!(approver = %session.approver, "approval page: a person signed in");
        Ok((cookie, note.page))
    }

    /// The session of the cookie value `cookie`, if it is live; `Err` when the store that keeps
    /// the sessions did not answer (which is no reason to tell a person they are signed out).
    pub(crate) async fn session(&self, cookie: &str) -> Result<Option<Session>, StoreUnavailable> {
        let now = self.clock.now_ms();
        let Some(bytes) = self.store.note_get(&NoteKey::Session(&hashed(cookie)), now).await? else {
            return Ok(None);
        };
        Ok(serde_json::from_slice::<Session>(&bytes).ok().filter(|s| s.expires_at_ms > now))
    }

    /// What became of `record`'s request after its decision, and its proposer's name if the page
    /// has met them.
    pub(crate) async fn followed(
        &self,
        record: &PageRecord,
    ) -> Result<(Option<state::Outcome>, Option<people::Named>), StoreUnavailable> {
        let notes = self.notes();
        let outcome = notes.outcome(&record.id).await?;
        Ok((outcome, people::recall(&self.store, &record.proposer, notes.now_ms).await))
    }

    /// Whether `session`'s person may decide `record`: the operator's policy when there is one
    /// (its approval phase, with the approver, their groups and the method `page`), else only
    /// the proposer (see [`permission`]).
    pub(crate) fn permission(&self, session: &Session, record: &Question, with: ApprovedWith) -> Permission {
        self.judge(session, record, with, true)
    }

    /// [`Self::permission`], for a list of pages (the inbox): the policy's decisions there decide
    /// nothing, so they are not counted in the metrics.
    pub(crate) fn may_decide(&self, session: &Session, record: &Question, with: ApprovedWith) -> Permission {
        self.judge(session, record, with, false)
    }

    /// Whether `session`'s person may read a request's page: its proposer, whoever may decide it
    /// (by sign-in or with a passkey, judged as the inbox judges), and whoever decided it. Anyone
    /// else, with the link or not, learns nothing of the request.
    pub(crate) fn may_read(&self, session: &Session, record: &Question, decision: Option<&Decision>) -> bool {
        session.approver == record.proposer
            || decision.is_some_and(|d| d.approver == session.approver)
            || [ApprovedWith::SignIn, ApprovedWith::Passkey]
                .into_iter()
                .any(|with| matches!(self.may_decide(session, record, with), Permission::Permitted(..)))
    }

    fn judge(&self, session: &Session, record: &Question, with: ApprovedWith, counted: bool) -> Permission {
        let Some(loaded) = self.policy.current() else {
            return match self.is_local() {
                // without a policy, any approver enrolled on this machine decides its local requests
                true => Permission::Permitted(
                    format!("{} is an approver enrolled on this machine", session.subject),
                    vec![],
                ),
                false => permission(session, record),
            };
        };
        let Some(facts) = record.facts else {
            return Permission::Refused(
                "the operator's policy was loaded after this request was put on the page, so the facts it judges were \
                 not kept; ask the agent to propose again"
                    .into(),
            );
        };
        let approving = Approving {
            method: record::METHOD_PAGE,
            approver: Some(session.approver.clone()),
            approver_groups: Some(session.groups.clone()),
            approved_with: Some(with.name()),
            user_verified: Some(with == ApprovedWith::Passkey),
        };
        let asking = Asking {
            action: record.change_type,
            principal: record.proposer,
            phase: "approval",
            transport: record.transport,
            tool: record.tool,
            approving: Some(&approving),
            at: crate::policy::Moment::at(self.clock.now_ms()),
        };
        let decision = loaded.recall(&asking, facts).unwrap_or_else(|| loaded.decide(&asking, facts));
        if counted {
            crate::metrics::metrics().policy_decision("approval", decision.allowed);
        }
        if decision.allowed {
            let by: Vec<String> = decision.policies.iter().map(|p| format!("{p:?}")).collect();
            Permission::Permitted(
                format!("the operator's policy permits it ({})", by.join(", ")),
                decision.policies.clone(),
            )
        } else {
            Permission::Refused(format!("the operator's policy does not let you decide it: {}", decision.explain()))
        }
    }

    /// The quorums the operator's policy asks of `record`'s request now (none without a policy, or
    /// when one approval decides). Evaluated on a task of its own: a call's capability runs on the
    /// component's fiber, whose stack Cedar's recursion guard misreads.
    pub(crate) async fn requirement(&self, record: &Question<'_>) -> Requirement {
        let (Some(loaded), Some(facts)) = (self.policy.current(), record.facts) else {
            return Requirement::default();
        };
        if loaded.quorum_rules() == 0 {
            return Requirement::default();
        }
        let who = crate::policy::Requester {
            action: record.change_type.into(),
            principal: record.proposer.into(),
            transport: record.transport.into(),
            tool: record.tool.into(),
        };
        loaded.requirement_on_task(who, facts.clone(), crate::policy::Moment::at(self.clock.now_ms())).await
    }

    /// What the page shows of `record`'s quorum to `session`'s person, and their `permission` as
    /// it then stands: refused when neither their approval nor their decline would count, with a
    /// note when only their decline would.
    pub(crate) async fn quorum_view(
        &self,
        session: &Session,
        record: &PageRecord,
        decision: Option<&Decision>,
        permission: Permission,
    ) -> Result<(QuorumView, Permission), StoreUnavailable> {
        if let Some(d) = decision {
            return Ok((QuorumView { approvals: d.approvals.clone(), ..QuorumView::default() }, permission));
        }
        let requirement = self.requirement(&record.question()).await;
        if requirement.is_empty() {
            return Ok((QuorumView::default(), permission));
        }
        let approvals = self.notes().approvals(record).await?;
        if let Some(decided) = self.settle_whole(record, &requirement, &approvals).await? {
            return Ok((QuorumView { approvals: decided.approvals, ..QuorumView::default() }, permission));
        }
        let voters: Vec<_> = approvals.iter().map(Approval::voter).collect();
        let progress = Some(requirement.progress(&voters));
        let (mut note, mut permission) = (None, permission);
        if let Permission::Permitted(..) = permission {
            let approve = self.counts(session, record, true, &requirement, &approvals);
            let decline = self.counts(session, record, false, &requirement, &approvals);
            match (approve, decline) {
                (Err(why), Err(_)) => permission = Permission::Refused(why.to_string()),
                (Err(why), Ok(())) => note = Some(why.to_string()),
                _ => {}
            }
        }
        Ok((QuorumView { approvals, progress, note }, permission))
    }

    /// Under a quorum, whether `session`'s decision would count ([`crate::approval::deciders::counts`]).
    fn counts(
        &self,
        session: &Session,
        record: &PageRecord,
        approve: bool,
        requirement: &Requirement,
        approvals: &[Approval],
    ) -> Result<(), DoesNotCount> {
        let me = crate::policy::Voter { person: &session.approver, groups: &session.groups };
        let given: Vec<Given> = approvals.iter().map(|a| Given { voter: a.voter(), at_ms: a.at_ms }).collect();
        crate::approval::deciders::counts(me, &record.proposer, approve, requirement, &given, &html::at)
    }

    /// Records `approve` by `session`'s person on `record`, from `peer`: the audit record first,
    /// then the decision. Under a quorum an approval that leaves it short is kept in the request's
    /// ballot, and the one that makes it whole decides. `Ok(false)`: someone decided first.
    pub(crate) async fn decide(
        &self,
        session: &Session,
        record: &PageRecord,
        (approve, reason): (bool, &str),
        peer: &str,
        (rule, policies): (&str, &[String]),
        passkey: Option<&Evidence>,
    ) -> Result<bool, NotDecided> {
        let now = self.clock.now_ms();
        if !crate::approval::answerable(record.validated_at_ms, now) {
            return Err(NotDecided::Expired);
        }
        let requirement = self.requirement(&record.question()).await;
        let notes = self.notes();
        let approvals = match requirement.is_empty() {
            true => Vec::new(),
            false => notes.approvals(record).await?,
        };
        if !requirement.is_empty() {
            // a quorum made whole whose decision was left unwritten is decided, and this comes second
            if self.settle_whole(record, &requirement, &approvals).await?.is_some() {
                return Ok(false);
            }
            self.counts(session, record, approve, &requirement, &approvals).map_err(NotDecided::WouldNotCount)?;
        }
        let with = if passkey.is_some() { ApprovedWith::Passkey } else { ApprovedWith::SignIn };
        let mut decision = Decision {
            id: hex::encode(rand::random::<[u8; 16]>()),
            approve,
            approver: session.approver.clone(),
            groups: session.groups.clone(),
            at_ms: now,
            reason: reason.to_string(),
            named: Some(session.named.clone()).filter(|n| !n.is_empty()),
            approvals: Vec::new(),
            quorum: requirement.needs(),
        };
        let Some(log) = self.audit.clone() else {
            return Err(NotDecided::NoAuditLog);
        };
        let entry = Event::PageDecision(events::PageDecision {
            decision: if approve { "approve" } else { "decline" }.into(),
            method: record::METHOD_PAGE.into(),
            approver: session.approver.clone(),
            approver_groups: session.groups.clone(),
            proposer: record.proposer.clone(),
            tool: record.tool.clone(),
            token: record.token.clone(),
            validation: record.validation.clone(),
            request_sha256: record.request_sha256.clone(),
            page: record.id.clone(),
            decision_id: decision.id.clone(),
            rule: rule.into(),
            policy_ids: policies.to_vec(),
            peer: peer.into(),
            approved_with: approve.then(|| with.name().into()),
            passkey: passkey.cloned(),
            plan_sha256: record.plan.as_ref().map(crate::plan::Plan::sha256),
            plan: record.plan.clone(),
            reason: reason.to_string(),
            quorum: requirement.needs(),
        });
        if let Err(e) = AuditLog::record(log, entry.at(now)).await {
            crate::metrics::metrics().page_decision("refused");
            tracing::error!("a decision is not in the audit log: {e}");
            return Err(NotDecided::NotAudited(e.reason().to_string()));
        }
        let kept = match (approve, requirement.is_empty()) {
            (true, false) => {
                let mine = Approval {
                    id: decision.id.clone(),
                    approver: session.approver.clone(),
                    groups: session.groups.clone(),
                    at_ms: now,
                    reason: reason.to_string(),
                    named: decision.named.clone(),
                    approved_with: with.name().into(),
                    plan_sha256: record.plan_sha256(),
                };
                match self.cast(record, &requirement, mine, &mut decision).await {
                    Ok(kept) => kept,
                    Err(why) => {
                        // recorded, and then not kept (the same person approving twice at once)
                        self.not_kept(record, &decision, &why.to_string()).await;
                        return Err(why);
                    }
                }
            }
            _ => match notes.decide(record, &decision).await? {
                true => Kept::Decided,
                false => Kept::Late,
            },
        };
        if let Kept::Late = kept {
            // recorded before the store chose: say which decision was not the one kept
            self.not_kept(record, &decision, "another decision on this page was kept first").await;
        }
        crate::metrics::metrics().page_decision(match (&kept, approve) {
            (Kept::Late, _) => "refused",
            (Kept::Partly(_) | Kept::Counted | Kept::Unsettled, _) => "partly_approved",
            (Kept::Decided, true) => "approved",
            (Kept::Decided, false) => "declined",
        });
        let written = !matches!(kept, Kept::Late);
        match kept {
            Kept::Partly(progress) => self.notify_progress(record, &decision, &progress),
            Kept::Decided => {
                let event = if approve { "change_approved" } else { "change_declined" };
                self.notify(event, record, Some(&decision));
            }
            Kept::Counted | Kept::Unsettled | Kept::Late => {}
        }
        Ok(written)
    }

    /// Marks `decision`, recorded in the audit log, as not kept, and why.
    async fn not_kept(&self, record: &PageRecord, decision: &Decision, why: &str) {
        let superseded = Event::PageDecisionNotKept(events::PageDecisionNotKept {
            page: record.id.clone(),
            decision_id: decision.id.clone(),
            approver: decision.approver.clone(),
            reason: why.into(),
        })
        .at(self.clock.now_ms());
        if let Some(log) = self.audit.clone()
            && let Err(e) = AuditLog::record(log, superseded).await
        {
            tracing::error!("a decision that was not kept is not marked in the audit log: {e}");
        }
    }

    /// Keeps `mine` in `record`'s ballot; when the approvals kept make every quorum whole, writes
    /// `decision` (with them) as the request's. `Err` only before the approval was kept: once it
    /// is, it stands whatever the store does next (a quorum it made whole and no decision written
    /// is settled by the next reader, [`Self::settle_whole`]).
    async fn cast(
        &self,
        record: &PageRecord,
        requirement: &Requirement,
        mine: Approval,
        decision: &mut Decision,
    ) -> Result<Kept, NotDecided> {
        let notes = self.notes();
        let ballot = notes.ballot(record);
        match ballot.cast(&mine).await? {
            Cast::Counted(_) => {}
            Cast::Closed => return Ok(Kept::Late),
            Cast::Again(_) => return Err(NotDecided::Again),
            Cast::Full => return Err(NotDecided::BallotFull),
        }
        let approvals: Vec<Approval> = match ballot.votes().await {
            Ok(approvals) => approvals,
            Err(e) => {
                tracing::warn!(page = %record.id, "an approval was kept, and the ballot could not be read after it: {e}");
                return Ok(Kept::Unsettled);
            }
        };
        let voters: Vec<_> = approvals.iter().map(Approval::voter).collect();
        if !requirement.met_by(&voters) {
            let progress = requirement.progress(&voters);
            if let Err(e) = notes.list_progress(record, &approvals, &progress).await {
                tracing::warn!(page = %record.id, "the inbox does not show this approval yet: {e}");
            }
            // a decision written meanwhile (a decline on another replica) keeps it out of the waiting
            if let Ok(Some(_)) = ballot.closing().await
                && let Err(e) = notes.superseded(record).await
            {
                tracing::warn!(page = %record.id, "the inbox still lists a decided request as waiting: {e}");
            }
            return Ok(Kept::Partly(progress));
        }
        decision.approvals = approvals;
        match notes.decide(record, decision).await {
            Ok(true) => Ok(Kept::Decided),
            // another approval completed it first, or a decline came between: this one is kept in
            // the ballot, and the request was decided by the other
            Ok(false) => Ok(Kept::Counted),
            Err(e) => {
                tracing::warn!(page = %record.id, "an approval made the quorum whole and its decision was not written: {e}");
                Ok(Kept::Unsettled)
            }
        }
    }

    /// Writes the decision of `record`'s request when the approvals kept make every quorum whole
    /// and none was written (the call that made it whole could not write it): the last approval's.
    /// Returns the decision kept, if one now is.
    pub(crate) async fn settle_whole(
        &self,
        record: &PageRecord,
        requirement: &Requirement,
        approvals: &[Approval],
    ) -> Result<Option<Decision>, StoreUnavailable> {
        let voters: Vec<_> = approvals.iter().map(Approval::voter).collect();
        let Some(last) = approvals.last().filter(|_| !requirement.is_empty() && requirement.met_by(&voters)) else {
            return Ok(None);
        };
        let decision = Decision {
            id: last.id.clone(),
            approve: true,
            approver: last.approver.clone(),
            groups: last.groups.clone(),
            at_ms: last.at_ms,
            reason: last.reason.clone(),
            named: last.named.clone(),
            approvals: approvals.to_vec(),
            quorum: requirement.needs(),
        };
        let notes = self.notes();
        if notes.decide(record, &decision).await? {
            tracing::info!(page = %record.id, "the quorum's decision, left unwritten, was written");
            self.decided.notify_waiters();
            self.notify("change_approved", record, Some(&decision));
        }
        notes.decision(&record.id).await
    }

    /// Tells the operator's destinations that `record`'s request was approved by one more person
    /// and waits for more (never waits).
    fn notify_progress(&self, record: &PageRecord, decision: &Decision, progress: &crate::policy::Progress) {
        self.notify_with(crate::notify::PARTLY_APPROVED, record, Some(decision), Some(progress.said()));
    }

    /// Tells the operator's destinations that `record`'s question waits; if nobody decided it
    /// after the operator's times, reminds them and escalates it (`--notify-remind-after-secs`,
    /// `--notify-escalate-after-secs`); and if nobody decided it by the end of its proposal's
    /// time, that it expired. Watched on this replica (the once-claim keeps each one notice if
    /// another replica watches the same page); a replica that stops first sends none of them.
    pub(crate) fn waiting(self: &Arc<Self>, record: &PageRecord) {
        let Some(notifier) = &self.notifier else { return };
        self.notify("change_waiting", record, None);
        let FollowUps { remind_after_ms, escalate_after_ms } = notifier.follow_ups;
        let at = |after: Option<u64>| after.map(|ms| record.created_at_ms.saturating_add(ms));
        let mut follow_ups: Vec<(u64, &'static str)> =
            [(at(remind_after_ms), crate::notify::REMINDER), (at(escalate_after_ms), crate::notify::ESCALATED)]
                .into_iter()
                .filter_map(|(when, event)| Some((when?, event)))
                .filter(|(when, _)| *when < record.expires_at_ms)
                .collect();
        follow_ups.push((record.expires_at_ms, "change_expired"));
        let (page, record) = (self.clone(), record.clone());
        tokio::spawn(async move {
            for (when, event) in follow_ups {
                // the host's clock, by which the proposal's time is judged, read every few seconds
                while page.clock.now_ms() < when {
                    tokio::time::sleep(EXPIRY_WATCH).await;
                }
                match page.notes().decision(&record.id).await {
                    Ok(None) => page.notify(event, &record, None),
                    // decided: nothing more to remind anyone of
                    Ok(Some(_)) => return,
                    Err(e) => tracing::warn!(page = %record.id, "no {event} notice: the store did not answer: {e}"),
                }
            }
        });
    }

    /// Tells the operator's destinations of `event` about `record` (never waits).
    pub(crate) fn notify(&self, event: &'static str, record: &PageRecord, decided: Option<&Decision>) {
        self.notify_with(event, record, decided, None)
    }

    fn notify_with(
        &self,
        event: &'static str,
        record: &PageRecord,
        decided: Option<&Decision>,
        progress: Option<String>,
    ) {
        let Some(notifier) = &self.notifier else { return };
        let policy = record
            .form_text
            .lines()
            .find_map(|l| l.strip_prefix(crate::approval::form::POLICY_LINE))
            .map(str::to_string);
        notifier.notify(crate::notify::Notice {
            event,
            // each partial approval is its own notice
            key: match &progress {
                Some(_) => format!("{event} {} {}", record.id, decided.map_or("", |d| d.id.as_str())),
                None => format!("{event} {}", record.id),
            },
            change_type: record.change_type.clone(),
            summary: record.plan.as_ref().map(|p| p.summary.clone()),
            approval_url: self.base.get().map(|_| self.link(&record.id)),
            proposer: record.proposer.clone(),
            approver: decided.map(|d| d.approver.clone()),
            policy,
            outcome: None,
            state: match event {
                "change_waiting" | crate::notify::REMINDER | crate::notify::ESCALATED => "waiting",
                "change_expired" => "expired",
                crate::notify::PARTLY_APPROVED => "partly_approved",
                _ if decided.is_some_and(|d| d.approve) => "approved",
                _ => "declined",
            },
            reason: decided.map(|d| d.reason.clone()).filter(|r| !r.is_empty()),
            progress,
            break_glass: record.break_glass.clone(),
            request_sha256: record.request_sha256.clone(),
            at: crate::audit::rfc3339(self.clock.now_ms()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(approver: &str) -> Session {
        Session {
            approver: approver.into(),
            subject: "s".into(),
            groups: vec!["netops".into()],
            auth_time: 0,
            csrf: "c".into(),
            expires_at_ms: 1,
            named: Default::default(),
        }
    }

    fn record(proposer: &str) -> PageRecord {
        PageRecord {
            id: "apv-00000000000000000000000000000000".into(),
            form_text: String::new(),
            request_sha256: "a".into(),
            token: "chg-a".into(),
            validation: "v".into(),
            proposer: proposer.into(),
            tool: "t".into(),
            validated_at_ms: 0,
            created_at_ms: 0,
            expires_at_ms: 1,
            change_type: "connection_create".into(),
            transport: "http".into(),
            facts: None,
            plan: None,
            agent_reason: String::new(),
            break_glass: vec![],
        }
    }

    /// A page over the memory store whose operator's policy is `set`.
    fn page_with(set: &str, dir: &std::path::Path) -> Arc<ApprovalPage> {
        let path = dir.join("set.cedar");
        std::fs::write(&path, set).unwrap();
        let deps = PageDeps {
            store: Arc::new(ProposalStore::new()),
            clock: Clock::default(),
            audit: None,
            policy: Arc::new(crate::policy::PolicyGate::load(&path).unwrap()),
            transport: "http",
            cookie_seal: sealed_cookie::CookieSeal::new(&[7; 32]),
            notifier: None,
        };
        ApprovalPage::start_local(dir.join("approvers.json"), deps)
    }

    fn approval(approver: &str, group: &str, at_ms: u64) -> Approval {
        Approval {
            id: format!("d-{approver}"),
            approver: approver.into(),
            groups: vec![group.into()],
            at_ms,
            reason: String::new(),
            named: None,
            approved_with: "sign_in".into(),
            plan_sha256: String::new(),
        }
    }

    /// The call that made a quorum whole could not write its decision (the store failed after
    /// the approval was kept): the next reader writes it, the last approval's, with them all,
    /// and a request short of its quorum is left as it is.
    #[tokio::test]
    async fn a_quorum_made_whole_and_left_undecided_is_decided_by_the_next_reader() {
        let dir = tempfile::tempdir().unwrap();
        let set = "@id(\"all\") permit (principal, action, resource);\n\
                   @id(\"two\") @approvals(\"2 of netops\") permit (principal, action, resource);";
        let page = page_with(set, dir.path());
        let now = page.clock.now_ms();
        let facts = crate::policy::Facts::of_json("connection_create", &serde_json::json!({"bandwidth": 10}));
        let record = PageRecord {
            facts: Some(facts),
            validated_at_ms: now,
            expires_at_ms: now + 600_000,
            ..record("https://idp.example#pat")
        };
        let requirement = page.requirement(&record.question()).await;
        assert_eq!(requirement.needs(), [r#""two": 2 of netops"#]);
        let notes = page.notes();
        let ballot = notes.ballot(&record);
        let (alice, bob) = (approval("i#alice", "netops", now), approval("i#bob", "netops", now + 1));
        assert_eq!(ballot.cast(&alice).await.unwrap(), Cast::Counted(1));
        // short of the quorum: nothing is decided
        assert_eq!(page.settle_whole(&record, &requirement, std::slice::from_ref(&alice)).await.unwrap(), None);
        assert_eq!(ballot.cast(&bob).await.unwrap(), Cast::Counted(2));
        assert_eq!(ballot.cast(&bob).await.unwrap(), Cast::Counted(2), "the same approval sent again is itself");
        let kept = notes.approvals(&record).await.unwrap();
        let decided = page.settle_whole(&record, &requirement, &kept).await.unwrap().expect("decided now");
        assert_eq!((decided.approve, decided.approver.as_str(), decided.approvals.len()), (true, "i#bob", 2));
        assert_eq!(notes.decision(&record.id).await.unwrap(), Some(decided.clone()), "kept for every reader");
        assert_eq!(page.settle_whole(&record, &requirement, &kept).await.unwrap(), Some(decided), "once");
    }

    #[test]
    fn only_the_proposer_by_their_own_sign_in_may_decide() {
        let alice = "https://idp.example#alice";
        assert!(matches!(permission(&session(alice), &record(alice).question()), Permission::Permitted(..)));
        let Permission::Refused(why) = permission(&session("https://idp.example#bob"), &record(alice).question())
        else {
            panic!("bob decided alice's request")
        };
        assert!(why.contains("only the person who proposed"), "{why}");
        // the same subject at another issuer is another person
        assert!(matches!(
            permission(&session("https://other.example#alice"), &record(alice).question()),
            Permission::Refused(_)
        ));
        // a token-file label or the local user is no signed-in person, whoever signs in
        for label in ["ops", "local"] {
            let Permission::Refused(why) =
                permission(&session(&format!("https://idp.example#{label}")), &record(label).question())
            else {
                panic!("{label}")
            };
            assert!(why.contains("no signed-in person"), "{why}");
        }
    }
}
