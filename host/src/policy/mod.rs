//! The operator's own limits on what may be proposed at all: a Cedar policy set (`--policy`),
//! evaluated by the host, never by the component, on the exact bytes of every create, before
//! its dry run is sent and again before a person is asked.
//!
//! Without a policy everything is permitted, as before; with one, Cedar's default deny applies:
//! a request is allowed only if some `permit` matches and no `forbid` does. A set is checked
//! against [`schema_text`] when it is loaded, so a policy naming an attribute the host does not
//! provide fails `policy check` and start-up instead of silently never matching. SIGHUP rereads
//! the file; a set that no longer validates is logged and the previous one stays.

mod error;
mod facts;
mod quorum;
mod reads;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use cedar_policy::{
    Authorizer, Context, Decision as CedarDecision, Entities, Entity, EntityId, EntityTypeName, EntityUid, PolicyId,
    PolicySet, Request, RestrictedExpression, Schema, ValidationMode, Validator,
};
use sha2::{Digest, Sha256};

pub(crate) use error::PolicyError;
pub use facts::{Facts, UNKNOWN_METRO};
pub(crate) use quorum::{Progress, Quorum, Requirement, Voter};

/// The Cedar schema every policy set is validated against (`equinix-mcp policy schema`): its
/// actions are the contract's change types.
pub(crate) fn schema_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let actions = equinix_broker_contract::ChangeType::NAMES.join(", ");
        include_str!("schema.cedarschema").replacen(
            "action CHANGE_TYPES appliesTo",
            &format!("action {actions} appliesTo"),
            1,
        )
    })
}
const NAMESPACE: &str = "EquinixMcp";

fn schema() -> &'static Schema {
    static SCHEMA_PARSED: OnceLock<Schema> = OnceLock::new();
    SCHEMA_PARSED.get_or_init(|| Schema::from_cedarschema_str(schema_text()).expect("the built-in schema parses").0)
}

/// The schema's entity type names, parsed once (Cedar parses a name with its full grammar).
struct TypeNames {
    principal: EntityTypeName,
    action: EntityTypeName,
    request: EntityTypeName,
}

fn type_names() -> &'static TypeNames {
    static NAMES: OnceLock<TypeNames> = OnceLock::new();
    NAMES.get_or_init(|| {
        let name = |ty: &str| EntityTypeName::from_str(&format!("{NAMESPACE}::{ty}")).expect("a schema type name");
        TypeNames { principal: name("Principal"), action: name("Action"), request: name("Request") }
    })
}

/// A policy set that validated against the schema.
pub struct LoadedPolicy {
    pub path: PathBuf,
    pub sha256: String,
    pub policies: usize,
    /// The policies that decide whether a request is allowed: every one but the `@approvals` ones.
    set: PolicySet,
    /// The `@approvals` policies: how many must approve a request each holds for.
    quorums: Vec<QuorumRule>,
    memo: Memo,
    /// Whether a policy of the set names `time` (see [`LoadedPolicy::reads_time`]).
    reads_time: bool,
}

/// A policy annotated `@approvals("...")` (a permit) or `@break_glass("...")` (a forbid): it
/// decides nothing of whether a request is allowed; where it holds (judged alone, in the approval
/// phase on the page, with no approver) the request needs its quorum. A break-glass forbid is a
/// freeze its quorum may still open: without that quorum nothing it holds for is created.
#[derive(Debug)]
struct QuorumRule {
    id: String,
    quorum: Quorum,
    alone: PolicySet,
    /// A `@break_glass` forbid: where it holds, nothing is created without its quorum.
    break_glass: bool,
}

/// A set, read: the deciding policies and the quorum rules.
#[derive(Debug)]
struct Parsed {
    set: PolicySet,
    quorums: Vec<QuorumRule>,
    /// Whether any policy names `time`.
    time: bool,
}

/// Cedar's decisions on this set, by what they depend on: the principal, the action, the
/// context and the attributes the set reads (see [`reads`]). A team's proposes mostly differ in
/// names and VLANs, which a set rarely reads, so most are answered here without evaluating the
/// set again. A set the walk cannot fully account for is evaluated every time.
struct Memo {
    reads: Option<BTreeSet<String>>,
    /// Whether the set names `time`.
    time: bool,
    decided: Mutex<HashMap<String, Arc<Decision>>>,
}

/// Decisions remembered at most (a full memo is cleared, not grown).
const MAX_REMEMBERED_DECISIONS: usize = 1024;

impl Memo {
    fn of(set: &PolicySet) -> Memo {
        Memo { reads: reads::attributes_read(set), decided: Mutex::default(), time: names_time(set) }
    }

    /// Everything the decision on `facts` depends on, as one string (JSON, so unambiguous), or
    /// `None` when the set may read more than attributes.
    fn key(&self, asking: &Asking, facts: &Facts) -> Option<String> {
        let reads = self.reads.as_ref()?;
        let attributes = attributes(facts);
        let read: Vec<(&String, Option<&Attr>)> =
            reads.iter().map(|name| (name, attributes.iter().find(|(n, _)| n == name).map(|(_, a)| a))).collect();
        let key = (
            asking.principal,
            asking.action,
            asking.phase,
            asking.transport,
            asking.tool,
            asking.approving,
            // the minute only for a set that reads the time: the others' decisions never change with it
            self.time.then_some(asking.at),
            read,
        );
        Some(serde_json::to_string(&key).expect("a key serializes"))
    }
}

/// One `Request` attribute's value, as the host gives it to Cedar (and to the memo's key).
enum Attr<'a> {
    Text(&'a str),
    Texts(&'a BTreeSet<String>),
    Long(i64),
    Bool(bool),
}

impl Attr<'_> {
    fn cedar(&self) -> RestrictedExpression {
        let string = |s: &str| RestrictedExpression::new_string(s.to_string());
        match self {
            Attr::Text(s) => string(s),
            Attr::Texts(items) => RestrictedExpression::new_set(items.iter().map(|s| string(s))),
            Attr::Long(n) => RestrictedExpression::new_long(*n),
            Attr::Bool(b) => RestrictedExpression::new_bool(*b),
        }
    }
}

impl serde::Serialize for Attr<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Attr::Text(t) => s.serialize_str(t),
            Attr::Texts(items) => s.collect_seq(items.iter()),
            Attr::Long(n) => s.serialize_i64(*n),
            Attr::Bool(b) => s.serialize_bool(*b),
        }
    }
}

/// The `Request` entity's attributes of `facts` (an absent optional one is left out).
fn attributes(facts: &Facts) -> Vec<(&'static str, Attr<'_>)> {
    let mut attrs = vec![
        ("metros", Attr::Texts(&facts.metros)),
        ("access_point_types", Attr::Texts(&facts.access_point_types)),
        ("name", Attr::Text(&facts.name)),
        ("port_uuids", Attr::Texts(&facts.port_uuids)),
        ("profile_uuids", Attr::Texts(&facts.profile_uuids)),
        ("router_uuids", Attr::Texts(&facts.router_uuids)),
        ("network_uuids", Attr::Texts(&facts.network_uuids)),
        ("virtual_device_uuids", Attr::Texts(&facts.virtual_device_uuids)),
        ("notification_emails", Attr::Texts(&facts.notification_emails)),
        ("redundant", Attr::Bool(facts.redundant)),
        ("request_sha256", Attr::Text(&facts.request_sha256)),
    ];
    let optional = [
        ("connection_type", facts.connection_type.as_deref()),
        ("project_id", facts.project_id.as_deref()),
        ("network_scope", facts.network_scope.as_deref()),
        ("token_type", facts.token_type.as_deref()),
    ];
    attrs.extend(optional.into_iter().filter_map(|(name, v)| Some((name, Attr::Text(v?)))));
    attrs.extend(facts.bandwidth_mbps.map(|b| ("bandwidth_mbps", Attr::Long(b))));
    // a price the host could not read is absent, and `price_known` says so: a rule that names a
    // sum never reads an unknown price as zero
    let price = facts.price.as_ref();
    let monthly = price.and_then(|p| p.monthly_cents);
    attrs.push(("price_known", Attr::Bool(monthly.is_some())));
    attrs.extend(monthly.map(|c| ("monthly_price_cents", Attr::Long(c))));
    attrs.extend(price.and_then(|p| p.one_time_cents).map(|c| ("one_time_price_cents", Attr::Long(c))));
    attrs.extend(price.and_then(|p| p.term_months).map(|t| ("term_months", Attr::Long(t))));
    attrs.extend(price.filter(|_| monthly.is_some()).map(|p| ("price_currency", Attr::Text(&p.currency))));
    attrs
}

/// Whether a policy of `set` names `time` anywhere (a word in its text: a false positive costs
/// only the building of the time and the search for when a denial ends).
fn names_time(set: &PolicySet) -> bool {
    set.policies().any(|p| p.to_string().contains("time"))
}

/// Reads and validates the set in `path`. `Err` names each policy and its problem.
pub fn load(path: &Path) -> Result<LoadedPolicy, PolicyError> {
    let bytes =
        std::fs::read(path).map_err(|e| PolicyError::Unreadable { path: path.to_path_buf(), why: e.to_string() })?;
    let text = std::str::from_utf8(&bytes).map_err(|_| PolicyError::NotUtf8 { path: path.to_path_buf() })?;
    let parsed = parse(text).map_err(|e| PolicyError::InFile { path: path.to_path_buf(), error: Box::new(e) })?;
    Ok(LoadedPolicy::of(path, hex::encode(Sha256::digest(&bytes)), parsed))
}

/// The context a quorum rule must not read: a quorum is the request's, while who may approve is
/// said by the deciding policies, and whom the quorum counts by its groups.
const APPROVER_CONTEXT: [&str; 4] = ["approver", "approver_groups", "approved_with", "user_verified"];

/// A policy's `@approvals` rule (on a `permit`) or `@break_glass` rule (on a `forbid`), checked;
/// `None` for a policy with neither.
fn quorum_rule(p: &cedar_policy::Policy, id: &str) -> Result<Option<QuorumRule>, PolicyError> {
    let refused = |why: String| PolicyError::Quorum { id: id.to_string(), why };
    let (annotation, break_glass, effect) = match (p.annotation("approvals"), p.annotation("break_glass")) {
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => {
            return Err(refused("@approvals and @break_glass are two kinds of rule: give it one".into()));
        }
        (Some(text), None) => (("approvals", text), false, cedar_policy::Effect::Permit),
        (None, Some(text)) => (("break_glass", text), true, cedar_policy::Effect::Forbid),
    };
    let (name, text) = annotation;
    let quorum = Quorum::parse(text).map_err(|e| refused(format!("@{name}({text:?}): {e}")))?;
    if p.effect() != effect {
        return Err(refused(match break_glass {
            false => "@approvals belongs on a `permit` (it says when a request needs that quorum); a `forbid` with it \
                      would read as refusing what it asks approvals for"
                .into(),
            true => "@break_glass belongs on a `forbid` (what it forbids, that quorum may still approve)".into(),
        }));
    }
    let mut alone = PolicySet::new();
    alone.add(p.clone()).map_err(|e| PolicyError::Rejected { id: id.to_string(), why: cedar_error(&e) })?;
    let read = reads::attributes_read(&alone);
    let reads_approver = match &read {
        Some(names) => APPROVER_CONTEXT.iter().find(|a| names.contains(**a)).copied(),
        // a policy the walk cannot account for: its text, word by word
        None => APPROVER_CONTEXT.iter().find(|a| p.to_string().contains(**a)).copied(),
    };
    if let Some(attr) = reads_approver {
        return Err(refused(format!(
            "an @{name} policy must not read context.{attr}: a quorum is the request's, not one approver's (who may \
             approve is said by the other policies, and whom the quorum counts by its groups)"
        )));
    }
    Ok(Some(QuorumRule { id: id.to_string(), quorum, alone, break_glass }))
}

/// The string literals of the policies that read `approver_groups`: the groups the set names.
fn groups_named(set: &PolicySet) -> Option<BTreeSet<String>> {
    let texts: Vec<String> = set.policies().map(|p| p.to_string()).filter(|t| t.contains("approver_groups")).collect();
    if texts.is_empty() {
        return None;
    }
    let mut named = BTreeSet::new();
    for text in texts {
        let mut parts = text.split('"');
        parts.next();
        // every other part is inside quotes (Cedar's display escapes a quote in a string)
        while let (Some(inside), _) = (parts.next(), parts.next()) {
            named.insert(inside.to_string());
        }
    }
    Some(named)
}

/// A quorum no group could meet: one naming a group that no policy of a set that judges
/// approvers by their groups names (a typo, most often).
fn unmeetable(quorums: &[QuorumRule], set: &PolicySet) -> Result<(), PolicyError> {
    let Some(named) = groups_named(set) else { return Ok(()) };
    for rule in quorums {
        if let Some(group) = rule.quorum.groups().find(|g| !named.contains(*g)) {
            let kind = if rule.break_glass { "break_glass" } else { "approvals" };
            return Err(PolicyError::Unmeetable {
                id: rule.id.clone(),
                rule: format!("@{kind}(\"{}\")", rule.quorum),
                group: group.to_string(),
                named: named.iter().cloned().collect(),
            });
        }
    }
    Ok(())
}

/// Parses a set, naming each policy by its `@id("...")` annotation where it has one, and
/// validates it against the schema.
fn parse(text: &str) -> Result<Parsed, PolicyError> {
    let parsed = PolicySet::from_str(text).map_err(|e| PolicyError::NotCedar(cedar_error(&e)))?;
    if parsed.templates().next().is_some() {
        return Err(PolicyError::Templates);
    }
    let (mut all, mut set, mut quorums) = (PolicySet::new(), PolicySet::new(), Vec::new());
    for p in parsed.policies() {
        let id = p.annotation("id").map(str::to_string).unwrap_or_else(|| p.id().to_string());
        let p = p.new_id(PolicyId::new(&id));
        let rejected = |e: cedar_policy::PolicySetError| PolicyError::Rejected { id: id.clone(), why: cedar_error(&e) };
        all.add(p.clone()).map_err(rejected)?;
        match quorum_rule(&p, &id)? {
            Some(rule) => quorums.push(rule),
            None => set.add(p).map_err(rejected)?,
        }
    }
    let result = Validator::new(schema().clone()).validate(&all, ValidationMode::Strict);
    // a warning counts: a policy that can never apply (a typo behind `has`) must not pass silently
    if !result.validation_passed_without_warnings() {
        let problems: Vec<String> = result
            .validation_errors()
            .map(|e| cedar_error(e))
            .chain(result.validation_warnings().map(|w| cedar_error(w)))
            .collect();
        return Err(PolicyError::Invalid(problems));
    }
    unmeetable(&quorums, &set)?;
    Ok(Parsed { time: names_time(&all), set, quorums })
}

/// An error with its causes and help on one line.
fn cedar_error(e: &dyn miette::Diagnostic) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str(&format!(": {s}"));
        source = s.source();
    }
    if let Some(help) = e.help() {
        out.push_str(&format!(" (help: {help})"));
    }
    out
}

/// What the policy decided about one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// The policies that decided (the permits that matched, or the forbids that did).
    pub policies: Vec<String>,
    /// Policies that could not be evaluated (they do not count towards a permit).
    pub errors: Vec<String>,
}

impl Decision {
    /// Why a denied request is denied, for the caller.
    pub(crate) fn explain(&self) -> String {
        let mut why = if self.policies.is_empty() {
            "no policy of the operator's set permits it".to_string()
        } else {
            format!("forbidden by {}", self.policies.iter().map(|p| format!("{p:?}")).collect::<Vec<_>>().join(", "))
        };
        if !self.errors.is_empty() {
            why.push_str(&format!(" (not evaluated: {})", self.errors.join("; ")));
        }
        why
    }
}

/// The evaluation's inputs besides the request: who, which phase, which transport, which tool,
/// and in the approval phase how the answer comes.
#[derive(Clone, Copy)]
pub struct Asking<'a> {
    pub action: &'a str,
    pub principal: &'a str,
    pub phase: &'static str,
    pub transport: &'a str,
    pub tool: &'a str,
    pub approving: Option<&'a Approving>,
    /// When it is judged, on the host's clock (`context.time`).
    pub at: Moment,
}

/// Who asks for a request and how, owned (to be judged on a task of its own).
pub(crate) struct Requester {
    pub action: String,
    pub principal: String,
    pub transport: String,
    pub tool: String,
}

/// A time as the policy reads it (`context.time`, UTC), to the minute: a rule names a freeze
/// window with it, and decisions within one minute can be remembered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Moment {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    /// ISO 8601: 1 is Monday, 7 is Sunday.
    pub weekday: i64,
    pub hour: i64,
    pub minute: i64,
}

impl Moment {
    /// The moment of `ms` since the epoch.
    pub fn at(ms: u64) -> Moment {
        let t = time::OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
            .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
        Moment {
            year: i64::from(t.year()),
            month: i64::from(u8::from(t.month())),
            day: i64::from(t.day()),
            weekday: i64::from(t.weekday().number_from_monday()),
            hour: i64::from(t.hour()),
            minute: i64::from(t.minute()),
        }
    }

    fn cedar(&self) -> RestrictedExpression {
        let fields = [
            ("year", self.year),
            ("month", self.month),
            ("day", self.day),
            ("weekday", self.weekday),
            ("hour", self.hour),
            ("minute", self.minute),
        ];
        RestrictedExpression::new_record(fields.map(|(k, v)| (k.to_string(), RestrictedExpression::new_long(v))))
            .expect("six distinct names make a record")
    }
}

/// How a person's answer comes, and on the approval page who gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Approving {
    /// `form`, `page` or `opt_in`.
    pub method: &'static str,
    /// `ISSUER#SUBJECT` of the person deciding on the page.
    pub approver: Option<String>,
    pub approver_groups: Option<Vec<String>>,
    /// On the approval page: `passkey` (their enrolled passkey signed the request) or `sign_in`.
    pub approved_with: Option<&'static str>,
    /// With a passkey: whether the authenticator verified the person (always, for an approval
    /// the host accepts; stated so a policy can require it in so many words).
    pub user_verified: Option<bool>,
}

impl LoadedPolicy {
    fn of(path: &Path, sha256: String, parsed: Parsed) -> LoadedPolicy {
        LoadedPolicy {
            path: path.to_path_buf(),
            sha256,
            policies: parsed.set.policies().count() + parsed.quorums.len(),
            memo: Memo::of(&parsed.set),
            reads_time: parsed.time,
            set: parsed.set,
            quorums: parsed.quorums,
        }
    }

    /// How many `@approvals` and `@break_glass` policies the set has.
    pub(crate) fn quorum_rules(&self) -> usize {
        self.quorums.len()
    }

    /// Every quorum rule of the set, as if each held: what a request needs when its rules could not
    /// be judged (an error never lowers what a change needs).
    pub(crate) fn every_rule(&self) -> Requirement {
        Requirement {
            rules: self.quorums.iter().map(|r| (r.id.clone(), r.quorum.clone())).collect(),
            break_glass: self.quorums.iter().filter(|r| r.break_glass).map(|r| r.id.clone()).collect(),
        }
    }

    /// The quorums `asking`'s request needs: those of the `@approvals` policies that hold for it,
    /// each judged alone in the approval phase on the page, with no approver (`asking` gives the
    /// proposer, the transport, the tool and the time). A rule that cannot be evaluated holds:
    /// an error never lowers what a change needs.
    pub(crate) fn requirement(&self, asking: &Asking, facts: &Facts) -> Requirement {
        let on_page = Approving { method: "page", ..Approving::default() };
        let asking = Asking { phase: "approval", approving: Some(&on_page), ..*asking };
        let mut requirement = Requirement::default();
        for rule in &self.quorums {
            let holds = match self.evaluate_set(&rule.alone, &asking, facts, None, false) {
                Ok(d) if d.errors.is_empty() => d.policies.contains(&rule.id),
                Ok(Decision { errors, .. }) => {
                    tracing::warn!(policy = %rule.id, "a quorum rule could not be evaluated, so it holds: {errors:?}");
                    true
                }
                Err(e) => {
                    tracing::warn!(policy = %rule.id, "a quorum rule could not be evaluated, so it holds: {e}");
                    true
                }
            };
            if holds {
                requirement.rules.push((rule.id.clone(), rule.quorum.clone()));
                if rule.break_glass {
                    requirement.break_glass.push(rule.id.clone());
                }
            }
        }
        requirement
    }

    /// [`Self::requirement`] of a request in the approval phase, at `at`, evaluated on a task of
    /// its own: a capability runs on the component's fiber, whose stack Cedar's recursion guard
    /// misreads. A task that cannot finish asks the most it can: every rule of the set.
    pub(crate) async fn requirement_on_task(self: Arc<Self>, who: Requester, facts: Facts, at: Moment) -> Requirement {
        let every = self.every_rule();
        let judged = tokio::spawn(async move {
            let asking = Asking {
                action: &who.action,
                principal: &who.principal,
                phase: "approval",
                transport: &who.transport,
                tool: &who.tool,
                approving: None,
                at,
            };
            self.requirement(&asking, &facts)
        });
        judged.await.unwrap_or_else(|e| {
            tracing::error!("the policy's quorums could not be evaluated, so every one is asked: {e}");
            every
        })
    }

    /// The decision on a request this set has decided before in every respect it reads.
    pub fn recall(&self, asking: &Asking, facts: &Facts) -> Option<Arc<Decision>> {
        let key = self.memo.key(asking, facts)?;
        self.memo.decided.lock().unwrap().get(&key).cloned()
    }

    /// Cedar's decision on the request (remembered for [`LoadedPolicy::recall`]).
    /// Whether a decision of this set may change with the time (a policy that names `time`): only
    /// then is the next time it allows a denied request looked for, and the time built at all.
    pub(crate) fn reads_time(&self) -> bool {
        self.reads_time
    }

    /// The first time from `from_ms` on, within a month, at which `asking` (made at that time)
    /// is allowed: hour by hour, then the minute within the hour (a window shorter than an hour
    /// that opens and closes between two whole hours is not seen). Evaluated afresh each time,
    /// not remembered.
    pub(crate) fn next_allowed(&self, asking: &Asking, facts: &Facts, from_ms: u64) -> Option<u64> {
        const MINUTE: u64 = 60_000;
        const HOUR: u64 = 60 * MINUTE;
        // allowed, and outside every break-glass freeze: what an ordinary approval may create
        let allowed = |ms: u64| {
            let at = Asking { at: Moment::at(ms), ..*asking };
            self.evaluate(&at, facts, None).is_ok_and(|d| d.allowed)
                && self.requirement(&at, facts).break_glass.is_empty()
        };
        let first_hour = (from_ms / HOUR + 1) * HOUR;
        let hour = (0..31 * 24).map(|h| first_hour + h * HOUR).find(|ms| allowed(*ms))?;
        let start = hour.saturating_sub(HOUR).max(from_ms / MINUTE * MINUTE + MINUTE);
        (start..=hour).step_by(MINUTE as usize).find(|ms| allowed(*ms))
    }

    pub fn decide(&self, asking: &Asking, facts: &Facts) -> Arc<Decision> {
        // The set was validated against the schema, and the request is built to it (the tests
        // build it with the schema checking each entity): no per-request schema check.
        let decision = Arc::new(match self.evaluate(asking, facts, None) {
            Ok(d) => d,
            Err(e) => Decision { allowed: false, policies: Vec::new(), errors: vec![e] },
        });
        // an error's text may name this request's own entity: such a decision (a denial) is not
        // lent to another request
        if let Some(key) = self.memo.key(asking, facts).filter(|_| decision.errors.is_empty()) {
            let mut decided = self.memo.decided.lock().unwrap();
            if decided.len() >= MAX_REMEMBERED_DECISIONS {
                decided.clear();
            }
            decided.insert(key, decision.clone());
        }
        decision
    }

    fn evaluate(&self, asking: &Asking, facts: &Facts, schema: Option<&Schema>) -> Result<Decision, String> {
        self.evaluate_set(&self.set, asking, facts, schema, true)
    }

    /// Cedar's decision of `set` on the request; `read_only` builds only the attributes the
    /// deciding set reads (a quorum rule is evaluated with them all).
    fn evaluate_set(
        &self,
        set: &PolicySet,
        asking: &Asking,
        facts: &Facts,
        schema: Option<&Schema>,
        read_only: bool,
    ) -> Result<Decision, String> {
        let names = type_names();
        let uid = |ty: &EntityTypeName, id: &str| EntityUid::from_type_name_and_id(ty.clone(), EntityId::new(id));
        let principal = uid(&names.principal, asking.principal);
        let action = uid(&names.action, asking.action);
        let resource = uid(&names.request, &facts.request_sha256);
        let string = |s: &str| RestrictedExpression::new_string(s.to_string());
        // The set can observe only the attributes it reads, so only those are built (the schema's
        // check, in the tests, needs them all); the tests' grid compares the two.
        let reads = self.memo.reads.as_ref().filter(|_| schema.is_none() && read_only);
        let attrs: HashMap<String, RestrictedExpression> = attributes(facts)
            .into_iter()
            .filter(|(name, _)| reads.is_none_or(|r| r.contains(*name)))
            .map(|(name, a)| (name.to_string(), a.cedar()))
            .collect();
        let request_entity = Entity::new(resource.clone(), attrs, HashSet::new()).map_err(|e| e.to_string())?;
        let principal_entity = Entity::new_no_attrs(principal.clone(), HashSet::new());
        let entities = Entities::from_entities([request_entity, principal_entity], schema)
            .map_err(|e| format!("the request's attributes do not fit the schema: {e}"))?;
        let mut pairs = vec![
            ("phase".to_string(), string(asking.phase)),
            ("transport".to_string(), string(asking.transport)),
            ("tool".to_string(), string(asking.tool)),
            ("proposer".to_string(), string(asking.principal)),
        ];
        // like the request's attributes, built only for a set that can observe it (the schema's
        // check, in the tests, needs it always)
        if self.reads_time || schema.is_some() {
            pairs.push(("time".to_string(), asking.at.cedar()));
        }
        if let Some(approving) = asking.approving {
            pairs.push(("method".to_string(), string(approving.method)));
            if let Some(approver) = &approving.approver {
                pairs.push(("approver".to_string(), string(approver)));
            }
            if let Some(groups) = &approving.approver_groups {
                let set = RestrictedExpression::new_set(groups.iter().map(|g| string(g)));
                pairs.push(("approver_groups".to_string(), set));
            }
            if let Some(with) = approving.approved_with {
                pairs.push(("approved_with".to_string(), string(with)));
            }
            if let Some(uv) = approving.user_verified {
                pairs.push(("user_verified".to_string(), RestrictedExpression::new_bool(uv)));
            }
        }
        let context = Context::from_pairs(pairs).map_err(|e| e.to_string())?;
        let request = Request::new(principal, action, resource, context, schema).map_err(|e| e.to_string())?;
        static AUTHORIZER: OnceLock<Authorizer> = OnceLock::new();
        let response = AUTHORIZER.get_or_init(Authorizer::new).is_authorized(&request, set, &entities);
        let diagnostics = response.diagnostics();
        // Cedar gives the reasons and errors in no fixed order: sorted, one request is audited
        // the same way every time
        let mut errors: Vec<String> = diagnostics.errors().map(|e| e.to_string()).collect();
        let mut policies: Vec<String> = diagnostics.reason().map(|p| p.to_string()).collect();
        errors.sort();
        policies.sort();
        Ok(Decision {
            // Cedar skips a policy whose evaluation errs, so a forbid that errs (an overflow, say)
            // would let a permit through: any error denies
            allowed: response.decision() == CedarDecision::Allow && errors.is_empty(),
            policies,
            errors,
        })
    }
}

/// The operator's policy as its callers see it (the capabilities, the approval page).
pub trait OperatorPolicy: Send + Sync {
    /// The policy set in force; none: every create a person approves is permitted.
    fn current(&self) -> Option<Arc<LoadedPolicy>>;

    /// The metro learned earlier for a port or Cloud Router (they never move).
    fn remembered_metro(&self, _uuid: &str) -> Option<String> {
        None
    }

    fn remember_metro(&self, _uuid: &str, _metro: &str) {}
}

impl OperatorPolicy for PolicyGate {
    fn current(&self) -> Option<Arc<LoadedPolicy>> {
        PolicyGate::current(self)
    }

    fn remembered_metro(&self, uuid: &str) -> Option<String> {
        PolicyGate::remembered_metro(self, uuid)
    }

    fn remember_metro(&self, uuid: &str, metro: &str) {
        PolicyGate::remember_metro(self, uuid, metro)
    }
}

/// The operator's policy file.
#[derive(clap::Args, Debug, Clone)]
pub struct PolicyArgs {
    /// A Cedar policy set on what may be proposed (`equinix-mcp policy schema`): every create is
    /// judged on its exact bytes before its dry run and before a person is asked, and denied
    /// unless a policy permits it and none forbids it. SIGHUP rereads it. Without it everything
    /// is permitted.
    #[arg(long, env = "EQUINIX_MCP_POLICY", value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

impl PolicyArgs {
    /// The gate of `--policy`, or an open one.
    pub(crate) fn gate(&self) -> anyhow::Result<PolicyGate> {
        match &self.policy {
            Some(path) => PolicyGate::load(path).map_err(|e| e.context("--policy")),
            None => Ok(PolicyGate::open()),
        }
    }
}

/// The policy in force, replaceable while the server runs, and what the host learned of the
/// metros of ports and Cloud Routers (they never move, so a lookup is made once per process).
#[derive(Default)]
pub struct PolicyGate {
    current: RwLock<Option<Arc<LoadedPolicy>>>,
    metros: Mutex<HashMap<String, String>>,
}

/// Metro lookups remembered at most (a full cache is cleared, not grown).
const MAX_REMEMBERED_METROS: usize = 4096;

impl PolicyGate {
    /// Everything permitted: no policy.
    pub(crate) fn open() -> Self {
        PolicyGate::default()
    }

    /// The gate with the set in `path`.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let loaded = load(path)?;
        Ok(PolicyGate { current: RwLock::new(Some(Arc::new(loaded))), metros: Mutex::default() })
    }

    pub(crate) fn current(&self) -> Option<Arc<LoadedPolicy>> {
        self.current.read().unwrap().clone()
    }

    /// Rereads the file of the set in force; on any problem the previous set stays. Returns
    /// the new set's description, or why it was not taken.
    pub(crate) fn reload(&self) -> Option<Result<String, String>> {
        let path = self.current()?.path.clone();
        Some(load(&path).map_err(|e| e.to_string()).map(|loaded| {
            let said = format!("{} ({} policies, sha256 {})", path.display(), loaded.policies, loaded.sha256);
            *self.current.write().unwrap() = Some(Arc::new(loaded));
            said
        }))
    }

    /// The metro remembered for `uuid`.
    pub(crate) fn remembered_metro(&self, uuid: &str) -> Option<String> {
        self.metros.lock().unwrap().get(uuid).cloned()
    }

    pub(crate) fn remember_metro(&self, uuid: &str, metro: &str) {
        let mut metros = self.metros.lock().unwrap();
        if metros.len() >= MAX_REMEMBERED_METROS {
            metros.clear();
        }
        metros.insert(uuid.to_string(), metro.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_schema_names_every_change_type_of_the_contract_as_an_action() {
        let line =
            schema_text().lines().map(str::trim_start).find(|l| l.starts_with("action ")).expect("an action line");
        let named: Vec<&str> =
            line["action ".len()..].split(" appliesTo").next().unwrap().split(',').map(str::trim).collect();
        assert_eq!(named, equinix_broker_contract::ChangeType::NAMES, "{line}");
    }

    const TEAM: &str = r#"
        @id("our-metros-only")
        permit (principal, action, resource) when { ["DC", "SV"].containsAll(resource.metros) };
        @id("at-most-1-gbps")
        forbid (principal, action, resource) when { resource has bandwidth_mbps && resource.bandwidth_mbps > 1000 };
        @id("no-service-tokens")
        forbid (principal, action == EquinixMcp::Action::"service_token_create", resource);
        @id("networks-for-netops")
        forbid (principal, action == EquinixMcp::Action::"network_create", resource)
        unless { principal == EquinixMcp::Principal::"netops" };
    "#;

    /// A connection create by `principal` in the approval phase, at no particular time.
    fn approval_of(principal: &str) -> Asking<'_> {
        Asking {
            action: "connection_create",
            principal,
            phase: "approval",
            transport: "http",
            tool: "t",
            approving: None,
            at: Moment::default(),
        }
    }

    fn policy(text: &str) -> LoadedPolicy {
        LoadedPolicy::of(Path::new("p.cedar"), String::new(), parse(text).unwrap())
    }

    fn decide(p: &LoadedPolicy, action: &str, who: &str, body: serde_json::Value, metros: &[&str]) -> Decision {
        let mut facts = Facts::of_json(action, &body);
        facts.metros.extend(metros.iter().map(|m| m.to_string()));
        let asking = Asking {
            action,
            principal: who,
            phase: "dry_run",
            transport: "stdio",
            tool: "t",
            approving: None,
            at: Moment::default(),
        };
        // what the server builds fits the schema, so skipping the check there changes nothing
        let checked = p.evaluate(&asking, &facts, Some(schema())).expect("the request fits the schema");
        assert_eq!(checked, *p.decide(&asking, &facts));
        checked
    }

    #[test]
    fn the_platform_teams_set_decides_as_written() {
        let p = policy(TEAM);
        let conn = |bw: i64| json!({"type": "EVPL_VC", "name": "c", "bandwidth": bw});
        let ok = decide(&p, "connection_create", "alice", conn(1000), &["DC"]);
        assert_eq!((ok.allowed, ok.policies.clone()), (true, vec!["our-metros-only".to_string()]));
        let big = decide(&p, "connection_create", "alice", conn(1001), &["DC"]);
        assert_eq!((big.allowed, big.policies), (false, vec!["at-most-1-gbps".to_string()]));
        let far = decide(&p, "connection_create", "alice", conn(50), &["DC", "LD"]);
        assert!(!far.allowed && far.explain().contains("no policy"), "{far:?}");
        let token = decide(&p, "service_token_create", "alice", json!({"type": "VC_TOKEN"}), &["DC"]);
        assert_eq!(token.policies, vec!["no-service-tokens".to_string()]);
        assert!(!token.allowed && token.explain().contains("forbidden by \"no-service-tokens\""));
        let net = json!({"type": "EVPLAN", "name": "n", "scope": "REGIONAL"});
        assert!(!decide(&p, "network_create", "alice", net.clone(), &[]).allowed);
        assert!(decide(&p, "network_create", "netops", net, &[]).allowed);
    }

    /// Every request of a grid that varies what policies read and what they do not, decided
    /// with the memo filling up, agrees with a fresh evaluation; and the memo answers a request
    /// that differs only in what the set does not read.
    #[test]
    fn a_remembered_decision_is_the_decision_cedar_makes() {
        let sets = [
            TEAM,
            r#"@id("named") permit (principal, action, resource) when { resource.name like "prod-*" };"#,
            r#"@id("phase") permit (principal, action, resource) when { context.phase == "dry_run" || resource has project_id };"#,
            r#"@id("self") permit (principal, action, resource) when { resource == EquinixMcp::Request::"h-1" };"#,
        ];
        for text in sets {
            let p = policy(text);
            let mut asked = 0;
            for who in ["alice", "netops"] {
                for action in ["connection_create", "network_create", "service_token_create"] {
                    for phase in ["dry_run", "approval"] {
                        for (i, (bw, metros, name, project)) in [
                            (Some(500), vec!["DC"], "prod-a", None),
                            (Some(500), vec!["DC"], "test-b", Some("p-1")),
                            (Some(5000), vec!["DC"], "prod-c", None),
                            (None, vec!["DC", "LD"], "prod-d", None),
                            (Some(500), vec!["SV"], "prod-a", Some("p-2")),
                        ]
                        .into_iter()
                        .enumerate()
                        {
                            let mut facts =
                                Facts { name: name.into(), request_sha256: format!("h-{i}"), ..Facts::default() };
                            facts.bandwidth_mbps = bw;
                            facts.project_id = project.map(str::to_string);
                            facts.metros.extend(metros.iter().map(|m| m.to_string()));
                            let asking = Asking {
                                action,
                                principal: who,
                                phase,
                                transport: "http",
                                tool: "t",
                                approving: None,
                                at: Moment::default(),
                            };
                            let fresh = p.evaluate(&asking, &facts, Some(schema())).unwrap();
                            let remembered = p.recall(&asking, &facts);
                            let decided = p.decide(&asking, &facts);
                            assert_eq!(*decided, fresh, "{text}: {asking:?} {facts:?}", asking = (who, action, phase));
                            if let Some(r) = remembered {
                                assert_eq!(*r, fresh, "{text}: a remembered decision differs");
                            }
                            asked += 1;
                        }
                    }
                }
            }
            assert_eq!(asked, 60);
        }
        // the team's set reads the metros and the bandwidth, not the name or the hash
        let p = policy(TEAM);
        assert!(p.memo.reads.is_some(), "the walk accounts for the team's set");
        let asking = Asking {
            action: "connection_create",
            principal: "alice",
            phase: "dry_run",
            transport: "http",
            tool: "t",
            approving: None,
            at: Moment::default(),
        };
        let facts = |name: &str, bw: i64, metro: &str| {
            let mut f =
                Facts { name: name.into(), request_sha256: name.into(), bandwidth_mbps: Some(bw), ..Facts::default() };
            f.metros.insert(metro.into());
            f
        };
        p.decide(&asking, &facts("a", 1000, "DC"));
        assert!(p.recall(&asking, &facts("b", 1000, "DC")).is_some_and(|d| d.allowed));
        assert_eq!(p.recall(&asking, &facts("b", 1001, "DC")), None, "the bandwidth is read");
        assert_eq!(p.recall(&asking, &facts("b", 1000, "SV")), None, "the metros are read");
        let bob = Asking { principal: "bob", ..asking };
        assert_eq!(p.recall(&bob, &facts("b", 1000, "DC")), None, "the principal is part of every decision");
        // a set that reads the resource itself is evaluated every time
        let p = policy(r#"permit (principal, action, resource) when { resource == EquinixMcp::Request::"a" };"#);
        assert!(p.memo.reads.is_none(), "a set reading the resource itself is never remembered");
        assert!(p.decide(&asking, &facts("a", 1, "DC")).allowed);
        assert_eq!(p.recall(&asking, &facts("a", 1, "DC")), None);
        assert!(!p.decide(&asking, &facts("b", 1, "DC")).allowed);
    }

    /// docs/policy.md's freeze set, as written: what it reads of the time, and when it allows a
    /// create again.
    #[test]
    fn a_freeze_window_reads_the_time_and_says_when_it_ends() {
        let docs = include_str!("../../../docs/policy.md");
        let section = &docs[docs.find("**Time.**").expect("a time section")..];
        let start = section.find("```cedar\n").unwrap() + "```cedar\n".len();
        let freeze = &section[start..start + section[start..].find("```").unwrap()];
        let p = policy(&format!("@id(\"all\") permit (principal, action, resource);\n{freeze}"));
        let utc = |text: &str| {
            let t = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap();
            (t.unix_timestamp_nanos() / 1_000_000) as u64
        };
        let facts = Facts { request_sha256: "h".into(), ..Facts::default() };
        let asking = |ms: u64| Asking { at: Moment::at(ms), ..approval_of("p") };
        let cases = [
            ("2026-12-11T17:59:00Z", true),
            ("2026-12-11T18:00:00Z", false),
            ("2026-12-13T23:00:00Z", false),
            ("2026-12-14T05:59:00Z", false),
            ("2026-12-14T06:00:00Z", true),
            ("2026-12-21T12:00:00Z", false),
            ("2027-01-04T23:59:00Z", false),
            ("2027-01-05T00:00:00Z", true),
        ];
        for (at, allowed) in cases {
            let checked = p.evaluate(&asking(utc(at)), &facts, Some(schema())).expect("fits the schema");
            assert_eq!(checked.allowed, allowed, "{at}: {checked:?}");
            assert_eq!(*p.decide(&asking(utc(at)), &facts), checked, "{at}: the memo tells the minutes apart");
        }
        assert_eq!(Moment::at(utc("2026-12-13T23:00:00Z")).weekday, 7, "Sunday is 7");
        let again = |from: &str| p.next_allowed(&asking(utc(from)), &facts, utc(from)).map(crate::audit::rfc3339);
        assert_eq!(again("2026-12-11T18:01:00Z").as_deref(), Some("2026-12-14T06:00:00Z"));
        assert_eq!(again("2026-12-19T09:00:00Z").as_deref(), Some("2027-01-05T00:00:00Z"));
        let never = policy(
            r#"@id("none") forbid (principal, action, resource); @id("all") permit (principal, action, resource);"#,
        );
        assert_eq!(never.next_allowed(&asking(0), &facts, 0), None, "not within a month");
    }

    /// The price the host read is a fact a rule can name a sum with; an unknown price is absent
    /// and `price_known` is false, so neither a permit under a sum nor a forbid over one waves it
    /// through.
    #[test]
    fn a_rule_names_a_monthly_sum_and_an_unknown_price_is_never_zero() {
        let p = policy(
            r#"@id("all") permit (principal, action, resource);
               @id("at-most-usd-2000-a-month") forbid (principal, action, resource)
               unless { resource.price_known && resource has price_currency && resource.price_currency == "USD"
                        && resource has monthly_price_cents && resource.monthly_price_cents <= 200000 };"#,
        );
        let asking = approval_of("p");
        let priced = |monthly: Option<i64>, currency: &str| Facts {
            request_sha256: "h".into(),
            price: Some(crate::plan::Priced {
                currency: currency.into(),
                monthly_cents: monthly,
                one_time_cents: Some(0),
                term_months: Some(1),
            }),
            ..Facts::default()
        };
        let cases = [
            (priced(Some(30_000), "USD"), true),
            (priced(Some(200_000), "USD"), true),
            (priced(Some(200_001), "USD"), false),
            (priced(Some(30_000), "EUR"), false),
            (priced(None, "USD"), false),
            (Facts { request_sha256: "h".into(), ..Facts::default() }, false),
        ];
        for (facts, allowed) in cases {
            let checked = p.evaluate(&asking, &facts, Some(schema())).expect("the request fits the schema");
            assert_eq!(checked.allowed, allowed, "{:?}: {checked:?}", facts.price);
            assert_eq!(*p.decide(&asking, &facts), checked, "the memo tells the prices apart");
        }
        assert!(
            priced(Some(250_050), "USD").summary("connection_create").contains("a list price of USD 2500.50 a month")
        );
        assert!(Facts::default().summary("connection_create").contains("no known price"));
    }

    /// How a person approved reaches the approval phase, fits the schema, and is part of what
    /// the memo tells apart (a sign-in never gets the passkey's answer).
    #[test]
    fn the_approval_phase_tells_a_passkey_from_a_sign_in() {
        let p = policy(
            r#"@id("all") permit (principal, action, resource);
               @id("passkey") forbid (principal, action, resource) when {
                 context.phase == "approval" && context has approver &&
                 !(context has approved_with && context.approved_with == "passkey" &&
                   context has user_verified && context.user_verified) };
               @id("four-eyes") forbid (principal, action, resource) when {
                 context.phase == "approval" && context has approver && context.approver == context.proposer };"#,
        );
        let facts = Facts { request_sha256: "h".into(), bandwidth_mbps: Some(10_000), ..Facts::default() };
        let approving = |with: &'static str, uv: bool| Approving {
            method: "page",
            approver: Some("i#alice".into()),
            approver_groups: Some(vec!["netops".into()]),
            approved_with: Some(with),
            user_verified: Some(uv),
        };
        let cases = [
            ("i#bob", "passkey", true, true),
            ("i#bob", "sign_in", false, false),
            ("i#bob", "passkey", false, false),
            // the proposer's own passkey does not make them a second person
            ("i#alice", "passkey", true, false),
        ];
        for (proposer, with, uv, allowed) in cases {
            let approving = approving(with, uv);
            let asking = Asking {
                action: "connection_create",
                principal: proposer,
                phase: "approval",
                transport: "http",
                tool: "t",
                approving: Some(&approving),
                at: Moment::default(),
            };
            let checked = p.evaluate(&asking, &facts, Some(schema())).expect("the request fits the schema");
            assert_eq!(checked.allowed, allowed, "{proposer} {with} uv={uv}");
            assert_eq!(*p.decide(&asking, &facts), checked, "{proposer} {with} uv={uv}: the memo agrees");
        }
    }

    #[test]
    fn a_forbid_that_errs_denies() {
        let p = policy(
            r#"@id("all") permit (principal, action, resource);
               @id("overflowing") forbid (principal, action, resource)
               when { resource has bandwidth_mbps && resource.bandwidth_mbps * 9007199254740991 > 0 };"#,
        );
        let d = decide(&p, "connection_create", "alice", json!({"type": "EVPL_VC", "bandwidth": 5000}), &["DC"]);
        assert!(!d.allowed && !d.errors.is_empty() && d.explain().contains("not evaluated"), "{d:?}");
    }

    #[test]
    fn a_set_that_does_not_fit_the_schema_is_refused_by_name() {
        let err = parse(r#"@id("typo") permit (principal, action, resource) when { resource.bandwith_mbps < 10 };"#)
            .err()
            .unwrap();
        assert!(matches!(err, PolicyError::Invalid(_)), "{err:?}");
        let said = err.to_string();
        assert!(said.contains("policy `typo`") && said.contains("bandwith_mbps"), "{said}");
        let garbled = parse("permit (principal, action, resource) when {").unwrap_err();
        assert!(matches!(garbled, PolicyError::NotCedar(_)) && garbled.to_string().contains("not a Cedar policy set"));
        let dup = r#"@id("a") permit (principal, action, resource); @id("a") forbid (principal, action, resource);"#;
        let twice = parse(dup).unwrap_err();
        assert!(matches!(&twice, PolicyError::Rejected { id, .. } if id == "a"), "{twice:?}");
        assert!(twice.to_string().contains("\"a\""));
        assert!(parse("").unwrap().set.policies().next().is_none(), "an empty set validates (and denies everything)");
    }

    const QUORUM: &str = r#"
        @id("anyone") permit (principal, action, resource);
        @id("netops-or-finance-approve")
        forbid (principal, action, resource)
        when { context has approver_groups && !context.approver_groups.containsAny(["netops", "finance"]) };
        @id("large-needs-two")
        @approvals("2 of netops or 1 of netops and 1 of finance")
        permit (principal, action, resource)
        when { context.phase == "approval" && resource has bandwidth_mbps && resource.bandwidth_mbps > 1000 };
    "#;

    #[test]
    fn an_approvals_policy_says_what_a_request_needs_and_decides_nothing_itself() {
        let p = policy(QUORUM);
        assert_eq!((p.policies, p.quorum_rules()), (3, 1));
        let conn = |bw: i64| Facts::of_json("connection_create", &json!({"type": "EVPL_VC", "bandwidth": bw}));
        let asking = approval_of("alice");
        let large = p.requirement(&asking, &conn(2000));
        assert_eq!(large.needs(), [r#""large-needs-two": 2 of netops or 1 of netops and 1 of finance"#]);
        assert!(p.requirement(&asking, &conn(1000)).is_empty(), "a small change needs one approval, as before");
        // judged as in the approval phase on the page, whichever phase the caller is in
        assert!(!p.requirement(&Asking { phase: "dry_run", ..asking }, &conn(2000)).is_empty());
        // taken out of the deciding set: with only it, nothing would be allowed
        let only = policy(
            r#"@id("q") @approvals("2") permit (principal, action, resource) when { context.phase == "approval" };"#,
        );
        assert!(!only.decide(&asking, &conn(10)).allowed, "an @approvals permit permits nothing");
        let groups = |g: &[&str]| g.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (netops, finance) = (groups(&["netops"]), groups(&["finance"]));
        let alice = Voter { person: "alice", groups: &netops };
        let carol = Voter { person: "carol", groups: &finance };
        assert_eq!(large.progress(&[alice]).said(), "1 of 2 approvals; waiting for 1 more of netops");
        assert!(large.met_by(&[alice, carol]));
    }

    #[test]
    fn a_break_glass_forbid_holds_only_in_its_window_and_asks_its_quorum_there() {
        let p = policy(&format!(
            "{QUORUM}\n{}",
            r#"@id("weekend") @break_glass("2 of security")
               forbid (principal, action, resource)
               when { context.time.weekday == 6 || context.time.weekday == 7 };
               @id("security-approves") permit (principal, action, resource)
               when { context has approver_groups && context.approver_groups.contains("security") };"#
        ));
        let facts = Facts::of_json("connection_create", &json!({"type": "EVPL_VC", "bandwidth": 10}));
        let at = |text: &str| {
            let t = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap();
            Asking { at: Moment::at((t.unix_timestamp() * 1000) as u64), ..approval_of("alice") }
        };
        let friday = p.requirement(&at("2026-12-11T17:55:00Z"), &facts);
        assert!(friday.is_empty(), "{friday:?}");
        let saturday = p.requirement(&at("2026-12-12T10:00:00Z"), &facts);
        assert_eq!(saturday.needs(), [r#""weekend" (break-glass): 2 of security"#]);
        assert!(saturday.is_break_glass());
        // it decides nothing itself: the deciding set allows the request inside the window
        assert!(p.decide(&at("2026-12-12T10:00:00Z"), &facts).allowed);
        // and an ordinary approval may create it again from Monday
        let saturday_ms = at("2026-12-12T10:00:00Z").at;
        let from = time::OffsetDateTime::parse("2026-12-12T10:00:00Z", &time::format_description::well_known::Rfc3339)
            .unwrap()
            .unix_timestamp() as u64
            * 1000;
        assert_eq!(Moment::at(from), saturday_ms);
        let next = p.next_allowed(&at("2026-12-12T10:00:00Z"), &facts, from);
        assert_eq!(next.map(crate::audit::rfc3339).as_deref(), Some("2026-12-14T00:00:00Z"));
    }

    #[test]
    fn a_quorum_that_cannot_be_read_or_met_is_refused_by_name() {
        let refused = |text: &str, says: &str| {
            let e = parse(text).unwrap_err();
            assert!(matches!(&e, PolicyError::Quorum { id, .. } if id == "q"), "{text}: {e:?}");
            assert!(e.to_string().contains(says), "{text}: {e}");
        };
        refused(r#"@id("q") @approvals("three of x") forbid (principal, action, resource);"#, "belongs on a `permit`");
        refused(r#"@id("q") @approvals("2 from netops") permit (principal, action, resource);"#, "no term of a quorum");
        refused(
            r#"@id("q") @approvals("2") permit (principal, action, resource)
               when { context has approver && context.approver != context.proposer };"#,
            "must not read context.approver",
        );
        // a typo in the group: the set judges approvers by group and never names it
        let typo = QUORUM.replace("1 of finance", "1 of fnance");
        let e = parse(&typo).unwrap_err();
        assert!(
            matches!(&e, PolicyError::Unmeetable { id, group, .. } if id == "large-needs-two" && group == "fnance"),
            "{e:?}"
        );
        assert!(e.to_string().contains("no group could meet"), "{e}");
        // a break-glass rule says it is one
        refused(
            r#"@id("q") @break_glass("2 of security") permit (principal, action, resource);"#,
            "@break_glass belongs on a `forbid`",
        );
        // a set that does not judge approvers by group: any group may be someone's
        assert!(parse(r#"@id("q") @approvals("2 of anyone-at-all") permit (principal, action, resource);"#).is_ok());
    }
}
