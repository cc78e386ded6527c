//! A column's validity bitmap, built row by row.

use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};

/// A column's validity, built row by row as arrow's `NullBufferBuilder` builds it (no bitmap
/// until the first null, then a bit a row, set where valid), with the bitmap in a vector of
/// bytes: every eighth row pushes a byte, where `NullBufferBuilder` grows its buffer by a
/// byte with a call to `memset`.
#[derive(Default)]
pub(super) struct Validity {
    len: usize,
    /// Once a row is null: `len.div_ceil(8)` bytes, the bits past `len` zero.
    bits: Option<Vec<u8>>,
}

impl Validity {
    pub(super) fn new() -> Self {
        Self::default()
    }

    #[inline(always)]
    pub(super) fn append_non_null(&mut self) {
        if let Some(bits) = &mut self.bits {
            let bit = self.len % 8;
            match bits.last_mut() {
                Some(last) if bit != 0 => *last |= 1 << bit,
                _ => bits.push(1),
            }
        }
        self.len += 1;
    }

    /// The bitmap, made (every row so far valid) if there was none.
    fn materialize(&mut self) -> &mut Vec<u8> {
        let len = self.len;
        self.bits.get_or_insert_with(|| {
            let mut bits = vec![0xff; len / 8];
            if !len.is_multiple_of(8) {
                bits.push((1u8 << (len % 8)) - 1);
            }
            bits
        })
    }

    pub(super) fn append_n_nulls(&mut self, n: usize) {
        let len = self.len + n;
        self.materialize().resize(len.div_ceil(8), 0);
        self.len = len;
    }

    /// Appends `n` (at most 8) rows whose validity is `byte`'s low bits (the others zero).
    fn append_byte(&mut self, byte: u8, n: usize) {
        let shift = self.len % 8;
        let bits = self.materialize();
        match bits.last_mut() {
            Some(last) if shift != 0 => {
                *last |= byte << shift;
                if shift + n > 8 {
                    bits.push(byte >> (8 - shift));
                }
            }
            _ => bits.push(byte),
        }
        self.len += n;
    }

    fn append_n_non_nulls(&mut self, n: usize) {
        if self.bits.is_none() {
            self.len += n;
            return;
        }
        let mut left = n;
        while left > 0 {
            let k = left.min(8);
            self.append_byte(((1u16 << k) - 1) as u8, k);
            left -= k;
        }
    }

    /// Takes `other`'s rows after these.
    pub(super) fn append(&mut self, other: Validity) {
        let Some(bits) = other.bits else {
            return self.append_n_non_nulls(other.len);
        };
        for (i, &byte) in bits.iter().enumerate() {
            self.append_byte(byte, (other.len - 8 * i).min(8));
        }
    }

    pub(super) fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        self.len = len;
        if let Some(bits) = &mut self.bits {
            bits.truncate(len.div_ceil(8));
            if let (Some(last), true) = (bits.last_mut(), !len.is_multiple_of(8)) {
                *last &= (1u8 << (len % 8)) - 1;
            }
        }
    }

    /// The validity, `None` if no row was ever null.
    pub(super) fn finish(self) -> Option<NullBuffer> {
        let bits = self.bits?;
        Some(NullBuffer::new(BooleanBuffer::new(
            Buffer::from_vec(bits),
            0,
            self.len,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Validity` gives what arrow's `NullBufferBuilder` gives for the same rows, through
    /// every operation the columns use.
    #[test]
    fn validity_builds_what_null_buffer_builder_builds() {
        use arrow_buffer::NullBufferBuilder;
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..300 {
            let (mut ours, mut theirs) = (Validity::new(), NullBufferBuilder::new(0));
            for _ in 0..next(40) {
                match next(5) {
                    0 => {
                        ours.append_non_null();
                        theirs.append_non_null();
                    }
                    1 => {
                        let n = next(20) as usize + 1;
                        ours.append_n_nulls(n);
                        theirs.append_n_nulls(n);
                    }
                    2 => {
                        let n = next(20) as usize;
                        ours.append_n_non_nulls(n);
                        theirs.append_n_non_nulls(n);
                    }
                    3 => {
                        let len = next(theirs.len() as u64 + 1) as usize;
                        ours.truncate(len);
                        theirs.truncate(len);
                    }
                    _ => {
                        let (mut other, mut other_theirs) =
                            (Validity::new(), NullBufferBuilder::new(0));
                        for _ in 0..next(30) {
                            if next(3) == 0 {
                                other.append_n_nulls(1);
                                other_theirs.append_null();
                            } else {
                                other.append_non_null();
                                other_theirs.append_non_null();
                            }
                        }
                        ours.append(other);
                        let len = other_theirs.len();
                        match other_theirs.finish() {
                            Some(buffer) => theirs.append_buffer(&buffer),
                            None => theirs.append_n_non_nulls(len),
                        }
                    }
                }
                assert_eq!(ours.len, theirs.len());
            }
            assert_eq!(ours.finish(), theirs.finish());
        }
    }
}
