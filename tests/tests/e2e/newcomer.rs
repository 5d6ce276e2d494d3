//! Issue 45, what a newcomer hit on the simulator: each fixed here has a test.

use std::process::Stdio;

use crate::harness::*;

/// A reader that stops early (`inspect | head -1`) ends the output quietly, with success: the
/// pipe is closed before anything is written, so every write meets it closed.
#[tokio::test]
async fn a_closed_pipe_on_standard_output_ends_a_command_quietly() {
    for args in [vec!["inspect"], vec!["tools"], vec!["inspect", "--json"]] {
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
#[tokio::test]
async fn boolean_environment_variables_take_1_yes_and_on() {
    for truthy in ["1", "yes", "on", "true"] {
        let (ok, stdout, stderr) = run_to_exit(&["inspect"], &[("EQUINIX_MCP_INSPECT_JSON", truthy)]).await;
        assert!(ok, "{truthy}: {stderr}");
        assert!(serde_json::from_str::<serde_json::Value>(&stdout).is_ok(), "{truthy} means JSON: {stdout}");
    }
    let (ok, stdout, stderr) = run_to_exit(&["inspect"], &[("EQUINIX_MCP_INSPECT_JSON", "0")]).await;
    assert!(ok && serde_json::from_str::<serde_json::Value>(&stdout).is_err(), "0 means text: {stderr}");
    let (ok, _, stderr) = run_to_exit(&["inspect"], &[("EQUINIX_MCP_INSPECT_JSON", "maybe")]).await;
    assert!(!ok && stderr.contains("maybe"), "an unknown word is refused, naming it: {stderr}");
}
