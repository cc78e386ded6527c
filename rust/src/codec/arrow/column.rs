//! What every kind of column shares: taking another run's rows ([`Append`]), making room
//! ahead ([`Reserve`]), the shared zeroed buffer of columns never set ([`Zeros`]), the
//! prefetch hint of the per-record path, and Arrow offsets.

use std::sync::Mutex;

use arrow_buffer::{
    ArrowNativeType, BooleanBuffer, Buffer, MutableBuffer, NullBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::ArrowError;

/// Columns that take another column's rows after their own. Padding is lazy (rows not set
/// are filled in when the column is finished), so both sides are first padded to their row
/// counts: `len` and `other_len`.
pub(super) trait Append {
    fn append(&mut self, len: usize, other: Self, other_len: usize);
}

/// Columns that can make room for `factor` times what they hold.
pub(super) trait Reserve {
    fn reserve(&mut self, factor: f64);
}

impl<T> Reserve for Vec<T> {
    fn reserve(&mut self, factor: f64) {
        self.reserve((self.len() as f64 * factor * 1.05) as usize);
    }
}

/// The buffers of columns that received no value, all slices of one zeroed buffer that such
/// columns of a record batch share: offsets all 0, values all 0, every row null. A column the
/// log never uses (a consumer-group record's, in a classic log) then writes nothing per row.
/// Runs being joined ([`Append`]) leave such a column as it is, so it stays one.
pub(super) struct Zeros {
    buffer: Mutex<Buffer>,
    /// The size to allocate at the first use: enough for every column of the batch.
    bytes: usize,
}

impl Zeros {
    pub(super) fn new(bytes: usize) -> Self {
        Zeros {
            buffer: Mutex::new(Buffer::from_vec(Vec::<u8>::new())),
            bytes,
        }
    }

    /// A zeroed buffer of at least `bytes` bytes.
    fn buffer(&self, bytes: usize) -> Buffer {
        // A panic elsewhere cannot leave the buffer half-written: take it even if poisoned.
        let mut zeros = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        if zeros.len() < bytes {
            *zeros = MutableBuffer::from_len_zeroed(bytes.max(self.bytes)).into();
        }
        zeros.clone()
    }

    pub(super) fn nulls(&self, rows: usize) -> NullBuffer {
        let bits = BooleanBuffer::new(self.buffer(rows.div_ceil(8)), 0, rows);
        // SAFETY: no bit is set, so every one of the `rows` rows is null.
        unsafe { NullBuffer::new_unchecked(bits, rows) }
    }

    pub(super) fn values<T: ArrowNativeType>(&self, len: usize) -> ScalarBuffer<T> {
        ScalarBuffer::new(self.buffer(len * std::mem::size_of::<T>()), 0, len)
    }

    pub(super) fn offsets(&self, rows: usize) -> OffsetBuffer<i32> {
        // SAFETY: all zero: non-negative and never decreasing.
        unsafe { OffsetBuffer::new_unchecked(self.values(rows + 1)) }
    }
}

/// How far past a column's end [`prefetch_end`] asks for memory.
pub(super) const PREFETCH_AHEAD: usize = 512;

/// Asks the CPU to bring the cache line `PREFETCH_AHEAD` bytes past the end of `v`'s values
/// into cache, ahead of the pushes that will write it. A decode writes some thirty columns at
/// once into memory that is not in cache (a 100 MB segment's columns are 184 MB); without
/// this, each first write to a line waits for it to be read from memory, and the stores
/// back up. Only a hint: it changes no value.
#[inline(always)]
pub(super) fn prefetch_end<T>(v: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        let end = v.as_ptr().wrapping_add(v.len()) as *const i8;
        // SAFETY: a prefetch reads nothing into the program and never faults, whatever the
        // address (here possibly past the allocation, which `wrapping_add` makes without
        // undefined behaviour): it only hints the cache.
        unsafe { _mm_prefetch::<_MM_HINT_ET0>(end.wrapping_add(PREFETCH_AHEAD)) };
    }
}

/// Appends offsets that start at 0 (the first is skipped) to offsets that end at `base`.
pub(super) fn append_offsets(offsets: &mut Vec<i32>, other: &[i32]) {
    let base = offsets.last().copied().unwrap_or(0);
    offsets.extend(other[1..].iter().map(|o| o.wrapping_add(base)));
}

/// A column's offsets as Arrow's. They only ever grow as rows are pushed; this checks so in
/// one branch-free pass, which the compiler vectorizes, where `OffsetBuffer::new` stops to
/// branch at every offset.
pub(super) fn offset_buffer(offsets: Vec<i32>) -> Result<OffsetBuffer<i32>, ArrowError> {
    let starts_at_zero_or_more = offsets.first().is_some_and(|&first| first >= 0);
    let never_decrease = offsets
        .iter()
        .zip(offsets.iter().skip(1))
        .fold(true, |ordered, (a, b)| ordered & (a <= b));
    if !(starts_at_zero_or_more && never_decrease) {
        return Err(ArrowError::ComputeError(
            "column offsets out of order".to_owned(),
        ));
    }
    // SAFETY: checked just above: non-empty, non-negative and never decreasing.
    Ok(unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)) })
}
