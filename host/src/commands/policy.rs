//! `equinix-mcp policy schema`, `equinix-mcp policy check FILE` and `equinix-mcp policy explain
//! FILE --request REQUEST`: the operator policy's Cedar schema, a set checked against it exactly
//! as `serve --policy` checks it, and what a set decides of one request before anyone proposes it.

use crate::{out, outln};

use std::process::ExitCode;

use crate::cli::{ExplainArgs, PolicyCommand};
use crate::policy::{self, Approving, Asking, Facts, Moment, Voter};

pub fn run(command: &PolicyCommand) -> ExitCode {
    match command {
        PolicyCommand::Schema => {
            out!("{}", policy::schema_text());
            ExitCode::SUCCESS
        }
        PolicyCommand::Check { file } => match policy::load(file) {
            Ok(loaded) => {
                let quorums = match loaded.quorum_rules() {
                    0 => String::new(),
                    n => format!(" ({n} with @approvals)"),
                };
                outln!(
                    "{}: {} policies{quorums}, valid against the EquinixMcp schema (sha256 {})",
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
    let loaded = policy::load(&args.file).map_err(|e| e.to_string())?;
    let text =
        std::fs::read_to_string(&args.request).map_err(|e| format!("--request {}: {e}", args.request.display()))?;
    let request: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("--request {}: not JSON: {e}", args.request.display()))?;
    let kind = request["change_type"].as_str().unwrap_or_default();
    use equinix_broker_contract::ChangeType;
    let change_type = ChangeType::parse(kind)
        .ok_or_else(|| format!("--request: change_type {kind:?} is none of {}", ChangeType::NAMES.join(", ")))?;
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
    if loaded.quorum_rules() > 0 {
        let asking = Asking {
            action: change,
            principal: &args.principal,
            phase: "approval",
            transport,
            tool: equinix_broker_contract::CONFIRM_TOOL,
            approving: None,
            at: moment,
        };
        approvals(&loaded.requirement(&asking, &facts), args)?;
    }
    Ok(allowed)
}

/// Prints how many approvals the request needs and from whom, counting `--approved-by`, and
/// whether `--approver` would fill a place still open.
fn approvals(requirement: &policy::Requirement, args: &ExplainArgs) -> Result<(), String> {
    if requirement.is_empty() {
        outln!("approvals: one person's approval decides (no @approvals policy holds for it)");
        return Ok(());
    }
    outln!("approvals: it needs {}, given on the approval page", requirement.needs().join("; "));
    let mut given: Vec<(String, Vec<String>)> = Vec::new();
    for a in &args.approved_by {
        let (who, groups) = a.split_once('=').unwrap_or((a.as_str(), ""));
        if who.is_empty() {
            return Err(format!("--approved-by {a:?}: give it as PRINCIPAL=GROUP,GROUP"));
        }
        if who == args.principal {
            return Err(format!("--approved-by {who}: the proposer's own approval never counts"));
        }
        if given.iter().any(|(g, _)| g == who) {
            return Err(format!("--approved-by {who}: given twice; one person counts once"));
        }
        let groups = groups.split(',').map(str::trim).filter(|g| !g.is_empty()).map(str::to_string).collect();
        given.push((who.to_string(), groups));
    }
    let voters: Vec<Voter> = given.iter().map(|(person, groups)| Voter { person, groups }).collect();
    let counted: Vec<Voter> =
        voters.iter().enumerate().filter(|(i, v)| requirement.counts(&voters[..*i], **v)).map(|(_, v)| *v).collect();
    for v in voters.iter().filter(|v| !counted.iter().any(|c| c.person == v.person)) {
        outln!("approvals: {} fills no place the others leave open: not counted", v.person);
    }
    let progress = requirement.progress(&counted);
    match requirement.met_by(&counted) {
        true => outln!("approvals: {}: whole, the request is approved", progress.said()),
        false => outln!("approvals: {}", progress.said()),
    }
    if let Some(approver) = &args.approver {
        let me = Voter { person: approver, groups: &args.approver_groups };
        let verdict = if *approver == args.principal {
            "the proposer's own approval never counts".to_string()
        } else if requirement.met_by(&counted) {
            "nothing is missing".to_string()
        } else if requirement.counts(&counted, me) {
            let mut with = counted.clone();
            with.push(me);
            match requirement.met_by(&with) {
                true => "would count, and make it whole".to_string(),
                false => format!("would count: then {}", requirement.progress(&with).said()),
            }
        } else {
            "would fill no place still open: not counted".to_string()
        };
        outln!("approvals: {approver}: {verdict}");
    }
    Ok(())
}
