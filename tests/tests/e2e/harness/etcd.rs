//! A real three-member etcd cluster per test (Debian's `etcd-server`), on free loopback ports,
//! each member with a data folder of its own. Members can be killed with SIGKILL and started
//! again on their data: a member back rejoins the cluster. What each printed is shown when the
//! test that started them fails.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Member {
    name: String,
    /// Its address, and the network namespace it runs in (None: this machine's loopback).
    host: String,
    netns: Option<String>,
    client: u16,
    /// The client port that speaks TLS, beside the plain one the harness's checks use.
    tls_client: u16,
    peer: u16,
    child: Option<Child>,
}

pub struct EtcdCluster {
    members: Vec<Member>,
    dir: PathBuf,
    /// Arguments every member is started with beyond the cluster's own.
    extra: Vec<String>,
    /// The certificate and key the TLS client ports serve (none: no TLS port).
    tls: Option<(PathBuf, PathBuf)>,
}

impl EtcdCluster {
    /// Three members, started together, once a linearizable read answers.
    pub fn start() -> EtcdCluster {
        EtcdCluster::start_on(loopback())
    }

    /// One member per (address, network namespace), started together, once a linearizable read
    /// answers.
    pub fn start_on(hosts: Vec<(String, Option<String>)>) -> EtcdCluster {
        EtcdCluster::start_with(hosts, &[], None)
    }

    /// Three members on loopback started with `extra` arguments too.
    pub fn start_with_args(extra: &[&str]) -> EtcdCluster {
        EtcdCluster::start_with(loopback(), extra, None)
    }

    /// Three members on loopback that also serve clients over TLS with `cert` and `key` (see
    /// [`EtcdCluster::tls_url`]).
    pub fn start_tls(cert: PathBuf, key: PathBuf) -> EtcdCluster {
        EtcdCluster::start_with(loopback(), &[], Some((cert, key)))
    }

    fn start_with(
        hosts: Vec<(String, Option<String>)>,
        extra: &[&str],
        tls: Option<(PathBuf, PathBuf)>,
    ) -> EtcdCluster {
        let dir = super::fresh_audit_path().with_extension("etcd");
        std::fs::create_dir_all(&dir).unwrap();
        let members = hosts
            .into_iter()
            .enumerate()
            .map(|(i, (host, netns))| Member {
                name: format!("m{i}"),
                host,
                netns,
                client: super::free_port(),
                tls_client: super::free_port(),
                peer: super::free_port(),
                child: None,
            })
            .collect();
        let extra = extra.iter().map(|a| a.to_string()).collect();
        let mut cluster = EtcdCluster { members, dir, extra, tls };
        for i in 0..cluster.members.len() {
            cluster.resume(i);
        }
        cluster.until_quorum();
        cluster
    }

    /// `etcd://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`
    pub fn url(&self) -> String {
        self.urls("etcd", |m| m.client)
    }

    /// `etcds://127.0.0.1:T1,...`: the members' TLS client ports.
    pub fn tls_url(&self) -> String {
        self.urls("etcds", |m| m.tls_client)
    }

    fn urls(&self, scheme: &str, port: impl Fn(&Member) -> u16) -> String {
        let hosts: Vec<_> = self.members.iter().map(|m| format!("{}:{}", m.host, port(m))).collect();
        format!("{scheme}://{}", hosts.join(","))
    }

    /// Kills member `i` with SIGKILL.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts member `i` (again) on its data folder.
    pub fn resume(&mut self, i: usize) {
        let cluster: Vec<String> =
            self.members.iter().map(|m| format!("{}=http://{}:{}", m.name, m.host, m.peer)).collect();
        let m = &self.members[i];
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.log(i)).unwrap();
        let mut command = super::netns::command(m.netns.as_deref(), "etcd");
        let mut clients = format!("http://{}:{}", m.host, m.client);
        if let Some((cert, key)) = &self.tls {
            clients.push_str(&format!(",https://{}:{}", m.host, m.tls_client));
            command.arg("--cert-file").arg(cert).arg("--key-file").arg(key);
        }
        let child = command
            .args(["--name", &m.name, "--data-dir", self.dir.join(&m.name).to_str().unwrap()])
            .args(["--listen-client-urls", &clients])
            .args(["--advertise-client-urls", &clients])
            .args(["--listen-peer-urls", &format!("http://{}:{}", m.host, m.peer)])
            .args(["--initial-advertise-peer-urls", &format!("http://{}:{}", m.host, m.peer)])
            .args(["--initial-cluster", &cluster.join(","), "--initial-cluster-state", "new"])
            .args(["--initial-cluster-token", &format!("equinix-mcp-test-{}", self.dir.display())])
            // an election within about a second, as a busy 2-core machine allows
            .args(["--heartbeat-interval", "100", "--election-timeout", "1000", "--pre-vote"])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start etcd ({e}): `.ci/install-etcd` installs it"));
        self.members[i].child = Some(child);
    }

    /// Sends `signal` (`-STOP`, `-CONT`) to member `i`: a stopped leader is, to the others, a
    /// leader cut off from them; continued, it finds a newer term and steps down.
    pub fn signal(&self, i: usize, signal: &str) {
        let pid = self.members[i].child.as_ref().expect("the member runs").id();
        let done = Command::new("kill").args([signal, &pid.to_string()]).status().unwrap();
        assert!(done.success(), "kill {signal} {pid}");
    }

    /// The member the answering members name as leader, by index.
    pub fn leader(&self) -> Option<usize> {
        let mut ids = Vec::new();
        let mut leader = None;
        for m in &self.members {
            let status = post(&m.host, m.client, "/v3/maintenance/status", "{}");
            let field = |name: &str| {
                let at = status.find(&format!("\"{name}\":\""))? + name.len() + 4;
                Some(status[at..at + status[at..].find('"')?].to_string())
            };
            ids.push(field("member_id"));
            leader = leader.or(field("leader").filter(|l| l != "0"));
        }
        let leader = leader?;
        ids.iter().position(|id| id.as_deref() == Some(leader.as_str()))
    }

    /// Turns on etcd's authentication: a `root` user (etcd requires one) and `user` with
    /// `password`, allowed to read and write only the keys under `prefix`.
    pub fn enable_auth(&self, user: &str, password: &str, prefix: &str) {
        use base64::Engine as _;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let mut end = prefix.as_bytes().to_vec();
        *end.last_mut().unwrap() += 1;
        let root_password = format!("root-{}", std::process::id());
        let m = &self.members[0];
        for (path, body) in [
            ("/v3/auth/role/add", r#"{"name":"root"}"#.to_string()),
            ("/v3/auth/user/add", format!(r#"{{"name":"root","password":"{root_password}"}}"#)),
            ("/v3/auth/user/grant", r#"{"user":"root","role":"root"}"#.to_string()),
            ("/v3/auth/role/add", format!(r#"{{"name":"{user}"}}"#)),
            (
                "/v3/auth/role/grant",
                format!(
                    r#"{{"name":"{user}","perm":{{"permType":"READWRITE","key":"{}","range_end":"{}"}}}}"#,
                    b64(prefix.as_bytes()),
                    b64(&end)
                ),
            ),
            ("/v3/auth/user/add", format!(r#"{{"name":"{user}","password":"{password}"}}"#)),
            ("/v3/auth/user/grant", format!(r#"{{"user":"{user}","role":"{user}"}}"#)),
            ("/v3/auth/enable", "{}".to_string()),
        ] {
            let answer = post(&m.host, m.client, path, &body);
            assert!(answer.starts_with("HTTP/1.1 200"), "{path}: {answer}");
        }
    }

    /// Waits until a linearizable read answers (a leader with its quorum).
    pub fn until_quorum(&self) {
        super::wait::until_blocking("the etcd cluster to have a quorum", Duration::from_secs(30), || {
            self.members.iter().any(|m| self.answers(m)).then_some(())
        })
    }

    /// Whether the member answers a linearizable read with 200 (or, authentication on, refuses
    /// it for want of a user: it could only say so with its quorum).
    fn answers(&self, m: &Member) -> bool {
        let answer = post(&m.host, m.client, "/v3/kv/range", r#"{"key":"cGluZw=="}"#);
        answer.starts_with("HTTP/1.1 200") || answer.contains("user name is empty")
    }

    fn log(&self, i: usize) -> PathBuf {
        self.dir.join(format!("{}.log", self.members[i].name))
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
        if std::thread::panicking() {
            for i in 0..self.members.len() {
                let log = std::fs::read_to_string(self.log(i)).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect();
                eprintln!("--- etcd member {i} (last lines) ---\n{}", tail.join("\n"));
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Three members' places on this machine's loopback.
fn loopback() -> Vec<(String, Option<String>)> {
    (0..3).map(|_| ("127.0.0.1".to_string(), None)).collect()
}

/// POSTs `body` to `path` on the member's client port and returns the whole answer (empty when
/// it does not answer within 2 s). HTTP/1.1 by hand: a blocking check needs no client.
fn post(host: &str, port: u16, path: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let Ok(address) = format!("{host}:{port}").parse::<std::net::SocketAddr>() else { return String::new() };
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2)) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut answer = String::new();
    if s.write_all(request.as_bytes()).is_err() || s.read_to_string(&mut answer).is_err() {
        return String::new();
    }
    answer
}
