//! Python bindings of the `__consumer_offsets` codec: its functions (reading, writing,
//! decoding into objects or Arrow), a thin layer over [`crate::codec`], and the registration
//! of the module's codec classes.
//!
//! The classes are in sibling modules: the record classes ([`super::classic_records`],
//! [`super::other_records`], their shared methods in [`super::record_class`]), the batch
//! and decoded-record classes ([`super::batch_classes`]); [`super::decode`] decodes logs into
//! them, a chunk at a time, with the thread detached from the interpreter while batches are
//! checked and decompressed.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::codec::batch::{self, BatchHeader, ControlMarker, RecordToWrite};
use crate::codec::compression::Compression;
use crate::codec::records::{
    self, ConsumerGroupKey, ConsumerGroupValue, ConsumerProtocolAssignment,
    ConsumerProtocolSubscription, OpaqueKey, OpaqueValue,
};
use crate::python::batch_classes::{batch_to_py, OffsetsRecord, Record, RecordBatch};
use crate::python::classic_records::{
    PyGroupMetadataKey, PyGroupMetadataValue, PyMemberMetadata, PyOffsetCommitKey,
    PyOffsetCommitValue,
};
use crate::python::decode::{log_to_py, BatchIterator, RecordIterator};
use crate::python::errors::{invalid_argument, wrong_type};
use crate::python::input::{bytes, partition_of, read_file, with_path, Input, OwnedInput};
use crate::python::record_objects::{key_from_py, value_from_py, RecordObjects};

/// Parse the record batches of a log buffer.
#[pyfunction]
#[pyo3(signature = (data, *, position = 0, stop_at_corruption = false))]
pub(super) fn read_batches<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    position: usize,
    stop_at_corruption: bool,
) -> PyResult<Bound<'py, PyList>> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    let parsed = py.detach(|| batch::read_batches(slice, position));
    batches_to_py(py, parsed, stop_at_corruption)
}

pub(super) fn batches_to_py<'py>(
    py: Python<'py>,
    parsed: batch::Parsed,
    stop_at_corruption: bool,
) -> PyResult<Bound<'py, PyList>> {
    if let (Some(error), false) = (parsed.error, stop_at_corruption) {
        return Err(error.into());
    }
    let list = PyList::empty(py);
    for b in parsed.batches {
        list.append(batch_to_py(py, b)?)?;
    }
    Ok(list)
}

/// Parse the record batches of a segment file.
#[pyfunction]
#[pyo3(signature = (path, *, stop_at_corruption = false))]
pub(super) fn read_segment<'py>(
    py: Python<'py>,
    path: PathBuf,
    stop_at_corruption: bool,
) -> PyResult<Bound<'py, PyList>> {
    let data = read_file(py, &path)?;
    let parsed = py.detach(|| batch::read_batches(&data, 0));
    batches_to_py(py, parsed, stop_at_corruption).map_err(|e| with_path(py, e, &path))
}

/// How many bytes at the start of `data` are whole, valid batches.
#[pyfunction]
pub(super) fn valid_prefix_length(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    Ok(py.detach(|| batch::valid_prefix_length(slice)))
}

/// The first position after `start` where a whole, valid batch starts, or `len(data)`.
#[pyfunction]
#[pyo3(signature = (data, start, *, legacy = false))]
pub(super) fn next_valid_batch(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    start: usize,
    legacy: bool,
) -> PyResult<usize> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    Ok(py.detach(|| batch::next_valid_batch(slice, start, legacy)))
}

/// A benchmark ceiling: CRC-32C of every batch, nothing else; how many match.
#[pyfunction]
pub(super) fn checksum_batches(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    Ok(py.detach(|| batch::checksum_batches(slice)))
}

/// A benchmark ceiling: decompress every batch's records into one reused buffer, parse
/// nothing; the number of bytes decompressed.
#[pyfunction]
pub(super) fn decompress_batches(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    Ok(py.detach(|| batch::decompress_batches(slice))?)
}

pub(super) fn compression_named(name: &str) -> PyResult<Compression> {
    Compression::from_name(name).ok_or_else(|| {
        invalid_argument(format!(
            "unknown compression {name:?} (none, gzip, snappy, lz4, zstd)"
        ))
    })
}

/// Encode one RecordBatch v2 as a broker writes the coordinator's appends.
#[pyfunction]
#[pyo3(
    signature = (records, *, base_offset, timestamp, compression = "none", producer_id = -1, producer_epoch = -1, base_sequence = 0, is_transactional = false, partition_leader_epoch = 0),
    text_signature = "(records, *, base_offset, timestamp, compression='none', producer_id=-1, producer_epoch=-1, base_sequence=0, is_transactional=False, partition_leader_epoch=0)"
)]
#[allow(clippy::too_many_arguments)]
pub(super) fn write_batch<'py>(
    py: Python<'py>,
    records: Vec<(Option<Vec<u8>>, Option<Vec<u8>>)>,
    base_offset: i64,
    timestamp: i64,
    compression: &str,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    is_transactional: bool,
    partition_leader_epoch: i32,
) -> PyResult<Bound<'py, PyBytes>> {
    let compression = compression_named(compression)?;
    let header = BatchHeader {
        base_offset,
        timestamp,
        compression,
        producer_id,
        producer_epoch,
        base_sequence,
        is_transactional,
        is_control: false,
        partition_leader_epoch,
    };
    let refs: Vec<(Option<&[u8]>, Option<&[u8]>)> = records
        .iter()
        .map(|(k, v)| (k.as_deref(), v.as_deref()))
        .collect();
    Ok(bytes(py, &batch::write_batch(&header, &refs)?))
}

/// A record for `write_records`: (offset, timestamp, key, value[, headers]), owned.
pub(super) type RecordTuple = (
    i64,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Option<Vec<u8>>)>,
);

pub(super) fn record_tuple(item: &Bound<'_, PyAny>) -> PyResult<RecordTuple> {
    let tuple = item.cast::<PyTuple>().map_err(|_| {
        wrong_type("a record is a tuple (offset, timestamp, key, value[, headers])")
    })?;
    match tuple.len() {
        4 => {
            let (offset, timestamp, key, value) = tuple.extract()?;
            Ok((offset, timestamp, key, value, Vec::new()))
        }
        5 => tuple.extract(),
        n => Err(invalid_argument(format!(
            "a record is a tuple (offset, timestamp, key, value[, headers]), not {n} items"
        ))),
    }
}

/// Encode one RecordBatch v2 whose records keep their own offsets and timestamps.
#[pyfunction]
#[pyo3(
    signature = (records, *, base_offset, last_offset = None, timestamp = -1, delete_horizon_ms = None, compression = "none", producer_id = -1, producer_epoch = -1, base_sequence = 0, is_transactional = false, is_control = false, partition_leader_epoch = 0),
    text_signature = "(records, *, base_offset, last_offset=None, timestamp=-1, delete_horizon_ms=None, compression='none', producer_id=-1, producer_epoch=-1, base_sequence=0, is_transactional=False, is_control=False, partition_leader_epoch=0)"
)]
#[allow(clippy::too_many_arguments)]
pub(super) fn write_records<'py>(
    py: Python<'py>,
    records: &Bound<'py, PyAny>,
    base_offset: i64,
    last_offset: Option<i64>,
    timestamp: i64,
    delete_horizon_ms: Option<i64>,
    compression: &str,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    is_transactional: bool,
    is_control: bool,
    partition_leader_epoch: i32,
) -> PyResult<Bound<'py, PyBytes>> {
    let compression = compression_named(compression)?;
    let owned = records
        .try_iter()?
        .map(|item| record_tuple(&item?))
        .collect::<PyResult<Vec<RecordTuple>>>()?;
    let last_offset = last_offset
        .or(owned.iter().map(|r| r.0).max())
        .ok_or_else(|| invalid_argument("an empty batch needs last_offset"))?;
    let header = BatchHeader {
        base_offset,
        timestamp,
        compression,
        producer_id,
        producer_epoch,
        base_sequence,
        is_transactional,
        is_control,
        partition_leader_epoch,
    };
    let encoded = py.detach(|| {
        let refs: Vec<RecordToWrite<'_>> = owned
            .iter()
            .map(|(offset, timestamp, key, value, headers)| RecordToWrite {
                offset: *offset,
                timestamp: *timestamp,
                key: key.as_deref(),
                value: value.as_deref(),
                headers,
            })
            .collect();
        batch::write_records(&header, last_offset, delete_horizon_ms, &refs)
    })?;
    Ok(bytes(py, &encoded))
}

/// Encode a control batch holding one transaction marker (COMMIT or ABORT).
#[pyfunction]
#[pyo3(signature = (*, base_offset, timestamp, producer_id, producer_epoch, commit, coordinator_epoch = 0, partition_leader_epoch = 0))]
pub(super) fn write_control_batch<'py>(
    py: Python<'py>,
    base_offset: i64,
    timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    commit: bool,
    coordinator_epoch: i32,
    partition_leader_epoch: i32,
) -> PyResult<Bound<'py, PyBytes>> {
    let header = BatchHeader {
        producer_id,
        producer_epoch,
        base_sequence: -1,
        partition_leader_epoch,
        ..BatchHeader::plain(base_offset, timestamp)
    };
    Ok(bytes(
        py,
        &batch::write_control_batch(
            &header,
            ControlMarker {
                commit,
                coordinator_epoch,
            },
        )?,
    ))
}

#[pyfunction]
pub(super) fn decode_key(py: Python<'_>, data: &[u8]) -> PyResult<Py<PyAny>> {
    RecordObjects::default().key(py, records::decode_key_ref(data, 0)?)
}

#[pyfunction]
pub(super) fn decode_value(
    py: Python<'_>,
    key: &Bound<'_, PyAny>,
    data: Option<&[u8]>,
) -> PyResult<Option<Py<PyAny>>> {
    let kind = key_from_py(key)?.value_kind();
    let mut objects = RecordObjects::default();
    records::decode_value_ref(kind, data, 0)?
        .map(|v| objects.value(py, v))
        .transpose()
}

#[pyfunction]
pub(super) fn encode_key<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_key(&key_from_py(key)?)?))
}

#[pyfunction]
pub(super) fn encode_value<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_value(&value_from_py(value)?)?))
}

#[pyfunction]
pub(super) fn decode_subscription(data: &[u8]) -> PyResult<ConsumerProtocolSubscription> {
    Ok(records::decode_subscription(data, 0)?)
}

#[pyfunction]
pub(super) fn decode_assignment(data: &[u8]) -> PyResult<ConsumerProtocolAssignment> {
    Ok(records::decode_assignment(data, 0)?)
}

#[pyfunction]
pub(super) fn encode_subscription<'py>(
    py: Python<'py>,
    subscription: &ConsumerProtocolSubscription,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_subscription(subscription)?))
}

#[pyfunction]
pub(super) fn encode_assignment<'py>(
    py: Python<'py>,
    assignment: &ConsumerProtocolAssignment,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_assignment(assignment)?))
}

/// Decode every record of a `__consumer_offsets` log buffer.
#[pyfunction]
#[pyo3(
    signature = (data, *, partition = -1, position = 0, stop_at_corruption = false),
    text_signature = "(data, *, partition=-1, position=0, stop_at_corruption=False)"
)]
pub(super) fn decode_records<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    partition: i32,
    position: usize,
    stop_at_corruption: bool,
) -> PyResult<Bound<'py, PyList>> {
    let input = Input::from_py(data)?;
    log_to_py(
        py,
        input.as_slice(),
        position,
        partition,
        stop_at_corruption,
    )
}

/// Decode every record of a segment file; the partition defaults to the N of its
/// `__consumer_offsets-N` directory.
#[pyfunction]
#[pyo3(signature = (path, *, partition = None, stop_at_corruption = false))]
pub(super) fn decode_segment<'py>(
    py: Python<'py>,
    path: PathBuf,
    partition: Option<i32>,
    stop_at_corruption: bool,
) -> PyResult<Bound<'py, PyList>> {
    let data = read_file(py, &path)?;
    let partition = partition.unwrap_or_else(|| partition_of(&path));
    log_to_py(py, &data, 0, partition, stop_at_corruption).map_err(|e| with_path(py, e, &path))
}

/// The decoded records of a log buffer, one at a time (see [`RecordIterator`]).
#[pyfunction]
#[pyo3(
    signature = (data, *, partition = -1, position = 0, stop_at_corruption = false),
    text_signature = "(data, *, partition=-1, position=0, stop_at_corruption=False)"
)]
pub(super) fn iter_records(
    data: &Bound<'_, PyAny>,
    partition: i32,
    position: usize,
    stop_at_corruption: bool,
) -> PyResult<RecordIterator> {
    Ok(RecordIterator::new(
        OwnedInput::from_py(data)?,
        None,
        position,
        partition,
        stop_at_corruption,
    ))
}

/// `iter_records` of a segment file, read whole when called.
#[pyfunction]
#[pyo3(signature = (path, *, partition = None, stop_at_corruption = false))]
pub(super) fn iter_segment(
    py: Python<'_>,
    path: PathBuf,
    partition: Option<i32>,
    stop_at_corruption: bool,
) -> PyResult<RecordIterator> {
    let data = OwnedInput::Owned(read_file(py, &path)?);
    let partition = partition.unwrap_or_else(|| partition_of(&path));
    Ok(RecordIterator::new(
        data,
        Some(path),
        0,
        partition,
        stop_at_corruption,
    ))
}

/// The record batches of a log buffer, one at a time (see [`BatchIterator`]).
#[pyfunction]
#[pyo3(signature = (data, *, position = 0, stop_at_corruption = false))]
pub(super) fn iter_batches(
    data: &Bound<'_, PyAny>,
    position: usize,
    stop_at_corruption: bool,
) -> PyResult<BatchIterator> {
    Ok(BatchIterator::new(
        OwnedInput::from_py(data)?,
        None,
        position,
        stop_at_corruption,
    ))
}

/// `iter_batches` of a segment file, read whole when called.
#[pyfunction]
#[pyo3(signature = (path, *, stop_at_corruption = false))]
pub(super) fn iter_segment_batches(
    py: Python<'_>,
    path: PathBuf,
    stop_at_corruption: bool,
) -> PyResult<BatchIterator> {
    let data = OwnedInput::Owned(read_file(py, &path)?);
    Ok(BatchIterator::new(data, Some(path), 0, stop_at_corruption))
}

pub(super) fn arrow_error(e: ::arrow_schema::ArrowError) -> PyErr {
    invalid_argument(format!("building the Arrow batch: {e}"))
}

/// Decodes a log into one Arrow record batch with the thread detached from the interpreter.
pub(super) fn log_to_arrow<'py>(
    py: Python<'py>,
    data: &[u8],
    position: usize,
    partition: i32,
    stop_at_corruption: bool,
    threads: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    use arrow_pyarrow::ToPyArrow;
    let threads = match threads {
        None => crate::codec::arrow::default_threads(),
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| invalid_argument(format!("threads must be at least 1, not {n}")))?,
    };
    let (batch, walk) =
        py.detach(|| crate::codec::arrow::decode_arrow(data, position, partition, threads));
    if let (Some(error), false) = (walk.error, stop_at_corruption) {
        return Err(error.into());
    }
    batch.map_err(arrow_error)?.to_pyarrow(py)
}

/// Decode every record of a `__consumer_offsets` log buffer into one pyarrow.RecordBatch.
#[pyfunction]
#[pyo3(
    signature = (data, *, partition = -1, position = 0, stop_at_corruption = false, threads = None),
    text_signature = "(data, *, partition=-1, position=0, stop_at_corruption=False, threads=None)"
)]
pub(super) fn decode_arrow<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    partition: i32,
    position: usize,
    stop_at_corruption: bool,
    threads: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let input = Input::from_py(data)?;
    log_to_arrow(
        py,
        input.as_slice(),
        position,
        partition,
        stop_at_corruption,
        threads,
    )
}

/// `decode_arrow` of a segment file.
#[pyfunction]
#[pyo3(signature = (path, *, partition = None, stop_at_corruption = false, threads = None))]
pub(super) fn decode_segment_arrow<'py>(
    py: Python<'py>,
    path: PathBuf,
    partition: Option<i32>,
    stop_at_corruption: bool,
    threads: Option<i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let data = read_file(py, &path)?;
    let partition = partition.unwrap_or_else(|| partition_of(&path));
    log_to_arrow(py, &data, 0, partition, stop_at_corruption, threads)
        .map_err(|e| with_path(py, e, &path))
}

/// The schema of `decode_arrow`'s record batches, as a pyarrow.Schema.
#[pyfunction(name = "arrow_schema")]
pub(super) fn offsets_arrow_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    use arrow_pyarrow::ToPyArrow;
    crate::codec::arrow::schema().as_ref().to_pyarrow(py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyOffsetCommitKey>()?;
    m.add_class::<PyGroupMetadataKey>()?;
    m.add_class::<OpaqueKey>()?;
    m.add_class::<PyOffsetCommitValue>()?;
    m.add_class::<PyMemberMetadata>()?;
    m.add_class::<PyGroupMetadataValue>()?;
    m.add_class::<OpaqueValue>()?;
    m.add_class::<ConsumerGroupKey>()?;
    m.add_class::<ConsumerGroupValue>()?;
    m.add_class::<ConsumerProtocolSubscription>()?;
    m.add_class::<ConsumerProtocolAssignment>()?;
    m.add_class::<Record>()?;
    m.add_class::<RecordBatch>()?;
    m.add_class::<OffsetsRecord>()?;
    m.add_class::<RecordIterator>()?;
    m.add_class::<BatchIterator>()?;
    m.add_function(wrap_pyfunction!(read_batches, m)?)?;
    m.add_function(wrap_pyfunction!(read_segment, m)?)?;
    m.add_function(wrap_pyfunction!(valid_prefix_length, m)?)?;
    m.add_function(wrap_pyfunction!(next_valid_batch, m)?)?;
    m.add_function(wrap_pyfunction!(checksum_batches, m)?)?;
    m.add_function(wrap_pyfunction!(decompress_batches, m)?)?;
    m.add_function(wrap_pyfunction!(write_batch, m)?)?;
    m.add_function(wrap_pyfunction!(write_records, m)?)?;
    m.add_function(wrap_pyfunction!(write_control_batch, m)?)?;
    m.add_function(wrap_pyfunction!(decode_key, m)?)?;
    m.add_function(wrap_pyfunction!(decode_value, m)?)?;
    m.add_function(wrap_pyfunction!(encode_key, m)?)?;
    m.add_function(wrap_pyfunction!(encode_value, m)?)?;
    m.add_function(wrap_pyfunction!(decode_subscription, m)?)?;
    m.add_function(wrap_pyfunction!(decode_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(encode_subscription, m)?)?;
    m.add_function(wrap_pyfunction!(encode_assignment, m)?)?;
    m.add_function(wrap_pyfunction!(decode_records, m)?)?;
    m.add_function(wrap_pyfunction!(decode_segment, m)?)?;
    m.add_function(wrap_pyfunction!(iter_records, m)?)?;
    m.add_function(wrap_pyfunction!(iter_segment, m)?)?;
    m.add_function(wrap_pyfunction!(iter_batches, m)?)?;
    m.add_function(wrap_pyfunction!(iter_segment_batches, m)?)?;
    m.add_function(wrap_pyfunction!(decode_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(decode_segment_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(offsets_arrow_schema, m)?)?;
    super::produce::register(m)?;
    Ok(())
}
