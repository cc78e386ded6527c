//! Walking a log buffer batch by batch on one thread: [`LogReader::fill`] checks a chunk of
//! batches and decompresses their records into a buffer reused from chunk to chunk, whose
//! records [`Chunk::batches`] then hands out to parse.

use crate::codec::batch::header::{check_batch, Body, RECORD_BATCH_OVERHEAD};
use crate::codec::batch::record::Records;
use crate::codec::compression::Decompressor;
use crate::codec::primitives::Reader;
use crate::codec::record_batch::BatchInfo;
use crate::error::{Error, Result};

/// Where a walk over a log buffer ended.
#[derive(Debug)]
pub struct Walk {
    /// Bytes of whole batches, from the start of the input, that were valid and processed.
    pub valid_bytes: usize,
    /// What stopped the walk before the end of the input, if anything.
    pub error: Option<Error>,
}

/// How many bytes of records a [`Chunk`] gathers by default: enough to amortize a pass, small
/// enough to stay in cache.
pub const CHUNK_BYTES: usize = 256 << 10;

/// Walks a log buffer batch by batch. [`LogReader::fill`] checks each batch's framing and CRC
/// and decompresses its records into the chunk's buffer, which is reused from one chunk to the
/// next; [`Records`] then parses the records lazily, borrowing keys and values.
pub struct LogReader<'d> {
    pub(super) data: &'d [u8],
    /// The absolute position of `data[0]`.
    pub(super) position: usize,
    /// Bytes of `data` checked so far (whole batches).
    pub(super) at: usize,
    pub(super) error: Option<Error>,
    pub(super) decompressor: Decompressor,
}

/// Batches checked by [`LogReader::fill`], their records ready to parse.
#[derive(Default)]
pub struct Chunk<'d> {
    data: &'d [u8],
    batches: Vec<(BatchInfo, Body)>,
    decompressed: Vec<u8>,
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
    pub(super) at: usize,
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
