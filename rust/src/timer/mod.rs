//! A hierarchical timing wheel driven by a caller-supplied clock.
//!
//! Kafka's purgatory keeps its delayed operations in a `SystemTimer`: hierarchical timing
//! wheels with a 1 ms tick, where an entry lands in the finest wheel whose span covers its
//! delay and cascades into finer wheels as time approaches. This module keeps those semantics
//! and lays the wheels out the way tokio does, which makes "when is the next expiration?" a
//! couple of bit operations instead of a priority-queue walk:
//!
//! | level | slot covers | level covers |
//! |------:|------------:|-------------:|
//! | 0 | 1 ms | 64 ms |
//! | 1 | 64 ms | ~4.1 s |
//! | 2 | ~4.1 s | ~4.4 min |
//! | 3 | ~4.4 min | ~4.7 h |
//! | 4 | ~4.7 h | ~12.4 days |
//! | 5 | ~12.4 days | ~2.2 years |
//! | 6..=10 | ... | the rest of the `u64` range |
//!
//! Eleven levels of 64 slots cover every 64-bit time, so there is no overflow list: a delay of
//! any size has a slot. (A 45 s session timeout lands in level 2, the 30 min maximum session
//! timeout in level 3.)
//!
//! Each level keeps an `occupied` bitmap; the next non-empty slot is
//! `occupied.rotate_right(now_slot).trailing_zeros()`. An entry goes to the level of the
//! highest 6-bit group in which its expiration differs from the wheel's current time, so its
//! slot's start is after "now" and no later than the expiration. When the clock reaches a
//! slot's start, its entries whose expiration has come are due; the others are re-inserted one
//! or more levels down. Nothing fires early (a slot never starts after its entries' expiration),
//! nothing fires twice (an entry is in exactly one place), and nothing is lost in a cascade
//! (entries are moved, never copied).
//!
//! Entries live in a slab (a `Vec` with a free list) and a slot is a vector of placements
//! naming them (the `slab` module). Adding an entry pushes a placement; cancelling one only
//! marks it stale, so neither touches any other entry. A cascade moves placements by the
//! expiration they carry and reads an entry only when its placement falls due, so a million
//! entries cascade through sequential memory rather than by chasing links through the slab.
//! Stale placements are dropped when their slot is reached, when [`Timer::next_expiration_ms`]
//! looks at their slot, or by a compaction once they outnumber the live entries, so memory
//! follows the pending entries. A [`TimerKey`] carries a generation, so a stale key can never
//! touch a reused entry.
//!
//! Time is an argument everywhere: [`Timer::advance`] moves the clock and collects what is due
//! into a queue that the caller drains with [`Timer::pop_due`], one entry at a time. Nothing
//! here reads a clock or calls back, so a caller may run arbitrary code (including code that
//! adds or cancels entries) between two pops.

mod slab;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

pub use slab::TimerKey;
use slab::{Placement, Slab, State};

const LEVEL_BITS: u32 = 6;
const SLOTS: usize = 1 << LEVEL_BITS;
const SLOT_MASK: u64 = SLOTS as u64 - 1;
/// Enough levels of 64 slots to cover the whole `u64` range of wheel time.
pub const NUM_LEVELS: usize = 11;
/// Stale placements tolerated beyond the live ones before a compaction sweeps them.
const COMPACTION_SLACK: usize = 4096;
/// An emptied slot keeps its vector for reuse unless it grew beyond this many placements, so
/// that memory follows the armed entries: at most this many per slot stay allocated.
const SLOT_KEEP: usize = 64;
/// The due queue is shrunk back to this capacity when it empties.
const DUE_KEEP: usize = 1024;

#[derive(Debug)]
struct Level {
    occupied: u64,
    slots: [Vec<Placement>; SLOTS],
}

impl Level {
    fn new() -> Self {
        Level {
            occupied: 0,
            slots: std::array::from_fn(|_| Vec::new()),
        }
    }
}

/// The hierarchical timing wheel. `T` is the payload of an entry.
#[derive(Debug)]
pub struct Timer<T> {
    slab: Slab<T>,
    origin: i64,
    now: i64,
    elapsed: u64,
    levels: Vec<Level>,
    overdue: Vec<Placement>,
    due: VecDeque<TimerKey>,
    /// Armed entries: in the wheel, overdue or due.
    len: usize,
    /// Placements in the wheel and the overdue list, stale ones included.
    placements: usize,
}

/// The wheel level for an expiration at wheel time `when`, seen from wheel time `elapsed`.
fn level_for(elapsed: u64, when: u64) -> usize {
    let masked = (elapsed ^ when) | SLOT_MASK;
    let significant = 63 - masked.leading_zeros();
    (significant / LEVEL_BITS) as usize
}

fn slot_for(when: u64, level: usize) -> usize {
    ((when >> (LEVEL_BITS * level as u32)) & SLOT_MASK) as usize
}

impl<T> Timer<T> {
    /// A wheel whose clock starts at `start_ms`.
    pub fn new(start_ms: i64) -> Self {
        Timer {
            slab: Slab::new(),
            origin: start_ms,
            now: start_ms,
            elapsed: 0,
            levels: (0..NUM_LEVELS).map(|_| Level::new()).collect(),
            overdue: Vec::new(),
            due: VecDeque::new(),
            len: 0,
            placements: 0,
        }
    }

    /// The current time: the largest time passed to [`Timer::advance`] (or the start).
    pub fn now_ms(&self) -> i64 {
        self.now
    }

    /// Armed entries: added and neither cancelled nor popped (in the wheel, overdue or due).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Wheel time of an expiration after `now` (so after `origin`).
    fn wheel_time(&self, expiration: i64) -> u64 {
        expiration.wrapping_sub(self.origin) as u64
    }

    /// Adds an entry expiring at `expiration_ms`. An expiration at or before the current time
    /// is due at the next [`Timer::advance`], whatever time that is given.
    pub fn insert(&mut self, expiration_ms: i64, value: T) -> TimerKey {
        let key = self.slab.allocate(value);
        self.arm(key, expiration_ms);
        key
    }

    /// Stores a value in an idle entry: it holds the value but is not armed (not counted in
    /// [`Timer::len`]) until [`Timer::arm`].
    pub fn allocate(&mut self, value: T) -> TimerKey {
        self.slab.allocate(value)
    }

    /// Arms an idle entry to expire at `expiration_ms`. False for a stale key or an entry
    /// already armed.
    pub fn arm(&mut self, key: TimerKey, expiration_ms: i64) -> bool {
        match self.slab.get(key) {
            Some(e) if e.state == State::Idle => {}
            _ => return false,
        }
        self.len += 1;
        self.place_anew(key.index, expiration_ms);
        true
    }

    /// Takes an armed entry out of the wheel, keeping it (idle) with its payload. False for
    /// a stale key or an entry not armed.
    pub fn disarm(&mut self, key: TimerKey) -> bool {
        match self.slab.get(key) {
            Some(e) if e.state.is_armed() => {}
            _ => return false,
        }
        let e = &mut self.slab[key.index];
        e.state = State::Idle;
        e.stamp = e.stamp.wrapping_add(1);
        self.len -= 1;
        self.maybe_compact();
        true
    }

    /// Whether `key` names a live entry (idle or armed).
    pub fn is_live(&self, key: TimerKey) -> bool {
        self.slab.get(key).is_some()
    }

    /// Whether `key` names an armed entry.
    pub fn is_armed(&self, key: TimerKey) -> bool {
        self.slab.get(key).is_some_and(|e| e.state.is_armed())
    }

    /// Moves an armed entry to a new expiration, keeping its payload. Returns its key, which
    /// changes only if the entry was already in the due queue. `None` for a stale key or an
    /// idle entry.
    ///
    /// Moving an entry in the wheel to a *later* expiration leaves its placement where it is:
    /// when the clock reaches that slot, the entry is placed again, like a cascading one. The
    /// heartbeat cycle pushes every member's deadline later many times before it is reached,
    /// and each push is then one write to the entry.
    pub fn reschedule(&mut self, key: TimerKey, expiration_ms: i64) -> Option<TimerKey> {
        let entry = self.slab.get(key)?;
        match entry.state {
            State::Due => {
                let value = self.cancel(key)?;
                return Some(self.insert(expiration_ms, value));
            }
            State::Wheel if expiration_ms >= entry.expiration => {
                self.slab[key.index].expiration = expiration_ms;
                return Some(key);
            }
            State::Wheel | State::Overdue => {}
            State::Idle | State::Free => return None,
        }
        self.place_anew(key.index, expiration_ms);
        self.maybe_compact();
        Some(key)
    }

    /// Removes a live entry (armed or idle) and returns its payload; `None` for a stale key.
    pub fn cancel(&mut self, key: TimerKey) -> Option<T> {
        let armed = self.slab.get(key)?.state.is_armed();
        if armed {
            self.len -= 1;
        }
        let value = self.slab.release(key.index);
        if armed {
            self.maybe_compact();
        }
        Some(value)
    }

    /// The payload of a live entry.
    pub fn get(&self, key: TimerKey) -> Option<&T> {
        self.slab.get(key)?.value.as_ref()
    }

    /// The key of the live entry at `index`, if there is one.
    pub fn key_at(&self, index: u32) -> Option<TimerKey> {
        self.slab.get_index(index).map(|e| TimerKey {
            index,
            generation: e.generation,
        })
    }

    /// The payload of the live entry at `index`, if there is one.
    pub fn value_at(&self, index: u32) -> Option<&T> {
        self.slab.get_index(index)?.value.as_ref()
    }

    /// The payload of a live entry, to change it in place.
    pub fn get_mut(&mut self, key: TimerKey) -> Option<&mut T> {
        self.slab.get(key)?;
        self.slab[key.index].value.as_mut()
    }

    /// The expiration of an armed entry.
    pub fn expiration_of(&self, key: TimerKey) -> Option<i64> {
        let e = self.slab.get(key)?;
        e.state.is_armed().then_some(e.expiration)
    }

    /// Gives the entry a new stamp and expiration and places it: any earlier placement of
    /// it becomes stale.
    fn place_anew(&mut self, index: u32, expiration: i64) {
        let e = &mut self.slab[index];
        e.stamp = e.stamp.wrapping_add(1);
        e.expiration = expiration;
        let placement = Placement {
            index,
            stamp: e.stamp,
            expiration,
        };
        self.place(placement);
    }

    /// Puts a placement in the slot its expiration falls in (or in the overdue list) and
    /// records the entry's state. Does not read the entry when it is already in the wheel.
    fn place(&mut self, placement: Placement) {
        self.placements += 1;
        if placement.expiration <= self.now {
            self.slab[placement.index].state = State::Overdue;
            self.overdue.push(placement);
            return;
        }
        self.slab[placement.index].state = State::Wheel;
        self.push_to_wheel(placement);
    }

    fn push_to_wheel(&mut self, placement: Placement) {
        let when = self.wheel_time(placement.expiration);
        let level = level_for(self.elapsed, when);
        let slot = slot_for(when, level);
        let level = &mut self.levels[level];
        level.slots[slot].push(placement);
        level.occupied |= 1 << slot;
    }

    /// Sweeps stale placements out of every slot once they outnumber the live entries by
    /// more than [`COMPACTION_SLACK`], so memory follows the armed entries. Amortized O(1)
    /// per cancellation.
    fn maybe_compact(&mut self) {
        if self.placements <= 2 * self.len + COMPACTION_SLACK {
            return;
        }
        let slab = &self.slab;
        let mut kept = 0;
        for level in &mut self.levels {
            let mut occupied = level.occupied;
            while occupied != 0 {
                let slot = occupied.trailing_zeros() as usize;
                occupied &= occupied - 1;
                let list = &mut level.slots[slot];
                list.retain(|p| slab.is_current(p));
                if list.capacity() > SLOT_KEEP.max(4 * list.len()) {
                    list.shrink_to(SLOT_KEEP.max(2 * list.len()));
                }
                kept += list.len();
                if list.is_empty() {
                    level.occupied &= !(1 << slot);
                }
            }
        }
        self.overdue.retain(|p| slab.is_current(p));
        self.placements = kept + self.overdue.len();
    }

    /// The next (level, slot, wheel-time start of the slot) holding placements, earliest
    /// first. Its placements may all be stale.
    fn next_slot(&self) -> Option<(usize, usize, u64)> {
        for (level, l) in self.levels.iter().enumerate() {
            if l.occupied == 0 {
                continue;
            }
            let shift = LEVEL_BITS * level as u32;
            let now_slot = ((self.elapsed >> shift) & SLOT_MASK) as u32;
            let slot =
                (l.occupied.rotate_right(now_slot).trailing_zeros() + now_slot) as usize % SLOTS;
            let slot_range = 1u128 << shift;
            let level_range = slot_range << LEVEL_BITS;
            let level_start = u128::from(self.elapsed) & !(level_range - 1);
            let mut start = level_start + slot as u128 * slot_range;
            if start <= u128::from(self.elapsed) && level > 0 {
                start += level_range;
            }
            debug_assert!(
                start > u128::from(self.elapsed) || level == 0,
                "slot start {start} not after elapsed {}; level={level} slot={slot} occupied={:064b}",
                self.elapsed,
                l.occupied
            );
            return Some((level, slot, u64::try_from(start).unwrap_or(u64::MAX)));
        }
        None
    }

    /// When the next entry is due: at or before the current time if one is already due or
    /// overdue, else the start of the earliest slot holding a live entry (never later than
    /// the earliest expiration; exact for 1 ms slots unless an entry there was rescheduled
    /// later). `None` when nothing is armed. Drops the stale placements it passes over.
    pub fn next_expiration_ms(&mut self) -> Option<i64> {
        if self.len == 0 {
            return None;
        }
        let slab = &self.slab;
        let due = self
            .due
            .iter()
            .filter_map(|&k| slab.get(k))
            .find(|e| e.state == State::Due)
            .map(|e| e.expiration);
        let overdue = self
            .overdue
            .iter()
            .filter(|p| slab.is_current(p))
            .map(|p| slab[p.index].expiration)
            .min();
        match (due, overdue) {
            (Some(a), Some(b)) => return Some(a.min(b)),
            (Some(a), None) | (None, Some(a)) => return Some(a),
            (None, None) => {}
        }
        loop {
            let (level, slot, start) = self.next_slot()?;
            let l = &mut self.levels[level];
            let list = &mut l.slots[slot];
            while list.last().is_some_and(|p| !self.slab.is_current(p)) {
                list.pop();
                self.placements -= 1;
            }
            if !list.is_empty() {
                return Some(self.origin.wrapping_add(start as i64));
            }
            if list.capacity() > SLOT_KEEP {
                *list = Vec::new();
            }
            l.occupied &= !(1 << slot);
        }
    }

    /// Moves the clock to `now_ms` (never backwards) and queues every entry due by then, in
    /// ascending order of expiration, behind what is already queued. Returns how many were
    /// queued by this call.
    pub fn advance(&mut self, now_ms: i64) -> usize {
        let before = self.due.len();
        if !self.overdue.is_empty() {
            self.queue_overdue();
        }
        if now_ms > self.now {
            let target = self.wheel_time(now_ms);
            while let Some((level, slot, start)) = self.next_slot() {
                if start > target {
                    break;
                }
                self.elapsed = start;
                self.expire_slot(level, slot, start);
            }
            self.now = now_ms;
            self.elapsed = target;
        }
        self.due.len() - before
    }

    /// Moves the overdue entries into the due queue, merged by expiration with what is there.
    fn queue_overdue(&mut self) {
        let queued = std::mem::take(&mut self.due);
        let mut keys: Vec<TimerKey> = queued
            .into_iter()
            .filter(|&k| self.slab.get(k).is_some_and(|e| e.state == State::Due))
            .collect();
        self.placements -= self.overdue.len();
        for placement in std::mem::take(&mut self.overdue) {
            if !self.slab.is_current(&placement) {
                continue;
            }
            let e = &mut self.slab[placement.index];
            e.state = State::Due;
            keys.push(TimerKey {
                index: placement.index,
                generation: e.generation,
            });
        }
        let slab = &self.slab;
        keys.sort_by_key(|k| slab[k.index].expiration);
        self.due.extend(keys);
    }

    /// Empties a slot the clock reached: due entries go to the due queue, the others move
    /// to finer slots, stale placements are dropped.
    fn expire_slot(&mut self, level: usize, slot: usize, start: u64) {
        let mut list = std::mem::take(&mut self.levels[level].slots[slot]);
        self.levels[level].occupied &= !(1 << slot);
        self.placements -= list.len();
        for placement in list.drain(..) {
            if self.wheel_time(placement.expiration) > start {
                // Not due by the expiration it was placed with: a finer slot, unread.
                self.placements += 1;
                self.push_to_wheel(placement);
                continue;
            }
            let e = &mut self.slab[placement.index];
            if e.stamp != placement.stamp || e.state != State::Wheel {
                continue;
            }
            if e.expiration.wrapping_sub(self.origin) as u64 <= start {
                e.state = State::Due;
                let key = TimerKey {
                    index: placement.index,
                    generation: e.generation,
                };
                self.due.push_back(key);
            } else {
                // Rescheduled later while placed here.
                let expiration = e.expiration;
                self.place(Placement {
                    expiration,
                    ..placement
                });
            }
        }
        // Placements only ever move to other slots, so this one is still empty.
        if list.capacity() <= SLOT_KEEP && self.levels[level].slots[slot].is_empty() {
            self.levels[level].slots[slot] = list;
        }
    }

    /// Takes the next due entry off the queue: its key, expiration and payload.
    pub fn pop_due(&mut self) -> Option<(TimerKey, i64, T)> {
        while let Some(key) = self.due.pop_front() {
            if self.slab.get(key).is_some_and(|e| e.state == State::Due) {
                let expiration = self.slab[key.index].expiration;
                self.len -= 1;
                return Some((key, expiration, self.slab.release(key.index)));
            }
        }
        if self.due.capacity() > DUE_KEEP {
            self.due.shrink_to(DUE_KEEP);
        }
        None
    }

    /// Whether entries wait in the due queue.
    pub fn has_due(&self) -> bool {
        self.due
            .iter()
            .any(|&k| self.slab.get(k).is_some_and(|e| e.state == State::Due))
    }

    /// Removes every entry (armed or idle) and returns the payloads, for shutdown.
    pub fn drain(&mut self) -> Vec<T> {
        let values = self.slab.take_values();
        let (now, origin, elapsed) = (self.now, self.origin, self.elapsed);
        *self = Timer::new(origin);
        self.now = now;
        self.elapsed = elapsed;
        values
    }

    /// Every live payload, armed or idle (for a garbage collector's traversal).
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slab.values()
    }

    /// Bytes this wheel has allocated on the heap (capacities, not lengths), beyond what its
    /// payloads own.
    pub fn heap_bytes(&self) -> usize {
        let placement = std::mem::size_of::<Placement>();
        let slots: usize = self
            .levels
            .iter()
            .flat_map(|l| l.slots.iter())
            .map(Vec::capacity)
            .sum();
        self.slab.heap_bytes()
            + (slots + self.overdue.capacity()) * placement
            + self.levels.capacity() * std::mem::size_of::<Level>()
            + self.due.capacity() * std::mem::size_of::<TimerKey>()
    }

    /// Bytes the wheel holds per armed entry beyond the payload's own heap data: its slab
    /// entry and one placement.
    pub const fn entry_bytes() -> usize {
        std::mem::size_of::<slab::Entry<T>>() + std::mem::size_of::<Placement>()
    }
}
