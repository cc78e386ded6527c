//! The `members` column: a list of member structs per group metadata row, with a `consumer`
//! group's subscribed topics and assigned partitions decoded.

use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, PrimitiveArray, StructArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{ArrowError, DataType};

use crate::codec::arrow::column::{prefetch_end, Append, Reserve, Zeros};
use crate::codec::arrow::lists::{
    list_item, struct_fields, ConsumerPayload, Lists, TopicPartitions,
};
use crate::codec::arrow::variable::{Utf8, Variable};
use crate::codec::records::GroupMetadataValueRef;

/// The `members` column: a list of member structs per group metadata row.
pub(super) struct Members {
    lists: Lists,
    pub(super) member_id: Utf8,
    group_instance_id: Utf8,
    client_id: Utf8,
    client_host: Utf8,
    rebalance_timeout: Vec<i32>,
    session_timeout: Vec<i32>,
    subscription: Variable,
    assignment: Variable,
    subscribed: Lists,
    subscribed_topics: Utf8,
    assigned: TopicPartitions,
}

impl Members {
    pub(super) fn new() -> Self {
        Members {
            lists: Lists::new(),
            member_id: Utf8::new(),
            group_instance_id: Utf8::new(),
            client_id: Utf8::new(),
            client_host: Utf8::new(),
            rebalance_timeout: Vec::new(),
            session_timeout: Vec::new(),
            subscription: Variable::new(),
            assignment: Variable::new(),
            subscribed: Lists::new(),
            subscribed_topics: Utf8::new(),
            assigned: TopicPartitions::new(),
        }
    }

    pub(super) fn set(&mut self, row: usize, group: &GroupMetadataValueRef<'_>) {
        self.lists.pad(row);
        let consumer = group.protocol_type == "consumer";
        for m in &group.members {
            let member = self.member_id.len();
            self.member_id.push(m.member_id);
            // Rows skipped are null, and padded only where a later member has an id (or at
            // the end): most groups have no static members, so most never write one.
            if let Some(id) = m.group_instance_id {
                self.group_instance_id.set(member, id);
            }
            self.client_id.push(m.client_id);
            self.client_host.push(m.client_host);
            self.rebalance_timeout.push(m.rebalance_timeout);
            self.session_timeout.push(m.session_timeout);
            prefetch_end(&self.rebalance_timeout);
            prefetch_end(&self.session_timeout);
            self.subscription.push(m.subscription);
            self.assignment.push(m.assignment);
            if consumer {
                self.push_subscribed_topics(member, m.subscription);
                self.assigned.push_assignment(member, m.assignment);
            }
        }
        self.lists.push(self.member_id.len());
    }

    /// The topics of a consumer-protocol subscription, as the list of member `member`; left
    /// null if they do not decode.
    fn push_subscribed_topics(&mut self, member: usize, bytes: &[u8]) {
        self.subscribed.pad(member);
        let mark = self.subscribed_topics.mark();
        let mut r = ConsumerPayload(bytes);
        let read = (|| {
            if r.i16()? < 0 {
                return None;
            }
            for _ in 0..r.count(2)? {
                self.subscribed_topics.push(r.str()?);
            }
            Some(())
        })();
        match read {
            Some(()) => self.subscribed.push(self.subscribed_topics.len()),
            None => self.subscribed_topics.rollback(mark),
        }
    }

    pub(super) fn finish(
        self,
        rows: usize,
        data_type: &DataType,
        zeros: &Zeros,
    ) -> Result<ArrayRef, ArrowError> {
        let item = list_item(data_type)?;
        let fields = struct_fields(item.data_type())?;
        let members = self.member_id.len();
        let subscribed = self.subscribed.finish(
            members,
            list_item(fields[8].data_type())?,
            {
                let n = self.subscribed_topics.len();
                self.subscribed_topics.finish(n, zeros)?
            },
            zeros,
        )?;
        let columns: Vec<ArrayRef> = vec![
            self.member_id.finish(members, zeros)?,
            self.group_instance_id.finish(members, zeros)?,
            self.client_id.finish(members, zeros)?,
            self.client_host.finish(members, zeros)?,
            Arc::new(PrimitiveArray::<Int32Type>::new(
                ScalarBuffer::from(self.rebalance_timeout),
                None,
            )),
            Arc::new(PrimitiveArray::<Int32Type>::new(
                ScalarBuffer::from(self.session_timeout),
                None,
            )),
            self.subscription.finish_binary(members, zeros)?,
            self.assignment.finish_binary(members, zeros)?,
            subscribed,
            self.assigned
                .finish(members, fields[9].data_type(), zeros)?,
        ];
        let entries = StructArray::try_new(fields.clone(), columns, None)?;
        self.lists.finish(rows, item, Arc::new(entries), zeros)
    }
}

impl Append for Members {
    fn append(&mut self, len: usize, other: Self, other_len: usize) {
        self.lists.append(len, other.lists, other_len);
        let (members, other_members) = (self.member_id.len(), other.member_id.len());
        let Members {
            subscribed: other_subscribed,
            subscribed_topics: other_subscribed_topics,
            assigned: other_assigned,
            ..
        } = other;
        // The decoded lists on one thread, the member fields on another: members are most of
        // the rows' bytes.
        rayon::join(
            || {
                self.subscribed
                    .append(members, other_subscribed, other_members);
                let (topics, other_topics) =
                    (self.subscribed_topics.len(), other_subscribed_topics.len());
                self.subscribed_topics
                    .append(topics, other_subscribed_topics, other_topics);
                self.assigned.append(members, other_assigned, other_members);
            },
            || {
                // The raw assignments, the largest column, beside the other member fields:
                // the two threads copy closer to equal shares.
                rayon::join(
                    || {
                        self.member_id
                            .append(members, other.member_id, other_members);
                        self.group_instance_id.append(
                            members,
                            other.group_instance_id,
                            other_members,
                        );
                        self.client_id
                            .append(members, other.client_id, other_members);
                        self.client_host
                            .append(members, other.client_host, other_members);
                        self.rebalance_timeout
                            .extend_from_slice(&other.rebalance_timeout);
                        self.session_timeout
                            .extend_from_slice(&other.session_timeout);
                        self.subscription
                            .append(members, other.subscription, other_members);
                    },
                    || {
                        self.assignment
                            .append(members, other.assignment, other_members)
                    },
                )
            },
        );
    }
}

impl Reserve for Members {
    fn reserve(&mut self, factor: f64) {
        self.lists.reserve(factor);
        self.member_id.reserve(factor);
        self.group_instance_id.reserve(factor);
        self.client_id.reserve(factor);
        self.client_host.reserve(factor);
        Reserve::reserve(&mut self.rebalance_timeout, factor);
        Reserve::reserve(&mut self.session_timeout, factor);
        self.subscription.reserve(factor);
        self.assignment.reserve(factor);
        self.subscribed.reserve(factor);
        self.subscribed_topics.reserve(factor);
        self.assigned.reserve(factor);
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;

    use super::*;
    use crate::codec::arrow::schema::{member, schema, MEMBERS};

    /// Every cut and every damaged byte of a member's subscription and assignment: nothing
    /// panics, a payload that does not decode leaves that member's list null (nothing of it
    /// half-written into the shared child columns), and one that does gives its topics.
    #[test]
    fn damaged_consumer_payloads_leave_their_lists_null() {
        use crate::codec::records::{
            encode_assignment, encode_subscription, ConsumerProtocolAssignment,
            ConsumerProtocolSubscription, MemberRef,
        };
        let subscription = encode_subscription(&ConsumerProtocolSubscription {
            version: 1,
            topics: vec!["orders".into(), "payments".into()],
            user_data: Some(vec![7; 3]),
            owned_partitions: vec![("orders".into(), vec![0, 2])],
            generation_id: -1,
            rack_id: None,
        })
        .unwrap();
        let assignment = encode_assignment(&ConsumerProtocolAssignment {
            version: 1,
            assigned_partitions: vec![("orders".into(), vec![0, 2]), ("payments".into(), vec![1])],
            user_data: Some(vec![9; 2]),
        })
        .unwrap();
        // Cuts of each payload, then each byte of each payload set to 0xff and to 0x7f.
        let mut payloads: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for n in 0..=subscription.len().max(assignment.len()) {
            let cut = |p: &[u8]| p[..n.min(p.len())].to_vec();
            payloads.push((cut(&subscription), cut(&assignment)));
        }
        for i in 0..subscription.len().max(assignment.len()) {
            for b in [0xff, 0x7f] {
                let mut damaged = (subscription.clone(), assignment.clone());
                for p in [&mut damaged.0, &mut damaged.1] {
                    if let Some(byte) = p.get_mut(i) {
                        *byte = b;
                    }
                }
                payloads.push(damaged);
            }
        }
        let group = GroupMetadataValueRef {
            unknown_tagged_fields: Default::default(),
            protocol_type: "consumer",
            generation: 1,
            protocol: Some("range"),
            leader: None,
            current_state_timestamp: -1,
            members: payloads
                .iter()
                .map(|(s, a)| MemberRef {
                    unknown_tagged_fields: Default::default(),
                    member_id: "m",
                    group_instance_id: None,
                    client_id: "c",
                    client_host: "/h",
                    rebalance_timeout: 1,
                    session_timeout: 1,
                    subscription: s,
                    assignment: a,
                })
                .collect(),
            version: 3,
        };
        let mut members = Members::new();
        members.set(0, &group);
        let data_type = schema()
            .field_with_name(MEMBERS)
            .unwrap()
            .data_type()
            .clone();
        let column = members.finish(1, &data_type, &Zeros::new(0)).unwrap();
        let rows = column.as_list::<i32>().value(0);
        let rows = rows.as_struct();
        let subscribed = rows
            .column_by_name(member::SUBSCRIBED_TOPICS)
            .unwrap()
            .as_list::<i32>();
        let assigned = rows
            .column_by_name(member::ASSIGNED_PARTITIONS)
            .unwrap()
            .as_list::<i32>();
        let mut decoded = (0, 0);
        for (i, (s, a)) in payloads.iter().enumerate() {
            match crate::codec::records::decode_subscription(s, 0) {
                Ok(full) => {
                    let topics = subscribed.value(i);
                    let topics: Vec<&str> = topics.as_string::<i32>().iter().flatten().collect();
                    assert_eq!(topics, full.topics, "member {i}");
                    decoded.0 += 1;
                }
                // The cursor reads only up to the topics; past them a cut still gives them.
                Err(_) if subscribed.is_valid(i) => {
                    let topics = subscribed.value(i);
                    assert_eq!(topics.as_string::<i32>().value(0), "orders", "member {i}");
                }
                Err(_) => {}
            }
            match crate::codec::records::decode_assignment(a, 0) {
                Ok(full) => {
                    let list = assigned.value(i);
                    let list = list.as_struct();
                    let topics: Vec<&str> =
                        list.column(0).as_string::<i32>().iter().flatten().collect();
                    let expected: Vec<&str> = full
                        .assigned_partitions
                        .iter()
                        .map(|(t, _)| t.as_str())
                        .collect();
                    assert_eq!(topics, expected, "member {i}");
                    decoded.1 += 1;
                }
                Err(_) => assert!(assigned.is_null(i), "member {i}: {a:?}"),
            }
        }
        assert!(
            decoded.0 > 1 && decoded.1 > 1,
            "some payloads still decode: {decoded:?}"
        );
        assert!(subscribed.null_count() > 0 && assigned.null_count() > 0);
    }
}
