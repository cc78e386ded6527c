//! Decoding a log into record objects: all at once (`decode_records`) or a chunk at a time
//! (`iter_records`, `iter_batches`), checking and decompressing batches with the thread
//! detached from the interpreter.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::codec::batch;
use crate::codec::batch::{
    BatchInfo, LogReader, Pipeline, ReaderState, RecordRef, Records, CHUNK_BYTES,
};
use crate::codec::log::{decode_payload, Payload};
use crate::error::Error;
use crate::python::batch_classes::{batch_to_py, OffsetsRecord, RecordBatch};
use crate::python::input::with_path;
use crate::python::input::OwnedInput;
use crate::python::record_objects::RecordObjects;

/// The Python object of one record, built straight from its borrowed key and value.
pub(super) fn record_object(
    py: Python<'_>,
    objects: &mut RecordObjects,
    partition: i32,
    batch: &BatchInfo,
    record: &RecordRef<'_>,
    payload: Payload<'_>,
) -> PyResult<OffsetsRecord> {
    let (control, key, value) = match payload {
        Payload::Control(control) => (Some(control.name()), None, None),
        Payload::Data { key, value } => (
            None,
            Some(objects.key(py, key)?),
            value.map(|v| objects.value(py, v)).transpose()?,
        ),
    };
    Ok(OffsetsRecord {
        partition,
        offset: record.offset,
        timestamp: record.timestamp,
        batch_position: batch.position,
        producer_id: batch.producer_id,
        producer_epoch: batch.producer_epoch,
        is_transactional: batch.is_transactional,
        control,
        key,
        value,
    })
}

/// Appends the records of one batch to `out`. The outer result carries Python's errors
/// (memory), the inner one a corrupt record; then the batch's records are taken out again.
pub(super) fn append_batch(
    py: Python<'_>,
    out: &mut Vec<Py<PyAny>>,
    objects: &mut RecordObjects,
    partition: i32,
    batch: &BatchInfo,
    records: Records<'_>,
) -> PyResult<Result<(), Error>> {
    let before = out.len();
    for record in records {
        let decoded = record
            .and_then(|record| decode_payload(batch, &record).map(|payload| (record, payload)));
        match decoded {
            Ok((record, payload)) => out.push(
                Py::new(
                    py,
                    record_object(py, objects, partition, batch, &record, payload)?,
                )?
                .into_any(),
            ),
            Err(error) => {
                out.truncate(before);
                return Ok(Err(error));
            }
        }
    }
    Ok(Ok(()))
}

/// A log read a chunk of batches at a time, keeping no borrow of its input between chunks:
/// what the iterators of `iter_records`, `iter_segment` and `iter_segment_json` are made of.
/// Checking and decompressing run with the thread detached from the interpreter (on a second
/// thread, a chunk ahead, for a long log); each chunk is then handed to the caller with it
/// attached.
pub(super) struct ChunkedDecode {
    position: usize,
    source: ChunkSource,
    /// The corrupt batch or record that ended the decode.
    error: Option<Error>,
    finished: bool,
}

/// Where a [`ChunkedDecode`] gets its chunks.
pub(super) enum ChunkSource {
    /// Before the first chunk, when the input's length decides which source it gets.
    Unstarted,
    /// Checked and decompressed when asked for: where the reader stopped.
    Serial(ReaderState),
    /// Checked and decompressed a chunk ahead on a second thread, from
    /// [`batch::PIPELINE_BYTES`] of input on. (The mutex only makes the iterator `Sync`: it is
    /// reached through `&mut` and never locked.)
    Pipelined(std::sync::Mutex<Pipeline>),
    /// A pipeline finished.
    Stopped,
}

impl ChunkedDecode {
    pub(super) fn new(position: usize) -> Self {
        ChunkedDecode {
            position,
            source: ChunkSource::Unstarted,
            error: None,
            finished: false,
        }
    }

    /// Hands the next chunk of `data` to `consume`, which returns the corrupt record that
    /// stopped it, if one did; false once the log is done, at its end or at a corrupt batch or
    /// record (kept in `error`).
    ///
    /// # Safety
    /// `data` is the same buffer at every call, alive and unchanged until
    /// [`ChunkedDecode::stop`] has run: a second thread may be reading it between calls.
    pub(super) unsafe fn next_chunk(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        consume: impl FnOnce(Python<'_>, &batch::Chunk<'_>) -> PyResult<Option<Error>>,
    ) -> PyResult<bool> {
        if self.finished {
            return Ok(false);
        }
        if let ChunkSource::Unstarted = self.source {
            let reader = LogReader::new(data, self.position);
            self.source = if reader.worth_a_pipeline() {
                // SAFETY: the caller keeps `data` alive and unchanged until `stop` (above).
                ChunkSource::Pipelined(unsafe { Pipeline::start(reader, CHUNK_BYTES) }.into())
            } else {
                ChunkSource::Serial(ReaderState::default())
            };
        }
        // The chunk consumed, and the corrupt batch or record that ended it, if one did.
        let (filled, error) = match &mut self.source {
            ChunkSource::Pipelined(pipeline) => {
                let pipeline = pipeline.get_mut().unwrap_or_else(|e| e.into_inner());
                match py.detach(|| pipeline.next_chunk()) {
                    Some((chunk, _)) => {
                        let appended = consume(py, &chunk);
                        pipeline.recycle(chunk);
                        (true, appended)
                    }
                    None => (false, Ok(self.stop())),
                }
            }
            ChunkSource::Serial(state) => {
                let (mut reader, mut chunk) =
                    LogReader::resume(data, self.position, std::mem::take(state));
                let filled = py.detach(|| reader.fill(&mut chunk, CHUNK_BYTES));
                let appended = consume(py, &chunk);
                let (kept, error) = reader.suspend(chunk);
                *state = kept;
                (filled, appended.map(|corrupt| corrupt.or(error)))
            }
            ChunkSource::Unstarted | ChunkSource::Stopped => {
                unreachable!("a decode is started above and stopped only once finished")
            }
        };
        let error = error.inspect_err(|_| self.finished = true)?;
        self.error = error;
        self.finished = !filled || self.error.is_some();
        if self.finished {
            self.stop();
        }
        Ok(filled)
    }

    /// Ends a pipelined decode's second thread, after which the input is no longer read; the
    /// corrupt batch that stopped its reader, if one did.
    pub(super) fn stop(&mut self) -> Option<Error> {
        match std::mem::replace(&mut self.source, ChunkSource::Stopped) {
            ChunkSource::Pipelined(pipeline) => {
                pipeline
                    .into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .finish()
                    .error
            }
            source => {
                self.source = source;
                None
            }
        }
    }
}

/// Appends the records of `chunk` to `out`; the corrupt record that stopped it, if one did.
pub(super) fn append_chunk(
    py: Python<'_>,
    objects: &mut RecordObjects,
    partition: i32,
    chunk: &batch::Chunk<'_>,
    out: &mut Vec<Py<PyAny>>,
) -> PyResult<Option<Error>> {
    for (batch, records) in chunk.batches() {
        if let Err(error) = append_batch(py, out, objects, partition, batch, records)? {
            return Ok(Some(error));
        }
    }
    Ok(None)
}

/// Decodes every record of a log into a list of Python objects. Checking and decompressing run
/// without the GIL (on a second thread for a long log, see [`LogReader::chunks`]); the GIL is
/// taken a chunk at a time to build the objects.
pub(super) fn log_to_py<'py>(
    py: Python<'py>,
    data: &[u8],
    position: usize,
    partition: i32,
    stop_at_corruption: bool,
) -> PyResult<Bound<'py, PyList>> {
    let mut objects = RecordObjects::for_log();
    let mut out = Vec::new();
    let mut failure = None;
    let walk = py.detach(|| {
        LogReader::new(data, position).chunks(CHUNK_BYTES, |chunk, _| {
            Python::attach(|py| {
                for (batch, records) in chunk.batches() {
                    let stop =
                        match append_batch(py, &mut out, &mut objects, partition, batch, records) {
                            Ok(Ok(())) => continue,
                            Ok(Err(corrupt)) => Some(corrupt),
                            Err(raised) => {
                                failure = Some(raised);
                                None
                            }
                        };
                    return Err(batch::Walk {
                        valid_bytes: batch.position - position,
                        error: stop,
                    });
                }
                Ok(())
            })
        })
    });
    if let Some(raised) = failure {
        return Err(raised);
    }
    match walk.error {
        Some(error) if !stop_at_corruption => Err(error.into()),
        _ => PyList::new(py, out),
    }
}

/// A log that an iterator reads a chunk at a time: its input, held whole and unchanged until
/// the read is done, and where the read stands.
pub(super) struct ChunkedLog {
    data: OwnedInput,
    path: Option<PathBuf>,
    decode: ChunkedDecode,
    stop_at_corruption: bool,
}

impl ChunkedLog {
    pub(super) fn new(
        data: OwnedInput,
        path: Option<PathBuf>,
        position: usize,
        stop_at_corruption: bool,
    ) -> Self {
        ChunkedLog {
            data,
            path,
            decode: ChunkedDecode::new(position),
            stop_at_corruption,
        }
    }

    /// Hands the next chunk to `consume` (see [`ChunkedDecode::next_chunk`]); false once the
    /// log is done, when [`ChunkedLog::end`] says how.
    pub(super) fn next_chunk(
        &mut self,
        py: Python<'_>,
        consume: impl FnOnce(Python<'_>, &batch::Chunk<'_>) -> PyResult<Option<Error>>,
    ) -> PyResult<bool> {
        // SAFETY: `data` is held whole and unchanged until the decode is stopped: in `end`,
        // before `data` is let go, and in `Drop`.
        unsafe { self.decode.next_chunk(py, self.data.as_slice(py), consume) }
    }

    /// How the iteration ends once [`ChunkedLog::next_chunk`] is false: raising the corruption
    /// that stopped the log (see [`end_of_log`]), or quietly.
    pub(super) fn end<T>(&mut self, py: Python<'_>) -> PyResult<Option<T>> {
        // Finished, the decode has stopped already, unless an error ended the chunk before
        // (a failed allocation): stopping is then what keeps `data` unread.
        self.decode.stop();
        self.data.release();
        end_of_log(
            py,
            self.decode.error.take(),
            self.stop_at_corruption,
            self.path.as_deref(),
        )
    }
}

impl Drop for ChunkedLog {
    fn drop(&mut self) {
        self.decode.stop();
    }
}

/// The decoded records of a log, one at a time: batches are decoded a chunk (about 256 KB of
/// records) at a time, so the objects alive at once stay few whatever the log's size (the
/// input itself is held whole). A long log is checked and decompressed a chunk ahead on a
/// second thread. A corrupt batch raises `CorruptRecordError` after
/// every record before it was given, or ends the iteration there with `stop_at_corruption`.
#[pyclass(module = "groupcoord._native")]
pub struct RecordIterator {
    log: ChunkedLog,
    partition: i32,
    objects: RecordObjects,
    ready: std::vec::IntoIter<Py<PyAny>>,
}

impl RecordIterator {
    pub(super) fn new(
        data: OwnedInput,
        path: Option<PathBuf>,
        position: usize,
        partition: i32,
        stop_at_corruption: bool,
    ) -> Self {
        RecordIterator {
            log: ChunkedLog::new(data, path, position, stop_at_corruption),
            partition,
            objects: RecordObjects::for_log(),
            ready: Vec::new().into_iter(),
        }
    }
}

#[pymethods]
impl RecordIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(mut slf: PyRefMut<'_, Self>, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let this = &mut *slf;
        loop {
            if let Some(record) = this.ready.next() {
                return Ok(Some(record));
            }
            let mut out = Vec::new();
            let (objects, partition) = (&mut this.objects, this.partition);
            let filled = this.log.next_chunk(py, |py, chunk| {
                append_chunk(py, objects, partition, chunk, &mut out)
            })?;
            if !filled {
                return this.log.end(py);
            }
            this.ready = out.into_iter();
        }
    }
}

/// The batches of a log, one at a time: they are parsed a window (about 256 KB of input) at a
/// time, so the batch objects alive at once stay few whatever the log's size (the input itself
/// is held whole). A corrupt batch raises `CorruptRecordError` after every batch before it was
/// given, or ends the iteration there with `stop_at_corruption`.
#[pyclass(module = "groupcoord._native")]
pub struct BatchIterator {
    data: OwnedInput,
    path: Option<PathBuf>,
    /// The absolute position of the input's first byte.
    position: usize,
    /// Where in the input the next window starts.
    next: usize,
    stop_at_corruption: bool,
    ready: std::vec::IntoIter<Py<RecordBatch>>,
    /// The corrupt batch that ended the input, raised once the batches before it are given.
    error: Option<Error>,
}

impl BatchIterator {
    pub(super) fn new(
        data: OwnedInput,
        path: Option<PathBuf>,
        position: usize,
        stop_at_corruption: bool,
    ) -> Self {
        BatchIterator {
            data,
            path,
            position,
            next: 0,
            stop_at_corruption,
            ready: Vec::new().into_iter(),
            error: None,
        }
    }
}

#[pymethods]
impl BatchIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(mut slf: PyRefMut<'_, Self>, py: Python<'_>) -> PyResult<Option<Py<RecordBatch>>> {
        let this = &mut *slf;
        loop {
            if let Some(batch) = this.ready.next() {
                return Ok(Some(batch));
            }
            let data = this.data.as_slice(py);
            if this.next == data.len() {
                this.data.release();
                this.next = 0;
                return end_of_log(
                    py,
                    this.error.take(),
                    this.stop_at_corruption,
                    this.path.as_deref(),
                );
            }
            let rest = &data[this.next..];
            let window = &rest[..batch::window_of_batches(rest, CHUNK_BYTES)];
            let at = this.position + this.next;
            let parsed = py.detach(|| batch::read_batches(window, at));
            this.next = match parsed.error {
                Some(error) => {
                    this.error = Some(error);
                    data.len()
                }
                None => this.next + window.len(),
            };
            this.ready = parsed
                .batches
                .into_iter()
                .map(|b| Py::new(py, batch_to_py(py, b)?))
                .collect::<PyResult<Vec<_>>>()?
                .into_iter();
        }
    }
}

/// How an iterator over a log ends: raising the corruption that stopped it (once, naming the
/// segment file if it read one), or quietly with `stop_at_corruption` or at the log's end.
pub(super) fn end_of_log<T>(
    py: Python<'_>,
    error: Option<Error>,
    stop_at_corruption: bool,
    path: Option<&std::path::Path>,
) -> PyResult<Option<T>> {
    match (error, stop_at_corruption) {
        (Some(error), false) => {
            let err = error.into();
            Err(match path {
                Some(path) => with_path(py, err, path),
                None => err,
            })
        }
        _ => Ok(None),
    }
}
