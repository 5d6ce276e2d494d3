//! Who decides a request on the approval page, as plain rules: without an operator policy only the
//! proposer's own sign-in ([`without_policy`]); with one, whoever its approval phase permits
//! (judged by the page, `approval_page::ApprovalPage::permission`), and under a quorum only a
//! decision that counts ([`counts`]): a distinct person, never the proposer, whose approval fills
//! a place still open or whose decline comes from a group the quorum counts.

use crate::policy::{Requirement, Voter};

/// What a person may do with a request's page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Permission {
    /// Why, and the operator's policies that permitted it (none: the rule without a policy).
    Permitted(String, Vec<String>),
    Refused(String),
}

/// Whether `approver` may decide a request of `proposer` when the operator has no policy: only the
/// person whose own sign-in proposed it.
pub(crate) fn without_policy(approver: &str, proposer: &str) -> Permission {
    if !proposer.contains('#') {
        return Permission::Refused(format!(
            "this request was proposed by {proposer:?}, which is no signed-in person; without an operator policy \
             naming who may approve, only a proposer's own sign-in may"
        ));
    }
    if approver == proposer {
        Permission::Permitted("you proposed this request with your own sign-in".into(), Vec::new())
    } else {
        Permission::Refused(format!(
            "only the person who proposed this request may approve it ({proposer}); you are signed in as {approver}"
        ))
    }
}

/// One approval a request has under a quorum: whose, and when.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Given<'a> {
    pub(crate) voter: Voter<'a>,
    pub at_ms: u64,
}

/// Why a decision under a quorum would not count; each says what the request needs (`needs`: the
/// quorum's words) and, where it matters, how far it is (`progress`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DoesNotCount {
    /// `at`: when this person approved, as the page writes times.
    #[error("you approved this request already, at {at}: one person counts once. It needs {needs}: {progress}")]
    Twice { at: String, needs: String, progress: String },
    #[error("it needs {needs}, and its proposer's own decision never counts towards that")]
    Proposer { needs: String },
    #[error("it needs {needs}, and you are in none of the groups it counts, so your decline would not count")]
    NotCounted { needs: String },
    /// `groups`: the approver's, "none" for none.
    #[error("it needs {needs}: {progress}, and your approval (groups {groups}) fills none of the places still open")]
    NoOpenPlace { needs: String, progress: String, groups: String },
}

/// Under `requirement`, whether `me`'s decision (`approve` or decline) on a request of `proposer`
/// that has the approvals `given` would count. `Err` says why not, times written by `at`: the
/// proposer's never does; nobody approves twice (whoever approved may still decline, and so end
/// it); an approval must fill a place still open; a decline must come from a group the quorum
/// counts.
pub(crate) fn counts(
    me: Voter,
    proposer: &str,
    approve: bool,
    requirement: &Requirement,
    given: &[Given],
    at: &dyn Fn(u64) -> String,
) -> Result<(), DoesNotCount> {
    let needs = requirement.needs().join("; ");
    let voters: Vec<Voter> = given.iter().map(|g| g.voter).collect();
    if let Some(mine) = given.iter().find(|g| g.voter.person == me.person).filter(|_| approve) {
        return Err(DoesNotCount::Twice { at: at(mine.at_ms), needs, progress: requirement.progress(&voters).said() });
    }
    if me.person == proposer {
        return Err(DoesNotCount::Proposer { needs });
    }
    if !approve {
        return match requirement.concerns(me) {
            true => Ok(()),
            false => Err(DoesNotCount::NotCounted { needs }),
        };
    }
    match requirement.counts(&voters, me) {
        true => Ok(()),
        false => Err(DoesNotCount::NoOpenPlace {
            needs,
            progress: requirement.progress(&voters).said(),
            groups: if me.groups.is_empty() { "none".to_string() } else { me.groups.join(", ") },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Quorum;

    fn requirement(text: &str) -> Requirement {
        Requirement { rules: vec![("q".into(), Quorum::parse(text).unwrap())], break_glass: vec![] }
    }

    #[test]
    fn only_the_proposers_own_sign_in_decides_without_a_policy() {
        assert!(matches!(without_policy("i#ann", "i#ann"), Permission::Permitted(..)));
        assert!(matches!(without_policy("i#bob", "i#ann"), Permission::Refused(w) if w.contains("only the person")));
        assert!(
            matches!(without_policy("local", "local"), Permission::Refused(w) if w.contains("no signed-in person"))
        );
    }

    #[test]
    fn under_a_quorum_a_decision_counts_only_from_a_distinct_person_who_fills_an_open_place() {
        let (netops, finance, none) = (vec!["netops".to_string()], vec!["finance".to_string()], vec![]);
        let v = |person, groups| Voter { person, groups };
        let (alice, bob, carol, pat) =
            (v("i#alice", &netops), v("i#bob", &netops), v("i#carol", &finance), v("i#pat", &none));
        let q = requirement("1 of netops and 1 of finance");
        let at = |ms: u64| format!("{ms}ms");
        let given = [Given { voter: alice, at_ms: 5 }];
        assert_eq!(counts(carol, "i#pat", true, &q, &given, &at), Ok(()));
        let twice = counts(alice, "i#pat", true, &q, &given, &at).unwrap_err();
        assert!(matches!(&twice, DoesNotCount::Twice { at, .. } if at == "5ms"), "{twice:?}");
        assert!(twice.to_string().contains("already, at 5ms"), "{twice}");
        assert_eq!(counts(alice, "i#pat", false, &q, &given, &at), Ok(()), "whoever approved may still decline");
        let second = counts(bob, "i#pat", true, &q, &given, &at).unwrap_err();
        assert!(matches!(&second, DoesNotCount::NoOpenPlace { groups, .. } if groups == "netops"), "{second:?}");
        let second = second.to_string();
        assert!(second.contains("fills none of the places still open") && second.contains("groups netops"), "{second}");
        assert_eq!(counts(bob, "i#pat", false, &q, &given, &at), Ok(()), "a group the quorum counts may decline");
        let own = counts(pat, "i#pat", true, &requirement("2"), &[], &at).unwrap_err();
        assert!(matches!(own, DoesNotCount::Proposer { .. }) && own.to_string().contains("proposer's own"), "{own}");
        let outsider = counts(v("i#x", &none), "i#pat", false, &q, &given, &at).unwrap_err();
        assert!(matches!(outsider, DoesNotCount::NotCounted { .. }), "{outsider:?}");
        assert!(outsider.to_string().contains("none of the groups"), "{outsider}");
    }
}
