//! The Python classes of a log's batches and records: `RecordBatch` and its `Record`s as
//! they lie in the log, and `OffsetsRecord`, a record decoded.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::codec::batch::Batch;
use crate::codec::log::Control;
use crate::python::classic_records::py_repr;
use crate::python::codec::compression_named;
use crate::python::errors::invalid_argument;
use crate::python::input::opt_bytes;
use crate::python::record_class::{by_from_fields, fields_equal, Reduced};
use crate::python::record_objects::{key_from_py, value_from_py};

/// One record of a batch. Its headers are kept as a tuple and handed out as a new list, so
/// that no caller can change a hashed record.
#[pyclass(frozen, module = "groupcoord._native")]
pub struct Record {
    #[pyo3(get)]
    offset: i64,
    #[pyo3(get)]
    timestamp: i64,
    #[pyo3(get)]
    key: Option<Py<PyBytes>>,
    #[pyo3(get)]
    value: Option<Py<PyBytes>>,
    headers: Py<PyTuple>,
}

impl Record {
    pub(super) fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (
            self.offset,
            self.timestamp,
            &self.key,
            &self.value,
            &self.headers,
        )
            .into_pyobject(py)
    }
}

#[pymethods]
impl Record {
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.headers.bind(py))
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        by_from_fields(slf, slf.get().fields(slf.py())?)
    }

    #[staticmethod]
    fn _from_fields(
        offset: i64,
        timestamp: i64,
        key: Option<Py<PyBytes>>,
        value: Option<Py<PyBytes>>,
        headers: Bound<'_, PyTuple>,
    ) -> PyResult<Self> {
        headers.extract::<Vec<(Bound<'_, PyString>, Option<Bound<'_, PyBytes>>)>>()?;
        Ok(Record {
            offset,
            timestamp,
            key,
            value,
            headers: headers.unbind(),
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Record(offset={}, timestamp={})",
            self.offset, self.timestamp
        )
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        fields_equal(self, other, Self::fields)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.fields(py)?.hash()
    }
}

/// A record batch as it lies in the log (magic 2, or one legacy wrapper/message). Its records
/// are kept as a tuple and handed out as a new list.
#[pyclass(frozen, module = "groupcoord._native")]
pub struct RecordBatch {
    #[pyo3(get)]
    position: usize,
    #[pyo3(get)]
    size: usize,
    #[pyo3(get)]
    base_offset: i64,
    #[pyo3(get)]
    last_offset: i64,
    #[pyo3(get)]
    magic: i8,
    #[pyo3(get)]
    compression: &'static str,
    #[pyo3(get)]
    timestamp_type: &'static str,
    #[pyo3(get)]
    base_timestamp: i64,
    #[pyo3(get)]
    max_timestamp: i64,
    #[pyo3(get)]
    producer_id: i64,
    #[pyo3(get)]
    producer_epoch: i16,
    #[pyo3(get)]
    base_sequence: i32,
    #[pyo3(get)]
    partition_leader_epoch: i32,
    #[pyo3(get)]
    is_transactional: bool,
    #[pyo3(get)]
    is_control: bool,
    #[pyo3(get)]
    crc: u32,
    #[pyo3(get)]
    delete_horizon_ms: Option<i64>,
    records: Py<PyTuple>,
}

impl RecordBatch {
    pub(super) fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let header = (
            self.position,
            self.size,
            self.base_offset,
            self.last_offset,
            self.magic,
            self.compression,
            self.timestamp_type,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
        );
        let rest = (
            self.partition_leader_epoch,
            self.is_transactional,
            self.is_control,
            self.crc,
            self.delete_horizon_ms,
            &self.records,
        );
        (header, rest).into_pyobject(py)
    }
}

/// Equal when every field and record is; not hashable, as its `records` reads as a list.
#[pymethods]
impl RecordBatch {
    #[classattr]
    #[allow(non_upper_case_globals)]
    const __hash__: Option<Py<PyAny>> = None;

    #[getter]
    fn records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.records.bind(py))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        fields_equal(self, other, Self::fields)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        by_from_fields(slf, slf.get().fields(slf.py())?)
    }

    #[staticmethod]
    fn _from_fields(
        header: (
            usize,
            usize,
            i64,
            i64,
            i8,
            String,
            String,
            i64,
            i64,
            i64,
            i16,
            i32,
        ),
        rest: (i32, bool, bool, u32, Option<i64>, Bound<'_, PyTuple>),
    ) -> PyResult<Self> {
        let (
            position,
            size,
            base_offset,
            last_offset,
            magic,
            compression,
            timestamp_type,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
        ) = header;
        let (partition_leader_epoch, is_transactional, is_control, crc, delete_horizon_ms, records) =
            rest;
        let compression = compression_named(&compression)?;
        let timestamp_type = match timestamp_type.as_str() {
            "create" => "create",
            "log_append" => "log_append",
            other => {
                return Err(invalid_argument(format!(
                    "unknown timestamp type {other:?}"
                )))
            }
        };
        for record in records.iter() {
            record.cast::<Record>()?;
        }
        Ok(RecordBatch {
            position,
            size,
            base_offset,
            last_offset,
            magic,
            compression: compression.name(),
            timestamp_type,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            partition_leader_epoch,
            is_transactional,
            is_control,
            crc,
            delete_horizon_ms,
            records: records.unbind(),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "RecordBatch(position={}, base_offset={}, last_offset={}, magic={}, compression={})",
            self.position,
            self.base_offset,
            self.last_offset,
            self.magic,
            py_repr(py, self.compression)?
        ))
    }
}

pub(super) fn batch_to_py(py: Python<'_>, b: Batch) -> PyResult<RecordBatch> {
    let records = b
        .records
        .into_iter()
        .map(|r| {
            let headers = r
                .headers
                .into_iter()
                .map(|(k, v)| (k, opt_bytes(py, v.as_deref())));
            Ok(Record {
                offset: r.offset,
                timestamp: r.timestamp,
                key: opt_bytes(py, r.key.as_deref()).map(Bound::unbind),
                value: opt_bytes(py, r.value.as_deref()).map(Bound::unbind),
                headers: PyTuple::new(py, headers)?.unbind(),
            })
        })
        .collect::<PyResult<Vec<Record>>>()?;
    let records = PyTuple::new(py, records)?;
    let b = b.info;
    Ok(RecordBatch {
        position: b.position,
        size: b.size,
        base_offset: b.base_offset,
        last_offset: b.last_offset,
        magic: b.magic,
        compression: b.compression.name(),
        timestamp_type: if b.log_append_time {
            "log_append"
        } else {
            "create"
        },
        base_timestamp: b.base_timestamp,
        max_timestamp: b.max_timestamp,
        producer_id: b.producer_id,
        producer_epoch: b.producer_epoch,
        base_sequence: b.base_sequence,
        partition_leader_epoch: b.partition_leader_epoch,
        is_transactional: b.is_transactional,
        is_control: b.is_control,
        crc: b.crc,
        delete_horizon_ms: b.has_delete_horizon.then_some(b.base_timestamp),
        records: records.unbind(),
    })
}

/// One decoded record of a `__consumer_offsets` log.
#[pyclass(frozen, get_all, module = "groupcoord._native")]
pub struct OffsetsRecord {
    pub(super) partition: i32,
    pub(super) offset: i64,
    pub(super) timestamp: i64,
    pub(super) batch_position: usize,
    pub(super) producer_id: i64,
    pub(super) producer_epoch: i16,
    pub(super) is_transactional: bool,
    pub(super) control: Option<&'static str>,
    pub(super) key: Option<Py<PyAny>>,
    pub(super) value: Option<Py<PyAny>>,
}

impl OffsetsRecord {
    pub(super) fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (
            self.partition,
            self.offset,
            self.timestamp,
            self.batch_position,
            self.producer_id,
            self.producer_epoch,
            self.is_transactional,
            &self.control,
            &self.key,
            &self.value,
        )
            .into_pyobject(py)
    }
}

#[pymethods]
impl OffsetsRecord {
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        fields_equal(self, other, Self::fields)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.fields(py)?.hash()
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        by_from_fields(slf, slf.get().fields(slf.py())?)
    }

    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn _from_fields(
        partition: i32,
        offset: i64,
        timestamp: i64,
        batch_position: usize,
        producer_id: i64,
        producer_epoch: i16,
        is_transactional: bool,
        control: Option<&str>,
        key: Option<Bound<'_, PyAny>>,
        value: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let control = control
            .map(|name| {
                Control::NAMES
                    .into_iter()
                    .find(|known| *known == name)
                    .ok_or_else(|| invalid_argument(format!("unknown control {name:?}")))
            })
            .transpose()?;
        if let Some(key) = &key {
            key_from_py(key)?;
        }
        if let Some(value) = &value {
            value_from_py(value)?;
        }
        Ok(OffsetsRecord {
            partition,
            offset,
            timestamp,
            batch_position,
            producer_id,
            producer_epoch,
            is_transactional,
            control,
            key: key.map(Bound::unbind),
            value: value.map(Bound::unbind),
        })
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "OffsetsRecord(partition={}, offset={}, timestamp={}, control={}, key={}, value={})",
            self.partition,
            self.offset,
            self.timestamp,
            py_repr(py, self.control)?,
            py_repr(py, &self.key)?,
            py_repr(py, &self.value)?
        ))
    }
}
