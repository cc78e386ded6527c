//! The Python protocol every record class shares: `__repr__`, `__eq__`, `__hash__`,
//! `__reduce__` (pickle and `copy`) and `to_dict`, written once here over [`RecordClass`],
//! whose implementations `scripts/generate_records.py` writes from the records' declaration
//! (`record_methods.rs`).
//!
//! A class's `#[pymethods]` block is wrapped in [`record_class!`], which adds the shared
//! methods to the class's own (constructor, getters).

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::codec::consumer_group::{self, Datum};
use crate::python::classic_records::PyMemberMetadata;

/// What a record class's shared Python methods are made of.
pub(crate) trait RecordClass {
    /// The constructor's arguments, in its order: `__reduce__` makes the object again from
    /// them, and classes compared by them hash and compare this tuple.
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>>;
    fn repr(&self, py: Python<'_>) -> PyResult<String>;
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>>;
}

/// Adds the shared methods to a record class's `#[pymethods]`:
/// `record_class!(by_fields, T { .. })` compares and hashes the tuple of
/// [`RecordClass::fields`]; `record_class!(by_rust, T { .. })` leaves that to the Rust
/// struct's `PartialEq` and `Hash` (`pyclass(eq, hash)`); `by_rust_own_reduce` also leaves
/// `__reduce__` to the class.
macro_rules! record_class {
    (by_fields, $ty:ty { $($body:tt)* }) => {
        #[pymethods]
        impl $ty {
            $($body)*

            fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
                $crate::python::record_class::fields_equal(
                    self,
                    other,
                    <Self as $crate::python::record_class::RecordClass>::fields,
                )
            }

            fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
                $crate::python::record_class::RecordClass::fields(self, py)?.hash()
            }

            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<$crate::python::record_class::Reduced<'py>> {
                $crate::python::record_class::reduce_by_constructor(slf)
            }

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                $crate::python::record_class::RecordClass::repr(self, py)
            }

            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
                $crate::python::record_class::RecordClass::to_dict(self, py)
            }
        }
    };
    (by_rust, $ty:ty { $($body:tt)* }) => {
        record_class!(by_rust_own_reduce, $ty {
            $($body)*

            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<$crate::python::record_class::Reduced<'py>> {
                $crate::python::record_class::reduce_by_constructor(slf)
            }
        });
    };
    (by_rust_own_reduce, $ty:ty { $($body:tt)* }) => {
        #[pymethods]
        impl $ty {
            $($body)*

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                $crate::python::record_class::RecordClass::repr(self, py)
            }

            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
                $crate::python::record_class::RecordClass::to_dict(self, py)
            }
        }
    };
}
pub(crate) use record_class;

/// A record class's field as a Python object.
pub(crate) trait ToPy {
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>>;

    /// Whether `repr` and `to_dict` leave the field out where they show it only when set:
    /// None, or no tagged fields.
    fn is_unset(&self, _py: Python<'_>) -> bool {
        false
    }
}

macro_rules! to_py_by_into_pyobject {
    ($($t:ty),*) => {$(
        impl ToPy for $t {
            fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                Ok(self.into_pyobject(py)?.into_any())
            }
        }
    )*};
}
to_py_by_into_pyobject!(i16, i32, i64, String, &'static str, Vec<String>);

impl<T: pyo3::PyTypeInfo> ToPy for Py<T> {
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.bind(py).clone().into_any())
    }

    fn is_unset(&self, py: Python<'_>) -> bool {
        self.bind(py).cast::<PyTuple>().is_ok_and(|t| t.is_empty())
    }
}

impl<T: ToPy> ToPy for Option<T> {
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self {
            Some(v) => v.to_py(py),
            None => Ok(py.None().into_bound(py)),
        }
    }

    fn is_unset(&self, _py: Python<'_>) -> bool {
        self.is_none()
    }
}

impl ToPy for Vec<u8> {
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyBytes::new(py, self).into_any())
    }
}

/// Topic partitions, as `[(topic, [partition, ...]), ...]`.
impl ToPy for Vec<(String, Vec<i32>)> {
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(topic_partitions(py, self)?.into_any())
    }
}

impl ToPy for Datum {
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(datum_to_py(py, self)?.into_bound(py))
    }
}

/// A group's members, as a tuple: what its fields compare and hash.
impl ToPy for Vec<Py<PyMemberMetadata>> {
    fn to_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyTuple::new(py, self)?.into_any())
    }
}

/// `to_dict` of each member.
pub(crate) fn dicts<'py>(
    py: Python<'py>,
    members: &[Py<PyMemberMetadata>],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for m in members {
        list.append(m.get().to_dict(py)?)?;
    }
    Ok(list)
}

/// A `__repr__` in Python's terms: `Name(field=repr, ...)`.
pub(crate) struct Repr<'py> {
    py: Python<'py>,
    name: &'static str,
    parts: Vec<String>,
}

impl<'py> Repr<'py> {
    pub(crate) fn new(py: Python<'py>, name: &'static str) -> Self {
        Repr {
            py,
            name,
            parts: Vec::new(),
        }
    }

    /// `name=repr(value)`.
    pub(crate) fn value(&mut self, name: &str, value: &impl ToPy) -> PyResult<()> {
        let repr = value.to_py(self.py)?.repr()?;
        self.parts.push(format!("{name}={repr}"));
        Ok(())
    }

    /// `name=repr(value)` when the value is set (see [`ToPy::is_unset`]).
    pub(crate) fn when_set(&mut self, name: &str, value: &impl ToPy) -> PyResult<()> {
        if value.is_unset(self.py) {
            return Ok(());
        }
        self.value(name, value)
    }

    /// `name=<N unit>`: the size of bytes or of a list, rather than its contents.
    pub(crate) fn size(&mut self, name: &str, value: &impl ToPy, unit: &str) -> PyResult<()> {
        let len = value.to_py(self.py)?.len()?;
        self.parts.push(format!("{name}=<{len} {unit}>"));
        Ok(())
    }

    pub(crate) fn finish(self) -> String {
        format!("{}({})", self.name, self.parts.join(", "))
    }
}

/// `to_dict`'s entry for a field shown only when set.
pub(crate) fn set_when_set(d: &Bound<'_, PyDict>, name: &str, value: &impl ToPy) -> PyResult<()> {
    if value.is_unset(d.py()) {
        return Ok(());
    }
    d.set_item(name, value.to_py(d.py())?)
}

/// `to_dict`'s entry for unknown tagged fields, only when there are any.
pub(crate) fn set_tagged_fields(d: &Bound<'_, PyDict>, fields: &Py<PyTuple>) -> PyResult<()> {
    let py = d.py();
    let fields = fields.bind(py);
    if fields.is_empty() {
        return Ok(());
    }
    let list = PyList::empty(py);
    for field in fields.iter() {
        let (tag, data): (u32, Bound<'_, PyAny>) = field.extract()?;
        let entry = PyDict::new(py);
        entry.set_item("tag", tag)?;
        entry.set_item("data", data)?;
        list.append(entry)?;
    }
    d.set_item("unknown_tagged_fields", list)
}

/// `__eq__` of the classes compared by their fields: the same class and equal fields, else
/// NotImplemented.
pub(crate) fn fields_equal<
    'py,
    T: pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync,
>(
    this: &T,
    other: &Bound<'py, PyAny>,
    fields: impl Fn(&T, Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
) -> PyResult<Py<PyAny>> {
    let py = other.py();
    match other.cast::<T>() {
        Ok(other) => Ok(
            PyBool::new(py, fields(this, py)?.eq(fields(other.get(), py)?)?)
                .to_owned()
                .into_any()
                .unbind(),
        ),
        Err(_) => Ok(py.NotImplemented()),
    }
}

/// What `__reduce__` returns: pickle and `copy` make the object again as `make(*args)`.
pub(crate) type Reduced<'py> = (Bound<'py, PyAny>, Bound<'py, PyTuple>);

/// `__reduce__` of a record class: made again by its own constructor from its fields.
pub(crate) fn reduce_by_constructor<'py, T>(slf: &Bound<'py, T>) -> PyResult<Reduced<'py>>
where
    T: RecordClass + pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Sync,
{
    by_constructor(slf, slf.get().fields(slf.py())?)
}

/// `__reduce__` of a class made again by its own constructor from `args`.
pub(crate) fn by_constructor<'py, T: pyo3::PyClass>(
    slf: &Bound<'py, T>,
    args: Bound<'py, PyTuple>,
) -> PyResult<Reduced<'py>> {
    Ok((slf.as_any().get_type().into_any(), args))
}

/// `__reduce__` of a class with no public constructor, made again by its private
/// `_from_fields` static method from `args`.
pub(crate) fn by_from_fields<'py, T: pyo3::PyClass>(
    slf: &Bound<'py, T>,
    args: Bound<'py, PyTuple>,
) -> PyResult<Reduced<'py>> {
    Ok((slf.as_any().get_type().getattr("_from_fields")?, args))
}

/// A consumer-group value's fields as Python data: dicts, lists, and uuids as Kafka's
/// strings.
pub(crate) fn datum_to_py(py: Python<'_>, datum: &Datum) -> PyResult<Py<PyAny>> {
    Ok(match datum {
        Datum::Null => py.None(),
        Datum::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        Datum::Str(v) => v.into_pyobject(py)?.into_any().unbind(),
        Datum::Bytes(v) => PyBytes::new(py, v).into_any().unbind(),
        Datum::Uuid(v) => consumer_group::uuid_string(v)
            .into_pyobject(py)?
            .into_any()
            .unbind(),
        Datum::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(datum_to_py(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Datum::Struct(fields) => {
            let d = PyDict::new(py);
            for (name, value) in fields {
                d.set_item(*name, datum_to_py(py, value)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// Topic partitions as `[(topic, [partition, ...]), ...]`.
pub(crate) fn topic_partitions<'py>(
    py: Python<'py>,
    tps: &[(String, Vec<i32>)],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for (topic, partitions) in tps {
        list.append(PyTuple::new(
            py,
            [
                PyString::new(py, topic).into_any(),
                PyList::new(py, partitions)?.into_any(),
            ],
        )?)?;
    }
    Ok(list)
}
