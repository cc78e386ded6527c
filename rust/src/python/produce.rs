//! Python bindings of the produce validation ([`crate::codec::batch::produce`]): a thin layer
//! that turns a refusal into `ProduceValidationError` and a success into `ProduceBatch`.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;

use crate::codec::batch::{self, ProduceError, ProduceLimits};
use crate::python::input::Input;

create_exception!(
    groupcoord._native,
    ProduceValidationError,
    PyValueError,
    "A produced batch refused as a Kafka leader refuses it: `error_code` (Kafka's), `message`, \
     `record_errors` ((index in the batch, message) of the records at fault)."
);

/// Inputs at least this large are validated with the thread detached from the interpreter;
/// below it, detaching costs more than it frees.
const DETACH_BYTES: usize = 64 << 10;

/// What a valid produced batch says (see `codec::batch::ProduceBatch`).
#[pyclass(frozen, get_all, eq, module = "groupcoord._native")]
#[derive(PartialEq, Eq)]
pub struct ProduceBatch {
    size: usize,
    record_count: i32,
    last_offset_delta: i32,
    first_timestamp: i64,
    max_timestamp: i64,
    offset_of_max_timestamp_delta: i32,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    last_sequence: i32,
    is_transactional: bool,
    compression: &'static str,
}

#[pymethods]
impl ProduceBatch {
    fn __repr__(&self) -> String {
        format!(
            "ProduceBatch(size={}, record_count={}, compression={:?}, max_timestamp={}, \
             producer_id={}, base_sequence={})",
            self.size,
            self.record_count,
            self.compression,
            self.max_timestamp,
            self.producer_id,
            self.base_sequence
        )
    }
}

impl From<batch::ProduceBatch> for ProduceBatch {
    fn from(b: batch::ProduceBatch) -> Self {
        ProduceBatch {
            size: b.size,
            record_count: b.record_count,
            last_offset_delta: b.last_offset_delta,
            first_timestamp: b.first_timestamp,
            max_timestamp: b.max_timestamp,
            offset_of_max_timestamp_delta: b.offset_of_max_timestamp_delta,
            producer_id: b.producer_id,
            producer_epoch: b.producer_epoch,
            base_sequence: b.base_sequence,
            last_sequence: b.last_sequence,
            is_transactional: b.is_transactional,
            compression: b.compression.name(),
        }
    }
}

fn refusal(py: Python<'_>, error: ProduceError) -> PyErr {
    let err = ProduceValidationError::new_err(error.message.clone());
    let value = err.value(py);
    let set = value
        .setattr("error_code", error.code)
        .and_then(|()| value.setattr("message", error.message))
        .and_then(|()| value.setattr("record_errors", error.record_errors));
    match set {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// Check one partition's `records` of a Produce request as a Kafka leader does.
#[pyfunction]
#[pyo3(
    signature = (data, *, max_message_bytes, require_keys, log_append_time, now_ms, before_max_ms, after_max_ms, allow_zstd),
    text_signature = "(data, *, max_message_bytes, require_keys, log_append_time, now_ms, before_max_ms, after_max_ms, allow_zstd)"
)]
#[allow(clippy::too_many_arguments)]
fn validate_produce(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    max_message_bytes: i64,
    require_keys: bool,
    log_append_time: bool,
    now_ms: i64,
    before_max_ms: i64,
    after_max_ms: i64,
    allow_zstd: bool,
) -> PyResult<ProduceBatch> {
    let limits = ProduceLimits {
        max_message_bytes,
        require_keys,
        log_append_time,
        now_ms,
        before_max_ms,
        after_max_ms,
        allow_zstd,
    };
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    let checked = if slice.len() >= DETACH_BYTES {
        py.detach(|| batch::validate_produce(slice, &limits))
    } else {
        batch::validate_produce(slice, &limits)
    };
    checked.map(ProduceBatch::from).map_err(|e| refusal(py, e))
}

/// Give a validated batch its base offset and partition leader epoch in place, and with
/// `log_append_time_ms` its LogAppendTime (timestamp type, max timestamp, CRC).
#[pyfunction]
fn assign_offsets(
    batch: &Bound<'_, PyByteArray>,
    base_offset: i64,
    partition_leader_epoch: i32,
    log_append_time_ms: Option<i64>,
) {
    // SAFETY: the slice is used only inside this call, which holds the interpreter and runs
    // no Python code, so nothing can resize or free the bytearray while it is borrowed.
    let bytes = unsafe { batch.as_bytes_mut() };
    batch::assign_offsets(
        bytes,
        base_offset,
        partition_leader_epoch,
        log_append_time_ms,
    );
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add(
        "ProduceValidationError",
        py.get_type::<ProduceValidationError>(),
    )?;
    m.add_class::<ProduceBatch>()?;
    m.add_function(wrap_pyfunction!(validate_produce, m)?)?;
    m.add_function(wrap_pyfunction!(assign_offsets, m)?)?;
    Ok(())
}
