//! The group coordinator's records in `__consumer_offsets`.
//!
//! A record's key is `int16 record_type` + the key struct; its value is `int16 version` + the
//! value struct, or null (a tombstone). Types 0 and 1 are offset commits, 2 group metadata.
//! Types 3 to 8 and 16 are the new (KIP-848) coordinator's consumer-group records, decoded
//! by the schemas in [`consumer_group`]. Other types (share and streams groups) and value
//! versions this codec does not know are carried as opaque records: never an error.
//!
//! Each schema is declared once, in `python/groupcoord/format/records.py`, from which
//! `scripts/generate_records.py` writes the tables of [`super::generated`]: the versions in
//! which each field is present, in byte order. Decoding and encoding read the same tables, so
//! a field cannot be added to one and forgotten in the other (nor to the declaration and
//! forgotten here: each match on a field enum is exhaustive).

use crate::codec::consumer_group::{self, Datum};
pub use crate::codec::consumer_protocol::{
    decode_assignment, decode_subscription, encode_assignment, encode_subscription,
    ConsumerProtocolAssignment, ConsumerProtocolSubscription,
};
use crate::codec::generated::{
    record_type, GroupMetadataValueField as GroupField, MemberMetadataField as MemberField,
    OffsetCommitValueField as CommitField, GROUP_METADATA_VALUE,
    GROUP_METADATA_VALUE_FIRST_FLEXIBLE, GROUP_METADATA_VALUE_MAX, MEMBER_METADATA,
    OFFSET_COMMIT_VALUE, OFFSET_COMMIT_VALUE_FIRST_FLEXIBLE, OFFSET_COMMIT_VALUE_MAX,
    OFFSET_COMMIT_VALUE_TOPIC_ID_TAG as TOPIC_ID_TAG,
};
use crate::codec::primitives::{Reader, TaggedSection, UnknownTaggedFields, Writer};
use crate::error::{Error, Result};

/// Kafka's `Uuid.ZERO_UUID`: the default of a uuid field, no id.
const ZERO_UUID: [u8; 16] = [0; 16];

/// Offset commit key (record types 0 and 1; brokers since 0.9 write 1).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OffsetCommitKey {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub record_type: i16,
}

/// Group metadata key (record type 2).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupMetadataKey {
    pub group: String,
}

/// A key of a record type this codec does not decode.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, eq, hash, from_py_object, module = "groupcoord._native")
)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpaqueKey {
    pub record_type: i16,
    pub data: Vec<u8>,
}

/// A committed offset (OffsetCommitValue, versions 0 to 4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OffsetCommitValue {
    pub offset: i64,
    pub metadata: String,
    pub commit_timestamp: i64,
    pub leader_epoch: i32,
    pub expire_timestamp: i64,
    pub version: i16,
    /// The committed topic's id: tagged field 0 of version 4 (Kafka 4.1's schema). Kafka's
    /// default is the zero uuid, which it leaves out when writing and reads an absent field
    /// as: both are `None` here, and a zero id is written as `None` is, left out.
    pub topic_id: Option<[u8; 16]>,
    /// Tagged fields of a version-4 value that Kafka's schema does not declare.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// One member in a group's metadata.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemberMetadata {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub rebalance_timeout: i32,
    pub session_timeout: i32,
    pub subscription: Vec<u8>,
    pub assignment: Vec<u8>,
    /// Tagged fields of a version-4 member that Kafka's schema does not declare.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A classic group's metadata (GroupMetadataValue, versions 0 to 4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupMetadataValue {
    pub protocol_type: String,
    pub generation: i32,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    pub current_state_timestamp: i64,
    pub members: Vec<MemberMetadata>,
    pub version: i16,
    /// Tagged fields of a version-4 value that Kafka's schema does not declare.
    pub unknown_tagged_fields: UnknownTaggedFields,
}

/// A value of a record type, or a value version, this codec does not decode: the bytes after
/// its version. A value of an unknown record type shorter than a version (Kafka skips such
/// records unread) has no version, and `data` is the whole value.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, eq, hash, from_py_object, module = "groupcoord._native")
)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OpaqueValue {
    pub record_type: i16,
    pub version: Option<i16>,
    pub data: Vec<u8>,
}

/// Key of a new-coordinator (KIP-848) consumer-group record, types 3 to 8 and 16.
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(
        frozen,
        eq,
        hash,
        get_all,
        from_py_object,
        module = "groupcoord._native"
    )
)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConsumerGroupKey {
    pub record_type: i16,
    pub group_id: String,
    pub member_id: Option<String>,
    pub regular_expression: Option<String>,
}

/// Value of a new-coordinator consumer-group record, decoded by its declared schema
/// ([`consumer_group`]).
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, eq, hash, from_py_object, module = "groupcoord._native")
)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConsumerGroupValue {
    pub record_type: i16,
    pub version: i16,
    pub schema: &'static str,
    pub fields: Datum,
}

/// A decoded record key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    OffsetCommit(OffsetCommitKey),
    GroupMetadata(GroupMetadataKey),
    ConsumerGroup(ConsumerGroupKey),
    Opaque(OpaqueKey),
}

/// A decoded record value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    OffsetCommit(OffsetCommitValue),
    GroupMetadata(GroupMetadataValue),
    ConsumerGroup(ConsumerGroupValue),
    Opaque(OpaqueValue),
}

impl Key {
    pub fn record_type(&self) -> i16 {
        match self {
            Key::OffsetCommit(k) => k.record_type,
            Key::GroupMetadata(_) => record_type::GROUP_METADATA,
            Key::ConsumerGroup(k) => k.record_type,
            Key::Opaque(k) => k.record_type,
        }
    }
}

/// Versions a field is present in: `since..=until`.
#[derive(Clone, Copy)]
pub struct Versions(pub i16, pub i16);

impl Versions {
    fn contains(self, v: i16) -> bool {
        self.0 <= v && v <= self.1
    }
}

fn fields<F: Copy>(layout: &'static [(F, Versions)], version: i16) -> impl Iterator<Item = F> {
    layout
        .iter()
        .filter(move |(_, v)| v.contains(version))
        .map(|(field, _)| *field)
}

/// A decoded record key, its strings borrowed from the log buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyRef<'a> {
    OffsetCommit {
        record_type: i16,
        group: &'a str,
        topic: &'a str,
        partition: i32,
    },
    GroupMetadata {
        group: &'a str,
    },
    ConsumerGroup(ConsumerGroupKey),
    Opaque {
        record_type: i16,
        data: &'a [u8],
    },
}

/// What a key says about how to decode its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueKind {
    OffsetCommit(i16),
    GroupMetadata,
    ConsumerGroup(i16),
    Opaque(i16),
}

impl ValueKind {
    pub fn record_type(self) -> i16 {
        match self {
            ValueKind::GroupMetadata => record_type::GROUP_METADATA,
            ValueKind::OffsetCommit(t) | ValueKind::ConsumerGroup(t) | ValueKind::Opaque(t) => t,
        }
    }
}

impl KeyRef<'_> {
    pub fn record_type(&self) -> i16 {
        self.value_kind().record_type()
    }

    pub fn value_kind(&self) -> ValueKind {
        match self {
            KeyRef::OffsetCommit { record_type, .. } => ValueKind::OffsetCommit(*record_type),
            KeyRef::GroupMetadata { .. } => ValueKind::GroupMetadata,
            KeyRef::ConsumerGroup(k) => ValueKind::ConsumerGroup(k.record_type),
            KeyRef::Opaque { record_type, .. } => ValueKind::Opaque(*record_type),
        }
    }

    pub fn to_owned(&self) -> Key {
        match self {
            KeyRef::OffsetCommit {
                record_type,
                group,
                topic,
                partition,
            } => Key::OffsetCommit(OffsetCommitKey {
                group: (*group).to_owned(),
                topic: (*topic).to_owned(),
                partition: *partition,
                record_type: *record_type,
            }),
            KeyRef::GroupMetadata { group } => Key::GroupMetadata(GroupMetadataKey {
                group: (*group).to_owned(),
            }),
            KeyRef::ConsumerGroup(k) => Key::ConsumerGroup(k.clone()),
            KeyRef::Opaque { record_type, data } => Key::Opaque(OpaqueKey {
                record_type: *record_type,
                data: data.to_vec(),
            }),
        }
    }
}

impl Key {
    pub fn value_kind(&self) -> ValueKind {
        match self {
            Key::OffsetCommit(k) => ValueKind::OffsetCommit(k.record_type),
            Key::GroupMetadata(_) => ValueKind::GroupMetadata,
            Key::ConsumerGroup(k) => ValueKind::ConsumerGroup(k.record_type),
            Key::Opaque(k) => ValueKind::Opaque(k.record_type),
        }
    }
}

/// A committed offset, its metadata borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OffsetCommitValueRef<'a> {
    pub offset: i64,
    pub metadata: &'a str,
    pub commit_timestamp: i64,
    pub leader_epoch: i32,
    pub expire_timestamp: i64,
    pub version: i16,
    pub topic_id: Option<&'a [u8; 16]>,
    pub unknown_tagged_fields: TaggedSection<'a>,
}

/// A member of a group's metadata, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberRef<'a> {
    pub member_id: &'a str,
    pub group_instance_id: Option<&'a str>,
    pub client_id: &'a str,
    pub client_host: &'a str,
    pub rebalance_timeout: i32,
    pub session_timeout: i32,
    pub subscription: &'a [u8],
    pub assignment: &'a [u8],
    pub unknown_tagged_fields: TaggedSection<'a>,
}

/// A classic group's metadata, borrowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupMetadataValueRef<'a> {
    pub protocol_type: &'a str,
    pub generation: i32,
    pub protocol: Option<&'a str>,
    pub leader: Option<&'a str>,
    pub current_state_timestamp: i64,
    pub members: Vec<MemberRef<'a>>,
    pub version: i16,
    pub unknown_tagged_fields: TaggedSection<'a>,
}

/// A decoded record value, borrowing from the log buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueRef<'a> {
    OffsetCommit(OffsetCommitValueRef<'a>),
    GroupMetadata(GroupMetadataValueRef<'a>),
    ConsumerGroup(ConsumerGroupValue),
    Opaque {
        record_type: i16,
        version: Option<i16>,
        data: &'a [u8],
    },
}

impl ValueRef<'_> {
    pub fn version(&self) -> Option<i16> {
        match self {
            ValueRef::OffsetCommit(v) => Some(v.version),
            ValueRef::GroupMetadata(v) => Some(v.version),
            ValueRef::ConsumerGroup(v) => Some(v.version),
            ValueRef::Opaque { version, .. } => *version,
        }
    }

    pub fn to_owned(&self) -> Value {
        match self {
            ValueRef::OffsetCommit(v) => Value::OffsetCommit(OffsetCommitValue {
                offset: v.offset,
                metadata: v.metadata.to_owned(),
                commit_timestamp: v.commit_timestamp,
                leader_epoch: v.leader_epoch,
                expire_timestamp: v.expire_timestamp,
                version: v.version,
                topic_id: v.topic_id.copied(),
                unknown_tagged_fields: v.unknown_tagged_fields.to_owned(),
            }),
            ValueRef::GroupMetadata(v) => Value::GroupMetadata(GroupMetadataValue {
                protocol_type: v.protocol_type.to_owned(),
                generation: v.generation,
                protocol: v.protocol.map(str::to_owned),
                leader: v.leader.map(str::to_owned),
                current_state_timestamp: v.current_state_timestamp,
                members: v.members.iter().map(MemberRef::to_owned).collect(),
                version: v.version,
                unknown_tagged_fields: v.unknown_tagged_fields.to_owned(),
            }),
            ValueRef::ConsumerGroup(v) => Value::ConsumerGroup(v.clone()),
            ValueRef::Opaque {
                record_type,
                version,
                data,
            } => Value::Opaque(OpaqueValue {
                record_type: *record_type,
                version: *version,
                data: data.to_vec(),
            }),
        }
    }
}

impl MemberRef<'_> {
    pub fn to_owned(&self) -> MemberMetadata {
        MemberMetadata {
            member_id: self.member_id.to_owned(),
            group_instance_id: self.group_instance_id.map(str::to_owned),
            client_id: self.client_id.to_owned(),
            client_host: self.client_host.to_owned(),
            rebalance_timeout: self.rebalance_timeout,
            session_timeout: self.session_timeout,
            subscription: self.subscription.to_vec(),
            assignment: self.assignment.to_vec(),
            unknown_tagged_fields: self.unknown_tagged_fields.to_owned(),
        }
    }
}

/// Decodes a record key (`int16 record_type` + struct).
pub fn decode_key(data: &[u8], position: usize) -> Result<Key> {
    decode_key_ref(data, position).map(|k| k.to_owned())
}

/// Decodes a record key, borrowing its strings.
#[inline(always)]
pub fn decode_key_ref(data: &[u8], position: usize) -> Result<KeyRef<'_>> {
    let mut r = Reader::new(data, position);
    let record_type = r.i16()?;
    let key = match record_type {
        record_type::LEGACY_OFFSET_COMMIT | record_type::OFFSET_COMMIT => KeyRef::OffsetCommit {
            group: r.str(false)?,
            topic: r.str(false)?,
            partition: r.i32()?,
            record_type,
        },
        record_type::GROUP_METADATA => KeyRef::GroupMetadata {
            group: r.str(false)?,
        },
        t => match consumer_group::key_second_field(t) {
            Some(second) => {
                let group_id = r.string(false)?;
                let second_value = match second {
                    Some(_) => Some(r.string(false)?),
                    None => None,
                };
                let is_member = second == Some("member_id");
                KeyRef::ConsumerGroup(ConsumerGroupKey {
                    record_type: t,
                    group_id,
                    member_id: if is_member {
                        second_value.clone()
                    } else {
                        None
                    },
                    regular_expression: if is_member { None } else { second_value },
                })
            }
            None => {
                return Ok(KeyRef::Opaque {
                    record_type,
                    data: r.rest(),
                })
            }
        },
    };
    if !r.is_empty() {
        return Err(r.corrupt(format!(
            "{} bytes after a type-{record_type} key",
            r.remaining()
        )));
    }
    Ok(key)
}

/// Decodes a record value given its key; `None` input is a tombstone.
pub fn decode_value(key: &Key, data: Option<&[u8]>, position: usize) -> Result<Option<Value>> {
    Ok(decode_value_ref(key.value_kind(), data, position)?.map(|v| v.to_owned()))
}

/// Decodes a record value of the kind its key names, borrowing its strings; `None` input is
/// a tombstone.
#[inline(always)]
pub fn decode_value_ref(
    kind: ValueKind,
    data: Option<&[u8]>,
    position: usize,
) -> Result<Option<ValueRef<'_>>> {
    let Some(data) = data else { return Ok(None) };
    let mut r = Reader::new(data, position);
    if let ValueKind::Opaque(record_type) = kind {
        if r.remaining() < 2 {
            return Ok(Some(ValueRef::Opaque {
                record_type,
                version: None,
                data: r.rest(),
            }));
        }
    }
    let version = r.i16()?;
    let value = match kind {
        ValueKind::OffsetCommit(_) if (0..=OFFSET_COMMIT_VALUE_MAX).contains(&version) => {
            ValueRef::OffsetCommit(decode_offset_commit_value(&mut r, version)?)
        }
        ValueKind::GroupMetadata if (0..=GROUP_METADATA_VALUE_MAX).contains(&version) => {
            ValueRef::GroupMetadata(decode_group_metadata_value(&mut r, version)?)
        }
        ValueKind::ConsumerGroup(record_type) if version == 0 => {
            match consumer_group::value_schema(record_type) {
                Some((schema, fields)) => ValueRef::ConsumerGroup(ConsumerGroupValue {
                    record_type,
                    version,
                    schema,
                    fields: consumer_group::decode_struct(&mut r, fields)?,
                }),
                None => ValueRef::Opaque {
                    record_type,
                    version: Some(version),
                    data: r.rest(),
                },
            }
        }
        kind => ValueRef::Opaque {
            record_type: kind.record_type(),
            version: Some(version),
            data: r.rest(),
        },
    };
    if !r.is_empty() {
        return Err(r.corrupt(format!(
            "{} bytes after a version-{version} value",
            r.remaining()
        )));
    }
    Ok(Some(value))
}

#[inline(always)]
fn decode_offset_commit_value<'a>(
    r: &mut Reader<'a>,
    version: i16,
) -> Result<OffsetCommitValueRef<'a>> {
    let flexible = version >= OFFSET_COMMIT_VALUE_FIRST_FLEXIBLE;
    let mut v = OffsetCommitValueRef {
        offset: 0,
        metadata: "",
        commit_timestamp: -1,
        leader_epoch: -1,
        expire_timestamp: -1,
        version,
        topic_id: None,
        unknown_tagged_fields: TaggedSection::default(),
    };
    for field in fields(&OFFSET_COMMIT_VALUE, version) {
        match field {
            CommitField::Offset => v.offset = r.i64()?,
            CommitField::LeaderEpoch => v.leader_epoch = r.i32()?,
            CommitField::Metadata => v.metadata = r.str(flexible)?,
            CommitField::CommitTimestamp => v.commit_timestamp = r.i64()?,
            CommitField::ExpireTimestamp => v.expire_timestamp = r.i64()?,
        }
    }
    if flexible {
        let start = r.position();
        let mut section = r.tagged_section()?;
        if let Some(id) = section.take_declared(TOPIC_ID_TAG) {
            let id: &[u8; 16] = id.try_into().map_err(|_| Error::Corrupt {
                position: start,
                reason: format!(
                    "its topic id (tagged field 0) has {} bytes, not 16",
                    id.len()
                ),
            })?;
            v.topic_id = Some(id).filter(|id| **id != ZERO_UUID);
        }
        v.unknown_tagged_fields = section;
    }
    Ok(v)
}

fn decode_group_metadata_value<'a>(
    r: &mut Reader<'a>,
    version: i16,
) -> Result<GroupMetadataValueRef<'a>> {
    let flexible = version >= GROUP_METADATA_VALUE_FIRST_FLEXIBLE;
    let mut v = GroupMetadataValueRef {
        protocol_type: "",
        generation: 0,
        protocol: None,
        leader: None,
        current_state_timestamp: -1,
        members: Vec::new(),
        version,
        unknown_tagged_fields: TaggedSection::default(),
    };
    for field in fields(&GROUP_METADATA_VALUE, version) {
        match field {
            GroupField::ProtocolType => v.protocol_type = r.str(flexible)?,
            GroupField::Generation => v.generation = r.i32()?,
            GroupField::Protocol => v.protocol = r.nullable_str(flexible)?,
            GroupField::Leader => v.leader = r.nullable_str(flexible)?,
            GroupField::CurrentStateTimestamp => v.current_state_timestamp = r.i64()?,
            GroupField::Members => {
                let n = r.array(flexible, 8)?;
                v.members.reserve_exact(n);
                let layout = MemberLayout::of(version);
                for _ in 0..n {
                    v.members.push(decode_member(r, version, layout)?);
                }
            }
        }
    }
    if flexible {
        v.unknown_tagged_fields = r.tagged_section()?;
    }
    Ok(v)
}

/// Which of a member's fields that not every version has a version has, from
/// [`MEMBER_METADATA`]: found once per group, so that each member is read in straight-line
/// code (in [`MEMBER_METADATA`]'s order, which a test holds it to) rather than by a walk of
/// the table and a jump per field.
#[derive(Clone, Copy)]
struct MemberLayout {
    group_instance_id: bool,
    rebalance_timeout: bool,
}

impl MemberLayout {
    fn of(version: i16) -> Self {
        let has = |wanted| fields(&MEMBER_METADATA, version).any(|field| field == wanted);
        MemberLayout {
            group_instance_id: has(MemberField::GroupInstanceId),
            rebalance_timeout: has(MemberField::RebalanceTimeout),
        }
    }
}

#[inline(always)]
fn decode_member<'a>(
    r: &mut Reader<'a>,
    version: i16,
    layout: MemberLayout,
) -> Result<MemberRef<'a>> {
    let flexible = version >= GROUP_METADATA_VALUE_FIRST_FLEXIBLE;
    let member_id = r.str(flexible)?;
    let group_instance_id = match layout.group_instance_id {
        true => r.nullable_str(flexible)?,
        false => None,
    };
    let client_id = r.str(flexible)?;
    let client_host = r.str(flexible)?;
    let rebalance_timeout = match layout.rebalance_timeout {
        true => Some(r.i32()?),
        false => None,
    };
    let session_timeout = r.i32()?;
    let mut m = MemberRef {
        member_id,
        group_instance_id,
        client_id,
        client_host,
        rebalance_timeout: match rebalance_timeout {
            Some(timeout) => timeout,
            // Version 0 has no rebalance timeout; Kafka uses the session timeout.
            None if version == 0 => session_timeout,
            None => -1,
        },
        session_timeout,
        subscription: r.byte_slice(flexible)?,
        assignment: r.byte_slice(flexible)?,
        unknown_tagged_fields: TaggedSection::default(),
    };
    if flexible {
        m.unknown_tagged_fields = r.tagged_section()?;
    }
    Ok(m)
}

/// Encodes a record key.
pub fn encode_key(key: &Key) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    out.put_i16(key.record_type());
    match key {
        Key::OffsetCommit(k) => {
            out.put_string(&k.group, false)?;
            out.put_string(&k.topic, false)?;
            out.put_i32(k.partition);
        }
        Key::GroupMetadata(k) => out.put_string(&k.group, false)?,
        Key::ConsumerGroup(k) => {
            out.put_string(&k.group_id, false)?;
            if let Some(second) = k.member_id.as_deref().or(k.regular_expression.as_deref()) {
                out.put_string(second, false)?;
            }
        }
        Key::Opaque(k) => out.extend_from_slice(&k.data),
    }
    Ok(out)
}

/// Encodes a record value at its `version`.
pub fn encode_value(value: &Value) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    match value {
        Value::OffsetCommit(v) => {
            check_version("OffsetCommitValue", v.version, OFFSET_COMMIT_VALUE_MAX)?;
            let flexible = v.version >= OFFSET_COMMIT_VALUE_FIRST_FLEXIBLE;
            out.put_i16(v.version);
            for field in fields(&OFFSET_COMMIT_VALUE, v.version) {
                match field {
                    CommitField::Offset => out.put_i64(v.offset),
                    CommitField::LeaderEpoch => out.put_i32(v.leader_epoch),
                    CommitField::Metadata => out.put_string(&v.metadata, flexible)?,
                    CommitField::CommitTimestamp => out.put_i64(v.commit_timestamp),
                    CommitField::ExpireTimestamp => out.put_i64(v.expire_timestamp),
                }
            }
            // Kafka writes the topic id only when it is not its default, the zero uuid.
            match v.topic_id.filter(|id| flexible && *id != ZERO_UUID) {
                None => put_tagged_fields(&mut out, &v.unknown_tagged_fields, flexible, || {
                    format!("OffsetCommitValue version {}", v.version)
                })?,
                Some(id) => {
                    let mut tagged = vec![(TOPIC_ID_TAG, id.to_vec())];
                    tagged.extend_from_slice(&v.unknown_tagged_fields);
                    out.put_tagged_fields(&tagged)?;
                }
            }
        }
        Value::GroupMetadata(v) => {
            check_version("GroupMetadataValue", v.version, GROUP_METADATA_VALUE_MAX)?;
            let flexible = v.version >= GROUP_METADATA_VALUE_FIRST_FLEXIBLE;
            out.put_i16(v.version);
            for field in fields(&GROUP_METADATA_VALUE, v.version) {
                match field {
                    GroupField::ProtocolType => out.put_string(&v.protocol_type, flexible)?,
                    GroupField::Generation => out.put_i32(v.generation),
                    GroupField::Protocol => {
                        out.put_nullable_string(v.protocol.as_deref(), flexible)?
                    }
                    GroupField::Leader => out.put_nullable_string(v.leader.as_deref(), flexible)?,
                    GroupField::CurrentStateTimestamp => out.put_i64(v.current_state_timestamp),
                    GroupField::Members => {
                        out.put_array_len(v.members.len(), flexible);
                        for m in &v.members {
                            encode_member(&mut out, m, v.version)?;
                        }
                    }
                }
            }
            put_tagged_fields(&mut out, &v.unknown_tagged_fields, flexible, || {
                format!("GroupMetadataValue version {}", v.version)
            })?;
        }
        Value::ConsumerGroup(v) => {
            return encode_consumer_group_value(v, consumer_group::UnknownTags::InTagOrder)
        }
        Value::Opaque(v) => {
            if let Some(version) = v.version {
                out.put_i16(version);
            }
            out.extend_from_slice(&v.data);
        }
    }
    Ok(out)
}

/// Encodes a consumer-group value, its undeclared tagged fields placed as `unknown_tags` says.
pub fn encode_consumer_group_value(
    v: &ConsumerGroupValue,
    unknown_tags: consumer_group::UnknownTags,
) -> Result<Vec<u8>> {
    let (_, fields) = consumer_group::value_schema(v.record_type)
        .filter(|_| v.version == 0)
        .ok_or_else(|| {
            Error::UnsupportedVersion(format!(
                "consumer-group record type {} version {}",
                v.record_type, v.version
            ))
        })?;
    let mut out = Vec::new();
    out.put_i16(0);
    consumer_group::encode_struct(&mut out, fields, &v.fields, unknown_tags)?;
    Ok(out)
}

/// True for the record types whose keys this codec decodes (0 to 8, 16); values of the
/// others pass through opaque.
pub fn is_known_record_type(record_type: i16) -> bool {
    matches!(
        record_type,
        record_type::LEGACY_OFFSET_COMMIT
            | record_type::OFFSET_COMMIT
            | record_type::GROUP_METADATA
    ) || consumer_group::key_second_field(record_type).is_some()
}

fn encode_member(out: &mut Vec<u8>, m: &MemberMetadata, version: i16) -> Result<()> {
    let flexible = version >= GROUP_METADATA_VALUE_FIRST_FLEXIBLE;
    for field in fields(&MEMBER_METADATA, version) {
        match field {
            MemberField::MemberId => out.put_string(&m.member_id, flexible)?,
            MemberField::GroupInstanceId => {
                out.put_nullable_string(m.group_instance_id.as_deref(), flexible)?
            }
            MemberField::ClientId => out.put_string(&m.client_id, flexible)?,
            MemberField::ClientHost => out.put_string(&m.client_host, flexible)?,
            MemberField::RebalanceTimeout => out.put_i32(m.rebalance_timeout),
            MemberField::SessionTimeout => out.put_i32(m.session_timeout),
            MemberField::Subscription => out.put_nullable_bytes(Some(&m.subscription), flexible)?,
            MemberField::Assignment => out.put_nullable_bytes(Some(&m.assignment), flexible)?,
        }
    }
    put_tagged_fields(out, &m.unknown_tagged_fields, flexible, || {
        format!("MemberMetadata of GroupMetadataValue version {version}")
    })
}

/// The tagged-field section of a flexible struct; a struct of an earlier version has none,
/// and holding unknown tagged fields there is an error, as in Kafka's writers.
fn put_tagged_fields(
    out: &mut Vec<u8>,
    fields: &UnknownTaggedFields,
    flexible: bool,
    what: impl FnOnce() -> String,
) -> Result<()> {
    if flexible {
        out.put_tagged_fields(fields)
    } else if fields.is_empty() {
        Ok(())
    } else {
        Err(Error::UnsupportedVersion(format!(
            "{} has no tagged fields, and {} were set",
            what(),
            fields.len()
        )))
    }
}

pub(crate) fn check_version(schema: &str, version: i16, max: i16) -> Result<()> {
    if (0..=max).contains(&version) {
        Ok(())
    } else {
        Err(Error::UnsupportedVersion(format!(
            "{schema} version {version} (known: 0 to {max})"
        )))
    }
}

#[cfg(test)]
mod tests;
