//! The consumer protocol's subscription and assignment (`ConsumerProtocolSubscription`,
//! `ConsumerProtocolAssignment`): the bytes a classic consumer group's member metadata holds,
//! decoded on demand. Non-flexible; a subscription of a later version is read as its
//! version-3 prefix, as Kafka does.

use crate::codec::generated::{
    CONSUMER_PROTOCOL_ASSIGNMENT_MAX, CONSUMER_PROTOCOL_SUBSCRIPTION_MAX,
};
use crate::codec::primitives::{Reader, Writer};
use crate::codec::records::check_version;
use crate::error::Result;

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
    check_version(
        "ConsumerProtocolSubscription",
        s.version,
        CONSUMER_PROTOCOL_SUBSCRIPTION_MAX,
    )?;
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
    check_version(
        "ConsumerProtocolAssignment",
        a.version,
        CONSUMER_PROTOCOL_ASSIGNMENT_MAX,
    )?;
    let mut out = Vec::new();
    out.put_i16(a.version);
    encode_topic_partitions(&mut out, &a.assigned_partitions)?;
    out.put_nullable_bytes(a.user_data.as_deref(), false)?;
    Ok(out)
}
