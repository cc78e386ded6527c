//! Nullable fixed-width columns (integers), set row by row.

use std::sync::Arc;

use arrow_array::{ArrayRef, PrimitiveArray};
use arrow_buffer::{ArrowNativeType, ScalarBuffer};

use crate::codec::arrow::column::{prefetch_end, Append, Reserve, Zeros};
use crate::codec::arrow::validity::Validity;

/// A nullable primitive column. Rows are set in order; rows skipped are null.
pub(super) struct Primitive<T> {
    values: Vec<T>,
    nulls: Validity,
}

impl<T: ArrowNativeType> Primitive<T> {
    pub(super) fn new() -> Self {
        Primitive {
            values: Vec::new(),
            nulls: Validity::new(),
        }
    }

    #[inline(always)]
    pub(super) fn set(&mut self, row: usize, value: T) {
        self.pad(row);
        self.values.push(value);
        prefetch_end(&self.values);
        self.nulls.append_non_null();
    }

    #[inline(always)]
    fn pad(&mut self, rows: usize) {
        if rows > self.values.len() {
            self.fill_nulls(rows);
        }
    }

    #[inline(never)]
    fn fill_nulls(&mut self, rows: usize) {
        self.nulls.append_n_nulls(rows - self.values.len());
        self.values.resize(rows, T::default());
    }

    pub(super) fn finish<P: arrow_array::ArrowPrimitiveType<Native = T>>(
        mut self,
        rows: usize,
        zeros: &Zeros,
    ) -> ArrayRef {
        if self.values.is_empty() && rows > 0 {
            return Arc::new(PrimitiveArray::<P>::new(
                zeros.values(rows),
                Some(zeros.nulls(rows)),
            ));
        }
        self.pad(rows);
        Arc::new(PrimitiveArray::<P>::new(
            ScalarBuffer::from(self.values),
            self.nulls.finish(),
        ))
    }
}

impl<T: ArrowNativeType> Append for Primitive<T> {
    fn append(&mut self, len: usize, mut other: Self, other_len: usize) {
        if other.values.is_empty() {
            return;
        }
        self.pad(len);
        other.pad(other_len);
        self.values.extend_from_slice(&other.values);
        self.nulls.append(other.nulls);
    }
}

impl<T> Reserve for Primitive<T> {
    fn reserve(&mut self, factor: f64) {
        Reserve::reserve(&mut self.values, factor);
    }
}
