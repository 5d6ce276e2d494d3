//! The one place the host generates bindings from `wit/`: the guest is built from the same folder.
//!
//! The imports that wait (a Fabric request, a person's answer, a create, an audit record, a
//! shared proposal store) are async so a component call runs as a future on the MCP request's
//! own task: elicitations stay associated with the call, and a confirmation waiting minutes
//! blocks no thread. An `approval` is the host's own [`Approval`] in the call's resource table.
//!
//! Nearly a leaf: it names only the Fabric client's [`CheckedCreate`], the create an approval
//! sends, so every layer can use these types.

wasmtime::component::bindgen!({
    path: "wit",
    world: "broker",
    imports: {
        "equinix:broker/fabric.send": async | trappable,
        "equinix:broker/confirmation.ask": async | trappable,
        "equinix:broker/confirmation.[static]approval.execute": async | trappable,
        "equinix:broker/confirmation.[drop]approval": async | trappable,
        "equinix:broker/proposal-store.put": async | trappable,
        "equinix:broker/proposal-store.peek": async | trappable,
        "equinix:broker/proposal-store.take": async | trappable,
        "equinix:broker/proposal-store.settle": async | trappable,
        default: trappable,
    },
    with: {
        "equinix:broker/confirmation.approval": Approval,
    },
    exports: { default: async },
});

pub use equinix::broker::{clock, confirmation, fabric, proposal_store};

use crate::fabric_client::CheckedCreate;
pub(crate) use exports::equinix::broker::tools;

/// The status as the contract names it (`equinix_broker_contract::ConfirmStatus::as_str`).
impl From<confirmation::Status> for equinix_broker_contract::ConfirmStatus {
    fn from(status: confirmation::Status) -> Self {
        use confirmation::Status as S;
        use equinix_broker_contract::ConfirmStatus as C;
        match status {
            S::Accepted => C::Accepted,
            S::Declined => C::Declined,
            S::Cancelled => C::Cancelled,
            S::TimedOut => C::TimedOut,
            S::Failed => C::Failed,
            S::CallCancelled => C::CallCancelled,
            S::UnsupportedByClient => C::UnsupportedByClient,
            S::InputRequired => C::InputRequired,
        }
    }
}

/// The round (the WIT `delivery`) as the contract names it, with the rules both sides read from it.
impl From<confirmation::Delivery> for equinix_broker_contract::Delivery {
    fn from(delivery: confirmation::Delivery) -> Self {
        use confirmation::Delivery as D;
        use equinix_broker_contract::Delivery as C;
        match delivery {
            D::Blocking => C::Blocking,
            D::FirstRound => C::FirstRound,
            D::Answered => C::Answered,
        }
    }
}

/// The right to send one create, minted after the person's yes: the host's side of the WIT
/// `approval` resource. The component holds only a handle to it.
#[derive(Debug)]
pub struct Approval {
    /// The create it sends, as the allow-list admitted it before the person was asked.
    pub create: CheckedCreate,
    pub request_sha256: String,
    /// The proposal it was minted for.
    pub token: String,
    /// `accepted`, or `unsupported_by_client` under the operator's opt-in.
    pub status: confirmation::Status,
    /// How the answer came: `form`, `page` or `opt_in`.
    pub method: &'static str,
    /// The person who approved on the approval page (`ISSUER#SUBJECT`); none for the other methods.
    pub approver: Option<String>,
    /// The plan the person was shown (none for a proposal validated before plans), recorded with
    /// the approval.
    pub plan: Option<crate::plan::Plan>,
    /// The approval page's id when the approval was decided there: what becomes of the create
    /// is written beside its decision.
    pub page: Option<String>,
    /// What the operator's policy judged of the request when the person was asked (none without
    /// a policy): judged again, at the time of the create, just before it is sent.
    pub policed: Option<std::sync::Arc<crate::policy::Facts>>,
}
