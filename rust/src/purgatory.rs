//! Delayed operations watched under keys: Kafka's `DelayedOperationPurgatory`.
//!
//! A delayed operation completes when its condition holds or expires at its deadline. It is
//! *watched* under one or more keys; whoever changes the state a key stands for calls
//! `check_and_complete(key)`, which tries the operations watched there. The timer expires what
//! nobody completed.
//!
//! This core keeps the data structures and Kafka's rules; it never runs an operation's code.
//! The caller runs `try_complete`, `on_complete` and `on_expiration` itself, between calls
//! into this core, so that code may call back into the purgatory (complete other operations,
//! watch new ones, even advance the clock) without any borrow being held across it. The
//! Python bindings drive it that way; [`Purgatory::try_complete_else_watch`] and
//! [`Purgatory::check_and_complete`] are the same sequences for operations written in Rust.
//!
//! ## Why try, watch, try again, then arm the timer
//! `try_complete_else_watch(op, keys)` first tries to complete `op`; if that fails it watches
//! `op` under every key, tries once more, and only then arms its timer. The second try closes
//! a lost-wakeup gap: if the condition became true after the first try but before `op` was in
//! the watcher lists, the `check_and_complete` that announced it could not see `op`, and
//! nobody would try it again until it expired. Arming the timer last means an operation that
//! completed in either try never enters the timer, so the timer's size stays exactly the
//! number of pending operations (Kafka's `numDelayed()`), which the purge rule relies on.
//!
//! ## Lingering operations and the purge rule
//! An operation completed through one key (or forced complete, or expired) stays in the
//! watcher lists of its other keys until someone checks them. `estimated` counts operations
//! ever watched since the last purge; when `estimated - pending > purge_interval`, every
//! watcher list is swept of completed operations and empty lists are removed, so memory
//! follows the live operations (Kafka's `purgeInterval`, default 1000).
//!
//! ## Deadline operations
//! A deadline is a native operation with no condition, one per key: the heartbeat cycle
//! ("complete the member's pending heartbeat, schedule the next one") is one call,
//! [`Purgatory::watch_deadline`], which moves the entry within the wheel without allocating.
//! Deadlines complete only through that call or [`Purgatory::complete_deadline`], so they
//! never linger in watcher lists and stay out of the purge estimate.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

use crate::timer::{Timer, TimerKey};

/// What the purgatory needs to know about an operation it watches: whether it completed, and
/// where its timer entry is. Implementations use interior mutability.
pub trait Operation: Clone {
    fn is_completed(&self) -> bool;
    fn timer_key(&self) -> Option<TimerKey>;
    fn set_timer_key(&self, key: Option<TimerKey>);
}

/// A timer entry: a watched operation, or the deadline of a key with its payload.
#[derive(Debug)]
pub enum Item<K, O, D> {
    Operation(O),
    Deadline(K, D),
}

/// What [`Purgatory::visit`] hands out.
pub enum Visited<'a, K, O, D> {
    Key(&'a K),
    Operation(&'a O),
    Payload(&'a D),
}

/// Everything a [`Purgatory::shutdown`] took out, for the caller to drop when it is safe to.
pub struct Released<K, O, D, S> {
    pub items: Vec<Item<K, O, D>>,
    pub watchers: HashMap<K, Vec<O>, S>,
    pub deadlines: HashMap<K, TimerKey, S>,
}

/// Kafka's `DelayedOperationPurgatory` over the timing wheel. `K` is the key type, `O` the
/// operation handle, `D` the payload of a deadline (for Python: its expiration callback).
pub struct Purgatory<K, O, D, S> {
    timer: Timer<Item<K, O, D>>,
    watchers: HashMap<K, Vec<O>, S>,
    deadlines: HashMap<K, TimerKey, S>,
    estimated: usize,
    purge_interval: usize,
    shut_down: bool,
}

impl<K, O, D, S> Purgatory<K, O, D, S>
where
    K: Hash + Eq + Clone,
    O: Operation,
    S: BuildHasher + Default,
{
    pub fn new(start_ms: i64, purge_interval: usize) -> Self {
        Purgatory {
            timer: Timer::new(start_ms),
            watchers: HashMap::default(),
            deadlines: HashMap::default(),
            estimated: 0,
            purge_interval,
            shut_down: false,
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.timer.now_ms()
    }

    pub fn is_shut_down(&self) -> bool {
        self.shut_down
    }

    /// Adds `op` to the watcher list of every key (Kafka's `watchForOperation`).
    pub fn watch(&mut self, op: &O, keys: &[K]) {
        for key in keys {
            match self.watchers.get_mut(key) {
                Some(list) => list.push(op.clone()),
                None => {
                    self.watchers.insert(key.clone(), vec![op.clone()]);
                }
            }
        }
        self.estimated += 1;
    }

    /// Arms `op`'s timer at `now + delay_ms` (saturating).
    pub fn arm(&mut self, op: &O, delay_ms: i64) {
        let expiration = self.now_ms().saturating_add(delay_ms);
        let key = self.timer.insert(expiration, Item::Operation(op.clone()));
        op.set_timer_key(Some(key));
    }

    /// Takes `op` out of the timer (it completed or was cancelled). True if it was armed.
    pub fn disarm(&mut self, op: &O) -> bool {
        let Some(key) = op.timer_key() else {
            return false;
        };
        op.set_timer_key(None);
        self.timer.cancel(key).is_some()
    }

    /// Cancels a timer entry by its key (an operation completed by its own code).
    pub fn cancel_timer_entry(&mut self, key: TimerKey) -> Option<Item<K, O, D>> {
        self.timer.cancel(key)
    }

    /// A copy of the operations watched under `key`, for the caller to try one by one.
    pub fn watched_under(&self, key: &K) -> Option<Vec<O>> {
        self.watchers.get(key).cloned()
    }

    /// Drops completed operations from `key`'s watcher list, and the list if it is empty.
    pub fn prune(&mut self, key: &K) {
        if let Some(list) = self.watchers.get_mut(key) {
            list.retain(|op| !op.is_completed());
            if list.is_empty() {
                self.watchers.remove(key);
            }
        }
    }

    /// Completes the deadline pending under `key`, if any, and watches a new one expiring at
    /// `now + delay_ms` carrying `payload`. Returns whether one was completed, and the
    /// previous payload (dropped by the caller).
    pub fn watch_deadline(&mut self, key: &K, delay_ms: i64, payload: D) -> (bool, Option<D>) {
        let expiration = self.now_ms().saturating_add(delay_ms);
        if let Some(timer_key) = self.deadlines.get_mut(key) {
            if let Some(new_key) = self.timer.reschedule(*timer_key, expiration) {
                *timer_key = new_key;
                let old = match self.timer.get_mut(new_key) {
                    Some(Item::Deadline(_, slot)) => Some(std::mem::replace(slot, payload)),
                    _ => None,
                };
                return (true, old);
            }
            self.deadlines.remove(key);
        }
        let timer_key = self
            .timer
            .insert(expiration, Item::Deadline(key.clone(), payload));
        self.deadlines.insert(key.clone(), timer_key);
        (false, None)
    }

    /// Completes the deadline pending under `key` without scheduling another.
    pub fn complete_deadline(&mut self, key: &K) -> Option<D> {
        let timer_key = self.deadlines.remove(key)?;
        match self.timer.cancel(timer_key) {
            Some(Item::Deadline(_, payload)) => Some(payload),
            _ => None,
        }
    }

    /// Stops watching `key`: cancels its deadline and every not-yet-completed operation watched
    /// under it (without completing them) and returns those operations. A cancelled operation
    /// stays in its other keys' watcher lists, as in Kafka.
    pub fn cancel_for_key(&mut self, key: &K) -> (Vec<O>, Option<D>) {
        let deadline = self.complete_deadline(key);
        let Some(list) = self.watchers.remove(key) else {
            return (Vec::new(), deadline);
        };
        let cancelled: Vec<O> = list.into_iter().filter(|op| !op.is_completed()).collect();
        for op in &cancelled {
            self.disarm(op);
        }
        (cancelled, deadline)
    }

    /// Moves the clock to `now_ms` (never backwards) and queues what is due; returns how many
    /// were queued. Drain them with [`Purgatory::pop_expired`].
    pub fn advance(&mut self, now_ms: i64) -> usize {
        self.timer.advance(now_ms)
    }

    /// The next expired entry, taken out of the timer (and, for a deadline, out of its key).
    pub fn pop_expired(&mut self) -> Option<Item<K, O, D>> {
        let (timer_key, _, item) = self.timer.pop_due()?;
        match &item {
            Item::Operation(op) => op.set_timer_key(None),
            Item::Deadline(key, _) => {
                if self.deadlines.get(key) == Some(&timer_key) {
                    self.deadlines.remove(key);
                }
            }
        }
        Some(item)
    }

    /// Kafka's purge rule: after an `advance`, sweep completed operations out of every watcher
    /// list when more than `purge_interval` may linger there. Returns the swept operations
    /// (`None` if it did not sweep), so that the caller releases them outside any borrow.
    pub fn maybe_purge(&mut self) -> Option<Vec<O>> {
        let pending = self.timer.len().saturating_sub(self.deadlines.len());
        if self.estimated.saturating_sub(pending) <= self.purge_interval {
            return None;
        }
        self.estimated = pending;
        let mut swept = Vec::new();
        self.watchers.retain(|_, list| {
            list.retain(|op| {
                let completed = op.is_completed();
                if completed {
                    swept.push(op.clone());
                }
                !completed
            });
            !list.is_empty()
        });
        Some(swept)
    }

    /// When the next entry is due (see [`Timer::next_expiration_ms`]).
    pub fn next_expiration_ms(&self) -> Option<i64> {
        self.timer.next_expiration_ms()
    }

    /// Operations in watcher lists, once per key; each pending deadline counts once.
    pub fn watched(&self) -> usize {
        self.watchers.values().map(Vec::len).sum::<usize>() + self.deadlines.len()
    }

    /// Entries pending in the timer (operations and deadlines), exact.
    pub fn num_delayed(&self) -> usize {
        self.timer.len()
    }

    /// Every timer payload, watcher-list key and watched operation (for a garbage
    /// collector's traversal).
    pub fn visit(&self, mut f: impl FnMut(Visited<'_, K, O, D>)) {
        for item in self.timer.values() {
            match item {
                Item::Operation(op) => f(Visited::Operation(op)),
                Item::Deadline(key, payload) => {
                    f(Visited::Key(key));
                    f(Visited::Payload(payload));
                }
            }
        }
        for (key, list) in &self.watchers {
            f(Visited::Key(key));
            list.iter().for_each(|op| f(Visited::Operation(op)));
        }
        self.deadlines.keys().for_each(|key| f(Visited::Key(key)));
    }

    /// Drops everything without completing it. Returns what was pending in the timer and the
    /// watcher lists, so that the caller releases them outside any borrow.
    pub fn shutdown(&mut self) -> Released<K, O, D, S> {
        self.shut_down = true;
        let items = self.timer.drain();
        for item in &items {
            if let Item::Operation(op) = item {
                op.set_timer_key(None);
            }
        }
        self.estimated = 0;
        Released {
            items,
            watchers: std::mem::take(&mut self.watchers),
            deadlines: std::mem::take(&mut self.deadlines),
        }
    }

    /// Kafka's `tryCompleteElseWatch` for operations whose code is Rust: `try_complete` is the
    /// operation's condition check (it completes the operation itself when the condition holds
    /// and returns whether it did). Returns true if the operation completed here.
    pub fn try_complete_else_watch(
        &mut self,
        op: &O,
        delay_ms: i64,
        keys: &[K],
        mut try_complete: impl FnMut(&mut Self, &O) -> bool,
    ) -> bool {
        if try_complete(self, op) {
            return true;
        }
        self.watch(op, keys);
        if try_complete(self, op) {
            return true;
        }
        if !op.is_completed() {
            self.arm(op, delay_ms);
        }
        false
    }

    /// Kafka's `checkAndComplete` for operations whose code is Rust. Returns how many
    /// completed.
    pub fn check_and_complete(
        &mut self,
        key: &K,
        mut try_complete: impl FnMut(&mut Self, &O) -> bool,
    ) -> usize {
        let Some(ops) = self.watched_under(key) else {
            return 0;
        };
        let mut completed = 0;
        for op in &ops {
            if !op.is_completed() && try_complete(self, op) {
                completed += 1;
            }
        }
        self.prune(key);
        completed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::collections::hash_map::RandomState;
    use std::rc::Rc;

    /// A test operation: completes when `ready` is set; records what happened to it.
    #[derive(Debug, Default)]
    struct Fake {
        ready: Cell<bool>,
        completed: Cell<bool>,
        completions: Cell<u32>,
        expirations: Cell<u32>,
        timer: Cell<Option<TimerKey>>,
    }

    #[derive(Clone, Debug, Default)]
    struct Op(Rc<Fake>);

    impl Operation for Op {
        fn is_completed(&self) -> bool {
            self.0.completed.get()
        }
        fn timer_key(&self) -> Option<TimerKey> {
            self.0.timer.get()
        }
        fn set_timer_key(&self, key: Option<TimerKey>) {
            self.0.timer.set(key);
        }
    }

    type P = Purgatory<&'static str, Op, u32, RandomState>;

    /// Kafka's `forceComplete`: exactly once, cancelling the timer.
    fn force_complete(p: &mut P, op: &Op) -> bool {
        if op.is_completed() {
            return false;
        }
        op.0.completed.set(true);
        p.disarm(op);
        op.0.completions.set(op.0.completions.get() + 1);
        true
    }

    fn try_complete(p: &mut P, op: &Op) -> bool {
        op.0.ready.get() && force_complete(p, op)
    }

    /// Kafka's expiry: forceComplete, then onExpiration.
    fn advance(p: &mut P, now: i64) -> usize {
        p.advance(now);
        let mut n = 0;
        while let Some(item) = p.pop_expired() {
            if let Item::Operation(op) = item {
                if force_complete(p, &op) {
                    op.0.expirations.set(op.0.expirations.get() + 1);
                }
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
        let r1 = Op::default();
        let r2 = Op::default();
        assert_eq!(p.check_and_complete(&"test1", try_complete), 0);
        assert!(!p.try_complete_else_watch(&r1, 100_000, &["test1"], try_complete));
        assert_eq!(p.check_and_complete(&"test1", try_complete), 0);
        assert!(!p.try_complete_else_watch(&r2, 100_000, &["test2"], try_complete));
        assert_eq!(p.check_and_complete(&"test2", try_complete), 0);
        r1.0.ready.set(true);
        assert_eq!(p.check_and_complete(&"test1", try_complete), 1);
        assert_eq!(p.check_and_complete(&"test1", try_complete), 0);
        r2.0.ready.set(true);
        assert_eq!(p.check_and_complete(&"test2", try_complete), 1);
        assert_eq!(p.num_delayed(), 0);
        assert_eq!(r1.0.completions.get(), 1);
    }

    #[test]
    fn request_expiry() {
        let mut p = purgatory();
        let r1 = Op::default();
        let r2 = Op::default();
        p.try_complete_else_watch(&r1, 20, &["test1"], try_complete);
        p.try_complete_else_watch(&r2, 200_000, &["test1", "test2"], try_complete);
        assert_eq!(advance(&mut p, 19), 0);
        assert_eq!(advance(&mut p, 20), 1);
        assert!(r1.is_completed() && r1.0.expirations.get() == 1 && r1.0.completions.get() == 1);
        assert!(!r2.is_completed());
        assert_eq!(p.num_delayed(), 1);
    }

    #[test]
    fn request_purge() {
        let mut p = purgatory();
        let (r1, r2, r3) = (Op::default(), Op::default(), Op::default());
        p.try_complete_else_watch(&r1, 100_000, &["test1"], try_complete);
        p.try_complete_else_watch(&r2, 100_000, &["test1", "test2"], try_complete);
        p.try_complete_else_watch(&r3, 100_000, &["test1", "test2", "test3"], try_complete);
        assert_eq!((p.num_delayed(), p.watched()), (3, 6));
        force_complete(&mut p, &r2);
        assert_eq!(p.num_delayed(), 2);
        force_complete(&mut p, &r3);
        assert_eq!(p.num_delayed(), 1);
        p.check_and_complete(&"test1", try_complete);
        assert_eq!(p.watched(), 4);
        p.check_and_complete(&"test2", try_complete);
        assert_eq!(p.watched(), 2);
        p.check_and_complete(&"test3", try_complete);
        assert_eq!(p.watched(), 1);
    }

    #[test]
    fn purge_interval_sweeps_lingering_operations() {
        let mut p: P = Purgatory::new(0, 10);
        let ops: Vec<Op> = (0..30).map(|_| Op::default()).collect();
        for op in &ops {
            p.try_complete_else_watch(op, 100_000, &["a", "b"], try_complete);
        }
        for op in &ops[..25] {
            force_complete(&mut p, op);
        }
        assert_eq!(p.watched(), 60, "completed operations linger until purged");
        advance(&mut p, 1);
        assert_eq!(p.watched(), 10, "25 lingering > purge interval 10: swept");
        for op in &ops[25..] {
            force_complete(&mut p, op);
        }
        advance(&mut p, 2);
        assert_eq!(p.watched(), 10, "5 lingering <= 10: not yet swept");
    }

    #[test]
    fn cancel_for_key_returns_cancelled_operations() {
        let mut p = purgatory();
        let (r1, r2, r3) = (Op::default(), Op::default(), Op::default());
        p.try_complete_else_watch(&r1, 10_000, &["key"], try_complete);
        p.try_complete_else_watch(&r2, 10_000, &["key"], try_complete);
        p.try_complete_else_watch(&r3, 10_000, &["key2"], try_complete);
        let (cancelled, _) = p.cancel_for_key(&"key");
        assert_eq!(cancelled.len(), 2);
        assert!(cancelled.iter().all(|op| !op.is_completed()));
        assert_eq!((p.num_delayed(), p.watched()), (1, 1));
        assert!(p.cancel_for_key(&"nonexistent").0.is_empty());
    }

    #[test]
    fn second_try_catches_a_condition_that_became_true_while_watching() {
        let mut p = purgatory();
        let op = Op::default();
        let mut tries = 0;
        let done = p.try_complete_else_watch(&op, 1000, &["k"], |p, op| {
            tries += 1;
            if tries == 2 {
                op.0.ready.set(true);
            }
            try_complete(p, op)
        });
        assert!(done);
        assert_eq!(p.num_delayed(), 0, "never armed");
        assert_eq!(
            p.watched(),
            1,
            "left in the watcher list until checked or purged"
        );
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
            Some(Item::Deadline(key, payload)) => assert_eq!((key, payload), ("m2", 2)),
            other => panic!("expected m2's deadline, got {other:?}"),
        }
        assert!(p.pop_expired().is_none());
        assert_eq!(p.complete_deadline(&"m2"), None, "it expired");
        assert_eq!(p.complete_deadline(&"m1"), Some(3));
        assert_eq!((p.num_delayed(), p.watched()), (0, 0));
    }

    #[test]
    fn bytes_per_pending_operation() {
        // The bindings' payloads are the same size as these stand-ins: a key is a pointer and
        // its hash, an operation or a callback one pointer.
        type Stand = Item<(usize, isize), usize, usize>;
        let entry = Timer::<Stand>::entry_bytes();
        let deadline_map = std::mem::size_of::<((usize, isize), TimerKey)>() + 1;
        println!("timer entry: {entry} bytes; deadline map entry: {deadline_map} bytes; watcher slot: 8 bytes per key");
        assert!(entry <= 64, "timer entry grew to {entry} bytes");
    }

    #[test]
    fn shutdown_drops_everything() {
        let mut p = purgatory();
        let op = Op::default();
        p.try_complete_else_watch(&op, 10, &["k"], try_complete);
        p.watch_deadline(&"m", 10, 1);
        let released = p.shutdown();
        assert_eq!(
            (
                released.items.len(),
                released.watchers.len(),
                released.deadlines.len()
            ),
            (2, 1, 1)
        );
        assert_eq!((p.num_delayed(), p.watched()), (0, 0));
        assert_eq!(op.timer_key(), None);
        assert!(p.is_shut_down());
    }
}
