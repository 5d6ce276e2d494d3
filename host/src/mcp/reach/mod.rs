//! How a call's question reaches its person: what the client declared ([`declared`]), the road
//! `approval::choose` chooses from it once per call, and the [`Confirmer`] that walks that road
//! ([`confirmer`]). The rules every road ends in are `approval`'s; this is the MCP side of it.

pub(crate) mod form;
pub(crate) mod page;
pub(crate) mod stateless;

use std::sync::Arc;

use rmcp::model::InputResponses;
use rmcp::service::{ElicitationMode, Peer, RequestContext, RoleServer};

use self::form::ElicitConfirmer;
use self::page::{LinkBy, PageRound, UrlElicit};
use self::stateless::{FirstRound, OpenedState};
use super::shared::Shared;
use crate::approval::{CallKey, Declared, Offered, Road, Round};
use crate::capabilities::{Confirmer, Fallback, NobodyToAsk};
use crate::principal::Principal;
use crate::proposals::StoreUnavailable;

/// How long a person has to answer, and whether creates may go with nobody asked.
#[derive(clap::Args, Debug, Clone)]
pub struct ConfirmationArgs {
    /// How long to wait for the person to answer a confirmation, in milliseconds.
    #[arg(long, env = "EQUINIX_MCP_ELICIT_TIMEOUT_MS", default_value_t = 300_000, value_name = "MS")]
    pub(crate) elicit_timeout_ms: u64,

    /// Execute confirmed proposals even when the client cannot ask a person (off by default).
    #[arg(
        long,
        env = "EQUINIX_MCP_ALLOW_UNCONFIRMED_MUTATIONS",
        default_value_t = false,
        action = clap::ArgAction::Set,
        value_parser = clap::builder::BoolishValueParser::new(),
        value_name = "BOOL",
        num_args = 0..=1,
        default_missing_value = "true",
    )]
    pub(crate) allow_unconfirmed_mutations: bool,

    /// A file (mode 600, e.g. a systemd credential) holding the base64 key that seals
    /// 2026-07-28 confirmation state, the same on every HTTP replica; or set
    /// EQUINIX_MCP_STATE_KEY (default: random per process).
    #[arg(long, env = "EQUINIX_MCP_STATE_KEY_FILE", value_name = "PATH")]
    pub(crate) state_key_file: Option<std::path::PathBuf>,
}

impl ConfirmationArgs {
    pub(crate) fn elicit_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.elicit_timeout_ms)
    }
}

/// What the client of `context` declared it can do.
pub(crate) fn declared(context: &RequestContext<RoleServer>) -> Declared {
    if context.protocol_version().is_some_and(|v| !v.has_initialize()) {
        // a 2026-07-28 client declares its capabilities with each request; an `elicitation`
        // that names no mode means form, as for the pre-2026 handshake
        let Some(e) = context.client_capabilities().and_then(|c| c.elicitation) else {
            return Declared { stateless: true, form: false, url: false };
        };
        let form = e.form.is_some() || e.url.is_none();
        return Declared { stateless: true, form, url: e.url.is_some() };
    }
    let modes = context.peer.supported_elicitation_modes();
    Declared {
        stateless: false,
        form: modes.contains(&ElicitationMode::Form),
        url: modes.contains(&ElicitationMode::Url),
    }
}

/// What the server offers a call now: a page of local approvers only once one is enrolled (read
/// at each call, so an enrollment or a removal holds at once).
pub(crate) async fn offered(shared: &Shared) -> Offered {
    let page = match &shared.approval_page {
        Some(page) => page.offers().await,
        None => false,
    };
    Offered { page, opt_in: shared.grants.unconfirmed_allowed }
}

/// What a retry's sealed state says of its first round, for the plan.
pub(crate) fn sealed_kind(sealed: Option<&OpenedState>) -> crate::approval::Sealed {
    match sealed {
        None => crate::approval::Sealed::FirstRound,
        Some(s) if s.page.is_some() => crate::approval::Sealed::Page,
        Some(_) => crate::approval::Sealed::Form,
    }
}

/// Everything a confirmer may need of one call.
pub(crate) struct Reaching<'a> {
    pub shared: &'a Shared,
    pub declared: Declared,
    pub peer: &'a Peer<RoleServer>,
    pub principal: &'a Principal,
    pub tool: &'a str,
    pub key: &'a CallKey,
    /// A stateless retry's opened state and the answers it carries.
    pub sealed: Option<OpenedState>,
    pub responses: Option<&'a InputResponses>,
}

/// The confirmer of `road` for `call`. `Err`: the proposal store, where the approval page's
/// records live, did not answer.
pub(crate) async fn confirmer(road: Road, call: &Reaching<'_>) -> Result<Arc<dyn Confirmer>, StoreUnavailable> {
    let shared = call.shared;
    let page = || shared.approval_page.clone().expect("the plan sends a person to the page only when there is one");
    // a 2026-07-28 round's link goes in the mode the client declared
    let round_link = if call.declared.url { LinkBy::Url } else { LinkBy::Form };
    Ok(match road {
        Road::NotAsked | Road::OptIn | Road::Nobody => Arc::new(NobodyToAsk),
        Road::Form => Arc::new(ElicitConfirmer {
            peer: call.peer.clone(),
            timeout: shared.elicit_timeout,
            fairness: shared.fairness.clone(),
            principal: call.principal.clone(),
        }),
        Road::UrlElicitation => Arc::new(url_elicit(page(), call, LinkBy::Url)),
        Road::PageByForm => Arc::new(url_elicit(page(), call, LinkBy::Form)),
        Road::PageLink => Arc::new(PageRound::for_call(page(), call.principal, call.tool, call.key).await?),
        Road::RoundTrip(Round::FirstForm) => Arc::new(FirstRound),
        Road::RoundTrip(Round::FirstPage) => {
            Arc::new(PageRound::first_round(page(), call.principal.clone(), call.tool.to_string(), round_link))
        }
        Road::RoundTrip(Round::RetryPage) => {
            let id = call.sealed.as_ref().and_then(|s| s.page.clone());
            Arc::new(PageRound::for_state(page(), call.principal, call.tool, id.as_deref(), round_link).await?)
        }
        Road::RoundTrip(Round::RetryForm) => {
            let sealed = call.sealed.clone().expect("a retry's road comes from its sealed state");
            let (store, clock) = (shared.grants.proposals.clone(), shared.grants.clock.clone());
            Arc::new(stateless::answer(sealed, call.responses, store, clock))
        }
    })
}

/// The page's link by elicitation, in the mode `link_by`, for `call`'s person.
fn url_elicit(page: Arc<crate::approval_page::ApprovalPage>, call: &Reaching<'_>, link_by: LinkBy) -> UrlElicit {
    UrlElicit {
        page,
        fairness: call.shared.fairness.clone(),
        peer: call.peer.clone(),
        timeout: call.shared.elicit_timeout,
        principal: call.principal.clone(),
        tool: call.tool.to_string(),
        link_by,
    }
}

/// The road to the page (`Roads::page_instead`) a call that was to get the form keeps for when
/// the operator's policy allows its create only there. No confirmer of it is made unless the
/// policy refuses the call's own road.
pub(crate) fn fallback(page_instead: Road, call: &Reaching<'_>) -> Option<Fallback> {
    let page = call.shared.approval_page.clone()?;
    let road: Box<dyn FnOnce() -> Arc<dyn Confirmer> + Send + Sync> = match page_instead {
        Road::PageByForm => {
            let elicit = url_elicit(page, call, LinkBy::Form);
            Box::new(move || Arc::new(elicit))
        }
        Road::RoundTrip(Round::FirstPage) => {
            let link_by = if call.declared.url { LinkBy::Url } else { LinkBy::Form };
            let (principal, tool) = (call.principal.clone(), call.tool.to_string());
            Box::new(move || Arc::new(PageRound::first_round(page, principal, tool, link_by)))
        }
        // no other road stands in for the form (`Road::page_instead` gives only these two)
        _ => return None,
    };
    Some(Fallback { method: crate::approval_page::record::METHOD_PAGE, road })
}

/// The next step of a proposal, in the host's words: what this client's confirm will do, said
/// before the token can be spent, never discovered after. A server whose page waits for its first
/// local approver names the one command that opens it.
pub(crate) fn next_step(road: Road, shared: &Shared) -> Option<String> {
    if road == Road::Nobody
        && let Some(command) = enroll_command(shared)
    {
        return Some(format!(
            "Do not call fabric_confirm_change yet: this client shows no form and nobody here is enrolled to \
             approve, so it would spend the token. Ask the user to run `{command}` in a terminal once, then confirm: \
             it answers approval_pending with their link."
        ));
    }
    Some(match road {
        Road::Form | Road::RoundTrip(Round::FirstForm) => {
            "Show the user this proposal, then call fabric_confirm_change: this client shows the person a form with \
             the exact request to approve or decline, not in chat."
        }
        Road::UrlElicitation | Road::RoundTrip(Round::FirstPage) => {
            "Show the user this proposal, then call fabric_confirm_change: this client opens the approval page, where \
             the person approves or declines the exact request."
        }
        Road::PageLink => {
            "Show the user this proposal, then call fabric_confirm_change: it answers approval_pending with an \
             approval_url for the person (nothing used up); once they decided on that page, call it again."
        }
        Road::OptIn => {
            "Show the user this proposal; call fabric_confirm_change only if they want it: this client shows no form \
             and the operator allows creates without one, so the call creates at once."
        }
        Road::Nobody => {
            "Do not call fabric_confirm_change: this client shows no form and this server has no approval page, so \
             it would answer unsupported_by_client and spend the token. Confirm from a client that shows forms, or ask \
             the operator for the approval page."
        }
        // a propose is never a retry, and its tool may ask
        Road::NotAsked | Road::PageByForm | Road::RoundTrip(_) => return None,
    }
    .to_string())
}

/// What a confirm that reached nobody (a client that shows no form, and no page anyone could
/// approve on) should be followed by, in the host's words: only the host knows whether the way
/// out is an enrollment on this machine or the operator's page. The token is spent by then.
pub(crate) fn after_nobody(shared: &Shared) -> String {
    match enroll_command(shared) {
        Some(command) => format!(
            "Nothing was created, and this token is used up: nobody is enrolled to approve on this machine yet, and \
             this client shows no form. Ask the user to run `{command}` in a terminal on this machine (once: it \
             enrolls their passkey in their browser), then call fabric_propose_change again and fabric_confirm_change \
             with the new token: it answers approval_pending with the link where they approve."
        ),
        None => "Nothing was created, and this token is used up: this client shows no form and this server has no \
                 approval page, so nobody could approve it. Confirm from a client that shows forms (Claude Code, VS \
                 Code, Cursor), or ask the operator to set up the approval page, then propose again."
            .into(),
    }
}

/// The enrollment command of a local page (which is never offered while nobody is enrolled).
fn enroll_command(shared: &Shared) -> Option<String> {
    shared.approval_page.as_ref().and_then(|p| p.enroll_command())
}
