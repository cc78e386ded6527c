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
//! ## One entry per operation, indexed by the watcher lists
//! A watched operation owns one timer entry from the moment it is first watched: the entry
//! holds the operation's handle (the only one the purgatory keeps) and is *idle* until the
//! timer is armed. Watcher lists hold the entry's [`TimerKey`], not the operation: an
//! operation is complete, as far as the watcher lists are concerned, exactly when its key is
//! stale. Completing, expiring or cancelling an operation for good releases its entry, and
//! every reference to it in the watcher lists becomes stale at once without being touched;
//! a purge reads only the slab to find them, never the operations.
//!
//! ## Why try, watch, try again, then arm the timer
//! `try_complete_else_watch(op, keys)` first tries to complete `op`; if that fails it watches
//! `op` under every key, tries once more, and only then arms its timer. The second try closes
//! a lost-wakeup gap: if the condition became true after the first try but before `op` was in
//! the watcher lists, the `check_and_complete` that announced it could not see `op`, and
//! nobody would try it again until it expired. Arming the timer last means an operation that
//! completed in either try is never armed, so the armed count stays exactly the number of
//! pending operations (Kafka's `numDelayed()`), which the purge rule relies on.
//!
//! ## Lingering references and the purge rule
//! An operation completed through one key (or forced complete, or expired) leaves stale
//! references in the watcher lists of its other keys until someone checks them. `estimated`
//! counts operations ever watched since the last purge; when `estimated - pending >
//! purge_interval`, every watcher list is swept of stale references and empty lists are
//! removed, so memory follows the live operations (Kafka's `purgeInterval`, default 1000).
//!
//! ## Cancellation
//! `cancel_for_key(key)` disarms the operations watched under `key` without completing them,
//! as Kafka's `cancelForKey` does: one still watched under another key stays there (idle, not
//! pending) and may yet be completed through it; one watched nowhere else is released.
//!
//! ## Deadline operations
//! A deadline is a native operation with no condition, one per key: the heartbeat cycle
//! ("complete the member's pending heartbeat, schedule the next one") is one call,
//! [`Purgatory::watch_deadline`], which moves the entry within the wheel without allocating.
//! Deadlines complete only through that call or [`Purgatory::complete_deadline`], so they
//! never linger in watcher lists and stay out of the purge estimate. Their index is a hash
//! table of timer-entry numbers (8 bytes a bucket): the key lives once, in the entry, and a
//! lookup reads the entry it is about to reschedule anyway.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;

use crate::timer::{Timer, TimerKey};

/// A timer entry: a watched operation with the number of references to it in the watcher
/// lists, or the deadline of a key with its payload.
#[derive(Debug)]
pub enum Item<K, O, D> {
    Operation { op: O, watches: u32 },
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
    pub watchers: HashMap<K, Vec<TimerKey>, S>,
}

/// A pending deadline in the index: its timer entry's number and 32 bits of its key's hash
/// (enough to rehash the table without reading the entries).
#[derive(Clone, Copy, Debug)]
struct DeadlineSlot {
    entry: u32,
    hash: u32,
}

/// The table hash of a 32-bit key hash: the same bits high and low, so that both the bucket
/// (low bits) and the control byte (top 7 bits) vary.
fn spread(hash: u32) -> u64 {
    (u64::from(hash) << 32) | u64::from(hash)
}

/// An operation [`Purgatory::cancel_for_key`] cancelled, and whether its entry was released
/// (it was watched under no other key) or kept idle.
pub struct Cancelled<O> {
    pub op: O,
    pub key: TimerKey,
    pub released: bool,
}

/// Whether an index slot is the deadline of `key` (whose hash is `hash`).
fn is_deadline_of<K: Eq, O, D>(
    timer: &Timer<Item<K, O, D>>,
    slot: &DeadlineSlot,
    hash: u32,
    key: &K,
) -> bool {
    slot.hash == hash
        && matches!(timer.value_at(slot.entry), Some(Item::Deadline(k, _)) if k == key)
}

/// Kafka's `DelayedOperationPurgatory` over the timing wheel. `K` is the key type, `O` the
/// operation handle, `D` the payload of a deadline (for Python: its expiration callback).
pub struct Purgatory<K, O, D, S> {
    timer: Timer<Item<K, O, D>>,
    watchers: HashMap<K, Vec<TimerKey>, S>,
    deadlines: HashTable<DeadlineSlot>,
    hasher: S,
    estimated: usize,
    purge_interval: usize,
    shut_down: bool,
}

impl<K, O, D, S> Purgatory<K, O, D, S>
where
    K: Hash + Eq + Clone,
    O: Clone,
    S: BuildHasher + Default,
{
    pub fn new(start_ms: i64, purge_interval: usize) -> Self {
        Purgatory {
            timer: Timer::new(start_ms),
            watchers: HashMap::default(),
            deadlines: HashTable::new(),
            hasher: S::default(),
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

    /// Whether `entry` is an operation's live entry here (watched, armed or not).
    pub fn is_live(&self, entry: TimerKey) -> bool {
        self.timer.is_live(entry)
    }

    /// Whether `entry` is an operation's entry whose timer is armed (it is pending).
    pub fn is_armed(&self, entry: TimerKey) -> bool {
        self.timer.is_armed(entry)
    }

    /// Adds an operation to the watcher list of every key (Kafka's `watchForOperation`) and
    /// returns its entry: `entry` if it is live (an operation cancelled here and watched
    /// again), else a new idle one holding `op()`.
    pub fn watch(
        &mut self,
        entry: Option<TimerKey>,
        op: impl FnOnce() -> O,
        keys: &[K],
    ) -> TimerKey {
        let entry = match entry.filter(|&e| self.timer.is_live(e)) {
            Some(entry) => entry,
            None => self.timer.allocate(Item::Operation {
                op: op(),
                watches: 0,
            }),
        };
        for key in keys {
            match self.watchers.get_mut(key) {
                Some(list) => list.push(entry),
                None => {
                    self.watchers.insert(key.clone(), vec![entry]);
                }
            }
        }
        if let Some(Item::Operation { watches, .. }) = self.timer.get_mut(entry) {
            *watches = watches.saturating_add(keys.len() as u32);
        }
        self.estimated += 1;
        entry
    }

    /// Arms a watched operation's timer at `now + delay_ms` (saturating). False if `entry`
    /// is stale or already armed.
    pub fn arm(&mut self, entry: TimerKey, delay_ms: i64) -> bool {
        let expiration = self.now_ms().saturating_add(delay_ms);
        self.timer.arm(entry, expiration)
    }

    /// Releases an operation's entry: it completed (by its own code or by expiry). Returns
    /// the handle the entry held, for the caller to drop outside any borrow.
    pub fn complete(&mut self, entry: TimerKey) -> Option<O> {
        match self.timer.get(entry)? {
            Item::Operation { .. } => match self.timer.cancel(entry)? {
                Item::Operation { op, .. } => Some(op),
                Item::Deadline(..) => None,
            },
            Item::Deadline(..) => None,
        }
    }

    /// The operations watched under `key` and not completed, for the caller to try one by one.
    pub fn watched_under(&self, key: &K) -> Vec<(TimerKey, O)> {
        let Some(list) = self.watchers.get(key) else {
            return Vec::new();
        };
        list.iter()
            .filter_map(|&entry| match self.timer.get(entry)? {
                Item::Operation { op, .. } => Some((entry, op.clone())),
                Item::Deadline(..) => None,
            })
            .collect()
    }

    /// Drops stale references from `key`'s watcher list, and the list if it is empty.
    /// Returns the key of a removed list, for the caller to drop outside any borrow.
    pub fn prune(&mut self, key: &K) -> Option<K> {
        let list = self.watchers.get_mut(key)?;
        list.retain(|&entry| self.timer.is_live(entry));
        if list.is_empty() {
            return self.watchers.remove_entry(key).map(|(k, _)| k);
        }
        None
    }

    fn key_hash(&self, key: &K) -> u32 {
        let hash = self.hasher.hash_one(key);
        (hash ^ (hash >> 32)) as u32
    }

    /// Takes the deadline at entry number `entry` out of the index.
    fn unindex_deadline(&mut self, hash: u32, entry: u32) {
        if let Ok(found) = self
            .deadlines
            .find_entry(spread(hash), |s| s.entry == entry)
        {
            found.remove();
        }
    }

    /// Completes the deadline pending under `key`, if any, and watches a new one expiring at
    /// `now + delay_ms` carrying `payload`. Returns whether one was completed, and the
    /// previous payload (dropped by the caller). One probe of the index either way.
    pub fn watch_deadline(&mut self, key: &K, delay_ms: i64, payload: D) -> (bool, Option<D>) {
        let expiration = self.now_ms().saturating_add(delay_ms);
        let hash = self.key_hash(key);
        let Purgatory {
            timer, deadlines, ..
        } = self;
        let found = deadlines.entry(
            spread(hash),
            |s| is_deadline_of(timer, s, hash, key),
            |s| spread(s.hash),
        );
        let vacant = match found {
            Entry::Occupied(mut occupied) => {
                let slot = occupied.get_mut();
                let moved = timer
                    .key_at(slot.entry)
                    .and_then(|entry| timer.reschedule(entry, expiration));
                if let Some(moved) = moved {
                    slot.entry = moved.index();
                    let old = match timer.get_mut(moved) {
                        Some(Item::Deadline(_, slot)) => Some(std::mem::replace(slot, payload)),
                        _ => None,
                    };
                    return (true, old);
                }
                // Not armed: cannot happen to an indexed deadline, but never leave it indexed.
                occupied.remove().1
            }
            Entry::Vacant(vacant) => vacant,
        };
        let entry = timer.insert(expiration, Item::Deadline(key.clone(), payload));
        vacant.insert(DeadlineSlot {
            entry: entry.index(),
            hash,
        });
        (false, None)
    }

    /// Completes the deadline pending under `key` without scheduling another.
    pub fn complete_deadline(&mut self, key: &K) -> Option<D> {
        let hash = self.key_hash(key);
        let Purgatory {
            timer, deadlines, ..
        } = self;
        let found = deadlines
            .find_entry(spread(hash), |s| is_deadline_of(timer, s, hash, key))
            .ok()?;
        let (slot, _) = found.remove();
        let entry = timer.key_at(slot.entry)?;
        match timer.cancel(entry) {
            Some(Item::Deadline(_, payload)) => Some(payload),
            _ => None,
        }
    }

    /// Stops watching `key`: cancels its deadline and every not-yet-completed operation watched
    /// under it (without completing them) and returns those operations, in list order. A
    /// cancelled operation stays in its other keys' watcher lists, as in Kafka, idle; one
    /// watched under no other key is released.
    pub fn cancel_for_key(&mut self, key: &K) -> (Vec<Cancelled<O>>, Option<D>, Option<K>) {
        let deadline = self.complete_deadline(key);
        let Some((key, list)) = self.watchers.remove_entry(key) else {
            return (Vec::new(), deadline, None);
        };
        let mut cancelled = Vec::new();
        for entry in list {
            self.timer.disarm(entry);
            let (op, last) = match self.timer.get_mut(entry) {
                Some(Item::Operation { op, watches }) => {
                    *watches = watches.saturating_sub(1);
                    (op.clone(), *watches == 0)
                }
                _ => continue,
            };
            if last {
                self.timer.cancel(entry);
            }
            cancelled.push(Cancelled {
                op,
                key: entry,
                released: last,
            });
        }
        (cancelled, deadline, Some(key))
    }

    /// Moves the clock to `now_ms` (never backwards) and queues what is due; returns how many
    /// were queued. Drain them with [`Purgatory::pop_expired`].
    pub fn advance(&mut self, now_ms: i64) -> usize {
        self.timer.advance(now_ms)
    }

    /// The next expired entry, released (and, for a deadline, taken out of its key), with
    /// the key it had.
    pub fn pop_expired(&mut self) -> Option<(TimerKey, Item<K, O, D>)> {
        let (timer_key, _, item) = self.timer.pop_due()?;
        if let Item::Deadline(key, _) = &item {
            let hash = self.key_hash(key);
            self.unindex_deadline(hash, timer_key.index());
        }
        Some((timer_key, item))
    }

    /// Kafka's purge rule: after an `advance`, sweep stale references out of every watcher
    /// list when more than `purge_interval` may linger there. Reads only the slab. Returns
    /// the keys of the lists it removed (`None` if it did not sweep), so that the caller
    /// drops them outside any borrow.
    pub fn maybe_purge(&mut self) -> Option<Vec<K>> {
        let pending = self.timer.len().saturating_sub(self.deadlines.len());
        if self.estimated.saturating_sub(pending) <= self.purge_interval {
            return None;
        }
        self.estimated = pending;
        let timer = &self.timer;
        let mut emptied = Vec::new();
        self.watchers.retain(|key, list| {
            list.retain(|&entry| timer.is_live(entry));
            if list.is_empty() {
                emptied.push(key.clone());
            }
            !list.is_empty()
        });
        Some(emptied)
    }

    /// When the next entry is due (see [`Timer::next_expiration_ms`]).
    pub fn next_expiration_ms(&mut self) -> Option<i64> {
        self.timer.next_expiration_ms()
    }

    /// References in watcher lists, once per key; each pending deadline counts once.
    pub fn watched(&self) -> usize {
        self.watchers.values().map(Vec::len).sum::<usize>() + self.deadlines.len()
    }

    /// Entries pending in the timer (operations and deadlines), exact.
    pub fn num_delayed(&self) -> usize {
        self.timer.len()
    }

    /// Bytes this purgatory has allocated on the heap for its wheel, watcher lists and
    /// deadline index (capacities), beyond what keys, operations and payloads own.
    pub fn heap_bytes(&self) -> usize {
        let list = std::mem::size_of::<(K, Vec<TimerKey>)>() + 1;
        let lists: usize = self.watchers.values().map(Vec::capacity).sum();
        self.timer.heap_bytes()
            + self.watchers.capacity() * list
            + lists * std::mem::size_of::<TimerKey>()
            + self.deadlines.capacity() * (std::mem::size_of::<DeadlineSlot>() + 1)
    }

    /// Every live operation and deadline payload, watcher-list key and deadline key (for a
    /// garbage collector's traversal).
    pub fn visit(&self, mut f: impl FnMut(Visited<'_, K, O, D>)) {
        for item in self.timer.values() {
            match item {
                Item::Operation { op, .. } => f(Visited::Operation(op)),
                Item::Deadline(key, payload) => {
                    f(Visited::Key(key));
                    f(Visited::Payload(payload));
                }
            }
        }
        self.watchers.keys().for_each(|key| f(Visited::Key(key)));
    }

    /// Drops everything without completing it. Returns what the timer and the watcher lists
    /// held, so that the caller releases them outside any borrow.
    pub fn shutdown(&mut self) -> Released<K, O, D, S> {
        self.shut_down = true;
        self.estimated = 0;
        self.deadlines = HashTable::new();
        Released {
            items: self.timer.drain(),
            watchers: std::mem::take(&mut self.watchers),
        }
    }

    /// Kafka's `tryCompleteElseWatch` for operations whose code is Rust. `try_complete` is
    /// the operation's condition check: it returns true when the condition holds, and this
    /// completes the operation. Returns the operation's entry if it is now pending, `None`
    /// if it completed here.
    pub fn try_complete_else_watch(
        &mut self,
        op: &O,
        delay_ms: i64,
        keys: &[K],
        mut try_complete: impl FnMut(&O) -> bool,
    ) -> Option<TimerKey> {
        if try_complete(op) {
            return None;
        }
        let entry = self.watch(None, || op.clone(), keys);
        if try_complete(op) {
            self.complete(entry);
            return None;
        }
        self.arm(entry, delay_ms);
        Some(entry)
    }

    /// Kafka's `checkAndComplete` for operations whose code is Rust. Returns the operations
    /// that completed (their entries released).
    pub fn check_and_complete(
        &mut self,
        key: &K,
        mut try_complete: impl FnMut(&O) -> bool,
    ) -> Vec<O> {
        let mut completed = Vec::new();
        for (entry, op) in self.watched_under(key) {
            if self.timer.is_live(entry) && try_complete(&op) {
                self.complete(entry);
                completed.push(op);
            }
        }
        self.prune(key);
        completed
    }
}

#[cfg(test)]
mod tests;
