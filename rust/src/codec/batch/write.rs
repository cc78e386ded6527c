//! Writing magic-2 batches: appends as the coordinator writes them, and batches whose records
//! keep their own offsets and timestamps (merged appends, what the log cleaner retains).

use crate::codec::batch::header::{
    crc32c, ATTRIBUTES_OFFSET, CONTROL_BIT, CRC_OFFSET, DELETE_HORIZON_BIT, RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_BIT,
};
use crate::codec::compression::Compression;
use crate::codec::primitives::Writer;
use crate::codec::record_batch::LOG_OVERHEAD;
use crate::error::{Error, Result};

/// What a batch's header says, for [`write_batch`].
#[derive(Clone, Copy, Debug)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub timestamp: i64,
    pub compression: Compression,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub is_transactional: bool,
    pub is_control: bool,
    pub partition_leader_epoch: i32,
}

impl BatchHeader {
    /// A plain append, as the coordinator writes one: CreateTime, no producer, base sequence
    /// 0, leader epoch 0 (this node leads every partition it owns from epoch 0).
    pub fn plain(base_offset: i64, timestamp: i64) -> Self {
        BatchHeader {
            base_offset,
            timestamp,
            compression: Compression::None,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: 0,
            is_transactional: false,
            is_control: false,
            partition_leader_epoch: 0,
        }
    }
}

/// Encodes one magic-2 batch of `records` (key, value), all stamped with the header's
/// timestamp, offsets `base_offset..base_offset + n`.
pub fn write_batch(
    header: &BatchHeader,
    records: &[(Option<&[u8]>, Option<&[u8]>)],
) -> Result<Vec<u8>> {
    if records.is_empty() {
        return Err(Error::InvalidArgument(
            "a batch needs at least one record".into(),
        ));
    }
    let last_offset = i64::try_from(records.len() - 1)
        .ok()
        .and_then(|delta| header.base_offset.checked_add(delta))
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{} records from base offset {} run past the largest offset, 2^63-1",
                records.len(),
                header.base_offset
            ))
        })?;
    let records: Vec<RecordToWrite<'_>> = records
        .iter()
        .zip(header.base_offset..=last_offset)
        .map(|(&(key, value), offset)| RecordToWrite {
            offset,
            timestamp: header.timestamp,
            key,
            value,
            headers: &[],
        })
        .collect();
    write_records(header, last_offset, None, &records)
}

/// A record to write at its own offset and timestamp, for [`write_records`].
#[derive(Clone, Copy, Debug)]
pub struct RecordToWrite<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub headers: &'a [(String, Option<Vec<u8>>)],
}

/// Encodes one magic-2 batch whose records keep their own offsets and timestamps: several
/// appends merged into one batch, or what the log cleaner retains of a batch (Kafka's
/// `buildRetainedRecordsInto`).
///
/// The batch spans `header.base_offset..=last_offset` whatever records remain, so a cleaned
/// batch keeps its offsets. Offsets must increase within that span. The base timestamp is the
/// first record's, or `delete_horizon_ms` when given (attribute bit 6; record timestamps are
/// then written relative to it). With no records the batch is empty, as the cleaner leaves a
/// batch whose records all went, with both timestamps `header.timestamp`.
pub fn write_records(
    header: &BatchHeader,
    last_offset: i64,
    delete_horizon_ms: Option<i64>,
    records: &[RecordToWrite<'_>],
) -> Result<Vec<u8>> {
    let invalid = |what: String| Error::InvalidArgument(what);
    let base_offset = header.base_offset;
    let mut previous = None;
    for r in records {
        let wrong = if r.offset < base_offset {
            format!("is before base offset {base_offset}")
        } else if let Some(p) = previous.filter(|p| r.offset <= *p) {
            format!("follows offset {p}: offsets must increase")
        } else if r.offset > last_offset {
            format!("is past last offset {last_offset}")
        } else {
            previous = Some(r.offset);
            continue;
        };
        return Err(invalid(format!("record offset {} {wrong}", r.offset)));
    }
    if last_offset < base_offset {
        return Err(invalid(format!(
            "last offset {last_offset} is before base offset {base_offset}"
        )));
    }
    let last_offset_delta = last_offset
        .checked_sub(base_offset)
        .and_then(|delta| i32::try_from(delta).ok())
        .ok_or_else(|| {
            invalid(format!(
                "last offset {last_offset} is more than 2^31-1 after base offset {base_offset}"
            ))
        })?;
    let count = i32::try_from(records.len())
        .map_err(|_| invalid("too many records for one batch".into()))?;
    let base_timestamp = delete_horizon_ms
        .or(records.first().map(|r| r.timestamp))
        .unwrap_or(header.timestamp);
    let max_timestamp = records
        .iter()
        .map(|r| r.timestamp)
        .max()
        .unwrap_or(header.timestamp);
    let mut body = Vec::new();
    let mut record = Vec::new();
    for r in records {
        record.clear();
        record.put_i8(0);
        record.put_varlong(r.timestamp.wrapping_sub(base_timestamp));
        record.put_varint((r.offset - base_offset) as i32);
        put_varint_bytes(&mut record, r.key)?;
        put_varint_bytes(&mut record, r.value)?;
        record.put_varint(
            i32::try_from(r.headers.len()).map_err(|_| invalid("too many headers".into()))?,
        );
        for (name, value) in r.headers {
            put_varint_bytes(&mut record, Some(name.as_bytes()))?;
            put_varint_bytes(&mut record, value.as_deref())?;
        }
        body.put_varint(
            i32::try_from(record.len()).map_err(|_| invalid("record too large".into()))?,
        );
        body.extend_from_slice(&record);
    }
    let compression = if records.is_empty() {
        Compression::None
    } else {
        header.compression
    };
    let body = compression.compress(&body);
    let mut attributes = i16::from(compression.id());
    if header.is_transactional {
        attributes |= TRANSACTIONAL_BIT;
    }
    if header.is_control {
        attributes |= CONTROL_BIT;
    }
    if delete_horizon_ms.is_some() {
        attributes |= DELETE_HORIZON_BIT;
    }
    let length = i32::try_from(RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + body.len())
        .map_err(|_| invalid("batch larger than 2 GiB".into()))?;
    let mut out = Vec::with_capacity(RECORD_BATCH_OVERHEAD + body.len());
    out.put_i64(header.base_offset);
    out.put_i32(length);
    out.put_i32(header.partition_leader_epoch);
    out.put_i8(2);
    out.put_u32(0);
    out.put_i16(attributes);
    out.put_i32(last_offset_delta);
    out.put_i64(base_timestamp);
    out.put_i64(max_timestamp);
    out.put_i64(header.producer_id);
    out.put_i16(header.producer_epoch);
    out.put_i32(header.base_sequence);
    out.put_i32(count);
    out.extend_from_slice(&body);
    let crc = crc32c(&out[ATTRIBUTES_OFFSET..]);
    out[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(out)
}

fn put_varint_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) -> Result<()> {
    match bytes {
        None => out.put_varint(-1),
        Some(b) => {
            out.put_varint(
                i32::try_from(b.len())
                    .map_err(|_| Error::InvalidArgument("key or value too large".into()))?,
            );
            out.extend_from_slice(b);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::batch::walk::{read_batches, valid_prefix_length};
    use crate::codec::record_batch::Record;

    #[test]
    fn write_then_read_every_compression() {
        for c in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let header = BatchHeader {
                compression: c,
                ..BatchHeader::plain(100, 1_700_000_000_000)
            };
            let recs: Vec<(Option<&[u8]>, Option<&[u8]>)> =
                vec![(Some(b"k1"), Some(b"v1")), (Some(b"k2"), None)];
            let bytes = write_batch(&header, &recs).unwrap();
            let parsed = read_batches(&bytes, 0);
            assert!(parsed.error.is_none(), "{c:?}: {:?}", parsed.error);
            let b = &parsed.batches[0];
            assert_eq!(
                (
                    b.info.base_offset,
                    b.info.last_offset,
                    b.info.compression,
                    b.info.size
                ),
                (100, 101, c, bytes.len())
            );
            assert_eq!(
                (
                    b.info.producer_id,
                    b.info.producer_epoch,
                    b.info.base_sequence,
                    b.info.partition_leader_epoch
                ),
                (-1, -1, 0, 0)
            );
            assert_eq!(
                b.records[1],
                Record {
                    offset: 101,
                    timestamp: 1_700_000_000_000,
                    key: Some(b"k2".to_vec()),
                    value: None,
                    headers: vec![]
                }
            );
        }
    }

    #[test]
    fn written_records_keep_their_offsets_timestamps_and_delete_horizon() {
        let header = BatchHeader {
            producer_id: 9,
            producer_epoch: 1,
            is_transactional: true,
            ..BatchHeader::plain(100, 0)
        };
        let hdrs = vec![("h".to_owned(), Some(b"v".to_vec()))];
        let records = [
            RecordToWrite {
                offset: 101,
                timestamp: 5_000,
                key: Some(b"a"),
                value: None,
                headers: &[],
            },
            RecordToWrite {
                offset: 104,
                timestamp: 4_000,
                key: Some(b"b"),
                value: Some(b"2"),
                headers: &hdrs,
            },
        ];
        for horizon in [None, Some(90_000)] {
            let bytes = write_records(&header, 107, horizon, &records).unwrap();
            let parsed = read_batches(&bytes, 0);
            assert!(parsed.error.is_none(), "{:?}", parsed.error);
            let b = &parsed.batches[0];
            assert_eq!(
                (b.base_offset, b.last_offset, b.has_delete_horizon),
                (100, 107, horizon.is_some())
            );
            assert_eq!(
                (b.base_timestamp, b.max_timestamp),
                (horizon.unwrap_or(5_000), 5_000)
            );
            assert_eq!((b.producer_id, b.is_transactional), (9, true));
            let got: Vec<_> = b
                .records
                .iter()
                .map(|r| (r.offset, r.timestamp, r.key.clone(), r.value.clone()))
                .collect();
            assert_eq!(
                got,
                vec![
                    (101, 5_000, Some(b"a".to_vec()), None),
                    (104, 4_000, Some(b"b".to_vec()), Some(b"2".to_vec()))
                ]
            );
            assert_eq!(b.records[1].headers, hdrs);
        }
        let empty = write_records(&BatchHeader::plain(7, 123), 9, None, &[]).unwrap();
        let b = &read_batches(&empty, 0).batches[0];
        assert_eq!(
            (
                b.base_offset,
                b.last_offset,
                b.records.len(),
                b.max_timestamp
            ),
            (7, 9, 0, 123)
        );
        let refused = |last_offset: i64, records: &[RecordToWrite<'_>]| match write_records(
            &header,
            last_offset,
            None,
            records,
        ) {
            Err(Error::InvalidArgument(why)) => why,
            other => panic!("{other:?}"),
        };
        let out_of_order = [records[1], records[0]];
        assert_eq!(
            refused(107, &out_of_order),
            "record offset 101 follows offset 104: offsets must increase"
        );
        assert_eq!(
            refused(103, &records),
            "record offset 104 is past last offset 103"
        );
        let below = [RecordToWrite {
            offset: 99,
            ..records[0]
        }];
        assert_eq!(
            refused(99, &below),
            "record offset 99 is before base offset 100"
        );
        assert_eq!(refused(99, &[]), "last offset 99 is before base offset 100");
        assert_eq!(
            refused(100 + (1 << 31), &[]),
            "last offset 2147483748 is more than 2^31-1 after base offset 100"
        );
    }

    #[test]
    fn a_batch_may_end_at_the_largest_offset_but_not_past_it() {
        let records = [(Some(&b"k"[..]), Some(&b"v"[..])); 2];
        let batch = write_batch(&BatchHeader::plain(i64::MAX - 1, 1), &records).unwrap();
        let parsed = read_batches(&batch, 0);
        let offsets: Vec<i64> = parsed.batches[0].records.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, [i64::MAX - 1, i64::MAX]);
        let error = write_batch(&BatchHeader::plain(i64::MAX, 1), &records).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("invalid argument: 2 records from base offset {} run past the largest offset, 2^63-1", i64::MAX)
        );
    }

    #[test]
    fn a_header_key_that_is_not_utf8_reads_as_kafka_reads_it() {
        let headers = [("~".to_string(), Some(b"v".to_vec()))];
        let record = RecordToWrite {
            offset: 0,
            timestamp: 1,
            key: Some(b"k"),
            value: Some(b"v"),
            headers: &headers,
        };
        let mut batch = write_records(&BatchHeader::plain(0, 1), 0, None, &[record]).unwrap();
        let at = batch.iter().rposition(|&b| b == b'~').unwrap();
        batch[at] = 0xff;
        let crc = crc32c(&batch[ATTRIBUTES_OFFSET..]);
        batch[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());

        assert_eq!(valid_prefix_length(&batch), batch.len());
        let parsed = read_batches(&batch, 0);
        assert!(parsed.error.is_none());
        let headers = &parsed.batches[0].records[0].headers;
        assert_eq!(headers, &[("\u{fffd}".to_string(), Some(b"v".to_vec()))]);
    }
}
