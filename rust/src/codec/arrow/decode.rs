//! The decode loop: one run of the input, chunk by chunk, record by record, into columns.

use crate::codec::arrow::column::Reserve;
use crate::codec::arrow::columns::Columns;
use crate::codec::batch::{Chunk, LogReader, Walk, CHUNK_BYTES};
use crate::codec::log::decode_payload;

/// Decodes `data` in order into columns sized, after the first chunk, for `expected_bytes`
/// of input like it; `pipelined`: with a second thread checking and decompressing ahead.
pub(super) fn decode_part(
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
