//! `equinix-mcp policy schema`, `equinix-mcp policy check FILE` and `equinix-mcp policy explain
//! FILE --request REQUEST`: the operator policy's Cedar schema, a set checked against it exactly
//! as `serve --policy` checks it, and what a set decides of one request before anyone proposes it.

use crate::{out, outln};

use std::process::ExitCode;

use crate::cli::{ExplainArgs, PolicyCommand};
use crate::policy::{self, Approving, Asking, Facts, Moment};

pub fn run(command: &PolicyCommand) -> ExitCode {
    match command {
        PolicyCommand::Schema => {
            out!("{}", policy::SCHEMA);
            ExitCode::SUCCESS
        }
        PolicyCommand::Check { file } => match policy::load(file) {
            Ok(loaded) => {
                outln!(
                    "{}: {} policies, valid against the EquinixMcp schema (sha256 {})",
                    file.display(),
                    loaded.policies,
                    loaded.sha256
                );
                ExitCode::SUCCESS
            }
            Err(why) => {
                eprintln!("equinix-mcp: {why}");
                ExitCode::FAILURE
            }
        },
        PolicyCommand::Explain(args) => match explain(args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::FAILURE,
            Err(why) => {
                eprintln!("equinix-mcp: {why}");
                ExitCode::from(2)
            }
        },
    }
}

/// Prints what `args`' set decides of its request, phase by phase; whether both allow it.
fn explain(args: &ExplainArgs) -> Result<bool, String> {
    let loaded = policy::load(&args.file)?;
    let text =
        std::fs::read_to_string(&args.request).map_err(|e| format!("--request {}: {e}", args.request.display()))?;
    let request: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("--request {}: not JSON: {e}", args.request.display()))?;
    let kind = request["change_type"].as_str().unwrap_or_default();
    let change_type = equinix_broker_contract::ChangeType::parse(kind).ok_or_else(|| {
        format!("--request: change_type {kind:?} is none of connection_create, network_create, service_token_create")
    })?;
    let spec = serde_json::to_string(&request["spec"]).expect("a JSON value serializes");
    let body =
        crate::exact_json::parse(&spec).map_err(|e| format!("--request: its spec cannot be read exactly: {e}"))?;
    let mut facts = Facts::of(change_type, &body, "explain");
    for given in &args.metros {
        let (uuid, metro) = given.split_once('=').ok_or_else(|| format!("--metro {given:?}: give it as UUID=METRO"))?;
        if facts.port_uuids.contains(uuid) || facts.router_uuids.contains(uuid) {
            facts.metros.insert(metro.to_string());
        }
    }
    facts.price = args.monthly_price_cents.map(|cents| crate::plan::Priced {
        currency: args.currency.clone(),
        monthly_cents: Some(cents),
        one_time_cents: None,
        term_months: None,
    });
    let at_ms = match &args.at {
        None => crate::clock::Clock::default().now_ms(),
        Some(text) => {
            let t = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
                .map_err(|e| format!("--at {text:?}: not an RFC 3339 time: {e}"))?;
            u64::try_from(t.unix_timestamp_nanos() / 1_000_000).map_err(|_| format!("--at {text:?}: before 1970"))?
        }
    };
    let change = change_type.as_str();
    outln!("request: {}", facts.summary(change));
    let unplaced: Vec<&String> = facts
        .port_uuids
        .iter()
        .chain(&facts.router_uuids)
        .filter(|u| !args.metros.iter().any(|m| m.split_once('=').is_some_and(|(id, _)| id == u.as_str())))
        .collect();
    for uuid in &unplaced {
        outln!("not read: the metro of {uuid} (the server reads it from Fabric; give it with --metro {uuid}=METRO)");
    }
    let moment = Moment::at(at_ms);
    outln!("at: {} (weekday {}, 1 is Monday)", crate::audit::rfc3339(at_ms), moment.weekday);
    let method = match args.method.as_str() {
        "page" => "page",
        "opt_in" => "opt_in",
        _ => "form",
    };
    let approving = Approving {
        method,
        approver: args.approver.clone(),
        approver_groups: args.approver.as_ref().map(|_| args.approver_groups.clone()),
        approved_with: args.approved_with.as_deref().map(|w| if w == "passkey" { "passkey" } else { "sign_in" }),
        user_verified: args.approved_with.as_deref().map(|w| w == "passkey"),
    };
    let transport = if args.transport == "stdio" { "stdio" } else { "http" };
    let mut allowed = true;
    for (phase, tool, approving, label) in [
        ("dry_run", equinix_broker_contract::PROPOSE_TOOL, None, "at the dry run (propose)".to_string()),
        (
            "approval",
            equinix_broker_contract::CONFIRM_TOOL,
            Some(&approving),
            format!("when a person is asked ({method})"),
        ),
    ] {
        let asking =
            Asking { action: change, principal: &args.principal, phase, transport, tool, approving, at: moment };
        // the price is read from the plan, after the dry run
        let judged = Facts { price: if phase == "dry_run" { None } else { facts.price.clone() }, ..facts.clone() };
        let decision = loaded.decide(&asking, &judged);
        if decision.allowed {
            let by: Vec<String> = decision.policies.iter().map(|p| format!("{p:?}")).collect();
            outln!("{label}: allowed, by {}", by.join(", "));
            continue;
        }
        allowed = false;
        let again = match loaded.reads_time() {
            false => String::new(),
            true => match loaded.next_allowed(&asking, &judged, at_ms) {
                Some(at) => format!("; allowed again from {}", crate::audit::rfc3339(at)),
                None => "; not allowed at any time within the next month".into(),
            },
        };
        outln!("{label}: denied: {}{again}", decision.explain());
    }
    Ok(allowed)
}
