//! The Python methods of the record classes that are the core structs of
//! [`crate::codec::records`]: opaque keys and values, and the new coordinator's
//! consumer-group keys and values.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::codec::consumer_group;
use crate::codec::consumer_group_fields::build_value;
use crate::codec::records::{
    self, ConsumerGroupKey, ConsumerGroupValue, OpaqueKey, OpaqueValue, ValueRef,
};
use crate::error::Error;
use crate::python::consumer_group_fields;
use crate::python::errors::invalid_argument;
use crate::python::input::bytes;
use crate::python::record_class::{by_from_fields, datum_to_py, record_class, Reduced};

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
    /// A value of consumer-group record type `record_type` (3 to 8, 16) with `fields` as
    /// `fields` gives them: see [`crate::codec::consumer_group_fields`].
    #[new]
    #[pyo3(signature = (record_type, fields, version = 0))]
    fn py_new(record_type: i16, fields: &Bound<'_, PyAny>, version: i16) -> PyResult<Self> {
        let fields = consumer_group_fields::loose(fields)?;
        Ok(build_value(record_type, version, fields)?)
    }

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
