//! What a newcomer hit on the simulator: each fixed here has a test.

use std::process::Stdio;

use crate::harness::*;

/// A reader that stops early (`inspect | head -1`) ends the output quietly, with success: the
/// pipe is closed before anything is written, so every write meets it closed. `inspect` reads
/// the small test component: every `inspect` compiles what it reads, and the output's writer is
/// the same whichever component it describes.
#[tokio::test]
async fn a_closed_pipe_on_standard_output_ends_a_command_quietly() {
    let inspect = inspect_probe();
    for args in [inspect.to_vec(), vec!["tools"], [&inspect[..], &["--json"]].concat()] {
        let mut child = tokio::process::Command::new(binary())
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Boolean settings in the environment take what people write: 1/0, yes/no, on/off, true/false.
/// Each spelling is tried on the simulator's switch, whose effect a cheap `call` shows (Fabric
/// itself is a dead loopback port here, so a switch read as off fails the call and reaches
/// nothing), and `inspect`'s own switch is read both ways (each `inspect` compiles the
/// component it reads, so once each, of the small test component).
#[tokio::test]
async fn boolean_environment_variables_take_1_yes_and_on() {
    let dead = format!("http://127.0.0.1:{}", free_port());
    for truthy in ["1", "yes", "on", "true"] {
        let env = [("EQUINIX_MCP_FABRIC_SIM", truthy), ("EQUINIX_API_ENDPOINT", dead.as_str())];
        let (ok, stdout, stderr) = run_to_exit(&["call", "fabric_list_metros"], &env).await;
        assert!(ok && stdout.contains("\"metros\""), "{truthy} means the simulator: {stdout} {stderr}");
    }
    let inspect = inspect_probe();
    let (ok, stdout, stderr) = run_to_exit(&inspect, &[("EQUINIX_MCP_INSPECT_JSON", "yes")]).await;
    assert!(ok && serde_json::from_str::<serde_json::Value>(&stdout).is_ok(), "yes means JSON: {stderr}");
    let (ok, stdout, stderr) = run_to_exit(&inspect, &[("EQUINIX_MCP_INSPECT_JSON", "0")]).await;
    assert!(ok && serde_json::from_str::<serde_json::Value>(&stdout).is_err(), "0 means text: {stderr}");
    let (ok, _, stderr) = run_to_exit(&inspect, &[("EQUINIX_MCP_INSPECT_JSON", "maybe")]).await;
    assert!(!ok && stderr.contains("maybe"), "an unknown word is refused, naming it: {stderr}");
}

/// A misspelt toolset is the operator's slip, named as such with the one meant, not a fault of
/// the component.
#[tokio::test]
async fn a_misspelt_toolset_names_the_one_meant() {
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--toolsets", "metro"], &[]).await;
    assert!(!ok, "{stderr}");
    assert!(stderr.contains(r#"--toolsets: unknown toolset "metro" (did you mean "metros"?)"#), "{stderr}");
    assert!(!stderr.contains("refusing the catalog"), "{stderr}");
}

/// A fault the simulator cannot read is answered with what it expects and where it is written.
#[tokio::test]
async fn a_bad_simulator_fault_says_what_a_fault_looks_like() {
    let sim = sim(equinix_fabric_sim::SimConfig::default()).await;
    let r = http().post(format!("{}/_sim/faults", sim.base_url())).body("{}").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let said: serde_json::Value = r.json().await.unwrap();
    assert!(said["error"].as_str().unwrap().contains("missing field `route`"), "{said}");
    assert_eq!(said["expected"]["route"], "POST /fabric/v4/connections", "{said}");
    assert!(said["see"].as_str().unwrap().contains("The Fabric simulator"), "{said}");
}

/// Run by hand in a terminal, the stdio server says what it is and how to connect to it; when
/// its input closes before a client said `initialize`, it says that is what happened. (`script`
/// gives it a terminal.)
#[tokio::test]
async fn the_stdio_server_started_in_a_terminal_says_how_to_connect() {
    let audit = fresh_audit_path();
    let bin = binary();
    let command = format!("{} serve --fabric-sim --audit-log {}", bin.display(), audit.display());
    let out = tokio::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .await
        .expect("util-linux's script runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("equinix-mcp speaks MCP over stdin and stdout"), "{said}");
    assert!(said.contains(&format!("claude mcp add equinix-sim -- {command}")), "{said}");
    assert!(said.contains("/plugin install equinix-mcp@equinix-mcp"), "{said}");
    assert!(said.contains("equinix-mcp call fabric_list_metros --fabric-sim"), "{said}");
    assert!(said.contains("the input closed before an MCP client sent `initialize`"), "{said}");
    // not on a terminal (a client's pipe): no such words, the same closing reason
    let audit = fresh_audit_path();
    let (ok, _, stderr) = run_to_exit(&["serve", "--fabric-sim", "--audit-log", audit.to_str().unwrap()], &[]).await;
    assert!(!ok && !stderr.contains("speaks MCP over stdin"), "{stderr}");
    assert!(stderr.contains("the input closed before an MCP client sent `initialize`"), "{stderr}");
}

/// `audit verify` keeps exit status 2 for a torn last record; a mistake on its command line
/// (checkpoints without their public key) is 64, EX_USAGE, and says what is missing.
#[tokio::test]
async fn a_mistake_on_audit_verifys_command_line_is_not_a_torn_tail() {
    let log = fresh_audit_path();
    std::fs::write(&log, "").unwrap();
    let out = command(&["audit", "verify", log.to_str().unwrap(), "--checkpoints", "/nonexistent"], &[])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{stderr}");
    assert!(stderr.contains("--public-key"), "{stderr}");
    // other subcommands keep clap's usual 2
    let out = command(&["serve", "--no-such-flag"], &[]).stdin(Stdio::null()).output().await.unwrap();
    assert_eq!(out.status.code(), Some(2));
    // a file that cannot be read is not a broken chain (1) either: EX_NOINPUT, on standard error
    let missing = fresh_audit_path();
    let out =
        command(&["audit", "verify", missing.to_str().unwrap()], &[]).stdin(Stdio::null()).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(66), "{stderr}");
    assert!(out.stdout.is_empty() && stderr.contains("No such file"), "{stderr}");
}

/// A server started on an audit log that no longer verifies says so as it starts (it goes on
/// appending: refusing would stop every create until someone moves the file).
#[tokio::test]
async fn a_server_started_on_a_broken_audit_log_says_so() {
    let log = fresh_audit_path();
    let args = ["--toolsets", "metros,mutate", "--audit-log", log.to_str().unwrap()];
    Launch::serve().args(&args).stdio().await.stop().await;
    let first = Launch::serve().args(&args).stdio().await;
    assert!(!first.stderr_text().contains("does not verify"), "{}", first.stderr_text());
    first.stop().await;
    // an edit to the first record: it is no longer what the next one links to
    let text = std::fs::read_to_string(&log).unwrap();
    let edited = text.replacen("audit_log_opened", "audit_log_OPENED", 1);
    assert_ne!(edited, text);
    std::fs::write(&log, edited).unwrap();
    let again = Launch::serve().args(&args).stdio().await;
    wait_until("the start-up check's warning", async || again.stderr_text().contains("does not verify")).await;
    let said = again.stderr_text();
    assert!(said.contains(&format!("the audit log {} does not verify: line 1", log.display())), "{said}");
    assert!(said.contains("move the file aside"), "{said}");
}

/// Names are found the way a person types them (`dc-pri` finds the DC-PRI ports, `DC-FCR` the
/// connection `dc-fcr-to-aws`), and a name that matches nothing says how names are matched.
#[tokio::test]
async fn names_are_found_the_way_a_person_types_them() {
    let server = Launch::serve().args(&["--toolsets", "all"]).stdio().await;
    let names = |page: &serde_json::Value, key: &str| -> Vec<String> {
        rows(page, key).iter().map(|r| r["name"].as_str().unwrap().to_string()).collect()
    };
    let ports = names(&server.ok("fabric_search_ports", serde_json::json!({"name": "dc-pri"})).await, "ports");
    assert!(!ports.is_empty() && ports.iter().all(|n| n.contains("DC-PRI")), "{ports:?}");
    let found = server.ok("fabric_search_connections", serde_json::json!({"name": "DC-FCR"})).await;
    assert!(names(&found, "connections").contains(&"dc-fcr-to-aws".to_string()), "{found}");
    assert!(found.get("note").is_none(), "{found}");

    let none = server.ok("fabric_search_connections", serde_json::json!({"name": "no-such-name"})).await;
    assert_eq!(none["returned"], 0, "{none}");
    let note = none["note"].as_str().unwrap_or_default();
    assert!(note.contains("as typed, in lower case or in upper case") && note.contains("port_id"), "{none}");
    let none = server.ok("fabric_search_networks", serde_json::json!({"name": "NO-SUCH"})).await;
    assert!(none["note"].as_str().unwrap_or_default().contains("\"NO-SUCH\" in any case"), "{none}");
    server.stop().await;
}

/// Under a policy, a metro Fabric does not know gets Fabric's own answer, with the read tool that
/// lists metros, rather than a denial that sends the agent to the operator; a metro that exists
/// is still denied by the same policy without a dry run, and nothing is ever validated.
#[tokio::test]
async fn an_unknown_metro_under_a_policy_gets_fabrics_answer() {
    let policy = crate::policy::policy_file(
        r#"@id("dc-only") permit (principal, action, resource) when { ["DC"].containsAll(resource.metros) };"#,
    );
    let server =
        Launch::serve().args(&["--toolsets", "all,mutate", "--policy", policy.to_str().unwrap()]).stdio().await;
    let sim = embedded_sim_url(&server).await;
    let in_metro = |metro: &str| {
        let mut spec = connection_spec("to-nowhere", 1300);
        spec["zSide"]["accessPoint"]["location"] = serde_json::json!({"metroCode": metro});
        serde_json::json!({"change_type": "connection_create", "spec": spec})
    };
    let dry_runs = async || sim_stats(&sim).await["dry_runs"]["connections"].as_u64().unwrap_or(0);

    let before = dry_runs().await;
    let unknown = server.refused("fabric_propose_change", in_metro("XX")).await;
    assert_ne!(unknown["kind"], "policy_denied", "{unknown}");
    assert!(unknown.to_string().contains("metro XX does not exist"), "{unknown}");
    assert!(unknown["next_step"].as_str().unwrap_or_default().contains("fabric_list_metros"), "{unknown}");
    // the words are the simulator's validator's: Fabric was asked, and refused (a refused dry run
    // is not counted)
    assert_eq!(dry_runs().await, before, "nothing was validated");

    let elsewhere = server.refused("fabric_propose_change", in_metro("SV")).await;
    assert_eq!(elsewhere["kind"], "policy_denied", "{elsewhere}");
    assert_eq!(dry_runs().await, before, "a denial of a metro that exists sends nothing");

    // Fabric says a metro does not exist and then validates a body in it: the denial stands
    inject(&sim, serde_json::json!({"route": "GET /fabric/v4/metros/SV", "mode": "respond", "status": 404})).await;
    let validated = server.refused("fabric_propose_change", in_metro("SV")).await;
    assert_eq!(validated["kind"], "policy_denied", "{validated}");
    assert!(validated.get("confirm_token").is_none(), "{validated}");
    assert_eq!(dry_runs().await, before + 1, "the dry run went, and its 2xx counted for nothing");

    // a code that is not a plain metro code never reaches Fabric (the schema refuses it here; the
    // host asks nothing about one a component slips into a body, and the denial stands)
    let odd = server.refused("fabric_propose_change", in_metro("X-1")).await;
    assert_eq!(odd["kind"], "invalid_arguments", "{odd}");
    assert_eq!(dry_runs().await, before + 1, "{odd}");
    server.stop().await;
}

/// A first answer from the shell, with no MCP client: `call` runs one read-only tool by the
/// server's own code and prints its result; a tool error is printed too, with exit status 1;
/// bad arguments and tools that change Fabric are refused before anything is sent.
#[tokio::test]
async fn one_read_only_tool_call_from_the_shell() {
    let (ok, out, err) =
        run_to_exit(&["call", "fabric_search_ports", r#"{"name": "dc-pri"}"#, "--fabric-sim"], &[]).await;
    assert!(ok, "{err}");
    let page: serde_json::Value = serde_json::from_str(&out).unwrap();
    let names: Vec<String> = rows(&page, "ports").iter().map(|r| r["name"].as_str().unwrap().to_string()).collect();
    assert!(!names.is_empty() && names.iter().all(|n| n.contains("DC-PRI")), "{out}");

    // a routing tool, outside the default toolsets: `call` serves every read toolset
    let (ok, out, err) =
        run_to_exit(&["call", "fabric_list_cloud_router_packages", "--fabric-sim", "--compact"], &[]).await;
    assert!(ok && out.lines().count() == 1, "{out}{err}");

    let (ok, out, _) = run_to_exit(&["call", "fabric_search_ports", r#"{"limit": 0}"#, "--fabric-sim"], &[]).await;
    let answer: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(!ok && answer["error"]["problems"].to_string().contains("/limit"), "{out}");

    for (args, said) in [
        (vec!["call", "fabric_list_metros", "{", "--fabric-sim"], "the arguments are not JSON"),
        (vec!["call", "fabric_list_metros", "[1]", "--fabric-sim"], "must be a JSON object"),
        (vec!["call", "fabric_list_metro", "--fabric-sim"], "no tool is called \"fabric_list_metro\""),
        (vec!["call", "fabric_propose_change", "{}", "--fabric-sim"], "propose and confirm from an MCP client"),
        (
            vec!["call", "fabric_search_events", "--fabric-sim", "--toolsets", "ports"],
            "is in the \"events\" toolset, which --toolsets ports leaves out",
        ),
    ] {
        let (ok, out, err) = run_to_exit(&args, &[]).await;
        assert!(!ok && out.is_empty() && err.contains(said), "{args:?}: {err}");
    }
}
