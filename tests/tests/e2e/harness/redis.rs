//! A real `redis-server` per test, on a free loopback port, without persistence; it can be
//! stopped and started again on the same port to test an outage. What it printed (every run of
//! it on that port) is shown when the test that started it fails.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::Duration;

pub struct RedisServer {
    child: Option<Child>,
    /// Its address, and the network namespace it runs in (None: this machine's loopback).
    pub host: String,
    netns: Option<String>,
    pub port: u16,
    dir: PathBuf,
    /// Arguments beyond port, bind and no persistence (replication, a password).
    pub args: Vec<String>,
    /// The `requirepass` its commands here authenticate with.
    password: Option<String>,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        Self::start_with(Vec::new(), None)
    }

    /// A server started with `args` added, whose commands here send `AUTH password` first.
    pub fn start_with(args: Vec<String>, password: Option<&str>) -> RedisServer {
        Self::start_on("127.0.0.1", None, args, password)
    }

    /// A server that also serves TLS with `cert` and `key` on its second port (returned), which
    /// `rediss://` URLs name; the plain port stays for the harness's own checks.
    pub fn start_tls(cert: &std::path::Path, key: &std::path::Path) -> (RedisServer, u16) {
        let tls_port = super::free_port();
        let mut args: Vec<String> = vec!["--tls-port".into(), tls_port.to_string()];
        for (flag, file) in [("--tls-cert-file", cert), ("--tls-key-file", key), ("--tls-ca-cert-file", cert)] {
            args.extend([flag.to_string(), file.display().to_string()]);
        }
        args.extend(["--tls-auth-clients".into(), "no".into()]);
        (Self::start_with(args, None), tls_port)
    }

    /// [`RedisServer::start_with`] on `host`, in the network namespace `netns` when given.
    pub fn start_on(host: &str, netns: Option<&str>, args: Vec<String>, password: Option<&str>) -> RedisServer {
        let port = super::free_port();
        let dir = super::fresh_audit_path().with_extension("redis");
        std::fs::create_dir_all(&dir).unwrap();
        let (host, netns, password) = (host.to_string(), netns.map(str::to_string), password.map(str::to_string));
        let mut server = RedisServer { child: None, host, netns, port, dir, args, password };
        server.resume();
        server
    }

    /// Stops (SIGSTOP) or continues (SIGCONT) the process: a paused replica acknowledges nothing.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("the server runs").id();
        let done = Command::new("kill").args([signal, &pid.to_string()]).status().unwrap();
        assert!(done.success(), "kill {signal} {pid}");
    }

    /// `redis://127.0.0.1:PORT/DB`
    pub fn url(&self, db: u8) -> String {
        format!("redis://{}:{}/{db}", self.host, self.port)
    }

    /// Stops the server (its data is gone: no persistence).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it (again) on the same port and waits until it answers PING.
    pub fn resume(&mut self) {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.log()).unwrap();
        let mut command = super::netns::command(self.netns.as_deref(), "redis-server");
        let child = command
            .args(["--port", &self.port.to_string(), "--bind", &self.host, "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.args)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start redis-server ({e}): install it (`.ci/install-redis` does, from Debian's package)")
            });
        self.child = Some(child);
        let port = self.port;
        super::wait::until_blocking(
            &format!("redis-server on port {port} to answer PING"),
            super::wait::WITHIN,
            || {
                if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                    panic!("redis-server on port {port} exited with {status} before answering PING");
                }
                self.answers_ping().then_some(())
            },
        );
    }

    /// The number of keys in database 0 (`DBSIZE`).
    pub fn dbsize(&self) -> u64 {
        let said = self.ask(b"DBSIZE\r\n").unwrap();
        said.strip_prefix(':').and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("DBSIZE said {said:?}"))
    }

    /// Makes this server a replica of a primary at `port` (what a failover does to a demoted
    /// primary: it keeps its data and refuses writes), or with `None` a primary again.
    pub fn replica_of(&self, port: Option<u16>) {
        let command = match port {
            Some(p) => format!("REPLICAOF 127.0.0.1 {p}\r\n"),
            None => "REPLICAOF NO ONE\r\n".to_string(),
        };
        let said = self.ask(command.as_bytes()).unwrap();
        assert!(said.starts_with("+OK"), "REPLICAOF said {said:?}");
    }

    /// Sends one inline command and reads the one-line answer (without its CRLF).
    fn ask(&self, command: &[u8]) -> std::io::Result<String> {
        let mut s = self.session()?;
        s.write_all(command)?;
        line(&mut s)
    }

    /// A connection, authenticated when the server has a password.
    fn session(&self) -> std::io::Result<TcpStream> {
        let mut s = TcpStream::connect((self.host.as_str(), self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(1)))?;
        if let Some(password) = &self.password {
            s.write_all(format!("AUTH {password}\r\n").as_bytes())?;
            let said = line(&mut s)?;
            assert_eq!(said, "+OK", "AUTH");
        }
        Ok(s)
    }

    /// `command`'s answer as lines: a simple answer, or each element of an array of bulk strings
    /// (`ROLE`, `SENTINEL get-master-addr-by-name`); nested arrays are flattened.
    pub fn query(&self, command: &str) -> std::io::Result<Vec<String>> {
        query_at(self.session()?, command)
    }

    /// `role` of `ROLE`: `master` or `slave`.
    pub fn role(&self) -> Option<String> {
        self.query("ROLE").ok()?.into_iter().next()
    }

    fn log(&self) -> PathBuf {
        self.dir.join("redis-server.log")
    }

    fn answers_ping(&self) -> bool {
        self.ask(b"PING\r\n").is_ok_and(|said| said == "+PONG")
    }
}

/// One line of an answer, without its CRLF.
fn line(s: &mut TcpStream) -> std::io::Result<String> {
    let mut answer = Vec::new();
    let mut b = [0u8; 1];
    while !answer.ends_with(b"\r\n") {
        s.read_exact(&mut b)?;
        answer.push(b[0]);
    }
    answer.truncate(answer.len() - 2);
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// Sends `command` on `s` and reads its answer (see [`RedisServer::query`]).
pub fn query_at(mut s: TcpStream, command: &str) -> std::io::Result<Vec<String>> {
    s.write_all(format!("{command}\r\n").as_bytes())?;
    let mut out = Vec::new();
    let mut expected = 1i64;
    while expected > 0 {
        let head = line(&mut s)?;
        expected -= 1;
        match head.split_at(1) {
            ("*", n) => expected += n.parse::<i64>().unwrap_or(0).max(0),
            ("$", n) if n.starts_with('-') => out.push(String::new()),
            ("$", n) => {
                let mut bulk = vec![0u8; n.parse::<usize>().unwrap_or(0) + 2];
                s.read_exact(&mut bulk)?;
                bulk.truncate(bulk.len() - 2);
                out.push(String::from_utf8_lossy(&bulk).into_owned());
            }
            (_, rest) if head.starts_with('-') => out.push(format!("-{rest}")),
            (_, rest) => out.push(rest.to_string()),
        }
    }
    Ok(out)
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
        // libtest shows a failing test's captured output, this included
        if std::thread::panicking() {
            let printed = std::fs::read_to_string(self.log()).unwrap_or_default();
            eprintln!("--- what redis-server on port {} printed ---\n{printed}--- end of redis-server ---", self.port);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
