//! One conformance suite of a proposal's life, the same sequences against every store
//! backend (memory, one Redis, Redis with Sentinel and acknowledged writes, etcd), through two
//! handles of one backend where replicas share it: put, peek, take, settle, owners, capacity and
//! eviction, expired proposals that no longer count, concurrent takes across replicas, claims and
//! first writes of a note. Then a seeded walk of puts, peeks, takes and settles by three
//! principals, with time passing their expiries, whose every answer must be the one
//! `proposals::life::Model` gives: the model is built from the pure steps of a proposal's life
//! alone, so the Redis scripts and the etcd transactions are checked against them. Each
//! backend's own tests keep what is its own (failovers, partitions, TLS, passwords). The same
//! suite runs a request's approvals under a quorum (waiting, partly approved, decided) against
//! `proposals::ballot::Model`.

use clap::Parser;
use equinix_mcp::approval::Once;
use equinix_mcp::principal::Principal;
use equinix_mcp::proposals::ballot::{Ballot, Cast, Model as BallotModel, Person, Standing};
use equinix_mcp::proposals::life::{FINISHED_PER_PRINCIPAL, Model};
use equinix_mcp::proposals::{NoteKey, ProposalStore, StoreArgs, Taken};

#[derive(Parser)]
struct Store {
    #[command(flatten)]
    args: StoreArgs,
}

async fn open(args: &[&str]) -> ProposalStore {
    let mut argv = vec!["store"];
    argv.extend_from_slice(args);
    let store = Store::parse_from(argv);
    ProposalStore::open(&store.args).await.unwrap_or_else(|e| panic!("{args:?}: {e:#}"))
}

fn found(t: &Taken) -> Option<&[u8]> {
    match t {
        Taken::Found(record) => Some(record),
        _ => None,
    }
}

fn used(t: &Taken) -> Option<Option<&[u8]>> {
    match t {
        Taken::Used(outcome) => Some(outcome.as_deref()),
        _ => None,
    }
}

/// The sequences, on `a` and `b` (two replicas of one backend, or one store twice).
async fn conformance(a: &ProposalStore, b: &ProposalStore, what: &str) {
    let (alice, bob) = (Principal::named("alice"), Principal::named("bob"));
    let now = 1_000_000;
    let later = now + 600_000;

    // one proposal's life: pending, taken once, its outcome kept for a replay
    let (token, evicted) = a.put(&alice, b"record-1".to_vec(), later, 20, now).await.unwrap();
    assert!(token.starts_with("chg-") && evicted.is_empty(), "{what}: {token} {evicted:?}");
    assert_eq!(found(&b.peek(&alice, &token).await.unwrap()), Some(&b"record-1"[..]), "{what}: peek on the other");
    assert_eq!(found(&b.peek(&alice, &token).await.unwrap()), Some(&b"record-1"[..]), "{what}: a peek takes nothing");
    assert!(matches!(b.peek(&bob, &token).await.unwrap(), Taken::Unknown), "{what}: another principal's is unknown");
    assert!(matches!(b.take(&bob, &token).await.unwrap(), Taken::Unknown), "{what}: and cannot be taken by it");
    assert_eq!(found(&b.take(&alice, &token).await.unwrap()), Some(&b"record-1"[..]), "{what}: taken");
    b.settle(&bob, &token, b"not-bobs".to_vec()).await.unwrap();
    let unsettled = a.take(&alice, &token).await.unwrap();
    assert_eq!(used(&unsettled), Some(None), "{what}: used, and another principal's settle did not count");
    a.settle(&alice, &token, b"executed".to_vec()).await.unwrap();
    assert_eq!(used(&b.take(&alice, &token).await.unwrap()), Some(Some(&b"executed"[..])), "{what}: the outcome");
    assert_eq!(used(&a.peek(&alice, &token).await.unwrap()), Some(Some(&b"executed"[..])), "{what}");
    assert!(matches!(a.peek(&alice, "chg-00000000000000000000000000000000").await.unwrap(), Taken::Unknown));

    // capacity per principal: the oldest pending goes, and says so; another principal's count apart
    let mut tokens = Vec::new();
    for i in 0..3 {
        let on = if i % 2 == 0 { a } else { b };
        let (t, evicted) = on.put(&alice, format!("cap-{i}").into_bytes(), later, 3, now + i).await.unwrap();
        assert!(evicted.is_empty(), "{what}: {evicted:?}");
        tokens.push(t);
    }
    let (bobs, evicted) = b.put(&bob, b"bob".to_vec(), later, 3, now).await.unwrap();
    assert!(evicted.is_empty(), "{what}: bob's proposal evicts none of alice's");
    let (fourth, evicted) = b.put(&alice, b"cap-3".to_vec(), later, 3, now + 3).await.unwrap();
    assert_eq!(evicted, [tokens[0].clone()], "{what}: the oldest is evicted");
    assert!(matches!(a.take(&alice, &tokens[0]).await.unwrap(), Taken::Evicted), "{what}");
    assert!(found(&a.peek(&alice, &tokens[1]).await.unwrap()).is_some(), "{what}");
    assert!(found(&a.peek(&bob, &bobs).await.unwrap()).is_some(), "{what}");
    // a taken proposal frees its place
    assert!(found(&a.take(&alice, &fourth).await.unwrap()).is_some(), "{what}");
    let (_, evicted) = a.put(&alice, b"cap-4".to_vec(), later, 3, now + 4).await.unwrap();
    assert!(evicted.is_empty(), "{what}: {evicted:?}");

    // an expired proposal no longer counts towards capacity, and is still found (a late confirm
    // is told it expired, by the component, rather than that it is unknown)
    let carol = Principal::named("carol");
    let (old, _) = a.put(&carol, b"old".to_vec(), now + 10, 2, now).await.unwrap();
    for i in 0..2 {
        let (_, evicted) = b.put(&carol, b"new".to_vec(), later, 2, now + 20 + i).await.unwrap();
        assert!(evicted.is_empty(), "{what}: the expired one is not evicted, it no longer counts: {evicted:?}");
    }
    assert!(found(&a.peek(&carol, &old).await.unwrap()).is_some(), "{what}: still found");

    // concurrent takes of one token over both replicas: exactly one wins
    let (contested, _) = a.put(&alice, b"contested".to_vec(), later, 20, now).await.unwrap();
    let takes = (0..16).map(|i| {
        let (on, who, token) = (if i % 2 == 0 { a } else { b }, alice.clone(), contested.clone());
        async move { on.take(&who, &token).await.unwrap() }
    });
    let taken = futures_util::future::join_all(takes).await;
    let winners = taken.iter().filter(|t| found(t).is_some()).count();
    assert_eq!(winners, 1, "{what}: {} takes found it", winners);
    assert!(taken.iter().all(|t| found(t).is_some() || used(t).is_some()), "{what}: the others see it used");

    // one principal's puts at once over both replicas, past its capacity: every put is kept or
    // evicted, each eviction reported by exactly one put, and the capacity holds at rest
    let dave = Principal::named("dave");
    let puts = (0..40u64).map(|i| {
        let (on, who) = (if i % 2 == 0 { a } else { b }, dave.clone());
        async move { on.put(&who, format!("burst-{i}").into_bytes(), later, 20, now + i).await.unwrap() }
    });
    let made = futures_util::future::join_all(puts).await;
    let mut reported: Vec<&String> = made.iter().flat_map(|(_, evicted)| evicted).collect();
    let reports = reported.len();
    reported.sort();
    reported.dedup();
    assert_eq!(reports, reported.len(), "{what}: an eviction reported twice");
    let mut pending = 0;
    for (token, _) in &made {
        match a.peek(&dave, token).await.unwrap() {
            Taken::Found(_) => pending += 1,
            Taken::Evicted => assert!(reported.contains(&token), "{what}: {token} evicted unreported"),
            other => panic!("{what}: {token} is {other:?}"),
        }
    }
    assert_eq!((pending, reports), (20, 20), "{what}: 20 kept, the other 20 evicted and each reported once");

    // once: a claim, and a note's first write, count once across replicas
    let claims = [a.claim(Once::PageDecision("d-1"), now), b.claim(Once::PageDecision("d-1"), now)];
    let claimed = futures_util::future::join_all(claims).await;
    assert_eq!(claimed.iter().filter(|c| *c.as_ref().unwrap()).count(), 1, "{what}: {claimed:?}");
    assert!(!a.claim(Once::PageDecision("d-1"), now + 1).await.unwrap(), "{what}: remembered");
    assert!(b.claim(Once::PageDecision("d-2"), now).await.unwrap(), "{what}: another key is its own");
    let key = NoteKey::PageDecision("apv-1");
    assert!(a.note_put(&key, b"approve", 60_000, true, now).await.unwrap(), "{what}");
    assert!(!b.note_put(&key, b"decline", 60_000, true, now).await.unwrap(), "{what}: the first decision stands");
    assert_eq!(b.note_get(&key, now).await.unwrap().as_deref(), Some(&b"approve"[..]), "{what}");

    ballots(a, b, what, now).await;
    walk_against_the_model(a, b, what).await;
}

/// A fresh id for an approval.
fn rand_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed).to_string()
}

/// A request's approvals under a quorum (`proposals::ballot`), waiting → partly approved → closed,
/// on both handles at once: a fixed sequence against the model, people approving at once on two
/// replicas (each kept in a place of their own, none lost), one person approving twice at once
/// (one place), and an approval's decision racing a decline (exactly one closes it).
async fn ballots(a: &ProposalStore, b: &ProposalStore, what: &str, now: u64) {
    let ballot = |store, page| Ballot { store, page, ttl_ms: 60_000, now_ms: now };
    let person = |p: &str| Person { person: p.to_string(), id: format!("{p}-{}", rand_id()) };
    let mut model = BallotModel::default();
    let (on_a, on_b) = (ballot(a, "apv-ballot-1"), ballot(b, "apv-ballot-1"));
    assert_eq!(on_b.standing().await.unwrap(), Standing::Waiting, "{what}");
    for (step, (on, who)) in
        [(&on_a, "alice"), (&on_b, "bob"), (&on_b, "alice"), (&on_a, "carol")].into_iter().enumerate()
    {
        let vote = person(who);
        assert_eq!(on.cast(&vote).await.unwrap(), model.cast(who, &vote.id), "{what}: cast {step}");
        assert_eq!(on_a.standing().await.unwrap(), model.standing(), "{what}: after cast {step}");
    }
    assert_eq!(on_b.standing().await.unwrap(), Standing::PartlyApproved(3), "{what}: partly approved, on either");
    assert_eq!(on_b.close(b"approved").await.unwrap(), model.close(b"approved"), "{what}");
    assert_eq!(on_a.close(b"declined").await.unwrap(), model.close(b"declined"), "{what}: the first decision stands");
    let dan = person("dan");
    assert_eq!(on_a.cast(&dan).await.unwrap(), model.cast("dan", &dan.id), "{what}: closed");
    let kept: Vec<String> = on_b.votes::<Person>().await.unwrap().into_iter().map(|p| p.person).collect();
    assert_eq!(kept, model.votes(), "{what}");
    assert_eq!(on_b.closing().await.unwrap().as_deref(), model.closing(), "{what}");
    assert_eq!(on_a.standing().await.unwrap(), Standing::Closed, "{what}");

    // eight people at once, over both replicas: eight places, none lost
    let casts = (0..8).map(|i| async move {
        let on = ballot(if i % 2 == 0 { a } else { b }, "apv-ballot-2");
        on.cast(&person(&format!("p{i}"))).await.unwrap()
    });
    let cast = futures_util::future::join_all(casts).await;
    let mut places: Vec<u8> = cast
        .iter()
        .map(|c| match c {
            Cast::Counted(n) => *n,
            other => panic!("{what}: {other:?}"),
        })
        .collect();
    places.sort();
    assert_eq!(places, (1..=8).collect::<Vec<u8>>(), "{what}: each in a place of its own");
    assert_eq!(ballot(a, "apv-ballot-2").votes::<Person>().await.unwrap().len(), 8, "{what}");
    // one person twice at once: one place
    let twice = [ballot(a, "apv-ballot-3"), ballot(b, "apv-ballot-3")];
    let (erin, erin_again) = (person("erin"), person("erin"));
    let cast = futures_util::future::join_all([twice[0].cast(&erin), twice[1].cast(&erin_again)]).await;
    let counted = cast.iter().filter(|c| matches!(c, Ok(Cast::Counted(1)))).count();
    let again = cast.iter().filter(|c| matches!(c, Ok(Cast::Again(1)))).count();
    assert_eq!((counted, again), (1, 1), "{what}: {cast:?}");
    // the approval that makes it whole and a decline, at once: one decision
    let race = [ballot(a, "apv-ballot-4"), ballot(b, "apv-ballot-4")];
    let closed = futures_util::future::join_all([race[0].close(b"approved"), race[1].close(b"declined")]).await;
    assert_eq!(closed.iter().filter(|c| *c.as_ref().unwrap()).count(), 1, "{what}: {closed:?}");
}

/// 200 steps, the same on every run (a fixed seed: a failure is replayed exactly), on either
/// handle at random: each store answer is compared with the model's. Three principals share
/// capacity 3 each, half the proposals live 2 s and the clock moves 1 s every few steps, so
/// puts evict, find expired ones that no longer count, and takes meet pending, expired, used and
/// evicted proposals, and other principals' tokens. Then one principal finishes more than every
/// store remembers of it.
async fn walk_against_the_model(a: &ProposalStore, b: &ProposalStore, what: &str) {
    let people = [Principal::named("walk-1"), Principal::named("walk-2"), Principal::named("walk-3")];
    let mut model = Model::default();
    let mut tokens: Vec<(String, u64)> = Vec::new();
    let mut seed: u64 = 0x5eed_0064;
    let mut next = move |n: usize| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize % n
    };
    let mut now = 50_000_000u64;
    let (mut puts, mut evictions, mut found_expired) = (0, 0, 0);
    for step in 0..200 {
        let on = if next(2) == 0 { a } else { b };
        let who = &people[next(3)];
        let (token, expires) = match tokens.len() {
            0 => (None, 0),
            n => {
                let (token, expires) = tokens[next(n)].clone();
                (Some(token), expires)
            }
        };
        let said = format!("{what}: step {step}");
        match (next(6), token) {
            (0 | 1, _) | (_, None) => {
                let life = if next(2) == 0 { 2_000 } else { 60_000 };
                let record = format!("walk-{step}").into_bytes();
                let (token, evicted) = on.put(who, record.clone(), now + life, 3, now).await.unwrap();
                let expected = model.put(who, &token, record, now + life, 3, now);
                assert_eq!(evicted, expected, "{said}: evicted by a put");
                evictions += evicted.len();
                puts += 1;
                tokens.push((token, now + life));
            }
            (2, Some(token)) => {
                let seen = on.peek(who, &token).await.unwrap();
                assert_eq!(format!("{seen:?}"), format!("{:?}", model.peek(who, &token)), "{said}: peek");
            }
            (3 | 4, Some(token)) => {
                let taken = on.take(who, &token).await.unwrap();
                assert_eq!(format!("{taken:?}"), format!("{:?}", model.take(who, &token)), "{said}: take");
                found_expired += usize::from(matches!(taken, Taken::Found(_)) && expires <= now);
            }
            (_, Some(token)) => {
                // an attempt's last word stands: settled twice, the second outcome is kept
                for word in ["first", "last"] {
                    let outcome = format!("{word}-outcome-{step}").into_bytes();
                    on.settle(who, &token, outcome.clone()).await.unwrap();
                    model.settle(who, &token, outcome);
                }
                let seen = on.peek(who, &token).await.unwrap();
                assert_eq!(format!("{seen:?}"), format!("{:?}", model.peek(who, &token)), "{said}: after a settle");
            }
        }
        if next(4) == 0 {
            now += 1_000;
        }
    }
    // the walk reached what it is for
    assert!(
        puts > 40 && evictions > 0 && found_expired > 0,
        "{what}: {puts} puts, {evictions} evictions, {found_expired} expired proposals taken"
    );
    past_the_forgetting_limit(a, b, &mut model, now, what).await;
}

/// One principal finishes more proposals than every store remembers of it (taken, evicted, and
/// expired ones a later put found): each answer is still the model's, the oldest finished read as
/// unknown in the order they finished, on either handle.
async fn past_the_forgetting_limit(a: &ProposalStore, b: &ProposalStore, model: &mut Model, now: u64, what: &str) {
    let many = Principal::named("walk-many");
    let mut tokens = Vec::new();
    let rounds = FINISHED_PER_PRINCIPAL as usize + 40;
    for i in 0..rounds {
        let on = if i % 2 == 0 { a } else { b };
        // every seventh lives only a second, and is found expired by a later put
        let expires = if i % 7 == 0 { now + 1_000 } else { now + 600_000 };
        let at = now + 2_000 * (i as u64 / 7);
        let record = format!("many-{i}").into_bytes();
        let (token, evicted) = on.put(&many, record.clone(), expires.max(at + 1), 3, at).await.unwrap();
        let expected = model.put(&many, &token, record, expires.max(at + 1), 3, at);
        assert_eq!(evicted, expected, "{what}: round {i}: evicted");
        if i % 3 != 0 {
            let taken = on.take(&many, &token).await.unwrap();
            assert_eq!(format!("{taken:?}"), format!("{:?}", model.take(&many, &token)), "{what}: round {i}: take");
        }
        tokens.push(token);
    }
    let mut forgotten = 0;
    for (i, token) in tokens.iter().enumerate() {
        let on = if i % 2 == 0 { b } else { a };
        let seen = on.peek(&many, token).await.unwrap();
        assert_eq!(format!("{seen:?}"), format!("{:?}", model.peek(&many, token)), "{what}: token {i}");
        forgotten += usize::from(matches!(seen, Taken::Unknown));
    }
    assert!(forgotten > 0, "{what}: the walk passed the limit of {FINISHED_PER_PRINCIPAL}");
}

#[tokio::test]
async fn the_memory_store_keeps_a_proposals_life_as_every_store_does() {
    let memory = ProposalStore::new();
    conformance(&memory, &memory, "memory").await;
}

#[tokio::test]
async fn one_redis_keeps_a_proposals_life_as_every_store_does() {
    let redis = crate::harness::redis::RedisServer::start();
    let url = redis.url(0);
    let (a, b) = (open(&["--proposal-store", &url]).await, open(&["--proposal-store", &url]).await);
    conformance(&a, &b, "redis").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sentinel_store_keeps_a_proposals_life_as_every_store_does() {
    let cluster = tokio::task::block_in_place(crate::harness::sentinel::Cluster::start);
    let dir = tempfile::tempdir().unwrap();
    let password = dir.path().join("password");
    std::fs::write(&password, crate::harness::sentinel::PASSWORD).unwrap();
    std::fs::set_permissions(&password, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let url = cluster.url();
    // the semantics are under test here, not the acknowledgements' time (failover.rs has those):
    // a write acknowledged late on a busy machine must not fail the sequence
    let args = [
        "--proposal-store",
        &url,
        "--proposal-store-password-file",
        password.to_str().unwrap(),
        "--proposal-store-ack-timeout-ms",
        "10000",
    ];
    let (a, b) = (open(&args).await, open(&args).await);
    conformance(&a, &b, "sentinel").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_etcd_store_keeps_a_proposals_life_as_every_store_does() {
    let etcd = tokio::task::block_in_place(crate::harness::etcd::EtcdCluster::start);
    let url = etcd.url();
    let (a, b) = (open(&["--proposal-store", &url]).await, open(&["--proposal-store", &url]).await);
    conformance(&a, &b, "etcd").await;
}
