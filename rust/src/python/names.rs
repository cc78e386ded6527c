//! The table of names (groups, topics, client names) that the records of one decode share.

use pyo3::prelude::*;
use pyo3::types::PyString;

/// Python strings made once per distinct name within one decode: groups, topics, protocols
/// and client names repeat from record to record, so the records share one `str` per name.
///
/// A direct-mapped table: a name's hash picks its one slot, and a name that lands on an
/// occupied slot takes it over. Looking a name up is a hash of its bytes and one comparison,
/// which matters more here than keeping every name (values like member ids are not cached).
/// The default has no table and makes a string per name: what decoding one record needs.
#[derive(Default)]
pub(super) struct Names {
    slots: Vec<Option<NameSlot>>,
}

pub(super) struct NameSlot {
    key: NameKey,
    /// The bytes past the key's head, for names longer than it.
    rest: Box<[u8]>,
    string: Py<PyString>,
}

/// A name's length and first bytes, zero-padded.
pub(super) struct NameKey {
    len: usize,
    head: [u64; NameKey::HEAD_WORDS],
}

impl NameKey {
    const HEAD_WORDS: usize = 4;
    const HEAD_BYTES: usize = 8 * Self::HEAD_WORDS;

    pub(super) fn new(name: &[u8]) -> Self {
        NameKey {
            len: name.len(),
            head: std::array::from_fn(|i| padded_word(name, 8 * i)),
        }
    }

    /// Whether two keys are equal, compared word by word: the derived comparison calls
    /// `memcmp`, which costs more than the rest of a lookup.
    pub(super) fn same(&self, other: &NameKey) -> bool {
        let differ = self
            .head
            .iter()
            .zip(&other.head)
            .fold(self.len ^ other.len, |d, (a, b)| d | (a ^ b) as usize);
        differ == 0
    }

    /// The multiply-and-rotate step of rustc's FxHash over the length, the head's words and
    /// those of any bytes past it.
    pub(super) fn hash(&self, rest: &[u8]) -> u64 {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let step = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(K);
        let h = self
            .head
            .iter()
            .fold(step(0, self.len as u64), |h, &w| step(h, w));
        (0..rest.len())
            .step_by(8)
            .fold(h, |h, at| step(h, padded_word(rest, at)))
    }
}

/// The eight bytes of `bytes` from `at` as a little-endian word, zero past the end. (Built
/// from the bytes rather than copied into a padded array, which the loads that follow
/// would have to wait for.)
pub(super) fn padded_word(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at + 8) {
        Some(word) => u64::from_le_bytes(word.try_into().expect("eight bytes")),
        None => bytes
            .get(at..)
            .unwrap_or_default()
            .iter()
            .rev()
            .fold(0, |word, &b| (word << 8) | u64::from(b)),
    }
}

impl Names {
    const SLOT_BITS: u32 = 12;
    const SLOTS: usize = 1 << Self::SLOT_BITS;

    pub(super) fn shared() -> Self {
        Names {
            slots: (0..Self::SLOTS).map(|_| None).collect(),
        }
    }

    pub(super) fn get(&mut self, py: Python<'_>, name: &str) -> Py<PyString> {
        if self.slots.is_empty() {
            return PyString::new(py, name).unbind();
        }
        let bytes = name.as_bytes();
        let key = NameKey::new(bytes);
        let rest = bytes.get(NameKey::HEAD_BYTES..).unwrap_or_default();
        let index = key.hash(rest) >> (64 - Self::SLOT_BITS);
        let slot = &mut self.slots[index as usize];
        if let Some(s) = slot {
            if s.key.same(&key) && (rest.is_empty() || *s.rest == *rest) {
                return s.string.clone_ref(py);
            }
        }
        let string = PyString::new(py, name).unbind();
        *slot = Some(NameSlot {
            key,
            rest: rest.into(),
            string: string.clone_ref(py),
        });
        string
    }
}
