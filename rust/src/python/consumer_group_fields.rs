//! Python objects as the loosely typed fields a consumer-group value is built from
//! ([`crate::codec::consumer_group_fields`], which checks them against the schema).

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyInt, PyList, PyMapping, PySequence, PyString, PyTuple,
    PyType,
};

use crate::codec::consumer_group_fields::Loose;
use crate::python::errors::{invalid_argument, wrong_type};

/// Deeper than any declared schema nests (a struct in an array in a struct...), so that a
/// self-containing list is refused rather than followed until the stack runs out.
const MAX_DEPTH: usize = 16;

static UUID_CLASS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `obj` as a [`Loose`] value: None, int (not bool), str, bytes or bytearray, `uuid.UUID`, a
/// mapping with str keys, or any other sequence; anything else is kept as its type's name for
/// the schema walk to refuse where it is.
pub(super) fn loose(obj: &Bound<'_, PyAny>) -> PyResult<Loose> {
    loose_at(obj, 0)
}

fn loose_at(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Loose> {
    if depth > MAX_DEPTH {
        return Err(invalid_argument(format!(
            "fields nested more than {MAX_DEPTH} deep: no consumer-group schema nests so"
        )));
    }
    let py = obj.py();
    if obj.is_none() {
        return Ok(Loose::Null);
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Loose::Other("bool".into()));
    }
    if obj.is_instance_of::<PyInt>() {
        return match obj.extract::<i64>() {
            Ok(v) => Ok(Loose::Int(v)),
            Err(e) if e.is_instance_of::<PyOverflowError>(py) => {
                Ok(Loose::HugeInt(obj.str()?.to_string()))
            }
            Err(e) => Err(e),
        };
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Loose::Str(s.to_str()?.to_owned()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Loose::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Loose::Bytes(b.to_vec()));
    }
    let items = |seq: Bound<'_, PyAny>| -> PyResult<Loose> {
        seq.try_iter()?
            .map(|item| loose_at(&item?, depth + 1))
            .collect::<PyResult<Vec<_>>>()
            .map(Loose::List)
    };
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return items(obj.clone());
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return entries(d.items().into_any(), depth);
    }
    let uuid_class = UUID_CLASS.get_or_try_init(py, || -> PyResult<_> {
        Ok(py
            .import("uuid")?
            .getattr("UUID")?
            .cast_into::<PyType>()?
            .unbind())
    })?;
    if obj.is_instance(uuid_class.bind(py))? {
        let bytes: [u8; 16] = obj.getattr("bytes")?.extract()?;
        return Ok(Loose::Uuid(bytes));
    }
    if let Ok(m) = obj.cast::<PyMapping>() {
        return entries(m.items()?.into_any(), depth);
    }
    if obj.cast::<PySequence>().is_ok() {
        return items(obj.clone());
    }
    Ok(Loose::Other(obj.get_type().name()?.to_string()))
}

/// The `(name, value)` pairs of a mapping's items.
fn entries(items: Bound<'_, PyAny>, depth: usize) -> PyResult<Loose> {
    let mut out = Vec::new();
    for item in items.try_iter()? {
        let (key, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let Ok(name) = key.cast::<PyString>() else {
            return Err(wrong_type(format!(
                "field names are str, not {}",
                key.repr()?
            )));
        };
        out.push((name.to_str()?.to_owned(), loose_at(&value, depth + 1)?));
    }
    Ok(Loose::Map(out))
}
