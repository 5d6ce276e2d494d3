//! Who holds the listener's connection slots. A connection is *unproven* from its accept until a
//! request on it passes the bearer check (without tokens: until its first `/mcp` request's
//! headers arrive); then it is *held* by that request's principal. The rules, so that nobody can
//! lock the team out:
//! - no principal holds more than its share of the slots (`per_principal`): a request that would
//!   take a connection beyond it is refused (429) and its connection closed;
//! - an address has at most `unproven_per_peer` unproven connections: one more closes that
//!   address's oldest unproven connection, however young, so the newest connection from an
//!   address is always the one read (see below);
//! - with every slot taken, a new connection closes the oldest unproven one anywhere, so sockets
//!   that never send a valid request cannot keep a token holder out; only when every slot is
//!   held (several principals at their share) is a new connection refused.
//!
//! Across addresses, a connection younger than [`GRACE`] is never closed to make room for
//! another address's (it may be a client's that has not been read yet): while the oldest
//! candidate is that young, the address holding the most unproven connections gives one up, or
//! else the new connection is refused, as nginx's `limit_conn` refuses one over its limit.
//! Within one address the newcomer always wins: the sockets an address already holds unproven
//! have had their chance to send a valid request, the newcomer has not, and refusing it would
//! let anyone sharing an address (a NAT, a proxy) shut out everyone else there by opening
//! sockets faster than they age. The one closed is the oldest not sending a request at that
//! moment (a request's head is being checked), and the listener lets each connection it made
//! room for be read before it accepts another, so a newcomer that sends a valid token at once
//! is held by its principal before the next newcomer from its address could close it.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;

use crate::principal::{Principal, uncount};

/// How long a new connection keeps its place whatever comes after it.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// The caps of one listener's connection table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SlotLimits {
    pub(crate) max_connections: usize,
    pub(crate) per_principal: usize,
    pub(crate) unproven_per_peer: usize,
}

pub(crate) struct Connections {
    limits: SlotLimits,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    next: u64,
    live: HashMap<u64, Slot>,
    /// Unproven connections, oldest first (ids only grow).
    unproven: BTreeSet<u64>,
    unproven_by_peer: HashMap<IpAddr, BTreeSet<u64>>,
    held_by: HashMap<Principal, usize>,
}

struct Slot {
    peer: IpAddr,
    accepted: Instant,
    holder: Option<Principal>,
    /// Requests on it being answered (from their head to their response's head): an unproven
    /// connection whose request is being checked is not closed for its own address's newcomers.
    busy: u32,
    /// Cancelled when the connection is to be closed to make room.
    evict: CancellationToken,
}

/// Why a connection was not admitted.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Every slot is held by a principal's requests, or by connections younger than [`GRACE`].
    Full,
}

/// A connection's place in the table, given up when it is dropped.
pub(crate) struct Admitted {
    pub handle: ConnectionHandle,
    /// Fires when the table closes this connection to make room for a newer one.
    pub evicted: CancellationToken,
    /// Whether an unproven connection was closed to make room for this one.
    pub(crate) made_room: bool,
}

/// What a request on a connection can do to its slot (carried in the request's extensions).
#[derive(Clone)]
pub(crate) struct ConnectionHandle {
    id: u64,
    table: Arc<Connections>,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.handle.table.lock().remove(self.handle.id);
    }
}

impl Connections {
    pub(crate) fn new(limits: SlotLimits) -> Arc<Connections> {
        Arc::new(Connections { limits, table: Mutex::new(Table::default()) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admits a connection from `peer`, closing an unproven one to make room if need be.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Admitted, Refused> {
        self.admit_at(peer, Instant::now())
    }

    fn admit_at(self: &Arc<Self>, peer: IpAddr, now: Instant) -> Result<Admitted, Refused> {
        let peer = peer_key(peer);
        let mut table = self.lock();
        let mut made_room = false;
        let peers = table.unproven_by_peer.get(&peer).filter(|s| s.len() >= self.limits.unproven_per_peer);
        // the oldest that is not sending a request now, else the oldest
        let idle = |id: &&u64| table.live.get(id).is_some_and(|s| s.busy == 0);
        if let Some(&oldest) = peers.and_then(|s| s.iter().find(idle).or_else(|| s.first())) {
            table.evict(oldest);
            made_room = true;
        }
        if table.live.len() >= self.limits.max_connections {
            match table.unproven.first().copied() {
                Some(oldest) if table.older_than_grace(oldest, now) => table.evict(oldest),
                // a flood younger than the grace, from other addresses: the address holding
                // the most unproven connections gives one up, if it holds more than this one's
                _ => match table.heaviest_peer_beyond(peer) {
                    Some(oldest) => table.evict(oldest),
                    None => return Err(Refused::Full),
                },
            }
            made_room = true;
        }
        let id = table.next;
        table.next += 1;
        let evict = CancellationToken::new();
        table.live.insert(id, Slot { peer, accepted: now, holder: None, busy: 0, evict: evict.clone() });
        table.unproven.insert(id);
        table.unproven_by_peer.entry(peer).or_default().insert(id);
        Ok(Admitted { handle: ConnectionHandle { id, table: self.clone() }, evicted: evict, made_room })
    }

    /// Connections in the table now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().live.len()
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The address a peer counts under: an IPv6 peer by its /64 (one host can use a whole /64),
/// an IPv4-mapped one as the IPv4 address.
fn peer_key(peer: IpAddr) -> IpAddr {
    match peer {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        },
        v4 => v4,
    }
}

/// A request on a connection, from its head to its response's head (see [`ConnectionHandle::busy`]).
pub(crate) struct Busy(ConnectionHandle);

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(slot) = self.0.table.lock().live.get_mut(&self.0.id) {
            slot.busy = slot.busy.saturating_sub(1);
        }
    }
}

impl ConnectionHandle {
    /// Marks a request under way on this connection until the returned guard is dropped.
    pub(crate) fn busy(&self) -> Busy {
        if let Some(slot) = self.table.lock().live.get_mut(&self.id) {
            slot.busy += 1;
        }
        Busy(self.clone())
    }

    /// The address this connection counts under (see [`peer_key`]).
    pub(crate) fn peer(&self) -> Option<IpAddr> {
        self.table.lock().live.get(&self.id).map(|s| s.peer)
    }

    /// Makes the connection unproven again (a request on it was refused by the bearer check):
    /// evictable like a silent one, and no longer its last principal's.
    pub(crate) fn unhold(&self) {
        let mut table = self.table.lock();
        let Some(slot) = table.live.get_mut(&self.id) else { return };
        let Some(holder) = slot.holder.take() else { return };
        let peer = slot.peer;
        uncount(&mut table.held_by, &holder);
        table.unproven.insert(self.id);
        table.unproven_by_peer.entry(peer).or_default().insert(self.id);
    }

    /// Lets `principal` hold this connection; `Err(held)`: the principal already holds `held`
    /// connections, its share.
    pub(crate) fn hold(&self, principal: &Principal) -> Result<(), usize> {
        let per_principal = self.table.limits.per_principal;
        let mut table = self.table.lock();
        let Some(slot) = table.live.get(&self.id) else {
            return Ok(()); // closed to make room: it goes away whatever this request does
        };
        if slot.holder.as_ref() == Some(principal) {
            return Ok(());
        }
        let held = table.held_by.get(principal).copied().unwrap_or(0);
        if held >= per_principal {
            return Err(held);
        }
        let (peer, before) = (slot.peer, slot.holder.clone());
        match before {
            // a proxy's connection carrying another principal's request now
            Some(other) => uncount(&mut table.held_by, &other),
            None => table.unprove(self.id, peer),
        }
        *table.held_by.entry(principal.clone()).or_default() += 1;
        if let Some(slot) = table.live.get_mut(&self.id) {
            slot.holder = Some(principal.clone());
        }
        Ok(())
    }
}

/// Middleware on `/mcp`, after the bearer check: the request's principal holds its connection,
/// or, beyond its share, gets 429 and the connection is closed once the answer is written.
pub(crate) async fn hold(request: Request, next: Next) -> Response {
    let principal = request.extensions().get::<Principal>().cloned().unwrap_or_default();
    let Some(handle) = request.extensions().get::<ConnectionHandle>() else {
        return next.run(request).await;
    };
    let Err(held) = handle.hold(&principal) else {
        return next.run(request).await;
    };
    let share = handle.table.limits.per_principal;
    crate::metrics::metrics().http_limit("mcp", "principal_connections");
    tracing::warn!(%principal, held, "refused a connection beyond the principal's share (--max-connections-per-principal)");
    let body = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": format!(
        "principal {principal} already holds {held} connections, its share of this server's (at most {share}, \
         --max-connections-per-principal); reuse one, or close some"), "data": {"kind": "too_many_connections"}}});
    let mut response = (StatusCode::TOO_MANY_REQUESTS, axum::Json(body)).into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

impl Table {
    fn older_than_grace(&self, id: u64, now: Instant) -> bool {
        self.live.get(&id).is_some_and(|s| now.saturating_duration_since(s.accepted) >= GRACE)
    }

    /// The oldest unproven connection of the address holding the most of them, if that is more
    /// than `newcomer` holds (plus the one it brings).
    fn heaviest_peer_beyond(&self, newcomer: IpAddr) -> Option<u64> {
        let mine = self.unproven_by_peer.get(&newcomer).map_or(0, BTreeSet::len) + 1;
        let (_, ids) =
            self.unproven_by_peer.iter().filter(|(p, _)| **p != newcomer).max_by_key(|(_, ids)| ids.len())?;
        match ids.len() > mine {
            true => ids.first().copied(),
            false => None,
        }
    }

    fn unprove(&mut self, id: u64, peer: IpAddr) {
        self.unproven.remove(&id);
        if let Some(ids) = self.unproven_by_peer.get_mut(&peer) {
            ids.remove(&id);
            if ids.is_empty() {
                self.unproven_by_peer.remove(&peer);
            }
        }
    }

    fn remove(&mut self, id: u64) {
        let Some(slot) = self.live.remove(&id) else { return };
        match slot.holder {
            Some(p) => uncount(&mut self.held_by, &p),
            None => self.unprove(id, slot.peer),
        }
    }

    /// Takes `id` out of the table and tells its connection to close.
    fn evict(&mut self, id: u64) {
        if let Some(slot) = self.live.get(&id) {
            slot.evict.cancel();
        }
        self.remove(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(max: usize, per_principal: usize, per_peer: usize) -> Arc<Connections> {
        Connections::new(SlotLimits { max_connections: max, per_principal, unproven_per_peer: per_peer })
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn unproven_sockets_make_room_for_new_ones_and_never_for_held_ones() {
        let t = table(4, 4, 8);
        let start = Instant::now();
        let idle: Vec<Admitted> = (0..4).map(|i| t.admit_at(ip(i), start).unwrap()).collect();
        assert_eq!(t.admit_at(ip(9), start).err(), Some(Refused::Full), "one each: nobody is closed within the grace");
        let later = start + GRACE;
        let bob = t.admit_at(ip(9), later).unwrap();
        assert!(idle[0].evicted.is_cancelled(), "the oldest unproven one is closed");
        assert!(!idle[1].evicted.is_cancelled());
        bob.handle.hold(&Principal::named("bob")).unwrap();
        assert_eq!(t.len(), 4);
        // three more push out the three other idle ones, never Bob's
        let newer: Vec<Admitted> = (0..3).map(|i| t.admit_at(ip(20 + i), later).unwrap()).collect();
        assert!(idle[1..].iter().all(|a| a.evicted.is_cancelled()));
        assert!(!bob.evicted.is_cancelled());
        for a in &newer {
            a.handle.hold(&Principal::named("carol")).unwrap();
        }
        assert_eq!(t.admit_at(ip(30), later + GRACE).err(), Some(Refused::Full), "every slot held: refused");
        drop(bob);
        assert!(t.admit_at(ip(30), later + GRACE).is_ok(), "a slot given back is free again");
    }

    #[test]
    fn a_young_flood_from_other_addresses_still_lets_a_newcomer_in() {
        let t = table(6, 6, 4);
        let start = Instant::now();
        let flood: Vec<Admitted> = (0..6).map(|i| t.admit_at(ip(1 + i % 2), start).unwrap()).collect();
        let bob = t.admit_at(ip(9), start).expect("the heaviest address gives one up");
        assert_eq!(flood.iter().filter(|a| a.evicted.is_cancelled()).count(), 1);
        assert!(!bob.evicted.is_cancelled());
        // IPv6 peers count by their /64
        let v6 = |last: u16| IpAddr::from([0x2001, 0xdb8, 0, 1, 0, 0, 0, last]);
        assert_eq!(peer_key(v6(1)), peer_key(v6(0xffff)));
        assert_ne!(peer_key(v6(1)), peer_key(IpAddr::from([0x2001, 0xdb8, 0, 2, 0, 0, 0, 1])));
        assert_eq!(peer_key("::ffff:10.0.0.1".parse().unwrap()), ip(1));
    }

    #[test]
    fn a_refused_request_leaves_its_connection_unproven() {
        let t = table(2, 2, 2);
        let start = Instant::now();
        let a = t.admit_at(ip(1), start).unwrap();
        a.handle.hold(&Principal::named("alice")).unwrap();
        a.handle.unhold();
        let _b = t.admit_at(ip(2), start).unwrap();
        let _c = t.admit_at(ip(3), start + GRACE).unwrap();
        assert!(a.evicted.is_cancelled(), "evictable again");
        assert!(t.lock().held_by.is_empty());
    }

    #[test]
    fn one_address_keeps_only_its_newest_unproven_connections() {
        let t = table(100, 10, 3);
        let start = Instant::now();
        let mut mine: Vec<Admitted> = (0..3).map(|_| t.admit_at(ip(1), start).unwrap()).collect();
        // a burst beyond it, all within the grace: each newcomer is admitted, the oldest closed
        mine.extend((0..2).map(|_| t.admit_at(ip(1), start).unwrap()));
        let cancelled: Vec<bool> = mine.iter().map(|a| a.evicted.is_cancelled()).collect();
        assert_eq!(cancelled, [true, true, false, false, false]);
        let other = t.admit_at(ip(2), start).unwrap();
        assert!(!other.evicted.is_cancelled(), "another address is not touched");
        assert_eq!(t.len(), 4);
    }

    #[test]
    fn a_token_holder_is_let_in_beside_a_flood_from_its_own_address() {
        let t = table(8, 4, 4);
        let start = Instant::now();
        // half-sent or idle sockets from the address Bob shares, more than its share, all young
        let flood: Vec<Admitted> = (0..6).map(|_| t.admit_at(ip(1), start).unwrap()).collect();
        let bob = t.admit_at(ip(1), start).expect("the newcomer is read, whatever its address holds");
        bob.handle.hold(&Principal::named("bob")).unwrap();
        assert_eq!(flood.iter().filter(|a| !a.evicted.is_cancelled()).count(), 3, "four unproven at most, Bob out");
        // the flood goes on: it closes its own sockets, never Bob's once he is held
        let more: Vec<Admitted> = (0..20).map(|_| t.admit_at(ip(1), start).unwrap()).collect();
        assert!(!bob.evicted.is_cancelled());
        assert_eq!(more.iter().filter(|a| !a.evicted.is_cancelled()).count(), 4);
    }

    #[test]
    fn a_principal_holds_at_most_its_share_and_a_connection_moves_between_principals() {
        let t = table(10, 2, 10);
        let alice = Principal::named("alice");
        let conns: Vec<Admitted> = (0..3).map(|i| t.admit(ip(i)).unwrap()).collect();
        conns[0].handle.hold(&alice).unwrap();
        conns[1].handle.hold(&alice).unwrap();
        conns[1].handle.hold(&alice).unwrap(); // the same connection again: no second count
        assert_eq!(conns[2].handle.hold(&alice), Err(2));
        // a proxy's connection handing Alice's place to Bob frees one of hers
        conns[1].handle.hold(&Principal::named("bob")).unwrap();
        conns[2].handle.hold(&alice).unwrap();
        drop(conns);
        assert!(t.is_empty());
        assert!(t.lock().held_by.is_empty() && t.lock().unproven_by_peer.is_empty());
    }
}
