//! A log buffer cut by its batches' length prefixes alone, nothing checked: windows and runs
//! of whole batches, a batch's compression, where a batch starts near a position, and the
//! benchmark ceilings (every CRC, every decompression).

use std::ops::Range;

use crate::codec::batch::header::{
    crc32c, ATTRIBUTES_OFFSET, COMPRESSION_MASK, CRC_OFFSET, MAGIC_OFFSET, MIN_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
};
use crate::codec::compression::{Compression, Decompressor};
use crate::codec::record_batch::{LENGTH_OFFSET, LOG_OVERHEAD};
use crate::error::{Error, Result};

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

/// The batches of `data` as the length prefixes cut them, nothing checked; stops where a
/// prefix is short or runs past the end.
pub fn frames(data: &[u8]) -> impl Iterator<Item = &[u8]> {
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
