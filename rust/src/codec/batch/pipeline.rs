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
