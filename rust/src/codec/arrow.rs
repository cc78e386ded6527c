//! A decoded `__consumer_offsets` log as one Arrow record batch: one row per record, with no
//! per-record Python object. The schema ([`schema`]) is the one documented in the package's
//! stub (`decode_arrow`):
//!
//! | column | type | set for |
//! |---|---|---|
//! | partition, offset, timestamp, batch_position, producer_id | int32 / int64 | every row |
//! | producer_epoch | int16 | every row |
//! | is_transactional, is_tombstone | bool | every row |
//! | control | utf8 | transaction markers: "commit" / "abort" |
//! | record_type, value_version | int16 | data records (value_version: not tombstones) |
//! | group, topic, key_partition, member_id | utf8 / int32 | keys (group_id for types 3-8, 16) |
//! | committed_offset, leader_epoch, metadata, commit_timestamp, expire_timestamp | | offset commits |
//! | protocol_type, generation, protocol, leader, current_state_timestamp | | group metadata |
//! | members | list<struct<member_id, group_instance_id, client_id, client_host, rebalance_timeout, session_timeout, subscription, assignment, subscribed_topics list<utf8>, assigned_partitions list<struct<topic, partitions list<int32>>>>> | group metadata; the last two decoded for `consumer` groups |
//! | epoch | int32 | types 3 (epoch), 6 (assignment_epoch), 8 (member_epoch) |
//! | topic_partitions | list<struct<topic_id utf8, partitions list<int32>>> | types 7 and 8 (assigned partitions) |
//! | consumer_group_fields | utf8 (JSON) | types 3-8, 16: every decoded field |
//! | raw_key, raw_value | binary | opaque records (types this codec does not decode) |

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, BooleanBuilder, Int16Builder, Int32Builder, Int64Builder, StringBuilder};
use arrow_array::{ArrayRef, Int32Array, ListArray, RecordBatch, StructArray};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef};

use crate::codec::consumer_group::Datum;
use crate::codec::log::OffsetsRecord;
use crate::codec::primitives::Reader;
use crate::codec::records::{Key, Value};

fn topic_partitions_type(topic_name: &str) -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(Fields::from(vec![
            Field::new(topic_name, DataType::Utf8, false),
            Field::new("partitions", DataType::List(Arc::new(Field::new("item", DataType::Int32, false))), false),
        ])),
        false,
    )))
}

fn member_fields() -> Fields {
    Fields::from(vec![
        Field::new("member_id", DataType::Utf8, false),
        Field::new("group_instance_id", DataType::Utf8, true),
        Field::new("client_id", DataType::Utf8, false),
        Field::new("client_host", DataType::Utf8, false),
        Field::new("rebalance_timeout", DataType::Int32, false),
        Field::new("session_timeout", DataType::Int32, false),
        Field::new("subscription", DataType::Binary, false),
        Field::new("assignment", DataType::Binary, false),
        Field::new("subscribed_topics", DataType::List(Arc::new(Field::new("item", DataType::Utf8, false))), true),
        Field::new("assigned_partitions", topic_partitions_type("topic"), true),
    ])
}

/// The one schema of [`to_record_batch`].
pub fn schema() -> SchemaRef {
    use DataType::*;
    Arc::new(Schema::new(vec![
        Field::new("partition", Int32, false),
        Field::new("offset", Int64, false),
        Field::new("timestamp", Int64, false),
        Field::new("batch_position", Int64, false),
        Field::new("producer_id", Int64, false),
        Field::new("producer_epoch", Int16, false),
        Field::new("is_transactional", Boolean, false),
        Field::new("is_tombstone", Boolean, false),
        Field::new("control", Utf8, true),
        Field::new("record_type", Int16, true),
        Field::new("value_version", Int16, true),
        Field::new("group", Utf8, true),
        Field::new("topic", Utf8, true),
        Field::new("key_partition", Int32, true),
        Field::new("member_id", Utf8, true),
        Field::new("committed_offset", Int64, true),
        Field::new("leader_epoch", Int32, true),
        Field::new("metadata", Utf8, true),
        Field::new("commit_timestamp", Int64, true),
        Field::new("expire_timestamp", Int64, true),
        Field::new("protocol_type", Utf8, true),
        Field::new("generation", Int32, true),
        Field::new("protocol", Utf8, true),
        Field::new("leader", Utf8, true),
        Field::new("current_state_timestamp", Int64, true),
        Field::new("members", List(Arc::new(Field::new("item", Struct(member_fields()), false))), true),
        Field::new("epoch", Int32, true),
        Field::new("topic_partitions", topic_partitions_type("topic_id"), true),
        Field::new("consumer_group_fields", Utf8, true),
        Field::new("raw_key", Binary, true),
        Field::new("raw_value", Binary, true),
    ]))
}

/// A `list<struct<name utf8, partitions list<int32>>>` column under construction.
struct TopicPartitionsColumn {
    offsets: Vec<i32>,
    valid: Vec<bool>,
    topics: StringBuilder,
    partition_offsets: Vec<i32>,
    partitions: Vec<i32>,
}

impl TopicPartitionsColumn {
    fn new() -> Self {
        TopicPartitionsColumn {
            offsets: vec![0],
            valid: Vec::new(),
            topics: StringBuilder::new(),
            partition_offsets: vec![0],
            partitions: Vec::new(),
        }
    }

    fn push(&mut self, list: Option<&[(String, Vec<i32>)]>) {
        if let Some(list) = list {
            for (topic, partitions) in list {
                self.topics.append_value(topic);
                self.partitions.extend_from_slice(partitions);
                self.partition_offsets.push(self.partitions.len() as i32);
            }
        }
        self.offsets.push((self.partition_offsets.len() - 1) as i32);
        self.valid.push(list.is_some());
    }

    /// Appends a consumer-protocol assignment's partitions straight from its bytes. False
    /// (nothing appended) if they do not decode.
    fn push_assignment(&mut self, bytes: &[u8]) -> bool {
        let mut topics = Vec::new();
        let ok = walk_assignment(bytes, |topic, partitions| topics.push((topic, partitions))).is_some();
        if !ok {
            return false;
        }
        for (topic, partitions) in topics {
            self.topics.append_value(topic);
            self.partitions.extend(partitions);
            self.partition_offsets.push(self.partitions.len() as i32);
        }
        self.offsets.push((self.partition_offsets.len() - 1) as i32);
        self.valid.push(true);
        true
    }

    fn finish(mut self, data_type: &DataType) -> Result<ArrayRef, ArrowError> {
        let DataType::List(item) = data_type else { unreachable!("a list type") };
        let DataType::Struct(fields) = item.data_type() else { unreachable!("a struct item") };
        let DataType::List(partition_item) = fields[1].data_type() else { unreachable!("a list of partitions") };
        let partitions = ListArray::try_new(
            partition_item.clone(),
            OffsetBuffer::new(self.partition_offsets.into()),
            Arc::new(Int32Array::from(self.partitions)),
            None,
        )?;
        let entries = StructArray::try_new(fields.clone(), vec![Arc::new(self.topics.finish()), Arc::new(partitions)], None)?;
        Ok(Arc::new(ListArray::try_new(item.clone(), OffsetBuffer::new(self.offsets.into()), Arc::new(entries), Some(NullBuffer::from(self.valid)))?))
    }
}

struct MembersColumn {
    offsets: Vec<i32>,
    valid: Vec<bool>,
    count: i32,
    member_id: StringBuilder,
    group_instance_id: StringBuilder,
    client_id: StringBuilder,
    client_host: StringBuilder,
    rebalance_timeout: Vec<i32>,
    session_timeout: Vec<i32>,
    subscription: BinaryBuilder,
    assignment: BinaryBuilder,
    topic_offsets: Vec<i32>,
    topics_valid: Vec<bool>,
    topic_count: i32,
    topics: StringBuilder,
    assigned: TopicPartitionsColumn,
}

impl MembersColumn {
    fn new() -> Self {
        MembersColumn {
            offsets: vec![0],
            valid: Vec::new(),
            count: 0,
            member_id: StringBuilder::new(),
            group_instance_id: StringBuilder::new(),
            client_id: StringBuilder::new(),
            client_host: StringBuilder::new(),
            rebalance_timeout: Vec::new(),
            session_timeout: Vec::new(),
            subscription: BinaryBuilder::new(),
            assignment: BinaryBuilder::new(),
            topic_offsets: vec![0],
            topics_valid: Vec::new(),
            topic_count: 0,
            topics: StringBuilder::new(),
            assigned: TopicPartitionsColumn::new(),
        }
    }
}

/// Appends per-row values of one record to every column.
struct Columns {
    partition: Int32Builder,
    offset: Int64Builder,
    timestamp: Int64Builder,
    batch_position: Int64Builder,
    producer_id: Int64Builder,
    producer_epoch: Int16Builder,
    is_transactional: BooleanBuilder,
    is_tombstone: BooleanBuilder,
    control: StringBuilder,
    record_type: Int16Builder,
    value_version: Int16Builder,
    group: StringBuilder,
    topic: StringBuilder,
    key_partition: Int32Builder,
    member_id: StringBuilder,
    committed_offset: Int64Builder,
    leader_epoch: Int32Builder,
    metadata: StringBuilder,
    commit_timestamp: Int64Builder,
    expire_timestamp: Int64Builder,
    protocol_type: StringBuilder,
    generation: Int32Builder,
    protocol: StringBuilder,
    leader: StringBuilder,
    current_state_timestamp: Int64Builder,
    members: MembersColumn,
    epoch: Int32Builder,
    topic_partitions: TopicPartitionsColumn,
    consumer_group_fields: StringBuilder,
    raw_key: BinaryBuilder,
    raw_value: BinaryBuilder,
}

fn borrowed_str<'a>(r: &mut Reader<'a>) -> Option<&'a str> {
    let n = usize::try_from(r.i16().ok()?).ok()?;
    std::str::from_utf8(r.take(n, "string").ok()?).ok()
}

/// The topics of a consumer-protocol subscription, borrowed from its bytes.
fn subscribed_topics(bytes: &[u8]) -> Option<Vec<&str>> {
    let mut r = Reader::new(bytes, 0);
    if r.i16().ok()? < 0 {
        return None;
    }
    let n = r.array(false, 2).ok()?;
    (0..n).map(|_| borrowed_str(&mut r)).collect()
}

/// Walks a consumer-protocol assignment's (topic, partitions) without allocating strings.
fn walk_assignment<'a>(bytes: &'a [u8], mut f: impl FnMut(&'a str, Vec<i32>)) -> Option<()> {
    let mut r = Reader::new(bytes, 0);
    if r.i16().ok()? < 0 {
        return None;
    }
    let n = r.array(false, 6).ok()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let topic = borrowed_str(&mut r)?;
        let count = r.array(false, 4).ok()?;
        let partitions = (0..count).map(|_| r.i32().ok()).collect::<Option<Vec<i32>>>()?;
        out.push((topic, partitions));
    }
    r.nullable_bytes(false).ok()?;
    for (topic, partitions) in out {
        f(topic, partitions);
    }
    Some(())
}

fn datum_json(d: &Datum, out: &mut String) {
    match d {
        Datum::Null => out.push_str("null"),
        Datum::Int(v) => out.push_str(&v.to_string()),
        Datum::Str(s) => json_string(s, out),
        Datum::Bytes(b) => json_string(&b.iter().map(|x| format!("{x:02x}")).collect::<String>(), out),
        Datum::Uuid(u) => json_string(&u.iter().map(|x| format!("{x:02x}")).collect::<String>(), out),
        Datum::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                datum_json(item, out);
            }
            out.push(']');
        }
        Datum::Struct(fields) => {
            out.push('{');
            for (i, (name, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(name, out);
                out.push(':');
                datum_json(value, out);
            }
            out.push('}');
        }
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn datum_field<'a>(d: &'a Datum, name: &str) -> Option<&'a Datum> {
    match d {
        Datum::Struct(fields) => fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v),
        _ => None,
    }
}

fn uuid_hex(u: &[u8; 16]) -> String {
    u.iter().map(|x| format!("{x:02x}")).collect()
}

/// `[(topic_id, partitions)]` of a KIP-848 `TopicPartitions` list.
fn datum_topic_partitions(d: Option<&Datum>) -> Option<Vec<(String, Vec<i32>)>> {
    let Some(Datum::List(items)) = d else { return None };
    Some(
        items
            .iter()
            .map(|tp| {
                let topic = match datum_field(tp, "topic_id") {
                    Some(Datum::Uuid(u)) => uuid_hex(u),
                    _ => String::new(),
                };
                let partitions = match datum_field(tp, "partitions") {
                    Some(Datum::List(ps)) => ps.iter().filter_map(|p| if let Datum::Int(v) = p { i32::try_from(*v).ok() } else { None }).collect(),
                    _ => Vec::new(),
                };
                (topic, partitions)
            })
            .collect(),
    )
}

impl Columns {
    fn new(capacity: usize) -> Self {
        Columns {
            partition: Int32Builder::with_capacity(capacity),
            offset: Int64Builder::with_capacity(capacity),
            timestamp: Int64Builder::with_capacity(capacity),
            batch_position: Int64Builder::with_capacity(capacity),
            producer_id: Int64Builder::with_capacity(capacity),
            producer_epoch: Int16Builder::with_capacity(capacity),
            is_transactional: BooleanBuilder::with_capacity(capacity),
            is_tombstone: BooleanBuilder::with_capacity(capacity),
            control: StringBuilder::new(),
            record_type: Int16Builder::with_capacity(capacity),
            value_version: Int16Builder::with_capacity(capacity),
            group: StringBuilder::new(),
            topic: StringBuilder::new(),
            key_partition: Int32Builder::with_capacity(capacity),
            member_id: StringBuilder::new(),
            committed_offset: Int64Builder::with_capacity(capacity),
            leader_epoch: Int32Builder::with_capacity(capacity),
            metadata: StringBuilder::new(),
            commit_timestamp: Int64Builder::with_capacity(capacity),
            expire_timestamp: Int64Builder::with_capacity(capacity),
            protocol_type: StringBuilder::new(),
            generation: Int32Builder::with_capacity(capacity),
            protocol: StringBuilder::new(),
            leader: StringBuilder::new(),
            current_state_timestamp: Int64Builder::with_capacity(capacity),
            members: MembersColumn::new(),
            epoch: Int32Builder::with_capacity(capacity),
            topic_partitions: TopicPartitionsColumn::new(),
            consumer_group_fields: StringBuilder::new(),
            raw_key: BinaryBuilder::new(),
            raw_value: BinaryBuilder::new(),
        }
    }

    fn push(&mut self, r: &OffsetsRecord) {
        self.partition.append_value(r.partition);
        self.offset.append_value(r.offset);
        self.timestamp.append_value(r.timestamp);
        self.batch_position.append_value(r.batch_position as i64);
        self.producer_id.append_value(r.producer_id);
        self.producer_epoch.append_value(r.producer_epoch);
        self.is_transactional.append_value(r.is_transactional);
        self.is_tombstone.append_value(r.key.is_some() && r.value.is_none());
        self.control.append_option(r.control.map(|c| c.name()));
        self.record_type.append_option(r.key.as_ref().map(Key::record_type));
        self.value_version.append_option(r.value.as_ref().map(|v| match v {
            Value::OffsetCommit(v) => v.version,
            Value::GroupMetadata(v) => v.version,
            Value::ConsumerGroup(v) => v.version,
            Value::Opaque(v) => v.version,
        }));
        let (group, topic, key_partition, member_id, raw_key) = match &r.key {
            Some(Key::OffsetCommit(k)) => (Some(k.group.as_str()), Some(k.topic.as_str()), Some(k.partition), None, None),
            Some(Key::GroupMetadata(k)) => (Some(k.group.as_str()), None, None, None, None),
            Some(Key::ConsumerGroup(k)) => (Some(k.group_id.as_str()), None, None, k.member_id.as_deref(), None),
            Some(Key::Opaque(k)) => (None, None, None, None, Some(k.data.as_slice())),
            None => (None, None, None, None, None),
        };
        self.group.append_option(group);
        self.topic.append_option(topic);
        self.key_partition.append_option(key_partition);
        self.member_id.append_option(member_id);
        self.raw_key.append_option(raw_key);
        let commit = match &r.value {
            Some(Value::OffsetCommit(v)) => Some(v),
            _ => None,
        };
        self.committed_offset.append_option(commit.map(|v| v.offset));
        self.leader_epoch.append_option(commit.map(|v| v.leader_epoch));
        self.metadata.append_option(commit.map(|v| v.metadata.as_str()));
        self.commit_timestamp.append_option(commit.map(|v| v.commit_timestamp));
        self.expire_timestamp.append_option(commit.map(|v| v.expire_timestamp));
        let group_value = match &r.value {
            Some(Value::GroupMetadata(v)) => Some(v),
            _ => None,
        };
        self.protocol_type.append_option(group_value.map(|v| v.protocol_type.as_str()));
        self.generation.append_option(group_value.map(|v| v.generation));
        self.protocol.append_option(group_value.and_then(|v| v.protocol.as_deref()));
        self.leader.append_option(group_value.and_then(|v| v.leader.as_deref()));
        self.current_state_timestamp.append_option(group_value.map(|v| v.current_state_timestamp));
        let m = &mut self.members;
        if let Some(g) = group_value {
            let consumer = g.protocol_type == "consumer";
            for member in &g.members {
                m.count += 1;
                m.member_id.append_value(&member.member_id);
                m.group_instance_id.append_option(member.group_instance_id.as_deref());
                m.client_id.append_value(&member.client_id);
                m.client_host.append_value(&member.client_host);
                m.rebalance_timeout.push(member.rebalance_timeout);
                m.session_timeout.push(member.session_timeout);
                m.subscription.append_value(&member.subscription);
                m.assignment.append_value(&member.assignment);
                let topics = if consumer { subscribed_topics(&member.subscription) } else { None };
                if let Some(topics) = &topics {
                    for topic in topics {
                        m.topics.append_value(topic);
                    }
                    m.topic_count += topics.len() as i32;
                }
                m.topic_offsets.push(m.topic_count);
                m.topics_valid.push(topics.is_some());
                let assigned = if consumer { m.assigned.push_assignment(&member.assignment) } else { false };
                if !assigned {
                    m.assigned.push(None);
                }
            }
        }
        m.offsets.push(m.count);
        m.valid.push(group_value.is_some());
        let cg = match &r.value {
            Some(Value::ConsumerGroup(v)) => Some(v),
            _ => None,
        };
        let epoch = cg.and_then(|v| {
            ["epoch", "assignment_epoch", "member_epoch"].iter().find_map(|n| match datum_field(&v.fields, n) {
                Some(Datum::Int(e)) => i32::try_from(*e).ok(),
                _ => None,
            })
        });
        self.epoch.append_option(epoch);
        let tps = cg.and_then(|v| datum_topic_partitions(datum_field(&v.fields, "topic_partitions").or_else(|| datum_field(&v.fields, "assigned_partitions"))));
        self.topic_partitions.push(tps.as_deref());
        self.consumer_group_fields.append_option(cg.map(|v| {
            let mut s = String::new();
            datum_json(&v.fields, &mut s);
            s
        }));
        self.raw_value.append_option(match &r.value {
            Some(Value::Opaque(v)) => Some(v.data.as_slice()),
            _ => None,
        });
    }

    fn finish(mut self, schema: SchemaRef) -> Result<RecordBatch, ArrowError> {
        let members_field = schema.field_with_name("members")?.data_type().clone();
        let tps_field = schema.field_with_name("topic_partitions")?.data_type().clone();
        let mut m = self.members;
        let DataType::List(member_item) = &members_field else { unreachable!() };
        let DataType::Struct(mfields) = member_item.data_type() else { unreachable!() };
        let DataType::List(topic_item) = mfields[8].data_type() else { unreachable!() };
        let subscribed = ListArray::try_new(topic_item.clone(), OffsetBuffer::new(m.topic_offsets.into()), Arc::new(m.topics.finish()), Some(NullBuffer::from(m.topics_valid)))?;
        let assigned = m.assigned.finish(mfields[9].data_type())?;
        let member_struct = StructArray::try_new(
            mfields.clone(),
            vec![
                Arc::new(m.member_id.finish()),
                Arc::new(m.group_instance_id.finish()),
                Arc::new(m.client_id.finish()),
                Arc::new(m.client_host.finish()),
                Arc::new(Int32Array::from(m.rebalance_timeout)),
                Arc::new(Int32Array::from(m.session_timeout)),
                Arc::new(m.subscription.finish()),
                Arc::new(m.assignment.finish()),
                Arc::new(subscribed),
                assigned,
            ],
            None,
        )?;
        let members = ListArray::try_new(member_item.clone(), OffsetBuffer::new(m.offsets.into()), Arc::new(member_struct), Some(NullBuffer::from(m.valid)))?;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.partition.finish()),
            Arc::new(self.offset.finish()),
            Arc::new(self.timestamp.finish()),
            Arc::new(self.batch_position.finish()),
            Arc::new(self.producer_id.finish()),
            Arc::new(self.producer_epoch.finish()),
            Arc::new(self.is_transactional.finish()),
            Arc::new(self.is_tombstone.finish()),
            Arc::new(self.control.finish()),
            Arc::new(self.record_type.finish()),
            Arc::new(self.value_version.finish()),
            Arc::new(self.group.finish()),
            Arc::new(self.topic.finish()),
            Arc::new(self.key_partition.finish()),
            Arc::new(self.member_id.finish()),
            Arc::new(self.committed_offset.finish()),
            Arc::new(self.leader_epoch.finish()),
            Arc::new(self.metadata.finish()),
            Arc::new(self.commit_timestamp.finish()),
            Arc::new(self.expire_timestamp.finish()),
            Arc::new(self.protocol_type.finish()),
            Arc::new(self.generation.finish()),
            Arc::new(self.protocol.finish()),
            Arc::new(self.leader.finish()),
            Arc::new(self.current_state_timestamp.finish()),
            Arc::new(members),
            Arc::new(self.epoch.finish()),
            self.topic_partitions.finish(&tps_field)?,
            Arc::new(self.consumer_group_fields.finish()),
            Arc::new(self.raw_key.finish()),
            Arc::new(self.raw_value.finish()),
        ];
        RecordBatch::try_new(schema, columns)
    }
}

/// The records as one Arrow record batch of [`schema`].
pub fn to_record_batch(records: &[OffsetsRecord]) -> Result<RecordBatch, ArrowError> {
    let mut columns = Columns::new(records.len());
    for r in records {
        columns.push(r);
    }
    columns.finish(schema())
}

#[cfg(test)]
mod tests {
    use crate::testing::hex;
    use super::*;
    use crate::codec::log::decode_log;
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    use arrow_array::types::{Int32Type, Int64Type};


    #[test]
    fn group_metadata_rows_carry_members_and_assignments() {
        let key = hex("0002001b6b61666b6573632d646576636c75737465722d67726f75702d6964");
        let value = hex(
            "00030008636f6e73756d657200000007000572616e6765002c72646b61666b61\
             2d39663466633162302d316437642d343437312d393065382d65306636346633\
             6339643966000001857ee10d9500000001002c72646b61666b612d3966346663\
             3162302d316437642d343437312d393065382d653066363466336339643966ff\
             ff000772646b61666b61000b2f3137322e31382e302e31000493e00000afc800\
             000013000100000001000374303100000000000000000000001f000000000001\
             00037430310000000300000000000000010000000200000000",
        );
        let okey = hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000");
        let oval = hex("0003000000000000006affffffff00000000018579eff58c");
        let batch = crate::codec::batch::write_batch(
            &crate::codec::batch::BatchHeader::plain(0, 5),
            &[(Some(&key), Some(&value)), (Some(&okey), Some(&oval)), (Some(&okey), None)],
        )
        .unwrap();
        let log = decode_log(&batch, 0, 3);
        let rb = to_record_batch(&log.records).unwrap();
        assert_eq!(rb.num_rows(), 3);
        assert_eq!(rb.schema(), schema());
        let committed = rb.column_by_name("committed_offset").unwrap().as_primitive::<Int64Type>();
        assert!(committed.is_null(0));
        assert_eq!(committed.value(1), 106);
        assert!(rb.column_by_name("is_tombstone").unwrap().as_boolean().value(2));
        let members = rb.column_by_name("members").unwrap().as_list::<i32>();
        assert!(members.is_null(1));
        let first = members.value(0);
        let first = first.as_struct();
        assert_eq!(first.column_by_name("client_id").unwrap().as_string::<i32>().value(0), "rdkafka");
        let assigned = first.column_by_name("assigned_partitions").unwrap().as_list::<i32>().value(0);
        let tp = assigned.as_struct();
        assert_eq!(tp.column(0).as_string::<i32>().value(0), "t01");
        let parts = tp.column(1).as_list::<i32>().value(0);
        assert_eq!(parts.as_primitive::<Int32Type>().values().to_vec(), vec![0, 1, 2]);
        let subscribed = first.column_by_name("subscribed_topics").unwrap().as_list::<i32>().value(0);
        assert_eq!(subscribed.as_string::<i32>().value(0), "t01");
    }
}
