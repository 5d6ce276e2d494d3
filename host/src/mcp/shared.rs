//! What every call of one server shares: the component, the tool table, the grants behind the
//! imports, and the settings of how a person is reached.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::RequestStateCodec;

use super::fairness::Fairness;
use super::registry::ToolRegistry;
use crate::approval_page::ApprovalPage;
use crate::capabilities::Grants;
use crate::component::ComponentRuntime;
use crate::shutdown::Lifecycle;

/// Everything a call needs, shared by every session and call.
pub struct Shared {
    pub runtime: ComponentRuntime,
    pub registry: ToolRegistry,
    /// What each call's capabilities reach.
    pub grants: Grants,
    /// How long a blocking confirmation waits for the person.
    pub(crate) elicit_timeout: Duration,
    /// Seals the stateless confirmation state (`EQUINIX_MCP_STATE_KEY` or a random key).
    pub request_state: RequestStateCodec,
    /// Calls in flight, for a graceful shutdown.
    pub lifecycle: Lifecycle,
    /// Per-principal limits on calls and open confirmation forms.
    pub(crate) fairness: Arc<Fairness>,
    /// The approval page, when the operator configured one.
    pub approval_page: Option<Arc<ApprovalPage>>,
}
