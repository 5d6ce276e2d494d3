//! Asking the person: the `confirmation` capability delivered as an MCP form elicitation
//! (`elicitation/create`) sent from the tool call's own task, bounded by the elicitation timeout
//! and by the call's cancellation.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer, ServiceError};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::Form;
use crate::bindings::confirmation::Status;
use crate::capabilities::{Confirmer, NotReached, Reached};
use crate::mcp::fairness::Fairness;
use crate::principal::Principal;

/// The one field the form asks for; only `true` counts as approval.
pub(crate) const CONFIRM_FIELD: &str = "confirm";

/// Confirms through the MCP client of the current call, holding one of its principal's
/// confirmation slots while the form is open.
pub(crate) struct ElicitConfirmer {
    pub peer: Peer<RoleServer>,
    pub timeout: Duration,
    pub(crate) fairness: Arc<Fairness>,
    pub principal: Principal,
}

/// The form: one required boolean.
pub(crate) fn schema() -> ElicitationSchema {
    ElicitationSchema::builder().required_bool(CONFIRM_FIELD).build().expect("a one-field boolean schema is valid")
}

/// Maps the client's answer: only accept with `confirm = true` is an approval.
pub(crate) fn status_of(action: &ElicitationAction, content: Option<&Value>) -> Status {
    match action {
        ElicitationAction::Accept => {
            if content.and_then(|c| c.get(CONFIRM_FIELD)).and_then(Value::as_bool) == Some(true) {
                Status::Accepted
            } else {
                Status::Declined
            }
        }
        ElicitationAction::Decline => Status::Declined,
        ElicitationAction::Cancel => Status::Cancelled,
        // An answer this server does not know is not an approval.
        _ => Status::Failed,
    }
}

/// For a client that declared form elicitation (the road `approval::choose` calls `Road::Form`).
impl Confirmer for ElicitConfirmer {
    fn method(&self) -> &'static str {
        "form"
    }

    fn confirm<'a>(
        &'a self,
        form: &'a Form,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<Reached, NotReached>> {
        Box::pin(async move {
            let _open = self.fairness.begin_confirmation(&self.principal)?;
            Ok(Reached::status(self.ask(form, cancel).await))
        })
    }
}

impl ElicitConfirmer {
    fn ask<'a>(&'a self, form: &'a Form, cancel: &'a CancellationToken) -> BoxFuture<'a, Status> {
        Box::pin(async move {
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: form.text.clone(),
                requested_schema: schema(),
            };
            let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
            let options = PeerRequestOptions::with_timeout(self.timeout);
            let handle = match self.peer.send_request_with_option(request, options).await {
                Ok(h) => h,
                Err(e) => {
                    tracing::warn!("could not send the confirmation prompt: {e}");
                    return Status::Failed;
                }
            };
            let id = handle.id.clone();
            tokio::select! {
                answer = handle.await_response() => match answer {
                    Ok(ClientResult::ElicitResult(r)) => status_of(&r.action, r.content.as_ref()),
                    Ok(_) => Status::Failed,
                    Err(ServiceError::Timeout { .. }) => Status::TimedOut,
                    // the session or connection went away with the form open: the call is over
                    Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => Status::CallCancelled,
                    Err(_) if self.peer.is_transport_closed() => Status::CallCancelled,
                    Err(e) => {
                        tracing::info!("the confirmation prompt failed: {e}");
                        Status::Failed
                    }
                },
                _ = cancel.cancelled() => {
                    // Dropping the request would leave the prompt open on the client: withdraw it.
                    let withdraw = CancelledNotificationParam::new(Some(id), Some("the tool call was cancelled".into()));
                    let _ = self.peer.notify_cancelled(withdraw).await;
                    Status::CallCancelled
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_accept_with_confirm_true_is_accepted() {
        assert_eq!(status_of(&ElicitationAction::Accept, Some(&json!({"confirm": true}))), Status::Accepted);
        assert_eq!(status_of(&ElicitationAction::Accept, Some(&json!({"confirm": false}))), Status::Declined);
        assert_eq!(status_of(&ElicitationAction::Accept, Some(&json!({"confirm": "true"}))), Status::Declined);
        assert_eq!(status_of(&ElicitationAction::Accept, None), Status::Declined);
        assert_eq!(status_of(&ElicitationAction::Decline, None), Status::Declined);
        assert_eq!(status_of(&ElicitationAction::Cancel, None), Status::Cancelled);
    }

    #[test]
    fn the_form_asks_for_one_required_boolean() {
        let schema = serde_json::to_value(schema()).unwrap();
        assert_eq!(schema["required"], json!(["confirm"]));
        assert_eq!(schema["properties"]["confirm"]["type"], "boolean");
    }
}
