//! The one schema of a decoded log ([`schema()`]): every column by its generated name, and its
//! type.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};

// The columns, named once in the declaration of the records (`groupcoord.format.records`)
// and generated into `codec::generated`.
pub use crate::codec::generated::arrow_column::*;

/// The fields of a `members` entry, one per member of a group.
pub mod member {
    pub const MEMBER_ID: &str = "member_id";
    pub const GROUP_INSTANCE_ID: &str = "group_instance_id";
    pub const CLIENT_ID: &str = "client_id";
    pub const CLIENT_HOST: &str = "client_host";
    pub const REBALANCE_TIMEOUT: &str = "rebalance_timeout";
    pub const SESSION_TIMEOUT: &str = "session_timeout";
    pub const SUBSCRIPTION: &str = "subscription";
    pub const ASSIGNMENT: &str = "assignment";
    pub const SUBSCRIBED_TOPICS: &str = "subscribed_topics";
    pub const ASSIGNED_PARTITIONS: &str = "assigned_partitions";
}

/// The fields of a topic's entry in `topic_partitions` (the topic by its id) and in a
/// member's `assigned_partitions` (by its name).
pub mod topic_entry {
    pub const TOPIC_ID: &str = "topic_id";
    pub const TOPIC: &str = "topic";
    pub const PARTITIONS: &str = "partitions";
}

/// What Arrow names a list's items.
pub const LIST_ITEM: &str = "item";

pub(super) fn topic_partitions_type(topic_name: &str) -> DataType {
    DataType::List(Arc::new(Field::new(
        LIST_ITEM,
        DataType::Struct(Fields::from(vec![
            Field::new(topic_name, DataType::Utf8, false),
            Field::new(
                topic_entry::PARTITIONS,
                DataType::List(Arc::new(Field::new(LIST_ITEM, DataType::Int32, false))),
                false,
            ),
        ])),
        false,
    )))
}

pub(super) fn member_fields() -> Fields {
    Fields::from(vec![
        Field::new(member::MEMBER_ID, DataType::Utf8, false),
        Field::new(member::GROUP_INSTANCE_ID, DataType::Utf8, true),
        Field::new(member::CLIENT_ID, DataType::Utf8, false),
        Field::new(member::CLIENT_HOST, DataType::Utf8, false),
        Field::new(member::REBALANCE_TIMEOUT, DataType::Int32, false),
        Field::new(member::SESSION_TIMEOUT, DataType::Int32, false),
        Field::new(member::SUBSCRIPTION, DataType::Binary, false),
        Field::new(member::ASSIGNMENT, DataType::Binary, false),
        Field::new(
            member::SUBSCRIBED_TOPICS,
            DataType::List(Arc::new(Field::new(LIST_ITEM, DataType::Utf8, false))),
            true,
        ),
        Field::new(
            member::ASSIGNED_PARTITIONS,
            topic_partitions_type(topic_entry::TOPIC),
            true,
        ),
    ])
}

/// The one schema of [`decode_arrow`](super::decode_arrow)'s record batches.
pub fn schema() -> SchemaRef {
    use DataType::*;
    Arc::new(Schema::new(vec![
        Field::new(PARTITION, Int32, false),
        Field::new(OFFSET, Int64, false),
        Field::new(TIMESTAMP, Int64, false),
        Field::new(BATCH_POSITION, Int64, false),
        Field::new(PRODUCER_ID, Int64, false),
        Field::new(PRODUCER_EPOCH, Int16, false),
        Field::new(IS_TRANSACTIONAL, Boolean, false),
        Field::new(IS_TOMBSTONE, Boolean, false),
        Field::new(CONTROL, Utf8, true),
        Field::new(RECORD_TYPE, Int16, true),
        Field::new(VALUE_VERSION, Int16, true),
        Field::new(GROUP, Utf8, true),
        Field::new(TOPIC, Utf8, true),
        Field::new(KEY_PARTITION, Int32, true),
        Field::new(MEMBER_ID, Utf8, true),
        Field::new(REGULAR_EXPRESSION, Utf8, true),
        Field::new(COMMITTED_OFFSET, Int64, true),
        Field::new(LEADER_EPOCH, Int32, true),
        Field::new(METADATA, Utf8, true),
        Field::new(COMMIT_TIMESTAMP, Int64, true),
        Field::new(EXPIRE_TIMESTAMP, Int64, true),
        Field::new(TOPIC_ID, Utf8, true),
        Field::new(PROTOCOL_TYPE, Utf8, true),
        Field::new(GENERATION, Int32, true),
        Field::new(PROTOCOL, Utf8, true),
        Field::new(LEADER, Utf8, true),
        Field::new(CURRENT_STATE_TIMESTAMP, Int64, true),
        Field::new(
            MEMBERS,
            List(Arc::new(Field::new(
                LIST_ITEM,
                Struct(member_fields()),
                false,
            ))),
            true,
        ),
        Field::new(EPOCH, Int32, true),
        Field::new(
            TOPIC_PARTITIONS,
            topic_partitions_type(topic_entry::TOPIC_ID),
            true,
        ),
        Field::new(CONSUMER_GROUP_FIELDS, Utf8, true),
        Field::new(RAW_KEY, Binary, true),
        Field::new(RAW_VALUE, Binary, true),
    ]))
}
