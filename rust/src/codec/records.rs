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
use crate::codec::generated::{
    record_type, GroupMetadataValueField as GroupField, MemberMetadataField as MemberField,
    OffsetCommitValueField as CommitField, GROUP_METADATA_VALUE,
    GROUP_METADATA_VALUE_FIRST_FLEXIBLE, GROUP_METADATA_VALUE_MAX, MEMBER_METADATA,
    OFFSET_COMMIT_VALUE, OFFSET_COMMIT_VALUE_FIRST_FLEXIBLE, OFFSET_COMMIT_VALUE_MAX,
    OFFSET_COMMIT_VALUE_TOPIC_ID_TAG as TOPIC_ID_TAG,
};
use crate::codec::primitives::{Reader, TaggedSection, UnknownTaggedFields, Writer};
use crate::error::{Error, Result};

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
    /// The committed topic's id: tagged field 0 of version 4 (Kafka 4.1's schema).
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
            v.topic_id = Some(id.try_into().map_err(|_| Error::Corrupt {
                position: start,
                reason: format!(
                    "its topic id (tagged field 0) has {} bytes, not 16",
                    id.len()
                ),
            })?);
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
            match v.topic_id.filter(|_| flexible) {
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

fn check_version(schema: &str, version: i16, max: i16) -> Result<()> {
    if (0..=max).contains(&version) {
        Ok(())
    } else {
        Err(Error::UnsupportedVersion(format!(
            "{schema} version {version} (known: 0 to {max})"
        )))
    }
}

/// The consumer protocol's subscription (`ConsumerProtocolSubscription`, versions 0 to 3).
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, eq, hash, from_py_object, module = "groupcoord._native")
)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConsumerProtocolSubscription {
    pub version: i16,
    pub topics: Vec<String>,
    pub user_data: Option<Vec<u8>>,
    pub owned_partitions: Vec<(String, Vec<i32>)>,
    pub generation_id: i32,
    pub rack_id: Option<String>,
}

/// The consumer protocol's assignment (`ConsumerProtocolAssignment`, versions 0 to 3).
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, eq, hash, from_py_object, module = "groupcoord._native")
)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConsumerProtocolAssignment {
    pub version: i16,
    pub assigned_partitions: Vec<(String, Vec<i32>)>,
    pub user_data: Option<Vec<u8>>,
}

fn decode_topic_partitions(r: &mut Reader<'_>) -> Result<Vec<(String, Vec<i32>)>> {
    let n = r.array(false, 6)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let topic = r.string(false)?;
        let count = r.array(false, 4)?;
        let mut partitions = Vec::with_capacity(count);
        for _ in 0..count {
            partitions.push(r.i32()?);
        }
        out.push((topic, partitions));
    }
    Ok(out)
}

fn encode_topic_partitions(out: &mut Vec<u8>, tps: &[(String, Vec<i32>)]) -> Result<()> {
    out.put_array_len(tps.len(), false);
    for (topic, partitions) in tps {
        out.put_string(topic, false)?;
        out.put_array_len(partitions.len(), false);
        for &p in partitions {
            out.put_i32(p);
        }
    }
    Ok(())
}

/// Decodes a subscription; versions above 3 are read as their version-3 prefix, as Kafka does.
pub fn decode_subscription(data: &[u8], position: usize) -> Result<ConsumerProtocolSubscription> {
    let mut r = Reader::new(data, position);
    let version = r.i16()?;
    if version < 0 {
        return Err(r.corrupt(format!("negative subscription version {version}")));
    }
    let n = r.array(false, 2)?;
    let mut topics = Vec::with_capacity(n);
    for _ in 0..n {
        topics.push(r.string(false)?);
    }
    let user_data = r.nullable_bytes(false)?;
    let owned_partitions = if version >= 1 {
        decode_topic_partitions(&mut r)?
    } else {
        Vec::new()
    };
    let generation_id = if version >= 2 { r.i32()? } else { -1 };
    let rack_id = if version >= 3 {
        r.nullable_string(false)?
    } else {
        None
    };
    Ok(ConsumerProtocolSubscription {
        version,
        topics,
        user_data,
        owned_partitions,
        generation_id,
        rack_id,
    })
}

pub fn encode_subscription(s: &ConsumerProtocolSubscription) -> Result<Vec<u8>> {
    check_version("ConsumerProtocolSubscription", s.version, 3)?;
    let mut out = Vec::new();
    out.put_i16(s.version);
    out.put_array_len(s.topics.len(), false);
    for t in &s.topics {
        out.put_string(t, false)?;
    }
    out.put_nullable_bytes(s.user_data.as_deref(), false)?;
    if s.version >= 1 {
        encode_topic_partitions(&mut out, &s.owned_partitions)?;
    }
    if s.version >= 2 {
        out.put_i32(s.generation_id);
    }
    if s.version >= 3 {
        out.put_nullable_string(s.rack_id.as_deref(), false)?;
    }
    Ok(out)
}

/// Decodes an assignment (all versions share one layout).
pub fn decode_assignment(data: &[u8], position: usize) -> Result<ConsumerProtocolAssignment> {
    let mut r = Reader::new(data, position);
    let version = r.i16()?;
    if version < 0 {
        return Err(r.corrupt(format!("negative assignment version {version}")));
    }
    let assigned_partitions = decode_topic_partitions(&mut r)?;
    let user_data = r.nullable_bytes(false)?;
    Ok(ConsumerProtocolAssignment {
        version,
        assigned_partitions,
        user_data,
    })
}

pub fn encode_assignment(a: &ConsumerProtocolAssignment) -> Result<Vec<u8>> {
    check_version("ConsumerProtocolAssignment", a.version, 3)?;
    let mut out = Vec::new();
    out.put_i16(a.version);
    encode_topic_partitions(&mut out, &a.assigned_partitions)?;
    out.put_nullable_bytes(a.user_data.as_deref(), false)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::hex;

    /// `decode_member` reads a member's fields in straight-line code: the order and the
    /// version ranges it assumes are [`MEMBER_METADATA`]'s.
    #[test]
    fn member_layout_is_the_tables() {
        use MemberField::*;
        let order: Vec<MemberField> = MEMBER_METADATA.iter().map(|(f, _)| *f).collect();
        assert_eq!(
            order,
            [
                MemberId,
                GroupInstanceId,
                ClientId,
                ClientHost,
                RebalanceTimeout,
                SessionTimeout,
                Subscription,
                Assignment
            ]
        );
        for version in 0..=GROUP_METADATA_VALUE_MAX {
            let layout = MemberLayout::of(version);
            let present: Vec<MemberField> = fields(&MEMBER_METADATA, version).collect();
            let expected: Vec<MemberField> = order
                .iter()
                .copied()
                .filter(|f| match f {
                    GroupInstanceId => layout.group_instance_id,
                    RebalanceTimeout => layout.rebalance_timeout,
                    _ => true,
                })
                .collect();
            assert_eq!(present, expected, "version {version}");
            assert_eq!(layout.group_instance_id, version >= 3);
            assert_eq!(layout.rebalance_timeout, version >= 1);
        }
    }

    const GROUP: &str = "kafkesc-devcluster-group-id";

    /// offsets-log-format.md §9.4: real captures.
    #[test]
    fn offset_commit_capture() {
        let key = decode_key(
            &hex(
                "0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000",
            ),
            0,
        )
        .unwrap();
        assert_eq!(
            key,
            Key::OffsetCommit(OffsetCommitKey {
                group: GROUP.into(),
                topic: "t01".into(),
                partition: 0,
                record_type: 1
            })
        );
        let value = decode_value(
            &key,
            Some(&hex("0003000000000000006affffffff00000000018579eff58c")),
            0,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            value,
            Value::OffsetCommit(OffsetCommitValue {
                topic_id: None,
                unknown_tagged_fields: Default::default(),
                offset: 106,
                metadata: String::new(),
                commit_timestamp: 1_672_788_047_244,
                leader_epoch: -1,
                expire_timestamp: -1,
                version: 3
            })
        );
        assert_eq!(
            encode_value(&value).unwrap(),
            hex("0003000000000000006affffffff00000000018579eff58c")
        );
        assert_eq!(
            encode_key(&key).unwrap(),
            hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000")
        );
        assert_eq!(decode_value(&key, None, 0).unwrap(), None, "tombstone");
    }

    #[test]
    fn group_metadata_capture() {
        let value_hex = "00030008636f6e73756d657200000007000572616e6765002c72646b61666b61\
            2d39663466633162302d316437642d343437312d393065382d65306636346633\
            6339643966000001857ee10d9500000001002c72646b61666b612d3966346663\
            3162302d316437642d343437312d393065382d653066363466336339643966ff\
            ff000772646b61666b61000b2f3137322e31382e302e31000493e00000afc800\
            000013000100000001000374303100000000000000000000001f000000000001\
            00037430310000000300000000000000010000000200000000";
        let key = decode_key(
            &hex("0002001b6b61666b6573632d646576636c75737465722d67726f75702d6964"),
            0,
        )
        .unwrap();
        assert_eq!(
            key,
            Key::GroupMetadata(GroupMetadataKey {
                group: GROUP.into()
            })
        );
        let Some(Value::GroupMetadata(v)) = decode_value(&key, Some(&hex(value_hex)), 0).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (
                v.protocol_type.as_str(),
                v.generation,
                v.protocol.as_deref(),
                v.current_state_timestamp
            ),
            ("consumer", 7, Some("range"), 1_672_870_956_437)
        );
        let m = &v.members[0];
        assert_eq!(Some(m.member_id.as_str()), v.leader.as_deref());
        assert_eq!(
            (
                m.group_instance_id.as_deref(),
                m.client_id.as_str(),
                m.client_host.as_str()
            ),
            (None, "rdkafka", "/172.18.0.1")
        );
        assert_eq!((m.rebalance_timeout, m.session_timeout), (300_000, 45_000));
        let sub = decode_subscription(&m.subscription, 0).unwrap();
        assert_eq!(
            (sub.version, sub.topics.clone(), sub.owned_partitions.len()),
            (1, vec!["t01".to_owned()], 0)
        );
        let asg = decode_assignment(&m.assignment, 0).unwrap();
        assert_eq!(
            asg.assigned_partitions,
            vec![("t01".to_owned(), vec![0, 1, 2])]
        );
        assert_eq!(
            encode_value(&Value::GroupMetadata(v.clone())).unwrap(),
            hex(value_hex)
        );
        assert_eq!(encode_subscription(&sub).unwrap(), m.subscription);
        assert_eq!(encode_assignment(&asg).unwrap(), m.assignment);
    }

    /// §9.5 (Burrow, older versions) and §9.6 (constructed v1 and v4).
    #[test]
    fn older_and_flexible_versions() {
        let key = Key::OffsetCommit(OffsetCommitKey {
            group: "g".into(),
            topic: "t".into(),
            partition: 0,
            record_type: 1,
        });
        for (hex_value, expected) in [
            (
                "0000 00000000000020b4 0008 7465737464617461 0000000000000665",
                OffsetCommitValue {
                    topic_id: None,
                    unknown_tagged_fields: Default::default(),
                    offset: 8372,
                    metadata: "testdata".into(),
                    commit_timestamp: 1637,
                    leader_epoch: -1,
                    expire_timestamp: -1,
                    version: 0,
                },
            ),
            (
                "0001 0000000000000064 0008 6d65746164617461 00000000000004d2 ffffffffffffffff",
                OffsetCommitValue {
                    topic_id: None,
                    unknown_tagged_fields: Default::default(),
                    offset: 100,
                    metadata: "metadata".into(),
                    commit_timestamp: 1234,
                    leader_epoch: -1,
                    expire_timestamp: -1,
                    version: 1,
                },
            ),
            (
                "0004 0000000000000064 0000000a 09 6d65746164617461 00000000000004d2 00",
                OffsetCommitValue {
                    topic_id: None,
                    unknown_tagged_fields: Default::default(),
                    offset: 100,
                    metadata: "metadata".into(),
                    commit_timestamp: 1234,
                    leader_epoch: 10,
                    expire_timestamp: -1,
                    version: 4,
                },
            ),
        ] {
            let value = Value::OffsetCommit(expected);
            assert_eq!(
                decode_value(&key, Some(&hex(hex_value)), 0).unwrap(),
                Some(value.clone())
            );
            assert_eq!(encode_value(&value).unwrap(), hex(hex_value));
        }
        let gkey = Key::GroupMetadata(GroupMetadataKey { group: "g".into() });
        let v1 = hex(
            "00010008636f6e73756d657200000001000c7465737470726f746f636f6c000a\
             746573746c656164657200000001000c746573746d656d6265726964000c7465\
             7374636c69656e746964000e74657374636c69656e74686f7374000000040000\
             0008000000000000001a0000000000010006746f70696331000000010000000b\
             00000000",
        );
        let Some(Value::GroupMetadata(g)) = decode_value(&gkey, Some(&v1), 0).unwrap() else {
            panic!()
        };
        assert_eq!(
            (
                g.version,
                g.generation,
                g.members[0].rebalance_timeout,
                g.members[0].session_timeout
            ),
            (1, 1, 4, 8)
        );
        assert_eq!(
            decode_assignment(&g.members[0].assignment, 0)
                .unwrap()
                .assigned_partitions,
            vec![("topic1".to_owned(), vec![11])]
        );
        assert_eq!(encode_value(&Value::GroupMetadata(g)).unwrap(), v1);
    }

    #[test]
    fn every_version_round_trips() {
        let member = MemberMetadata {
            unknown_tagged_fields: Default::default(),
            member_id: "m-1".into(),
            group_instance_id: Some("i-1".into()),
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
            rebalance_timeout: 300_000,
            session_timeout: 45_000,
            subscription: vec![0, 1, 2],
            assignment: vec![],
        };
        for version in 0..=4 {
            let mut m = member.clone();
            if version < 3 {
                m.group_instance_id = None;
            }
            if version == 0 {
                m.rebalance_timeout = m.session_timeout;
            }
            let g = Value::GroupMetadata(GroupMetadataValue {
                unknown_tagged_fields: Default::default(),
                protocol_type: "consumer".into(),
                generation: 3,
                protocol: Some("range".into()),
                leader: None,
                current_state_timestamp: if version >= 2 { 77 } else { -1 },
                members: vec![m],
                version,
            });
            let key = Key::GroupMetadata(GroupMetadataKey { group: "g".into() });
            assert_eq!(
                decode_value(&key, Some(&encode_value(&g).unwrap()), 0).unwrap(),
                Some(g)
            );
            let o = Value::OffsetCommit(OffsetCommitValue {
                topic_id: None,
                unknown_tagged_fields: Default::default(),
                offset: 5,
                metadata: "m".into(),
                commit_timestamp: 9,
                leader_epoch: if version >= 3 { 2 } else { -1 },
                expire_timestamp: if version == 1 { 99 } else { -1 },
                version,
            });
            let key = Key::OffsetCommit(OffsetCommitKey {
                group: "g".into(),
                topic: "t".into(),
                partition: 1,
                record_type: 1,
            });
            assert_eq!(
                decode_value(&key, Some(&encode_value(&o).unwrap()), 0).unwrap(),
                Some(o)
            );
        }
    }

    #[test]
    fn consumer_group_records_decode() {
        // offsets-log-format.md §9.6: type 3 key "group", value v0 epoch 10.
        let key = decode_key(&hex("0003 0005 67726f7570"), 0).unwrap();
        assert_eq!(
            key,
            Key::ConsumerGroup(ConsumerGroupKey {
                record_type: 3,
                group_id: "group".into(),
                member_id: None,
                regular_expression: None
            })
        );
        let Some(Value::ConsumerGroup(v)) =
            decode_value(&key, Some(&hex("0000 0000000a 00")), 0).unwrap()
        else {
            panic!()
        };
        assert_eq!(v.schema, "ConsumerGroupMetadataValue");
        assert_eq!(
            encode_value(&Value::ConsumerGroup(v)).unwrap(),
            hex("0000 0000000a 00")
        );
        let member_key = hex("0005 0001 67 0002 6d31");
        let key = decode_key(&member_key, 0).unwrap();
        assert_eq!(
            key,
            Key::ConsumerGroup(ConsumerGroupKey {
                record_type: 5,
                group_id: "g".into(),
                member_id: Some("m1".into()),
                regular_expression: None
            })
        );
        assert_eq!(encode_key(&key).unwrap(), member_key);
        let regex_key = decode_key(&hex("0010 0001 67 0002 612a"), 0).unwrap();
        assert!(
            matches!(regex_key, Key::ConsumerGroup(ConsumerGroupKey { regular_expression: Some(ref r), .. }) if r == "a*")
        );
    }

    #[test]
    fn unknown_types_and_versions_are_opaque() {
        let key = decode_key(&hex("0009 0005 67726f7570"), 0).unwrap();
        assert_eq!(
            key,
            Key::Opaque(OpaqueKey {
                record_type: 9,
                data: hex("000567726f7570")
            })
        );
        let value = decode_value(&key, Some(&hex("0000 0000000a 00")), 0).unwrap();
        assert_eq!(
            value,
            Some(Value::Opaque(OpaqueValue {
                record_type: 9,
                version: Some(0),
                data: hex("0000000a00")
            }))
        );
        for short in [hex(""), hex("07")] {
            let value = decode_value(&key, Some(&short), 0).unwrap().unwrap();
            assert_eq!(
                value,
                Value::Opaque(OpaqueValue {
                    record_type: 9,
                    version: None,
                    data: short.clone()
                })
            );
            assert_eq!(encode_value(&value).unwrap(), short);
        }
        let okey = Key::OffsetCommit(OffsetCommitKey {
            group: "g".into(),
            topic: "t".into(),
            partition: 1,
            record_type: 1,
        });
        assert!(matches!(
            decode_value(&okey, Some(&hex("0009 01")), 0).unwrap(),
            Some(Value::Opaque(_))
        ));
        let short = decode_value(&okey, Some(&hex("00")), 0).unwrap_err();
        assert!(matches!(short, Error::Truncated { .. }), "{short}");
        assert!(encode_value(&Value::OffsetCommit(OffsetCommitValue {
            topic_id: None,
            unknown_tagged_fields: Default::default(),
            offset: 0,
            metadata: String::new(),
            commit_timestamp: 0,
            leader_epoch: -1,
            expire_timestamp: -1,
            version: 5
        }))
        .is_err());
    }

    #[test]
    fn flexible_values_keep_unknown_tags_and_write_them_back() {
        // v4 OffsetCommitValue with two unknown tagged fields (tag 7: 2 bytes, tag 300: 0).
        let data = hex(
            "0004 0000000000000064 0000000a 09 6d65746164617461 00000000000004d2 02 07 02 abcd ac02 00",
        );
        let key = Key::OffsetCommit(OffsetCommitKey {
            group: "g".into(),
            topic: "t".into(),
            partition: 1,
            record_type: 1,
        });
        let Some(Value::OffsetCommit(v)) = decode_value(&key, Some(&data), 0).unwrap() else {
            panic!()
        };
        assert_eq!((v.offset, v.leader_epoch), (100, 10));
        assert_eq!(
            v.unknown_tagged_fields,
            vec![(7, hex("abcd")), (300, vec![])]
        );
        assert_eq!(encode_value(&Value::OffsetCommit(v.clone())).unwrap(), data);

        let mut out_of_order = v.clone();
        out_of_order.unknown_tagged_fields.reverse();
        let err = encode_value(&Value::OffsetCommit(out_of_order)).unwrap_err();
        assert!(err.to_string().contains("strictly increasing"), "{err}");
        let mut v3 = v;
        v3.version = 3;
        let err = encode_value(&Value::OffsetCommit(v3)).unwrap_err();
        assert!(matches!(err, Error::UnsupportedVersion(_)), "{err}");

        // v4 OffsetCommitValue with a topic id (tag 0, declared by Kafka 4.1) and tag 7.
        let data = hex(concat!(
            "0004 0000000000000064 0000000a 01 00000000000004d2",
            " 02 00 10 000102030405060708090a0b0c0d0e0f 07 02 abcd"
        ));
        let Some(Value::OffsetCommit(v)) = decode_value(&key, Some(&data), 0).unwrap() else {
            panic!()
        };
        let id: [u8; 16] = std::array::from_fn(|i| i as u8);
        assert_eq!(v.topic_id, Some(id));
        assert_eq!(v.unknown_tagged_fields, vec![(7, hex("abcd"))]);
        assert_eq!(encode_value(&Value::OffsetCommit(v.clone())).unwrap(), data);
        let mut v3 = v.clone();
        v3.version = 3;
        v3.unknown_tagged_fields.clear();
        let Some(Value::OffsetCommit(read)) = decode_value(
            &key,
            Some(&encode_value(&Value::OffsetCommit(v3)).unwrap()),
            0,
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(
            read.topic_id, None,
            "version 3 has no topic id; it is left out"
        );
        let short = hex("0004 0000000000000064 0000000a 01 00000000000004d2 01 00 0f 000102030405060708090a0b0c0d0e");
        let err = decode_value(&key, Some(&short), 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "corrupt input at byte 23: its topic id (tagged field 0) has 15 bytes, not 16"
        );

        // v4 GroupMetadataValue: tag 1 on the group, tag 0 on its one member.
        let data = hex(concat!(
            "0004 09 636f6e73756d6572 00000001 06 72616e6765 03 6d31 0000000000000005",
            " 02 03 6d31 00 02 63 02 68 00007530 00002710 01 01 01 00 00",
            " 01 01 03 010203"
        ));
        let key = Key::GroupMetadata(GroupMetadataKey { group: "g".into() });
        let Some(Value::GroupMetadata(g)) = decode_value(&key, Some(&data), 0).unwrap() else {
            panic!()
        };
        assert_eq!(g.unknown_tagged_fields, vec![(1, hex("010203"))]);
        assert_eq!(g.members[0].unknown_tagged_fields, vec![(0, vec![])]);
        assert_eq!(g.members[0].session_timeout, 10_000);
        assert_eq!(encode_value(&Value::GroupMetadata(g)).unwrap(), data);
    }

    #[test]
    fn truncated_values_name_the_position() {
        let key = Key::OffsetCommit(OffsetCommitKey {
            group: "g".into(),
            topic: "t".into(),
            partition: 1,
            record_type: 1,
        });
        let data = hex("0003000000000000006affffffff00000000018579eff58c");
        for cut in 0..data.len() {
            let err = decode_value(&key, Some(&data[..cut]), 500).unwrap_err();
            assert!(err.position().is_some_and(|p| p >= 500));
        }
    }
}
