//! A person's own account, as the docs address it: a fresh home directory and nothing set but
//! `PATH` and `HOME`, so every file is where the defaults put it (`~/.local/state/equinix-mcp/`,
//! `~/.cache/equinix-mcp/`). When the tests run as root, the account's commands run as an
//! unprivileged user that owns the home, as a person's would: a default path that works only for
//! root is a defect this finds.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;

use super::client::TestClient;
use super::launch::Server;
use super::printed::Printed;
use super::process::binary;

/// `nobody`: no login, no files of its own but the ones made here.
const UNPRIVILEGED: u32 = 65534;

/// The user a service runs as in the tests: `nobody` when the tests run as root (as systemd's
/// `DynamicUser` would be some unprivileged user), none (the tests' own) otherwise.
pub fn service_user() -> Option<u32> {
    (rustix::process::geteuid().is_root()).then_some(UNPRIVILEGED)
}

pub struct Account {
    home: tempfile::TempDir,
    /// The user the commands run as, when not the tests' own.
    uid: Option<u32>,
}

impl Account {
    pub fn fresh() -> Account {
        let home = tempfile::Builder::new().prefix("equinix-mcp-home-").tempdir().unwrap();
        let uid = match std::fs::metadata(home.path()).unwrap().uid() {
            0 => {
                std::os::unix::fs::chown(home.path(), Some(UNPRIVILEGED), Some(UNPRIVILEGED)).unwrap();
                Some(UNPRIVILEGED)
            }
            _ => None,
        };
        Account { home, uid }
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Where the docs say the state is on Linux: `$XDG_STATE_HOME/equinix-mcp`, by default
    /// `~/.local/state/equinix-mcp`.
    pub fn state_dir(&self) -> PathBuf {
        self.home().join(".local/state/equinix-mcp")
    }

    /// The default audit log.
    pub fn audit_log(&self) -> PathBuf {
        self.state_dir().join("audit.jsonl")
    }

    /// Writes `text` to `name` in the home, the account's own file.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.home().join(name);
        std::fs::write(&path, text).unwrap();
        if let Some(uid) = self.uid {
            std::os::unix::fs::chown(&path, Some(uid), Some(uid)).unwrap();
        }
        path
    }

    /// `equinix-mcp ARGS` as this account runs it (a `program` other than the binary: `exe`).
    pub fn command_of(&self, exe: &Path, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(exe);
        cmd.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default()).env("HOME", self.home());
        if let Some(uid) = self.uid {
            cmd.uid(uid).gid(uid);
        }
        cmd.args(args).kill_on_drop(true);
        cmd
    }

    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        self.command_of(&binary(), args)
    }

    /// Runs `args` to completion: (success, stdout, stderr).
    pub async fn run(&self, args: &[&str]) -> (bool, String, String) {
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::null());
        let out = tokio::time::timeout(Duration::from_secs(60), cmd.output()).await.expect("timed out").unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    }

    /// A stdio server started with exactly `args`, as an MCP client's configuration starts it,
    /// with `client` connected.
    pub async fn serve(&self, args: &[&str], client: TestClient) -> Server {
        let cmd = self.command(args);
        let (transport, stderr) = TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn().unwrap();
        let pid = transport.id();
        let captured = Printed::new(format!("equinix-mcp {} (as a user)", args.join(" ")));
        if let Some(stderr) = stderr {
            captured.collect(stderr);
        }
        // a fresh home compiles the component once (no cache yet): longer than a warm start
        let client = tokio::time::timeout(Duration::from_secs(120), client.serve(transport))
            .await
            .expect("the server answers initialize within 120 s")
            .expect("the client connects");
        Server::new(client, captured, self.audit_log(), pid)
    }
}
