//! List columns: the offsets and validity of a list ([`Lists`]), and the
//! `list<struct<topic, partitions list<int32>>>` columns ([`TopicPartitions`]), filled from
//! decoded records or straight from a consumer-protocol assignment's bytes.

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{Array, ArrayRef, ListArray, PrimitiveArray, StructArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{ArrowError, DataType, FieldRef, Fields};

use crate::codec::arrow::column::{
    append_offsets, offset_buffer, prefetch_end, Append, Reserve, Zeros,
};
use crate::codec::arrow::validity::Validity;
use crate::codec::arrow::variable::Utf8;
use crate::codec::primitives::utf8;

/// The offsets and validity of a nullable list column (its items live in child columns).
pub(super) struct Lists {
    offsets: Vec<i32>,
    nulls: Validity,
}

impl Lists {
    pub(super) fn new() -> Self {
        Lists {
            offsets: vec![0],
            nulls: Validity::new(),
        }
    }

    fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Ends a list whose items are the child's up to `items`.
    #[inline]
    pub(super) fn push(&mut self, items: usize) {
        self.offsets.push(items as i32);
        prefetch_end(&self.offsets);
        self.nulls.append_non_null();
    }

    #[inline(always)]
    pub(super) fn pad(&mut self, rows: usize) {
        if rows > self.len() {
            self.fill_nulls(rows);
        }
    }

    #[inline(never)]
    fn fill_nulls(&mut self, rows: usize) {
        let last = self.offsets[self.len()];
        self.nulls.append_n_nulls(rows - self.len());
        self.offsets.resize(rows + 1, last);
    }

    pub(super) fn finish(
        mut self,
        rows: usize,
        item: &FieldRef,
        values: ArrayRef,
        zeros: &Zeros,
    ) -> Result<ArrayRef, ArrowError> {
        if self.len() == 0 && rows > 0 {
            return Ok(Arc::new(ListArray::try_new(
                item.clone(),
                zeros.offsets(rows),
                values,
                Some(zeros.nulls(rows)),
            )?));
        }
        self.pad(rows);
        if i32::try_from(values.len()).is_err() {
            return Err(ArrowError::ComputeError(format!(
                "{} list items do not fit one record batch column",
                values.len()
            )));
        }
        Ok(Arc::new(ListArray::try_new(
            item.clone(),
            offset_buffer(self.offsets)?,
            values,
            self.nulls.finish(),
        )?))
    }
}

impl Append for Lists {
    fn append(&mut self, len: usize, mut other: Self, other_len: usize) {
        if other.len() == 0 {
            return;
        }
        self.pad(len);
        other.pad(other_len);
        append_offsets(&mut self.offsets, &other.offsets);
        self.nulls.append(other.nulls);
    }
}

impl Reserve for Lists {
    fn reserve(&mut self, factor: f64) {
        Reserve::reserve(&mut self.offsets, factor);
    }
}

pub(super) fn list_item(data_type: &DataType) -> Result<&FieldRef, ArrowError> {
    match data_type {
        DataType::List(item) => Ok(item),
        other => Err(ArrowError::SchemaError(format!(
            "expected a list, not {other}"
        ))),
    }
}

pub(super) fn struct_fields(data_type: &DataType) -> Result<&Fields, ArrowError> {
    match data_type {
        DataType::Struct(fields) => Ok(fields),
        other => Err(ArrowError::SchemaError(format!(
            "expected a struct, not {other}"
        ))),
    }
}

/// A `list<struct<name utf8, partitions list<int32>>>` column.
pub(super) struct TopicPartitions {
    pub(super) lists: Lists,
    topics: Utf8,
    partition_offsets: Vec<i32>,
    partitions: Vec<i32>,
}

impl TopicPartitions {
    pub(super) fn new() -> Self {
        TopicPartitions {
            lists: Lists::new(),
            topics: Utf8::new(),
            partition_offsets: vec![0],
            partitions: Vec::new(),
        }
    }

    pub(super) fn push_topic(&mut self, topic: &str, partitions: impl IntoIterator<Item = i32>) {
        self.topics.push(topic);
        self.partitions.extend(partitions);
        self.partition_offsets.push(self.partitions.len() as i32);
        prefetch_end(&self.partitions);
        prefetch_end(&self.partition_offsets);
    }

    pub(super) fn end_list(&mut self) {
        self.lists.push(self.topics.len());
    }

    /// Appends a consumer-protocol assignment's partitions straight from its bytes, as the
    /// list of row `row`. False (the row left null) if they do not decode.
    pub(super) fn push_assignment(&mut self, row: usize, bytes: &[u8]) -> bool {
        self.lists.pad(row);
        let mark = (
            self.topics.mark(),
            self.partition_offsets.len(),
            self.partitions.len(),
        );
        if self.read_assignment(bytes).is_some() {
            self.end_list();
            return true;
        }
        self.topics.rollback(mark.0);
        self.partition_offsets.truncate(mark.1);
        self.partitions.truncate(mark.2);
        false
    }

    fn read_assignment(&mut self, bytes: &[u8]) -> Option<()> {
        let mut r = ConsumerPayload(bytes);
        if r.i16()? < 0 {
            return None;
        }
        for _ in 0..r.count(6)? {
            let topic = r.str()?;
            let count = r.count(4)?;
            let partitions = r.take(4 * count)?;
            self.push_topic(
                topic,
                partitions
                    .chunks_exact(4)
                    .map(|p| i32::from_be_bytes([p[0], p[1], p[2], p[3]])),
            );
        }
        r.nullable_bytes()?;
        Some(())
    }

    pub(super) fn finish(
        self,
        rows: usize,
        data_type: &DataType,
        zeros: &Zeros,
    ) -> Result<ArrayRef, ArrowError> {
        let item = list_item(data_type)?;
        let fields = struct_fields(item.data_type())?;
        let partition_item = list_item(fields[1].data_type())?;
        let topics = self.topics.len();
        let partitions = Lists {
            offsets: self.partition_offsets,
            nulls: Validity::new(),
        }
        .finish(
            topics,
            partition_item,
            Arc::new(PrimitiveArray::<Int32Type>::new(
                ScalarBuffer::from(self.partitions),
                None,
            )),
            zeros,
        )?;
        let entries = StructArray::try_new(
            fields.clone(),
            vec![self.topics.finish(topics, zeros)?, partitions],
            None,
        )?;
        self.lists.finish(rows, item, Arc::new(entries), zeros)
    }
}

impl Append for TopicPartitions {
    fn append(&mut self, len: usize, other: Self, other_len: usize) {
        self.lists.append(len, other.lists, other_len);
        let (topics, other_topics) = (self.topics.len(), other.topics.len());
        self.topics.append(topics, other.topics, other_topics);
        // `partition_offsets` index `partitions` itself, one per topic: no padding.
        append_offsets(&mut self.partition_offsets, &other.partition_offsets);
        self.partitions.extend_from_slice(&other.partitions);
    }
}

impl Reserve for TopicPartitions {
    fn reserve(&mut self, factor: f64) {
        self.lists.reserve(factor);
        self.topics.reserve(factor);
        Reserve::reserve(&mut self.partition_offsets, factor);
        Reserve::reserve(&mut self.partitions, factor);
    }
}

/// A cursor over a consumer-protocol subscription or assignment. One that does not decode
/// only leaves its member's lists null, so reads give `None` rather than a positioned error.
pub(super) struct ConsumerPayload<'a>(pub(super) &'a [u8]);

impl<'a> ConsumerPayload<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }

    pub(super) fn i16(&mut self) -> Option<i16> {
        let b = self.take(2)?;
        Some(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Option<i32> {
        let b = self.take(4)?;
        Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An array count whose elements, of at least `min_element_size` bytes, fit what is left.
    pub(super) fn count(&mut self, min_element_size: usize) -> Option<usize> {
        let n = usize::try_from(self.i32()?).ok()?;
        (n.checked_mul(min_element_size)? <= self.0.len()).then_some(n)
    }

    pub(super) fn str(&mut self) -> Option<&'a str> {
        let n = usize::try_from(self.i16()?).ok()?;
        utf8(self.take(n)?).ok()
    }

    fn nullable_bytes(&mut self) -> Option<Option<&'a [u8]>> {
        match self.i32()? {
            -1 => Some(None),
            n => Some(Some(self.take(usize::try_from(n).ok()?)?)),
        }
    }
}
