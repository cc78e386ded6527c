//! A long log read on two threads: a [`Pipeline`] checks and decompresses the next chunk of
//! batches while the caller parses this one.

use std::sync::mpsc;

use crate::codec::batch::reader::{Chunk, LogReader, Walk, CHUNK_BYTES};

/// From this much input on, [`LogReader::chunks`] checks and decompresses on a second thread;
/// below it, starting a thread costs more than the overlap saves.
pub const PIPELINE_BYTES: usize = 4 * CHUNK_BYTES;

impl<'d> LogReader<'d> {
    /// Hands `consume` every chunk in order, with the bytes of the input checked up to the
    /// chunk's end; stops where `consume` returns a walk, or at the input's end or first
    /// corrupt batch. From [`PIPELINE_BYTES`] of input on, a second thread checks and
    /// decompresses the next chunk while `consume` runs on this one, so decompressing a log
    /// overlaps parsing it. That thread is scoped to this call: it is joined before the call
    /// returns or unwinds, while the input is still borrowed.
    pub fn chunks(
        self,
        budget: usize,
        mut consume: impl FnMut(&Chunk<'d>, usize) -> std::result::Result<(), Walk>,
    ) -> Walk {
        if !self.worth_a_pipeline() {
            return self.chunks_on_this_thread(budget, consume);
        }
        std::thread::scope(|scope| {
            let (filled_tx, filled_rx) = mpsc::sync_channel(1);
            let (spent_tx, spent_rx) = mpsc::channel();
            let filler = scope.spawn(move || fill_ahead(self, budget, filled_tx, spent_rx));
            let mut stopped = None;
            for (chunk, checked) in &filled_rx {
                if let Err(walk) = consume(&chunk, checked) {
                    stopped = Some(walk);
                    break;
                }
                let _ = spent_tx.send(chunk);
            }
            // Dropping the receiver ends a filler waiting to send.
            drop(filled_rx);
            match filler.join() {
                Ok(reader) => stopped.unwrap_or_else(|| reader.finish()),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        })
    }

    /// Whether what is left to read is long enough for [`Pipeline`]'s second thread to pay.
    pub fn worth_a_pipeline(&self) -> bool {
        self.data.len() - self.at >= PIPELINE_BYTES
    }
}

/// The second thread of a pipeline: fills chunks of at most `budget` bytes of records and
/// sends each with the bytes checked up to its end, one waiting at most, refilling the chunks
/// given back on `spent`; stops at the input's end, the first corrupt batch, or when the
/// receiver is gone. Returns the reader, which says where its walk ended.
fn fill_ahead<'d>(
    mut reader: LogReader<'d>,
    budget: usize,
    filled: mpsc::SyncSender<(Chunk<'d>, usize)>,
    spent: mpsc::Receiver<Chunk<'d>>,
) -> LogReader<'d> {
    let mut chunk = Chunk::default();
    while reader.fill(&mut chunk, budget) {
        if filled.send((chunk, reader.at)).is_err() {
            break;
        }
        chunk = spent.try_recv().unwrap_or_default();
    }
    reader
}

/// A [`LogReader`] on a thread of its own, checking and decompressing one chunk ahead of its
/// caller, for a caller that keeps it between calls and so cannot scope the thread to one
/// (a Python iterator; [`LogReader::chunks`] runs the same filler on a scoped thread). One
/// chunk waits while the next is filled; chunks given back are refilled, so that their
/// buffers are reused.
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
        let LogReader {
            data,
            position,
            at,
            error,
            decompressor,
        } = reader;
        // SAFETY: only the lifetime of `data` changes. The filler thread reads `data`, and the
        // chunks it hands out point into it, only until the thread is joined (by `finish`, or
        // on drop); the caller keeps `data` alive and unchanged until then, and uses no chunk
        // after (the contract above).
        let data: &'static [u8] = unsafe { &*std::ptr::from_ref(data) };
        let reader = LogReader {
            data,
            position,
            at,
            error,
            decompressor,
        };
        let (filled_tx, filled_rx) = mpsc::sync_channel(1);
        let (spent_tx, spent_rx) = mpsc::channel();
        let filler = std::thread::spawn(move || fill_ahead(reader, budget, filled_tx, spent_rx));
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
