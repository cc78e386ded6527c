//! Input bytes for the codec: borrowed from immutable `bytes`, else copied; the input an
//! iterator keeps between calls; segment files read.

use std::path::PathBuf;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::Error;
use crate::python::errors::wrong_type;

/// Input bytes: borrowed from `bytes` and from a contiguous `memoryview` of `bytes` (both
/// immutable), copied from any other buffer (bytearray, mmap, ...), whose contents another
/// thread may change while a decode without the GIL reads them.
pub(super) enum Input<'py> {
    Borrowed(Bound<'py, PyBytes>),
    View(ImmutableView),
    Owned(Vec<u8>),
}

/// A contiguous, read-only export of a `bytes` object (through a `memoryview`): held, it keeps
/// the bytes alive and unchanged, so they are read where they lie.
pub(super) struct ImmutableView(PyBuffer<u8>);

impl ImmutableView {
    pub(super) fn of(obj: &Bound<'_, PyAny>) -> Option<Self> {
        let view = obj.cast::<pyo3::types::PyMemoryView>().ok()?;
        let base = view.getattr("obj").ok()?;
        if !base.is_instance_of::<PyBytes>() {
            return None;
        }
        let buffer = PyBuffer::<u8>::get(obj).ok()?;
        (buffer.readonly() && buffer.is_c_contiguous()).then_some(ImmutableView(buffer))
    }

    pub(super) fn as_slice(&self) -> &[u8] {
        let len = self.0.item_count();
        if len == 0 {
            return &[];
        }
        // SAFETY: the buffer is a contiguous view of `len` bytes of a `bytes` object, which
        // cannot change, and which the held export keeps alive for as long as `self`.
        unsafe { std::slice::from_raw_parts(self.0.buf_ptr() as *const u8, len) }
    }
}

impl Input<'_> {
    pub(super) fn from_py<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Input<'py>> {
        if let Ok(bytes) = obj.cast::<PyBytes>() {
            return Ok(Input::Borrowed(bytes.clone()));
        }
        if let Some(view) = ImmutableView::of(obj) {
            return Ok(Input::View(view));
        }
        if let Ok(buffer) = PyBuffer::<u8>::get(obj) {
            return Ok(Input::Owned(buffer.to_vec(obj.py())?));
        }
        // Signed bytes (`array('b')`, `memoryview.cast('b')`) are bytes too.
        let buffer = PyBuffer::<i8>::get(obj).map_err(|_| not_a_byte_buffer(obj))?;
        let signed = buffer.to_vec(obj.py())?;
        Ok(Input::Owned(signed.into_iter().map(|b| b as u8).collect()))
    }

    pub(super) fn as_slice(&self) -> &[u8] {
        match self {
            Input::Borrowed(b) => b.as_bytes(),
            Input::View(v) => v.as_slice(),
            Input::Owned(v) => v,
        }
    }
}

/// The error for input that is no buffer of bytes: naming the format of a buffer of other
/// items (`memoryview.cast('I')`, an `array('I')`), passing on why a buffer cannot be read (a
/// released memoryview), else naming the type.
pub(super) fn not_a_byte_buffer(obj: &Bound<'_, PyAny>) -> PyErr {
    let py = obj.py();
    let view = py
        .import("builtins")
        .and_then(|builtins| builtins.getattr("memoryview"))
        .and_then(|memoryview| memoryview.call1((obj,)));
    match view {
        Ok(view) => {
            let format = view
                .getattr("format")
                .and_then(|f| f.extract::<String>())
                .unwrap_or_default();
            wrong_type(format!(
                "expected a buffer of bytes, not a buffer of format '{format}' \
                 (memoryview(data).cast('B') reads its bytes)"
            ))
        }
        Err(err) if !err.is_instance_of::<PyTypeError>(py) => err,
        Err(_) => wrong_type(format!(
            "expected bytes, bytearray or memoryview, not {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        )),
    }
}

pub(super) fn bytes<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, data)
}

pub(super) fn opt_bytes<'py>(py: Python<'py>, data: Option<&[u8]>) -> Option<Bound<'py, PyBytes>> {
    data.map(|d| PyBytes::new(py, d))
}

/// The input an iterator keeps: the caller's `bytes` or view of `bytes`, or a copy of any
/// other buffer, or a segment file's contents.
pub(super) enum OwnedInput {
    Bytes(Py<PyBytes>),
    View(ImmutableView),
    Owned(Vec<u8>),
}

impl OwnedInput {
    pub(super) fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(match Input::from_py(obj)? {
            Input::Borrowed(bytes) => OwnedInput::Bytes(bytes.unbind()),
            Input::View(view) => OwnedInput::View(view),
            Input::Owned(data) => OwnedInput::Owned(data),
        })
    }

    pub(super) fn as_slice<'a>(&'a self, py: Python<'a>) -> &'a [u8] {
        match self {
            OwnedInput::Bytes(b) => b.as_bytes(py),
            OwnedInput::View(v) => v.as_slice(),
            OwnedInput::Owned(v) => v,
        }
    }

    /// Lets the input go once an iterator is done with it: a `memoryview` can then be released.
    pub(super) fn release(&mut self) {
        *self = OwnedInput::Owned(Vec::new());
    }
}

/// A segment file's bytes, read with the thread detached from the interpreter: other threads
/// run, and a slow disk or a pipe holds up only this one.
pub(super) fn read_file(py: Python<'_>, path: &std::path::Path) -> PyResult<Vec<u8>> {
    py.detach(|| std::fs::read(path)).map_err(|source| {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
        .into()
    })
}

/// The partition number of a `__consumer_offsets-N` directory holding `path`, else -1. A
/// relative path is taken from the working directory, `..` undoing the component before it
/// (symbolic links are not followed: the directory is the one named).
pub(super) fn partition_of(path: &std::path::Path) -> i32 {
    use std::path::Component;
    let Ok(absolute) = std::path::absolute(path) else {
        return -1;
    };
    let mut named = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                named.pop();
            }
            Component::CurDir => {}
            other => named.push(other),
        }
    }
    named
        .parent()
        .and_then(|dir| dir.file_name())
        .and_then(|name| name.to_str())
        .and_then(|name| name.strip_prefix("__consumer_offsets-"))
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|n| n.parse().ok())
        .unwrap_or(-1)
}

pub(super) fn with_path(py: Python<'_>, err: PyErr, path: &std::path::Path) -> PyErr {
    let note = format!("in {}", path.display());
    let _ = err.value(py).call_method1("add_note", (note,));
    err
}
