//! Record objects built from borrowed keys and values (sharing repeated names), and the
//! core keys and values of record objects.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::codec::consumer_group;
use crate::codec::records::{
    ConsumerGroupKey, ConsumerGroupValue, GroupMetadataKey, Key, KeyRef, OpaqueKey, OpaqueValue,
    Value, ValueRef,
};
use crate::python::classic_records::{
    new_str, tagged_fields, text, PyGroupMetadataKey, PyGroupMetadataValue, PyMemberMetadata,
    PyOffsetCommitKey, PyOffsetCommitValue,
};
use crate::python::errors::wrong_type;
use crate::python::names::Names;

/// Builds the record classes from borrowed keys and values; a log's records share repeated
/// names.
#[derive(Default)]
pub(super) struct RecordObjects {
    names: Names,
}

impl RecordObjects {
    pub(super) fn for_log() -> Self {
        RecordObjects {
            names: Names::shared(),
        }
    }

    pub(super) fn key(&mut self, py: Python<'_>, key: KeyRef<'_>) -> PyResult<Py<PyAny>> {
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

    pub(super) fn value(&mut self, py: Python<'_>, value: ValueRef<'_>) -> PyResult<Py<PyAny>> {
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

pub(super) fn key_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Key> {
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

pub(super) fn value_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
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
