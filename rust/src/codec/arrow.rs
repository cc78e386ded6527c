//! A decoded `__consumer_offsets` log as one Arrow record batch: one row per record, with no
//! per-record Python object, decoded straight from the log buffer into the columns (keys and
//! values are borrowed, never copied twice). The schema ([`schema`]) is the one documented in
//! the package's stub (`decode_arrow`):
//!
//! | column | type | set for |
//! |---|---|---|
//! | partition, offset, timestamp, batch_position, producer_id | int32 / int64 | every row |
//! | producer_epoch | int16 | every row |
//! | is_transactional, is_tombstone | bool | every row |
//! | control | utf8 | control records: "commit" / "abort", or Kafka's name of another control type (`log::Control::name`) |
//! | record_type, value_version | int16 | data records (value_version: not tombstones, nor a value of an unknown type shorter than 2 bytes) |
//! | group, topic, key_partition, member_id, regular_expression | utf8 / int32 | keys (group_id for types 3-8, 16; regular_expression for type 16) |
//! | committed_offset, leader_epoch, metadata, commit_timestamp, expire_timestamp | | offset commits |
//! | topic_id | utf8 | offset commits carrying one (version 4, Kafka 4.1's tagged field 0), as Kafka prints it (base64url) |
//! | protocol_type, generation, protocol, leader, current_state_timestamp | | group metadata |
//! | members | list<struct<member_id, group_instance_id, client_id, client_host, rebalance_timeout, session_timeout, subscription, assignment, subscribed_topics list<utf8>, assigned_partitions list<struct<topic, partitions list<int32>>>>> | group metadata; the last two decoded for `consumer` groups |
//! | epoch | int32 | types 3 (epoch), 6 (assignment_epoch), 8 (member_epoch) |
//! | topic_partitions | list<struct<topic_id utf8, partitions list<int32>>> | types 7 and 8 (assigned partitions); topic ids as Kafka prints them (base64url) |
//! | consumer_group_fields | utf8 (JSON) | types 3-8, 16: every decoded field (uuids as Kafka prints them, bytes in base64, as `dump-log`) |
//! | raw_key, raw_value | binary | opaque records (types this codec does not decode) |

use std::ops::Range;
use std::sync::{Arc, Mutex};

use arrow_array::types::{Int16Type, Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, ListArray, PrimitiveArray, RecordBatch,
    StringArray, StructArray,
};
use arrow_buffer::{
    ArrowNativeType, BooleanBuffer, Buffer, MutableBuffer, NullBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, Schema, SchemaRef};

use crate::codec::batch::{
    batch_start_near, first_compression, split_at_batches, BatchInfo, Chunk, LogReader, RecordRef,
    Walk, CHUNK_BYTES, MAGIC_OFFSET,
};
use crate::codec::compression::Compression;
use crate::codec::consumer_group::{base64, uuid_string, Datum};
use crate::codec::log::{decode_payload, Payload};
use crate::codec::primitives::utf8;
use crate::codec::records::{GroupMetadataValueRef, KeyRef, ValueRef};

fn topic_partitions_type(topic_name: &str) -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(Fields::from(vec![
            Field::new(topic_name, DataType::Utf8, false),
            Field::new(
                "partitions",
                DataType::List(Arc::new(Field::new("item", DataType::Int32, false))),
                false,
            ),
        ])),
        false,
    )))
}

fn member_fields() -> Fields {
    Fields::from(vec![
        Field::new("member_id", DataType::Utf8, false),
        Field::new("group_instance_id", DataType::Utf8, true),
        Field::new("client_id", DataType::Utf8, false),
        Field::new("client_host", DataType::Utf8, false),
        Field::new("rebalance_timeout", DataType::Int32, false),
        Field::new("session_timeout", DataType::Int32, false),
        Field::new("subscription", DataType::Binary, false),
        Field::new("assignment", DataType::Binary, false),
        Field::new(
            "subscribed_topics",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, false))),
            true,
        ),
        Field::new("assigned_partitions", topic_partitions_type("topic"), true),
    ])
}

/// The one schema of [`to_record_batch`].
pub fn schema() -> SchemaRef {
    use DataType::*;
    Arc::new(Schema::new(vec![
        Field::new("partition", Int32, false),
        Field::new("offset", Int64, false),
        Field::new("timestamp", Int64, false),
        Field::new("batch_position", Int64, false),
        Field::new("producer_id", Int64, false),
        Field::new("producer_epoch", Int16, false),
        Field::new("is_transactional", Boolean, false),
        Field::new("is_tombstone", Boolean, false),
        Field::new("control", Utf8, true),
        Field::new("record_type", Int16, true),
        Field::new("value_version", Int16, true),
        Field::new("group", Utf8, true),
        Field::new("topic", Utf8, true),
        Field::new("key_partition", Int32, true),
        Field::new("member_id", Utf8, true),
        Field::new("regular_expression", Utf8, true),
        Field::new("committed_offset", Int64, true),
        Field::new("leader_epoch", Int32, true),
        Field::new("metadata", Utf8, true),
        Field::new("commit_timestamp", Int64, true),
        Field::new("expire_timestamp", Int64, true),
        Field::new("topic_id", Utf8, true),
        Field::new("protocol_type", Utf8, true),
        Field::new("generation", Int32, true),
        Field::new("protocol", Utf8, true),
        Field::new("leader", Utf8, true),
        Field::new("current_state_timestamp", Int64, true),
        Field::new(
            "members",
            List(Arc::new(Field::new("item", Struct(member_fields()), false))),
            true,
        ),
        Field::new("epoch", Int32, true),
        Field::new("topic_partitions", topic_partitions_type("topic_id"), true),
        Field::new("consumer_group_fields", Utf8, true),
        Field::new("raw_key", Binary, true),
        Field::new("raw_value", Binary, true),
    ]))
}

/// Decodes every record of a log buffer (whose first byte is at absolute `position`) into one
/// record batch of [`schema`]. Like [`crate::codec::log::decode_log`] it stops at the first
/// corrupt batch or record; the record batch then holds the records of the batches before it.
///
/// `threads` bounds the threads it uses. From twice [`MIN_RUN_BYTES`] of input on, runs of
/// whole batches are decoded side by side, and the first run's columns then take the others'
/// rows; a run of gzip or zstd batches takes two threads, one decompressing ahead of the one
/// that parses (see [`LogReader::chunks`]).
pub fn decode_arrow(
    data: &[u8],
    position: usize,
    partition: i32,
    threads: usize,
) -> (Result<RecordBatch, ArrowError>, Walk) {
    decode_arrow_in_runs(data, position, partition, threads, MIN_RUN_BYTES)
}

/// The least input a run of [`decode_arrow`] is given: below it, handing the run to another
/// thread and copying its rows back cost more than the thread saves.
pub const MIN_RUN_BYTES: usize = 8 << 20;

fn decode_arrow_in_runs(
    data: &[u8],
    position: usize,
    partition: i32,
    threads: usize,
    min_run_bytes: usize,
) -> (Result<RecordBatch, ArrowError>, Walk) {
    let (columns, walk) = decode_columns(data, position, partition, threads, min_run_bytes);
    // Inputs long enough for runs side by side are finished on two threads too.
    let side_by_side = |data: &[u8]| threads >= 2 && data.len() >= 2 * min_run_bytes;
    if walk.error.is_none() {
        return (columns.finish(side_by_side(data)), walk);
    }
    // The columns may hold some records of the corrupt batch: decode the valid prefix again.
    let valid = &data[..walk.valid_bytes];
    let (columns, _) = decode_columns(valid, position, partition, threads, min_run_bytes);
    (columns.finish(side_by_side(valid)), walk)
}

/// How many threads [`decode_arrow`] uses when the caller leaves it to the codec: one per core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn decode_columns(
    data: &[u8],
    position: usize,
    partition: i32,
    threads: usize,
    min_run_bytes: usize,
) -> (Columns, Walk) {
    let (parts, pipelined, guessed) = match guess_runs(data, threads, min_run_bytes) {
        Some(parts) => (parts, false, true),
        None => {
            let (parts, pipelined) = plan_runs(data, threads, min_run_bytes);
            (parts, pipelined, false)
        }
    };
    decode_runs(data, position, partition, &parts, pipelined, guessed)
}

/// Decodes `data` cut into `parts` side by side (see [`decode_columns`]). `guessed`: the cuts
/// were found by [`guess_runs`], and may not be where the log's batches end.
fn decode_runs(
    data: &[u8],
    position: usize,
    partition: i32,
    parts: &[Range<usize>],
    pipelined: bool,
    guessed: bool,
) -> (Columns, Walk) {
    if parts.len() == 1 {
        return decode_part(data, position, partition, data.len(), pipelined);
    }
    // The runs go to a worker pool (rayon's), whose threads and their allocator caches outlive
    // one call. The first run's columns are sized for the whole input, so that they take the
    // others' rows without growing.
    let mut others: Vec<Option<(Columns, Walk)>> = parts[1..].iter().map(|_| None).collect();
    let mut first = None;
    rayon::scope(|scope| {
        for (run, out) in parts[1..].iter().zip(others.iter_mut()) {
            scope.spawn(move |_| {
                *out = Some(decode_part(
                    &data[run.clone()],
                    position + run.start,
                    partition,
                    run.len(),
                    pipelined,
                ));
            });
        }
        first = Some(decode_part(
            &data[parts[0].clone()],
            position,
            partition,
            data.len(),
            pipelined,
        ));
    });
    let (mut columns, mut walk) = first.expect("the scope ran the first run");
    for (other, run) in others.into_iter().zip(&parts[1..]) {
        let (part, part_walk) = other.expect("the scope ran every run");
        if walk.error.is_some() {
            // An earlier run stopped: a walk of the whole input never reaches this one.
            break;
        }
        columns.append(part);
        walk = Walk {
            valid_bytes: run.start + part_walk.valid_bytes,
            error: part_walk.error,
        };
    }
    if guessed && walk.error.is_some() {
        // A run of guessed cuts that stopped may have stopped only because the batches before
        // its cut run past it (the cut was inside a batch): decoding on from where it stopped
        // to the end of the input gives what one walk of the whole input gives. Where the log
        // is corrupt, that decode stops at once, at the same batch.
        let at = walk.valid_bytes;
        let (rest, rest_walk) = decode_part(
            &data[at..],
            position + at,
            partition,
            data.len() - at,
            false,
        );
        columns.append(rest);
        walk = Walk {
            valid_bytes: at + rest_walk.valid_bytes,
            error: rest_walk.error,
        };
    }
    (columns, walk)
}

/// How far past an equal share [`guess_runs`] looks for a batch to cut at.
const GUESS_WINDOW: usize = 1 << 20;

/// Runs of one thread each for an input of magic-2 batches, uncompressed, lz4 or snappy,
/// cut at batches found by their bytes near equal shares ([`batch_start_near`]): the second
/// run starts at once, where [`split_at_batches`] would first walk the length prefixes of
/// half the input (1.2 ms of a 36 ms decode of 100 MB on two threads, each prefix a wait on
/// memory). `None` where the walk is needed: one run, pipelined runs, legacy batches, or no
/// batch found near a share. A cut that is not where the log's batches end (a record holding
/// a whole batch in its value) only costs time: [`decode_runs`] decodes on past it.
fn guess_runs(data: &[u8], threads: usize, min_run_bytes: usize) -> Option<Vec<Range<usize>>> {
    let one_thread_runs = matches!(
        first_compression(data),
        Some(Compression::None | Compression::Lz4 | Compression::Snappy)
    );
    if threads < 2 || !one_thread_runs || data.get(MAGIC_OFFSET) != Some(&2) {
        return None;
    }
    let runs = threads.min(data.len() / min_run_bytes.max(1));
    if runs < 2 {
        return None;
    }
    let share = data.len() / runs;
    let mut cuts = vec![0];
    for k in 1..runs {
        let cut = batch_start_near(data, k * share, GUESS_WINDOW)?;
        if cut <= *cuts.last()? || data.len() - cut < min_run_bytes {
            return None;
        }
        cuts.push(cut);
    }
    cuts.push(data.len());
    Some(cuts.windows(2).map(|w| w[0]..w[1]).collect())
}

/// Cuts `data` into runs of whole batches for up to `threads` threads; true when each run
/// takes two threads, one decompressing ahead of the one that parses.
///
/// Inflating gzip or zstd takes about as long as parsing what it gives: a run of such batches
/// keeps two threads busy, and no rows are copied from run to run. lz4 and snappy inflate in
/// half the time of parsing, which leaves a pipeline's decompressing thread idle half the
/// time: their runs take one thread each, like uncompressed batches, unless the input is too
/// short for two runs.
fn plan_runs(data: &[u8], threads: usize, min_run_bytes: usize) -> (Vec<Range<usize>>, bool) {
    let compression = first_compression(data);
    if threads >= 2 && matches!(compression, Some(Compression::Gzip | Compression::Zstd)) {
        return (split_at_batches(data, threads / 2, min_run_bytes), true);
    }
    let runs = split_at_batches(data, threads, min_run_bytes);
    let pipelined = threads >= 2
        && runs.len() == 1
        && matches!(compression, Some(Compression::Lz4 | Compression::Snappy));
    (runs, pipelined)
}

/// Decodes `data` in order into columns sized, after the first chunk, for `expected_bytes`
/// of input like it; `pipelined`: with a second thread checking and decompressing ahead.
fn decode_part(
    data: &[u8],
    position: usize,
    partition: i32,
    expected_bytes: usize,
    pipelined: bool,
) -> (Columns, Walk) {
    let mut columns = Columns::new();
    let mut first = true;
    let consume = |chunk: &Chunk<'_>, checked: usize| {
        chunk.process(position, |batch, records| {
            for record in records {
                let record = record?;
                let payload = decode_payload(batch, &record)?;
                columns.push(partition, batch, &record, &payload);
            }
            Ok(())
        })?;
        if first {
            // Size every column from what its first chunk held, so that the columns do not
            // grow (and copy) step by step.
            let done = checked.max(1);
            columns.reserve(expected_bytes.saturating_sub(done) as f64 / done as f64);
            first = false;
        }
        Ok(())
    };
    let reader = LogReader::new(data, position);
    let walk = if pipelined {
        reader.chunks(CHUNK_BYTES, consume)
    } else {
        reader.chunks_on_this_thread(CHUNK_BYTES, consume)
    };
    (columns, walk)
}

/// Columns that take another column's rows after their own. Padding is lazy (rows not set
/// are filled in when the column is finished), so both sides are first padded to their row
/// counts: `len` and `other_len`.
trait Append {
    fn append(&mut self, len: usize, other: Self, other_len: usize);
}

/// A column's validity, built row by row as arrow's `NullBufferBuilder` builds it (no bitmap
/// until the first null, then a bit a row, set where valid), with the bitmap in a vector of
/// bytes: every eighth row pushes a byte, where `NullBufferBuilder` grows its buffer by a
/// byte with a call to `memset`.
#[derive(Default)]
struct Validity {
    len: usize,
    /// Once a row is null: `len.div_ceil(8)` bytes, the bits past `len` zero.
    bits: Option<Vec<u8>>,
}

impl Validity {
    fn new() -> Self {
        Self::default()
    }

    #[inline(always)]
    fn append_non_null(&mut self) {
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

    fn append_n_nulls(&mut self, n: usize) {
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
    fn append(&mut self, other: Validity) {
        let Some(bits) = other.bits else {
            return self.append_n_non_nulls(other.len);
        };
        for (i, &byte) in bits.iter().enumerate() {
            self.append_byte(byte, (other.len - 8 * i).min(8));
        }
    }

    fn truncate(&mut self, len: usize) {
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
    fn finish(self) -> Option<NullBuffer> {
        let bits = self.bits?;
        Some(NullBuffer::new(BooleanBuffer::new(
            Buffer::from_vec(bits),
            0,
            self.len,
        )))
    }
}

/// Appends offsets that start at 0 (the first is skipped) to offsets that end at `base`.
fn append_offsets(offsets: &mut Vec<i32>, other: &[i32]) {
    let base = offsets.last().copied().unwrap_or(0);
    offsets.extend(other[1..].iter().map(|o| o.wrapping_add(base)));
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

impl Append for Utf8 {
    fn append(&mut self, len: usize, other: Self, other_len: usize) {
        self.0.append(len, other.0, other_len);
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

impl Append for Members {
    fn append(&mut self, len: usize, other: Self, other_len: usize) {
        self.lists.append(len, other.lists, other_len);
        let (members, other_members) = (self.member_id.len(), other.member_id.len());
        let Members {
            subscribed: other_subscribed,
            subscribed_topics: other_subscribed_topics,
            assigned: other_assigned,
            ..
        } = other;
        // The decoded lists on one thread, the member fields on another: members are most of
        // the rows' bytes.
        rayon::join(
            || {
                self.subscribed
                    .append(members, other_subscribed, other_members);
                let (topics, other_topics) =
                    (self.subscribed_topics.len(), other_subscribed_topics.len());
                self.subscribed_topics
                    .append(topics, other_subscribed_topics, other_topics);
                self.assigned.append(members, other_assigned, other_members);
            },
            || {
                // The raw assignments, the largest column, beside the other member fields:
                // the two threads copy closer to equal shares.
                rayon::join(
                    || {
                        self.member_id
                            .append(members, other.member_id, other_members);
                        self.group_instance_id.append(
                            members,
                            other.group_instance_id,
                            other_members,
                        );
                        self.client_id
                            .append(members, other.client_id, other_members);
                        self.client_host
                            .append(members, other.client_host, other_members);
                        self.rebalance_timeout
                            .extend_from_slice(&other.rebalance_timeout);
                        self.session_timeout
                            .extend_from_slice(&other.session_timeout);
                        self.subscription
                            .append(members, other.subscription, other_members);
                    },
                    || {
                        self.assignment
                            .append(members, other.assignment, other_members)
                    },
                )
            },
        );
    }
}

/// Columns that can make room for `factor` times what they hold.
trait Reserve {
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
struct Zeros {
    buffer: Mutex<Buffer>,
    /// The size to allocate at the first use: enough for every column of the batch.
    bytes: usize,
}

impl Zeros {
    fn new(bytes: usize) -> Self {
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

    fn nulls(&self, rows: usize) -> NullBuffer {
        let bits = BooleanBuffer::new(self.buffer(rows.div_ceil(8)), 0, rows);
        // SAFETY: no bit is set, so every one of the `rows` rows is null.
        unsafe { NullBuffer::new_unchecked(bits, rows) }
    }

    fn values<T: ArrowNativeType>(&self, len: usize) -> ScalarBuffer<T> {
        ScalarBuffer::new(self.buffer(len * std::mem::size_of::<T>()), 0, len)
    }

    fn offsets(&self, rows: usize) -> OffsetBuffer<i32> {
        // SAFETY: all zero: non-negative and never decreasing.
        unsafe { OffsetBuffer::new_unchecked(self.values(rows + 1)) }
    }
}

/// How far past a column's end [`prefetch_end`] asks for memory.
const PREFETCH_AHEAD: usize = 512;

/// Asks the CPU to bring the cache line `PREFETCH_AHEAD` bytes past the end of `v`'s values
/// into cache, ahead of the pushes that will write it. A decode writes some thirty columns at
/// once into memory that is not in cache (a 100 MB segment's columns are 184 MB); without
/// this, each first write to a line waits for it to be read from memory, and the stores
/// back up. Only a hint: it changes no value.
#[inline(always)]
fn prefetch_end<T>(v: &[T]) {
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

/// A nullable primitive column. Rows are set in order; rows skipped are null.
struct Primitive<T> {
    values: Vec<T>,
    nulls: Validity,
}

impl<T: ArrowNativeType> Primitive<T> {
    fn new() -> Self {
        Primitive {
            values: Vec::new(),
            nulls: Validity::new(),
        }
    }

    #[inline(always)]
    fn set(&mut self, row: usize, value: T) {
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

    fn finish<P: arrow_array::ArrowPrimitiveType<Native = T>>(
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

/// A nullable utf8 or binary column: values end to end, and where each ends.
struct Variable {
    offsets: Vec<i32>,
    data: Vec<u8>,
    nulls: Validity,
}

/// Where a [`Variable`] column stood, to go back to.
#[derive(Clone, Copy)]
struct VariableMark(usize, usize);

impl Variable {
    fn new() -> Self {
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
    fn push(&mut self, value: &[u8]) {
        self.data.extend_from_slice(value);
        self.offsets.push(self.data.len() as i32);
        prefetch_end(&self.data);
        prefetch_end(&self.offsets);
        self.nulls.append_non_null();
    }

    #[inline(always)]
    fn set(&mut self, row: usize, value: &[u8]) {
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

    fn finish_binary(self, rows: usize, zeros: &Zeros) -> Result<ArrayRef, ArrowError> {
        let (offsets, data, nulls) = self.parts(rows, zeros)?;
        Ok(Arc::new(BinaryArray::try_new(offsets, data, nulls)?))
    }
}

/// A nullable utf8 column: a [`Variable`] column that only ever receives `&str`.
struct Utf8(Variable);

impl Utf8 {
    fn new() -> Self {
        Utf8(Variable::new())
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    fn push(&mut self, value: &str) {
        self.0.push(value.as_bytes());
    }

    #[inline(always)]
    fn set(&mut self, row: usize, value: &str) {
        self.0.set(row, value.as_bytes());
    }

    fn mark(&self) -> VariableMark {
        self.0.mark()
    }

    fn rollback(&mut self, mark: VariableMark) {
        self.0.rollback(mark);
    }

    fn finish(self, rows: usize, zeros: &Zeros) -> Result<ArrayRef, ArrowError> {
        let (offsets, data, nulls) = self.0.parts(rows, zeros)?;
        // SAFETY: every value appended was a `&str` and rollbacks return to an earlier value's
        // end, so the data is UTF-8 and every offset lies on a character boundary.
        Ok(Arc::new(unsafe {
            StringArray::new_unchecked(offsets, data, nulls)
        }))
    }
}

/// The offsets and validity of a nullable list column (its items live in child columns).
struct Lists {
    offsets: Vec<i32>,
    nulls: Validity,
}

impl Lists {
    fn new() -> Self {
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
    fn push(&mut self, items: usize) {
        self.offsets.push(items as i32);
        prefetch_end(&self.offsets);
        self.nulls.append_non_null();
    }

    #[inline(always)]
    fn pad(&mut self, rows: usize) {
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

    fn finish(
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

/// A column's offsets as Arrow's. They only ever grow as rows are pushed; this checks so in
/// one branch-free pass, which the compiler vectorizes, where `OffsetBuffer::new` stops to
/// branch at every offset.
fn offset_buffer(offsets: Vec<i32>) -> Result<OffsetBuffer<i32>, ArrowError> {
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

fn list_item(data_type: &DataType) -> Result<&FieldRef, ArrowError> {
    match data_type {
        DataType::List(item) => Ok(item),
        other => Err(ArrowError::SchemaError(format!(
            "expected a list, not {other}"
        ))),
    }
}

fn struct_fields(data_type: &DataType) -> Result<&Fields, ArrowError> {
    match data_type {
        DataType::Struct(fields) => Ok(fields),
        other => Err(ArrowError::SchemaError(format!(
            "expected a struct, not {other}"
        ))),
    }
}

/// A `list<struct<name utf8, partitions list<int32>>>` column.
struct TopicPartitions {
    lists: Lists,
    topics: Utf8,
    partition_offsets: Vec<i32>,
    partitions: Vec<i32>,
}

impl TopicPartitions {
    fn new() -> Self {
        TopicPartitions {
            lists: Lists::new(),
            topics: Utf8::new(),
            partition_offsets: vec![0],
            partitions: Vec::new(),
        }
    }

    fn push_topic(&mut self, topic: &str, partitions: impl IntoIterator<Item = i32>) {
        self.topics.push(topic);
        self.partitions.extend(partitions);
        self.partition_offsets.push(self.partitions.len() as i32);
        prefetch_end(&self.partitions);
        prefetch_end(&self.partition_offsets);
    }

    fn end_list(&mut self) {
        self.lists.push(self.topics.len());
    }

    /// Appends a consumer-protocol assignment's partitions straight from its bytes, as the
    /// list of row `row`. False (the row left null) if they do not decode.
    fn push_assignment(&mut self, row: usize, bytes: &[u8]) -> bool {
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

    fn finish(
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

/// A cursor over a consumer-protocol subscription or assignment. One that does not decode
/// only leaves its member's lists null, so reads give `None` rather than a positioned error.
struct ConsumerPayload<'a>(&'a [u8]);

impl<'a> ConsumerPayload<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }

    fn i16(&mut self) -> Option<i16> {
        let b = self.take(2)?;
        Some(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Option<i32> {
        let b = self.take(4)?;
        Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An array count whose elements, of at least `min_element_size` bytes, fit what is left.
    fn count(&mut self, min_element_size: usize) -> Option<usize> {
        let n = usize::try_from(self.i32()?).ok()?;
        (n.checked_mul(min_element_size)? <= self.0.len()).then_some(n)
    }

    fn str(&mut self) -> Option<&'a str> {
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

/// The `members` column: a list of member structs per group metadata row.
struct Members {
    lists: Lists,
    member_id: Utf8,
    group_instance_id: Utf8,
    client_id: Utf8,
    client_host: Utf8,
    rebalance_timeout: Vec<i32>,
    session_timeout: Vec<i32>,
    subscription: Variable,
    assignment: Variable,
    subscribed: Lists,
    subscribed_topics: Utf8,
    assigned: TopicPartitions,
}

impl Members {
    fn new() -> Self {
        Members {
            lists: Lists::new(),
            member_id: Utf8::new(),
            group_instance_id: Utf8::new(),
            client_id: Utf8::new(),
            client_host: Utf8::new(),
            rebalance_timeout: Vec::new(),
            session_timeout: Vec::new(),
            subscription: Variable::new(),
            assignment: Variable::new(),
            subscribed: Lists::new(),
            subscribed_topics: Utf8::new(),
            assigned: TopicPartitions::new(),
        }
    }

    fn set(&mut self, row: usize, group: &GroupMetadataValueRef<'_>) {
        self.lists.pad(row);
        let consumer = group.protocol_type == "consumer";
        for m in &group.members {
            let member = self.member_id.len();
            self.member_id.push(m.member_id);
            // Rows skipped are null, and padded only where a later member has an id (or at
            // the end): most groups have no static members, so most never write one.
            if let Some(id) = m.group_instance_id {
                self.group_instance_id.set(member, id);
            }
            self.client_id.push(m.client_id);
            self.client_host.push(m.client_host);
            self.rebalance_timeout.push(m.rebalance_timeout);
            self.session_timeout.push(m.session_timeout);
            prefetch_end(&self.rebalance_timeout);
            prefetch_end(&self.session_timeout);
            self.subscription.push(m.subscription);
            self.assignment.push(m.assignment);
            if consumer {
                self.push_subscribed_topics(member, m.subscription);
                self.assigned.push_assignment(member, m.assignment);
            }
        }
        self.lists.push(self.member_id.len());
    }

    /// The topics of a consumer-protocol subscription, as the list of member `member`; left
    /// null if they do not decode.
    fn push_subscribed_topics(&mut self, member: usize, bytes: &[u8]) {
        self.subscribed.pad(member);
        let mark = self.subscribed_topics.mark();
        let mut r = ConsumerPayload(bytes);
        let read = (|| {
            if r.i16()? < 0 {
                return None;
            }
            for _ in 0..r.count(2)? {
                self.subscribed_topics.push(r.str()?);
            }
            Some(())
        })();
        match read {
            Some(()) => self.subscribed.push(self.subscribed_topics.len()),
            None => self.subscribed_topics.rollback(mark),
        }
    }

    fn finish(
        self,
        rows: usize,
        data_type: &DataType,
        zeros: &Zeros,
    ) -> Result<ArrayRef, ArrowError> {
        let item = list_item(data_type)?;
        let fields = struct_fields(item.data_type())?;
        let members = self.member_id.len();
        let subscribed = self.subscribed.finish(
            members,
            list_item(fields[8].data_type())?,
            {
                let n = self.subscribed_topics.len();
                self.subscribed_topics.finish(n, zeros)?
            },
            zeros,
        )?;
        let columns: Vec<ArrayRef> = vec![
            self.member_id.finish(members, zeros)?,
            self.group_instance_id.finish(members, zeros)?,
            self.client_id.finish(members, zeros)?,
            self.client_host.finish(members, zeros)?,
            Arc::new(PrimitiveArray::<Int32Type>::new(
                ScalarBuffer::from(self.rebalance_timeout),
                None,
            )),
            Arc::new(PrimitiveArray::<Int32Type>::new(
                ScalarBuffer::from(self.session_timeout),
                None,
            )),
            self.subscription.finish_binary(members, zeros)?,
            self.assignment.finish_binary(members, zeros)?,
            subscribed,
            self.assigned
                .finish(members, fields[9].data_type(), zeros)?,
        ];
        let entries = StructArray::try_new(fields.clone(), columns, None)?;
        self.lists.finish(rows, item, Arc::new(entries), zeros)
    }
}

/// Every column of [`schema`], filled row by row.
struct Columns {
    rows: usize,
    partition: Vec<i32>,
    offset: Vec<i64>,
    timestamp: Vec<i64>,
    batch_position: Vec<i64>,
    producer_id: Vec<i64>,
    producer_epoch: Vec<i16>,
    is_transactional: Vec<bool>,
    is_tombstone: Vec<bool>,
    control: Utf8,
    record_type: Primitive<i16>,
    value_version: Primitive<i16>,
    group: Utf8,
    topic: Utf8,
    key_partition: Primitive<i32>,
    member_id: Utf8,
    regular_expression: Utf8,
    committed_offset: Primitive<i64>,
    leader_epoch: Primitive<i32>,
    metadata: Utf8,
    commit_timestamp: Primitive<i64>,
    expire_timestamp: Primitive<i64>,
    topic_id: Utf8,
    protocol_type: Utf8,
    generation: Primitive<i32>,
    protocol: Utf8,
    leader: Utf8,
    current_state_timestamp: Primitive<i64>,
    members: Members,
    epoch: Primitive<i32>,
    topic_partitions: TopicPartitions,
    consumer_group_fields: Utf8,
    raw_key: Variable,
    raw_value: Variable,
}

impl Columns {
    fn new() -> Self {
        Columns {
            rows: 0,
            partition: Vec::new(),
            offset: Vec::new(),
            timestamp: Vec::new(),
            batch_position: Vec::new(),
            producer_id: Vec::new(),
            producer_epoch: Vec::new(),
            is_transactional: Vec::new(),
            is_tombstone: Vec::new(),
            control: Utf8::new(),
            record_type: Primitive::new(),
            value_version: Primitive::new(),
            group: Utf8::new(),
            topic: Utf8::new(),
            key_partition: Primitive::new(),
            member_id: Utf8::new(),
            regular_expression: Utf8::new(),
            committed_offset: Primitive::new(),
            leader_epoch: Primitive::new(),
            metadata: Utf8::new(),
            commit_timestamp: Primitive::new(),
            expire_timestamp: Primitive::new(),
            topic_id: Utf8::new(),
            protocol_type: Utf8::new(),
            generation: Primitive::new(),
            protocol: Utf8::new(),
            leader: Utf8::new(),
            current_state_timestamp: Primitive::new(),
            members: Members::new(),
            epoch: Primitive::new(),
            topic_partitions: TopicPartitions::new(),
            consumer_group_fields: Utf8::new(),
            raw_key: Variable::new(),
            raw_value: Variable::new(),
        }
    }

    fn push(
        &mut self,
        partition: i32,
        batch: &BatchInfo,
        record: &RecordRef<'_>,
        payload: &Payload<'_>,
    ) {
        let row = self.rows;
        self.rows += 1;
        self.partition.push(partition);
        self.offset.push(record.offset);
        self.timestamp.push(record.timestamp);
        self.batch_position.push(batch.position as i64);
        self.producer_id.push(batch.producer_id);
        self.producer_epoch.push(batch.producer_epoch);
        self.is_transactional.push(batch.is_transactional);
        prefetch_end(&self.partition);
        prefetch_end(&self.offset);
        prefetch_end(&self.timestamp);
        prefetch_end(&self.batch_position);
        prefetch_end(&self.producer_id);
        prefetch_end(&self.producer_epoch);
        prefetch_end(&self.is_transactional);
        prefetch_end(&self.is_tombstone);
        let (key, value) = match payload {
            Payload::Control(control) => {
                self.is_tombstone.push(false);
                self.control.set(row, control.name());
                return;
            }
            Payload::Data { key, value } => (key, value.as_ref()),
        };
        self.is_tombstone.push(value.is_none());
        self.record_type.set(row, key.record_type());
        match key {
            KeyRef::OffsetCommit {
                group,
                topic,
                partition,
                ..
            } => {
                self.group.set(row, group);
                self.topic.set(row, topic);
                self.key_partition.set(row, *partition);
            }
            KeyRef::GroupMetadata { group } => self.group.set(row, group),
            KeyRef::ConsumerGroup(k) => {
                self.group.set(row, &k.group_id);
                if let Some(member_id) = &k.member_id {
                    self.member_id.set(row, member_id);
                }
                if let Some(regular_expression) = &k.regular_expression {
                    self.regular_expression.set(row, regular_expression);
                }
            }
            KeyRef::Opaque { data, .. } => self.raw_key.set(row, data),
        }
        let Some(value) = value else { return };
        if let Some(version) = value.version() {
            self.value_version.set(row, version);
        }
        match value {
            ValueRef::OffsetCommit(v) => {
                self.committed_offset.set(row, v.offset);
                self.leader_epoch.set(row, v.leader_epoch);
                self.metadata.set(row, v.metadata);
                self.commit_timestamp.set(row, v.commit_timestamp);
                self.expire_timestamp.set(row, v.expire_timestamp);
                if let Some(id) = v.topic_id {
                    self.topic_id.set(row, &uuid_string(id));
                }
            }
            ValueRef::GroupMetadata(g) => {
                self.protocol_type.set(row, g.protocol_type);
                self.generation.set(row, g.generation);
                if let Some(protocol) = g.protocol {
                    self.protocol.set(row, protocol);
                }
                if let Some(leader) = g.leader {
                    self.leader.set(row, leader);
                }
                self.current_state_timestamp
                    .set(row, g.current_state_timestamp);
                self.members.set(row, g);
            }
            ValueRef::ConsumerGroup(v) => {
                let epoch = ["epoch", "assignment_epoch", "member_epoch"]
                    .iter()
                    .find_map(|n| match datum_field(&v.fields, n) {
                        Some(Datum::Int(e)) => i32::try_from(*e).ok(),
                        _ => None,
                    });
                if let Some(epoch) = epoch {
                    self.epoch.set(row, epoch);
                }
                let assigned = datum_field(&v.fields, "topic_partitions")
                    .or_else(|| datum_field(&v.fields, "assigned_partitions"));
                if let Some(Datum::List(items)) = assigned {
                    self.topic_partitions.lists.pad(row);
                    for tp in items {
                        let topic = match datum_field(tp, "topic_id") {
                            Some(Datum::Uuid(u)) => uuid_string(u),
                            _ => String::new(),
                        };
                        let partitions = match datum_field(tp, "partitions") {
                            Some(Datum::List(ps)) => ps
                                .iter()
                                .filter_map(|p| {
                                    if let Datum::Int(v) = p {
                                        i32::try_from(*v).ok()
                                    } else {
                                        None
                                    }
                                })
                                .collect(),
                            _ => Vec::new(),
                        };
                        self.topic_partitions.push_topic(&topic, partitions);
                    }
                    self.topic_partitions.end_list();
                }
                let mut json = String::new();
                datum_json(&v.fields, &mut json);
                self.consumer_group_fields.set(row, &json);
            }
            ValueRef::Opaque { data, .. } => self.raw_value.set(row, data),
        }
    }

    /// Takes `other`'s rows after this one's.
    fn append(&mut self, mut other: Columns) {
        let (rows, other_rows) = (self.rows, other.rows);
        self.rows += other_rows;
        // Members are most of the bytes to copy: they go side by side with the rest.
        let other_members = std::mem::replace(&mut other.members, Members::new());
        let mut members = std::mem::replace(&mut self.members, Members::new());
        rayon::join(
            || members.append(rows, other_members, other_rows),
            || self.append_all_but_members(rows, other, other_rows),
        );
        self.members = members;
    }

    fn append_all_but_members(&mut self, rows: usize, other: Columns, other_rows: usize) {
        self.partition.extend_from_slice(&other.partition);
        self.offset.extend_from_slice(&other.offset);
        self.timestamp.extend_from_slice(&other.timestamp);
        self.batch_position.extend_from_slice(&other.batch_position);
        self.producer_id.extend_from_slice(&other.producer_id);
        self.producer_epoch.extend_from_slice(&other.producer_epoch);
        self.is_transactional
            .extend_from_slice(&other.is_transactional);
        self.is_tombstone.extend_from_slice(&other.is_tombstone);
        self.control.append(rows, other.control, other_rows);
        self.record_type.append(rows, other.record_type, other_rows);
        self.value_version
            .append(rows, other.value_version, other_rows);
        self.group.append(rows, other.group, other_rows);
        self.topic.append(rows, other.topic, other_rows);
        self.key_partition
            .append(rows, other.key_partition, other_rows);
        self.member_id.append(rows, other.member_id, other_rows);
        self.regular_expression
            .append(rows, other.regular_expression, other_rows);
        self.committed_offset
            .append(rows, other.committed_offset, other_rows);
        self.leader_epoch
            .append(rows, other.leader_epoch, other_rows);
        self.metadata.append(rows, other.metadata, other_rows);
        self.commit_timestamp
            .append(rows, other.commit_timestamp, other_rows);
        self.expire_timestamp
            .append(rows, other.expire_timestamp, other_rows);
        self.topic_id.append(rows, other.topic_id, other_rows);
        self.protocol_type
            .append(rows, other.protocol_type, other_rows);
        self.generation.append(rows, other.generation, other_rows);
        self.protocol.append(rows, other.protocol, other_rows);
        self.leader.append(rows, other.leader, other_rows);
        self.current_state_timestamp
            .append(rows, other.current_state_timestamp, other_rows);
        self.epoch.append(rows, other.epoch, other_rows);
        self.topic_partitions
            .append(rows, other.topic_partitions, other_rows);
        self.consumer_group_fields
            .append(rows, other.consumer_group_fields, other_rows);
        self.raw_key.append(rows, other.raw_key, other_rows);
        self.raw_value.append(rows, other.raw_value, other_rows);
    }

    /// The record batch of these columns; `parallel`: the members column (most of the bytes)
    /// is finished on a second thread beside the others.
    fn finish(mut self, parallel: bool) -> Result<RecordBatch, ArrowError> {
        let schema = schema();
        let rows = self.rows;
        // Enough for the widest column: int64 values of every row, or of every member.
        let zeros = Zeros::new(8 * (rows.max(self.members.member_id.len()) + 1));
        let members_type = schema.field_with_name("members")?.data_type().clone();
        let members = std::mem::replace(&mut self.members, Members::new());
        let finish_members = || members.finish(rows, &members_type, &zeros);
        let finish_others = || self.finish_all_but_members(&schema, &zeros);
        let (members, others) = if parallel {
            rayon::join(finish_members, finish_others)
        } else {
            (finish_members(), finish_others())
        };
        let mut columns = others?;
        columns.insert(schema.index_of("members")?, members?);
        RecordBatch::try_new(schema, columns)
    }

    /// Every column but `members` (left where it was, empty), in the schema's order.
    fn finish_all_but_members(
        self,
        schema: &Schema,
        zeros: &Zeros,
    ) -> Result<Vec<ArrayRef>, ArrowError> {
        let rows = self.rows;
        let topic_partitions_type = schema
            .field_with_name("topic_partitions")?
            .data_type()
            .clone();
        let dense_i64 = |v: Vec<i64>| -> ArrayRef {
            Arc::new(PrimitiveArray::<Int64Type>::new(
                ScalarBuffer::from(v),
                None,
            ))
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(PrimitiveArray::<Int32Type>::new(
                ScalarBuffer::from(self.partition),
                None,
            )),
            dense_i64(self.offset),
            dense_i64(self.timestamp),
            dense_i64(self.batch_position),
            dense_i64(self.producer_id),
            Arc::new(PrimitiveArray::<Int16Type>::new(
                ScalarBuffer::from(self.producer_epoch),
                None,
            )),
            Arc::new(BooleanArray::from(self.is_transactional)),
            Arc::new(BooleanArray::from(self.is_tombstone)),
            self.control.finish(rows, zeros)?,
            self.record_type.finish::<Int16Type>(rows, zeros),
            self.value_version.finish::<Int16Type>(rows, zeros),
            self.group.finish(rows, zeros)?,
            self.topic.finish(rows, zeros)?,
            self.key_partition.finish::<Int32Type>(rows, zeros),
            self.member_id.finish(rows, zeros)?,
            self.regular_expression.finish(rows, zeros)?,
            self.committed_offset.finish::<Int64Type>(rows, zeros),
            self.leader_epoch.finish::<Int32Type>(rows, zeros),
            self.metadata.finish(rows, zeros)?,
            self.commit_timestamp.finish::<Int64Type>(rows, zeros),
            self.expire_timestamp.finish::<Int64Type>(rows, zeros),
            self.topic_id.finish(rows, zeros)?,
            self.protocol_type.finish(rows, zeros)?,
            self.generation.finish::<Int32Type>(rows, zeros),
            self.protocol.finish(rows, zeros)?,
            self.leader.finish(rows, zeros)?,
            self.current_state_timestamp
                .finish::<Int64Type>(rows, zeros),
            self.epoch.finish::<Int32Type>(rows, zeros),
            self.topic_partitions
                .finish(rows, &topic_partitions_type, zeros)?,
            self.consumer_group_fields.finish(rows, zeros)?,
            self.raw_key.finish_binary(rows, zeros)?,
            self.raw_value.finish_binary(rows, zeros)?,
        ];
        Ok(columns)
    }
}

fn datum_json(d: &Datum, out: &mut String) {
    match d {
        Datum::Null => out.push_str("null"),
        Datum::Int(v) => out.push_str(&v.to_string()),
        Datum::Str(s) => json_string(s, out),
        Datum::Bytes(b) => json_string(&base64(b), out),
        Datum::Uuid(u) => json_string(&uuid_string(u), out),
        Datum::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                datum_json(item, out);
            }
            out.push(']');
        }
        Datum::Struct(fields) => {
            out.push('{');
            for (i, (name, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(name, out);
                out.push(':');
                datum_json(value, out);
            }
            out.push('}');
        }
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn datum_field<'a>(d: &'a Datum, name: &str) -> Option<&'a Datum> {
    match d {
        Datum::Struct(fields) => fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v),
        _ => None,
    }
}

impl<T> Reserve for Primitive<T> {
    fn reserve(&mut self, factor: f64) {
        Reserve::reserve(&mut self.values, factor);
    }
}

impl Reserve for Variable {
    fn reserve(&mut self, factor: f64) {
        Reserve::reserve(&mut self.offsets, factor);
        Reserve::reserve(&mut self.data, factor);
    }
}

impl Reserve for Utf8 {
    fn reserve(&mut self, factor: f64) {
        self.0.reserve(factor);
    }
}

impl Reserve for Lists {
    fn reserve(&mut self, factor: f64) {
        Reserve::reserve(&mut self.offsets, factor);
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

impl Reserve for Members {
    fn reserve(&mut self, factor: f64) {
        self.lists.reserve(factor);
        self.member_id.reserve(factor);
        self.group_instance_id.reserve(factor);
        self.client_id.reserve(factor);
        self.client_host.reserve(factor);
        Reserve::reserve(&mut self.rebalance_timeout, factor);
        Reserve::reserve(&mut self.session_timeout, factor);
        self.subscription.reserve(factor);
        self.assignment.reserve(factor);
        self.subscribed.reserve(factor);
        self.subscribed_topics.reserve(factor);
        self.assigned.reserve(factor);
    }
}

impl Reserve for Columns {
    fn reserve(&mut self, factor: f64) {
        Reserve::reserve(&mut self.partition, factor);
        Reserve::reserve(&mut self.offset, factor);
        Reserve::reserve(&mut self.timestamp, factor);
        Reserve::reserve(&mut self.batch_position, factor);
        Reserve::reserve(&mut self.producer_id, factor);
        Reserve::reserve(&mut self.producer_epoch, factor);
        Reserve::reserve(&mut self.is_transactional, factor);
        Reserve::reserve(&mut self.is_tombstone, factor);
        self.control.reserve(factor);
        self.record_type.reserve(factor);
        self.value_version.reserve(factor);
        self.group.reserve(factor);
        self.topic.reserve(factor);
        self.key_partition.reserve(factor);
        self.member_id.reserve(factor);
        self.regular_expression.reserve(factor);
        self.committed_offset.reserve(factor);
        self.leader_epoch.reserve(factor);
        self.metadata.reserve(factor);
        self.commit_timestamp.reserve(factor);
        self.expire_timestamp.reserve(factor);
        self.topic_id.reserve(factor);
        self.protocol_type.reserve(factor);
        self.generation.reserve(factor);
        self.protocol.reserve(factor);
        self.leader.reserve(factor);
        self.current_state_timestamp.reserve(factor);
        self.members.reserve(factor);
        self.epoch.reserve(factor);
        self.topic_partitions.reserve(factor);
        self.consumer_group_fields.reserve(factor);
        self.raw_key.reserve(factor);
        self.raw_value.reserve(factor);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::hex;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Int64Type};
    use arrow_array::Array;

    use crate::codec::batch::{write_batch, write_control_batch, BatchHeader, ControlMarker};
    use crate::codec::compression::Compression::{Gzip, Lz4, Snappy, Zstd};

    /// Key and value of reference vectors: a `consumer` group with one member (subscription
    /// and assignment decoded), an offset commit.
    fn vectors() -> [Vec<u8>; 4] {
        let key = hex("0002001b6b61666b6573632d646576636c75737465722d67726f75702d6964");
        let value = hex(
            "00030008636f6e73756d657200000007000572616e6765002c72646b61666b61\
             2d39663466633162302d316437642d343437312d393065382d65306636346633\
             6339643966000001857ee10d9500000001002c72646b61666b612d3966346663\
             3162302d316437642d343437312d393065382d653066363466336339643966ff\
             ff000772646b61666b61000b2f3137322e31382e302e31000493e00000afc800\
             000013000100000001000374303100000000000000000000001f000000000001\
             00037430310000000300000000000000010000000200000000",
        );
        let okey =
            hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000");
        let oval = hex("0003000000000000006affffffff00000000018579eff58c");
        [key, value, okey, oval]
    }

    /// `batches` batches cycling through what a log holds: group metadata with members whose
    /// consumer protocol decodes and members whose does not, offset commits, tombstones,
    /// opaque records, transaction markers; every third batch compressed, from batch
    /// `first_compressed` on.
    /// Every third batch compressed with `compression`, from the `first_compressed`th on.
    fn mixed_log(batches: usize, first_compressed: usize, compression: Compression) -> Vec<u8> {
        let [key, value, okey, oval] = vectors();
        let opaque_key = [0u8, 99, 1, 2];
        let mut bad_member = value.clone();
        // The value ends with the member's subscription (an int32 length, then 19 bytes:
        // version, topic count, ...) and assignment (length, 31 bytes); a topic count too
        // large for the subscription's bytes leaves its topics unread.
        let count = bad_member.len() - 58 + 4 + 2;
        bad_member[count..count + 4].copy_from_slice(&[0x7f; 4]);
        let mut log = Vec::new();
        let mut offset = 0;
        for n in 0..batches {
            let records: Vec<(Option<&[u8]>, Option<&[u8]>)> = match n % 5 {
                0 => vec![(Some(&key), Some(&value)), (Some(&okey), Some(&oval))],
                1 => vec![(Some(&okey), None), (Some(&key), Some(&bad_member))],
                2 => vec![
                    (Some(&opaque_key), Some(&[1, 2, 3])),
                    (Some(&okey), Some(&oval)),
                ],
                3 => vec![(Some(&okey), Some(&oval)); 3],
                _ => vec![],
            };
            let header = BatchHeader {
                compression: if n % 3 == first_compressed {
                    compression
                } else {
                    Compression::None
                },
                ..BatchHeader::plain(offset, 1_000 + n as i64)
            };
            let batch = if records.is_empty() {
                let marker = ControlMarker {
                    commit: true,
                    coordinator_epoch: 1,
                };
                write_control_batch(&header, marker)
            } else {
                write_batch(&header, &records)
            };
            offset += records.len().max(1) as i64;
            log.extend(batch.unwrap());
        }
        log
    }

    #[test]
    fn runs_decoded_side_by_side_give_the_rows_of_one_decode() {
        let log = mixed_log(200, 1, Zstd);
        let (serial, walk) = decode_arrow_in_runs(&log, 9, 4, 1, 1);
        assert!(walk.error.is_none());
        let serial = serial.unwrap();
        assert_eq!(serial.num_rows(), 40 * 10);
        let members = serial.column_by_name("members").unwrap().as_list::<i32>();
        let member = members.value(3);
        let member = member.as_struct();
        let subscribed = member.column_by_name("subscribed_topics").unwrap();
        assert!(
            subscribed.is_null(0),
            "the unreadable subscription is a null list"
        );
        let assigned = member.column_by_name("assigned_partitions").unwrap();
        assert!(assigned.is_valid(0), "its assignment still decodes");
        for threads in [2, 3, 7] {
            assert_eq!(split_at_batches(&log, threads, 1 << 10).len(), threads);
            let (runs, walk) = decode_arrow_in_runs(&log, 9, 4, threads, 1 << 10);
            assert!(walk.error.is_none());
            assert_eq!(walk.valid_bytes, log.len());
            assert_eq!(runs.unwrap(), serial, "{threads} threads");
        }
        // gzip and zstd runs take two threads each, one decompressing ahead; lz4 and snappy
        // runs one each.
        for compression in [Gzip, Zstd, Lz4, Snappy] {
            let log = mixed_log(200, 0, compression);
            let (serial, _) = decode_arrow_in_runs(&log, 9, 4, 1, 1);
            let serial = serial.unwrap();
            for threads in [2, 6] {
                let (runs, walk) = decode_arrow_in_runs(&log, 9, 4, threads, 1 << 10);
                assert!(walk.error.is_none());
                assert_eq!(runs.unwrap(), serial, "{compression:?}, {threads} threads");
            }
        }
    }

    #[test]
    fn columns_no_run_fills_are_null_and_share_one_buffer() {
        let [_, _, okey, oval] = vectors();
        let opaque: (Option<&[u8]>, Option<&[u8]>) = (Some(&[0, 99, 1, 2]), Some(&[3]));
        let mut log = Vec::new();
        for n in 0..60 {
            // Only the middle run of three holds an opaque record (raw_key, raw_value).
            let records = if n == 30 {
                vec![opaque]
            } else {
                vec![(Some(&okey[..]), Some(&oval[..])); 4]
            };
            log.extend(write_batch(&BatchHeader::plain(n * 4, 1), &records).unwrap());
        }
        let (serial, _) = decode_arrow_in_runs(&log, 0, 4, 1, 1);
        let serial = serial.unwrap();
        for threads in [2, 3, 5] {
            let (runs, walk) = decode_arrow_in_runs(&log, 0, 4, threads, 1 << 10);
            assert!(walk.error.is_none());
            assert_eq!(runs.unwrap(), serial, "{threads} threads");
        }
        let raw_key = serial.column_by_name("raw_key").unwrap();
        assert_eq!(raw_key.null_count(), serial.num_rows() - 1);
        let unused = [
            "control",
            "epoch",
            "topic_partitions",
            "members",
            "member_id",
        ];
        let buffer = |name: &str| {
            let data = serial.column_by_name(name).unwrap().to_data();
            assert_eq!(data.null_count(), serial.num_rows(), "{name}");
            data.buffers()[0].as_ptr()
        };
        assert!(unused.iter().all(|name| buffer(name) == buffer("control")));
    }

    #[test]
    fn runs_of_slow_inflating_batches_take_two_threads() {
        let min_run = 1 << 10;
        for (compression, pipelined) in [(Gzip, true), (Zstd, true), (Lz4, false), (Snappy, false)]
        {
            let log = mixed_log(200, 0, compression);
            let (runs, two_threads) = plan_runs(&log, 6, min_run);
            assert_eq!(two_threads, pipelined, "{compression:?}");
            assert_eq!(runs.len(), if pipelined { 3 } else { 6 }, "{compression:?}");
            // Too short for two runs: the one run pipelines whatever its compression.
            let (runs, two_threads) = plan_runs(&log, 6, log.len());
            assert_eq!((runs.len(), two_threads), (1, true), "{compression:?}");
            assert_eq!(plan_runs(&log, 1, min_run), (vec![0..log.len()], false));
        }
        // Uncompressed, or compressed only later: one thread a run.
        let log = mixed_log(200, 1, Gzip);
        assert_eq!(plan_runs(&log, 6, min_run).1, false);
        assert_eq!(plan_runs(&log, 6, log.len()).1, false);
    }

    /// A cut guessed inside a batch (at a whole batch held in a record's value, which passes
    /// for a batch start) costs only time: the rows, and where a corrupt log stops, are one
    /// decode's.
    #[test]
    fn a_guessed_cut_inside_a_batch_decodes_on_past_it() {
        use crate::codec::batch::batch_start_near;
        let [_, _, okey, oval] = vectors();
        let inner = write_batch(
            &BatchHeader::plain(0, 1),
            &[(Some(&okey[..]), Some(&oval[..]))],
        )
        .unwrap();
        let opaque_key: &[u8] = &[0, 99, 1, 2];
        let mut log = Vec::new();
        let (mut outer_at, mut inner_at, mut boundary) = (0, 0, 0);
        for n in 0..40 {
            let batch = if n == 20 {
                write_batch(
                    &BatchHeader::plain(n * 3, 1),
                    &[(Some(opaque_key), Some(&inner[..]))],
                )
                .unwrap()
            } else {
                write_batch(
                    &BatchHeader::plain(n * 3, 1),
                    &[(Some(&okey[..]), Some(&oval[..])); 3],
                )
                .unwrap()
            };
            if n == 20 {
                outer_at = log.len();
                let within = batch.windows(inner.len()).position(|w| w == &inner[..]);
                inner_at = outer_at + within.unwrap();
            }
            if n == 30 {
                boundary = log.len();
            }
            log.extend(batch);
        }
        assert_eq!(batch_start_near(&log, outer_at, 1 << 20), Some(outer_at));
        assert_eq!(
            batch_start_near(&log, outer_at + 1, 1 << 20),
            Some(inner_at)
        );
        assert_eq!(batch_start_near(&log, inner_at + 1, 10), None);
        let (serial, _) = decode_arrow_in_runs(&log, 7, 4, 1, 1);
        let serial = serial.unwrap();
        for cuts in [vec![inner_at], vec![boundary], vec![inner_at, boundary]] {
            let mut parts = Vec::new();
            let mut start = 0;
            for &cut in &cuts {
                parts.push(start..cut);
                start = cut;
            }
            parts.push(start..log.len());
            let (columns, walk) = decode_runs(&log, 7, 4, &parts, false, true);
            assert!(walk.error.is_none(), "{cuts:?}");
            assert_eq!(walk.valid_bytes, log.len());
            assert_eq!(columns.finish(true).unwrap(), serial, "{cuts:?}");
        }
        // Corrupt before the guessed cut, and after it: the walk stops where one decode's
        // does, and the whole decode gives its rows.
        for corrupt_at in [outer_at - 30, boundary + 40] {
            let mut data = log.clone();
            data[corrupt_at] ^= 0x40;
            let (one, one_walk) = decode_arrow_in_runs(&data, 7, 4, 1, 1);
            let parts = [0..inner_at, inner_at..data.len()];
            let (_, walk) = decode_runs(&data, 7, 4, &parts, false, true);
            assert!(one_walk.error.is_some());
            assert_eq!(walk.valid_bytes, one_walk.valid_bytes);
            assert_eq!(
                walk.error.map(|e| e.to_string()),
                one_walk.error.as_ref().map(|e| e.to_string())
            );
            let min_run = inner_at.min(data.len() - inner_at) / 2;
            let (runs, runs_walk) = decode_arrow_in_runs(&data, 7, 4, 2, min_run);
            assert_eq!(runs_walk.valid_bytes, one_walk.valid_bytes);
            assert_eq!(runs.unwrap(), one.unwrap());
        }
    }

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

    #[test]
    fn runs_stop_where_one_decode_stops() {
        let log = mixed_log(200, 1, Zstd);
        for corrupt_at in [log.len() / 10, log.len() / 2, log.len() - 30] {
            let mut data = log.clone();
            data[corrupt_at] ^= 0x40;
            let (serial, serial_walk) = decode_arrow_in_runs(&data, 9, 4, 1, 1);
            let (runs, walk) = decode_arrow_in_runs(&data, 9, 4, 4, 1 << 10);
            assert!(serial_walk.error.is_some());
            assert_eq!(walk.valid_bytes, serial_walk.valid_bytes);
            assert_eq!(
                walk.error.map(|e| e.to_string()),
                serial_walk.error.map(|e| e.to_string())
            );
            assert_eq!(runs.unwrap(), serial.unwrap(), "corrupt at {corrupt_at}");
        }
    }

    /// Every cut and every damaged byte of a member's subscription and assignment: nothing
    /// panics, a payload that does not decode leaves that member's list null (nothing of it
    /// half-written into the shared child columns), and one that does gives its topics.
    #[test]
    fn damaged_consumer_payloads_leave_their_lists_null() {
        use crate::codec::records::{
            encode_assignment, encode_subscription, ConsumerProtocolAssignment,
            ConsumerProtocolSubscription, MemberRef,
        };
        let subscription = encode_subscription(&ConsumerProtocolSubscription {
            version: 1,
            topics: vec!["orders".into(), "payments".into()],
            user_data: Some(vec![7; 3]),
            owned_partitions: vec![("orders".into(), vec![0, 2])],
            generation_id: -1,
            rack_id: None,
        })
        .unwrap();
        let assignment = encode_assignment(&ConsumerProtocolAssignment {
            version: 1,
            assigned_partitions: vec![("orders".into(), vec![0, 2]), ("payments".into(), vec![1])],
            user_data: Some(vec![9; 2]),
        })
        .unwrap();
        // Cuts of each payload, then each byte of each payload set to 0xff and to 0x7f.
        let mut payloads: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for n in 0..=subscription.len().max(assignment.len()) {
            let cut = |p: &[u8]| p[..n.min(p.len())].to_vec();
            payloads.push((cut(&subscription), cut(&assignment)));
        }
        for i in 0..subscription.len().max(assignment.len()) {
            for b in [0xff, 0x7f] {
                let mut damaged = (subscription.clone(), assignment.clone());
                for p in [&mut damaged.0, &mut damaged.1] {
                    if let Some(byte) = p.get_mut(i) {
                        *byte = b;
                    }
                }
                payloads.push(damaged);
            }
        }
        let group = GroupMetadataValueRef {
            unknown_tagged_fields: Default::default(),
            protocol_type: "consumer",
            generation: 1,
            protocol: Some("range"),
            leader: None,
            current_state_timestamp: -1,
            members: payloads
                .iter()
                .map(|(s, a)| MemberRef {
                    unknown_tagged_fields: Default::default(),
                    member_id: "m",
                    group_instance_id: None,
                    client_id: "c",
                    client_host: "/h",
                    rebalance_timeout: 1,
                    session_timeout: 1,
                    subscription: s,
                    assignment: a,
                })
                .collect(),
            version: 3,
        };
        let mut members = Members::new();
        members.set(0, &group);
        let data_type = schema()
            .field_with_name("members")
            .unwrap()
            .data_type()
            .clone();
        let column = members.finish(1, &data_type, &Zeros::new(0)).unwrap();
        let rows = column.as_list::<i32>().value(0);
        let rows = rows.as_struct();
        let subscribed = rows
            .column_by_name("subscribed_topics")
            .unwrap()
            .as_list::<i32>();
        let assigned = rows
            .column_by_name("assigned_partitions")
            .unwrap()
            .as_list::<i32>();
        let mut decoded = (0, 0);
        for (i, (s, a)) in payloads.iter().enumerate() {
            match crate::codec::records::decode_subscription(s, 0) {
                Ok(full) => {
                    let topics = subscribed.value(i);
                    let topics: Vec<&str> = topics.as_string::<i32>().iter().flatten().collect();
                    assert_eq!(topics, full.topics, "member {i}");
                    decoded.0 += 1;
                }
                // The cursor reads only up to the topics; past them a cut still gives them.
                Err(_) if subscribed.is_valid(i) => {
                    let topics = subscribed.value(i);
                    assert_eq!(topics.as_string::<i32>().value(0), "orders", "member {i}");
                }
                Err(_) => {}
            }
            match crate::codec::records::decode_assignment(a, 0) {
                Ok(full) => {
                    let list = assigned.value(i);
                    let list = list.as_struct();
                    let topics: Vec<&str> =
                        list.column(0).as_string::<i32>().iter().flatten().collect();
                    let expected: Vec<&str> = full
                        .assigned_partitions
                        .iter()
                        .map(|(t, _)| t.as_str())
                        .collect();
                    assert_eq!(topics, expected, "member {i}");
                    decoded.1 += 1;
                }
                Err(_) => assert!(assigned.is_null(i), "member {i}: {a:?}"),
            }
        }
        assert!(
            decoded.0 > 1 && decoded.1 > 1,
            "some payloads still decode: {decoded:?}"
        );
        assert!(subscribed.null_count() > 0 && assigned.null_count() > 0);
    }

    #[test]
    fn group_metadata_rows_carry_members_and_assignments() {
        let key = hex("0002001b6b61666b6573632d646576636c75737465722d67726f75702d6964");
        let value = hex(
            "00030008636f6e73756d657200000007000572616e6765002c72646b61666b61\
             2d39663466633162302d316437642d343437312d393065382d65306636346633\
             6339643966000001857ee10d9500000001002c72646b61666b612d3966346663\
             3162302d316437642d343437312d393065382d653066363466336339643966ff\
             ff000772646b61666b61000b2f3137322e31382e302e31000493e00000afc800\
             000013000100000001000374303100000000000000000000001f000000000001\
             00037430310000000300000000000000010000000200000000",
        );
        let okey =
            hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000");
        let oval = hex("0003000000000000006affffffff00000000018579eff58c");
        let batch = crate::codec::batch::write_batch(
            &crate::codec::batch::BatchHeader::plain(0, 5),
            &[
                (Some(&key), Some(&value)),
                (Some(&okey), Some(&oval)),
                (Some(&okey), None),
            ],
        )
        .unwrap();
        let (rb, walk) = decode_arrow(&batch, 0, 3, 1);
        assert!(walk.error.is_none());
        let rb = rb.unwrap();
        assert_eq!(rb.num_rows(), 3);
        assert_eq!(rb.schema(), schema());
        let committed = rb
            .column_by_name("committed_offset")
            .unwrap()
            .as_primitive::<Int64Type>();
        assert!(committed.is_null(0));
        assert_eq!(committed.value(1), 106);
        assert!(rb
            .column_by_name("is_tombstone")
            .unwrap()
            .as_boolean()
            .value(2));
        let members = rb.column_by_name("members").unwrap().as_list::<i32>();
        assert!(members.is_null(1));
        let first = members.value(0);
        let first = first.as_struct();
        assert_eq!(
            first
                .column_by_name("client_id")
                .unwrap()
                .as_string::<i32>()
                .value(0),
            "rdkafka"
        );
        let assigned = first
            .column_by_name("assigned_partitions")
            .unwrap()
            .as_list::<i32>()
            .value(0);
        let tp = assigned.as_struct();
        assert_eq!(tp.column(0).as_string::<i32>().value(0), "t01");
        let parts = tp.column(1).as_list::<i32>().value(0);
        assert_eq!(
            parts.as_primitive::<Int32Type>().values().to_vec(),
            vec![0, 1, 2]
        );
        let subscribed = first
            .column_by_name("subscribed_topics")
            .unwrap()
            .as_list::<i32>()
            .value(0);
        assert_eq!(subscribed.as_string::<i32>().value(0), "t01");
    }
}
