//! The Python classes of the classic records, offset commits and group metadata (record
//! types 0 to 2), which hold Python strings and bytes, and of the consumer protocol's
//! subscription and assignment inside a member's metadata.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::codec::consumer_group;
use crate::codec::generated::record_type;
use crate::codec::primitives::{TaggedSection, UnknownTaggedFields};
use crate::codec::records::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, GroupMetadataValue, MemberMetadata,
    OffsetCommitKey, OffsetCommitValue,
};
use crate::python::errors::{invalid_argument, wrong_type};
use crate::python::input::{bytes, opt_bytes};
use crate::python::record_class::{record_class, topic_partitions};

pub(super) fn check_i16_type(
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

pub(super) fn new_str(py: Python<'_>, s: &str) -> Py<PyString> {
    PyString::new(py, s).unbind()
}

/// The text of a Python string held by a record class (checked to be UTF-8 when stored).
pub(super) fn text(py: Python<'_>, s: &Py<PyString>) -> PyResult<String> {
    Ok(s.bind(py).to_cow()?.into_owned())
}

pub(super) fn opt_text(py: Python<'_>, s: &Option<Py<PyString>>) -> PyResult<Option<String>> {
    s.as_ref().map(|s| text(py, s)).transpose()
}

/// Python's `repr` of a value, so that a `__repr__` reads as Python: `'range'`, `None`, lists.
pub(super) fn py_repr<'py, T: IntoPyObject<'py>>(py: Python<'py>, value: T) -> PyResult<String> {
    use pyo3::IntoPyObjectExt;
    Ok(value.into_bound_py_any(py)?.repr()?.to_string())
}

/// A string argument, refused if it cannot be encoded as UTF-8 (lone surrogates).
pub(super) fn checked_str(s: Bound<'_, PyString>) -> PyResult<Py<PyString>> {
    s.to_str()?;
    Ok(s.unbind())
}

/// A bytes argument: `bytes` kept as it is, any other buffer or sequence of ints copied.
pub(super) fn bytes_arg(obj: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
    match obj.cast::<PyBytes>() {
        Ok(b) => Ok(b.clone().unbind()),
        Err(_) => Ok(PyBytes::new(obj.py(), &obj.extract::<Vec<u8>>()?).unbind()),
    }
}

/// A struct's unknown tagged fields as the record classes hold them: a tuple of
/// `(tag, bytes)`, the shared empty tuple when there are none (nearly always).
pub(super) fn tagged_fields(py: Python<'_>, section: TaggedSection<'_>) -> PyResult<Py<PyTuple>> {
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
pub(super) fn tagged_fields_arg(
    py: Python<'_>,
    arg: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyTuple>> {
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

pub(super) fn tagged_fields_core(
    py: Python<'_>,
    fields: &Py<PyTuple>,
) -> PyResult<UnknownTaggedFields> {
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
    pub(super) fn to_core(&self, py: Python<'_>) -> PyResult<OffsetCommitKey> {
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
    pub(super) fn to_core(&self, py: Python<'_>) -> PyResult<OffsetCommitValue> {
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
pub(super) fn topic_id_arg(text: &Bound<'_, PyString>) -> PyResult<[u8; 16]> {
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
        // Kafka's zero uuid is its "no topic id": written as absent, read back as None.
        let mut topic_id = topic_id;
        if let Some(id) = &topic_id {
            if topic_id_arg(id)? == [0; 16] {
                topic_id = None;
            }
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
    pub(super) fn to_core(&self, py: Python<'_>) -> PyResult<MemberMetadata> {
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
    pub(super) fn to_core(&self, py: Python<'_>) -> PyResult<GroupMetadataValue> {
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
