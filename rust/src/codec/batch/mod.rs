//! Record batches, magic 2 (Kafka's `DefaultRecordBatch`), and reading a log of batches of any
//! magic.
//!
//! ```text
//! baseOffset:           int64   0
//! batchLength:          int32   8    bytes after this field (the batch is batchLength + 12)
//! partitionLeaderEpoch: int32  12    not covered by the CRC
//! magic:                int8   16    2
//! crc:                  uint32 17    CRC-32C of bytes [21, end)
//! attributes:           int16  21
//! lastOffsetDelta:      int32  23
//! baseTimestamp:        int64  27
//! maxTimestamp:         int64  35
//! producerId:           int64  43
//! producerEpoch:        int16  51
//! baseSequence:         int32  53
//! recordsCount:         int32  57
//! records:              ...    61    compressed as one stream when attributes say so
//!
//! attributes: | 15..7 unused | 6 delete horizon | 5 control | 4 transactional |
//!             | 3 timestamp type (1 = LogAppendTime) | 2..0 compression |
//!
//! record: length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
//!         key varint-length bytes (-1 null), value varint-length bytes (-1 null),
//!         headers: count varint, then (key varint-length UTF-8, value varint-length bytes)
//! ```
//!
//! Segment files and fetch responses are plain concatenations of batches; every magic starts
//! with the same 17 bytes (offset, length, leader epoch, magic), so a reader peeks the magic.
//!
//! Where each part lives:
//! - `header`: where the header's fields lie, the CRC, checking one batch.
//! - `record`: the records of a batch, parsed as they are iterated.
//! - `reader`: a log read chunk by chunk on one thread ([`LogReader`]).
//! - `pipeline`: a long log read on two threads, one decompressing ahead ([`Pipeline`]).
//! - `walk`: a whole log read at once.
//! - `frames`: a log cut by its length prefixes alone.
//! - `write` and `control`: writing batches, and transaction markers.
//! - `produce`: a batch a client produces, checked as a Kafka leader checks it, and given its
//!   offsets in place.

mod control;
mod frames;
mod header;
mod pipeline;
pub mod produce;
mod reader;
mod record;
mod walk;
mod write;

#[cfg(test)]
mod tests;

pub use control::{control_marker, control_record_type, write_control_batch, ControlMarker};
pub use frames::{
    batch_start_near, checksum_batches, decompress_batches, first_compression, frames,
    split_at_batches, window_of_batches,
};
pub use header::{
    crc32c, ATTRIBUTES_OFFSET, CRC_OFFSET, MAGIC_OFFSET, PARTITION_LEADER_EPOCH_OFFSET,
    RECORDS_COUNT_OFFSET, RECORD_BATCH_OVERHEAD,
};
pub use pipeline::{Pipeline, PIPELINE_BYTES};
pub use produce::{assign_offsets, validate_produce, ProduceBatch, ProduceError, ProduceLimits};
pub use reader::{Chunk, LogReader, ReaderState, Walk, CHUNK_BYTES};
pub use record::{RecordRef, Records};
pub use walk::{next_valid_batch, read_batches, valid_prefix_length, Parsed};
pub use write::{write_batch, write_records, BatchHeader, RecordToWrite};

pub use crate::codec::record_batch::{
    Batch, BatchInfo, Record, BASE_OFFSET_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD,
};
