//! The one conversion from [`crate::Error`] to Python exceptions.
//!
//! `CorruptRecordError` and `UnsupportedVersionError` derive from both `GroupCoordError` and
//! `ValueError`, so callers may catch either; a corrupt-input error carries `position` (the
//! absolute byte position) and `reason`.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::Error;

create_exception!(
    groupcoord._native,
    GroupCoordError,
    PyException,
    "Base class of the errors raised by groupcoord's native core."
);

static CORRUPT_RECORD_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNSUPPORTED_VERSION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn subclass(py: Python<'_>, name: &str, doc: &str) -> PyResult<Py<PyType>> {
    let bases = PyTuple::new(
        py,
        [
            py.get_type::<GroupCoordError>(),
            py.get_type::<PyValueError>(),
        ],
    )?;
    let namespace = PyDict::new(py);
    namespace.set_item("__module__", "groupcoord._native")?;
    namespace.set_item("__doc__", doc)?;
    let cls = py.get_type::<PyType>().call1((name, bases, namespace))?;
    Ok(cls.cast_into::<PyType>()?.unbind())
}

fn corrupt_record_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    CORRUPT_RECORD_ERROR
        .get_or_try_init(py, || {
            subclass(py, "CorruptRecordError", "Truncated or corrupt log input; `position` is the byte position, `reason` what was wrong.")
        })
        .map(|t| t.bind(py))
}

fn unsupported_version_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UNSUPPORTED_VERSION_ERROR
        .get_or_try_init(py, || {
            subclass(
                py,
                "UnsupportedVersionError",
                "A record version this codec cannot write.",
            )
        })
        .map(|t| t.bind(py))
}

fn corrupt(py: Python<'_>, err: &Error) -> PyResult<PyErr> {
    let instance = corrupt_record_error(py)?.call1((err.to_string(),))?;
    instance.setattr("position", err.position())?;
    let reason = match err {
        Error::Truncated {
            needed,
            available,
            what,
            ..
        } => format!("truncated: {what} needs {needed} bytes, {available} left"),
        Error::Corrupt { reason, .. } => reason.clone(),
        other => other.to_string(),
    };
    instance.setattr("reason", reason)?;
    Ok(PyErr::from_value(instance))
}

/// An OS error as Python's own `open` raises it: `OSError(errno, strerror, filename)`, which
/// Python makes the matching subclass (`FileNotFoundError`, `IsADirectoryError`, ...).
fn os_error(py: Python<'_>, path: &str, source: &std::io::Error) -> PyErr {
    let Some(errno) = source.raw_os_error() else {
        return PyOSError::new_err(format!("{path}: {source}"));
    };
    let strerror = py
        .import("os")
        .and_then(|os| os.call_method1("strerror", (errno,)))
        .and_then(|s| s.extract::<String>())
        .unwrap_or_else(|_| source.to_string());
    PyOSError::new_err((errno, strerror, path.to_owned()))
}

impl From<Error> for PyErr {
    fn from(err: Error) -> PyErr {
        Python::attach(|py| {
            let converted = match &err {
                Error::InvalidArgument(msg) => Ok(PyValueError::new_err(msg.clone())),
                Error::InvalidRegularExpression { .. } => {
                    Ok(PyValueError::new_err(err.to_string()))
                }
                Error::IllegalState(msg) => Ok(PyRuntimeError::new_err(msg.clone())),
                Error::WrongType(msg) => Ok(PyTypeError::new_err(msg.clone())),
                Error::Truncated { .. } | Error::Corrupt { .. } => corrupt(py, &err),
                Error::UnsupportedVersion(msg) => unsupported_version_error(py)
                    .map(|cls| PyErr::from_type(cls.clone(), msg.clone())),
                Error::Io { path, source } => Ok(os_error(py, path, source)),
            };
            converted.unwrap_or_else(|e| e)
        })
    }
}

/// A `ValueError` for an argument the call does not accept, through the one conversion.
pub(crate) fn invalid_argument(message: impl Into<String>) -> PyErr {
    Error::InvalidArgument(message.into()).into()
}

/// A `TypeError` for an argument of the wrong kind, through the one conversion.
pub(crate) fn wrong_type(message: impl Into<String>) -> PyErr {
    Error::WrongType(message.into()).into()
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("GroupCoordError", py.get_type::<GroupCoordError>())?;
    m.add("CorruptRecordError", corrupt_record_error(py)?)?;
    m.add("UnsupportedVersionError", unsupported_version_error(py)?)?;
    Ok(())
}
