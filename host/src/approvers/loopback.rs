//! Where a local page listens: `localhost`, which a browser may resolve to 127.0.0.1 or to ::1,
//! so both addresses on one port, or that port is not used (whatever answered on the other would
//! be at the page's origin).

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::net::TcpListener;

/// A listening socket on `addr`; like std's and tokio's on Unix, a restarted server binds while
/// old connections linger.
fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    // a person's browser or two
    socket.listen(64)
}

/// A local page's listeners: 127.0.0.1 and ::1 on one port, `wanted` (0: any), else a free one.
/// A browser may resolve `localhost` to either address, and whatever answered on the other would
/// be at this page's origin: so both are this server's, or the port is not used.
pub(crate) fn bind_both(wanted: u16) -> anyhow::Result<Vec<TcpListener>> {
    let pair = |port: u16| -> std::io::Result<Vec<TcpListener>> {
        let v4 = bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
        let port = v4.local_addr()?.port();
        match bind(SocketAddr::from((Ipv6Addr::LOCALHOST, port))) {
            Ok(v6) => Ok(vec![v4, v6]),
            // taken: someone else would answer at this page's origin
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(e),
            // no IPv6 loopback on this machine: nobody else can answer there either
            Err(_) => Ok(vec![v4]),
        }
    };
    let first = match pair(wanted) {
        Ok(listeners) => return Ok(listeners),
        Err(e) => e,
    };
    // a free port on both loopbacks (one free on 127.0.0.1 is nearly always free on ::1 too)
    for _ in 0..8 {
        if let Ok(listeners) = pair(0) {
            let port = listeners[0].local_addr()?.port();
            if wanted != 0 {
                tracing::info!(
                    "the approval page's port {wanted} is taken ({first}; another server of this user?): it takes \
                     port {port} instead, and its links carry it"
                );
            }
            return Ok(listeners);
        }
    }
    anyhow::bail!("no loopback port is free on both 127.0.0.1 and ::1 for the approval page ({first})")
}
