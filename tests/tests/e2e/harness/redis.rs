//! A real `redis-server` per test, on a free loopback port, without persistence; it can be
//! stopped and started again on the same port to test an outage. What it printed (every run of
//! it on that port) is shown when the test that started it fails.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
    dir: PathBuf,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        let port = super::free_port();
        let dir = super::fresh_audit_path().with_extension("redis");
        std::fs::create_dir_all(&dir).unwrap();
        let mut server = RedisServer { child: None, port, dir };
        server.resume();
        server
    }

    /// `redis://127.0.0.1:PORT/DB`
    pub fn url(&self, db: u8) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.port)
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
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start redis-server ({e}): install it (`.ci/install-redis` does, from Debian's package)")
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.answers_ping() {
            if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!("redis-server on port {} exited with {status} before answering PING", self.port);
            }
            assert!(Instant::now() < deadline, "redis-server on port {} did not answer PING", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
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
        let mut s = TcpStream::connect(("127.0.0.1", self.port))?;
        s.set_read_timeout(Some(Duration::from_secs(1)))?;
        s.write_all(command)?;
        let mut answer = Vec::new();
        let mut b = [0u8; 1];
        while !answer.ends_with(b"\r\n") {
            s.read_exact(&mut b)?;
            answer.push(b[0]);
        }
        answer.truncate(answer.len() - 2);
        Ok(String::from_utf8_lossy(&answer).into_owned())
    }

    fn log(&self) -> PathBuf {
        self.dir.join("redis-server.log")
    }

    fn answers_ping(&self) -> bool {
        self.ask(b"PING\r\n").is_ok_and(|said| said == "+PONG")
    }
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
