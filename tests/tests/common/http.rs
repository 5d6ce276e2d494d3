//! `serve --transport http` children and rmcp clients connected to them.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use tokio::io::AsyncBufReadExt;

use equinix_mcp::fabric_sim::SimHandle;

use super::{TestClient, command};

/// A running HTTP server on its embedded simulator.
pub struct HttpServer {
    pub child: tokio::process::Child,
    /// `http://ADDR/mcp`
    pub url: String,
    /// The embedded simulator's base URL.
    pub sim: String,
    pub stderr: Arc<Mutex<String>>,
    pub audit_log: PathBuf,
}

impl HttpServer {
    /// Spawns `serve --fabric-sim --transport http --listen LISTEN` plus `extra`, and waits for
    /// the listening line.
    pub async fn start(listen: &str, extra: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let mut args = vec!["serve", "--fabric-sim", "--transport", "http", "--listen", listen];
        args.extend_from_slice(extra);
        Self::spawn(&args, env, None).await
    }

    /// Like [`HttpServer::start`] against a simulator of the test's (several replicas share it).
    pub async fn start_against(sim: &SimHandle, extra: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let mut args = vec!["serve", "--transport", "http", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let sim_env = super::sim_env(sim);
        let mut all: Vec<(&str, &str)> = sim_env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        all.extend_from_slice(env);
        Self::spawn(&args, &all, Some(sim.base_url())).await
    }

    async fn spawn(args: &[&str], env: &[(&str, &str)], sim: Option<String>) -> HttpServer {
        let mut cmd = command(args, env);
        let audit_log = super::audit_log_of(&cmd);
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (mut url, mut sim) = (None, sim);
        while url.is_none() || sim.is_none() {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("no listening line within 30 s")
                .unwrap()
                .unwrap_or_else(|| panic!("server exited:\n{}", stderr.lock().unwrap()));
            stderr.lock().unwrap().push_str(&format!("{line}\n"));
            if let Some(at) = line.find("listening on ") {
                url = line[at + 13..].split_whitespace().next().map(str::to_string);
            }
            if let Some(at) = line.find("simulator at ") {
                sim = line[at + 13..].split_whitespace().next().map(str::to_string);
            }
        }
        let sink = stderr.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        HttpServer { child, url: url.unwrap(), sim: sim.unwrap(), stderr, audit_log }
    }

    /// Connects an rmcp client, with a bearer token when given, on the initialize lifecycle or
    /// (`stateless`) the 2026-07-28 discover lifecycle.
    pub async fn connect(
        &self,
        token: Option<&str>,
        client: TestClient,
        stateless: bool,
    ) -> RunningService<RoleClient, TestClient> {
        connect(&self.url, token, client, stateless).await.unwrap()
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn audit_entries(&self) -> Vec<serde_json::Value> {
        super::read_audit(&self.audit_log)
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let pid = self.child.id().expect("still running");
        let sent = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
        assert!(sent.success());
    }
}

pub async fn connect(
    url: &str,
    token: Option<&str>,
    client: TestClient,
    stateless: bool,
) -> anyhow::Result<RunningService<RoleClient, TestClient>> {
    equinix_mcp::install_crypto_provider();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(token) = token {
        config = config.auth_header(token.to_string());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let service = if stateless {
        let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        tokio::time::timeout(Duration::from_secs(30), client.serve_with_lifecycle(transport, lifecycle)).await??
    } else {
        tokio::time::timeout(Duration::from_secs(30), client.serve(transport)).await??
    };
    Ok(service)
}

/// Writes a bearer-token file (mode 600) and returns its path.
pub fn token_file(lines: &[(&str, &str)]) -> PathBuf {
    let path = super::fresh_audit_path().with_extension("tokens");
    let text: String = lines.iter().map(|(label, token)| format!("{label} {token}\n")).collect();
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path
}
