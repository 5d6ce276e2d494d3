//! A network of our own for partition tests: one Linux network namespace per node (an etcd
//! member, a Redis node, a server), each with one veth link to a bridge in a hub namespace, where
//! the test itself (its MCP clients and the simulator) runs. Addresses are `10.77.0.0/24`, inside
//! these namespaces only: nothing is added to the machine's own network. A partition is
//! `iptables` rules in the nodes' namespaces that drop packets between them (no reset, no
//! refusal: a cut link looks like a silent network). Everything is deleted on drop; namespaces a
//! killed test run left behind are deleted by the next run.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// What every namespace of ours is called before its run's process id.
const PREFIX: &str = "emcp";

/// Numbers the namespaces' sets within a run (tests run in parallel).
static NEXT: AtomicU32 = AtomicU32::new(0);

pub struct Network {
    /// `emcpPID-N`: the run and the network within it.
    name: String,
    hub: String,
    nodes: Vec<Node>,
}

struct Node {
    name: String,
    netns: String,
    ip: String,
}

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("`ip` (iproute2) runs");
    assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

/// `program`, run in the network namespace `netns` when given (`ip netns exec`, which execs it in
/// place: the child's PID is the program's, so it is stopped by that PID), else as it is.
pub fn command(netns: Option<&str>, program: &str) -> Command {
    match netns {
        Some(netns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", netns, program]);
            c
        }
        None => Command::new(program),
    }
}

fn in_netns(netns: &str, program: &str, args: &[&str]) {
    let out = command(Some(netns), program).args(args).output().unwrap();
    assert!(out.status.success(), "in {netns}: {program} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

/// Whether this machine lets the test make namespaces (root, iproute2, iptables).
pub fn available() -> Result<(), String> {
    let probe = format!("{PREFIX}{}-{}-probe", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
    let made = Command::new("ip").args(["netns", "add", &probe]).output().map_err(|e| format!("ip: {e}"))?;
    if !made.status.success() {
        return Err(format!("ip netns add: {}", String::from_utf8_lossy(&made.stderr).trim()));
    }
    let filter = Command::new("ip").args(["netns", "exec", &probe, "iptables", "-L", "-n"]).output();
    let _ = Command::new("ip").args(["netns", "del", &probe]).status();
    match filter {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!("iptables: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Err(e) => Err(format!("iptables: {e}")),
    }
}

/// Deletes the namespaces of earlier runs whose process is gone (a test killed before its
/// drop), after killing what still runs in them.
fn delete_leftovers() {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(pid) = name.strip_prefix(PREFIX).and_then(|r| r.split('-').next()?.parse::<u32>().ok()) else {
            continue;
        };
        if !super::process_gone(pid) {
            continue;
        }
        kill_everything_in(name);
        let _ = Command::new("ip").args(["netns", "del", name]).status();
    }
}

fn kill_everything_in(netns: &str) {
    let out = Command::new("ip").args(["netns", "pids", netns]).output().unwrap();
    for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
}

impl Network {
    /// A hub at 10.77.0.254 and one namespace per node, at 10.77.0.1, .2, ... in order.
    pub fn new(nodes: &[&str]) -> Network {
        delete_leftovers();
        let name = format!("{PREFIX}{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::SeqCst));
        let hub = format!("{name}-hub");
        let mut network = Network { name: name.clone(), hub: hub.clone(), nodes: Vec::new() };
        ip(&["netns", "add", &hub]);
        ip(&["-n", &hub, "link", "set", "lo", "up"]);
        ip(&["-n", &hub, "link", "add", "br0", "type", "bridge"]);
        ip(&["-n", &hub, "addr", "add", "10.77.0.254/24", "dev", "br0"]);
        ip(&["-n", &hub, "link", "set", "br0", "up"]);
        for (i, node) in nodes.iter().enumerate() {
            let netns = format!("{name}-{node}");
            let address = format!("10.77.0.{}", i + 1);
            // pushed first, so a failure below still deletes it
            network.nodes.push(Node { name: node.to_string(), netns: netns.clone(), ip: address.clone() });
            ip(&["netns", "add", &netns]);
            // both ends made inside our namespaces: the machine's own never sees the link
            let port = format!("p{i}");
            ip(&["-n", &hub, "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns", &netns]);
            ip(&["-n", &hub, "link", "set", &port, "master", "br0", "up"]);
            ip(&["-n", &netns, "link", "set", "lo", "up"]);
            ip(&["-n", &netns, "addr", "add", &format!("{address}/24"), "dev", "eth0"]);
            ip(&["-n", &netns, "link", "set", "eth0", "up"]);
        }
        network
    }

    fn node(&self, name: &str) -> &Node {
        self.nodes.iter().find(|n| n.name == name).unwrap_or_else(|| panic!("no node {name} in {}", self.name))
    }

    /// The node's address.
    pub fn ip(&self, node: &str) -> String {
        self.node(node).ip.clone()
    }

    /// The node's namespace (for `ip netns exec`).
    pub fn netns(&self, node: &str) -> String {
        self.node(node).netns.clone()
    }

    /// Drops every packet between `a` and `b`, both ways.
    pub fn cut(&self, a: &str, b: &str) {
        for (here, there) in [(self.node(a), self.node(b)), (self.node(b), self.node(a))] {
            in_netns(&here.netns, "iptables", &["-A", "INPUT", "-s", &there.ip, "-j", "DROP"]);
            in_netns(&here.netns, "iptables", &["-A", "OUTPUT", "-d", &there.ip, "-j", "DROP"]);
        }
    }

    /// Cuts every node of `side` from every node of `other`.
    pub fn split(&self, side: &[&str], other: &[&str]) {
        for a in side {
            for b in other {
                self.cut(a, b);
            }
        }
    }

    /// Every cut undone.
    pub fn heal(&self) {
        for node in &self.nodes {
            in_netns(&node.netns, "iptables", &["-F"]);
        }
    }

    /// Runs `body` on a runtime whose threads are in the hub namespace: its sockets (the test's
    /// clients, a simulator it starts) are the hub's, and reach every node over the bridge.
    /// (The future is made on that thread: it need not be `Send`.)
    pub fn run_in_hub<T: Send, F: Future<Output = T>>(&self, body: impl FnOnce() -> F + Send) -> T {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let hub = std::fs::File::open(format!("/run/netns/{}", self.hub)).unwrap();
                    // only this thread moves; the runtime's threads are made by it, so in the hub too
                    rustix::thread::move_into_link_name_space(
                        std::os::fd::AsFd::as_fd(&hub),
                        Some(rustix::thread::LinkNameSpaceType::Network),
                    )
                    .expect("setns into the hub");
                    let runtime =
                        tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap();
                    runtime.block_on(body())
                })
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        // processes a test started are stopped by PID by their owners first; whatever is left
        // (a child of a child) dies with its namespace
        for netns in self.nodes.iter().map(|n| n.netns.as_str()).chain([self.hub.as_str()]) {
            kill_everything_in(netns);
            match Command::new("ip").args(["netns", "del", netns]).output() {
                Ok(o) if o.status.success() => {}
                Ok(o) => eprintln!("ip netns del {netns}: {}", String::from_utf8_lossy(&o.stderr)),
                Err(e) => eprintln!("ip netns del {netns}: {e}"),
            }
        }
    }
}
