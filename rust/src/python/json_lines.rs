//! `iter_segment_json`: a segment's `groupcoord dump-log` lines
//! ([`crate::codec::json::lines`]) as `bytes` of about a mebibyte of whole lines at a time,
//! written with the thread detached from the interpreter while a second thread checks and
//! decompresses ahead.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::codec::json::lines::{batch_lines, record_lines};
use crate::codec::json::{string, utf16_string};
use crate::python::decode::ChunkedLog;
use crate::python::input::{partition_of, read_file, OwnedInput};

/// The lines an iteration gives at once, at least, unless the log ends: few calls into
/// Python per segment, and little memory whatever its size.
const LINES_BYTES: usize = 1 << 20;

/// What a line stands for.
enum LineOf {
    /// A record, decoded, of a log's partition.
    Record { partition: i32 },
    /// A batch as it lies (`--no-decode`).
    Batch,
}

/// A segment's `dump-log` lines, about a mebibyte of whole lines at a time. A corrupt batch
/// raises `CorruptRecordError` after the lines of every batch before it were given, or ends
/// the iteration there with `stop_at_corruption`.
#[pyclass(module = "groupcoord._native")]
pub struct JsonLineIterator {
    log: ChunkedLog,
    /// The `file` member of every line, as JSON.
    file: Vec<u8>,
    line_of: LineOf,
    /// The lines of the iteration under way: one buffer for them all, whose pages are
    /// faulted in once rather than at each iteration.
    out: Vec<u8>,
}

#[pymethods]
impl JsonLineIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(
        mut slf: PyRefMut<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let this = &mut *slf;
        let (file, line_of, out) = (&this.file, &this.line_of, &mut this.out);
        out.clear();
        while out.len() < LINES_BYTES {
            let filled = this.log.next_chunk(py, |py, chunk| {
                Ok(py.detach(|| match line_of {
                    LineOf::Record { partition } => record_lines(out, file, *partition, chunk),
                    LineOf::Batch => batch_lines(out, file, chunk),
                }))
            })?;
            if !filled {
                break;
            }
        }
        if out.is_empty() {
            return this.log.end(py);
        }
        Ok(Some(PyBytes::new(py, out)))
    }
}

/// A string as JSON, whatever it holds: a path decoded from bytes that are not UTF-8 holds
/// lone surrogates (Python's `surrogateescape`), which Python's encoder writes as escapes.
fn json_of(text: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    let mut out = Vec::new();
    match text.to_str() {
        Ok(text) => string(&mut out, text),
        Err(_) => {
            let encoded = text.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
            let units: Vec<u16> = encoded
                .cast::<PyBytes>()?
                .as_bytes()
                .chunks_exact(2)
                .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
                .collect();
            utf16_string(&mut out, &units);
        }
    }
    Ok(out)
}

/// `groupcoord dump-log`'s lines of a segment file (read whole when called): one per record,
/// or per batch unless `decode`; each line's `file` is `str(path)`, and the partition
/// defaults to the N of its `__consumer_offsets-N` directory.
#[pyfunction]
#[pyo3(signature = (path, *, decode = true, partition = None, stop_at_corruption = false))]
pub(super) fn iter_segment_json(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
    decode: bool,
    partition: Option<i32>,
    stop_at_corruption: bool,
) -> PyResult<JsonLineIterator> {
    let file = py.import("os")?.call_method1("fsdecode", (path,))?;
    let file = json_of(file.cast::<PyString>()?)?;
    let path: PathBuf = path.extract()?;
    let data = OwnedInput::Owned(read_file(py, &path)?);
    let line_of = match decode {
        true => LineOf::Record {
            partition: partition.unwrap_or_else(|| partition_of(&path)),
        },
        false => LineOf::Batch,
    };
    Ok(JsonLineIterator {
        log: ChunkedLog::new(data, Some(path), 0, stop_at_corruption),
        file,
        line_of,
        out: Vec::new(),
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<JsonLineIterator>()?;
    m.add_function(wrap_pyfunction!(iter_segment_json, m)?)?;
    Ok(())
}
