//! The one schema of a decoded log ([`schema()`]).

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};

pub(super) fn topic_partitions_type(topic_name: &str) -> DataType {
    DataType::List(Arc::new(Field::new(
        "item",
        DataType::Struct(Fields::from(vec![
            Field::new(topic_name, DataType::Utf8, false),
            Field::new(
                "partitions",
                DataType::List(Arc::new(Field::new("item", DataType::Int32, false))),
                false,
            ),
        ])),
        false,
    )))
}

pub(super) fn member_fields() -> Fields {
    Fields::from(vec![
        Field::new("member_id", DataType::Utf8, false),
        Field::new("group_instance_id", DataType::Utf8, true),
        Field::new("client_id", DataType::Utf8, false),
        Field::new("client_host", DataType::Utf8, false),
        Field::new("rebalance_timeout", DataType::Int32, false),
        Field::new("session_timeout", DataType::Int32, false),
        Field::new("subscription", DataType::Binary, false),
        Field::new("assignment", DataType::Binary, false),
        Field::new(
            "subscribed_topics",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, false))),
            true,
        ),
        Field::new("assigned_partitions", topic_partitions_type("topic"), true),
    ])
}

/// The one schema of [`decode_arrow`](super::decode_arrow)'s record batches.
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
        Field::new("regular_expression", Utf8, true),
        Field::new("committed_offset", Int64, true),
        Field::new("leader_epoch", Int32, true),
        Field::new("metadata", Utf8, true),
        Field::new("commit_timestamp", Int64, true),
        Field::new("expire_timestamp", Int64, true),
        Field::new("topic_id", Utf8, true),
        Field::new("protocol_type", Utf8, true),
        Field::new("generation", Int32, true),
        Field::new("protocol", Utf8, true),
        Field::new("leader", Utf8, true),
        Field::new("current_state_timestamp", Int64, true),
        Field::new(
            "members",
            List(Arc::new(Field::new("item", Struct(member_fields()), false))),
            true,
        ),
        Field::new("epoch", Int32, true),
        Field::new("topic_partitions", topic_partitions_type("topic_id"), true),
        Field::new("consumer_group_fields", Utf8, true),
        Field::new("raw_key", Binary, true),
        Field::new("raw_value", Binary, true),
    ]))
}
