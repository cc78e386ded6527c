//! Nullable variable-width columns: binary ([`Variable`]) and utf8 ([`Utf8`]), values end to
//! end with their offsets.

use std::sync::Arc;

use arrow_array::{ArrayRef, BinaryArray, StringArray};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer};
use arrow_schema::ArrowError;

use crate::codec::arrow::column::{
    append_offsets, offset_buffer, prefetch_end, Append, Reserve, Zeros,
};
use crate::codec::arrow::validity::Validity;

/// A nullable utf8 or binary column: values end to end, and where each ends.
pub(super) struct Variable {
    offsets: Vec<i32>,
    data: Vec<u8>,
    nulls: Validity,
}

/// Where a [`Variable`] column stood, to go back to.
#[derive(Clone, Copy)]
pub(super) struct VariableMark(usize, usize);

impl Variable {
    pub(super) fn new() -> Self {
        Variable {
            offsets: vec![0],
            data: Vec::new(),
            nulls: Validity::new(),
        }
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    #[inline(always)]
    pub(super) fn push(&mut self, value: &[u8]) {
        self.data.extend_from_slice(value);
        self.offsets.push(self.data.len() as i32);
        prefetch_end(&self.data);
        prefetch_end(&self.offsets);
        self.nulls.append_non_null();
    }

    #[inline(always)]
    pub(super) fn set(&mut self, row: usize, value: &[u8]) {
        self.pad(row);
        self.push(value);
    }

    #[inline(always)]
    fn pad(&mut self, rows: usize) {
        if rows > self.len() {
            self.fill_nulls(rows);
        }
    }

    #[inline(never)]
    fn fill_nulls(&mut self, rows: usize) {
        self.nulls.append_n_nulls(rows - self.len());
        self.offsets.resize(rows + 1, self.data.len() as i32);
    }

    fn mark(&self) -> VariableMark {
        VariableMark(self.len(), self.data.len())
    }

    fn rollback(&mut self, VariableMark(len, data_len): VariableMark) {
        self.offsets.truncate(len + 1);
        self.data.truncate(data_len);
        self.nulls.truncate(len);
    }

    fn parts(
        mut self,
        rows: usize,
        zeros: &Zeros,
    ) -> Result<(OffsetBuffer<i32>, Buffer, Option<NullBuffer>), ArrowError> {
        if self.len() == 0 && rows > 0 {
            return Ok((
                zeros.offsets(rows),
                Buffer::from_vec(self.data),
                Some(zeros.nulls(rows)),
            ));
        }
        self.pad(rows);
        if i32::try_from(self.data.len()).is_err() {
            return Err(ArrowError::ComputeError(format!(
                "{} bytes of strings do not fit one record batch column",
                self.data.len()
            )));
        }
        Ok((
            offset_buffer(self.offsets)?,
            Buffer::from_vec(self.data),
            self.nulls.finish(),
        ))
    }

    pub(super) fn finish_binary(self, rows: usize, zeros: &Zeros) -> Result<ArrayRef, ArrowError> {
        let (offsets, data, nulls) = self.parts(rows, zeros)?;
        Ok(Arc::new(BinaryArray::try_new(offsets, data, nulls)?))
    }
}

impl Append for Variable {
    fn append(&mut self, len: usize, mut other: Self, other_len: usize) {
        if other.len() == 0 {
            return;
        }
        self.pad(len);
        other.pad(other_len);
        append_offsets(&mut self.offsets, &other.offsets);
        self.data.extend_from_slice(&other.data);
        self.nulls.append(other.nulls);
    }
}

impl Reserve for Variable {
    fn reserve(&mut self, factor: f64) {
        Reserve::reserve(&mut self.offsets, factor);
        Reserve::reserve(&mut self.data, factor);
    }
}

/// A nullable utf8 column: a [`Variable`] column that only ever receives `&str`.
pub(super) struct Utf8(Variable);

impl Utf8 {
    pub(super) fn new() -> Self {
        Utf8(Variable::new())
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    pub(super) fn push(&mut self, value: &str) {
        self.0.push(value.as_bytes());
    }

    #[inline(always)]
    pub(super) fn set(&mut self, row: usize, value: &str) {
        self.0.set(row, value.as_bytes());
    }

    pub(super) fn mark(&self) -> VariableMark {
        self.0.mark()
    }

    pub(super) fn rollback(&mut self, mark: VariableMark) {
        self.0.rollback(mark);
    }

    pub(super) fn finish(self, rows: usize, zeros: &Zeros) -> Result<ArrayRef, ArrowError> {
        let (offsets, data, nulls) = self.0.parts(rows, zeros)?;
        // SAFETY: every value appended was a `&str` and rollbacks return to an earlier value's
        // end, so the data is UTF-8 and every offset lies on a character boundary.
        Ok(Arc::new(unsafe {
            StringArray::new_unchecked(offsets, data, nulls)
        }))
    }
}

impl Append for Utf8 {
    fn append(&mut self, len: usize, other: Self, other_len: usize) {
        self.0.append(len, other.0, other_len);
    }
}

impl Reserve for Utf8 {
    fn reserve(&mut self, factor: f64) {
        self.0.reserve(factor);
    }
}
