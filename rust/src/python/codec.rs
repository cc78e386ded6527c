//! Python bindings of the `__consumer_offsets` codec: the record classes, batches and decoded
//! records, and the read/write functions.
//!
//! The classes of the common records (offset commits, group metadata) hold Python strings and
//! bytes, built once from the borrowed key and value and shared between records when they
//! repeat (group, topic, client names); the rarer ones are the core structs of
//! [`crate::codec::records`]. Bulk decodes check and decompress batches with the thread
//! detached from the interpreter, a chunk at a time, then build the objects.

use std::path::PathBuf;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::codec::batch::{self, Batch, BatchHeader, ControlMarker, RecordToWrite};
use crate::codec::batch::{
    BatchInfo, LogReader, Pipeline, ReaderState, RecordRef, Records, CHUNK_BYTES,
};
use crate::codec::compression::Compression;
use crate::codec::consumer_group;
use crate::codec::generated::record_type;
use crate::codec::log::{decode_payload, Control, Payload};
use crate::codec::primitives::{TaggedSection, UnknownTaggedFields};
use crate::codec::records::{
    self, ConsumerGroupKey, ConsumerGroupValue, ConsumerProtocolAssignment,
    ConsumerProtocolSubscription, GroupMetadataKey, GroupMetadataValue, Key, KeyRef,
    MemberMetadata, OffsetCommitKey, OffsetCommitValue, OpaqueKey, OpaqueValue, Value, ValueRef,
};
use crate::error::Error;
use crate::python::errors::{invalid_argument, wrong_type};
use crate::python::record_class::{
    by_from_fields, datum_to_py, fields_equal, record_class, topic_partitions, Reduced,
};

/// Input bytes: borrowed from `bytes` and from a contiguous `memoryview` of `bytes` (both
/// immutable), copied from any other buffer (bytearray, mmap, ...), whose contents another
/// thread may change while a decode without the GIL reads them.
enum Input<'py> {
    Borrowed(Bound<'py, PyBytes>),
    View(ImmutableView),
    Owned(Vec<u8>),
}

/// A contiguous, read-only export of a `bytes` object (through a `memoryview`): held, it keeps
/// the bytes alive and unchanged, so they are read where they lie.
struct ImmutableView(PyBuffer<u8>);

impl ImmutableView {
    fn of(obj: &Bound<'_, PyAny>) -> Option<Self> {
        let view = obj.cast::<pyo3::types::PyMemoryView>().ok()?;
        let base = view.getattr("obj").ok()?;
        if !base.is_instance_of::<PyBytes>() {
            return None;
        }
        let buffer = PyBuffer::<u8>::get(obj).ok()?;
        (buffer.readonly() && buffer.is_c_contiguous()).then_some(ImmutableView(buffer))
    }

    fn as_slice(&self) -> &[u8] {
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
    fn from_py<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Input<'py>> {
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

    fn as_slice(&self) -> &[u8] {
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
fn not_a_byte_buffer(obj: &Bound<'_, PyAny>) -> PyErr {
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

fn bytes<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, data)
}

fn opt_bytes<'py>(py: Python<'py>, data: Option<&[u8]>) -> Option<Bound<'py, PyBytes>> {
    data.map(|d| PyBytes::new(py, d))
}

fn check_i16_type(
    record_type: i16,
    allowed: std::ops::RangeInclusive<i16>,
    what: &str,
) -> PyResult<()> {
    if allowed.contains(&record_type) {
        Ok(())
    } else {
        Err(invalid_argument(format!(
            "{what} record_type must be in {allowed:?}, not {record_type}"
        )))
    }
}

/// Python strings made once per distinct name within one decode: groups, topics, protocols
/// and client names repeat from record to record, so the records share one `str` per name.
///
/// A direct-mapped table: a name's hash picks its one slot, and a name that lands on an
/// occupied slot takes it over. Looking a name up is a hash of its bytes and one comparison,
/// which matters more here than keeping every name (values like member ids are not cached).
/// The default has no table and makes a string per name: what decoding one record needs.
#[derive(Default)]
struct Names {
    slots: Vec<Option<NameSlot>>,
}

struct NameSlot {
    key: NameKey,
    /// The bytes past the key's head, for names longer than it.
    rest: Box<[u8]>,
    string: Py<PyString>,
}

/// A name's length and first bytes, zero-padded.
struct NameKey {
    len: usize,
    head: [u64; NameKey::HEAD_WORDS],
}

impl NameKey {
    const HEAD_WORDS: usize = 4;
    const HEAD_BYTES: usize = 8 * Self::HEAD_WORDS;

    fn new(name: &[u8]) -> Self {
        NameKey {
            len: name.len(),
            head: std::array::from_fn(|i| padded_word(name, 8 * i)),
        }
    }

    /// Whether two keys are equal, compared word by word: the derived comparison calls
    /// `memcmp`, which costs more than the rest of a lookup.
    fn same(&self, other: &NameKey) -> bool {
        let differ = self
            .head
            .iter()
            .zip(&other.head)
            .fold(self.len ^ other.len, |d, (a, b)| d | (a ^ b) as usize);
        differ == 0
    }

    /// The multiply-and-rotate step of rustc's FxHash over the length, the head's words and
    /// those of any bytes past it.
    fn hash(&self, rest: &[u8]) -> u64 {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let step = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(K);
        let h = self
            .head
            .iter()
            .fold(step(0, self.len as u64), |h, &w| step(h, w));
        (0..rest.len())
            .step_by(8)
            .fold(h, |h, at| step(h, padded_word(rest, at)))
    }
}

/// The eight bytes of `bytes` from `at` as a little-endian word, zero past the end. (Built
/// from the bytes rather than copied into a padded array, which the loads that follow
/// would have to wait for.)
fn padded_word(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at + 8) {
        Some(word) => u64::from_le_bytes(word.try_into().expect("eight bytes")),
        None => bytes
            .get(at..)
            .unwrap_or_default()
            .iter()
            .rev()
            .fold(0, |word, &b| (word << 8) | u64::from(b)),
    }
}

impl Names {
    const SLOT_BITS: u32 = 12;
    const SLOTS: usize = 1 << Self::SLOT_BITS;

    fn shared() -> Self {
        Names {
            slots: (0..Self::SLOTS).map(|_| None).collect(),
        }
    }

    fn get(&mut self, py: Python<'_>, name: &str) -> Py<PyString> {
        if self.slots.is_empty() {
            return PyString::new(py, name).unbind();
        }
        let bytes = name.as_bytes();
        let key = NameKey::new(bytes);
        let rest = bytes.get(NameKey::HEAD_BYTES..).unwrap_or_default();
        let index = key.hash(rest) >> (64 - Self::SLOT_BITS);
        let slot = &mut self.slots[index as usize];
        if let Some(s) = slot {
            if s.key.same(&key) && (rest.is_empty() || *s.rest == *rest) {
                return s.string.clone_ref(py);
            }
        }
        let string = PyString::new(py, name).unbind();
        *slot = Some(NameSlot {
            key,
            rest: rest.into(),
            string: string.clone_ref(py),
        });
        string
    }
}

fn new_str(py: Python<'_>, s: &str) -> Py<PyString> {
    PyString::new(py, s).unbind()
}

/// The text of a Python string held by a record class (checked to be UTF-8 when stored).
fn text(py: Python<'_>, s: &Py<PyString>) -> PyResult<String> {
    Ok(s.bind(py).to_cow()?.into_owned())
}

fn opt_text(py: Python<'_>, s: &Option<Py<PyString>>) -> PyResult<Option<String>> {
    s.as_ref().map(|s| text(py, s)).transpose()
}

/// Python's `repr` of a value, so that a `__repr__` reads as Python: `'range'`, `None`, lists.
fn py_repr<'py, T: IntoPyObject<'py>>(py: Python<'py>, value: T) -> PyResult<String> {
    use pyo3::IntoPyObjectExt;
    Ok(value.into_bound_py_any(py)?.repr()?.to_string())
}

/// A string argument, refused if it cannot be encoded as UTF-8 (lone surrogates).
fn checked_str(s: Bound<'_, PyString>) -> PyResult<Py<PyString>> {
    s.to_str()?;
    Ok(s.unbind())
}

/// A bytes argument: `bytes` kept as it is, any other buffer or sequence of ints copied.
fn bytes_arg(obj: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
    match obj.cast::<PyBytes>() {
        Ok(b) => Ok(b.clone().unbind()),
        Err(_) => Ok(PyBytes::new(obj.py(), &obj.extract::<Vec<u8>>()?).unbind()),
    }
}

/// A struct's unknown tagged fields as the record classes hold them: a tuple of
/// `(tag, bytes)`, the shared empty tuple when there are none (nearly always).
fn tagged_fields(py: Python<'_>, section: TaggedSection<'_>) -> PyResult<Py<PyTuple>> {
    if section.is_empty() {
        return Ok(PyTuple::empty(py).unbind());
    }
    let fields: Vec<_> = section
        .fields()
        .map(|(tag, b)| (tag, bytes(py, b)))
        .collect();
    Ok(PyTuple::new(py, fields)?.unbind())
}

/// An `unknown_tagged_fields` argument: any sequence of `(tag, bytes)` pairs.
fn tagged_fields_arg(py: Python<'_>, arg: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyTuple>> {
    let Some(arg) = arg else {
        return Ok(PyTuple::empty(py).unbind());
    };
    let fields: UnknownTaggedFields = arg.extract().map_err(|e| {
        wrong_type(format!(
            "unknown_tagged_fields must be a sequence of (tag, bytes) pairs: {e}"
        ))
    })?;
    let fields = fields.into_iter().map(|(tag, b)| (tag, bytes(py, &b)));
    Ok(PyTuple::new(py, fields)?.unbind())
}

fn tagged_fields_core(py: Python<'_>, fields: &Py<PyTuple>) -> PyResult<UnknownTaggedFields> {
    fields.bind(py).extract()
}

/// Key of a committed offset (record types 0 and 1; brokers since 0.9 write 1).
#[pyclass(frozen, name = "OffsetCommitKey", module = "groupcoord._native")]
pub struct PyOffsetCommitKey {
    #[pyo3(get)]
    pub(crate) group: Py<PyString>,
    #[pyo3(get)]
    pub(crate) topic: Py<PyString>,
    #[pyo3(get)]
    pub(crate) partition: i32,
    #[pyo3(get)]
    pub(crate) record_type: i16,
}

impl PyOffsetCommitKey {
    fn to_core(&self, py: Python<'_>) -> PyResult<OffsetCommitKey> {
        Ok(OffsetCommitKey {
            group: text(py, &self.group)?,
            topic: text(py, &self.topic)?,
            partition: self.partition,
            record_type: self.record_type,
        })
    }
}

record_class!(by_fields, PyOffsetCommitKey {
    #[new]
    #[pyo3(signature = (group, topic, partition, record_type = 1))]
    fn py_new(
        group: Bound<'_, PyString>,
        topic: Bound<'_, PyString>,
        partition: i32,
        record_type: i16,
    ) -> PyResult<Self> {
        check_i16_type(
            record_type,
            record_type::LEGACY_OFFSET_COMMIT..=record_type::OFFSET_COMMIT,
            "OffsetCommitKey",
        )?;
        Ok(PyOffsetCommitKey {
            group: checked_str(group)?,
            topic: checked_str(topic)?,
            partition,
            record_type,
        })
    }
});

/// Key of a group's metadata (record type 2).
#[pyclass(frozen, name = "GroupMetadataKey", module = "groupcoord._native")]
pub struct PyGroupMetadataKey {
    #[pyo3(get)]
    pub(crate) group: Py<PyString>,
}

record_class!(by_fields, PyGroupMetadataKey {
    #[new]
    fn py_new(group: Bound<'_, PyString>) -> PyResult<Self> {
        Ok(PyGroupMetadataKey {
            group: checked_str(group)?,
        })
    }

    #[getter]
    fn record_type(&self) -> i16 {
        record_type::GROUP_METADATA
    }
});

record_class!(by_rust, OpaqueKey {
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
});

/// A committed offset (OffsetCommitValue, versions 0 to 4).
#[pyclass(frozen, name = "OffsetCommitValue", module = "groupcoord._native")]
pub struct PyOffsetCommitValue {
    #[pyo3(get)]
    pub(crate) offset: i64,
    #[pyo3(get)]
    pub(crate) metadata: Py<PyString>,
    #[pyo3(get)]
    pub(crate) commit_timestamp: i64,
    #[pyo3(get)]
    pub(crate) leader_epoch: i32,
    #[pyo3(get)]
    pub(crate) expire_timestamp: i64,
    #[pyo3(get)]
    pub(crate) version: i16,
    /// Kafka's form of the topic id (unpadded base64url), valid: see [`topic_id_arg`].
    #[pyo3(get)]
    pub(crate) topic_id: Option<Py<PyString>>,
    #[pyo3(get)]
    pub(crate) unknown_tagged_fields: Py<PyTuple>,
}

impl PyOffsetCommitValue {
    fn to_core(&self, py: Python<'_>) -> PyResult<OffsetCommitValue> {
        Ok(OffsetCommitValue {
            offset: self.offset,
            metadata: text(py, &self.metadata)?,
            commit_timestamp: self.commit_timestamp,
            leader_epoch: self.leader_epoch,
            expire_timestamp: self.expire_timestamp,
            version: self.version,
            topic_id: match &self.topic_id {
                Some(id) => Some(topic_id_arg(id.bind(py))?),
                None => None,
            },
            unknown_tagged_fields: tagged_fields_core(py, &self.unknown_tagged_fields)?,
        })
    }
}

/// The uuid of a `topic_id` argument: Kafka's form of one, as `Uuid.toString` writes it.
fn topic_id_arg(text: &Bound<'_, PyString>) -> PyResult<[u8; 16]> {
    consumer_group::uuid_from_string(text.to_str()?).ok_or_else(|| {
        invalid_argument(format!(
            "topic_id {} is not a topic id as Kafka writes one (22 characters of base64url)",
            text.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

record_class!(by_fields, PyOffsetCommitValue {
    #[new]
    #[pyo3(
        signature = (offset, metadata = None, commit_timestamp = -1, leader_epoch = -1, expire_timestamp = -1, version = 3, unknown_tagged_fields = None, topic_id = None),
        text_signature = "(offset, metadata='', commit_timestamp=-1, leader_epoch=-1, expire_timestamp=-1, version=3, unknown_tagged_fields=(), topic_id=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        offset: i64,
        metadata: Option<Bound<'_, PyString>>,
        commit_timestamp: i64,
        leader_epoch: i32,
        expire_timestamp: i64,
        version: i16,
        unknown_tagged_fields: Option<&Bound<'_, PyAny>>,
        topic_id: Option<Bound<'_, PyString>>,
    ) -> PyResult<Self> {
        let metadata = match metadata {
            Some(m) => checked_str(m)?,
            None => PyString::intern(py, "").unbind(),
        };
        if let Some(id) = &topic_id {
            topic_id_arg(id)?;
        }
        let unknown_tagged_fields = tagged_fields_arg(py, unknown_tagged_fields)?;
        if tagged_fields_core(py, &unknown_tagged_fields)?
            .iter()
            .any(|(tag, _)| *tag == 0)
        {
            return Err(invalid_argument(
                "tagged field 0 is OffsetCommitValue's topic id: give it as topic_id",
            ));
        }
        Ok(PyOffsetCommitValue {
            offset,
            metadata,
            commit_timestamp,
            leader_epoch,
            expire_timestamp,
            version,
            topic_id: topic_id.map(Bound::unbind),
            unknown_tagged_fields,
        })
    }
});

/// One member in a group's metadata.
#[pyclass(frozen, name = "MemberMetadata", module = "groupcoord._native")]
pub struct PyMemberMetadata {
    #[pyo3(get)]
    pub(crate) member_id: Py<PyString>,
    #[pyo3(get)]
    pub(crate) group_instance_id: Option<Py<PyString>>,
    #[pyo3(get)]
    pub(crate) client_id: Py<PyString>,
    #[pyo3(get)]
    pub(crate) client_host: Py<PyString>,
    #[pyo3(get)]
    pub(crate) rebalance_timeout: i32,
    #[pyo3(get)]
    pub(crate) session_timeout: i32,
    #[pyo3(get)]
    pub(crate) subscription: Py<PyBytes>,
    #[pyo3(get)]
    pub(crate) assignment: Py<PyBytes>,
    #[pyo3(get)]
    pub(crate) unknown_tagged_fields: Py<PyTuple>,
}

impl PyMemberMetadata {
    fn to_core(&self, py: Python<'_>) -> PyResult<MemberMetadata> {
        Ok(MemberMetadata {
            member_id: text(py, &self.member_id)?,
            group_instance_id: opt_text(py, &self.group_instance_id)?,
            client_id: text(py, &self.client_id)?,
            client_host: text(py, &self.client_host)?,
            rebalance_timeout: self.rebalance_timeout,
            session_timeout: self.session_timeout,
            subscription: self.subscription.as_bytes(py).to_vec(),
            assignment: self.assignment.as_bytes(py).to_vec(),
            unknown_tagged_fields: tagged_fields_core(py, &self.unknown_tagged_fields)?,
        })
    }
}

record_class!(by_fields, PyMemberMetadata {
    #[new]
    #[pyo3(
        signature = (member_id, group_instance_id, client_id, client_host, rebalance_timeout, session_timeout, subscription, assignment, unknown_tagged_fields = None),
        text_signature = "(member_id, group_instance_id, client_id, client_host, rebalance_timeout, session_timeout, subscription, assignment, unknown_tagged_fields=())"
    )]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        member_id: Bound<'_, PyString>,
        group_instance_id: Option<Bound<'_, PyString>>,
        client_id: Bound<'_, PyString>,
        client_host: Bound<'_, PyString>,
        rebalance_timeout: i32,
        session_timeout: i32,
        subscription: &Bound<'_, PyAny>,
        assignment: &Bound<'_, PyAny>,
        unknown_tagged_fields: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(PyMemberMetadata {
            member_id: checked_str(member_id)?,
            group_instance_id: group_instance_id.map(checked_str).transpose()?,
            client_id: checked_str(client_id)?,
            client_host: checked_str(client_host)?,
            rebalance_timeout,
            session_timeout,
            subscription: bytes_arg(subscription)?,
            assignment: bytes_arg(assignment)?,
            unknown_tagged_fields: tagged_fields_arg(py, unknown_tagged_fields)?,
        })
    }
});

/// A classic group's metadata (GroupMetadataValue, versions 0 to 4).
#[pyclass(frozen, name = "GroupMetadataValue", module = "groupcoord._native")]
pub struct PyGroupMetadataValue {
    #[pyo3(get)]
    pub(crate) protocol_type: Py<PyString>,
    #[pyo3(get)]
    pub(crate) generation: i32,
    #[pyo3(get)]
    pub(crate) protocol: Option<Py<PyString>>,
    #[pyo3(get)]
    pub(crate) leader: Option<Py<PyString>>,
    #[pyo3(get)]
    pub(crate) current_state_timestamp: i64,
    pub(crate) members: Vec<Py<PyMemberMetadata>>,
    #[pyo3(get)]
    pub(crate) version: i16,
    #[pyo3(get)]
    pub(crate) unknown_tagged_fields: Py<PyTuple>,
}

impl PyGroupMetadataValue {
    fn to_core(&self, py: Python<'_>) -> PyResult<GroupMetadataValue> {
        let members = self
            .members
            .iter()
            .map(|m| m.get().to_core(py))
            .collect::<PyResult<_>>()?;
        Ok(GroupMetadataValue {
            protocol_type: text(py, &self.protocol_type)?,
            generation: self.generation,
            protocol: opt_text(py, &self.protocol)?,
            leader: opt_text(py, &self.leader)?,
            current_state_timestamp: self.current_state_timestamp,
            members,
            version: self.version,
            unknown_tagged_fields: tagged_fields_core(py, &self.unknown_tagged_fields)?,
        })
    }
}

record_class!(by_fields, PyGroupMetadataValue {
    #[new]
    #[pyo3(
        signature = (protocol_type, generation, protocol, leader, current_state_timestamp = -1, members = None, version = 3, unknown_tagged_fields = None),
        text_signature = "(protocol_type, generation, protocol, leader, current_state_timestamp=-1, members=..., version=3, unknown_tagged_fields=())"
    )]
    #[allow(clippy::too_many_arguments)]
    fn py_new(
        py: Python<'_>,
        protocol_type: Bound<'_, PyString>,
        generation: i32,
        protocol: Option<Bound<'_, PyString>>,
        leader: Option<Bound<'_, PyString>>,
        current_state_timestamp: i64,
        members: Option<Vec<Bound<'_, PyMemberMetadata>>>,
        version: i16,
        unknown_tagged_fields: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(PyGroupMetadataValue {
            protocol_type: checked_str(protocol_type)?,
            generation,
            protocol: protocol.map(checked_str).transpose()?,
            leader: leader.map(checked_str).transpose()?,
            current_state_timestamp,
            members: members
                .unwrap_or_default()
                .into_iter()
                .map(Bound::unbind)
                .collect(),
            version,
            unknown_tagged_fields: tagged_fields_arg(py, unknown_tagged_fields)?,
        })
    }

    #[getter]
    fn members<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, &self.members)
    }
});

/// Builds the record classes from borrowed keys and values; a log's records share repeated
/// names.
#[derive(Default)]
struct RecordObjects {
    names: Names,
}

impl RecordObjects {
    fn for_log() -> Self {
        RecordObjects {
            names: Names::shared(),
        }
    }

    fn key(&mut self, py: Python<'_>, key: KeyRef<'_>) -> PyResult<Py<PyAny>> {
        Ok(match key {
            KeyRef::OffsetCommit {
                record_type,
                group,
                topic,
                partition,
            } => {
                let key = PyOffsetCommitKey {
                    group: self.names.get(py, group),
                    topic: self.names.get(py, topic),
                    partition,
                    record_type,
                };
                Py::new(py, key)?.into_any()
            }
            KeyRef::GroupMetadata { group } => Py::new(
                py,
                PyGroupMetadataKey {
                    group: self.names.get(py, group),
                },
            )?
            .into_any(),
            KeyRef::ConsumerGroup(k) => Py::new(py, k)?.into_any(),
            KeyRef::Opaque { record_type, data } => Py::new(
                py,
                OpaqueKey {
                    record_type,
                    data: data.to_vec(),
                },
            )?
            .into_any(),
        })
    }

    fn value(&mut self, py: Python<'_>, value: ValueRef<'_>) -> PyResult<Py<PyAny>> {
        Ok(match value {
            ValueRef::OffsetCommit(v) => {
                let value = PyOffsetCommitValue {
                    offset: v.offset,
                    metadata: self.names.get(py, v.metadata),
                    commit_timestamp: v.commit_timestamp,
                    leader_epoch: v.leader_epoch,
                    expire_timestamp: v.expire_timestamp,
                    version: v.version,
                    topic_id: match v.topic_id {
                        Some(id) => Some(new_str(py, &consumer_group::uuid_string(id))),
                        None => None,
                    },
                    unknown_tagged_fields: tagged_fields(py, v.unknown_tagged_fields)?,
                };
                Py::new(py, value)?.into_any()
            }
            ValueRef::GroupMetadata(g) => {
                let members: Vec<Py<PyMemberMetadata>> = g
                    .members
                    .iter()
                    .map(|m| {
                        let member = PyMemberMetadata {
                            member_id: new_str(py, m.member_id),
                            group_instance_id: m.group_instance_id.map(|s| new_str(py, s)),
                            client_id: self.names.get(py, m.client_id),
                            client_host: self.names.get(py, m.client_host),
                            rebalance_timeout: m.rebalance_timeout,
                            session_timeout: m.session_timeout,
                            subscription: PyBytes::new(py, m.subscription).unbind(),
                            assignment: PyBytes::new(py, m.assignment).unbind(),
                            unknown_tagged_fields: tagged_fields(py, m.unknown_tagged_fields)?,
                        };
                        Py::new(py, member)
                    })
                    .collect::<PyResult<_>>()?;
                let value = PyGroupMetadataValue {
                    protocol_type: self.names.get(py, g.protocol_type),
                    generation: g.generation,
                    protocol: g.protocol.map(|s| self.names.get(py, s)),
                    leader: g.leader.map(|s| new_str(py, s)),
                    current_state_timestamp: g.current_state_timestamp,
                    members,
                    version: g.version,
                    unknown_tagged_fields: tagged_fields(py, g.unknown_tagged_fields)?,
                };
                Py::new(py, value)?.into_any()
            }
            ValueRef::ConsumerGroup(v) => Py::new(py, v)?.into_any(),
            ValueRef::Opaque {
                record_type,
                version,
                data,
            } => Py::new(
                py,
                OpaqueValue {
                    record_type,
                    version,
                    data: data.to_vec(),
                },
            )?
            .into_any(),
        })
    }
}

record_class!(by_rust, OpaqueValue {
    #[new]
    fn py_new(record_type: i16, version: Option<i16>, data: Vec<u8>) -> PyResult<Self> {
        if version.is_none() && data.len() >= 2 {
            return Err(Error::InvalidArgument(format!(
                "an OpaqueValue without a version holds the whole value, shorter than 2 bytes; \
                 {} bytes would be read back as a version and its data",
                data.len()
            ))
            .into());
        }
        if version.is_none() && records::is_known_record_type(record_type) {
            return Err(Error::InvalidArgument(format!(
                "an OpaqueValue without a version is a value of an unknown record type; a \
                 type-{record_type} value shorter than 2 bytes does not decode"
            ))
            .into());
        }
        Ok(OpaqueValue {
            record_type,
            version,
            data,
        })
    }

    #[getter]
    fn record_type(&self) -> i16 {
        self.record_type
    }
    #[getter]
    fn version(&self) -> Option<i16> {
        self.version
    }
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        bytes(py, &self.data)
    }
});

record_class!(by_rust, ConsumerGroupKey {
    #[new]
    #[pyo3(signature = (record_type, group_id, member_id = None, regular_expression = None))]
    fn py_new(
        record_type: i16,
        group_id: String,
        member_id: Option<String>,
        regular_expression: Option<String>,
    ) -> PyResult<Self> {
        let second = consumer_group::key_second_field(record_type).ok_or_else(|| {
            invalid_argument(format!(
                "record_type {record_type} is not a consumer-group record (3 to 8, 16)"
            ))
        })?;
        let given = match (&member_id, &regular_expression) {
            (Some(_), None) => Some("member_id"),
            (None, Some(_)) => Some("regular_expression"),
            (None, None) => None,
            (Some(_), Some(_)) => {
                return Err(invalid_argument(
                    "a key has a member_id or a regular_expression, not both",
                ))
            }
        };
        if given != second {
            return Err(invalid_argument(format!(
                "record type {record_type} keys carry {}",
                second.unwrap_or("only group_id")
            )));
        }
        Ok(ConsumerGroupKey {
            record_type,
            group_id,
            member_id,
            regular_expression,
        })
    }
});

record_class!(by_rust_own_reduce, ConsumerGroupValue {
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

    /// Made again from its encoding: the fields are decoded by the record type's schema. The
    /// encoding keeps undeclared tagged fields in the order they were read, so that a value
    /// Kafka's writers would refuse (tags out of order) still copies to an equal one.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Reduced<'py>> {
        let py = slf.py();
        let v = slf.get();
        let data = records::encode_consumer_group_value(v, consumer_group::UnknownTags::AsRead)?;
        by_from_fields(slf, (v.record_type, bytes(py, &data)).into_pyobject(py)?)
    }

    #[staticmethod]
    fn _from_fields(record_type: i16, data: &[u8]) -> PyResult<Self> {
        match records::decode_value_ref(
            records::ValueKind::ConsumerGroup(record_type),
            Some(data),
            0,
        )? {
            Some(ValueRef::ConsumerGroup(v)) => Ok(v),
            _ => Err(invalid_argument(format!(
                "record type {record_type} is not a consumer-group record (3 to 8, 16)"
            ))),
        }
    }
});

record_class!(by_rust, ConsumerProtocolSubscription {
    #[new]
    #[pyo3(
        signature = (topics, user_data = None, owned_partitions = Vec::new(), generation_id = -1, rack_id = None, version = 3),
        text_signature = "(topics, user_data=None, owned_partitions=..., generation_id=-1, rack_id=None, version=3)"
    )]
    fn py_new(
        topics: Vec<String>,
        user_data: Option<Vec<u8>>,
        owned_partitions: Vec<(String, Vec<i32>)>,
        generation_id: i32,
        rack_id: Option<String>,
        version: i16,
    ) -> Self {
        ConsumerProtocolSubscription {
            version,
            topics,
            user_data,
            owned_partitions,
            generation_id,
            rack_id,
        }
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
});

record_class!(by_rust, ConsumerProtocolAssignment {
    #[new]
    #[pyo3(signature = (assigned_partitions, user_data = None, version = 3))]
    fn py_new(
        assigned_partitions: Vec<(String, Vec<i32>)>,
        user_data: Option<Vec<u8>>,
        version: i16,
    ) -> Self {
        ConsumerProtocolAssignment {
            version,
            assigned_partitions,
            user_data,
        }
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
});

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
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
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
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
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

fn batch_to_py(py: Python<'_>, b: Batch) -> PyResult<RecordBatch> {
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
    partition: i32,
    offset: i64,
    timestamp: i64,
    batch_position: usize,
    producer_id: i64,
    producer_epoch: i16,
    is_transactional: bool,
    control: Option<&'static str>,
    key: Option<Py<PyAny>>,
    value: Option<Py<PyAny>>,
}

impl OffsetsRecord {
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
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

fn key_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Key> {
    let py = obj.py();
    if let Ok(k) = obj.cast::<PyOffsetCommitKey>() {
        return Ok(Key::OffsetCommit(k.get().to_core(py)?));
    }
    if let Ok(k) = obj.cast::<PyGroupMetadataKey>() {
        return Ok(Key::GroupMetadata(GroupMetadataKey {
            group: text(py, &k.get().group)?,
        }));
    }
    if let Ok(k) = obj.cast::<ConsumerGroupKey>() {
        return Ok(Key::ConsumerGroup(k.get().clone()));
    }
    if let Ok(k) = obj.cast::<OpaqueKey>() {
        return Ok(Key::Opaque(k.get().clone()));
    }
    Err(wrong_type(
        "expected OffsetCommitKey, GroupMetadataKey, ConsumerGroupKey or OpaqueKey",
    ))
}

fn value_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    let py = obj.py();
    if let Ok(v) = obj.cast::<PyOffsetCommitValue>() {
        return Ok(Value::OffsetCommit(v.get().to_core(py)?));
    }
    if let Ok(v) = obj.cast::<PyGroupMetadataValue>() {
        return Ok(Value::GroupMetadata(v.get().to_core(py)?));
    }
    if let Ok(v) = obj.cast::<ConsumerGroupValue>() {
        return Ok(Value::ConsumerGroup(v.get().clone()));
    }
    if let Ok(v) = obj.cast::<OpaqueValue>() {
        return Ok(Value::Opaque(v.get().clone()));
    }
    Err(wrong_type(
        "expected OffsetCommitValue, GroupMetadataValue, ConsumerGroupValue or OpaqueValue",
    ))
}

/// The Python object of one record, built straight from its borrowed key and value.
fn record_object(
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
fn append_batch(
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

/// A decode into Python objects, a chunk of batches at a time, that keeps no borrow of its
/// input between chunks: what the iterators of `iter_records` and `iter_segment` are made of.
/// Checking and decompressing run with the thread detached from the interpreter (on a second
/// thread, a chunk ahead, for a long log); building the objects needs it attached.
struct ObjectDecode {
    position: usize,
    partition: i32,
    source: ChunkSource,
    objects: RecordObjects,
    /// The corrupt batch or record that ended the decode.
    error: Option<Error>,
    finished: bool,
}

/// Where an [`ObjectDecode`] gets its chunks.
enum ChunkSource {
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

impl ObjectDecode {
    fn new(position: usize, partition: i32) -> Self {
        ObjectDecode {
            position,
            partition,
            source: ChunkSource::Unstarted,
            objects: RecordObjects::for_log(),
            error: None,
            finished: false,
        }
    }

    /// Appends the records of the next chunk of `data` to `out`; false once the log is done,
    /// at its end or at a corrupt batch (kept in `error`), whose batch adds no record.
    ///
    /// # Safety
    /// `data` is the same buffer at every call, alive and unchanged until [`ObjectDecode::stop`]
    /// has run: a second thread may be reading it between calls.
    unsafe fn next_chunk(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        out: &mut Vec<Py<PyAny>>,
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
        // The chunk's records, and the corrupt batch that ended it, if one did.
        let (objects, partition) = (&mut self.objects, self.partition);
        let (filled, error) = match &mut self.source {
            ChunkSource::Pipelined(pipeline) => {
                let pipeline = pipeline.get_mut().unwrap_or_else(|e| e.into_inner());
                match py.detach(|| pipeline.next_chunk()) {
                    Some((chunk, _)) => {
                        let appended = append_chunk(py, objects, partition, &chunk, out);
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
                let appended = append_chunk(py, objects, partition, &chunk, out);
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
    fn stop(&mut self) -> Option<Error> {
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
fn append_chunk(
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
fn log_to_py<'py>(
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

/// The input an iterator keeps: the caller's `bytes` or view of `bytes`, or a copy of any
/// other buffer, or a segment file's contents.
enum OwnedInput {
    Bytes(Py<PyBytes>),
    View(ImmutableView),
    Owned(Vec<u8>),
}

impl OwnedInput {
    fn from_py(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(match Input::from_py(obj)? {
            Input::Borrowed(bytes) => OwnedInput::Bytes(bytes.unbind()),
            Input::View(view) => OwnedInput::View(view),
            Input::Owned(data) => OwnedInput::Owned(data),
        })
    }

    fn as_slice<'a>(&'a self, py: Python<'a>) -> &'a [u8] {
        match self {
            OwnedInput::Bytes(b) => b.as_bytes(py),
            OwnedInput::View(v) => v.as_slice(),
            OwnedInput::Owned(v) => v,
        }
    }

    /// Lets the input go once an iterator is done with it: a `memoryview` can then be released.
    fn release(&mut self) {
        *self = OwnedInput::Owned(Vec::new());
    }
}

/// The decoded records of a log, one at a time: batches are decoded a chunk (about 256 KB of
/// records) at a time, so the objects alive at once stay few whatever the log's size (the
/// input itself is held whole). A long log is checked and decompressed a chunk ahead on a
/// second thread. A corrupt batch raises `CorruptRecordError` after
/// every record before it was given, or ends the iteration there with `stop_at_corruption`.
#[pyclass(module = "groupcoord._native")]
pub struct RecordIterator {
    data: OwnedInput,
    path: Option<PathBuf>,
    decode: ObjectDecode,
    stop_at_corruption: bool,
    ready: std::vec::IntoIter<Py<PyAny>>,
}

impl RecordIterator {
    fn new(
        data: OwnedInput,
        path: Option<PathBuf>,
        position: usize,
        partition: i32,
        stop_at_corruption: bool,
    ) -> Self {
        let decode = ObjectDecode::new(position, partition);
        RecordIterator {
            data,
            path,
            decode,
            stop_at_corruption,
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
            // SAFETY: the iterator holds `data` whole and unchanged until the decode is stopped:
            // here, before `data` is let go at the end, and in its `Drop`.
            if !unsafe {
                this.decode
                    .next_chunk(py, this.data.as_slice(py), &mut out)?
            } {
                // Finished, the decode has stopped already, unless an error ended the chunk
                // before (a failed allocation): stopping is then what keeps `data` unread.
                this.decode.stop();
                this.data.release();
                return end_of_log(
                    py,
                    this.decode.error.take(),
                    this.stop_at_corruption,
                    this.path.as_deref(),
                );
            }
            this.ready = out.into_iter();
        }
    }
}

impl Drop for RecordIterator {
    fn drop(&mut self) {
        self.decode.stop();
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
    fn new(
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
fn end_of_log<T>(
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

/// A segment file's bytes, read with the thread detached from the interpreter: other threads
/// run, and a slow disk or a pipe holds up only this one.
fn read_file(py: Python<'_>, path: &std::path::Path) -> PyResult<Vec<u8>> {
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
fn partition_of(path: &std::path::Path) -> i32 {
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

/// Parse the record batches of a log buffer.
#[pyfunction]
#[pyo3(signature = (data, *, position = 0, stop_at_corruption = false))]
fn read_batches<'py>(
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

fn batches_to_py<'py>(
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
fn read_segment<'py>(
    py: Python<'py>,
    path: PathBuf,
    stop_at_corruption: bool,
) -> PyResult<Bound<'py, PyList>> {
    let data = read_file(py, &path)?;
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
    Ok(py.detach(|| batch::valid_prefix_length(slice)))
}

/// The first position after `start` where a whole, valid batch starts, or `len(data)`.
#[pyfunction]
#[pyo3(signature = (data, start, *, legacy = false))]
fn next_valid_batch(
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
fn checksum_batches(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    Ok(py.detach(|| batch::checksum_batches(slice)))
}

/// A benchmark ceiling: decompress every batch's records into one reused buffer, parse
/// nothing; the number of bytes decompressed.
#[pyfunction]
fn decompress_batches(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<usize> {
    let input = Input::from_py(data)?;
    let slice = input.as_slice();
    Ok(py.detach(|| batch::decompress_batches(slice))?)
}

fn compression_named(name: &str) -> PyResult<Compression> {
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
type RecordTuple = (
    i64,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Option<Vec<u8>>)>,
);

fn record_tuple(item: &Bound<'_, PyAny>) -> PyResult<RecordTuple> {
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
fn decode_key(py: Python<'_>, data: &[u8]) -> PyResult<Py<PyAny>> {
    RecordObjects::default().key(py, records::decode_key_ref(data, 0)?)
}

#[pyfunction]
fn decode_value(
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
fn encode_key<'py>(py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_key(&key_from_py(key)?)?))
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
fn encode_subscription<'py>(
    py: Python<'py>,
    subscription: &ConsumerProtocolSubscription,
) -> PyResult<Bound<'py, PyBytes>> {
    Ok(bytes(py, &records::encode_subscription(subscription)?))
}

#[pyfunction]
fn encode_assignment<'py>(
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
fn decode_records<'py>(
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
fn decode_segment<'py>(
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
fn iter_records(
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
fn iter_segment(
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
fn iter_batches(
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
fn iter_segment_batches(
    py: Python<'_>,
    path: PathBuf,
    stop_at_corruption: bool,
) -> PyResult<BatchIterator> {
    let data = OwnedInput::Owned(read_file(py, &path)?);
    Ok(BatchIterator::new(data, Some(path), 0, stop_at_corruption))
}

fn arrow_error(e: ::arrow_schema::ArrowError) -> PyErr {
    invalid_argument(format!("building the Arrow batch: {e}"))
}

/// Decodes a log into one Arrow record batch with the thread detached from the interpreter.
fn log_to_arrow<'py>(
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
fn decode_arrow<'py>(
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
fn decode_segment_arrow<'py>(
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
fn offsets_arrow_schema(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
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
    Ok(())
}
