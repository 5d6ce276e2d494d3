//! The checks a question passes before anyone sees it, in their order, as one function over plain
//! data ([`admit`]), and what the operator's policy then does with it ([`policed`]). The
//! `confirmation` capability gathers the data and runs the policy's reads; the order is here, so
//! a test can say which check refuses a question that fails several.

use super::binding::{Binding, Redeemed};
use super::form::{self, Form, FormError};
use super::rules::{Asker, NotAsked, Question, bound, may_ask};
use super::subject::Subject;
use crate::bindings::confirmation::{Context, Delivery as Answering};
use crate::exact_json::{self, Node, Unreadable};
use crate::fabric_client::{CheckedCreate, NotACreate};

/// A question as the component put it, with what the host knows of the call. `C` judges the
/// create by the allow-list and the size limit (`Err`: why it is no create), once the asker may
/// ask.
pub(crate) struct Asked<'a, C: FnOnce() -> Result<CheckedCreate, NotACreate>> {
    pub(crate) asker: Asker<'a>,
    pub create: C,
    /// The body's exact bytes.
    pub body: &'a str,
    pub token: &'a str,
    pub principal: &'a str,
    pub round: Answering,
    pub now_ms: u64,
    /// The proposals this call found in the store.
    pub(crate) redeemed: &'a [Redeemed],
    pub context: &'a Context,
    /// The server records approvals in an audit log.
    pub audited: bool,
}

/// A question every check let through, for the policy to judge.
pub(crate) struct Admitted<'a> {
    pub create: CheckedCreate,
    /// The body, read once: for the form, and for the policy's facts.
    pub body: Node<'a>,
    pub binding: Binding,
    pub form: Form,
}

/// Why a question was refused before anyone saw it: one variant per check, in [`admit`]'s order.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotAdmitted {
    /// 1. who asks.
    #[error(transparent)]
    Asker(NotAsked),
    /// 2. the create: the allow-list's or the size limit's reason.
    #[error(transparent)]
    Create(NotACreate),
    /// 3. which proposal.
    #[error(transparent)]
    Proposal(NotAsked),
    /// 4. the form: the body's bytes cannot be read exactly...
    #[error(transparent)]
    Body(#[from] Unreadable),
    /// ...or cannot be shown whole.
    #[error(transparent)]
    Form(#[from] FormError),
    /// 5. the audit log.
    #[error("this server has no audit log, so no create can be approved")]
    NoAuditLog,
}

impl From<NotAdmitted> for String {
    fn from(e: NotAdmitted) -> String {
        e.to_string()
    }
}

/// The first refusal of `asked`, checked in this order (a later check is not reached):
///
/// 1. who asks ([`may_ask`]): once per call, with the confirm grant, from a `mutate` tool;
/// 2. the create: a create route of the allow-list, within the size limit;
/// 3. which proposal ([`bound`]): one this call took, bound to a dry run of these bytes by this
///    principal, within the TTL;
/// 4. the form: the body and the component's context as the host can show them exactly;
/// 5. the audit log: no approval is made where none can be recorded.
///
/// The operator's policy comes after, on an admitted question only: its reads and its recorded
/// decisions are never spent on a question refused before.
pub(crate) fn admit<'a, C>(asked: Asked<'a, C>) -> Result<Admitted<'a>, NotAdmitted>
where
    C: FnOnce() -> Result<CheckedCreate, NotACreate>,
{
    may_ask(&asked.asker).map_err(NotAdmitted::Asker)?;
    let create = (asked.create)().map_err(NotAdmitted::Create)?;
    let change_type = create.route().change_type();
    let request_sha256 = equinix_broker_contract::request_sha256(change_type.as_str(), asked.body);
    let question = Question {
        token: asked.token,
        request_sha256: &request_sha256,
        principal: asked.principal,
        round: asked.round,
        now_ms: asked.now_ms,
    };
    let binding = bound(asked.redeemed.iter().find(|r| r.token == asked.token), &question)
        .map_err(NotAdmitted::Proposal)?
        .clone();
    let body = exact_json::parse(asked.body)?;
    let plan_sha256 = binding.plan.as_ref().map(crate::plan::Plan::sha256).unwrap_or_default();
    let subject = Subject { token: asked.token.into(), validation: binding.id.clone(), request_sha256, plan_sha256 };
    let shown = form::Request {
        tool: asked.asker.tool,
        change_type,
        // the allow-list took only this exact path
        path: create.route().path(),
        body: &body,
        subject,
        validated_at_ms: binding.validated_at_ms,
        plan: binding.plan.as_ref(),
    };
    let form = form::render(shown, asked.context)?;
    if !asked.audited {
        return Err(NotAdmitted::NoAuditLog);
    }
    Ok(Admitted { create, body, binding, form })
}

/// The road a policed question takes.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Policed<P, R> {
    /// The call's own road, with the policy's permit.
    Own(P),
    /// The road `R` to the approval page the call carried, with the permit the policy gave there.
    Page(P, R),
}

/// What the operator's policy allows: the call's own road if it permits it (`own`); otherwise
/// the page, if the call carries a road there and the policy permits that. `page` judges it and
/// is called only once `own` was refused: it gives the road with the policy's word there, or
/// `None` when the call carries no such road. A refusal gives the reason for the call's own
/// road, which is the one the person and the agent expected.
pub(crate) async fn policed<P, R>(
    own: Result<P, String>,
    page: impl AsyncFnOnce() -> Option<(R, Result<P, String>)>,
) -> Result<Policed<P, R>, String> {
    let why = match own {
        Ok(permit) => return Ok(Policed::Own(permit)),
        Err(why) => why,
    };
    match page().await {
        Some((road, Ok(permit))) => Ok(Policed::Page(permit, road)),
        Some((_, Err(_))) | None => Err(format!("the operator's policy does not allow this create: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric_client::{FabricClient, FabricConfig};

    const T0: u64 = 1_000_000;
    const PATH: &str = "/fabric/v4/connections";
    const BODY: &str = r#"{"name":"to-aws","bandwidth":50}"#;

    fn create(path: &str) -> Result<CheckedCreate, NotACreate> {
        let config = FabricConfig { mutate_enabled: true, ..FabricConfig::new("http://127.0.0.1:9", None) };
        FabricClient::new(config).check_create(path, BODY)
    }

    fn taken() -> Vec<Redeemed> {
        let binding = Binding {
            id: "v-1".into(),
            request_sha256: equinix_broker_contract::request_sha256("connection_create", BODY),
            principal: "alice".into(),
            validated_at_ms: T0,
            learned_metros: vec![],
            plan: None,
        };
        vec![Redeemed { token: "chg-a".into(), binding: Some(binding), taken: true }]
    }

    fn context(fields: usize) -> Context {
        let fields = (0..fields).map(|i| (format!("f{i}"), "v".to_string())).collect();
        Context { title: "Create?".into(), message: "m".into(), fields }
    }

    /// A question that passes every check, or fails those `failing` names.
    fn ask(failing: &[&str], check: impl FnOnce(Result<Admitted<'_>, NotAdmitted>)) {
        let asker = Asker {
            asked_before: failing.contains(&"asker"),
            may_confirm: true,
            tool: "fabric_confirm_change",
            tool_may_ask: true,
        };
        let redeemed = if failing.contains(&"proposal") { vec![] } else { taken() };
        let context = context(if failing.contains(&"form") { 41 } else { 1 });
        let path = if failing.contains(&"create") { "/fabric/v4/ports" } else { PATH };
        let asked = Asked {
            asker,
            create: || create(path),
            body: BODY,
            token: "chg-a",
            principal: "alice",
            round: Answering::Blocking,
            now_ms: T0 + 1,
            redeemed: &redeemed,
            context: &context,
            audited: !failing.contains(&"audit"),
        };
        check(admit(asked));
    }

    fn refusal(failing: &[&str]) -> NotAdmitted {
        let mut said = None;
        ask(failing, |r| said = r.err());
        said.unwrap_or_else(|| panic!("{failing:?} was admitted"))
    }

    #[test]
    fn a_question_that_passes_every_check_is_admitted_with_its_form() {
        ask(&[], |admitted| {
            let a = admitted.unwrap();
            assert_eq!(a.create.route().change_type().as_str(), "connection_create");
            assert_eq!(a.binding.id, "v-1");
            assert_eq!((a.form.subject.token.as_str(), a.form.subject.validation.as_str()), ("chg-a", "v-1"));
            assert!(a.form.text.contains("body.name: \"to-aws\""), "{}", a.form.text);
        });
    }

    #[test]
    fn each_check_refuses_alone_and_names_itself() {
        for (failing, named) in [
            ("asker", "only one create"),
            ("create", "is not a create route"),
            ("proposal", "did not take proposal"),
            ("form", "fields; at most 40"),
            ("audit", "no audit log"),
        ] {
            let refused = refusal(&[failing]);
            let which = match &refused {
                NotAdmitted::Asker(NotAsked::AskedBefore) => "asker",
                NotAdmitted::Create(_) => "create",
                NotAdmitted::Proposal(NotAsked::NotTaken { token }) if token == "chg-a" => "proposal",
                NotAdmitted::Form(FormError::ContextFields(41)) => "form",
                NotAdmitted::NoAuditLog => "audit",
                other => panic!("{failing}: {other:?}"),
            };
            assert_eq!(which, failing);
            let said = refused.to_string();
            assert!(said.contains(named), "{failing}: {said}");
        }
    }

    #[test]
    fn the_first_check_in_order_gives_the_refusal() {
        let order = ["asker", "create", "proposal", "form", "audit"];
        for first in 0..order.len() {
            let named = refusal(&[order[first]]).to_string();
            // every later check failing too changes nothing: it is not reached
            assert_eq!(refusal(&order[first..]).to_string(), named, "{:?}", &order[first..]);
        }
    }

    #[tokio::test]
    async fn the_policy_takes_the_page_only_when_it_refuses_the_calls_own_road() {
        type Verdict = Result<&'static str, String>;
        let refused = || Err::<&str, _>("above 1 Gbps".to_string());
        let never = async || -> Option<(&str, Verdict)> { panic!("the page is judged only after a refusal") };
        assert_eq!(policed(Ok("own"), never).await, Ok(Policed::Own("own")), "its own road first");
        let page = async || Some(("road", Ok("page")));
        assert_eq!(policed(refused(), page).await, Ok(Policed::Page("page", "road")));
        let expected = Err("the operator's policy does not allow this create: above 1 Gbps".to_string());
        let no_road = async || -> Option<(&str, Verdict)> { None };
        assert_eq!(policed(refused(), no_road).await, expected, "no page to send the person to");
        let refused_there = async || Some(("road", Err("not on the page either".to_string())));
        assert_eq!(policed(refused(), refused_there).await, expected, "the own road's reason");
    }
}
