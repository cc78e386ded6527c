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
//! Entries live in a slab (a `Vec` with a free list) and each slot is an intrusive doubly
//! linked list threaded through it by index, so adding and cancelling are O(1) (the `slab`
//! module). A [`TimerKey`] carries a generation, so a stale key can never touch a reused slot.
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
use slab::{List, Location, Slab, NIL};

const LEVEL_BITS: u32 = 6;
const SLOTS: usize = 1 << LEVEL_BITS;
const SLOT_MASK: u64 = SLOTS as u64 - 1;
/// Enough levels of 64 slots to cover the whole `u64` range of wheel time.
pub const NUM_LEVELS: usize = 11;

#[derive(Debug)]
struct Level {
    occupied: u64,
    slots: [List; SLOTS],
}

impl Level {
    fn new() -> Self {
        Level {
            occupied: 0,
            slots: [List::EMPTY; SLOTS],
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
    overdue: List,
    due: VecDeque<TimerKey>,
    len: usize,
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
            overdue: List::EMPTY,
            due: VecDeque::new(),
            len: 0,
        }
    }

    /// The current time: the largest time passed to [`Timer::advance`] (or the start).
    pub fn now_ms(&self) -> i64 {
        self.now
    }

    /// Entries added and neither cancelled nor popped (pending in the wheel, overdue or due).
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
        let key = self.slab.allocate(expiration_ms, value);
        self.len += 1;
        self.place(key.index, expiration_ms);
        key
    }

    /// Moves a pending entry to a new expiration, keeping its payload. Returns its key, which
    /// changes only if the entry was already in the due queue. `None` for a stale key.
    ///
    /// Moving an entry in the wheel to a *later* expiration leaves it in its slot: that slot
    /// now starts before the expiration, and when the clock reaches it the entry is placed
    /// again, like a cascading one. Unlinking would touch both neighbours in the slab, and the
    /// heartbeat cycle pushes every member's deadline later many times before it is reached.
    pub fn reschedule(&mut self, key: TimerKey, expiration_ms: i64) -> Option<TimerKey> {
        let entry = self.slab.get(key)?;
        match entry.location {
            Location::Due => {
                let value = self.cancel(key)?;
                return Some(self.insert(expiration_ms, value));
            }
            Location::Wheel { .. } if expiration_ms >= entry.expiration => {
                self.slab[key.index].expiration = expiration_ms;
                return Some(key);
            }
            _ => {}
        }
        self.unlink(key.index);
        self.slab[key.index].expiration = expiration_ms;
        self.place(key.index, expiration_ms);
        Some(key)
    }

    /// Removes a pending entry and returns its payload; `None` for a stale key.
    pub fn cancel(&mut self, key: TimerKey) -> Option<T> {
        let location = self.slab.get(key)?.location;
        if location != Location::Due {
            self.unlink(key.index);
        }
        Some(self.release(key.index))
    }

    /// The payload of a pending entry.
    pub fn get(&self, key: TimerKey) -> Option<&T> {
        self.slab.get(key)?.value.as_ref()
    }

    /// The payload of a pending entry, to change it in place.
    pub fn get_mut(&mut self, key: TimerKey) -> Option<&mut T> {
        self.slab.get(key)?;
        self.slab[key.index].value.as_mut()
    }

    /// The expiration of a pending entry.
    pub fn expiration_of(&self, key: TimerKey) -> Option<i64> {
        Some(self.slab.get(key)?.expiration)
    }

    fn release(&mut self, index: u32) -> T {
        self.len -= 1;
        self.slab.release(index)
    }

    fn place(&mut self, index: u32, expiration: i64) {
        if expiration <= self.now {
            self.slab[index].location = Location::Overdue;
            self.slab.push_back(&mut self.overdue, index);
            return;
        }
        let when = self.wheel_time(expiration);
        let level = level_for(self.elapsed, when);
        let slot = slot_for(when, level);
        self.slab[index].location = Location::Wheel {
            level: level as u8,
            slot: slot as u8,
        };
        let level = &mut self.levels[level];
        self.slab.push_back(&mut level.slots[slot], index);
        level.occupied |= 1 << slot;
    }

    /// Takes an entry out of its wheel slot or the overdue list.
    fn unlink(&mut self, index: u32) {
        let location = self.slab[index].location;
        let list = match location {
            Location::Wheel { level, slot } => {
                &mut self.levels[level as usize].slots[slot as usize]
            }
            Location::Overdue => &mut self.overdue,
            Location::Due | Location::Free => return,
        };
        self.slab.unlink(list, index);
        if let Location::Wheel { level, slot } = location {
            let level = &mut self.levels[level as usize];
            if level.slots[slot as usize].head == NIL {
                level.occupied &= !(1 << slot);
            }
        }
    }

    /// The next (level, slot, wheel-time start of the slot) holding entries, earliest first.
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
    /// overdue, else the start of the earliest non-empty slot (never later than the earliest
    /// expiration; exact for 1 ms slots unless an entry there was rescheduled later). `None`
    /// when nothing is pending.
    pub fn next_expiration_ms(&self) -> Option<i64> {
        let due = self
            .due
            .iter()
            .find_map(|&k| self.slab.get(k).map(|e| e.expiration));
        let overdue = (self.overdue.head != NIL).then(|| {
            let mut earliest = i64::MAX;
            let mut i = self.overdue.head;
            while i != NIL {
                let e = &self.slab[i];
                earliest = earliest.min(e.expiration);
                i = e.next;
            }
            earliest
        });
        match (due, overdue) {
            (Some(a), Some(b)) => return Some(a.min(b)),
            (Some(a), None) | (None, Some(a)) => return Some(a),
            (None, None) => {}
        }
        let (_, _, start) = self.next_slot()?;
        Some(self.origin.wrapping_add(start as i64))
    }

    /// Moves the clock to `now_ms` (never backwards) and queues every entry due by then, in
    /// ascending order of expiration, behind what is already queued. Returns how many were
    /// queued by this call.
    pub fn advance(&mut self, now_ms: i64) -> usize {
        let before = self.due.len();
        if self.overdue.head != NIL {
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
            .filter(|&k| self.slab.get(k).is_some())
            .collect();
        let mut i = self.overdue.head;
        while i != NIL {
            let e = &mut self.slab[i];
            let next = e.next;
            e.location = Location::Due;
            e.prev = NIL;
            e.next = NIL;
            keys.push(TimerKey {
                index: i,
                generation: e.generation,
            });
            i = next;
        }
        self.overdue = List::EMPTY;
        let slab = &self.slab;
        keys.sort_by_key(|k| slab[k.index].expiration);
        self.due.extend(keys);
    }

    fn expire_slot(&mut self, level: usize, slot: usize, start: u64) {
        let list = std::mem::replace(&mut self.levels[level].slots[slot], List::EMPTY);
        self.levels[level].occupied &= !(1 << slot);
        let mut i = list.head;
        while i != NIL {
            let (next, expiration, generation) = {
                let e = &self.slab[i];
                (e.next, e.expiration, e.generation)
            };
            if self.wheel_time(expiration) <= start {
                let e = &mut self.slab[i];
                e.location = Location::Due;
                e.prev = NIL;
                e.next = NIL;
                self.due.push_back(TimerKey {
                    index: i,
                    generation,
                });
            } else {
                self.place(i, expiration);
            }
            i = next;
        }
    }

    /// Takes the next due entry off the queue: its key, expiration and payload.
    pub fn pop_due(&mut self) -> Option<(TimerKey, i64, T)> {
        while let Some(key) = self.due.pop_front() {
            if self
                .slab
                .get(key)
                .is_some_and(|e| e.location == Location::Due)
            {
                let expiration = self.slab[key.index].expiration;
                return Some((key, expiration, self.release(key.index)));
            }
        }
        None
    }

    /// Whether entries wait in the due queue.
    pub fn has_due(&self) -> bool {
        self.due.iter().any(|&k| self.slab.get(k).is_some())
    }

    /// Removes every entry and returns the payloads, for shutdown.
    pub fn drain(&mut self) -> Vec<T> {
        let values = self.slab.take_values();
        let (now, origin, elapsed) = (self.now, self.origin, self.elapsed);
        *self = Timer::new(origin);
        self.now = now;
        self.elapsed = elapsed;
        values
    }

    /// Every pending payload (for a garbage collector's traversal).
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.slab.values()
    }

    /// Bytes the wheel holds per slab entry, beyond the payload's own heap data.
    pub const fn entry_bytes() -> usize {
        std::mem::size_of::<slab::Entry<T>>()
    }
}
