//! A whole log walked: every batch with its records ([`LogReader::walk`]), or copied out at
//! once, how much of it is valid, and where a valid batch starts again after damage.

use crate::codec::batch::frames::frames;
use crate::codec::batch::header::MAGIC_OFFSET;
use crate::codec::batch::reader::{LogReader, Walk, CHUNK_BYTES};
use crate::codec::batch::record::Records;
use crate::codec::record_batch::{Batch, BatchInfo};
use crate::error::{Error, Result};

impl<'d> LogReader<'d> {
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
