//! A decoded `__consumer_offsets` log as one Arrow record batch: one row per record, with no
//! per-record Python object, decoded straight from the log buffer into the columns (keys and
//! values are borrowed, never copied twice). The schema ([`schema()`]) is the one documented in
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
//!
//! Where each part lives:
//! - `schema`: every column's name and type.
//! - `columns`: every column, a row pushed per record (the per-record path), joined run to
//!   run and finished; built from the column kinds `fixed` (integers), `variable` (utf8,
//!   binary), `lists` (lists, topic partitions) and `members`, with `validity` and what every
//!   column shares (`column`); `datum` reads a consumer-group record's decoded fields.
//! - `decode`: the decode loop over one run of the input.
//! - `runs`: where the input is cut into runs decoded side by side, and their joining.

mod column;
mod columns;
mod datum;
mod decode;
mod fixed;
mod lists;
mod members;
mod runs;
pub mod schema;
mod validity;
mod variable;

#[cfg(test)]
mod tests;

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;

use crate::codec::arrow::runs::decode_columns;
use crate::codec::batch::Walk;

pub use runs::MIN_RUN_BYTES;
pub use schema::schema;

/// Decodes every record of a log buffer (whose first byte is at absolute `position`) into one
/// record batch of [`schema()`]. Like [`crate::codec::log::decode_log`] it stops at the first
/// corrupt batch or record; the record batch then holds the records of the batches before it.
///
/// `threads` bounds the threads it uses. From twice [`MIN_RUN_BYTES`] of input on, runs of
/// whole batches are decoded side by side, and the first run's columns then take the others'
/// rows; a run of gzip or zstd batches takes two threads, one decompressing ahead of the one
/// that parses (see [`LogReader::chunks`](crate::codec::batch::LogReader::chunks)).
pub fn decode_arrow(
    data: &[u8],
    position: usize,
    partition: i32,
    threads: usize,
) -> (Result<RecordBatch, ArrowError>, Walk) {
    decode_arrow_in_runs(data, position, partition, threads, MIN_RUN_BYTES)
}

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
