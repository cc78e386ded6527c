//! Every column of the schema, filled a row per record ([`Columns::push`], the per-record
//! path), joined run to run, and finished into a record batch.

use std::sync::Arc;

use arrow_array::types::{Int16Type, Int32Type, Int64Type};
use arrow_array::{ArrayRef, BooleanArray, PrimitiveArray, RecordBatch};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{ArrowError, Schema};

use crate::codec::arrow::column::{prefetch_end, Append, Reserve, Zeros};
use crate::codec::arrow::datum::{datum_field, datum_json};
use crate::codec::arrow::fixed::Primitive;
use crate::codec::arrow::lists::TopicPartitions;
use crate::codec::arrow::members::Members;
use crate::codec::arrow::schema::{schema, MEMBERS, TOPIC_PARTITIONS};
use crate::codec::arrow::variable::{Utf8, Variable};
use crate::codec::batch::{BatchInfo, RecordRef};
use crate::codec::consumer_group::{uuid_string, Datum};
use crate::codec::log::Payload;
use crate::codec::records::{KeyRef, ValueRef};

/// Every column of [`schema()`], filled row by row.
pub(super) struct Columns {
    rows: usize,
    partition: Vec<i32>,
    offset: Vec<i64>,
    timestamp: Vec<i64>,
    batch_position: Vec<i64>,
    producer_id: Vec<i64>,
    producer_epoch: Vec<i16>,
    is_transactional: Vec<bool>,
    is_tombstone: Vec<bool>,
    control: Utf8,
    record_type: Primitive<i16>,
    value_version: Primitive<i16>,
    group: Utf8,
    topic: Utf8,
    key_partition: Primitive<i32>,
    member_id: Utf8,
    regular_expression: Utf8,
    committed_offset: Primitive<i64>,
    leader_epoch: Primitive<i32>,
    metadata: Utf8,
    commit_timestamp: Primitive<i64>,
    expire_timestamp: Primitive<i64>,
    topic_id: Utf8,
    protocol_type: Utf8,
    generation: Primitive<i32>,
    protocol: Utf8,
    leader: Utf8,
    current_state_timestamp: Primitive<i64>,
    members: Members,
    epoch: Primitive<i32>,
    topic_partitions: TopicPartitions,
    consumer_group_fields: Utf8,
    raw_key: Variable,
    raw_value: Variable,
}

impl Columns {
    pub(super) fn new() -> Self {
        Columns {
            rows: 0,
            partition: Vec::new(),
            offset: Vec::new(),
            timestamp: Vec::new(),
            batch_position: Vec::new(),
            producer_id: Vec::new(),
            producer_epoch: Vec::new(),
            is_transactional: Vec::new(),
            is_tombstone: Vec::new(),
            control: Utf8::new(),
            record_type: Primitive::new(),
            value_version: Primitive::new(),
            group: Utf8::new(),
            topic: Utf8::new(),
            key_partition: Primitive::new(),
            member_id: Utf8::new(),
            regular_expression: Utf8::new(),
            committed_offset: Primitive::new(),
            leader_epoch: Primitive::new(),
            metadata: Utf8::new(),
            commit_timestamp: Primitive::new(),
            expire_timestamp: Primitive::new(),
            topic_id: Utf8::new(),
            protocol_type: Utf8::new(),
            generation: Primitive::new(),
            protocol: Utf8::new(),
            leader: Utf8::new(),
            current_state_timestamp: Primitive::new(),
            members: Members::new(),
            epoch: Primitive::new(),
            topic_partitions: TopicPartitions::new(),
            consumer_group_fields: Utf8::new(),
            raw_key: Variable::new(),
            raw_value: Variable::new(),
        }
    }

    pub(super) fn push(
        &mut self,
        partition: i32,
        batch: &BatchInfo,
        record: &RecordRef<'_>,
        payload: &Payload<'_>,
    ) {
        let row = self.rows;
        self.rows += 1;
        self.partition.push(partition);
        self.offset.push(record.offset);
        self.timestamp.push(record.timestamp);
        self.batch_position.push(batch.position as i64);
        self.producer_id.push(batch.producer_id);
        self.producer_epoch.push(batch.producer_epoch);
        self.is_transactional.push(batch.is_transactional);
        prefetch_end(&self.partition);
        prefetch_end(&self.offset);
        prefetch_end(&self.timestamp);
        prefetch_end(&self.batch_position);
        prefetch_end(&self.producer_id);
        prefetch_end(&self.producer_epoch);
        prefetch_end(&self.is_transactional);
        prefetch_end(&self.is_tombstone);
        let (key, value) = match payload {
            Payload::Control(control) => {
                self.is_tombstone.push(false);
                self.control.set(row, control.name());
                return;
            }
            Payload::Data { key, value } => (key, value.as_ref()),
        };
        self.is_tombstone.push(value.is_none());
        self.record_type.set(row, key.record_type());
        match key {
            KeyRef::OffsetCommit {
                group,
                topic,
                partition,
                ..
            } => {
                self.group.set(row, group);
                self.topic.set(row, topic);
                self.key_partition.set(row, *partition);
            }
            KeyRef::GroupMetadata { group } => self.group.set(row, group),
            KeyRef::ConsumerGroup(k) => {
                self.group.set(row, &k.group_id);
                if let Some(member_id) = &k.member_id {
                    self.member_id.set(row, member_id);
                }
                if let Some(regular_expression) = &k.regular_expression {
                    self.regular_expression.set(row, regular_expression);
                }
            }
            KeyRef::Opaque { data, .. } => self.raw_key.set(row, data),
        }
        let Some(value) = value else { return };
        if let Some(version) = value.version() {
            self.value_version.set(row, version);
        }
        match value {
            ValueRef::OffsetCommit(v) => {
                self.committed_offset.set(row, v.offset);
                self.leader_epoch.set(row, v.leader_epoch);
                self.metadata.set(row, v.metadata);
                self.commit_timestamp.set(row, v.commit_timestamp);
                self.expire_timestamp.set(row, v.expire_timestamp);
                if let Some(id) = v.topic_id {
                    self.topic_id.set(row, &uuid_string(id));
                }
            }
            ValueRef::GroupMetadata(g) => {
                self.protocol_type.set(row, g.protocol_type);
                self.generation.set(row, g.generation);
                if let Some(protocol) = g.protocol {
                    self.protocol.set(row, protocol);
                }
                if let Some(leader) = g.leader {
                    self.leader.set(row, leader);
                }
                self.current_state_timestamp
                    .set(row, g.current_state_timestamp);
                self.members.set(row, g);
            }
            ValueRef::ConsumerGroup(v) => {
                let epoch = ["epoch", "assignment_epoch", "member_epoch"]
                    .iter()
                    .find_map(|n| match datum_field(&v.fields, n) {
                        Some(Datum::Int(e)) => i32::try_from(*e).ok(),
                        _ => None,
                    });
                if let Some(epoch) = epoch {
                    self.epoch.set(row, epoch);
                }
                let assigned = datum_field(&v.fields, "topic_partitions")
                    .or_else(|| datum_field(&v.fields, "assigned_partitions"));
                if let Some(Datum::List(items)) = assigned {
                    self.topic_partitions.lists.pad(row);
                    for tp in items {
                        let topic = match datum_field(tp, "topic_id") {
                            Some(Datum::Uuid(u)) => uuid_string(u),
                            _ => String::new(),
                        };
                        let partitions = match datum_field(tp, "partitions") {
                            Some(Datum::List(ps)) => ps
                                .iter()
                                .filter_map(|p| {
                                    if let Datum::Int(v) = p {
                                        i32::try_from(*v).ok()
                                    } else {
                                        None
                                    }
                                })
                                .collect(),
                            _ => Vec::new(),
                        };
                        self.topic_partitions.push_topic(&topic, partitions);
                    }
                    self.topic_partitions.end_list();
                }
                let mut json = String::new();
                datum_json(&v.fields, &mut json);
                self.consumer_group_fields.set(row, &json);
            }
            ValueRef::Opaque { data, .. } => self.raw_value.set(row, data),
        }
    }

    /// Takes `other`'s rows after this one's.
    pub(super) fn append(&mut self, mut other: Columns) {
        let (rows, other_rows) = (self.rows, other.rows);
        self.rows += other_rows;
        // Members are most of the bytes to copy: they go side by side with the rest.
        let other_members = std::mem::replace(&mut other.members, Members::new());
        let mut members = std::mem::replace(&mut self.members, Members::new());
        rayon::join(
            || members.append(rows, other_members, other_rows),
            || self.append_all_but_members(rows, other, other_rows),
        );
        self.members = members;
    }

    fn append_all_but_members(&mut self, rows: usize, other: Columns, other_rows: usize) {
        self.partition.extend_from_slice(&other.partition);
        self.offset.extend_from_slice(&other.offset);
        self.timestamp.extend_from_slice(&other.timestamp);
        self.batch_position.extend_from_slice(&other.batch_position);
        self.producer_id.extend_from_slice(&other.producer_id);
        self.producer_epoch.extend_from_slice(&other.producer_epoch);
        self.is_transactional
            .extend_from_slice(&other.is_transactional);
        self.is_tombstone.extend_from_slice(&other.is_tombstone);
        self.control.append(rows, other.control, other_rows);
        self.record_type.append(rows, other.record_type, other_rows);
        self.value_version
            .append(rows, other.value_version, other_rows);
        self.group.append(rows, other.group, other_rows);
        self.topic.append(rows, other.topic, other_rows);
        self.key_partition
            .append(rows, other.key_partition, other_rows);
        self.member_id.append(rows, other.member_id, other_rows);
        self.regular_expression
            .append(rows, other.regular_expression, other_rows);
        self.committed_offset
            .append(rows, other.committed_offset, other_rows);
        self.leader_epoch
            .append(rows, other.leader_epoch, other_rows);
        self.metadata.append(rows, other.metadata, other_rows);
        self.commit_timestamp
            .append(rows, other.commit_timestamp, other_rows);
        self.expire_timestamp
            .append(rows, other.expire_timestamp, other_rows);
        self.topic_id.append(rows, other.topic_id, other_rows);
        self.protocol_type
            .append(rows, other.protocol_type, other_rows);
        self.generation.append(rows, other.generation, other_rows);
        self.protocol.append(rows, other.protocol, other_rows);
        self.leader.append(rows, other.leader, other_rows);
        self.current_state_timestamp
            .append(rows, other.current_state_timestamp, other_rows);
        self.epoch.append(rows, other.epoch, other_rows);
        self.topic_partitions
            .append(rows, other.topic_partitions, other_rows);
        self.consumer_group_fields
            .append(rows, other.consumer_group_fields, other_rows);
        self.raw_key.append(rows, other.raw_key, other_rows);
        self.raw_value.append(rows, other.raw_value, other_rows);
    }

    /// The record batch of these columns; `parallel`: the members column (most of the bytes)
    /// is finished on a second thread beside the others.
    pub(super) fn finish(mut self, parallel: bool) -> Result<RecordBatch, ArrowError> {
        let schema = schema();
        let rows = self.rows;
        // Enough for the widest column: int64 values of every row, or of every member.
        let zeros = Zeros::new(8 * (rows.max(self.members.member_id.len()) + 1));
        let members_type = schema.field_with_name(MEMBERS)?.data_type().clone();
        let members = std::mem::replace(&mut self.members, Members::new());
        let finish_members = || members.finish(rows, &members_type, &zeros);
        let finish_others = || self.finish_all_but_members(&schema, &zeros);
        let (members, others) = if parallel {
            rayon::join(finish_members, finish_others)
        } else {
            (finish_members(), finish_others())
        };
        let mut columns = others?;
        columns.insert(schema.index_of(MEMBERS)?, members?);
        RecordBatch::try_new(schema, columns)
    }

    /// Every column but `members` (left where it was, empty), in the schema's order.
    fn finish_all_but_members(
        self,
        schema: &Schema,
        zeros: &Zeros,
    ) -> Result<Vec<ArrayRef>, ArrowError> {
        let rows = self.rows;
        let topic_partitions_type = schema
            .field_with_name(TOPIC_PARTITIONS)?
            .data_type()
            .clone();
        let dense_i64 = |v: Vec<i64>| -> ArrayRef {
            Arc::new(PrimitiveArray::<Int64Type>::new(
                ScalarBuffer::from(v),
                None,
            ))
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(PrimitiveArray::<Int32Type>::new(
                ScalarBuffer::from(self.partition),
                None,
            )),
            dense_i64(self.offset),
            dense_i64(self.timestamp),
            dense_i64(self.batch_position),
            dense_i64(self.producer_id),
            Arc::new(PrimitiveArray::<Int16Type>::new(
                ScalarBuffer::from(self.producer_epoch),
                None,
            )),
            Arc::new(BooleanArray::from(self.is_transactional)),
            Arc::new(BooleanArray::from(self.is_tombstone)),
            self.control.finish(rows, zeros)?,
            self.record_type.finish::<Int16Type>(rows, zeros),
            self.value_version.finish::<Int16Type>(rows, zeros),
            self.group.finish(rows, zeros)?,
            self.topic.finish(rows, zeros)?,
            self.key_partition.finish::<Int32Type>(rows, zeros),
            self.member_id.finish(rows, zeros)?,
            self.regular_expression.finish(rows, zeros)?,
            self.committed_offset.finish::<Int64Type>(rows, zeros),
            self.leader_epoch.finish::<Int32Type>(rows, zeros),
            self.metadata.finish(rows, zeros)?,
            self.commit_timestamp.finish::<Int64Type>(rows, zeros),
            self.expire_timestamp.finish::<Int64Type>(rows, zeros),
            self.topic_id.finish(rows, zeros)?,
            self.protocol_type.finish(rows, zeros)?,
            self.generation.finish::<Int32Type>(rows, zeros),
            self.protocol.finish(rows, zeros)?,
            self.leader.finish(rows, zeros)?,
            self.current_state_timestamp
                .finish::<Int64Type>(rows, zeros),
            self.epoch.finish::<Int32Type>(rows, zeros),
            self.topic_partitions
                .finish(rows, &topic_partitions_type, zeros)?,
            self.consumer_group_fields.finish(rows, zeros)?,
            self.raw_key.finish_binary(rows, zeros)?,
            self.raw_value.finish_binary(rows, zeros)?,
        ];
        Ok(columns)
    }
}

impl Reserve for Columns {
    fn reserve(&mut self, factor: f64) {
        Reserve::reserve(&mut self.partition, factor);
        Reserve::reserve(&mut self.offset, factor);
        Reserve::reserve(&mut self.timestamp, factor);
        Reserve::reserve(&mut self.batch_position, factor);
        Reserve::reserve(&mut self.producer_id, factor);
        Reserve::reserve(&mut self.producer_epoch, factor);
        Reserve::reserve(&mut self.is_transactional, factor);
        Reserve::reserve(&mut self.is_tombstone, factor);
        self.control.reserve(factor);
        self.record_type.reserve(factor);
        self.value_version.reserve(factor);
        self.group.reserve(factor);
        self.topic.reserve(factor);
        self.key_partition.reserve(factor);
        self.member_id.reserve(factor);
        self.regular_expression.reserve(factor);
        self.committed_offset.reserve(factor);
        self.leader_epoch.reserve(factor);
        self.metadata.reserve(factor);
        self.commit_timestamp.reserve(factor);
        self.expire_timestamp.reserve(factor);
        self.topic_id.reserve(factor);
        self.protocol_type.reserve(factor);
        self.generation.reserve(factor);
        self.protocol.reserve(factor);
        self.leader.reserve(factor);
        self.current_state_timestamp.reserve(factor);
        self.members.reserve(factor);
        self.epoch.reserve(factor);
        self.topic_partitions.reserve(factor);
        self.consumer_group_fields.reserve(factor);
        self.raw_key.reserve(factor);
        self.raw_value.reserve(factor);
    }
}
