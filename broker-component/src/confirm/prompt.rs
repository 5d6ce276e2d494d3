//! What the component tells the person beside the host-rendered request: the target, its sides by name, the price, the age of the proposal.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

use super::redeem::Redeemable;
use crate::capability::Prompt;
use crate::price;
use crate::spec::Spec;

/// The component's context for the form: what the host cannot know (the target in words with the
/// names of what it touches, the price, the proposal's age). The host renders the request itself
/// from the bytes it would send.
pub(crate) fn context(token: &str, r: &Redeemable, now: u64) -> Prompt {
    let p = &r.proposal;
    let change = p.change_type;
    let target = r.spec.as_ref().map(Spec::target).unwrap_or_else(|| "(the stored spec no longer parses)".into());
    let mut fields: Vec<(String, String)> = alloc::vec![("target".into(), target.clone())];
    if let Some(spec) = &r.spec {
        for (label, words) in sides_in_words(spec.body(), &p.touches) {
            fields.push((label.into(), words));
        }
    }
    fields.extend([
        ("price".into(), price::summary(&p.price_context)),
        ("proposal_age".into(), duration(now.saturating_sub(p.minted_at_ms))),
        ("expires_in".into(), duration(p.expires_at_ms.saturating_sub(now))),
        ("confirm_token".into(), token.into()),
    ]);
    Prompt {
        title: format!("Create {}?", change.noun()),
        message: format!(
            "An AI agent asks to CREATE a billable {}: {target}. Fabric's dry run accepted this exact request when it \
             was proposed. Accept with confirm = true only if you want it created now; decline or cancel and nothing \
             is created.",
            change.noun()
        ),
        fields,
    }
}

/// Each end of a connection (or the token's selector) in words, with the names it touches.
pub(super) fn sides_in_words(body: &Value, names: &Value) -> Vec<(&'static str, String)> {
    let named = |kind: &str, v: &Value| -> Option<String> {
        let uuid = v.get("uuid")?.as_str()?;
        Some(match names.get(uuid).and_then(Value::as_str) {
            Some(name) => format!("{kind} {name} ({uuid})"),
            None => format!("{kind} {uuid}"),
        })
    };
    let describe = |ap: &Value| -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(named("port", &ap["port"]));
        parts.extend(named("profile", &ap["profile"]));
        parts.extend(named("network", &ap["network"]));
        parts.extend(named("cloud router", &ap["router"]));
        parts.extend(named("virtual device", &ap["virtualDevice"]));
        if let Some(id) = ap.pointer("/interface/id") {
            parts.push(format!("interface {id}"));
        }
        let lp = &ap["linkProtocol"];
        for (key, label) in [("vlanTag", "VLAN"), ("vlanSTag", "S-VLAN"), ("vlanCTag", "C-VLAN")] {
            if let Some(tag) = lp.get(key) {
                parts.push(format!("{} {label} {tag}", lp["type"].as_str().unwrap_or("")));
            }
        }
        if let Some(m) = ap.pointer("/location/metroCode").and_then(Value::as_str) {
            parts.push(format!("metro {m}"));
        }
        if let Some(r) = ap.get("sellerRegion").and_then(Value::as_str) {
            parts.push(format!("seller region {r}"));
        }
        parts.join(", ")
    };
    let mut out = Vec::new();
    for (label, side) in [("a_side", "aSide"), ("z_side", "zSide")] {
        if let Some(ap) = body[side].get("accessPoint") {
            out.push((label, describe(ap)));
        } else if let Some(t) = named("service token", &body[side]["serviceToken"]) {
            out.push((label, t));
        }
        if let Some(sel) = body.pointer(&format!("/connection/{side}/accessPointSelectors/0")) {
            out.push((label, describe(sel)));
        }
    }
    out
}

pub(super) fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 60 { format!("{}m {:02}s", s / 60, s % 60) } else { format!("{s}s") }
}
