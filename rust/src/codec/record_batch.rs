//! What batches of every magic share (Kafka's `RecordBatch` and `Record`): the offset and
//! length that every batch starts with, what a batch's header says, its records copied out,
//! and how an error inside decompressed records is reported. Magic 2 is read in
//! [`super::batch`], magic 0 and 1 in [`super::legacy`].

use crate::codec::compression::Compression;
use crate::error::Error;

// Every batch, whatever its magic, starts with its base offset (int64) and the length (int32)
// of what follows: Kafka's `Records.OFFSET_OFFSET`, `SIZE_OFFSET` and `LOG_OVERHEAD`.
pub const BASE_OFFSET_OFFSET: usize = 0;
pub const LENGTH_OFFSET: usize = BASE_OFFSET_OFFSET + 8;
pub const LOG_OVERHEAD: usize = LENGTH_OFFSET + 4;

/// One record of a batch, with absolute offset and timestamp.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// What a batch's header says: everything about it but its records. For legacy (magic 0/1)
/// input, the v2-only fields are -1 / false.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchInfo {
    /// Absolute byte position of the batch in the input.
    pub position: usize,
    /// Bytes the batch takes, the 12-byte offset and length prefix included.
    pub size: usize,
    pub base_offset: i64,
    pub last_offset: i64,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub compression: Compression,
    pub log_append_time: bool,
    pub is_transactional: bool,
    pub is_control: bool,
    pub has_delete_horizon: bool,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub record_count: usize,
}

/// A parsed batch with its records copied out; its header fields read through to `info`
/// (`batch.base_offset`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    pub info: BatchInfo,
    pub records: Vec<Record>,
}

impl std::ops::Deref for Batch {
    type Target = BatchInfo;

    fn deref(&self) -> &BatchInfo {
        &self.info
    }
}

/// An error met inside decompressed data (a v2 batch's records, a legacy wrapper's messages),
/// whose reader counts positions on from the compressed stream's start, `stream_start`: a
/// position past it is no byte of the input. The error is reported at the stream's start, and
/// its reason says where in the decompressed data it was met.
#[cold]
pub(crate) fn in_decompressed(error: Error, stream_start: usize) -> Error {
    Error::Corrupt {
        position: stream_start,
        reason: error.within("the decompressed data", stream_start),
    }
}
