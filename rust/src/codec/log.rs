//! A `__consumer_offsets` log decoded record by record: batches, their records, and each
//! record's key and value (or its transaction marker).

use crate::codec::batch::{
    control_marker, control_record_type, BatchInfo, ControlMarker, LogReader, RecordRef,
    CHUNK_BYTES,
};
use crate::codec::records::{decode_key_ref, decode_value_ref, Key, KeyRef, Value, ValueRef};
use crate::error::{Error, Result};

/// One record of the log, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetsRecord {
    pub partition: i32,
    pub offset: i64,
    pub timestamp: i64,
    pub batch_position: usize,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub is_transactional: bool,
    /// For a control record: the COMMIT/ABORT marker, or the control type of another kind.
    pub control: Option<Control>,
    pub key: Option<Key>,
    pub value: Option<Value>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Marker(ControlMarker),
    Other(i16),
}

impl Control {
    /// Every name [`Control::name`] gives.
    pub const NAMES: [&'static str; 8] = [
        "commit",
        "abort",
        "leader_change",
        "snapshot_header",
        "snapshot_footer",
        "kraft_version",
        "kraft_voters",
        "unknown",
    ];

    /// Kafka's name of the control type (`ControlRecordType`), lower case; "unknown" for a
    /// type it does not know or a key or marker that does not parse.
    pub fn name(self) -> &'static str {
        match self {
            Control::Marker(m) if m.commit => "commit",
            Control::Marker(_) => "abort",
            Control::Other(2) => "leader_change",
            Control::Other(3) => "snapshot_header",
            Control::Other(4) => "snapshot_footer",
            Control::Other(5) => "kraft_version",
            Control::Other(6) => "kraft_voters",
            Control::Other(_) => "unknown",
        }
    }
}

/// What decoding a log buffer yielded, and where it stopped.
#[derive(Debug)]
pub struct DecodedLog {
    pub records: Vec<OffsetsRecord>,
    pub valid_bytes: usize,
    pub error: Option<Error>,
}

/// What a record holds: a transaction marker (control batches) or a key and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload<'a> {
    Control(Control),
    Data {
        key: KeyRef<'a>,
        value: Option<ValueRef<'a>>,
    },
}

/// Decodes one record of a batch, borrowing from it. Errors name the batch's position and
/// the record's offset.
#[inline(always)]
pub fn decode_payload<'a>(batch: &BatchInfo, record: &RecordRef<'a>) -> Result<Payload<'a>> {
    if batch.is_control {
        let control = match control_marker(record.key, record.value) {
            Some(marker) => Control::Marker(marker),
            None => Control::Other(record.key.and_then(control_record_type).unwrap_or(-1)),
        };
        return Ok(Payload::Control(control));
    }
    let key_bytes = record.key.ok_or_else(|| Error::Corrupt {
        position: batch.position,
        reason: format!("record at offset {} has a null key", record.offset),
    })?;
    let key = decode_key_ref(key_bytes, 0).map_err(|e| in_record(batch, record, "key", e))?;
    let value = decode_value_ref(key.value_kind(), record.value, 0)
        .map_err(|e| in_record(batch, record, "value", e))?;
    Ok(Payload::Data { key, value })
}

/// An error met at a byte of a record's key or value (`part`), reported at the batch's
/// position with the record's offset and where in its key or value.
#[cold]
fn in_record(batch: &BatchInfo, record: &RecordRef<'_>, part: &str, error: Error) -> Error {
    Error::Corrupt {
        position: batch.position,
        reason: format!(
            "record at offset {}: {}",
            record.offset,
            error.within(&format!("its {part}"), 0)
        ),
    }
}

/// Decodes every record of `data` (whose first byte is at absolute `position`). Stops at the
/// first corrupt batch or record and reports it in [`DecodedLog::error`]; the records of the
/// batches before it are returned.
pub fn decode_log(data: &[u8], position: usize, partition: i32) -> DecodedLog {
    let mut records = Vec::new();
    let walk = LogReader::new(data, position).walk(CHUNK_BYTES, |batch, batch_records| {
        let before = records.len();
        let decoded = batch_records.into_iter().try_for_each(|record| {
            let record = record?;
            let (control, key, value) = match decode_payload(batch, &record)? {
                Payload::Control(control) => (Some(control), None, None),
                Payload::Data { key, value } => {
                    (None, Some(key.to_owned()), value.map(|v| v.to_owned()))
                }
            };
            records.push(OffsetsRecord {
                partition,
                offset: record.offset,
                timestamp: record.timestamp,
                batch_position: batch.position,
                producer_id: batch.producer_id,
                producer_epoch: batch.producer_epoch,
                is_transactional: batch.is_transactional,
                control,
                key,
                value,
            });
            Ok(())
        });
        if decoded.is_err() {
            records.truncate(before);
        }
        decoded
    });
    DecodedLog {
        records,
        valid_bytes: walk.valid_bytes,
        error: walk.error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::batch::{write_batch, BatchHeader};
    use crate::codec::records::{encode_key, GroupMetadataKey};
    use crate::testing::hex;

    /// A record whose value does not decode: the error is at its batch, and says which record
    /// and where in its value.
    #[test]
    fn a_value_that_does_not_decode_is_named_by_record_and_byte() {
        let key = encode_key(&Key::GroupMetadata(GroupMetadataKey { group: "g".into() })).unwrap();
        // GroupMetadataValue v3: a protocol type of 16 bytes with 3 there.
        let value = hex("0003 0010 616263");
        let batch = write_batch(
            &BatchHeader::plain(7, 1000),
            &[(Some(key.as_slice()), Some(value.as_slice()))],
        )
        .unwrap();
        let error = decode_log(&batch, 500, 0).error.expect("an error");
        assert_eq!(error.position(), Some(500));
        let text = error.to_string();
        assert!(
            text.contains("record at offset 7: its value ends early")
                && text.contains("at byte 4 needs 16 bytes, 3 left"),
            "{text}"
        );
    }

    /// A constructed segment: commit, tombstone, transactional commit, COMMIT marker.
    #[test]
    fn four_batch_segment() {
        let segment = hex(
            "0000000000000000000000790000000002e0bab9c80000000000000000018579\
             eff58c0000018579eff58cffffffffffffffffffff00000000000000018c0100\
             0000500001001b6b61666b6573632d646576636c75737465722d67726f75702d\
             6964000374303100000000300003000000000000006affffffff000000000185\
             79eff58c00\
             00000000000000010000006000000000022dd69bc50000000000000000018579\
             eff9740000018579eff974ffffffffffffffffffff00000000000000015c0000\
             00500001001b6b61666b6573632d646576636c75737465722d67726f75702d69\
             640003743031000000000100\
             00000000000000020000007900000000027d7aca800010000000000000018579\
             effd5c0000018579effd5c0000000000000fa0000000000000000000018c0100\
             0000500001001b6b61666b6573632d646576636c75737465722d67726f75702d\
             696400037430310000000030000300000000000000c8ffffffff000000000185\
             79effd5c00\
             0000000000000003000000420000000002bcdd34690030000000000000018579\
             efff500000018579efff500000000000000fa00000ffffffff00000001200000\
             0008000000010c00000000000500",
        );
        assert_eq!(segment.len(), 452);
        let log = decode_log(&segment, 0, 7);
        assert!(log.error.is_none(), "{:?}", log.error);
        assert_eq!(log.valid_bytes, 452);
        let r = &log.records;
        assert_eq!(r.len(), 4);
        assert!(r[0].value.is_some() && r[1].value.is_none());
        assert!(r[2].is_transactional && r[2].producer_id == 4000);
        assert_eq!(
            r[3].control,
            Some(Control::Marker(ControlMarker {
                commit: true,
                coordinator_epoch: 5
            }))
        );
        assert!(r.iter().all(|x| x.partition == 7));
        assert_eq!(
            r.iter().map(|x| x.offset).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
    }
}
