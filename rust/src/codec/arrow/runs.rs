//! Runs of whole batches decoded side by side: where the input is cut, how many threads a
//! run takes, and the runs' columns joined in order.

use std::ops::Range;

use crate::codec::arrow::columns::Columns;
use crate::codec::arrow::decode::decode_part;
use crate::codec::batch::{
    batch_start_near, first_compression, split_at_batches, Walk, MAGIC_OFFSET,
};
use crate::codec::compression::Compression;

/// The least input a run of [`decode_arrow`](super::decode_arrow) is given: below it, handing
/// the run to another thread and copying its rows back cost more than the thread saves.
pub const MIN_RUN_BYTES: usize = 8 << 20;

pub(super) fn decode_columns(
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
pub(super) fn decode_runs(
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
pub(super) const GUESS_WINDOW: usize = 1 << 20;

/// Runs of one thread each for an input of magic-2 batches, uncompressed, lz4 or snappy,
/// cut at batches found by their bytes near equal shares ([`batch_start_near`]): the second
/// run starts at once, where [`split_at_batches`] would first walk the length prefixes of
/// half the input (1.2 ms of a 36 ms decode of 100 MB on two threads, each prefix a wait on
/// memory). `None` where the walk is needed: one run, pipelined runs, legacy batches, or no
/// batch found near a share. A cut that is not where the log's batches end (a record holding
/// a whole batch in its value) only costs time: [`decode_runs`] decodes on past it.
pub(super) fn guess_runs(
    data: &[u8],
    threads: usize,
    min_run_bytes: usize,
) -> Option<Vec<Range<usize>>> {
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
pub(super) fn plan_runs(
    data: &[u8],
    threads: usize,
    min_run_bytes: usize,
) -> (Vec<Range<usize>>, bool) {
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
