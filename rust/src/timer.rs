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
//! linked list threaded through it by index, so adding and cancelling are O(1). A
//! [`TimerKey`] carries a generation, so a stale key can never touch a reused slot.
//!
//! Time is an argument everywhere: [`Timer::advance`] moves the clock and collects what is due
//! into a queue that the caller drains with [`Timer::pop_due`], one entry at a time. Nothing
//! here reads a clock or calls back, so a caller may run arbitrary code (including code that
//! adds or cancels entries) between two pops.

use std::collections::VecDeque;

const LEVEL_BITS: u32 = 6;
const SLOTS: usize = 1 << LEVEL_BITS;
const SLOT_MASK: u64 = SLOTS as u64 - 1;
/// Enough levels of 64 slots to cover the whole `u64` range of wheel time.
pub const NUM_LEVELS: usize = 11;
const NIL: u32 = u32::MAX;

/// A handle to an entry. Stale handles (the entry fired or was cancelled) are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerKey {
    index: u32,
    generation: u32,
}

impl TimerKey {
    /// Packs the key into a `u64` (never `u64::MAX`), for storage in an atomic.
    pub fn to_bits(self) -> u64 {
        (u64::from(self.generation) << 32) | u64::from(self.index)
    }

    /// The inverse of [`TimerKey::to_bits`].
    pub fn from_bits(bits: u64) -> Self {
        TimerKey {
            index: bits as u32,
            generation: (bits >> 32) as u32,
        }
    }
}

/// Where an entry is. Due entries sit in the due queue; overdue ones were added with an
/// expiration already reached and wait for the next `advance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Location {
    Free,
    Wheel { level: u8, slot: u8 },
    Overdue,
    Due,
}

#[derive(Debug)]
struct Entry<T> {
    expiration: i64,
    generation: u32,
    prev: u32,
    next: u32,
    location: Location,
    value: Option<T>,
}

#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
}

impl List {
    const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };
}

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
    entries: Vec<Entry<T>>,
    free: Vec<u32>,
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
            entries: Vec::new(),
            free: Vec::new(),
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
        let index = match self.free.pop() {
            Some(index) => {
                let entry = &mut self.entries[index as usize];
                entry.value = Some(value);
                entry.expiration = expiration_ms;
                index
            }
            None => {
                let index = u32::try_from(self.entries.len())
                    .ok()
                    .filter(|&i| i != NIL)
                    .expect("more than 2^32 - 1 timer entries");
                self.entries.push(Entry {
                    expiration: expiration_ms,
                    generation: 0,
                    prev: NIL,
                    next: NIL,
                    location: Location::Free,
                    value: Some(value),
                });
                index
            }
        };
        self.len += 1;
        self.place(index, expiration_ms);
        TimerKey {
            index,
            generation: self.entries[index as usize].generation,
        }
    }

    /// Moves a pending entry to a new expiration, keeping its payload. Returns its key, which
    /// changes only if the entry was already in the due queue. `None` for a stale key.
    ///
    /// Moving an entry in the wheel to a *later* expiration leaves it in its slot: that slot
    /// now starts before the expiration, and when the clock reaches it the entry is placed
    /// again, like a cascading one. Unlinking would touch both neighbours in the slab, and the
    /// heartbeat cycle pushes every member's deadline later many times before it is reached.
    pub fn reschedule(&mut self, key: TimerKey, expiration_ms: i64) -> Option<TimerKey> {
        let entry = self.entry(key)?;
        match entry.location {
            Location::Due => {
                let value = self.cancel(key)?;
                return Some(self.insert(expiration_ms, value));
            }
            Location::Wheel { .. } if expiration_ms >= entry.expiration => {
                self.entries[key.index as usize].expiration = expiration_ms;
                return Some(key);
            }
            _ => {}
        }
        self.unlink(key.index);
        self.entries[key.index as usize].expiration = expiration_ms;
        self.place(key.index, expiration_ms);
        Some(key)
    }

    /// Removes a pending entry and returns its payload; `None` for a stale key.
    pub fn cancel(&mut self, key: TimerKey) -> Option<T> {
        let location = self.entry(key)?.location;
        if location != Location::Due {
            self.unlink(key.index);
        }
        Some(self.release(key.index))
    }

    /// The payload of a pending entry.
    pub fn get(&self, key: TimerKey) -> Option<&T> {
        self.entry(key)?.value.as_ref()
    }

    /// The payload of a pending entry, to change it in place.
    pub fn get_mut(&mut self, key: TimerKey) -> Option<&mut T> {
        self.entry(key)?;
        self.entries[key.index as usize].value.as_mut()
    }

    /// The expiration of a pending entry.
    pub fn expiration_of(&self, key: TimerKey) -> Option<i64> {
        Some(self.entry(key)?.expiration)
    }

    fn entry(&self, key: TimerKey) -> Option<&Entry<T>> {
        self.entries
            .get(key.index as usize)
            .filter(|e| e.generation == key.generation && e.location != Location::Free)
    }

    fn release(&mut self, index: u32) -> T {
        let entry = &mut self.entries[index as usize];
        entry.location = Location::Free;
        entry.generation = entry.generation.wrapping_add(1);
        entry.prev = NIL;
        entry.next = NIL;
        self.free.push(index);
        self.len -= 1;
        entry
            .value
            .take()
            .expect("a pending timer entry always holds its value")
    }

    fn place(&mut self, index: u32, expiration: i64) {
        if expiration <= self.now {
            self.entries[index as usize].location = Location::Overdue;
            let mut list = self.overdue;
            self.push_back(&mut list, index);
            self.overdue = list;
            return;
        }
        let when = self.wheel_time(expiration);
        let level = level_for(self.elapsed, when);
        let slot = slot_for(when, level);
        self.entries[index as usize].location = Location::Wheel {
            level: level as u8,
            slot: slot as u8,
        };
        let mut list = self.levels[level].slots[slot];
        self.push_back(&mut list, index);
        let level = &mut self.levels[level];
        level.slots[slot] = list;
        level.occupied |= 1 << slot;
    }

    fn push_back(&mut self, list: &mut List, index: u32) {
        let tail = list.tail;
        {
            let entry = &mut self.entries[index as usize];
            entry.prev = tail;
            entry.next = NIL;
        }
        if tail == NIL {
            list.head = index;
        } else {
            self.entries[tail as usize].next = index;
        }
        list.tail = index;
    }

    /// Takes an entry out of its wheel slot or the overdue list.
    fn unlink(&mut self, index: u32) {
        let (prev, next, location) = {
            let e = &self.entries[index as usize];
            (e.prev, e.next, e.location)
        };
        let list = match location {
            Location::Wheel { level, slot } => {
                &mut self.levels[level as usize].slots[slot as usize]
            }
            Location::Overdue => &mut self.overdue,
            Location::Due | Location::Free => return,
        };
        if prev == NIL {
            list.head = next;
        } else {
            self.entries[prev as usize].next = next;
        }
        if next == NIL {
            list.tail = prev;
        } else {
            self.entries[next as usize].prev = prev;
        }
        if let Location::Wheel { level, slot } = location {
            let level = &mut self.levels[level as usize];
            if level.slots[slot as usize].head == NIL {
                level.occupied &= !(1 << slot);
            }
        }
        let e = &mut self.entries[index as usize];
        e.prev = NIL;
        e.next = NIL;
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
            .find_map(|&k| self.entry(k).map(|e| e.expiration));
        let overdue = (self.overdue.head != NIL).then(|| {
            let mut earliest = i64::MAX;
            let mut i = self.overdue.head;
            while i != NIL {
                let e = &self.entries[i as usize];
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
            .filter(|&k| self.entry(k).is_some())
            .collect();
        let mut i = self.overdue.head;
        while i != NIL {
            let e = &mut self.entries[i as usize];
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
        let entries = &self.entries;
        keys.sort_by_key(|k| entries[k.index as usize].expiration);
        self.due.extend(keys);
    }

    fn expire_slot(&mut self, level: usize, slot: usize, start: u64) {
        let list = std::mem::replace(&mut self.levels[level].slots[slot], List::EMPTY);
        self.levels[level].occupied &= !(1 << slot);
        let mut i = list.head;
        while i != NIL {
            let (next, expiration, generation) = {
                let e = &self.entries[i as usize];
                (e.next, e.expiration, e.generation)
            };
            if self.wheel_time(expiration) <= start {
                let e = &mut self.entries[i as usize];
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
            if self.entry(key).is_some_and(|e| e.location == Location::Due) {
                let expiration = self.entries[key.index as usize].expiration;
                return Some((key, expiration, self.release(key.index)));
            }
        }
        None
    }

    /// Whether entries wait in the due queue.
    pub fn has_due(&self) -> bool {
        self.due.iter().any(|&k| self.entry(k).is_some())
    }

    /// Removes every entry and returns the payloads, for shutdown.
    pub fn drain(&mut self) -> Vec<T> {
        let values = self
            .entries
            .iter_mut()
            .filter(|e| e.location != Location::Free)
            .filter_map(|e| e.value.take())
            .collect();
        let (now, origin, elapsed) = (self.now, self.origin, self.elapsed);
        *self = Timer::new(origin);
        self.now = now;
        self.elapsed = elapsed;
        values
    }

    /// Every pending payload (for a garbage collector's traversal).
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.entries
            .iter()
            .filter(|e| e.location != Location::Free)
            .filter_map(|e| e.value.as_ref())
    }

    /// Bytes the wheel holds per slab entry, beyond the payload's own heap data.
    pub const fn entry_bytes() -> usize {
        std::mem::size_of::<Entry<T>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;
    use std::collections::BTreeMap;

    /// Advances to `now` and returns the payloads that fell due, in order.
    fn fire(timer: &mut Timer<u64>, now: i64) -> Vec<u64> {
        timer.advance(now);
        std::iter::from_fn(|| timer.pop_due().map(|(_, _, v)| v)).collect()
    }

    /// The level boundaries of the wheel, in ms.
    fn boundaries() -> Vec<i64> {
        (1..7).map(|l| 1i64 << (LEVEL_BITS * l)).collect()
    }

    #[test]
    fn level_for_every_level_and_position() {
        for level in 0..NUM_LEVELS {
            for pos in [1u64, 2, 63] {
                let when = pos << (LEVEL_BITS * level as u32);
                assert_eq!(level_for(0, when), level, "level_for(0, {when:b})");
            }
        }
        assert_eq!(level_for(0, u64::MAX), NUM_LEVELS - 1);
        assert_eq!(level_for(63, 64), 1);
        assert_eq!(level_for(64, 65), 0);
    }

    #[test]
    fn fires_exactly_at_expiration_at_every_boundary() {
        for b in boundaries() {
            for exp in [b - 1, b, b + 1] {
                let mut t = Timer::new(0);
                t.insert(exp, exp as u64);
                assert!(fire(&mut t, exp - 1).is_empty(), "fired early: exp={exp}");
                assert_eq!(fire(&mut t, exp), vec![exp as u64], "exp={exp}");
                assert!(t.is_empty());
            }
        }
    }

    #[test]
    fn fires_at_every_boundary_when_stepping_one_ms() {
        let mut t = Timer::new(0);
        let mut exps: Vec<i64> = boundaries()
            .into_iter()
            .take(3)
            .flat_map(|b| [b - 1, b, b + 1])
            .collect();
        exps.sort();
        for &e in &exps {
            t.insert(e, e as u64);
        }
        let mut fired = Vec::new();
        for now in 1..=exps[exps.len() - 1] {
            for v in fire(&mut t, now) {
                assert_eq!(v as i64, now, "fired at the wrong time");
                fired.push(v as i64);
            }
        }
        assert_eq!(fired, exps);
    }

    #[test]
    fn boundaries_seen_from_a_nonzero_start() {
        let start = 1_000_003;
        for b in boundaries() {
            for d in [b - 1, b, b + 1] {
                let mut t = Timer::new(start);
                t.insert(start + d, 1);
                assert!(fire(&mut t, start + d - 1).is_empty());
                assert_eq!(fire(&mut t, start + d), vec![1]);
            }
        }
    }

    #[test]
    fn thirty_minute_delay_and_beyond_the_top_level() {
        let mut t = Timer::new(0);
        let thirty_min = 30 * 60 * 1000;
        t.insert(thirty_min, 1);
        t.insert(i64::MAX, 2);
        t.insert(1 << 40, 3);
        assert!(fire(&mut t, thirty_min - 1).is_empty());
        assert_eq!(fire(&mut t, thirty_min), vec![1]);
        assert!(fire(&mut t, (1 << 40) - 1).is_empty());
        assert_eq!(fire(&mut t, 1 << 40), vec![3]);
        assert!(fire(&mut t, i64::MAX - 1).is_empty());
        assert_eq!(fire(&mut t, i64::MAX), vec![2]);
    }

    #[test]
    fn overdue_entries_fire_at_the_next_advance_in_expiration_order() {
        let mut t = Timer::new(100);
        t.insert(100, 3);
        t.insert(95, 1);
        t.insert(i64::MIN, 0);
        t.insert(99, 2);
        assert_eq!(t.next_expiration_ms(), Some(i64::MIN));
        assert_eq!(fire(&mut t, 0), vec![0, 1, 2, 3]);
        assert_eq!(t.now_ms(), 100, "the clock never moves back");
    }

    #[test]
    fn cancel_in_every_position() {
        // head, middle and tail of a slot, at each level, and after a cascade.
        for b in [1i64, 64, 4096, 262_144] {
            for victim in 0..3u64 {
                let mut t = Timer::new(0);
                let keys: Vec<_> = (0..3u64).map(|v| t.insert(b + 5, v)).collect();
                assert_eq!(t.cancel(keys[victim as usize]), Some(victim));
                assert_eq!(
                    t.cancel(keys[victim as usize]),
                    None,
                    "cancel is idempotent"
                );
                let mut expected: Vec<u64> = (0..3).filter(|&v| v != victim).collect();
                expected.sort();
                assert_eq!(fire(&mut t, b + 5), expected);
            }
        }
        let mut t = Timer::new(0);
        let k = t.insert(5000, 9);
        let other = t.insert(5000, 8);
        assert!(
            fire(&mut t, 4097).is_empty(),
            "5000 cascaded down from level 2"
        );
        assert_eq!(t.cancel(k), Some(9));
        assert_eq!(fire(&mut t, 5000), vec![8]);
        assert_eq!(t.cancel(other), None);
    }

    #[test]
    fn cancel_a_due_entry_before_it_is_popped() {
        let mut t = Timer::new(0);
        let a = t.insert(10, 1);
        t.insert(10, 2);
        t.advance(10);
        assert_eq!(t.len(), 2);
        assert_eq!(t.cancel(a), Some(1));
        assert_eq!(t.len(), 1);
        assert_eq!(t.pop_due().map(|(_, _, v)| v), Some(2));
        assert!(t.pop_due().is_none());
    }

    #[test]
    fn clock_jumps_fire_everything_due_in_order() {
        let mut t = Timer::new(0);
        let exps = [3i64, 70, 64, 5000, 4096, 1 << 30, 2, 300_000];
        for &e in &exps {
            t.insert(e, e as u64);
        }
        let mut sorted = exps.to_vec();
        sorted.sort();
        let fired: Vec<i64> = fire(&mut t, 1 << 31)
            .into_iter()
            .map(|v| v as i64)
            .collect();
        assert_eq!(fired, sorted);
        assert_eq!(t.next_expiration_ms(), None);
    }

    #[test]
    fn reschedule_moves_the_entry_and_keeps_its_key() {
        let mut t = Timer::new(0);
        let k = t.insert(45_000, 7);
        assert_eq!(t.reschedule(k, 90_000), Some(k));
        assert!(fire(&mut t, 89_999).is_empty());
        assert_eq!(t.len(), 1);
        assert_eq!(fire(&mut t, 90_000), vec![7]);
        assert_eq!(t.reschedule(k, 1), None, "stale key");
    }

    #[test]
    fn rescheduled_later_many_times_fires_once_at_the_last_expiration() {
        // The heartbeat cycle: a 45 s deadline pushed 3 s later, fifteen times, then left.
        let mut t = Timer::new(0);
        let k = t.insert(45_000, 1);
        let other = t.insert(50_000, 2);
        let mut now = 0;
        for _ in 0..15 {
            now += 3_000;
            assert!(fire(&mut t, now).is_empty());
            assert_eq!(t.reschedule(k, now + 45_000), Some(k));
        }
        let last = now + 45_000;
        let mut fired = Vec::new();
        while let Some(next) = t.next_expiration_ms() {
            assert!(next > now, "next expiration {next} not after now {now}");
            let earliest = if fired.is_empty() { 50_000 } else { last };
            assert!(
                next <= earliest,
                "next expiration {next} after the earliest, {earliest}"
            );
            now = next;
            fired.extend(fire(&mut t, now).into_iter().map(|v| (v, now)));
        }
        assert_eq!(fired, vec![(2, 50_000), (1, last)]);
        assert_eq!(t.cancel(other), None);
    }

    #[test]
    fn rescheduled_earlier_moves_out_of_its_slot() {
        let mut t = Timer::new(0);
        let k = t.insert(300_000, 1);
        assert_eq!(t.reschedule(k, 70), Some(k));
        assert_eq!(
            t.next_expiration_ms(),
            Some(64),
            "level 1 slot of 70 starts at 64"
        );
        assert!(fire(&mut t, 69).is_empty());
        assert_eq!(fire(&mut t, 70), vec![1]);
    }

    #[test]
    fn next_expiration_is_exact_at_level_zero_and_never_late() {
        let mut t: Timer<u64> = Timer::new(0);
        assert_eq!(t.next_expiration_ms(), None);
        t.insert(45_000, 1);
        let next = t.next_expiration_ms().unwrap();
        assert!(0 < next && next <= 45_000);
        t.advance(next);
        assert!(t.pop_due().is_none());
        let mut now = next;
        while let Some(n) = t.next_expiration_ms() {
            assert!(n > now && n <= 45_000);
            now = n;
            if t.advance(n) > 0 {
                break;
            }
        }
        assert_eq!(now, 45_000);
        assert_eq!(t.pop_due().map(|(_, e, v)| (e, v)), Some((45_000, 1)));
    }

    #[test]
    fn entry_size_is_small() {
        // Printed for the README's memory-per-operation figure.
        println!(
            "timer entry bytes (u64 payload): {}",
            Timer::<u64>::entry_bytes()
        );
        assert!(Timer::<u64>::entry_bytes() <= 48);
    }

    #[test]
    fn randomized_against_a_model() {
        for seed in 0..200u64 {
            let mut rng = Rng(seed);
            let start = rng.below(1 << 20) as i64 - (1 << 19);
            let mut t = Timer::new(start);
            let mut model: BTreeMap<u64, i64> = BTreeMap::new();
            let mut keys: Vec<(u64, TimerKey)> = Vec::new();
            let mut now = start;
            for id in 0..400u64 {
                match rng.below(10) {
                    0..=4 => {
                        let delay = match rng.below(6) {
                            0 => rng.below(3) as i64 - 1,
                            1 => 1 << (LEVEL_BITS * (1 + rng.below(5) as u32)),
                            2 => rng.below(64) as i64,
                            3 => rng.below(5000) as i64,
                            4 => rng.below(3_000_000) as i64,
                            _ => rng.below(1 << 40) as i64,
                        };
                        let exp = now + delay;
                        keys.push((id, t.insert(exp, id)));
                        model.insert(id, exp);
                    }
                    5 | 6 if !keys.is_empty() => {
                        let (id, key) = keys.swap_remove(rng.below(keys.len() as u64) as usize);
                        assert_eq!(t.cancel(key), model.remove(&id).map(|_| id));
                    }
                    5 | 6 => {}
                    7 if !keys.is_empty() => {
                        let i = rng.below(keys.len() as u64) as usize;
                        let (id, key) = keys[i];
                        let exp = now + rng.below(100_000) as i64;
                        if let Some(new_key) = t.reschedule(key, exp) {
                            keys[i].1 = new_key;
                            model.insert(id, exp);
                        }
                    }
                    7 => {}
                    _ => {
                        let step = match rng.below(4) {
                            0 => 1,
                            1 => rng.below(100) as i64,
                            2 => rng.below(100_000) as i64,
                            _ => rng.below(1 << 36) as i64,
                        };
                        now += step;
                        t.advance(now);
                        let mut fired = Vec::new();
                        while let Some((_, exp, id)) = t.pop_due() {
                            assert!(exp <= now, "seed {seed}: fired early");
                            assert_eq!(
                                model.remove(&id),
                                Some(exp),
                                "seed {seed}: fired twice or unknown"
                            );
                            fired.push(exp);
                        }
                        assert!(
                            fired.windows(2).all(|w| w[0] <= w[1]),
                            "seed {seed}: out of order"
                        );
                        assert!(
                            model.values().all(|&e| e > now),
                            "seed {seed}: lost a due entry"
                        );
                        keys.retain(|(id, _)| model.contains_key(id));
                        assert_eq!(t.len(), model.len());
                        if let Some(next) = t.next_expiration_ms() {
                            assert!(
                                next <= *model.values().min().unwrap(),
                                "seed {seed}: next too late"
                            );
                        }
                    }
                }
            }
        }
    }
}
