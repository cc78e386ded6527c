//! Record batches, magic 2 (Kafka's `DefaultRecordBatch`).
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

use std::borrow::Cow;
use std::ops::Range;
use std::sync::mpsc;

use crate::codec::compression::{Compression, Decompressor};
use crate::codec::primitives::{Reader, Writer};
use crate::codec::record_batch::in_decompressed;
pub use crate::codec::record_batch::{
    Batch, BatchInfo, Record, BASE_OFFSET_OFFSET, LENGTH_OFFSET, LOG_OVERHEAD,
};
use crate::error::{Error, Result};

pub const PARTITION_LEADER_EPOCH_OFFSET: usize = LOG_OVERHEAD;
pub const MAGIC_OFFSET: usize = PARTITION_LEADER_EPOCH_OFFSET + 4;
pub const CRC_OFFSET: usize = MAGIC_OFFSET + 1;
pub const ATTRIBUTES_OFFSET: usize = CRC_OFFSET + 4;
pub const RECORDS_COUNT_OFFSET: usize = ATTRIBUTES_OFFSET + 2 + 4 + 8 + 8 + 8 + 2 + 4;
pub const RECORD_BATCH_OVERHEAD: usize = RECORDS_COUNT_OFFSET + 4;
/// The smallest batchLength of any magic (a magic-0 message with empty key and value).
const MIN_BATCH_LENGTH: i32 = 14;

const COMPRESSION_MASK: i16 = 0x07;
const TIMESTAMP_TYPE_BIT: i16 = 0x08;
const TRANSACTIONAL_BIT: i16 = 0x10;
const CONTROL_BIT: i16 = 0x20;
const DELETE_HORIZON_BIT: i16 = 0x40;

/// The CRC-32C (Castagnoli) of `data`, as a magic-2 batch stores it. `crc-fast` picks the
/// fastest kernel the CPU has at run time: on x86-64 with AVX-512 and VPCLMULQDQ it folds 64
/// bytes at a time, about twice the speed of the SSE 4.2 `crc32` instruction's three streams
/// (the `crc32c` crate's), which made checking a 100 MB segment's batches 6 ms of a
/// one-thread decode's 80.
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, data) as u32
}

/// A record borrowed from the log buffer (or from the decompressed records of its batch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRef<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// The headers as they lie in the record (already checked): see [`RecordRef::headers`].
    headers: &'a [u8],
    header_count: usize,
    headers_position: usize,
}

impl<'a> RecordRef<'a> {
    /// The record's headers, (name, value). A name that is not UTF-8 reads as Kafka reads it
    /// (`Utils.utf8`): invalid sequences become U+FFFD.
    pub fn headers(&self) -> Result<Vec<(Cow<'a, str>, Option<&'a [u8]>)>> {
        let mut out = Vec::with_capacity(self.header_count);
        read_headers(
            &mut Reader::new(self.headers, self.headers_position),
            self.header_count,
            |name, value| out.push((String::from_utf8_lossy(name), value)),
        )?;
        Ok(out)
    }

    pub fn to_owned(&self) -> Result<Record> {
        Ok(Record {
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self
                .headers()?
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.map(<[u8]>::to_vec)))
                .collect(),
        })
    }
}

/// How a log buffer ended: all of it parsed, or a corrupt or truncated batch at a position.
#[derive(Debug)]
pub struct Parsed {
    pub batches: Vec<Batch>,
    /// Bytes of whole, valid batches from the start of the input.
    pub valid_bytes: usize,
    /// What stopped the parse before the end of the input, if anything.
    pub error: Option<Error>,
}

/// Where a walk over a log buffer ended.
#[derive(Debug)]
pub struct Walk {
    /// Bytes of whole batches, from the start of the input, that were valid and processed.
    pub valid_bytes: usize,
    /// What stopped the walk before the end of the input, if anything.
    pub error: Option<Error>,
}

/// Parses every batch of `data`, whose first byte is at absolute `position`, copying records
/// out. Stops at the first corrupt or truncated batch and reports it in [`Parsed::error`].
pub fn read_batches(data: &[u8], position: usize) -> Parsed {
    let mut batches = Vec::new();
    let walk = LogReader::new(data, position).walk(CHUNK_BYTES, |info, records| {
        let records = records
            .map(|r| r.and_then(|r| r.to_owned()))
            .collect::<Result<Vec<_>>>()?;
        batches.push(Batch {
            info: info.clone(),
            records,
        });
        Ok(())
    });
    Parsed {
        batches,
        valid_bytes: walk.valid_bytes,
        error: walk.error,
    }
}

/// The length of the window of whole batches at the start of `data` that first reaches
/// `bytes`, by the length prefixes alone; all of `data` where they stop making sense before
/// that, so that a walk of the window stops where a walk of the whole input would.
pub fn window_of_batches(data: &[u8], bytes: usize) -> usize {
    let mut end = 0;
    for frame in frames(data) {
        end += frame.len();
        if end >= bytes {
            return end;
        }
    }
    data.len()
}

/// How many bytes at the start of `data` are whole, valid batches (records framed correctly).
pub fn valid_prefix_length(data: &[u8]) -> usize {
    LogReader::new(data, 0)
        .walk(CHUNK_BYTES, |_, mut records| {
            records.try_for_each(|r| r.map(drop))
        })
        .valid_bytes
}

/// The first position after `from` where a whole, valid batch starts (its header sane, its
/// CRC and its records checked), or `data.len()` if none does: where a reader that skips a
/// damaged region takes up again. Only batches of magic 2 count, unless `legacy` (a log of
/// message sets), when messages of magic 0 and 1 do too.
pub fn next_valid_batch(data: &[u8], from: usize, legacy: bool) -> usize {
    let magic_counts = |magic: &u8| *magic == 2 || (legacy && *magic < 2);
    (from.saturating_add(1)..data.len())
        .filter(|&at| data.get(at + MAGIC_OFFSET).is_some_and(magic_counts))
        .find(|&at| {
            frames(&data[at..])
                .next()
                .is_some_and(|batch| valid_prefix_length(batch) == batch.len())
        })
        .unwrap_or(data.len())
}

/// The batches of `data` as the length prefixes cut them, nothing checked; stops where a
/// prefix is short or runs past the end.
pub(crate) fn frames(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let length = i32::from_be_bytes(rest.get(LENGTH_OFFSET..LOG_OVERHEAD)?.try_into().ok()?);
        let size = LOG_OVERHEAD
            + usize::try_from(length)
                .ok()
                .filter(|&n| n >= MIN_BATCH_LENGTH as usize)?;
        let batch = rest.get(..size)?;
        rest = &rest[size..];
        Some(batch)
    })
}

/// How the first batch of `data` compresses its records, from its attributes alone; `None`
/// when they do not say.
pub fn first_compression(data: &[u8]) -> Option<Compression> {
    // Legacy messages: crc, magic, then one attributes byte; magic 2: an int16 at 21.
    let attributes = match data.get(MAGIC_OFFSET) {
        Some(0 | 1) => data.get(MAGIC_OFFSET + 1),
        Some(2) => data.get(ATTRIBUTES_OFFSET + 1),
        _ => None,
    };
    Compression::from_id((i16::from(*attributes?) & COMPRESSION_MASK) as u8)
}

/// Cuts `data` into at most `parts` runs of whole batches of about equal size, none shorter
/// than `min_bytes`, by the length prefixes alone: each run's own walk checks its batches.
/// Where the prefixes stop making sense the last run takes the rest, so that a walk of it
/// stops where a walk of the whole input would.
pub fn split_at_batches(data: &[u8], parts: usize, min_bytes: usize) -> Vec<Range<usize>> {
    let parts = parts.min(data.len() / min_bytes.max(1)).max(1);
    let share = data.len() / parts;
    let mut cuts = vec![0];
    let mut at = 0;
    for frame in frames(data) {
        if cuts.len() == parts {
            break;
        }
        at += frame.len();
        if at >= cuts.len() * share && data.len() - at >= min_bytes {
            cuts.push(at);
        }
    }
    cuts.push(data.len());
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// A position in `from..from + window` where a magic-2 batch whose CRC matches starts, judged
/// by the bytes there alone (no walk of the batches before it, which on a large buffer waits
/// on memory at every length prefix); `None` when none is found after a few candidates.
/// Such a position need not be a batch boundary of the log (a record may hold a whole batch
/// in its value): a caller cutting runs there must check that the run before it ends on it.
pub fn batch_start_near(data: &[u8], from: usize, window: usize) -> Option<usize> {
    /// Candidates whose CRC is computed before giving up, and the largest batch checked.
    const CANDIDATES: usize = 32;
    const MAX_BATCH: usize = 1 << 20;
    let end = from.saturating_add(window).min(data.len());
    let mut candidates = 0;
    for at in from..end {
        if data.get(at + MAGIC_OFFSET) != Some(&2) {
            continue;
        }
        let Some(batch) = frames(&data[at..]).next() else {
            continue;
        };
        if batch.len() < RECORD_BATCH_OVERHEAD || batch.len() > MAX_BATCH {
            continue;
        }
        candidates += 1;
        if candidates > CANDIDATES {
            return None;
        }
        if crc32c(&batch[ATTRIBUTES_OFFSET..]).to_be_bytes() == batch[CRC_OFFSET..ATTRIBUTES_OFFSET]
        {
            return Some(at);
        }
    }
    None
}

/// A benchmark ceiling: the CRC-32C of every batch (bytes 21 to its end, as a magic-2 reader
/// checks it) and nothing else. Returns how many batches match their stored CRC.
pub fn checksum_batches(data: &[u8]) -> usize {
    frames(data)
        .filter(|batch| {
            batch.len() > ATTRIBUTES_OFFSET
                && crc32c(&batch[ATTRIBUTES_OFFSET..]).to_be_bytes()
                    == batch[CRC_OFFSET..ATTRIBUTES_OFFSET]
        })
        .count()
}

/// A benchmark ceiling: decompresses the records of every compressed magic-2 batch into one
/// reused buffer, parsing nothing. Returns the number of bytes decompressed.
pub fn decompress_batches(data: &[u8]) -> Result<usize> {
    let mut decompressor = Decompressor::default();
    let mut out = Vec::new();
    let mut total = 0;
    let mut position = 0;
    for batch in frames(data) {
        if batch.len() >= RECORD_BATCH_OVERHEAD && batch[MAGIC_OFFSET] == 2 {
            let attributes = u8::try_from(
                i16::from_be_bytes([batch[ATTRIBUTES_OFFSET], batch[ATTRIBUTES_OFFSET + 1]])
                    & COMPRESSION_MASK,
            )
            .unwrap_or(0);
            match Compression::from_id(attributes) {
                Some(Compression::None) => {}
                Some(compression) => {
                    out.clear();
                    decompressor.decompress_into(
                        compression,
                        &batch[RECORD_BATCH_OVERHEAD..],
                        position + RECORD_BATCH_OVERHEAD,
                        &mut out,
                    )?;
                    total += out.len();
                }
                None => {
                    return Err(Error::Corrupt {
                        position: position + ATTRIBUTES_OFFSET,
                        reason: format!("invalid compression id {attributes}"),
                    })
                }
            }
        }
        position += batch.len();
    }
    Ok(total)
}

/// How many bytes of records a [`Chunk`] gathers by default: enough to amortize a pass, small
/// enough to stay in cache.
pub const CHUNK_BYTES: usize = 256 << 10;

/// From this much input on, [`LogReader::chunks`] checks and decompresses on a second thread;
/// below it, starting a thread costs more than the overlap saves.
pub const PIPELINE_BYTES: usize = 4 * CHUNK_BYTES;

/// Walks a log buffer batch by batch. [`LogReader::fill`] checks each batch's framing and CRC
/// and decompresses its records into the chunk's buffer, which is reused from one chunk to the
/// next; [`Records`] then parses the records lazily, borrowing keys and values.
pub struct LogReader<'d> {
    data: &'d [u8],
    /// The absolute position of `data[0]`.
    position: usize,
    /// Bytes of `data` checked so far (whole batches).
    at: usize,
    error: Option<Error>,
    decompressor: Decompressor,
}

/// Batches checked by [`LogReader::fill`], their records ready to parse.
#[derive(Default)]
pub struct Chunk<'d> {
    data: &'d [u8],
    batches: Vec<(BatchInfo, Body)>,
    decompressed: Vec<u8>,
}

/// Where a checked batch's records lie.
enum Body {
    /// `data[range]` (uncompressed batch).
    Input(std::ops::Range<usize>),
    /// `decompressed[range]`; `position` is where the compressed stream starts.
    Decompressed {
        range: std::ops::Range<usize>,
        position: usize,
    },
    /// A legacy batch, parsed whole.
    Legacy(Vec<Record>),
}

impl<'d> Chunk<'d> {
    /// Runs `process` on the chunk's batches (of a log whose first byte is at absolute
    /// `position`); an error ends the walk at the batch that raised it.
    pub fn process(
        &self,
        position: usize,
        mut process: impl FnMut(&BatchInfo, Records<'_>) -> Result<()>,
    ) -> std::result::Result<(), Walk> {
        for (info, records) in self.batches() {
            if let Err(error) = process(info, records) {
                return Err(Walk {
                    valid_bytes: info.position - position,
                    error: Some(error),
                });
            }
        }
        Ok(())
    }

    /// The batches with their records.
    pub fn batches(&self) -> impl Iterator<Item = (&BatchInfo, Records<'_>)> {
        self.batches.iter().map(|(info, body)| {
            let records = match body {
                Body::Input(range) => Records::v2(
                    info,
                    Reader::new(
                        &self.data[range.clone()],
                        info.position + RECORD_BATCH_OVERHEAD,
                    ),
                    None,
                ),
                Body::Decompressed { range, position } => Records::v2(
                    info,
                    Reader::new(&self.decompressed[range.clone()], *position),
                    Some(*position),
                ),
                Body::Legacy(records) => Records::Legacy(records.iter()),
            };
            (info, records)
        })
    }
}

/// What a [`LogReader`] keeps between chunks, for a caller that cannot keep borrowing the input
/// from one chunk to the next (a Python iterator): the bytes checked so far, the decompression
/// contexts and the chunk's buffer.
#[derive(Default)]
pub struct ReaderState {
    at: usize,
    decompressor: Decompressor,
    decompressed: Vec<u8>,
}

impl<'d> LogReader<'d> {
    pub fn new(data: &'d [u8], position: usize) -> Self {
        Self::resume(data, position, ReaderState::default()).0
    }

    /// A reader of `data` (starting at absolute `position`) picking up where `state` stopped,
    /// with an empty chunk holding the state's buffer.
    pub fn resume(data: &'d [u8], position: usize, state: ReaderState) -> (Self, Chunk<'d>) {
        let ReaderState {
            at,
            decompressor,
            decompressed,
        } = state;
        let reader = LogReader {
            data,
            position,
            at,
            error: None,
            decompressor,
        };
        (
            reader,
            Chunk {
                data,
                batches: Vec::new(),
                decompressed,
            },
        )
    }

    /// Ends this reader's use of the input: the state to resume from, and the corrupt batch
    /// that stopped it, if one did.
    pub fn suspend(self, chunk: Chunk<'d>) -> (ReaderState, Option<Error>) {
        let state = ReaderState {
            at: self.at,
            decompressor: self.decompressor,
            decompressed: chunk.decompressed,
        };
        (state, self.error)
    }

    /// Replaces the chunk's batches by the next ones, checked and decompressed, until their
    /// records take `budget` bytes, the input ends, or a batch is corrupt (the error is kept
    /// for [`LogReader::finish`]). False when no batch was read.
    pub fn fill(&mut self, chunk: &mut Chunk<'d>, budget: usize) -> bool {
        chunk.data = self.data;
        chunk.batches.clear();
        chunk.decompressed.clear();
        let mut bytes = 0;
        while self.error.is_none() && self.at < self.data.len() && bytes < budget {
            match check_batch(
                &self.data[self.at..],
                self.position + self.at,
                &mut self.decompressor,
                &mut chunk.decompressed,
            ) {
                Ok((info, mut body)) => {
                    bytes += match &mut body {
                        Body::Input(range) => {
                            *range = range.start + self.at..range.end + self.at;
                            range.len()
                        }
                        Body::Decompressed { range, .. } => range.len(),
                        Body::Legacy(_) => info.size,
                    };
                    self.at += info.size;
                    chunk.batches.push((info, body));
                }
                Err(error) => self.error = Some(error),
            }
        }
        !chunk.batches.is_empty()
    }

    /// Runs `process` on every batch with its records, chunk after chunk; stops at the first
    /// error, whether the batch's framing or `process` raised it.
    pub fn walk(
        self,
        budget: usize,
        mut process: impl FnMut(&BatchInfo, Records<'_>) -> Result<()>,
    ) -> Walk {
        let position = self.position;
        self.chunks(budget, |chunk, _| chunk.process(position, &mut process))
    }

    /// Hands `consume` every chunk in order, with the bytes of the input checked up to the
    /// chunk's end; stops where `consume` returns a walk, or at the input's end or first
    /// corrupt batch. From [`PIPELINE_BYTES`] of input on, a second thread checks and
    /// decompresses the next chunk while `consume` runs on this one, so decompressing a log
    /// overlaps parsing it.
    pub fn chunks(
        self,
        budget: usize,
        mut consume: impl FnMut(&Chunk<'d>, usize) -> std::result::Result<(), Walk>,
    ) -> Walk {
        if !self.worth_a_pipeline() {
            return self.chunks_on_this_thread(budget, consume);
        }
        // SAFETY: the pipeline is finished (its thread joined) before this function returns,
        // while `data` is still borrowed, and each chunk is only lent to `consume`.
        let mut pipeline = unsafe { Pipeline::start(self, budget) };
        while let Some((chunk, checked)) = pipeline.next_chunk() {
            if let Err(walk) = consume(&chunk, checked) {
                pipeline.finish();
                return walk;
            }
            pipeline.recycle(chunk);
        }
        pipeline.finish()
    }

    /// Whether what is left to read is long enough for [`Pipeline`]'s second thread to pay.
    pub fn worth_a_pipeline(&self) -> bool {
        self.data.len() - self.at >= PIPELINE_BYTES
    }

    /// [`LogReader::chunks`] with every chunk checked and decompressed on the calling thread,
    /// for callers that already keep every core busy.
    pub fn chunks_on_this_thread(
        mut self,
        budget: usize,
        mut consume: impl FnMut(&Chunk<'d>, usize) -> std::result::Result<(), Walk>,
    ) -> Walk {
        let mut chunk = Chunk::default();
        while self.fill(&mut chunk, budget) {
            if let Err(walk) = consume(&chunk, self.at) {
                return walk;
            }
        }
        self.finish()
    }

    /// Where the walk ended: after every batch, or at the corrupt one.
    pub fn finish(self) -> Walk {
        Walk {
            valid_bytes: self.at,
            error: self.error,
        }
    }
}

/// A [`LogReader`] on a thread of its own, checking and decompressing one chunk ahead of its
/// caller. One chunk waits while the next is filled; chunks given back are refilled, so that
/// their buffers are reused. [`LogReader::chunks`] runs one for the length of a call; a
/// Python iterator keeps one between calls.
pub struct Pipeline {
    filled: Option<mpsc::Receiver<(Chunk<'static>, usize)>>,
    spent: mpsc::Sender<Chunk<'static>>,
    filler: Option<std::thread::JoinHandle<LogReader<'static>>>,
}

impl Pipeline {
    /// Starts filling chunks of at most `budget` bytes of records from where `reader` stands.
    ///
    /// # Safety
    /// The input that `reader` borrows must stay alive and unchanged until the pipeline is
    /// finished or dropped (either joins its thread), and no chunk it gave may be used after.
    pub unsafe fn start(reader: LogReader<'_>, budget: usize) -> Pipeline {
        // SAFETY: only the lifetime changes; the caller keeps the input alive (above).
        let mut reader =
            unsafe { std::mem::transmute::<LogReader<'_>, LogReader<'static>>(reader) };
        let (filled_tx, filled_rx) = mpsc::sync_channel(1);
        let (spent_tx, spent_rx) = mpsc::channel::<Chunk<'static>>();
        let filler = std::thread::spawn(move || {
            let mut chunk = Chunk::default();
            while reader.fill(&mut chunk, budget) {
                if filled_tx.send((chunk, reader.at)).is_err() {
                    break;
                }
                chunk = spent_rx.try_recv().unwrap_or_default();
            }
            reader
        });
        Pipeline {
            filled: Some(filled_rx),
            spent: spent_tx,
            filler: Some(filler),
        }
    }

    /// The next chunk, with the bytes of the input checked up to its end; `None` after the
    /// last, at the input's end or before its first corrupt batch.
    pub fn next_chunk(&mut self) -> Option<(Chunk<'static>, usize)> {
        self.filled.as_ref()?.recv().ok()
    }

    /// Gives a consumed chunk back, for its buffers to be refilled.
    pub fn recycle(&self, chunk: Chunk<'static>) {
        let _ = self.spent.send(chunk);
    }

    /// Stops the filler and says where its walk ended: after the last chunk it filled, or at
    /// the corrupt batch that stopped it.
    pub fn finish(mut self) -> Walk {
        match self.stop() {
            Ok(reader) => reader.finish(),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    fn stop(&mut self) -> std::thread::Result<LogReader<'static>> {
        // Dropping the receiver ends a filler waiting to send.
        drop(self.filled.take());
        self.filler
            .take()
            .expect("a pipeline is stopped once")
            .join()
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        if self.filler.is_some() {
            let _ = self.stop();
        }
    }
}

/// Checks the batch at the start of `data` (framing, CRC) and finds its records: in `data`
/// (the returned range is relative to `data`), decompressed into `decompressed`, or parsed
/// whole for a legacy batch.
fn check_batch(
    data: &[u8],
    position: usize,
    decompressor: &mut Decompressor,
    decompressed: &mut Vec<u8>,
) -> Result<(BatchInfo, Body)> {
    let mut header = Reader::new(data, position);
    let _base_offset = header.i64()?;
    let length = header.i32()?;
    if length < MIN_BATCH_LENGTH {
        return Err(Error::Corrupt {
            position: position + LENGTH_OFFSET,
            reason: format!("batch length {length} is below the minimum {MIN_BATCH_LENGTH}"),
        });
    }
    let size = LOG_OVERHEAD + length as usize;
    if size > data.len() {
        return Err(Error::Truncated {
            position,
            needed: size,
            available: data.len(),
            what: "record batch".into(),
        });
    }
    let magic = data[MAGIC_OFFSET] as i8;
    match magic {
        2 => check_v2(&data[..size], position, decompressor, decompressed),
        0 | 1 => {
            let batch = crate::codec::legacy::read_legacy(&data[..size], position)?;
            Ok((batch.info, Body::Legacy(batch.records)))
        }
        other => Err(Error::Corrupt {
            position: position + MAGIC_OFFSET,
            reason: format!("unknown magic {other}"),
        }),
    }
}

fn check_v2(
    data: &[u8],
    position: usize,
    decompressor: &mut Decompressor,
    decompressed: &mut Vec<u8>,
) -> Result<(BatchInfo, Body)> {
    if data.len() < RECORD_BATCH_OVERHEAD {
        return Err(Error::Corrupt {
            position,
            reason: format!(
                "magic-2 batch of {} bytes is shorter than its {RECORD_BATCH_OVERHEAD}-byte header",
                data.len()
            ),
        });
    }
    let mut r = Reader::new(data, position);
    let base_offset = r.i64()?;
    let _length = r.i32()?;
    let partition_leader_epoch = r.i32()?;
    let magic = r.i8()?;
    let crc = r.u32()?;
    let computed = crc32c(&data[ATTRIBUTES_OFFSET..]);
    if computed != crc {
        return Err(Error::Corrupt {
            position,
            reason: format!("CRC-32C mismatch (stored {crc:#010x}, computed {computed:#010x})"),
        });
    }
    let attributes = r.i16()?;
    let last_offset_delta = r.i32()?;
    let base_timestamp = r.i64()?;
    let max_timestamp = r.i64()?;
    let producer_id = r.i64()?;
    let producer_epoch = r.i16()?;
    let base_sequence = r.i32()?;
    let count_position = r.position();
    let count = r.i32()?;
    let compression =
        Compression::from_id((attributes & COMPRESSION_MASK) as u8).ok_or_else(|| {
            Error::Corrupt {
                position: position + ATTRIBUTES_OFFSET,
                reason: format!("invalid compression id {}", attributes & COMPRESSION_MASK),
            }
        })?;
    if count < 0 {
        return Err(Error::Corrupt {
            position: count_position,
            reason: format!("negative record count {count}"),
        });
    }
    let records_position = r.position();
    let body = if compression == Compression::None {
        Body::Input(RECORD_BATCH_OVERHEAD..data.len())
    } else {
        let start = decompressed.len();
        decompressor.decompress_into(compression, r.rest(), records_position, decompressed)?;
        // Errors inside a decompressed stream point at the compressed stream's start
        // (`in_decompressed`).
        Body::Decompressed {
            range: start..decompressed.len(),
            position: records_position,
        }
    };
    let record_bytes = match &body {
        Body::Input(range) | Body::Decompressed { range, .. } => range.len(),
        Body::Legacy(_) => 0,
    };
    // Each record takes at least 7 bytes; refuse counts that cannot fit.
    if count as usize > record_bytes / 7 + 1 {
        return Err(Error::Corrupt {
            position: count_position,
            reason: format!("record count {count} does not fit the {record_bytes} record bytes"),
        });
    }
    Ok((
        BatchInfo {
            position,
            size: data.len(),
            base_offset,
            last_offset: base_offset + i64::from(last_offset_delta),
            partition_leader_epoch,
            magic,
            crc,
            compression,
            log_append_time: attributes & TIMESTAMP_TYPE_BIT != 0,
            is_transactional: attributes & TRANSACTIONAL_BIT != 0,
            is_control: attributes & CONTROL_BIT != 0,
            has_delete_horizon: attributes & DELETE_HORIZON_BIT != 0,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            record_count: count as usize,
        },
        body,
    ))
}

/// The records of one batch, parsed as they are iterated; after the last, bytes left over
/// are an error.
pub enum Records<'a> {
    V2 {
        r: Reader<'a>,
        left: usize,
        count: usize,
        base_offset: i64,
        base_timestamp: i64,
        log_append_time: Option<i64>,
        /// For decompressed records, where their compressed stream starts in the input.
        decompressed_from: Option<usize>,
    },
    Legacy(std::slice::Iter<'a, Record>),
}

impl<'a> Records<'a> {
    fn v2(info: &BatchInfo, r: Reader<'a>, decompressed_from: Option<usize>) -> Self {
        Records::V2 {
            r,
            left: info.record_count,
            count: info.record_count,
            base_offset: info.base_offset,
            base_timestamp: info.base_timestamp,
            log_append_time: info.log_append_time.then_some(info.max_timestamp),
            decompressed_from,
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<RecordRef<'a>>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Records::V2 {
                r,
                left,
                count,
                base_offset,
                base_timestamp,
                log_append_time,
                decompressed_from,
            } => {
                let decompressed_from = *decompressed_from;
                let relocate = move |error: Error| match decompressed_from {
                    Some(start) => in_decompressed(error, start),
                    None => error,
                };
                if *left == 0 {
                    if r.is_empty() {
                        return None;
                    }
                    let error = r.corrupt(format!(
                        "{} bytes after the last of {count} records",
                        r.remaining()
                    ));
                    r.rest();
                    return Some(Err(relocate(error)));
                }
                *left -= 1;
                let record = read_record(r, *base_offset, *base_timestamp, *log_append_time);
                if record.is_err() {
                    *left = 0;
                    r.rest();
                }
                Some(record.map_err(relocate))
            }
            Records::Legacy(records) => records.next().map(|r| {
                Ok(RecordRef {
                    offset: r.offset,
                    timestamp: r.timestamp,
                    key: r.key.as_deref(),
                    value: r.value.as_deref(),
                    headers: &[],
                    header_count: 0,
                    headers_position: 0,
                })
            }),
        }
    }
}

#[inline(always)]
fn read_record<'a>(
    r: &mut Reader<'a>,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
) -> Result<RecordRef<'a>> {
    let start = r.position();
    let length = r.varint()?;
    if length < 0 {
        return Err(Error::Corrupt {
            position: start,
            reason: format!("negative record length {length}"),
        });
    }
    let mut rec = r.sub(length as usize, "record")?;
    let _attributes = rec.i8()?;
    let timestamp_delta = rec.varlong()?;
    let offset_delta = rec.varint()?;
    let key = varint_bytes(&mut rec, "record key")?;
    let value = varint_bytes(&mut rec, "record value")?;
    let header_count = rec.varint()?;
    if header_count < 0 || header_count as usize > rec.remaining() / 2 {
        return Err(rec.corrupt(format!("invalid header count {header_count}")));
    }
    let headers_position = rec.position();
    let mut headers = rec.clone();
    read_headers(&mut rec, header_count as usize, |_, _| {})?;
    if !rec.is_empty() {
        return Err(rec.corrupt(format!(
            "record length {length} leaves {} bytes unread",
            rec.remaining()
        )));
    }
    Ok(RecordRef {
        offset: base_offset.wrapping_add(i64::from(offset_delta)),
        timestamp: log_append_time.unwrap_or_else(|| base_timestamp.wrapping_add(timestamp_delta)),
        key,
        value,
        headers: headers.rest(),
        header_count: header_count as usize,
        headers_position,
    })
}

fn read_headers<'a>(
    r: &mut Reader<'a>,
    count: usize,
    mut header: impl FnMut(&'a [u8], Option<&'a [u8]>),
) -> Result<()> {
    for _ in 0..count {
        let at = r.position();
        let name = varint_bytes(r, "header key")?.ok_or_else(|| Error::Corrupt {
            position: at,
            reason: "null header key".into(),
        })?;
        header(name, varint_bytes(r, "header value")?);
    }
    Ok(())
}

#[inline(always)]
fn varint_bytes<'a>(r: &mut Reader<'a>, what: &str) -> Result<Option<&'a [u8]>> {
    let at = r.position();
    match r.varint()? {
        -1 => Ok(None),
        n if n < 0 => Err(Error::Corrupt {
            position: at,
            reason: format!("negative {what} length {n}"),
        }),
        n => Ok(Some(r.take(n as usize, what)?)),
    }
}

/// What a batch's header says, for [`write_batch`].
#[derive(Clone, Copy, Debug)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub timestamp: i64,
    pub compression: Compression,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub is_transactional: bool,
    pub is_control: bool,
    pub partition_leader_epoch: i32,
}

impl BatchHeader {
    /// A plain append, as the coordinator writes one: CreateTime, no producer, base sequence
    /// 0, leader epoch 0 (this node leads every partition it owns from epoch 0).
    pub fn plain(base_offset: i64, timestamp: i64) -> Self {
        BatchHeader {
            base_offset,
            timestamp,
            compression: Compression::None,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: 0,
            is_transactional: false,
            is_control: false,
            partition_leader_epoch: 0,
        }
    }
}

/// Encodes one magic-2 batch of `records` (key, value), all stamped with the header's
/// timestamp, offsets `base_offset..base_offset + n`.
pub fn write_batch(
    header: &BatchHeader,
    records: &[(Option<&[u8]>, Option<&[u8]>)],
) -> Result<Vec<u8>> {
    if records.is_empty() {
        return Err(Error::InvalidArgument(
            "a batch needs at least one record".into(),
        ));
    }
    let last_offset = i64::try_from(records.len() - 1)
        .ok()
        .and_then(|delta| header.base_offset.checked_add(delta))
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{} records from base offset {} run past the largest offset, 2^63-1",
                records.len(),
                header.base_offset
            ))
        })?;
    let records: Vec<RecordToWrite<'_>> = records
        .iter()
        .zip(header.base_offset..=last_offset)
        .map(|(&(key, value), offset)| RecordToWrite {
            offset,
            timestamp: header.timestamp,
            key,
            value,
            headers: &[],
        })
        .collect();
    write_records(header, last_offset, None, &records)
}

/// A record to write at its own offset and timestamp, for [`write_records`].
#[derive(Clone, Copy, Debug)]
pub struct RecordToWrite<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: &'a [(String, Option<Vec<u8>>)],
}

/// Encodes one magic-2 batch whose records keep their own offsets and timestamps: several
/// appends merged into one batch, or what the log cleaner retains of a batch (Kafka's
/// `buildRetainedRecordsInto`).
///
/// The batch spans `header.base_offset..=last_offset` whatever records remain, so a cleaned
/// batch keeps its offsets. Offsets must increase within that span. The base timestamp is the
/// first record's, or `delete_horizon_ms` when given (attribute bit 6; record timestamps are
/// then written relative to it). With no records the batch is empty, as the cleaner leaves a
/// batch whose records all went, with both timestamps `header.timestamp`.
pub fn write_records(
    header: &BatchHeader,
    last_offset: i64,
    delete_horizon_ms: Option<i64>,
    records: &[RecordToWrite<'_>],
) -> Result<Vec<u8>> {
    let invalid = |what: String| Error::InvalidArgument(what);
    let base_offset = header.base_offset;
    let mut previous = None;
    for r in records {
        let wrong = if r.offset < base_offset {
            format!("is before base offset {base_offset}")
        } else if let Some(p) = previous.filter(|p| r.offset <= *p) {
            format!("follows offset {p}: offsets must increase")
        } else if r.offset > last_offset {
            format!("is past last offset {last_offset}")
        } else {
            previous = Some(r.offset);
            continue;
        };
        return Err(invalid(format!("record offset {} {wrong}", r.offset)));
    }
    if last_offset < base_offset {
        return Err(invalid(format!(
            "last offset {last_offset} is before base offset {base_offset}"
        )));
    }
    let last_offset_delta = last_offset
        .checked_sub(base_offset)
        .and_then(|delta| i32::try_from(delta).ok())
        .ok_or_else(|| {
            invalid(format!(
                "last offset {last_offset} is more than 2^31-1 after base offset {base_offset}"
            ))
        })?;
    let count = i32::try_from(records.len())
        .map_err(|_| invalid("too many records for one batch".into()))?;
    let base_timestamp = delete_horizon_ms
        .or(records.first().map(|r| r.timestamp))
        .unwrap_or(header.timestamp);
    let max_timestamp = records
        .iter()
        .map(|r| r.timestamp)
        .max()
        .unwrap_or(header.timestamp);
    let mut body = Vec::new();
    let mut record = Vec::new();
    for r in records {
        record.clear();
        record.put_i8(0);
        record.put_varlong(r.timestamp.wrapping_sub(base_timestamp));
        record.put_varint((r.offset - base_offset) as i32);
        put_varint_bytes(&mut record, r.key)?;
        put_varint_bytes(&mut record, r.value)?;
        record.put_varint(
            i32::try_from(r.headers.len()).map_err(|_| invalid("too many headers".into()))?,
        );
        for (name, value) in r.headers {
            put_varint_bytes(&mut record, Some(name.as_bytes()))?;
            put_varint_bytes(&mut record, value.as_deref())?;
        }
        body.put_varint(
            i32::try_from(record.len()).map_err(|_| invalid("record too large".into()))?,
        );
        body.extend_from_slice(&record);
    }
    let compression = if records.is_empty() {
        Compression::None
    } else {
        header.compression
    };
    let body = compression.compress(&body);
    let mut attributes = i16::from(compression.id());
    if header.is_transactional {
        attributes |= TRANSACTIONAL_BIT;
    }
    if header.is_control {
        attributes |= CONTROL_BIT;
    }
    if delete_horizon_ms.is_some() {
        attributes |= DELETE_HORIZON_BIT;
    }
    let length = i32::try_from(RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + body.len())
        .map_err(|_| invalid("batch larger than 2 GiB".into()))?;
    let mut out = Vec::with_capacity(RECORD_BATCH_OVERHEAD + body.len());
    out.put_i64(header.base_offset);
    out.put_i32(length);
    out.put_i32(header.partition_leader_epoch);
    out.put_i8(2);
    out.put_u32(0);
    out.put_i16(attributes);
    out.put_i32(last_offset_delta);
    out.put_i64(base_timestamp);
    out.put_i64(max_timestamp);
    out.put_i64(header.producer_id);
    out.put_i16(header.producer_epoch);
    out.put_i32(header.base_sequence);
    out.put_i32(count);
    out.extend_from_slice(&body);
    let crc = crc32c(&out[ATTRIBUTES_OFFSET..]);
    out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(out)
}

fn put_varint_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) -> Result<()> {
    match bytes {
        None => out.put_varint(-1),
        Some(b) => {
            out.put_varint(
                i32::try_from(b.len())
                    .map_err(|_| Error::InvalidArgument("key or value too large".into()))?,
            );
            out.extend_from_slice(b);
        }
    }
    Ok(())
}

/// A transaction marker (Kafka's `EndTransactionMarker`): COMMIT or ABORT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlMarker {
    pub commit: bool,
    pub coordinator_epoch: i32,
}

/// Control record types: 0 ABORT, 1 COMMIT, others (KRaft) carried as their number.
pub fn control_record_type(key: &[u8]) -> Option<i16> {
    let mut r = Reader::new(key, 0);
    let _version = r.i16().ok()?;
    r.i16().ok()
}

/// Encodes a control batch holding one COMMIT or ABORT marker.
pub fn write_control_batch(header: &BatchHeader, marker: ControlMarker) -> Result<Vec<u8>> {
    let mut key = Vec::new();
    key.put_i16(0);
    key.put_i16(i16::from(marker.commit));
    let mut value = Vec::new();
    value.put_i16(0);
    value.put_i32(marker.coordinator_epoch);
    let header = BatchHeader {
        is_transactional: true,
        is_control: true,
        compression: Compression::None,
        ..*header
    };
    write_batch(&header, &[(Some(&key), Some(&value))])
}

/// The COMMIT/ABORT marker of a control record, if it is one.
pub fn control_marker(key: Option<&[u8]>, value: Option<&[u8]>) -> Option<ControlMarker> {
    let kind = control_record_type(key?)?;
    if kind > 1 {
        return None;
    }
    let mut r = Reader::new(value?, 0);
    let _version = r.i16().ok()?;
    Some(ControlMarker {
        commit: kind == 1,
        coordinator_epoch: r.i32().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::hex;

    #[test]
    fn write_then_read_every_compression() {
        for c in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let header = BatchHeader {
                compression: c,
                ..BatchHeader::plain(100, 1_700_000_000_000)
            };
            let recs: Vec<(Option<&[u8]>, Option<&[u8]>)> =
                vec![(Some(b"k1"), Some(b"v1")), (Some(b"k2"), None)];
            let bytes = write_batch(&header, &recs).unwrap();
            let parsed = read_batches(&bytes, 0);
            assert!(parsed.error.is_none(), "{c:?}: {:?}", parsed.error);
            let b = &parsed.batches[0];
            assert_eq!(
                (
                    b.info.base_offset,
                    b.info.last_offset,
                    b.info.compression,
                    b.info.size
                ),
                (100, 101, c, bytes.len())
            );
            assert_eq!(
                (
                    b.info.producer_id,
                    b.info.producer_epoch,
                    b.info.base_sequence,
                    b.info.partition_leader_epoch
                ),
                (-1, -1, 0, 0)
            );
            assert_eq!(
                b.records[1],
                Record {
                    offset: 101,
                    timestamp: 1_700_000_000_000,
                    key: Some(b"k2".to_vec()),
                    value: None,
                    headers: vec![]
                }
            );
        }
    }

    #[test]
    fn written_records_keep_their_offsets_timestamps_and_delete_horizon() {
        let header = BatchHeader {
            producer_id: 9,
            producer_epoch: 1,
            is_transactional: true,
            ..BatchHeader::plain(100, 0)
        };
        let hdrs = vec![("h".to_owned(), Some(b"v".to_vec()))];
        let records = [
            RecordToWrite {
                offset: 101,
                timestamp: 5_000,
                key: Some(b"a"),
                value: None,
                headers: &[],
            },
            RecordToWrite {
                offset: 104,
                timestamp: 4_000,
                key: Some(b"b"),
                value: Some(b"2"),
                headers: &hdrs,
            },
        ];
        for horizon in [None, Some(90_000)] {
            let bytes = write_records(&header, 107, horizon, &records).unwrap();
            let parsed = read_batches(&bytes, 0);
            assert!(parsed.error.is_none(), "{:?}", parsed.error);
            let b = &parsed.batches[0];
            assert_eq!(
                (b.base_offset, b.last_offset, b.has_delete_horizon),
                (100, 107, horizon.is_some())
            );
            assert_eq!(
                (b.base_timestamp, b.max_timestamp),
                (horizon.unwrap_or(5_000), 5_000)
            );
            assert_eq!((b.producer_id, b.is_transactional), (9, true));
            let got: Vec<_> = b
                .records
                .iter()
                .map(|r| (r.offset, r.timestamp, r.key.clone(), r.value.clone()))
                .collect();
            assert_eq!(
                got,
                vec![
                    (101, 5_000, Some(b"a".to_vec()), None),
                    (104, 4_000, Some(b"b".to_vec()), Some(b"2".to_vec()))
                ]
            );
            assert_eq!(b.records[1].headers, hdrs);
        }
        let empty = write_records(&BatchHeader::plain(7, 123), 9, None, &[]).unwrap();
        let b = &read_batches(&empty, 0).batches[0];
        assert_eq!(
            (
                b.base_offset,
                b.last_offset,
                b.records.len(),
                b.max_timestamp
            ),
            (7, 9, 0, 123)
        );
        let refused = |last_offset: i64, records: &[RecordToWrite<'_>]| match write_records(
            &header,
            last_offset,
            None,
            records,
        ) {
            Err(Error::InvalidArgument(why)) => why,
            other => panic!("{other:?}"),
        };
        let out_of_order = [records[1], records[0]];
        assert_eq!(
            refused(107, &out_of_order),
            "record offset 101 follows offset 104: offsets must increase"
        );
        assert_eq!(
            refused(103, &records),
            "record offset 104 is past last offset 103"
        );
        let below = [RecordToWrite {
            offset: 99,
            ..records[0]
        }];
        assert_eq!(
            refused(99, &below),
            "record offset 99 is before base offset 100"
        );
        assert_eq!(refused(99, &[]), "last offset 99 is before base offset 100");
        assert_eq!(
            refused(100 + (1 << 31), &[]),
            "last offset 2147483748 is more than 2^31-1 after base offset 100"
        );
    }

    #[test]
    fn control_batches_round_trip() {
        let header = BatchHeader {
            producer_id: 7,
            producer_epoch: 2,
            ..BatchHeader::plain(5, 10)
        };
        let bytes = write_control_batch(
            &header,
            ControlMarker {
                commit: true,
                coordinator_epoch: 3,
            },
        )
        .unwrap();
        let b = &read_batches(&bytes, 0).batches[0];
        assert!(b.info.is_control && b.info.is_transactional);
        assert_eq!(
            control_marker(b.records[0].key.as_deref(), b.records[0].value.as_deref()),
            Some(ControlMarker {
                commit: true,
                coordinator_epoch: 3
            })
        );
    }

    /// kafka-python's `record_batch_data_v2` (offsets-log-format.md §9.1): real broker batches.
    #[test]
    fn real_broker_batches_decode() {
        let data = hex(
            "00000000000000000000003b00000001020318a2700000000000000000015dff\
             7b063c0000015dff7b063cffffffffffffffffffffffffffff00000001120000\
             00010631323300\
             0000000000000001000000400000000202c85cbd230000000000010000015dff\
             7cdd6c0000015dff7cde14ffffffffffffffffffffffffffff000000020c0000\
             000100000e00d00202010000\
             00000000000000000000004500000000025cd8ef520000000000000000016585\
             b6f3c10000016585b6f3c1ffffffffffffffffffffffffffff00000001260000\
             0001066864720208686b6579086876616c",
        );
        let parsed = read_batches(&data, 0);
        assert!(parsed.error.is_none(), "{:?}", parsed.error);
        let [a, b, c] = &parsed.batches[..] else {
            panic!("3 batches")
        };
        assert_eq!(
            (
                a.info.crc,
                a.info.partition_leader_epoch,
                a.records[0].timestamp
            ),
            (0x0318_a270, 1, 1_503_229_838_908)
        );
        assert_eq!(a.records[0].value.as_deref(), Some(&b"123"[..]));
        assert_eq!(b.records.len(), 2);
        assert_eq!(
            (b.records[1].offset, b.records[1].timestamp),
            (2, 1_503_229_959_532 + 168)
        );
        assert_eq!(
            c.records[0].headers,
            vec![("hkey".to_owned(), Some(b"hval".to_vec()))]
        );
    }

    /// offsets-log-format.md §9.3: sarama's compressed batches (raw snappy, lz4 with checksums).
    #[test]
    fn compressed_vectors_decode() {
        for data in [
            "00000000000000000000005e00000000029fecb6bd000100000000000001588dcd593800000000000000000000000000000000000000000000000000011f8b08000000000000ffd260e062e060646266616365636762e3e0e462e1e601040000ffffadc9586715000000",
            "000000000000000000000048000000000215009f61000200000000000001588dcd59380000000000000000000000000000000000000000000000000001155028000a00080102030406050607020608090a040b0c",
            "0000000000000000000000590000000002a94a77c5000300000000000001588dcd5938000000000000000000000000000000000000000000000000000104224d186470b91500008028000a00080102030406050607020608090a040b0c000000000c3bef92",
        ] {
            let parsed = read_batches(&hex(data), 0);
            assert!(parsed.error.is_none(), "{:?}", parsed.error);
            let r = &parsed.batches[0].records[0];
            assert_eq!(r.key.as_deref(), Some(&[1u8, 2, 3, 4][..]));
            assert_eq!(r.value.as_deref(), Some(&[5u8, 6, 7][..]));
            assert_eq!(r.headers, vec![("\u{8}\t\n".to_owned(), Some(vec![0x0b, 0x0c]))]);
            assert_eq!(r.timestamp, 1_479_847_795_000 + 5);
        }
    }

    /// offsets-log-format.md §9.6: a four-batch segment; our writer produces B1 byte for byte.
    #[test]
    fn coordinator_segment_vector() {
        let b1 = hex(
            "0000000000000000000000790000000002e0bab9c80000000000000000018579\
             eff58c0000018579eff58cffffffffffffffffffff00000000000000018c0100\
             0000500001001b6b61666b6573632d646576636c75737465722d67726f75702d\
             6964000374303100000000300003000000000000006affffffff000000000185\
             79eff58c00",
        );
        let b4 = hex(
            "0000000000000003000000420000000002bcdd34690030000000000000018579\
             efff500000018579efff500000000000000fa00000ffffffff00000001200000\
             0008000000010c00000000000500",
        );
        let key =
            hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000");
        let value = hex("0003000000000000006affffffff00000000018579eff58c");
        let written = write_batch(
            &BatchHeader::plain(0, 1_672_788_047_244),
            &[(Some(&key), Some(&value))],
        )
        .unwrap();
        assert_eq!(written, b1);
        let control = write_control_batch(
            &BatchHeader {
                producer_id: 4000,
                producer_epoch: 0,
                base_sequence: -1,
                ..BatchHeader::plain(3, 1_672_788_049_744)
            },
            ControlMarker {
                commit: true,
                coordinator_epoch: 5,
            },
        )
        .unwrap();
        assert_eq!(control, b4);
    }

    #[test]
    fn every_truncation_and_bit_flip_is_an_error_with_a_position() {
        let header = BatchHeader {
            compression: Compression::None,
            ..BatchHeader::plain(0, 1)
        };
        let bytes = write_batch(&header, &[(Some(b"key"), Some(b"value"))]).unwrap();
        for cut in 1..bytes.len() {
            let parsed = read_batches(&bytes[..cut], 1000);
            let err = parsed.error.expect("truncated input must be reported");
            assert_eq!(parsed.valid_bytes, 0);
            assert!(
                err.position().is_some_and(|p| p >= 1000),
                "cut {cut}: {err}"
            );
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[i] ^= 1 << bit;
                let parsed = read_batches(&flipped, 0);
                if i >= ATTRIBUTES_OFFSET
                    || (CRC_OFFSET..ATTRIBUTES_OFFSET).contains(&i)
                    || i == MAGIC_OFFSET
                {
                    assert!(
                        parsed.error.is_some(),
                        "flip at byte {i} bit {bit} went unnoticed"
                    );
                }
            }
        }
    }

    #[test]
    fn ceilings_checksum_and_decompress_every_batch() {
        let recs: Vec<(Option<&[u8]>, Option<&[u8]>)> =
            vec![(Some(b"key"), Some(b"some value, some value"))];
        let record_bytes =
            write_batch(&BatchHeader::plain(0, 1), &recs).unwrap().len() - RECORD_BATCH_OVERHEAD;
        for c in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut log = Vec::new();
            for i in 0..3 {
                log.extend(
                    write_batch(
                        &BatchHeader {
                            compression: c,
                            ..BatchHeader::plain(i, 1)
                        },
                        &recs,
                    )
                    .unwrap(),
                );
            }
            log.extend_from_slice(&log[..20].to_vec());
            assert_eq!(
                checksum_batches(&log),
                3,
                "{c:?}: the torn tail is not a batch"
            );
            let expected = if c == Compression::None {
                0
            } else {
                3 * record_bytes
            };
            assert_eq!(decompress_batches(&log).unwrap(), expected, "{c:?}");
            let mut flipped = log.clone();
            flipped[ATTRIBUTES_OFFSET + 5] ^= 1;
            assert_eq!(checksum_batches(&flipped), 2);
        }
        let mut mislabelled = write_batch(
            &BatchHeader {
                compression: Compression::Lz4,
                ..BatchHeader::plain(0, 1)
            },
            &recs,
        )
        .unwrap();
        mislabelled[ATTRIBUTES_OFFSET + 1] = Compression::Gzip.id();
        assert!(decompress_batches(&mislabelled).is_err());
    }

    #[test]
    fn a_resumed_reader_reads_what_one_reader_reads() {
        let mut log = Vec::new();
        for (i, c) in [
            Compression::None,
            Compression::Gzip,
            Compression::Zstd,
            Compression::Lz4,
        ]
        .into_iter()
        .cycle()
        .take(12)
        .enumerate()
        {
            let value = format!("value {i}");
            let recs: Vec<(Option<&[u8]>, Option<&[u8]>)> =
                vec![(Some(b"k"), Some(value.as_bytes())); 3];
            log.extend(
                write_batch(
                    &BatchHeader {
                        compression: c,
                        ..BatchHeader::plain(3 * i as i64, 1)
                    },
                    &recs,
                )
                .unwrap(),
            );
        }
        let good = log.len();
        log.extend_from_slice(&log[..30].to_vec());
        let offsets = |chunk: &Chunk<'_>| -> Vec<(i64, Vec<u8>)> {
            let records = chunk
                .batches()
                .flat_map(|(_, records)| records.map(|r| r.unwrap()))
                .collect::<Vec<_>>();
            records
                .iter()
                .map(|r| (r.offset, r.value.unwrap().to_vec()))
                .collect()
        };
        let mut whole = Vec::new();
        let mut reader = LogReader::new(&log, 100);
        let mut chunk = Chunk::default();
        while reader.fill(&mut chunk, usize::MAX) {
            whole.extend(offsets(&chunk));
        }
        let mut resumed = Vec::new();
        let mut state = ReaderState::default();
        let error = loop {
            let (mut reader, mut chunk) = LogReader::resume(&log, 100, state);
            let filled = reader.fill(&mut chunk, 1);
            resumed.extend(offsets(&chunk));
            let (next, error) = reader.suspend(chunk);
            state = next;
            if !filled || error.is_some() {
                break error;
            }
        };
        assert_eq!(whole.len(), 36);
        assert_eq!(resumed, whole);
        assert_eq!(state.at, good);
        assert_eq!(error.and_then(|e| e.position()), Some(100 + good));
    }

    /// A log of `batches` batches cycling through the compressions, each of 20 records whose
    /// values are 2 KiB of pseudo-random hex digits, then a torn copy of its first batch.
    fn long_log(batches: usize) -> (Vec<u8>, usize) {
        let mut log = Vec::new();
        let compressions = [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut hex = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            format!("{seed:016x}")
        };
        for i in 0..batches {
            let values: Vec<String> = (0..20).map(|_| (0..128).map(|_| hex()).collect()).collect();
            let recs: Vec<(Option<&[u8]>, Option<&[u8]>)> = values
                .iter()
                .map(|v| (Some(&b"k"[..]), Some(v.as_bytes())))
                .collect();
            let header = BatchHeader {
                compression: compressions[i % compressions.len()],
                ..BatchHeader::plain(20 * i as i64, 1)
            };
            log.extend(write_batch(&header, &recs).unwrap());
        }
        let good = log.len();
        log.extend_from_slice(&log[..40].to_vec());
        (log, good)
    }

    /// A log of `n` one-record batches, each a little longer than the one before, and where
    /// each batch starts.
    fn growing_batches(n: usize) -> (Vec<u8>, Vec<usize>) {
        let header = BatchHeader::plain(0, 5);
        let mut log = Vec::new();
        let mut starts = Vec::new();
        for i in 0..n {
            starts.push(log.len());
            let value = vec![b'v'; 10 + i * 7];
            log.extend(write_batch(&header, &[(Some(b"k"), Some(&value))]).unwrap());
        }
        (log, starts)
    }

    #[test]
    fn runs_are_cut_between_batches_of_about_equal_size() {
        let (log, starts) = growing_batches(60);
        let runs = split_at_batches(&log, 4, 1000);
        assert_eq!(runs.len(), 4);
        assert_eq!(runs[0].start, 0);
        assert_eq!(runs.last().unwrap().end, log.len());
        for w in runs.windows(2) {
            assert_eq!(w[0].end, w[1].start);
            assert!(starts.contains(&w[1].start), "cut inside a batch");
        }
        for run in &runs {
            assert!(
                run.len().abs_diff(log.len() / 4) < 700,
                "{run:?} of {}",
                log.len()
            );
        }
        let long = split_at_batches(&log, 4, log.len() / 3);
        assert!((2..=3).contains(&long.len()));
        assert!(long.iter().all(|run| run.len() >= log.len() / 3));
        assert_eq!(split_at_batches(&log, 1, 1), vec![0..log.len()]);
        // A length prefix that makes no sense: the run before it takes the rest.
        let mut broken = log.clone();
        broken[starts[20] + LENGTH_OFFSET..starts[20] + LOG_OVERHEAD].copy_from_slice(&[0xff; 4]);
        let runs = split_at_batches(&broken, 4, 1000);
        assert!(runs.len() <= 2 && runs.last().unwrap().end == log.len());
        assert!(runs.last().unwrap().start <= starts[20]);
    }

    #[test]
    fn windows_end_at_the_first_batch_end_past_their_size() {
        let (log, starts) = growing_batches(30);
        let ends: Vec<usize> = starts[1..].iter().copied().chain([log.len()]).collect();
        for size in [1, ends[0], ends[0] + 1, 1000, log.len()] {
            let window = window_of_batches(&log, size);
            assert_eq!(window, *ends.iter().find(|&&end| end >= size).unwrap());
        }
        assert_eq!(window_of_batches(&log, log.len() + 1), log.len());
        assert_eq!(window_of_batches(&[], 100), 0);
        // A length prefix that makes no sense, or a batch cut short: the window takes the rest,
        // so that a walk of it meets the damage.
        let mut broken = log.clone();
        broken[ends[9] + LENGTH_OFFSET..ends[9] + LOG_OVERHEAD].copy_from_slice(&[0xff; 4]);
        assert_eq!(window_of_batches(&broken, ends[5]), ends[5]);
        assert_eq!(window_of_batches(&broken, ends[12]), log.len());
        assert_eq!(
            window_of_batches(&log[..ends[9] + 20], ends[12]),
            ends[9] + 20
        );
    }

    #[test]
    fn a_batch_says_how_it_is_compressed() {
        let plain = BatchHeader::plain(0, 5);
        let gzip = BatchHeader {
            compression: Compression::Gzip,
            ..BatchHeader::plain(0, 5)
        };
        let records = [(Some(&b"k"[..]), Some(&b"v"[..]))];
        assert_eq!(
            first_compression(&write_batch(&plain, &records).unwrap()),
            Some(Compression::None)
        );
        assert_eq!(
            first_compression(&write_batch(&gzip, &records).unwrap()),
            Some(Compression::Gzip)
        );
        assert_eq!(first_compression(&[]), None);
    }

    #[test]
    fn a_pipelined_walk_reads_what_a_serial_one_reads() {
        let (log, good) = long_log(120);
        assert!(log.len() >= PIPELINE_BYTES);
        let serial = {
            let mut reader = LogReader::new(&log, 7);
            let mut chunk = Chunk::default();
            let mut values = Vec::new();
            while reader.fill(&mut chunk, CHUNK_BYTES) {
                for (_, records) in chunk.batches() {
                    values.extend(records.map(|r| r.unwrap().value.unwrap().to_vec()));
                }
            }
            values
        };
        let mut pipelined = Vec::new();
        let mut checked = Vec::new();
        let walk = LogReader::new(&log, 7).chunks(CHUNK_BYTES, |chunk, at| {
            checked.push(at);
            chunk.process(7, |_, records| {
                for record in records {
                    pipelined.push(record?.value.unwrap().to_vec());
                }
                Ok(())
            })
        });
        assert_eq!(serial.len(), 2400);
        assert_eq!(pipelined, serial);
        assert!(checked.len() > 4 && checked.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(checked.last(), Some(&good));
        assert_eq!(walk.valid_bytes, good);
        assert_eq!(walk.error.and_then(|e| e.position()), Some(7 + good));
    }

    #[test]
    fn a_pipelined_walk_stops_where_its_consumer_fails() {
        let (log, _) = long_log(120);
        let mut batches = 0;
        let mut stop_at = 0;
        let walk = LogReader::new(&log, 0).walk(CHUNK_BYTES, |info, _| {
            batches += 1;
            if batches == 50 {
                stop_at = info.position;
                return Err(Error::Corrupt {
                    position: info.position,
                    reason: "stop here".into(),
                });
            }
            Ok(())
        });
        assert_eq!(batches, 50);
        assert_eq!(walk.valid_bytes, stop_at);
        assert_eq!(walk.error.and_then(|e| e.position()), Some(stop_at));
    }

    #[test]
    fn a_pipeline_dropped_midway_stops_its_filler() {
        let (log, good) = long_log(120);
        // Leaked, so that a filler left running (the failure) never reads freed memory.
        let log: &'static [u8] = Vec::leak(log);
        let mut pipeline = unsafe { Pipeline::start(LogReader::new(log, 0), CHUNK_BYTES) };
        let (first, checked) = pipeline.next_chunk().expect("a first chunk");
        assert!(checked > 0 && checked < good);
        assert_eq!(
            first.batches().next().map(|(info, _)| info.position),
            Some(0)
        );
        pipeline.recycle(first);
        // The filler is a chunk ahead, blocked on its full channel: dropping the pipeline must
        // wake it and join it, not hang. The drop runs on a thread of its own, waited for with
        // a bound.
        let (done_tx, done_rx) = mpsc::channel();
        std::thread::spawn(move || {
            drop(pipeline);
            let _ = done_tx.send(());
        });
        assert!(
            done_rx
                .recv_timeout(std::time::Duration::from_secs(30))
                .is_ok(),
            "dropping a pipeline left its filler running"
        );
    }

    #[test]
    fn a_batch_may_end_at_the_largest_offset_but_not_past_it() {
        let records = [(Some(&b"k"[..]), Some(&b"v"[..])); 2];
        let batch = write_batch(&BatchHeader::plain(i64::MAX - 1, 1), &records).unwrap();
        let parsed = read_batches(&batch, 0);
        let offsets: Vec<i64> = parsed.batches[0].records.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, [i64::MAX - 1, i64::MAX]);
        let error = write_batch(&BatchHeader::plain(i64::MAX, 1), &records).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("invalid argument: 2 records from base offset {} run past the largest offset, 2^63-1", i64::MAX)
        );
    }

    #[test]
    fn a_header_key_that_is_not_utf8_reads_as_kafka_reads_it() {
        let headers = [("~".to_string(), Some(b"v".to_vec()))];
        let record = RecordToWrite {
            offset: 0,
            timestamp: 1,
            key: Some(b"k"),
            value: Some(b"v"),
            headers: &headers,
        };
        let mut batch = write_records(&BatchHeader::plain(0, 1), 0, None, &[record]).unwrap();
        let at = batch.iter().rposition(|&b| b == b'~').unwrap();
        batch[at] = 0xff;
        let crc = crc32c(&batch[ATTRIBUTES_OFFSET..]);
        batch[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());

        assert_eq!(valid_prefix_length(&batch), batch.len());
        let parsed = read_batches(&batch, 0);
        assert!(parsed.error.is_none());
        let headers = &parsed.batches[0].records[0].headers;
        assert_eq!(headers, &[("\u{fffd}".to_string(), Some(b"v".to_vec()))]);
    }

    #[test]
    fn valid_prefix_stops_before_a_torn_tail() {
        let a = write_batch(&BatchHeader::plain(0, 1), &[(Some(b"a"), Some(b"1"))]).unwrap();
        let b = write_batch(&BatchHeader::plain(1, 1), &[(Some(b"b"), Some(b"2"))]).unwrap();
        let mut log = a.clone();
        log.extend_from_slice(&b[..b.len() - 3]);
        let parsed = read_batches(&log, 0);
        assert_eq!(parsed.batches.len(), 1);
        assert_eq!(parsed.valid_bytes, a.len());
        assert_eq!(parsed.error.and_then(|e| e.position()), Some(a.len()));
    }

    #[test]
    fn next_valid_batch_skips_damage_and_counts_legacy_only_when_asked() {
        let a = write_batch(&BatchHeader::plain(0, 1), &[(Some(b"a"), Some(b"1"))]).unwrap();
        let b = write_batch(&BatchHeader::plain(1, 1), &[(Some(b"b"), Some(b"2"))]).unwrap();
        let mut log = a.clone();
        log.extend_from_slice(&[0x02; 40]);
        let b_at = log.len();
        log.extend_from_slice(&b);
        // Damage the first batch's records: its CRC no longer matches.
        log[a.len() - 1] ^= 0xff;
        assert_eq!(next_valid_batch(&log, 0, false), b_at);
        assert_eq!(next_valid_batch(&log, b_at, false), log.len());
        assert_eq!(next_valid_batch(&log, usize::MAX, true), log.len());

        // A magic-1 message (kafka-python's vector, offsets-log-format.md §9.2) after junk.
        let legacy =
            hex("000000000000000000000019478628c201000000015e1867abaeffffffff00000003313233");
        let mut log = vec![0x01; 30];
        log.extend_from_slice(&legacy);
        assert_eq!(next_valid_batch(&log, 0, false), log.len());
        assert_eq!(next_valid_batch(&log, 0, true), 30);
    }

    /// A magic-1 message with a right CRC-32.
    fn message(attributes: i8, offset: i64, value: &[u8]) -> Vec<u8> {
        let mut body = vec![1, attributes as u8];
        body.extend(1_000i64.to_be_bytes());
        body.extend((-1i32).to_be_bytes());
        body.extend((value.len() as i32).to_be_bytes());
        body.extend(value);
        let mut out = offset.to_be_bytes().to_vec();
        out.extend(((4 + body.len()) as i32).to_be_bytes());
        out.extend(crc32fast::hash(&body).to_be_bytes());
        out.extend(body);
        out
    }

    /// A gzip wrapper whose inner messages end early, every CRC right: the error names the
    /// wrapper's compressed value, a byte of the input, and where in the inflated messages.
    #[test]
    fn damage_inside_a_compressed_wrapper_is_named_at_a_byte_of_the_input() {
        let mut inner = message(0, 0, b"first");
        // The second message's body, after its offset and size.
        let second_body_at = inner.len() + 12;
        inner.extend(message(0, 1, b"second"));
        inner.pop();
        let wrapper = message(1, 1, &Compression::Gzip.compress(&inner));
        let value_at = wrapper.len() - Compression::Gzip.compress(&inner).len();
        let parsed = read_batches(&wrapper, 100);
        let error = parsed
            .error
            .expect("inner messages that end early are an error");
        assert_eq!(error.position(), Some(100 + value_at));
        let text = error.to_string();
        assert!(
            text.contains("decompressed data ends early")
                && text.contains(&format!("at byte {second_body_at} needs")),
            "{text}"
        );
    }

    /// offsets-log-format.md §9.2.
    #[test]
    fn kafka_python_legacy_vectors() {
        let v1 = hex("000000000000000000000019478628c201000000015e1867abaeffffffff00000003313233");
        let v0 = hex("000000000000000000000011feb01dbf0000ffffffff00000003313233");
        for (data, magic, ts) in [(v1, 1, 1_503_648_000_942), (v0, 0, -1)] {
            let parsed = read_batches(&data, 0);
            assert!(parsed.error.is_none(), "{:?}", parsed.error);
            let b = &parsed.batches[0];
            assert_eq!(b.info.magic, magic);
            assert_eq!(b.records[0].value.as_deref(), Some(&b"123"[..]));
            assert_eq!(b.records[0].key, None);
            assert_eq!(b.records[0].timestamp, ts);
            let mut bad = data.clone();
            *bad.last_mut().unwrap() ^= 1;
            assert!(
                read_batches(&bad, 0).error.is_some(),
                "CRC-32 must catch a flipped byte"
            );
        }
    }
}
