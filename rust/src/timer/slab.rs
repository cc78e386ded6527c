//! The timer's entries: a slab (a `Vec` with a free list) addressed by [`TimerKey`], and the
//! intrusive doubly linked lists, threaded through it by index, that hold a wheel slot's
//! entries or the overdue ones.

use std::ops::{Index, IndexMut};

/// The end of a list, or no neighbour.
pub(super) const NIL: u32 = u32::MAX;

/// A handle to an entry. Stale handles (the entry fired or was cancelled) are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerKey {
    pub(super) index: u32,
    pub(super) generation: u32,
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
pub(super) enum Location {
    Free,
    Wheel { level: u8, slot: u8 },
    Overdue,
    Due,
}

#[derive(Debug)]
pub(super) struct Entry<T> {
    pub(super) expiration: i64,
    pub(super) generation: u32,
    pub(super) prev: u32,
    pub(super) next: u32,
    pub(super) location: Location,
    pub(super) value: Option<T>,
}

/// A list of entries, linked through the slab by their `prev` and `next`.
#[derive(Clone, Copy, Debug)]
pub(super) struct List {
    pub(super) head: u32,
    pub(super) tail: u32,
}

impl List {
    pub(super) const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };
}

/// Every entry, pending or free; free ones are reused first.
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

    /// Stores a value expiring at `expiration` in a free entry, in no list yet.
    pub(super) fn allocate(&mut self, expiration: i64, value: T) -> TimerKey {
        let index = match self.free.pop() {
            Some(index) => {
                let entry = &mut self.entries[index as usize];
                entry.value = Some(value);
                entry.expiration = expiration;
                index
            }
            None => {
                let index = u32::try_from(self.entries.len())
                    .ok()
                    .filter(|&i| i != NIL)
                    .expect("more than 2^32 - 1 timer entries");
                self.entries.push(Entry {
                    expiration,
                    generation: 0,
                    prev: NIL,
                    next: NIL,
                    location: Location::Free,
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
            .filter(|e| e.generation == key.generation && e.location != Location::Free)
    }

    /// Frees an entry (out of any list) and returns its value; its keys become stale.
    pub(super) fn release(&mut self, index: u32) -> T {
        let entry = &mut self.entries[index as usize];
        entry.location = Location::Free;
        entry.generation = entry.generation.wrapping_add(1);
        entry.prev = NIL;
        entry.next = NIL;
        self.free.push(index);
        entry
            .value
            .take()
            .expect("a pending timer entry always holds its value")
    }

    pub(super) fn push_back(&mut self, list: &mut List, index: u32) {
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

    /// Takes an entry out of `list`, the one it is in.
    pub(super) fn unlink(&mut self, list: &mut List, index: u32) {
        let (prev, next) = {
            let e = &self.entries[index as usize];
            (e.prev, e.next)
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
        let e = &mut self.entries[index as usize];
        e.prev = NIL;
        e.next = NIL;
    }

    /// The values of the pending entries.
    pub(super) fn values(&self) -> impl Iterator<Item = &T> {
        self.entries
            .iter()
            .filter(|e| e.location != Location::Free)
            .filter_map(|e| e.value.as_ref())
    }

    /// Takes the values of the pending entries out.
    pub(super) fn take_values(&mut self) -> Vec<T> {
        self.entries
            .iter_mut()
            .filter(|e| e.location != Location::Free)
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
