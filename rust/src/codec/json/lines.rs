//! `groupcoord dump-log`'s lines: one JSON object per record of a `__consumer_offsets` log
//! ([`record_lines`]), or per batch with `--no-decode` ([`batch_lines`]), written a chunk of
//! batches at a time. Each line starts with its `file`, given as JSON by the caller.
//!
//! A record's line: `file`, `batch_position`, `partition`, `offset`, `timestamp`,
//! `producer_id`, `producer_epoch`, `is_transactional`, `control` (the control type's name,
//! else null), `record_type`, `key` and `value` (null for a tombstone), the key and value as
//! their record classes' `to_dict` gives them; each member of a group whose protocol type is
//! `consumer` also has its `subscription_decoded` and `assignment_decoded` (an `{"error"}`
//! object where they do not decode, null where they are empty).

use crate::codec::batch::{BatchInfo, Chunk, RecordRef, Records};
use crate::codec::json::{Json, JsonFields, Object};
use crate::codec::log::{decode_payload, Payload};
use crate::codec::records::{decode_assignment, decode_subscription, KeyRef, MemberRef, ValueRef};
use crate::error::{Error, Result};

/// A record class's `to_dict` as a JSON object.
struct AsObject<'a, T: ?Sized>(&'a T);

impl<T: JsonFields + ?Sized> Json for AsObject<'_, T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut o = Object::begin(out);
        self.0.write_fields(&mut o);
        o.end();
    }
}

/// Appends the line of every record of the chunk's batches to `out`; stops at a corrupt batch
/// or record, whose batch adds no line, and returns its error.
pub fn record_lines(
    out: &mut Vec<u8>,
    file: &[u8],
    partition: i32,
    chunk: &Chunk<'_>,
) -> Option<Error> {
    each_batch(out, chunk, |out, batch, records| {
        for record in records {
            let record = record?;
            let payload = decode_payload(batch, &record)?;
            record_line(out, file, partition, batch, &record, &payload);
        }
        Ok(())
    })
}

/// Appends the line of each of the chunk's batches (`--no-decode`) to `out`; stops at a
/// corrupt batch or record, whose batch adds no line, and returns its error.
pub fn batch_lines(out: &mut Vec<u8>, file: &[u8], chunk: &Chunk<'_>) -> Option<Error> {
    each_batch(out, chunk, |out, batch, records| {
        batch_line(out, file, batch, records)
    })
}

/// Runs `write` on each batch with its records; the first error ends the walk, and what
/// `write` appended for that batch is taken out again.
fn each_batch(
    out: &mut Vec<u8>,
    chunk: &Chunk<'_>,
    mut write: impl FnMut(&mut Vec<u8>, &BatchInfo, Records<'_>) -> Result<()>,
) -> Option<Error> {
    for (batch, records) in chunk.batches() {
        let before = out.len();
        if let Err(error) = write(out, batch, records) {
            out.truncate(before);
            return Some(error);
        }
    }
    None
}

/// One record's line.
pub fn record_line(
    out: &mut Vec<u8>,
    file: &[u8],
    partition: i32,
    batch: &BatchInfo,
    record: &RecordRef<'_>,
    payload: &Payload<'_>,
) {
    let mut o = Object::begin(out);
    o.key("file").extend_from_slice(file);
    o.field("batch_position", &batch.position);
    o.field("partition", &partition);
    o.field("offset", &record.offset);
    o.field("timestamp", &record.timestamp);
    o.field("producer_id", &batch.producer_id);
    o.field("producer_epoch", &batch.producer_epoch);
    o.field("is_transactional", &batch.is_transactional);
    let (control, key, value) = match payload {
        Payload::Control(control) => (Some(control.name()), None, None),
        Payload::Data { key, value } => (None, Some(key), value.as_ref()),
    };
    o.field("control", &control);
    o.field("record_type", &key.map(KeyRef::record_type));
    o.field("key", &key.map(AsObject));
    match value {
        Some(ValueRef::GroupMetadata(group)) if group.protocol_type == "consumer" => {
            let mut v = Object::begin(o.key("value"));
            group.write_fields_with(&mut v, consumer_protocol);
            v.end();
        }
        value => o.field("value", &value.map(AsObject)),
    }
    o.end();
    out.push(b'\n');
}

/// What a consumer group's member holds in the consumer protocol's terms, decoded.
fn consumer_protocol(o: &mut Object<'_>, member: &MemberRef<'_>) {
    decoded(
        o.key("subscription_decoded"),
        member.subscription,
        decode_subscription,
    );
    decoded(
        o.key("assignment_decoded"),
        member.assignment,
        decode_assignment,
    );
}

/// An embedded struct's `to_dict`; null for no bytes, `{"error": ...}` for bytes that do not
/// decode.
fn decoded<T: JsonFields>(out: &mut Vec<u8>, data: &[u8], decode: fn(&[u8], usize) -> Result<T>) {
    if data.is_empty() {
        return None::<bool>.write_json(out);
    }
    match decode(data, 0) {
        Ok(value) => AsObject(&value).write_json(out),
        Err(error) => {
            let mut o = Object::begin(out);
            o.field("error", &error.to_string());
            o.end();
        }
    }
}

/// One batch's line (`--no-decode`): its header's fields and its records as they lie, keys,
/// values and header values in base64.
pub fn batch_line(
    out: &mut Vec<u8>,
    file: &[u8],
    batch: &BatchInfo,
    records: Records<'_>,
) -> Result<()> {
    let mut o = Object::begin(out);
    o.key("file").extend_from_slice(file);
    o.field("position", &batch.position);
    o.field("size", &batch.size);
    o.field("base_offset", &batch.base_offset);
    o.field("last_offset", &batch.last_offset);
    o.field("magic", &batch.magic);
    o.field("compression", batch.compression.name());
    o.field(
        "timestamp_type",
        if batch.log_append_time {
            "log_append"
        } else {
            "create"
        },
    );
    o.field("base_timestamp", &batch.base_timestamp);
    o.field("max_timestamp", &batch.max_timestamp);
    o.field("producer_id", &batch.producer_id);
    o.field("producer_epoch", &batch.producer_epoch);
    o.field("base_sequence", &batch.base_sequence);
    o.field("partition_leader_epoch", &batch.partition_leader_epoch);
    o.field("is_transactional", &batch.is_transactional);
    o.field("is_control", &batch.is_control);
    o.field("crc", &batch.crc);
    o.field(
        "delete_horizon_ms",
        &batch.has_delete_horizon.then_some(batch.base_timestamp),
    );
    let list = o.key("records");
    list.push(b'[');
    for (i, record) in records.enumerate() {
        let record = record?;
        if i > 0 {
            list.push(b',');
        }
        let mut r = Object::begin(list);
        r.field("offset", &record.offset);
        r.field("timestamp", &record.timestamp);
        r.field("key", &record.key);
        r.field("value", &record.value);
        let headers = record.headers()?;
        let headers: Vec<(&str, Option<&[u8]>)> = headers
            .iter()
            .map(|(name, value)| (name.as_ref(), *value))
            .collect();
        r.field("headers", &headers);
        r.end();
    }
    list.push(b']');
    o.end();
    out.push(b'\n');
    Ok(())
}
