//! The streamable HTTP transport: the same catalog and broker over `--transport http` on
//! loopback, with elicitation in session mode.

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

/// Spawns `serve --transport http` on a free loopback port; returns the child, its URL and the
/// embedded simulator's URL, read from stderr.
async fn http_server(extra: &[&str]) -> (tokio::process::Child, String, String) {
    let mut args = vec!["serve", "--fabric-sim", "--transport", "http", "--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let mut cmd = command(&args, &[]);
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let (mut mcp, mut sim) = (None, None);
    while mcp.is_none() || sim.is_none() {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .expect("server exited");
        if let Some(at) = line.find("listening on ") {
            mcp = Some(line[at + 13..].trim().to_string());
        }
        if let Some(at) = line.find("simulator at ") {
            sim = Some(line[at + 13..].split(' ').next().unwrap().to_string());
        }
    }
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, mcp.unwrap(), sim.unwrap())
}

#[tokio::test]
async fn the_catalog_and_the_broker_work_over_streamable_http() {
    equinix_mcp::install_crypto_provider();
    let (mut child, url, sim) = http_server(&["--toolsets", "all,mutate"]).await;
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    let client = TestClient::answering(Answer::Accept { confirm: true });
    let service = client.clone().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap();
    let tools = service.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "fabric_propose_change"));

    let call = |name: &str, args: Value| {
        CallToolRequestParams::new(name.to_string()).with_arguments(args.as_object().unwrap().clone())
    };
    let metros = service.call_tool(call("fabric_list_metros", json!({"limit": 2}))).await.unwrap();
    assert_eq!(metros.structured_content.unwrap()["next_offset"], 2);

    let spec = json!({"type": "EVPL_VC", "name": "over-http", "bandwidth": 100,
        "aSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a600"}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 3600}}},
        "zSide": {"accessPoint": {"type": "COLO", "port": {"uuid": "c4d9350e-783c-83cd-1ce0-306a5c00a610"}, "linkProtocol": {"type": "DOT1Q", "vlanTag": 3600}}},
        "notifications": [{"type": "ALL", "emails": ["noc@example.com"]}]});
    let p = service
        .call_tool(call("fabric_propose_change", json!({"change_type": "connection_create", "spec": spec})))
        .await
        .unwrap();
    let token = p.structured_content.unwrap()["confirm_token"].clone();
    let c = service.call_tool(call("fabric_confirm_change", json!({"confirm_token": token}))).await.unwrap();
    let out = c.structured_content.unwrap();
    assert_eq!(out["executed"], true, "{out}");
    assert_eq!(client.prompt_texts().len(), 1, "the person was asked over the HTTP session");
    assert_eq!(creates(&sim, "connections").await, 1);
    let _ = service.cancel().await;
    child.kill().await.unwrap();
}

#[tokio::test]
async fn http_refuses_to_listen_beyond_loopback() {
    let (ok, _, stderr) =
        run_to_exit(&["serve", "--fabric-sim", "--transport", "http", "--listen", "0.0.0.0:0"], &[]).await;
    assert!(!ok);
    assert!(stderr.contains("not a loopback address"), "{stderr}");
}
