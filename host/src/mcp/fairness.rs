//! Per-principal limits, so that on a shared server no principal can starve the others: tool
//! calls in flight, and confirmation forms held open (each holds a component instance for as
//! long as its person takes). Forms are also capped server-wide at half the instance pool, so
//! ordinary calls always find instances. Over a limit, a call is refused at once with a message
//! that names the limit; nothing waits, nothing is consumed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::principal::Principal;

/// The per-principal limits' flags.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct FairnessArgs {
    /// Tool calls one principal may have in flight at once; more are refused (`too_many_calls`).
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_CALLS_PER_PRINCIPAL",
        default_value_t = 64,
        value_name = "N",
        value_parser = crate::value_parsers::at_least_one(),
    )]
    pub(crate) max_calls_per_principal: usize,

    /// Confirmation forms one principal may have open at once (the same 20 as its pending
    /// proposals); a confirm beyond it is refused before anyone is asked.
    #[arg(
        long,
        env = "EQUINIX_MCP_MAX_CONFIRMATIONS_PER_PRINCIPAL",
        default_value_t = 20,
        value_name = "N",
        value_parser = crate::value_parsers::at_least_one(),
    )]
    pub(crate) max_confirmations_per_principal: usize,
}

impl FairnessArgs {
    /// The limits, with the forms held open in all capped at half the component's instance pool
    /// of `instances` (ordinary calls always find instances).
    pub(crate) fn limits(&self, instances: u32) -> FairnessLimits {
        FairnessLimits {
            calls_per_principal: self.max_calls_per_principal,
            confirmations_per_principal: self.max_confirmations_per_principal,
            confirmations_total: (instances / 2) as usize,
        }
    }
}

/// The limits (from the command line).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FairnessLimits {
    pub(crate) calls_per_principal: usize,
    pub(crate) confirmations_per_principal: usize,
    pub(crate) confirmations_total: usize,
}

#[derive(Default)]
struct Counts {
    calls: usize,
    confirmations: usize,
}

/// The counters behind the limits.
pub(crate) struct Fairness {
    limits: FairnessLimits,
    counts: Mutex<(HashMap<Principal, Counts>, usize)>,
}

/// What a permit counts; released on drop.
#[derive(Clone, Copy)]
enum Kind {
    Call,
    Confirmation,
}

/// Held for as long as a call runs or a form is open.
pub(crate) struct Permit {
    fairness: Arc<Fairness>,
    principal: Principal,
    kind: Kind,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut guard = self.fairness.counts.lock().unwrap_or_else(|p| p.into_inner());
        let (per, total) = &mut *guard;
        if let Some(c) = per.get_mut(&self.principal) {
            match self.kind {
                Kind::Call => c.calls -= 1,
                Kind::Confirmation => {
                    c.confirmations -= 1;
                    *total -= 1;
                }
            }
            if c.calls == 0 && c.confirmations == 0 {
                per.remove(&self.principal);
            }
        }
    }
}

impl Fairness {
    pub(crate) fn new(limits: FairnessLimits) -> Arc<Self> {
        Arc::new(Fairness { limits, counts: Mutex::new((HashMap::new(), 0)) })
    }

    /// A slot for one tool call of `who`, or why not.
    pub(crate) fn begin_call(self: &Arc<Self>, who: &Principal) -> Result<Permit, Busy> {
        self.begin(who, Kind::Call)
    }

    /// A slot for one open confirmation form of `who`, or why not.
    pub(crate) fn begin_confirmation(self: &Arc<Self>, who: &Principal) -> Result<Permit, Busy> {
        self.begin(who, Kind::Confirmation)
    }

    fn begin(self: &Arc<Self>, who: &Principal, kind: Kind) -> Result<Permit, Busy> {
        let mut guard = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let (per, total) = &mut *guard;
        let c = per.entry(who.clone()).or_default();
        match kind {
            Kind::Call if c.calls >= self.limits.calls_per_principal => {
                return Err(Busy::Calls { principal: who.to_string(), open: c.calls });
            }
            Kind::Confirmation if c.confirmations >= self.limits.confirmations_per_principal => {
                return Err(Busy::Forms { principal: who.to_string(), open: c.confirmations });
            }
            Kind::Confirmation if *total >= self.limits.confirmations_total => {
                return Err(Busy::ServerForms { open: *total });
            }
            Kind::Call => c.calls += 1,
            Kind::Confirmation => {
                c.confirmations += 1;
                *total += 1;
            }
        }
        Ok(Permit { fairness: self.clone(), principal: who.clone(), kind })
    }
}

/// Why a call or a form found no slot: what a caller can match on, worded as the agent reads it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Busy {
    #[error(
        "principal {principal} already has {open} tool calls in flight, the most this server allows one principal \
         (--max-calls-per-principal); retry when one has finished"
    )]
    Calls { principal: String, open: usize },
    #[error(
        "principal {principal} already has {open} confirmation forms open, the most this server allows one \
         principal (--max-confirmations-per-principal); answer or cancel one first"
    )]
    Forms { principal: String, open: usize },
    #[error("{open} confirmation forms are open on this server, the most it holds at once; retry shortly")]
    ServerForms { open: usize },
}

/// A form refused for a limit is a form that reached nobody.
impl From<Busy> for crate::capabilities::NotReached {
    fn from(e: Busy) -> Self {
        crate::capabilities::NotReached::AtLimit(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_principal_has_its_own_limits_and_permits_release_on_drop() {
        let f = Fairness::new(FairnessLimits {
            calls_per_principal: 2,
            confirmations_per_principal: 1,
            confirmations_total: 2,
        });
        let (alice, bob, carol) = (Principal::named("alice"), Principal::named("bob"), Principal::named("carol"));
        let a1 = f.begin_call(&alice).unwrap();
        let _a2 = f.begin_call(&alice).unwrap();
        let e = f.begin_call(&alice).err().unwrap();
        assert_eq!(e, Busy::Calls { principal: "alice".into(), open: 2 });
        assert!(e.to_string().contains("--max-calls-per-principal") && e.to_string().contains("alice"), "{e}");
        let _b = f.begin_call(&bob).expect("bob is not starved by alice");
        drop(a1);
        let _a3 = f.begin_call(&alice).expect("a finished call frees its slot");

        let _ac = f.begin_confirmation(&alice).unwrap();
        let e = f.begin_confirmation(&alice).err().unwrap();
        assert!(
            matches!(e, Busy::Forms { open: 1, .. }) && e.to_string().contains("--max-confirmations-per-principal")
        );
        let bc = f.begin_confirmation(&bob).unwrap();
        let e = f.begin_confirmation(&carol).err().unwrap();
        assert_eq!(e, Busy::ServerForms { open: 2 });
        assert!(e.to_string().starts_with("2 confirmation forms are open on this server"), "{e}");
        drop(bc);
        assert!(f.begin_confirmation(&carol).is_ok());
    }
}
