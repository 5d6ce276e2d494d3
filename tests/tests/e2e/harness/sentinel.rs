//! A real Redis Sentinel deployment on loopback: a primary, two replicas and three Sentinels
//! (Debian's `redis-server` and `redis-sentinel`), with a password on the data nodes and
//! Sentinel's timeouts set short so a failover takes a second or two. Nodes can be killed with
//! SIGKILL, paused and brought back as replicas of whichever node is primary now.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use super::redis::{RedisServer, query_at};

pub const MASTER: &str = "store";
pub const PASSWORD: &str = "store-password-6b1f";
/// How long a Sentinel waits before it calls a silent primary down.
const DOWN_AFTER_MS: u64 = 1500;

pub struct Cluster {
    /// Every data node, the primary among them (see [`Cluster::primary`]).
    pub nodes: Vec<RedisServer>,
    /// Each Sentinel's process, address and port.
    sentinels: Vec<(Child, String, u16)>,
    dir: PathBuf,
}

impl Cluster {
    pub fn start() -> Cluster {
        let loopback = || ("127.0.0.1".to_string(), None);
        Cluster::start_on([loopback(), loopback(), loopback()], [loopback(), loopback(), loopback()])
    }

    /// The first data node primary, the others its replicas, and the Sentinels, each on its
    /// (address, network namespace).
    pub fn start_on(data: [(String, Option<String>); 3], sentinels: [(String, Option<String>); 3]) -> Cluster {
        let [(host, netns), replicas @ ..] = data;
        let primary = RedisServer::start_on(&host, netns.as_deref(), node_args(None), Some(PASSWORD));
        let replicas: Vec<_> = replicas
            .iter()
            .map(|(h, ns)| {
                RedisServer::start_on(h, ns.as_deref(), node_args(Some((&host, primary.port))), Some(PASSWORD))
            })
            .collect();
        let dir = super::fresh_audit_path().with_extension("sentinels");
        std::fs::create_dir_all(&dir).unwrap();
        let mut cluster = Cluster { nodes: vec![primary], sentinels: Vec::new(), dir };
        cluster.nodes.extend(replicas);
        cluster.wait_replicas_linked(2);
        let primary = cluster.nodes[0].port;
        for (i, (sentinel_host, sentinel_netns)) in sentinels.into_iter().enumerate() {
            let port = super::free_port();
            let conf = cluster.dir.join(format!("sentinel-{i}.conf"));
            std::fs::write(
                &conf,
                format!(
                    "port {port}\nbind {sentinel_host}\ndir {dir}\nsentinel monitor {MASTER} {host} {primary} 2\n\
                     sentinel auth-pass {MASTER} {PASSWORD}\nsentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n\
                     sentinel failover-timeout {MASTER} 4000\nsentinel parallel-syncs {MASTER} 2\n",
                    dir = cluster.dir.display()
                ),
            )
            .unwrap();
            let log = std::fs::File::create(cluster.dir.join(format!("sentinel-{i}.log"))).unwrap();
            let mut command = super::netns::command(sentinel_netns.as_deref(), "redis-sentinel");
            let child = command
                .arg(&conf)
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start redis-sentinel ({e}): `.ci/install-redis` installs it"));
            cluster.sentinels.push((child, sentinel_host, port));
        }
        // every Sentinel must know the replicas before a failover can promote one
        cluster.until("each Sentinel to see both replicas", Duration::from_secs(20), |c| {
            c.sentinels.iter().all(|(_, host, port)| {
                ask(host, *port, &format!("SENTINEL replicas {MASTER}"))
                    .is_ok_and(|said| said.iter().filter(|w| *w == "slave").count() >= 2)
            })
        });
        cluster
    }

    /// `redis+sentinel://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/store/0`
    pub fn url(&self) -> String {
        let hosts: Vec<_> = self.sentinels.iter().map(|(_, h, p)| format!("{h}:{p}")).collect();
        format!("redis+sentinel://{}/{MASTER}/0", hosts.join(","))
    }

    /// The node the Sentinels name as primary (by index into `nodes`).
    pub fn primary(&self) -> usize {
        let port = self.named_primary().expect("a Sentinel names a primary");
        self.nodes.iter().position(|n| n.port == port).unwrap_or_else(|| panic!("no node on port {port}"))
    }

    /// The port the first Sentinel that answers names as the primary.
    fn named_primary(&self) -> Option<u16> {
        self.sentinels.iter().find_map(|(_, host, port)| {
            let said = ask(host, *port, &format!("SENTINEL get-master-addr-by-name {MASTER}")).ok()?;
            said.get(1)?.parse().ok()
        })
    }

    /// Kills the primary with SIGKILL and returns its index.
    pub fn kill_primary(&mut self) -> usize {
        let i = self.primary();
        self.nodes[i].stop();
        i
    }

    /// Waits until every Sentinel names one primary other than the node `old`'s port and that
    /// node says it is primary; returns how long that took.
    pub fn wait_named(&self, old: usize) -> Duration {
        self.wait_named_by(old, &[0, 1, 2])
    }

    /// [`Cluster::wait_named`] as the Sentinels `asked` see it (those on one side of a partition).
    pub fn wait_named_by(&self, old: usize, asked: &[usize]) -> Duration {
        let old_port = self.nodes[old].port;
        let start = Instant::now();
        self.until("a failover", Duration::from_secs(30), |c| {
            let named: Vec<_> = asked
                .iter()
                .map(|i| &c.sentinels[*i])
                .filter_map(|(_, host, port)| {
                    ask(host, *port, &format!("SENTINEL get-master-addr-by-name {MASTER}")).ok()
                })
                .filter_map(|said| said.get(1)?.parse::<u16>().ok())
                .collect();
            named.len() == asked.len()
                && named.iter().all(|p| *p != old_port && *p == named[0])
                && c.nodes.iter().find(|n| n.port == named[0]).and_then(|n| n.role()).as_deref() == Some("master")
        });
        start.elapsed()
    }

    /// [`Cluster::wait_named`], and then until no Sentinel is still in a failover of its own (the
    /// next kill must not fall into one); returns how long that took.
    pub fn wait_failover(&self, old: usize) -> Duration {
        let start = Instant::now();
        self.wait_named(old);
        self.until("the Sentinels to settle", Duration::from_secs(30), |c| {
            c.sentinels.iter().all(|(_, host, port)| settled(host, *port))
        });
        start.elapsed()
    }

    /// Starts the killed node `i` again as a replica of the current primary, and waits until the
    /// primary streams to it (so the next failover has replicas to promote).
    pub fn rejoin(&mut self, i: usize) {
        let primary = self.primary();
        assert_ne!(i, primary, "node {i} is the primary");
        let args = node_args(Some((&self.nodes[primary].host, self.nodes[primary].port)));
        self.nodes[i].args = args;
        self.nodes[i].resume();
        self.wait_replicas_linked(self.nodes.len() - 1);
    }

    /// Waits until the primary reports `n` replicas online.
    fn wait_replicas_linked(&self, n: usize) {
        self.until("the replicas to link", Duration::from_secs(20), |c| {
            let primary = c.named_primary().and_then(|p| c.nodes.iter().position(|x| x.port == p)).unwrap_or(0);
            c.nodes[primary]
                .query("INFO replication")
                .is_ok_and(|lines| lines.concat().matches("state=online").count() >= n)
        });
    }

    fn until(&self, what: &str, limit: Duration, done: impl Fn(&Cluster) -> bool) {
        super::wait::until_blocking(what, limit, || done(self).then_some(()))
    }
}

/// A data node's arguments: the password, its primary's (as `masterauth`), and replication.
fn node_args(primary: Option<(&str, u16)>) -> Vec<String> {
    let mut args: Vec<String> =
        ["--requirepass", PASSWORD, "--masterauth", PASSWORD, "--repl-diskless-sync-delay", "0"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    if let Some((host, port)) = primary {
        args.extend(["--replicaof".into(), host.to_string(), port.to_string()]);
    }
    args
}

/// Whether the Sentinel on `port` sees the master up with no failover of its own in progress (a
/// Sentinel that led a failover names the replica it promoted before it has finished, and one
/// killed mid-way leaves it stuck until its failover times out).
fn settled(host: &str, port: u16) -> bool {
    let Ok(fields) = ask(host, port, &format!("SENTINEL master {MASTER}")) else { return false };
    fields.iter().position(|f| f == "flags").and_then(|i| fields.get(i + 1)).is_some_and(|flags| flags == "master")
}

fn ask(host: &str, port: u16, command: &str) -> std::io::Result<Vec<String>> {
    let s = TcpStream::connect((host, port))?;
    s.set_read_timeout(Some(Duration::from_secs(1)))?;
    query_at(s, command)
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (child, _, _) in &mut self.sentinels {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            for i in 0..self.sentinels.len() {
                let log = std::fs::read_to_string(self.dir.join(format!("sentinel-{i}.log"))).unwrap_or_default();
                eprintln!("--- sentinel {i} ---\n{log}");
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
