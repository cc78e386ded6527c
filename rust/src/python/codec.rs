//! Python bindings of the `__consumer_offsets` codec: the record classes (declared in
//! [`crate::codec::records`], given constructors, `repr` and `to_dict` here), batches and
//! decoded records, and the read/write functions. Bulk decodes parse with the thread
//! detached from the interpreter, then build Python objects.

use std::path::PathBuf;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::codec::batch::{self, Batch, BatchHeader, ControlMarker, RecordToWrite};
use crate::codec::compression::Compression;
use crate::codec::log::{decode_log, DecodedLog, OffsetsRecord as CoreOffsetsRecord};
use crate::codec::consumer_group::{self, Datum};
use crate::codec::records::{
    self, ConsumerGroupKey, ConsumerGroupValue, ConsumerProtocolAssignment, ConsumerProtocolSubscription,
    GroupMetadataKey, GroupMetadataValue, Key, MemberMetadata, OffsetCommitKey, OffsetCommitValue, OpaqueKey,
    OpaqueValue, Value,
};
use crate::error::Error;

/// Input bytes: borrowed from `bytes`, copied from any other buffer (bytearray, memoryview).
enum Input<'py> {
    Borrowed(Bound<'py, PyBytes>),
    Owned(Vec<u8>),
}

impl Input<'_> {
    fn from_py<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Input<'py>> {
        if let Ok(bytes) = obj.cast::<PyBytes>() {
            return Ok(Input::Borrowed(bytes.clone()));
        }
        let buffer = PyBuffer::<u8>::get(obj).map_err(|_| {
            PyTypeError::new_err(format!("expected bytes, bytearray or memoryview, not {}", obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()))
        })?;
        Ok(Input::Owned(buffer.to_vec(obj.py())?))
    }

    fn as_slice(&self) -> &[u8] {
        match self {
            Input::Borrowed(b) => b.as_bytes(),
            Input::Owned(v) => v,
        }
    }
}

fn bytes<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, data)
}

fn opt_bytes<'py>(py: Python<'py>, data: Option<&[u8]>) -> Option<Bound<'py, PyBytes>> {
    data.map(|d| PyBytes::new(py, d))
}

fn check_i16_type(record_type: i16, allowed: std::ops::RangeInclusive<i16>, what: &str) -> PyResult<()> {
    if allowed.contains(&record_type) {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!("{what} record_type must be in {allowed:?}, not {record_type}")))
    }
}

#[pymethods]
impl OffsetCommitKey {
    #[new]
    #[pyo3(signature = (group, topic, partition, record_type = 1))]
    fn py_new(group: String, topic: String, partition: i32, record_type: i16) -> PyResult<Self> {
        check_i16_type(record_type, 0..=1, "OffsetCommitKey")?;
        Ok(OffsetCommitKey { group, topic, partition, record_type })
    }

    fn __repr__(&self) -> String {
        format!("OffsetCommitKey(group={:?}, topic={:?}, partition={}, record_type={})", self.group, self.topic, self.partition, self.record_type)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("record_type", self.record_type)?;
        d.set_item("group", &self.group)?;
        d.set_item("topic", &self.topic)?;
        d.set_item("partition", self.partition)?;
        Ok(d)
    }
}

#[pymethods]
impl GroupMetadataKey {
    #[new]
    fn py_new(group: String) -> Self {
        GroupMetadataKey { group }
    }

    #[getter]
    fn record_type(&self) -> i16 {
        2
    }

    fn __repr__(&self) -> String {
        format!("GroupMetadataKey(group={:?})", self.group)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("record_type", 2)?;
        d.set_item("group", &self.group)?;
        Ok(d)
    }
}

#[pymethods]
impl OpaqueKey {
    #[new]
    fn py_new(record_type: i16, data: Vec<u8>) -> Self {
        OpaqueKey { record_type, data }
    }

    #[getter]
    fn record_type(&self) -> i16 {
        self.record_type
    }

    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.data)
    }

    fn __repr__(&self) -> String {
        format!("OpaqueKey(record_type={}, data=<{} bytes>)", self.record_type, self.data.len())
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("record_type", self.record_type)?;
        d.set_item("data", bytes(py, &self.data))?;
        Ok(d)
    }
}

#[pymethods]
impl OffsetCommitValue {
    #[new]
    #[pyo3(
        signature = (offset, metadata = String::new(), commit_timestamp = -1, leader_epoch = -1, expire_timestamp = -1, version = 3),
        text_signature = "(offset, metadata='', commit_timestamp=-1, leader_epoch=-1, expire_timestamp=-1, version=3)"
    )]
    fn py_new(offset: i64, metadata: String, commit_timestamp: i64, leader_epoch: i32, expire_timestamp: i64, version: i16) -> Self {
        OffsetCommitValue { offset, metadata, commit_timestamp, leader_epoch, expire_timestamp, version }
    }

    fn __repr__(&self) -> String {
        format!(
            "OffsetCommitValue(offset={}, metadata={:?}, commit_timestamp={}, leader_epoch={}, expire_timestamp={}, version={})",
            self.offset, self.metadata, self.commit_timestamp, self.leader_epoch, self.expire_timestamp, self.version
        )
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", self.version)?;
        d.set_item("offset", self.offset)?;
        d.set_item("leader_epoch", self.leader_epoch)?;
        d.set_item("metadata", &self.metadata)?;
        d.set_item("commit_timestamp", self.commit_timestamp)?;
        d.set_item("expire_timestamp", self.expire_timestamp)?;
        Ok(d)
    }
}

#[pymethods]
impl MemberMetadata {
    #[new]
    #[pyo3(signature = (member_id, group_instance_id, client_id, client_host, rebalance_timeout, session_timeout, subscription, assignment))]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        member_id: String,
        group_instance_id: Option<String>,
        client_id: String,
        client_host: String,
        rebalance_timeout: i32,
        session_timeout: i32,
        subscription: Vec<u8>,
        assignment: Vec<u8>,
    ) -> Self {
        MemberMetadata { member_id, group_instance_id, client_id, client_host, rebalance_timeout, session_timeout, subscription, assignment }
    }

    #[getter]
    fn member_id(&self) -> &str {
        &self.member_id
    }
    #[getter]
    fn group_instance_id(&self) -> Option<&str> {
        self.group_instance_id.as_deref()
    }
    #[getter]
    fn client_id(&self) -> &str {
        &self.client_id
    }
    #[getter]
    fn client_host(&self) -> &str {
        &self.client_host
    }
    #[getter]
    fn rebalance_timeout(&self) -> i32 {
        self.rebalance_timeout
    }
    #[getter]
    fn session_timeout(&self) -> i32 {
        self.session_timeout
    }
    #[getter]
    fn subscription<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.subscription)
    }
    #[getter]
    fn assignment<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.assignment)
    }

    fn __repr__(&self) -> String {
        format!(
            "MemberMetadata(member_id={:?}, group_instance_id={:?}, client_id={:?}, client_host={:?}, rebalance_timeout={}, session_timeout={}, subscription=<{} bytes>, assignment=<{} bytes>)",
            self.member_id, self.group_instance_id, self.client_id, self.client_host, self.rebalance_timeout, self.session_timeout, self.subscription.len(), self.assignment.len()
        )
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("member_id", &self.member_id)?;
        d.set_item("group_instance_id", self.group_instance_id.as_deref())?;
        d.set_item("client_id", &self.client_id)?;
        d.set_item("client_host", &self.client_host)?;
        d.set_item("rebalance_timeout", self.rebalance_timeout)?;
        d.set_item("session_timeout", self.session_timeout)?;
        d.set_item("subscription", bytes(py, &self.subscription))?;
        d.set_item("assignment", bytes(py, &self.assignment))?;
        Ok(d)
    }
}

#[pymethods]
impl GroupMetadataValue {
    #[new]
    #[pyo3(
        signature = (protocol_type, generation, protocol, leader, current_state_timestamp = -1, members = Vec::new(), version = 3),
        text_signature = "(protocol_type, generation, protocol, leader, current_state_timestamp=-1, members=..., version=3)"
    )]
    fn py_new(
        protocol_type: String,
        generation: i32,
        protocol: Option<String>,
        leader: Option<String>,
        current_state_timestamp: i64,
        members: Vec<MemberMetadata>,
        version: i16,
    ) -> Self {
        GroupMetadataValue { protocol_type, generation, protocol, leader, current_state_timestamp, members, version }
    }

    fn __repr__(&self) -> String {
        format!(
            "GroupMetadataValue(protocol_type={:?}, generation={}, protocol={:?}, leader={:?}, current_state_timestamp={}, members=<{} members>, version={})",
            self.protocol_type, self.generation, self.protocol, self.leader, self.current_state_timestamp, self.members.len(), self.version
        )
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", self.version)?;
        d.set_item("protocol_type", &self.protocol_type)?;
        d.set_item("generation", self.generation)?;
        d.set_item("protocol", self.protocol.as_deref())?;
        d.set_item("leader", self.leader.as_deref())?;
        d.set_item("current_state_timestamp", self.current_state_timestamp)?;
        let members = PyList::empty(py);
        for m in &self.members {
            members.append(m.to_dict(py)?)?;
        }
        d.set_item("members", members)?;
        Ok(d)
    }
}

#[pymethods]
impl OpaqueValue {
    #[new]
    fn py_new(record_type: i16, version: i16, data: Vec<u8>) -> Self {
        OpaqueValue { record_type, version, data }
    }

    #[getter]
    fn record_type(&self) -> i16 {
        self.record_type
    }
    #[getter]
    fn version(&self) -> i16 {
        self.version
    }
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.data)
    }

    fn __repr__(&self) -> String {
        format!("OpaqueValue(record_type={}, version={}, data=<{} bytes>)", self.record_type, self.version, self.data.len())
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("record_type", self.record_type)?;
        d.set_item("version", self.version)?;
        d.set_item("data", bytes(py, &self.data))?;
        Ok(d)
    }
}

#[pymethods]
impl ConsumerGroupKey {
    #[new]
    #[pyo3(signature = (record_type, group_id, member_id = None, regular_expression = None))]
    fn py_new(record_type: i16, group_id: String, member_id: Option<String>, regular_expression: Option<String>) -> PyResult<Self> {
        let second = consumer_group::key_second_field(record_type)
            .ok_or_else(|| PyValueError::new_err(format!("record_type {record_type} is not a consumer-group record (3 to 8, 16)")))?;
        let given = match (&member_id, &regular_expression) {
            (Some(_), None) => Some("member_id"),
            (None, Some(_)) => Some("regular_expression"),
            (None, None) => None,
            (Some(_), Some(_)) => return Err(PyValueError::new_err("a key has a member_id or a regular_expression, not both")),
        };
        if given != second {
            return Err(PyValueError::new_err(format!("record type {record_type} keys carry {}", second.unwrap_or("only group_id"))));
        }
        Ok(ConsumerGroupKey { record_type, group_id, member_id, regular_expression })
    }

    fn __repr__(&self) -> String {
        format!("ConsumerGroupKey(record_type={}, group_id={:?}, member_id={:?}, regular_expression={:?})", self.record_type, self.group_id, self.member_id, self.regular_expression)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("record_type", self.record_type)?;
        d.set_item("group_id", &self.group_id)?;
        if let Some(m) = &self.member_id {
            d.set_item("member_id", m)?;
        }
        if let Some(r) = &self.regular_expression {
            d.set_item("regular_expression", r)?;
        }
        Ok(d)
    }
}

/// Kafka prints a uuid as unpadded base64url.
fn uuid_string(bytes: &[u8; 16]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(22);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

fn datum_to_py(py: Python<'_>, datum: &Datum) -> PyResult<Py<PyAny>> {
    Ok(match datum {
        Datum::Null => py.None(),
        Datum::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        Datum::Str(v) => v.into_pyobject(py)?.into_any().unbind(),
        Datum::Bytes(v) => bytes(py, v).into_any().unbind(),
        Datum::Uuid(v) => uuid_string(v).into_pyobject(py)?.into_any().unbind(),
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

#[pymethods]
impl ConsumerGroupValue {
    #[getter]
    fn record_type(&self) -> i16 {
        self.record_type
    }
    #[getter]
    fn version(&self) -> i16 {
        self.version
    }
    /// Kafka's name of the value's schema, e.g. "ConsumerGroupMemberMetadataValue".
    #[getter]
    fn schema(&self) -> &'static str {
        self.schema
    }
    /// The decoded fields (snake_case names; uuids as Kafka's base64url strings).
    #[getter]
    fn fields(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        datum_to_py(py, &self.fields)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("ConsumerGroupValue(schema={:?}, fields={})", self.schema, datum_to_py(py, &self.fields)?.bind(py).repr()?))
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("record_type", self.record_type)?;
        d.set_item("version", self.version)?;
        d.set_item("schema", self.schema)?;
        d.set_item("fields", datum_to_py(py, &self.fields)?)?;
        Ok(d)
    }
}

fn topic_partitions<'py>(py: Python<'py>, tps: &[(String, Vec<i32>)]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for (topic, partitions) in tps {
        list.append(PyTuple::new(py, [topic.into_pyobject(py)?.into_any(), PyList::new(py, partitions)?.into_any()])?)?;
    }
    Ok(list)
}

#[pymethods]
impl ConsumerProtocolSubscription {
    #[new]
    #[pyo3(
        signature = (topics, user_data = None, owned_partitions = Vec::new(), generation_id = -1, rack_id = None, version = 3),
        text_signature = "(topics, user_data=None, owned_partitions=..., generation_id=-1, rack_id=None, version=3)"
    )]
    fn py_new(topics: Vec<String>, user_data: Option<Vec<u8>>, owned_partitions: Vec<(String, Vec<i32>)>, generation_id: i32, rack_id: Option<String>, version: i16) -> Self {
        ConsumerProtocolSubscription { version, topics, user_data, owned_partitions, generation_id, rack_id }
    }

    #[getter]
    fn version(&self) -> i16 {
        self.version
    }
    #[getter]
    fn topics(&self) -> Vec<String> {
        self.topics.clone()
    }
    #[getter]
    fn user_data<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        opt_bytes(py, self.user_data.as_deref())
    }
    #[getter]
    fn owned_partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        topic_partitions(py, &self.owned_partitions)
    }
    #[getter]
    fn generation_id(&self) -> i32 {
        self.generation_id
    }
    #[getter]
    fn rack_id(&self) -> Option<&str> {
        self.rack_id.as_deref()
    }

    fn __repr__(&self) -> String {
        format!("ConsumerProtocolSubscription(topics={:?}, owned_partitions={:?}, generation_id={}, rack_id={:?}, version={})", self.topics, self.owned_partitions, self.generation_id, self.rack_id, self.version)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", self.version)?;
        d.set_item("topics", &self.topics)?;
        d.set_item("user_data", opt_bytes(py, self.user_data.as_deref()))?;
        d.set_item("owned_partitions", topic_partitions(py, &self.owned_partitions)?)?;
        d.set_item("generation_id", self.generation_id)?;
        d.set_item("rack_id", self.rack_id.as_deref())?;
        Ok(d)
    }
}

#[pymethods]
impl ConsumerProtocolAssignment {
    #[new]
    #[pyo3(signature = (assigned_partitions, user_data = None, version = 3))]
    fn py_new(assigned_partitions: Vec<(String, Vec<i32>)>, user_data: Option<Vec<u8>>, version: i16) -> Self {
        ConsumerProtocolAssignment { version, assigned_partitions, user_data }
    }

    #[getter]
    fn version(&self) -> i16 {
        self.version
    }
    #[getter]
    fn assigned_partitions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        topic_partitions(py, &self.assigned_partitions)
    }
    #[getter]
    fn user_data<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        opt_bytes(py, self.user_data.as_deref())
    }

    fn __repr__(&self) -> String {
        format!("ConsumerProtocolAssignment(assigned_partitions={:?}, version={})", self.assigned_partitions, self.version)
    }

    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("version", self.version)?;
        d.set_item("assigned_partitions", topic_partitions(py, &self.assigned_partitions)?)?;
        d.set_item("user_data", opt_bytes(py, self.user_data.as_deref()))?;
        Ok(d)
    }
}

/// One record of a batch.
#[pyclass(frozen, get_all, module = "groupcoord._native")]
pub struct Record {
    offset: i64,
    timestamp: i64,
    key: Option<Py<PyBytes>>,
    value: Option<Py<PyBytes>>,
    headers: Py<PyList>,
}

#[pymethods]
impl Record {
    fn __repr__(&self) -> String {
        format!("Record(offset={}, timestamp={})", self.offset, self.timestamp)
    }
}

/// A record batch as it lies in the log (magic 2, or one legacy wrapper/message).
#[pyclass(frozen, get_all, module = "groupcoord._native")]
pub struct RecordBatch {
    position: usize,
    size: usize,
    base_offset: i64,
    last_offset: i64,
    magic: i8,
    compression: &'static str,
    timestamp_type: &'static str,
    base_timestamp: i64,
    max_timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    partition_leader_epoch: i32,
    is_transactional: bool,
    is_control: bool,
    crc: u32,
    records: Py<PyList>,
}

#[pymethods]
impl RecordBatch {
    fn __repr__(&self) -> String {
        format!("RecordBatch(position={}, base_offset={}, last_offset={}, magic={}, compression={:?})", self.position, self.base_offset, self.last_offset, self.magic, self.compression)
    }
}

fn batch_to_py(py: Python<'_>, b: Batch) -> PyResult<RecordBatch> {
    let records = PyList::empty(py);
    for r in b.records {
        let headers = PyList::empty(py);
        for (k, v) in r.headers {
            headers.append((k, opt_bytes(py, v.as_deref())))?;
        }
        records.append(Record {
            offset: r.offset,
            timestamp: r.timestamp,
            key: opt_bytes(py, r.key.as_deref()).map(Bound::unbind),
            value: opt_bytes(py, r.value.as_deref()).map(Bound::unbind),
            headers: headers.unbind(),
        })?;
    }
    Ok(RecordBatch {
        position: b.position,
        size: b.size,
        base_offset: b.base_offset,
        last_offset: b.last_offset,
        magic: b.magic,
        compression: b.compression.name(),
        timestamp_type: if b.log_append_time { "log_append" } else { "create" },
        base_timestamp: b.base_timestamp,
        max_timestamp: b.max_timestamp,
        producer_id: b.producer_id,
        producer_epoch: b.producer_epoch,
        base_sequence: b.base_sequence,
        partition_leader_epoch: b.partition_leader_epoch,
        is_transactional: b.is_transactional,
        is_control: b.is_control,
        crc: b.crc,
        records: records.unbind(),
    })
}

/// One decoded record of a `__consumer_offsets` log.
#[pyclass(frozen, get_all, module = "groupcoord._native")]
pub struct OffsetsRecord {
    partition: i32,
    offset: i64,
    timestamp: i64,
    batch_position: usize,
    producer_id: i64,
    producer_epoch: i16,
    is_transactional: bool,
    control: Option<String>,
    key: Option<Py<PyAny>>,
    value: Option<Py<PyAny>>,
}

#[pymethods]
impl OffsetsRecord {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let show = |o: &Option<Py<PyAny>>| -> PyResult<String> {
            Ok(match o {
                Some(o) => o.bind(py).repr()?.to_string(),
                None => "None".into(),
            })
        };
        Ok(format!(
            "OffsetsRecord(partition={}, offset={}, timestamp={}, control={:?}, key={}, value={})",
            self.partition, self.offset, self.timestamp, self.control, show(&self.key)?, show(&self.value)?
        ))
    }
}

fn key_to_py(py: Python<'_>, key: Key) -> PyResult<Py<PyAny>> {
    Ok(match key {
        Key::OffsetCommit(k) => Py::new(py, k)?.into_any(),
        Key::GroupMetadata(k) => Py::new(py, k)?.into_any(),
        Key::ConsumerGroup(k) => Py::new(py, k)?.into_any(),
        Key::Opaque(k) => Py::new(py, k)?.into_any(),
    })
}

fn value_to_py(py: Python<'_>, value: Value) -> PyResult<Py<PyAny>> {
    Ok(match value {
        Value::OffsetCommit(v) => Py::new(py, v)?.into_any(),
        Value::GroupMetadata(v) => Py::new(py, v)?.into_any(),
        Value::ConsumerGroup(v) => Py::new(py, v)?.into_any(),
        Value::Opaque(v) => Py::new(py, v)?.into_any(),
    })
}

fn key_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Key> {
    if let Ok(k) = obj.cast::<OffsetCommitKey>() {
        return Ok(Key::OffsetCommit(k.get().clone()));
    }
    if let Ok(k) = obj.cast::<GroupMetadataKey>() {
        return Ok(Key::GroupMetadata(k.get().clone()));
    }
    if let Ok(k) = obj.cast::<ConsumerGroupKey>() {
        return Ok(Key::ConsumerGroup(k.get().clone()));
    }
    if let Ok(k) = obj.cast::<OpaqueKey>() {
        return Ok(Key::Opaque(k.get().clone()));
    }
    Err(PyTypeError::new_err("expected OffsetCommitKey, GroupMetadataKey, ConsumerGroupKey or OpaqueKey"))
}

fn value_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(v) = obj.cast::<OffsetCommitValue>() {
        return Ok(Value::OffsetCommit(v.get().clone()));
    }
    if let Ok(v) = obj.cast::<GroupMetadataValue>() {
        return Ok(Value::GroupMetadata(v.get().clone()));
    }
    if let Ok(v) = obj.cast::<ConsumerGroupValue>() {
        return Ok(Value::ConsumerGroup(v.get().clone()));
    }
    if let Ok(v) = obj.cast::<OpaqueValue>() {
        return Ok(Value::Opaque(v.get().clone()));
    }
    Err(PyTypeError::new_err("expected OffsetCommitValue, GroupMetadataValue, ConsumerGroupValue or OpaqueValue"))
}

fn record_to_py(py: Python<'_>, r: CoreOffsetsRecord) -> PyResult<OffsetsRecord> {
    Ok(OffsetsRecord {
        partition: r.partition,
        offset: r.offset,
        timestamp: r.timestamp,
        batch_position: r.batch_position,
        producer_id: r.producer_id,
        producer_epoch: r.producer_epoch,
        is_transactional: r.is_transactional,
        control: r.control.map(|c| c.name()),
        key: r.key.map(|k| key_to_py(py, k)).transpose()?,
        value: r.value.map(|v| value_to_py(py, v)).transpose()?,
    })
}

fn read_file(path: &std::path::Path) -> PyResult<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Io { path: path.display().to_string(), source }.into())
}

/// The partition number of a `__consumer_offsets-N` directory holding `path`, else -1.
fn partition_of(path: &std::path::Path) -> i32 {
    path.parent()
        .and_then(|dir| dir.file_name())
        .and_then(|name| name.to_str())
        .and_then(|name| name.rsplit_once('-'))
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(-1)
}

/// Parse the record batches of a log buffer.
#[pyfunction]
#[pyo3(signature = (data, *, position = 0, stop_at_corruption = false))]
fn read_batches<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, position: usize, stop_at_corruption: bool) -> PyResult<Bound<'py, PyList>> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    let parsed = py.detach(|| batch::read_batches(slice, position));
    batches_to_py(py, parsed, stop_at_corruption)
}

fn batches_to_py<'py>(py: Python<'py>, parsed: batch::Parsed, stop_at_corruption: bool) -> PyResult<Bound<'py, PyList>> {
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
fn read_segment<'py>(py: Python<'py>, path: PathBuf, stop_at_corruption: bool) -> PyResult<Bound<'py, PyList>> {
    let data = read_file(&path)?;
    let parsed = py.detach(|| batch::read_batches(&data, 0));
    batches_to_py(py, parsed, stop_at_corruption).map_err(|e| with_path(py, e, &path))
}

fn with_path(py: Python<'_>, err: PyErr, path: &std::path::Path) -> PyErr {
    let note = format!("in {}", path.display());
    let _ = err.value(py).call_method1("add_note", (note,));
    err
}

/// How many bytes at the start of `data` are whole, valid batches.
#[pyfunction]
fn valid_prefix_length(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    Ok(py.detach(|| batch::read_batches(slice, 0).valid_bytes))
}

fn compression_named(name: &str) -> PyResult<Compression> {
    Compression::from_name(name).ok_or_else(|| PyValueError::new_err(format!("unknown compression {name:?} (none, gzip, snappy, lz4, zstd)")))
}

/// Encode one RecordBatch v2 as a broker writes the coordinator's appends.
#[pyfunction]
#[pyo3(
    signature = (records, *, base_offset, timestamp, compression = "none", producer_id = -1, producer_epoch = -1, base_sequence = 0, is_transactional = false, partition_leader_epoch = 0),
    text_signature = "(records, *, base_offset, timestamp, compression='none', producer_id=-1, producer_epoch=-1, base_sequence=0, is_transactional=False, partition_leader_epoch=0)"
)]
#[allow(clippy::too_many_arguments)]
fn write_batch<'py>(
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
    let header = BatchHeader { base_offset, timestamp, compression, producer_id, producer_epoch, base_sequence, is_transactional, is_control: false, partition_leader_epoch };
    let refs: Vec<(Option<&[u8]>, Option<&[u8]>)> = records.iter().map(|(k, v)| (k.as_deref(), v.as_deref())).collect();
    Ok(bytes(py, &batch::write_batch(&header, &refs)?))
}

/// A record for `write_records`: (offset, timestamp, key, value[, headers]), owned.
type RecordTuple = (i64, i64, Option<Vec<u8>>, Option<Vec<u8>>, Vec<(String, Option<Vec<u8>>)>);

fn record_tuple(item: &Bound<'_, PyAny>) -> PyResult<RecordTuple> {
    let tuple = item.cast::<PyTuple>().map_err(|_| PyTypeError::new_err("a record is a tuple (offset, timestamp, key, value[, headers])"))?;
    match tuple.len() {
        4 => {
            let (offset, timestamp, key, value) = tuple.extract()?;
            Ok((offset, timestamp, key, value, Vec::new()))
        }
        5 => tuple.extract(),
        n => Err(PyValueError::new_err(format!("a record is a tuple (offset, timestamp, key, value[, headers]), not {n} items"))),
    }
}

/// Encode one RecordBatch v2 whose records keep their own offsets and timestamps.
#[pyfunction]
#[pyo3(
    signature = (records, *, base_offset, last_offset = None, timestamp = -1, delete_horizon_ms = None, compression = "none", producer_id = -1, producer_epoch = -1, base_sequence = 0, is_transactional = false, is_control = false, partition_leader_epoch = 0),
    text_signature = "(records, *, base_offset, last_offset=None, timestamp=-1, delete_horizon_ms=None, compression='none', producer_id=-1, producer_epoch=-1, base_sequence=0, is_transactional=False, is_control=False, partition_leader_epoch=0)"
)]
#[allow(clippy::too_many_arguments)]
fn write_records<'py>(
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
    let owned = records.try_iter()?.map(|item| record_tuple(&item?)).collect::<PyResult<Vec<RecordTuple>>>()?;
    let last_offset = last_offset
        .or(owned.last().map(|r| r.0))
        .ok_or_else(|| PyValueError::new_err("an empty batch needs last_offset"))?;
    let header = BatchHeader { base_offset, timestamp, compression, producer_id, producer_epoch, base_sequence, is_transactional, is_control, partition_leader_epoch };
    let encoded = py.detach(|| {
        let refs: Vec<RecordToWrite<'_>> = owned
            .iter()
            .map(|(offset, timestamp, key, value, headers)| RecordToWrite { offset: *offset, timestamp: *timestamp, key: key.as_deref(), value: value.as_deref(), headers })
            .collect();
        batch::write_records(&header, last_offset, delete_horizon_ms, &refs)
    })?;
    Ok(bytes(py, &encoded))
}

/// Encode a control batch holding one transaction marker (COMMIT or ABORT).
#[pyfunction]
#[pyo3(signature = (*, base_offset, timestamp, producer_id, producer_epoch, commit, coordinator_epoch = 0, partition_leader_epoch = 0))]
fn write_control_batch<'py>(
    py: Python<'py>,
    base_offset: i64,
    timestamp: i64,
    producer_id: i64,
    producer_epoch: i16,
    commit: bool,
    coordinator_epoch: i32,
    partition_leader_epoch: i32,
) -> PyResult<Bound<'py, PyBytes>> {
    let header = BatchHeader { producer_id, producer_epoch, base_sequence: -1, partition_leader_epoch, ..BatchHeader::plain(base_offset, timestamp) };
    Ok(bytes(py, &batch::write_control_batch(&header, ControlMarker { commit, coordinator_epoch })?))
}

#[pyfunction]
fn decode_key(py: Python<'_>, data: &[u8]) -> PyResult<Py<PyAny>> {
    key_to_py(py, records::decode_key(data, 0)?)
}

#[pyfunction]
fn decode_value(py: Python<'_>, key: &Bound<'_, PyAny>, data: Option<&[u8]>) -> PyResult<Option<Py<PyAny>>> {
    let key = key_from_py(key)?;
    records::decode_value(&key, data, 0)?.map(|v| value_to_py(py, v)).transpose()
}

#[pyfunction]
fn encode_key<'py>(py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_key(&key_from_py(key)?)))
}

#[pyfunction]
fn encode_value<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_value(&value_from_py(value)?)?))
}

#[pyfunction]
fn decode_subscription(data: &[u8]) -> PyResult<ConsumerProtocolSubscription> {
    Ok(records::decode_subscription(data, 0)?)
}

#[pyfunction]
fn decode_assignment(data: &[u8]) -> PyResult<ConsumerProtocolAssignment> {
    Ok(records::decode_assignment(data, 0)?)
}

#[pyfunction]
fn encode_subscription<'py>(py: Python<'py>, subscription: &ConsumerProtocolSubscription) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_subscription(subscription)?))
}

#[pyfunction]
fn encode_assignment<'py>(py: Python<'py>, assignment: &ConsumerProtocolAssignment) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_assignment(assignment)?))
}

fn records_to_py<'py>(py: Python<'py>, log: DecodedLog, stop_at_corruption: bool) -> PyResult<Bound<'py, PyList>> {
    if let (Some(error), false) = (log.error, stop_at_corruption) {
        return Err(error.into());
    }
    let list = PyList::empty(py);
    for r in log.records {
        list.append(record_to_py(py, r)?)?;
    }
    Ok(list)
}

/// Decodes a log buffer with the thread detached from the interpreter.
fn log_of_buffer(py: Python<'_>, data: &Bound<'_, PyAny>, partition: i32, position: usize) -> PyResult<DecodedLog> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    Ok(py.detach(|| decode_log(slice, position, partition)))
}

/// Decodes a segment file; the partition defaults to the N of its `__consumer_offsets-N`
/// directory.
fn log_of_segment(py: Python<'_>, path: &std::path::Path, partition: Option<i32>) -> PyResult<DecodedLog> {
    let data = read_file(path)?;
    let partition = partition.unwrap_or_else(|| partition_of(path));
    Ok(py.detach(|| decode_log(&data, 0, partition)))
}

/// Decode every record of a `__consumer_offsets` log buffer.
#[pyfunction]
#[pyo3(
    signature = (data, *, partition = -1, position = 0, stop_at_corruption = false),
    text_signature = "(data, *, partition=-1, position=0, stop_at_corruption=False)"
)]
fn decode_records<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, partition: i32, position: usize, stop_at_corruption: bool) -> PyResult<Bound<'py, PyList>> {
    records_to_py(py, log_of_buffer(py, data, partition, position)?, stop_at_corruption)
}

/// Decode every record of a segment file.
#[pyfunction]
#[pyo3(signature = (path, *, partition = None, stop_at_corruption = false))]
fn decode_segment<'py>(py: Python<'py>, path: PathBuf, partition: Option<i32>, stop_at_corruption: bool) -> PyResult<Bound<'py, PyList>> {
    records_to_py(py, log_of_segment(py, &path, partition)?, stop_at_corruption).map_err(|e| with_path(py, e, &path))
}

fn arrow_error(e: ::arrow_schema::ArrowError) -> PyErr {
    PyValueError::new_err(format!("building the Arrow batch: {e}"))
}

fn records_to_arrow<'py>(py: Python<'py>, log: DecodedLog, stop_at_corruption: bool) -> PyResult<Bound<'py, PyAny>> {
    use arrow_pyarrow::ToPyArrow;
    if let (Some(error), false) = (log.error, stop_at_corruption) {
        return Err(error.into());
    }
    let batch = py.detach(|| crate::codec::arrow::to_record_batch(&log.records)).map_err(arrow_error)?;
    batch.to_pyarrow(py)
}

/// Decode every record of a `__consumer_offsets` log buffer into one pyarrow.RecordBatch.
#[pyfunction]
#[pyo3(
    signature = (data, *, partition = -1, position = 0, stop_at_corruption = false),
    text_signature = "(data, *, partition=-1, position=0, stop_at_corruption=False)"
)]
fn decode_arrow<'py>(py: Python<'py>, data: &Bound<'py, PyAny>, partition: i32, position: usize, stop_at_corruption: bool) -> PyResult<Bound<'py, PyAny>> {
    records_to_arrow(py, log_of_buffer(py, data, partition, position)?, stop_at_corruption)
}

/// `decode_arrow` of a segment file.
#[pyfunction]
#[pyo3(signature = (path, *, partition = None, stop_at_corruption = false))]
fn decode_segment_arrow<'py>(py: Python<'py>, path: PathBuf, partition: Option<i32>, stop_at_corruption: bool) -> PyResult<Bound<'py, PyAny>> {
    records_to_arrow(py, log_of_segment(py, &path, partition)?, stop_at_corruption).map_err(|e| with_path(py, e, &path))
}

/// The schema of `decode_arrow`'s record batches, as a pyarrow.Schema.
#[pyfunction(name = "arrow_schema")]
fn offsets_arrow_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    use arrow_pyarrow::ToPyArrow;
    crate::codec::arrow::schema().as_ref().to_pyarrow(py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<OffsetCommitKey>()?;
    m.add_class::<GroupMetadataKey>()?;
    m.add_class::<OpaqueKey>()?;
    m.add_class::<OffsetCommitValue>()?;
    m.add_class::<MemberMetadata>()?;
    m.add_class::<GroupMetadataValue>()?;
    m.add_class::<OpaqueValue>()?;
    m.add_class::<ConsumerGroupKey>()?;
    m.add_class::<ConsumerGroupValue>()?;
    m.add_class::<ConsumerProtocolSubscription>()?;
    m.add_class::<ConsumerProtocolAssignment>()?;
    m.add_class::<Record>()?;
    m.add_class::<RecordBatch>()?;
    m.add_class::<OffsetsRecord>()?;
    m.add_function(wrap_pyfunction!(read_batches, m)?)?;
    m.add_function(wrap_pyfunction!(read_segment, m)?)?;
    m.add_function(wrap_pyfunction!(valid_prefix_length, m)?)?;
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
    m.add_function(wrap_pyfunction!(decode_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(decode_segment_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(offsets_arrow_schema, m)?)?;
    Ok(())
}
