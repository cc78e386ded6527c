//! A batch a client produces, checked as a Kafka leader checks it before it touches the log
//! (Kafka's `ProduceRequest.validateRecords`, `UnifiedLog.analyzeAndValidateRecords` and
//! `LogValidator`), then given its offsets in place ([`assign_offsets`]).
//!
//! A refusal is an answer to the client, not a failure of the crate: [`ProduceError`] carries
//! the Kafka error code the partition's produce response sends, in the order Kafka checks:
//!
//! | check (Kafka's class)                                          | error                  |
//! |----------------------------------------------------------------|------------------------|
//! | no whole batch; magic 0 or 1 (`validateRecords`)               | INVALID_RECORD         |
//! | length below 14; magic outside 0..=2 (`ByteBufferLogInputStream`) | CORRUPT_MESSAGE     |
//! | zstd before Produce v7 (`validateRecords`)                     | UNSUPPORTED_COMPRESSION_TYPE |
//! | a second batch, or bytes after the batch (`validateRecords`)   | INVALID_RECORD         |
//! | base offset not 0 (`analyzeAndValidateRecords`)                | INVALID_RECORD         |
//! | batch larger than `max.message.bytes`                          | MESSAGE_TOO_LARGE      |
//! | shorter than the 61-byte header, or CRC-32C mismatch           | CORRUPT_MESSAGE        |
//! | compression id 5..=7 (`CompressionType.forId`)                 | UNKNOWN_SERVER_ERROR   |
//! | offset range, record count, control batch, sequence (`validateBatch`) | INVALID_RECORD  |
//! | records that do not decompress                                 | UNKNOWN_SERVER_ERROR   |
//! | records framed wrong (`DefaultRecord.readFrom`), offsets out of order | INVALID_RECORD  |
//! | a record without key on a compacted topic (`validateKey`)      | INVALID_RECORD + record errors |
//! | a timestamp out of range, LogAppendTime set by the producer (`validateTimestamp`) | INVALID_TIMESTAMP + record errors |
//!
//! Where Kafka answers UNKNOWN_SERVER_ERROR it does so because a plain `KafkaException` or
//! `IllegalArgumentException` escapes its validation; the answer is kept because clients
//! treat it as final, where CORRUPT_MESSAGE would have them retry the same bytes.
//!
//! Kafka's messages are kept, without the topic partition Kafka appends (the caller knows it).
//! Kafka's produce response carries a message only with record errors
//! (`RecordValidationException`); the caller chooses whether to send the others.

use crate::codec::batch::header::{
    crc32c, ATTRIBUTES_OFFSET, COMPRESSION_MASK, CONTROL_BIT, CRC_OFFSET, DELETE_HORIZON_BIT,
    MAGIC_OFFSET, MIN_BATCH_LENGTH, PARTITION_LEADER_EPOCH_OFFSET, RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_BIT, TRANSACTIONAL_BIT,
};
use crate::codec::batch::record::{RecordRef, Records};
use crate::codec::compression::{Compression, Decompressor};
use crate::codec::primitives::Reader;
use crate::codec::record_batch::{BatchInfo, BASE_OFFSET_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD};
use crate::error::Error;

/// Kafka's error codes (`Errors`) that a produce validation answers.
pub const UNKNOWN_SERVER_ERROR: i16 = -1;
pub const CORRUPT_MESSAGE: i16 = 2;
pub const MESSAGE_TOO_LARGE: i16 = 10;
pub const INVALID_TIMESTAMP: i16 = 32;
pub const UNSUPPORTED_COMPRESSION_TYPE: i16 = 76;
pub const INVALID_RECORD: i16 = 87;

const LAST_OFFSET_DELTA_OFFSET: usize = ATTRIBUTES_OFFSET + 2;
const BASE_TIMESTAMP_OFFSET: usize = LAST_OFFSET_DELTA_OFFSET + 4;
const MAX_TIMESTAMP_OFFSET: usize = BASE_TIMESTAMP_OFFSET + 8;
const PRODUCER_ID_OFFSET: usize = MAX_TIMESTAMP_OFFSET + 8;
const PRODUCER_EPOCH_OFFSET: usize = PRODUCER_ID_OFFSET + 8;
const BASE_SEQUENCE_OFFSET: usize = PRODUCER_EPOCH_OFFSET + 2;
const RECORDS_COUNT_OFFSET: usize = BASE_SEQUENCE_OFFSET + 4;

/// Kafka's `RecordBatch.NO_TIMESTAMP` and `NO_SEQUENCE`.
const NO_TIMESTAMP: i64 = -1;
const NO_SEQUENCE: i32 = -1;
/// Record errors a refusal's message lists (Kafka's `processRecordErrors`).
const RECORD_ERRORS_SHOWN: usize = 3;

/// The topic's configuration and the request's version, as far as validation needs them.
#[derive(Clone, Copy, Debug)]
pub struct ProduceLimits {
    /// `max.message.bytes`: the largest batch, its 12-byte offset and length prefix included.
    pub max_message_bytes: i64,
    /// A compacted topic (`cleanup.policy` has `compact`): every record needs a key.
    pub require_keys: bool,
    /// `message.timestamp.type` is LogAppendTime.
    pub log_append_time: bool,
    /// The broker's clock, for the timestamp range.
    pub now_ms: i64,
    /// `message.timestamp.before.max.ms` (Kafka 4: `i64::MAX`).
    pub before_max_ms: i64,
    /// `message.timestamp.after.max.ms` (Kafka 4: one hour).
    pub after_max_ms: i64,
    /// Produce v7 and later may carry zstd.
    pub allow_zstd: bool,
}

/// What a valid batch says, for the log and the producer state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProduceBatch {
    /// Bytes the batch takes, its 12-byte prefix included: all of the input.
    pub size: usize,
    pub record_count: i32,
    pub last_offset_delta: i32,
    /// The header's base timestamp.
    pub first_timestamp: i64,
    /// The largest record timestamp (-1 if none is above -1), as Kafka computes it for a
    /// CreateTime topic; `now_ms` for a LogAppendTime topic.
    pub max_timestamp: i64,
    /// The offset delta of the first record holding `max_timestamp` (-1 if none); for a
    /// LogAppendTime topic, where Kafka puts it: the last record of an uncompressed batch,
    /// the first of a compressed one.
    pub offset_of_max_timestamp_delta: i32,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    /// `base_sequence + last_offset_delta`, wrapping past `i32::MAX` to 0; -1 without one.
    pub last_sequence: i32,
    pub is_transactional: bool,
    pub compression: Compression,
}

/// A refusal: the Kafka error code for the partition's produce response, a message, and the
/// records at fault (index within the batch, message) when single records are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProduceError {
    pub code: i16,
    pub message: String,
    pub record_errors: Vec<(i32, String)>,
}

impl ProduceError {
    fn new(code: i16, message: impl Into<String>) -> Self {
        ProduceError {
            code,
            message: message.into(),
            record_errors: Vec::new(),
        }
    }
}

impl std::fmt::Display for ProduceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error {}: {}", self.code, self.message)
    }
}

type Checked<T> = Result<T, ProduceError>;

fn invalid(message: impl Into<String>) -> ProduceError {
    ProduceError::new(INVALID_RECORD, message)
}

fn corrupt(message: impl Into<String>) -> ProduceError {
    ProduceError::new(CORRUPT_MESSAGE, message)
}

fn i16_at(data: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([data[at], data[at + 1]])
}

fn i32_at(data: &[u8], at: usize) -> i32 {
    i32::from_be_bytes(data[at..at + 4].try_into().unwrap_or_default())
}

fn i64_at(data: &[u8], at: usize) -> i64 {
    i64::from_be_bytes(data[at..at + 8].try_into().unwrap_or_default())
}

/// Checks `data`, one partition's `records` of a Produce request (v3 and later), as a Kafka
/// leader does before appending it; see the module's table for the checks and their errors.
pub fn validate_produce(data: &[u8], limits: &ProduceLimits) -> Checked<ProduceBatch> {
    let batch = only_batch(data, limits.allow_zstd)?;
    let size = batch.len();
    let base_offset = i64_at(batch, BASE_OFFSET_OFFSET);
    if base_offset != 0 {
        return Err(invalid(format!(
            "The baseOffset of the record batch in the append should be 0, but it is {base_offset}"
        )));
    }
    if size as i64 > limits.max_message_bytes {
        return Err(ProduceError::new(
            MESSAGE_TOO_LARGE,
            format!(
                "The record batch size in the append is {size} bytes which exceeds the maximum \
                 configured value of {}.",
                limits.max_message_bytes
            ),
        ));
    }
    let stored_crc = u32::from_be_bytes(
        batch[CRC_OFFSET..ATTRIBUTES_OFFSET]
            .try_into()
            .unwrap_or_default(),
    );
    if size < RECORD_BATCH_OVERHEAD || crc32c(&batch[ATTRIBUTES_OFFSET..]) != stored_crc {
        return Err(corrupt(format!(
            "Record is corrupt (stored crc = {stored_crc})."
        )));
    }
    let attributes = i16_at(batch, ATTRIBUTES_OFFSET);
    let compression = compression_of(attributes)?;
    let header = check_header(batch, attributes, compression)?;
    let (max_timestamp, offset_of_max) = check_records(batch, &header, limits)?;
    let (max_timestamp, offset_of_max_timestamp_delta) = if limits.log_append_time {
        let at = if compression == Compression::None {
            header.last_offset_delta
        } else {
            0
        };
        (limits.now_ms, at)
    } else {
        (max_timestamp, offset_of_max)
    };
    Ok(ProduceBatch {
        size,
        record_count: header.count,
        last_offset_delta: header.last_offset_delta,
        first_timestamp: header.info.base_timestamp,
        max_timestamp,
        offset_of_max_timestamp_delta,
        producer_id: header.info.producer_id,
        producer_epoch: header.info.producer_epoch,
        base_sequence: header.info.base_sequence,
        last_sequence: last_sequence(header.info.base_sequence, header.last_offset_delta),
        is_transactional: header.info.is_transactional,
        compression,
    })
}

/// The whole batches at the start of `data` as Kafka's `ByteBufferLogInputStream.nextBatch`
/// cuts them: `Ok(None)` where no whole batch is left, an error for a length below the
/// smallest batch or an unknown magic.
fn next_batch(data: &[u8]) -> Checked<Option<&[u8]>> {
    if data.len() < LOG_OVERHEAD {
        return Ok(None);
    }
    let length = i32_at(data, LENGTH_OFFSET);
    if length < MIN_BATCH_LENGTH {
        return Err(corrupt(format!(
            "Record size {length} is less than the minimum record overhead ({MIN_BATCH_LENGTH})"
        )));
    }
    let Some(batch) = data.get(..LOG_OVERHEAD + length as usize) else {
        return Ok(None);
    };
    match batch[MAGIC_OFFSET] as i8 {
        0..=2 => Ok(Some(batch)),
        magic => Err(corrupt(format!("Invalid magic found in record: {magic}"))),
    }
}

/// The one magic-2 batch of a Produce request's partition (`ProduceRequest.validateRecords`).
/// Bytes after it that are no whole batch, which Kafka drops (`trimInvalidBytes`), are refused
/// here, so that the caller can append the input as it is.
fn only_batch(data: &[u8], allow_zstd: bool) -> Checked<&[u8]> {
    let Some(batch) = next_batch(data)? else {
        return Err(invalid(
            "Produce requests must have at least one record batch per partition",
        ));
    };
    if batch[MAGIC_OFFSET] != 2 {
        return Err(invalid(
            "Produce requests are only allowed to contain record batches with magic version 2",
        ));
    }
    if !allow_zstd {
        // Kafka reads the attributes of a batch too short to hold them and fails; this answers
        // as for any batch shorter than its header.
        let Some(attributes) = batch.get(ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2) else {
            return Err(corrupt(format!(
                "Record batch of {} bytes is shorter than its header",
                batch.len()
            )));
        };
        if compression_of(i16::from_be_bytes([attributes[0], attributes[1]]))? == Compression::Zstd
        {
            return Err(ProduceError::new(
                UNSUPPORTED_COMPRESSION_TYPE,
                "Produce requests with version below 7 are not allowed to use ZStandard \
                 compression",
            ));
        }
    }
    let rest = &data[batch.len()..];
    if next_batch(rest)?.is_some() {
        return Err(invalid(
            "Produce requests are only allowed to contain exactly one record batch per partition",
        ));
    }
    if !rest.is_empty() {
        return Err(invalid(format!(
            "{} bytes follow the record batch",
            rest.len()
        )));
    }
    Ok(batch)
}

/// The batch's codec (`CompressionType.forId`, which throws on ids 5 to 7).
fn compression_of(attributes: i16) -> Checked<Compression> {
    let id = (attributes & COMPRESSION_MASK) as u8;
    Compression::from_id(id).ok_or_else(|| {
        ProduceError::new(
            UNKNOWN_SERVER_ERROR,
            format!("Unknown compression type id: {id}"),
        )
    })
}

/// The header as the record checks need it: `info` for the record reader, and the count and
/// last offset delta as the batch says them.
struct Header {
    info: BatchInfo,
    count: i32,
    last_offset_delta: i32,
}

/// Kafka's `LogValidator.validateBatch` for a client's magic-2 batch.
fn check_header(batch: &[u8], attributes: i16, compression: Compression) -> Checked<Header> {
    let last_offset_delta = i32_at(batch, LAST_OFFSET_DELTA_OFFSET);
    let count = i32_at(batch, RECORDS_COUNT_OFFSET);
    let count_from_offsets = i64::from(last_offset_delta) + 1;
    if count_from_offsets <= 0 {
        return Err(invalid(format!(
            "Batch has an invalid offset range: [0, {last_offset_delta}]"
        )));
    }
    if count <= 0 {
        return Err(invalid(format!(
            "Invalid reported count for record batch: {count}"
        )));
    }
    if count_from_offsets != i64::from(count) {
        return Err(invalid(format!(
            "Inconsistent batch offset range [0, {last_offset_delta}] and count of records {count}"
        )));
    }
    if attributes & CONTROL_BIT != 0 {
        return Err(invalid("Clients are not allowed to write control records"));
    }
    let producer_id = i64_at(batch, PRODUCER_ID_OFFSET);
    let base_sequence = i32_at(batch, BASE_SEQUENCE_OFFSET);
    if producer_id >= 0 && base_sequence < 0 {
        return Err(invalid(format!(
            "Invalid sequence number {base_sequence} in record batch with producerId {producer_id}"
        )));
    }
    let info = BatchInfo {
        position: 0,
        size: batch.len(),
        base_offset: 0,
        last_offset: i64::from(last_offset_delta),
        partition_leader_epoch: i32_at(batch, PARTITION_LEADER_EPOCH_OFFSET),
        magic: 2,
        crc: 0,
        compression,
        log_append_time: attributes & TIMESTAMP_TYPE_BIT != 0,
        is_transactional: attributes & TRANSACTIONAL_BIT != 0,
        is_control: false,
        has_delete_horizon: attributes & DELETE_HORIZON_BIT != 0,
        base_timestamp: i64_at(batch, BASE_TIMESTAMP_OFFSET),
        max_timestamp: i64_at(batch, MAX_TIMESTAMP_OFFSET),
        producer_id,
        producer_epoch: i16_at(batch, PRODUCER_EPOCH_OFFSET),
        base_sequence,
        record_count: count as usize,
    };
    Ok(Header {
        info,
        count,
        last_offset_delta,
    })
}

/// Decompresses and reads every record (`LogValidator.validateRecord` on each), and returns
/// the largest timestamp above -1 with its record's offset delta, or (-1, -1).
fn check_records(batch: &[u8], header: &Header, limits: &ProduceLimits) -> Checked<(i64, i32)> {
    let stream = &batch[RECORD_BATCH_OVERHEAD..];
    let mut decompressed = Vec::new();
    let (records, part) = if header.info.compression == Compression::None {
        let records = Reader::new(stream, RECORD_BATCH_OVERHEAD);
        (Records::v2(&header.info, records, None), "the batch")
    } else {
        Decompressor::default()
            .decompress_into(header.info.compression, stream, 0, &mut decompressed)
            .map_err(|e| {
                ProduceError::new(
                    UNKNOWN_SERVER_ERROR,
                    format!("Failed to decompress record stream: {}", reason_of(e)),
                )
            })?;
        let records = Reader::new(&decompressed, 0);
        (
            Records::v2(&header.info, records, None),
            "the decompressed records",
        )
    };
    let mut max_timestamp = NO_TIMESTAMP;
    let mut offset_of_max = -1;
    let mut errors = Vec::new();
    let mut any_timestamp_error = false;
    for (index, record) in (0i32..).zip(records) {
        let record = record.map_err(|e| {
            invalid(format!(
                "Found invalid record structure: {}",
                e.within(part, 0)
            ))
        })?;
        // Kafka rewrites a compressed batch whose offsets are not 0, 1, 2...; this assigns
        // offsets in place only, so it refuses such a batch.
        if record.offset != i64::from(index) {
            return Err(invalid(format!(
                "Record {index} of the batch has offset delta {}",
                record.offset
            )));
        }
        if let Some((timestamp_error, message)) = record_error(&record, &header.info, limits) {
            any_timestamp_error |= timestamp_error;
            errors.push((index, message));
        }
        if record.timestamp > max_timestamp {
            max_timestamp = record.timestamp;
            offset_of_max = index;
        }
    }
    if errors.is_empty() {
        Ok((max_timestamp, offset_of_max))
    } else {
        Err(record_errors(errors, any_timestamp_error))
    }
}

/// What a decompression error says, without its position (the stream's start).
fn reason_of(error: Error) -> String {
    match error {
        Error::Corrupt { reason, .. } => reason,
        other => other.to_string(),
    }
}

/// Kafka's `validateKey`, then `validateTimestamp`: (whether it is a timestamp error, message).
fn record_error(
    record: &RecordRef<'_>,
    batch: &BatchInfo,
    limits: &ProduceLimits,
) -> Option<(bool, String)> {
    if limits.require_keys && record.key.is_none() {
        return Some((
            false,
            "Compacted topic cannot accept message without key".into(),
        ));
    }
    let timestamp = record.timestamp;
    if !limits.log_append_time && timestamp != NO_TIMESTAMP {
        let diff = limits.now_ms.wrapping_sub(timestamp);
        if diff > limits.before_max_ms || diff.wrapping_neg() > limits.after_max_ms {
            return Some((
                true,
                format!(
                    "Timestamp {timestamp} of message with offset {} is out of range. The \
                     timestamp should be within [{}, {}]",
                    record.offset,
                    limits.now_ms.wrapping_sub(limits.before_max_ms),
                    limits.now_ms.wrapping_add(limits.after_max_ms)
                ),
            ));
        }
    } else if batch.log_append_time {
        return Some((
            true,
            format!(
                "Invalid timestamp type in message DefaultRecord(offset={}, timestamp={timestamp}, \
                 key={} bytes, value={} bytes). Producer should not set timestamp type to \
                 LogAppendTime.",
                record.offset,
                record.key.map_or(0, <[u8]>::len),
                record.value.map_or(0, <[u8]>::len)
            ),
        ));
    }
    None
}

/// The refusal for records at fault (Kafka's `processRecordErrors`).
fn record_errors(errors: Vec<(i32, String)>, any_timestamp_error: bool) -> ProduceError {
    let (code, message) = if any_timestamp_error {
        (
            INVALID_TIMESTAMP,
            "One or more records have been rejected due to invalid timestamp".to_owned(),
        )
    } else {
        let shown: Vec<String> = errors
            .iter()
            .take(RECORD_ERRORS_SHOWN)
            .map(|(index, message)| format!("RecordError(batchIndex={index}, message='{message}')"))
            .collect();
        (
            INVALID_RECORD,
            format!(
                "One or more records have been rejected due to {} record errors in total, and \
                 only showing the first three errors at most: [{}]",
                errors.len(),
                shown.join(", ")
            ),
        )
    };
    ProduceError {
        code,
        message,
        record_errors: errors,
    }
}

/// Kafka's `DefaultRecordBatch.lastSequence`: `incrementSequence(base, lastOffsetDelta)`,
/// which wraps past `i32::MAX` to 0.
fn last_sequence(base_sequence: i32, last_offset_delta: i32) -> i32 {
    if base_sequence == NO_SEQUENCE {
        return NO_SEQUENCE;
    }
    if base_sequence > i32::MAX.wrapping_sub(last_offset_delta) {
        return last_offset_delta
            .wrapping_sub(i32::MAX.wrapping_sub(base_sequence))
            .wrapping_sub(1);
    }
    base_sequence.wrapping_add(last_offset_delta)
}

/// Gives a batch that [`validate_produce`] accepted its place in the log, in place: its base
/// offset and partition leader epoch (neither covered by the CRC). With `log_append_time_ms`
/// (a LogAppendTime topic), also what Kafka's `setMaxTimestamp(LOG_APPEND_TIME, now)` writes:
/// the timestamp type and the max timestamp, the CRC computed again.
///
/// A batch too short for a header is left as it is.
pub fn assign_offsets(
    batch: &mut [u8],
    base_offset: i64,
    partition_leader_epoch: i32,
    log_append_time_ms: Option<i64>,
) {
    if batch.len() < RECORD_BATCH_OVERHEAD {
        return;
    }
    batch[BASE_OFFSET_OFFSET..LENGTH_OFFSET].copy_from_slice(&base_offset.to_be_bytes());
    batch[PARTITION_LEADER_EPOCH_OFFSET..MAGIC_OFFSET]
        .copy_from_slice(&partition_leader_epoch.to_be_bytes());
    let Some(now) = log_append_time_ms else {
        return;
    };
    let attributes = i16_at(batch, ATTRIBUTES_OFFSET);
    if attributes & TIMESTAMP_TYPE_BIT != 0 && i64_at(batch, MAX_TIMESTAMP_OFFSET) == now {
        return;
    }
    // Kafka's `computeAttributes`: the bits it knows, in the low byte.
    let kept = COMPRESSION_MASK | TRANSACTIONAL_BIT | CONTROL_BIT | DELETE_HORIZON_BIT;
    let attributes = (attributes & kept) | TIMESTAMP_TYPE_BIT;
    batch[ATTRIBUTES_OFFSET..LAST_OFFSET_DELTA_OFFSET].copy_from_slice(&attributes.to_be_bytes());
    batch[MAX_TIMESTAMP_OFFSET..PRODUCER_ID_OFFSET].copy_from_slice(&now.to_be_bytes());
    let crc = crc32c(&batch[ATTRIBUTES_OFFSET..]);
    batch[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
}

#[cfg(test)]
mod tests;
