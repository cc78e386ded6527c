//! The purgatory core's tests: Kafka's `DelayedOperationTest` scenarios on Rust operations,
//! cancellation, deadlines and the memory an entry takes.

use super::*;
use std::cell::Cell;
use std::collections::hash_map::RandomState;
use std::rc::Rc;

/// A test operation: its condition holds when `ready` is set; it counts what happened.
#[derive(Debug, Default)]
struct Fake {
    ready: Cell<bool>,
    completions: Cell<u32>,
    expirations: Cell<u32>,
}

type Op = Rc<Fake>;
type P = Purgatory<&'static str, Op, u32, RandomState>;

fn ready(op: &Op) -> bool {
    op.ready.get()
}

fn bump(cell: &Cell<u32>) {
    cell.set(cell.get() + 1);
}

/// `try_complete_else_watch`, counting a completion in either try.
fn add(p: &mut P, op: &Op, delay: i64, keys: &[&'static str]) -> Option<TimerKey> {
    let entry = p.try_complete_else_watch(op, delay, keys, ready);
    if entry.is_none() {
        bump(&op.completions);
    }
    entry
}

fn check(p: &mut P, key: &'static str) -> usize {
    let done = p.check_and_complete(&key, ready);
    done.iter().for_each(|op| bump(&op.completions));
    done.len()
}

/// Kafka's `forceComplete`: exactly once.
fn force(p: &mut P, entry: TimerKey) -> bool {
    let op = p.complete(entry);
    op.iter().for_each(|op| bump(&op.completions));
    op.is_some()
}

/// Kafka's expiry: forceComplete, then onExpiration.
fn advance(p: &mut P, now: i64) -> usize {
    p.advance(now);
    let mut n = 0;
    while let Some((_, item)) = p.pop_expired() {
        if let Item::Operation { op, .. } = item {
            bump(&op.completions);
            bump(&op.expirations);
        }
        n += 1;
    }
    p.maybe_purge();
    n
}

fn purgatory() -> P {
    Purgatory::new(0, 1000)
}

#[test]
fn request_satisfaction() {
    let mut p = purgatory();
    let (r1, r2) = (op(), op());
    assert_eq!(check(&mut p, "test1"), 0);
    assert!(add(&mut p, &r1, 100_000, &["test1"]).is_some());
    assert_eq!(check(&mut p, "test1"), 0);
    assert!(add(&mut p, &r2, 100_000, &["test2"]).is_some());
    assert_eq!(check(&mut p, "test2"), 0);
    r1.ready.set(true);
    assert_eq!(check(&mut p, "test1"), 1);
    assert_eq!(check(&mut p, "test1"), 0);
    r2.ready.set(true);
    assert_eq!(check(&mut p, "test2"), 1);
    assert_eq!(p.num_delayed(), 0);
    assert_eq!(r1.completions.get(), 1);
}

fn op() -> Op {
    Rc::default()
}

#[test]
fn request_expiry() {
    let mut p = purgatory();
    let (r1, r2) = (op(), op());
    add(&mut p, &r1, 20, &["test1"]);
    add(&mut p, &r2, 200_000, &["test1", "test2"]);
    assert_eq!(advance(&mut p, 19), 0);
    assert_eq!(advance(&mut p, 20), 1);
    assert_eq!((r1.expirations.get(), r1.completions.get()), (1, 1));
    assert_eq!(r2.completions.get(), 0);
    assert_eq!(p.num_delayed(), 1);
}

#[test]
fn request_purge() {
    let mut p = purgatory();
    let (r1, r2, r3) = (op(), op(), op());
    add(&mut p, &r1, 100_000, &["test1"]);
    let e2 = add(&mut p, &r2, 100_000, &["test1", "test2"]).unwrap();
    let e3 = add(&mut p, &r3, 100_000, &["test1", "test2", "test3"]).unwrap();
    assert_eq!((p.num_delayed(), p.watched()), (3, 6));
    assert!(force(&mut p, e2));
    assert!(!force(&mut p, e2), "exactly once");
    assert_eq!(p.num_delayed(), 2);
    force(&mut p, e3);
    assert_eq!(p.num_delayed(), 1);
    check(&mut p, "test1");
    assert_eq!(p.watched(), 4);
    check(&mut p, "test2");
    assert_eq!(p.watched(), 2);
    check(&mut p, "test3");
    assert_eq!(p.watched(), 1);
    assert_eq!(
        Rc::strong_count(&r2),
        1,
        "the purgatory let go of it on completion"
    );
}

#[test]
fn purge_interval_sweeps_lingering_references() {
    let mut p: P = Purgatory::new(0, 10);
    let ops: Vec<Op> = (0..30).map(|_| op()).collect();
    let entries: Vec<TimerKey> = ops
        .iter()
        .map(|op| add(&mut p, op, 100_000, &["a", "b"]).unwrap())
        .collect();
    for &entry in &entries[..25] {
        force(&mut p, entry);
    }
    assert_eq!(p.watched(), 60, "stale references linger until purged");
    advance(&mut p, 1);
    assert_eq!(p.watched(), 10, "25 lingering > purge interval 10: swept");
    for &entry in &entries[25..] {
        force(&mut p, entry);
    }
    advance(&mut p, 2);
    assert_eq!(p.watched(), 10, "5 lingering <= 10: not yet swept");
}

#[test]
fn cancel_for_key_returns_cancelled_operations() {
    let mut p = purgatory();
    let (r1, r2, r3) = (op(), op(), op());
    add(&mut p, &r1, 10_000, &["key"]);
    add(&mut p, &r2, 10_000, &["key"]);
    add(&mut p, &r3, 10_000, &["key2"]);
    let (cancelled, _, removed) = p.cancel_for_key(&"key");
    assert_eq!(cancelled.len(), 2);
    assert!(cancelled
        .iter()
        .all(|c| c.released && c.op.completions.get() == 0));
    assert_eq!(removed, Some("key"));
    assert_eq!((p.num_delayed(), p.watched()), (1, 1));
    assert!(p.cancel_for_key(&"nonexistent").0.is_empty());
}

#[test]
fn cancelled_operation_stays_watched_under_its_other_keys() {
    let mut p = purgatory();
    let r = op();
    let entry = add(&mut p, &r, 10_000, &["a", "b"]).unwrap();
    let (cancelled, _, _) = p.cancel_for_key(&"a");
    assert_eq!(cancelled.len(), 1);
    assert!(!cancelled[0].released, "still watched under b");
    assert_eq!((p.num_delayed(), p.watched()), (0, 1));
    assert!(p.is_live(entry) && !p.is_armed(entry));
    assert_eq!(advance(&mut p, 20_000), 0, "not armed: never expires");
    r.ready.set(true);
    assert_eq!(check(&mut p, "b"), 1);
    assert_eq!(r.completions.get(), 1);
    assert!(!p.is_live(entry));
    // Watched again while idle: the same entry, armed once.
    let r2 = op();
    let e2 = add(&mut p, &r2, 10_000, &["x", "y"]).unwrap();
    p.cancel_for_key(&"x");
    let again = p.watch(Some(e2), || unreachable!("the entry is live"), &["x"]);
    assert_eq!(again, e2);
    assert!(p.arm(again, 5));
    assert!(!p.arm(again, 5), "armed once");
    assert_eq!(advance(&mut p, 20_005), 1);
    assert_eq!(r2.expirations.get(), 1);
}

#[test]
fn second_try_catches_a_condition_that_became_true_while_watching() {
    let mut p = purgatory();
    let r = op();
    let mut tries = 0;
    let entry = p.try_complete_else_watch(&r, 1000, &["k"], |op| {
        tries += 1;
        tries == 2 || op.ready.get()
    });
    assert!(entry.is_none());
    assert_eq!(p.num_delayed(), 0, "never armed");
    assert_eq!(p.watched(), 1, "a stale reference until checked or purged");
    assert_eq!(Rc::strong_count(&r), 1);
}

#[test]
fn deadlines_complete_reschedule_and_expire() {
    let mut p = purgatory();
    assert_eq!(p.watch_deadline(&"m1", 45_000, 1), (false, None));
    assert_eq!(p.watch_deadline(&"m2", 45_000, 2), (false, None));
    p.advance(30_000);
    assert_eq!(p.watch_deadline(&"m1", 45_000, 3), (true, Some(1)));
    assert_eq!((p.num_delayed(), p.watched()), (2, 2));
    p.advance(45_000);
    match p.pop_expired() {
        Some((_, Item::Deadline(key, payload))) => assert_eq!((key, payload), ("m2", 2)),
        other => panic!("expected m2's deadline, got {:?}", other.map(|(k, _)| k)),
    }
    assert!(p.pop_expired().is_none());
    assert_eq!(p.complete_deadline(&"m2"), None, "it expired");
    assert_eq!(p.complete_deadline(&"m1"), Some(3));
    assert_eq!((p.num_delayed(), p.watched()), (0, 0));
}

#[test]
fn deadlines_whose_keys_share_one_hash() {
    #[derive(Clone, Debug, PartialEq, Eq)]
    struct Colliding(u32);
    impl Hash for Colliding {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            state.write_u8(7);
        }
    }
    let mut p: Purgatory<Colliding, Op, u32, RandomState> = Purgatory::new(0, 1000);
    for i in 0..200 {
        assert_eq!(p.watch_deadline(&Colliding(i), 100, i), (false, None));
    }
    p.advance(50);
    for i in 0..200 {
        assert_eq!(
            p.watch_deadline(&Colliding(i), 100, i + 1000),
            (true, Some(i))
        );
    }
    for i in (0..200).step_by(2) {
        assert_eq!(p.complete_deadline(&Colliding(i)), Some(i + 1000));
    }
    assert_eq!((p.num_delayed(), p.watched()), (100, 100));
    p.advance(149);
    assert!(p.pop_expired().is_none());
    p.advance(150);
    let mut fired: Vec<u32> = std::iter::from_fn(|| p.pop_expired())
        .map(|(_, item)| match item {
            Item::Deadline(Colliding(i), payload) => {
                assert_eq!(payload, i + 1000);
                i
            }
            Item::Operation { .. } => panic!("no operations here"),
        })
        .collect();
    fired.sort();
    assert_eq!(fired, (1..200).step_by(2).collect::<Vec<_>>());
    assert_eq!((p.num_delayed(), p.watched()), (0, 0));
    assert_eq!(p.complete_deadline(&Colliding(1)), None);
}

#[test]
fn bytes_per_pending_operation() {
    // The bindings' payloads are the same size as these stand-ins: a key is a pointer and
    // its hash, an operation or a callback one pointer.
    type Stand = Item<(usize, isize), usize, usize>;
    let entry = Timer::<Stand>::entry_bytes();
    let deadline_slot = std::mem::size_of::<DeadlineSlot>() + 1;
    println!("timer entry and placement: {entry} bytes; deadline index bucket: {deadline_slot} bytes; watcher reference: 8 bytes per key");
    assert!(entry <= 72, "timer entry grew to {entry} bytes");
}

#[test]
fn shutdown_drops_everything() {
    let mut p = purgatory();
    let r = op();
    add(&mut p, &r, 10, &["k"]);
    p.watch_deadline(&"m", 10, 1);
    let released = p.shutdown();
    assert_eq!((released.items.len(), released.watchers.len()), (2, 1));
    assert_eq!((p.num_delayed(), p.watched()), (0, 0));
    assert!(p.is_shut_down());
    drop(released);
    assert_eq!(Rc::strong_count(&r), 1);
}
