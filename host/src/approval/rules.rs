//! When the host may put a create before a person ([`may_ask`], [`bound`]) and when their answer
//! may become an approval ([`may_mint`]): plain functions over plain data, the time passed in, so
//! each rule is tested here without a component, a store or a client.

use super::binding::{Binding, Redeemed, TTL_MS};
use crate::bindings::confirmation::{Delivery as Answering, Status};

/// Why nobody is asked: which rule refused the question, worded as the agent reads it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotAsked {
    #[error("a tool call may put only one create before the person, and this call already did")]
    AskedBefore,
    #[error("the principal's access token does not grant confirming changes, so nobody is asked")]
    NoConfirmGrant,
    #[error("tool {tool:?} is not in the `mutate` toolset, so it may not ask the person to approve a create")]
    NotAMutateTool { tool: String },
    #[error(
        "this call did not take proposal {token:?} from the proposal store; only a proposal taken in the same call \
         can be put before the person"
    )]
    NotTaken { token: String },
    #[error(
        "this call only peeked at proposal {token:?}; a proposal is put before the person only once it is taken, so \
         that it is approved at most once"
    )]
    OnlyPeeked { token: String },
    #[error("proposal {token:?} is not bound to a dry run this host validated")]
    Unbound { token: String },
    #[error(
        "the request to approve (request_sha256 {asked}) is not the one Fabric validated for proposal {token:?} \
         ({validated}); only the validated bytes can be approved"
    )]
    OtherRequest { token: String, asked: String, validated: String },
    #[error("proposal {token:?} was validated for another principal")]
    OtherPrincipal { token: String },
    #[error(
        "Fabric validated this request {} s ago; a person may approve it only within {} minutes of its dry run",
        .age_ms / 1000,
        TTL_MS / 60_000
    )]
    Stale { age_ms: u64 },
}

/// The words, for the callers that pass refusals on as text.
impl From<NotAsked> for String {
    fn from(e: NotAsked) -> String {
        e.to_string()
    }
}

/// Who asks: the call, its grant and its tool.
#[derive(Clone, Copy, Debug)]
pub struct Asker<'a> {
    /// The component already asked once in this call.
    pub(crate) asked_before: bool,
    /// The principal's token grants confirming changes.
    pub(crate) may_confirm: bool,
    pub tool: &'a str,
    /// The tool is in the `mutate` toolset.
    pub(crate) tool_may_ask: bool,
}

/// Whether this call may ask the person at all: once per call, with the confirm grant, from a
/// tool of the `mutate` toolset. `Err` says why nobody is asked.
pub fn may_ask(asker: &Asker) -> Result<(), NotAsked> {
    if asker.asked_before {
        return Err(NotAsked::AskedBefore);
    }
    if !asker.may_confirm {
        return Err(NotAsked::NoConfirmGrant);
    }
    if !asker.tool_may_ask {
        return Err(NotAsked::NotAMutateTool { tool: asker.tool.to_string() });
    }
    Ok(())
}

/// The question about one proposal's request.
#[derive(Clone, Copy, Debug)]
pub struct Question<'a> {
    pub token: &'a str,
    /// The hash of the request the component asks about (computed by the host from its bytes).
    pub request_sha256: &'a str,
    /// The principal whose call asks.
    pub principal: &'a str,
    /// How the answer comes: a first round never approves, an answered retry brings an answer
    /// already given (judged when it is minted).
    pub round: Answering,
    pub now_ms: u64,
}

/// The binding of the proposal a question is about, if the call may ask about it: the call found
/// the token (`found`: took it, unless this is a first round, which never approves), it is bound
/// to a dry run of exactly these bytes by this principal, and Fabric validated it within the TTL.
pub fn bound<'r>(found: Option<&'r Redeemed>, q: &Question) -> Result<&'r Binding, NotAsked> {
    let token = || q.token.to_string();
    let Some(found) = found.filter(|r| r.token == q.token) else {
        return Err(NotAsked::NotTaken { token: token() });
    };
    let round = equinix_broker_contract::Delivery::from(q.round);
    if !found.taken && round.takes_the_proposal() {
        return Err(NotAsked::OnlyPeeked { token: token() });
    }
    let Some(binding) = &found.binding else {
        return Err(NotAsked::Unbound { token: token() });
    };
    if binding.request_sha256 != q.request_sha256 {
        let (asked, validated) = (q.request_sha256.to_string(), binding.request_sha256.clone());
        return Err(NotAsked::OtherRequest { token: token(), asked, validated });
    }
    if binding.principal != q.principal {
        return Err(NotAsked::OtherPrincipal { token: token() });
    }
    // a stateless retry carries an answer already given: it is judged when it is minted
    if round.judges_the_ttl_before_asking() && !binding.fresh_at(q.now_ms) {
        return Err(NotAsked::Stale { age_ms: q.now_ms.saturating_sub(binding.validated_at_ms) });
    }
    Ok(binding)
}

/// What an answer comes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mint {
    /// An approval, for the person's accept or (`opt_in`) the operator's opt-in.
    Approval { opt_in: bool },
    /// The answer is no approval.
    Nothing,
    /// It would have been, but it came after the proposal's TTL.
    TooLate,
}

/// Whether `status` becomes an approval at `now_ms` for the request bound by `binding`: only an
/// accept, or `unsupported-by-client` under the operator's opt-in (`opt_in`), and only within the
/// TTL of the dry run on the host's clock, however the answer came.
pub fn may_mint(status: Status, opt_in: bool, binding: &Binding, now_ms: u64) -> Mint {
    let approves = status == Status::Accepted || (status == Status::UnsupportedByClient && opt_in);
    if !approves {
        return Mint::Nothing;
    }
    if !binding.fresh_at(now_ms) {
        return Mint::TooLate;
    }
    Mint::Approval { opt_in: status == Status::UnsupportedByClient }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_000_000;

    fn binding() -> Binding {
        Binding {
            id: "v-1".into(),
            request_sha256: "abc".into(),
            principal: "alice".into(),
            validated_at_ms: T0,
            learned_metros: vec![],
            plan: None,
        }
    }

    fn taken() -> Redeemed {
        Redeemed { token: "chg-a".into(), binding: Some(binding()), taken: true }
    }

    fn question(round: Answering, now_ms: u64) -> Question<'static> {
        Question { token: "chg-a", request_sha256: "abc", principal: "alice", round, now_ms }
    }

    fn asker() -> Asker<'static> {
        Asker { asked_before: false, may_confirm: true, tool: "fabric_confirm_change", tool_may_ask: true }
    }

    #[test]
    fn a_call_asks_once_with_the_confirm_grant_from_a_mutate_tool() {
        assert_eq!(may_ask(&asker()), Ok(()));
        let twice = may_ask(&Asker { asked_before: true, ..asker() }).unwrap_err();
        assert_eq!(twice, NotAsked::AskedBefore);
        assert!(twice.to_string().contains("only one create"), "{twice}");
        let read_only = may_ask(&Asker { may_confirm: false, ..asker() }).unwrap_err();
        assert_eq!(read_only, NotAsked::NoConfirmGrant);
        let reader = may_ask(&Asker { tool: "fabric_list_metros", tool_may_ask: false, ..asker() }).unwrap_err();
        assert_eq!(reader, NotAsked::NotAMutateTool { tool: "fabric_list_metros".into() });
        assert!(reader.to_string().contains("\"fabric_list_metros\" is not in the `mutate` toolset"), "{reader}");
    }

    #[test]
    fn only_a_taken_proposal_bound_to_these_bytes_and_this_principal_is_asked_about() {
        let found = taken();
        assert_eq!(bound(Some(&found), &question(Answering::Blocking, T0 + 1)), Ok(&binding()));
        let not_taken = NotAsked::NotTaken { token: "chg-a".into() };
        let none = bound(None, &question(Answering::Blocking, T0)).unwrap_err();
        assert_eq!(none, not_taken);
        assert!(none.to_string().contains("did not take proposal \"chg-a\""), "{none}");
        let other = Redeemed { token: "chg-b".into(), ..taken() };
        assert_eq!(bound(Some(&other), &question(Answering::Blocking, T0)), Err(not_taken));
        let peeked = Redeemed { taken: false, ..taken() };
        let only_peeked = Err(NotAsked::OnlyPeeked { token: "chg-a".into() });
        assert_eq!(bound(Some(&peeked), &question(Answering::Blocking, T0)), only_peeked);
        assert_eq!(bound(Some(&peeked), &question(Answering::Answered, T0)), only_peeked);
        assert!(bound(Some(&peeked), &question(Answering::FirstRound, T0)).is_ok(), "a first round may peek");
        let unbound = Redeemed { binding: None, ..taken() };
        let not_bound = Err(NotAsked::Unbound { token: "chg-a".into() });
        assert_eq!(bound(Some(&unbound), &question(Answering::Blocking, T0)), not_bound);
        let bytes = Question { request_sha256: "abd", ..question(Answering::Blocking, T0) };
        let other_bytes = bound(Some(&found), &bytes).unwrap_err();
        let expected = NotAsked::OtherRequest { token: "chg-a".into(), asked: "abd".into(), validated: "abc".into() };
        assert_eq!(other_bytes, expected);
        assert!(other_bytes.to_string().contains("not the one Fabric validated"), "{other_bytes}");
        let bob = Question { principal: "bob", ..question(Answering::Blocking, T0) };
        assert_eq!(bound(Some(&found), &bob), Err(NotAsked::OtherPrincipal { token: "chg-a".into() }));
    }

    #[test]
    fn a_question_is_asked_only_within_the_ttl_except_an_answer_already_given() {
        let found = taken();
        assert!(bound(Some(&found), &question(Answering::Blocking, T0 + TTL_MS)).is_ok());
        let late = bound(Some(&found), &question(Answering::Blocking, T0 + TTL_MS + 1)).unwrap_err();
        assert_eq!(late, NotAsked::Stale { age_ms: TTL_MS + 1 });
        assert!(late.to_string().contains("600 s ago") && late.to_string().contains("within 10 minutes"), "{late}");
        assert!(bound(Some(&found), &question(Answering::FirstRound, T0 + TTL_MS + 1)).is_err());
        // judged by may_mint instead
        assert!(bound(Some(&found), &question(Answering::Answered, T0 + TTL_MS + 1)).is_ok());
    }

    #[test]
    fn only_an_accept_or_the_opt_in_mints_and_never_after_the_ttl() {
        let b = binding();
        assert_eq!(may_mint(Status::Accepted, false, &b, T0 + TTL_MS), Mint::Approval { opt_in: false });
        assert_eq!(may_mint(Status::Accepted, false, &b, T0 + TTL_MS + 1), Mint::TooLate);
        assert_eq!(may_mint(Status::UnsupportedByClient, true, &b, T0), Mint::Approval { opt_in: true });
        assert_eq!(may_mint(Status::UnsupportedByClient, false, &b, T0), Mint::Nothing);
        assert_eq!(may_mint(Status::UnsupportedByClient, true, &b, T0 + TTL_MS + 1), Mint::TooLate);
        for status in [
            Status::Declined,
            Status::Cancelled,
            Status::TimedOut,
            Status::Failed,
            Status::CallCancelled,
            Status::InputRequired,
        ] {
            assert_eq!(may_mint(status, true, &b, T0), Mint::Nothing, "{status:?}");
        }
        // a validation dated ahead of this host's clock beyond a replica's skew is never fresh
        let ahead = Binding { validated_at_ms: T0 + 61_000, ..binding() };
        assert_eq!(may_mint(Status::Accepted, false, &ahead, T0), Mint::TooLate);
    }
}
