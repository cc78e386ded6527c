//! The timer's entries: a slab (a `Vec` with a free list) addressed by [`TimerKey`].
//!
//! Wheel slots do not link entries together: a slot is a vector of [`Placement`]s, each
//! naming an entry by index and by the entry's `stamp` when it was placed. Cancelling or
//! moving an entry changes its stamp, which makes every earlier placement of it stale without
//! touching the slot that holds it (lazy deletion); stale placements are dropped when their
//! slot is reached, or sooner by a compaction.

use std::ops::{Index, IndexMut};

/// No entry.
pub(super) const NIL: u32 = u32::MAX;

/// A handle to an entry. Stale handles (the entry fired or was cancelled) are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerKey {
    pub(super) index: u32,
    pub(super) generation: u32,
}

impl TimerKey {
    /// The entry's number in the slab (reused once the entry is released).
    pub fn index(self) -> u32 {
        self.index
    }

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

/// Where an entry is. `Idle` entries hold a value but are not armed (a watched operation
/// before its timer starts, or after it was cancelled); `Overdue` ones were armed with an
/// expiration already reached and wait for the next `advance`; `Due` ones sit in the due queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Free,
    Idle,
    Wheel,
    Overdue,
    Due,
}

impl State {
    pub(super) fn is_armed(self) -> bool {
        matches!(self, State::Wheel | State::Overdue | State::Due)
    }
}

#[derive(Debug)]
pub(super) struct Entry<T> {
    pub(super) expiration: i64,
    pub(super) generation: u32,
    /// Changes whenever the entry is placed anew or leaves the wheel, so that a placement
    /// carrying an older stamp is known to be stale.
    pub(super) stamp: u32,
    pub(super) state: State,
    pub(super) value: Option<T>,
}

/// An entry's place in a wheel slot or the overdue list. `expiration` is the entry's
/// expiration when it was placed: a cascade moves placements by it without reading the slab.
/// The entry's own expiration may since have moved later, never earlier (that is a new
/// placement), so a placement is never reached after its entry is due.
#[derive(Clone, Copy, Debug)]
pub(super) struct Placement {
    pub(super) index: u32,
    pub(super) stamp: u32,
    pub(super) expiration: i64,
}

/// Every entry, live or free; free ones are reused first.
#[derive(Debug)]
pub(super) struct Slab<T> {
    entries: Vec<Entry<T>>,
    free: Vec<u32>,
}

impl<T> Slab<T> {
    pub(super) fn new() -> Self {
        Slab {
            entries: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Stores a value in a free entry, idle.
    pub(super) fn allocate(&mut self, value: T) -> TimerKey {
        let index = match self.free.pop() {
            Some(index) => {
                let entry = &mut self.entries[index as usize];
                entry.value = Some(value);
                entry.state = State::Idle;
                index
            }
            None => {
                let index = u32::try_from(self.entries.len())
                    .ok()
                    .filter(|&i| i != NIL)
                    .expect("more than 2^32 - 1 timer entries");
                self.entries.push(Entry {
                    expiration: 0,
                    generation: 0,
                    stamp: 0,
                    state: State::Idle,
                    value: Some(value),
                });
                index
            }
        };
        TimerKey {
            index,
            generation: self.entries[index as usize].generation,
        }
    }

    /// The entry of a key that is not stale.
    pub(super) fn get(&self, key: TimerKey) -> Option<&Entry<T>> {
        self.entries
            .get(key.index as usize)
            .filter(|e| e.generation == key.generation && e.state != State::Free)
    }

    /// The live entry at `index`, whatever its generation.
    pub(super) fn get_index(&self, index: u32) -> Option<&Entry<T>> {
        self.entries
            .get(index as usize)
            .filter(|e| e.state != State::Free)
    }

    /// Whether a placement is the current one of a live entry.
    pub(super) fn is_current(&self, placement: &Placement) -> bool {
        let e = &self.entries[placement.index as usize];
        e.stamp == placement.stamp && matches!(e.state, State::Wheel | State::Overdue)
    }

    /// Frees an entry and returns its value; its keys and placements become stale.
    pub(super) fn release(&mut self, index: u32) -> T {
        let entry = &mut self.entries[index as usize];
        entry.state = State::Free;
        entry.generation = entry.generation.wrapping_add(1);
        entry.stamp = entry.stamp.wrapping_add(1);
        self.free.push(index);
        entry
            .value
            .take()
            .expect("a live timer entry always holds its value")
    }

    /// Bytes allocated for the entries and the free list.
    pub(super) fn heap_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<Entry<T>>() + self.free.capacity() * 4
    }

    /// The values of the live entries.
    pub(super) fn values(&self) -> impl Iterator<Item = &T> {
        self.entries
            .iter()
            .filter(|e| e.state != State::Free)
            .filter_map(|e| e.value.as_ref())
    }

    /// Takes the values of the live entries out.
    pub(super) fn take_values(&mut self) -> Vec<T> {
        self.entries
            .iter_mut()
            .filter(|e| e.state != State::Free)
            .filter_map(|e| e.value.take())
            .collect()
    }
}

impl<T> Index<u32> for Slab<T> {
    type Output = Entry<T>;

    fn index(&self, index: u32) -> &Entry<T> {
        &self.entries[index as usize]
    }
}

impl<T> IndexMut<u32> for Slab<T> {
    fn index_mut(&mut self, index: u32) -> &mut Entry<T> {
        &mut self.entries[index as usize]
    }
}
