//! Every check of a produced batch with its Kafka error, batches of every compression written
//! by the crate's own writer, and offsets assigned in place.

use super::*;
use crate::codec::batch::{read_batches, write_batch, write_records, BatchHeader, RecordToWrite};

type KeyValue<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

const NOW: i64 = 1_700_000_000_000;
const HOUR: i64 = 3_600_000;

const COMPRESSIONS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn limits() -> ProduceLimits {
    ProduceLimits {
        max_message_bytes: 1 << 20,
        require_keys: false,
        log_append_time: false,
        now_ms: NOW,
        before_max_ms: i64::MAX,
        after_max_ms: HOUR,
        allow_zstd: true,
    }
}

fn header(compression: Compression) -> BatchHeader {
    BatchHeader {
        compression,
        ..BatchHeader::plain(0, NOW)
    }
}

/// Records at offsets 0.. with the given timestamps and keys.
fn batch_of(header: &BatchHeader, records: &[(i64, Option<&[u8]>)]) -> Vec<u8> {
    let records: Vec<RecordToWrite<'_>> = (0..)
        .zip(records)
        .map(|(offset, &(timestamp, key))| RecordToWrite {
            offset,
            timestamp,
            key,
            value: Some(b"value"),
            headers: &[],
        })
        .collect();
    write_records(header, records.len() as i64 - 1, None, &records).unwrap()
}

fn three_records(compression: Compression) -> Vec<u8> {
    let recs: [KeyValue<'_>; 3] = [
        (Some(b"a"), Some(b"1")),
        (Some(b"b"), None),
        (None, Some(b"3")),
    ];
    write_batch(&header(compression), &recs).unwrap()
}

/// The batch's length and CRC made right again after an edit.
fn resealed(mut batch: Vec<u8>) -> Vec<u8> {
    let length = (batch.len() - LOG_OVERHEAD) as i32;
    batch[LENGTH_OFFSET..LOG_OVERHEAD].copy_from_slice(&length.to_be_bytes());
    let crc = crc32c(&batch[ATTRIBUTES_OFFSET..]);
    batch[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
    batch
}

fn patched(mut batch: Vec<u8>, at: usize, bytes: &[u8]) -> Vec<u8> {
    batch[at..at + bytes.len()].copy_from_slice(bytes);
    resealed(batch)
}

/// The error code of validating `data` with the default limits.
fn code(data: &[u8]) -> i16 {
    code_with(data, &limits())
}

fn code_with(data: &[u8], limits: &ProduceLimits) -> i16 {
    match validate_produce(data, limits) {
        Ok(batch) => panic!("accepted: {batch:?}"),
        Err(e) => e.code,
    }
}

#[test]
fn batches_of_every_compression_pass() {
    for compression in COMPRESSIONS {
        let data = three_records(compression);
        let batch = validate_produce(&data, &limits()).unwrap();
        assert_eq!(
            batch,
            ProduceBatch {
                size: data.len(),
                record_count: 3,
                last_offset_delta: 2,
                first_timestamp: NOW,
                max_timestamp: NOW,
                offset_of_max_timestamp_delta: 0,
                producer_id: -1,
                producer_epoch: -1,
                base_sequence: 0,
                last_sequence: 2,
                is_transactional: false,
                compression,
            }
        );
    }
}

#[test]
fn idempotent_and_transactional_fields_are_reported() {
    let header = BatchHeader {
        producer_id: 42,
        producer_epoch: 3,
        base_sequence: i32::MAX - 1,
        is_transactional: true,
        ..header(Compression::Lz4)
    };
    let data = batch_of(&header, &[(NOW, None), (NOW, None), (NOW, None)]);
    let batch = validate_produce(&data, &limits()).unwrap();
    assert_eq!(
        (
            batch.producer_id,
            batch.producer_epoch,
            batch.base_sequence,
            batch.last_sequence,
            batch.is_transactional
        ),
        (42, 3, i32::MAX - 1, 0, true)
    );
}

#[test]
fn last_sequence_wraps_as_kafka_increments_it() {
    assert_eq!(last_sequence(-1, 5), -1);
    assert_eq!(last_sequence(10, 5), 15);
    assert_eq!(last_sequence(i32::MAX, 0), i32::MAX);
    assert_eq!(last_sequence(i32::MAX, 1), 0);
    assert_eq!(last_sequence(i32::MAX - 2, 4), 1);
}

#[test]
fn max_timestamp_is_the_first_largest_record_timestamp() {
    for compression in COMPRESSIONS {
        let data = batch_of(
            &header(compression),
            &[
                (NOW - 5, None),
                (NOW + 7, None),
                (NOW, None),
                (NOW + 7, None),
            ],
        );
        let batch = validate_produce(&data, &limits()).unwrap();
        assert_eq!(
            (batch.max_timestamp, batch.offset_of_max_timestamp_delta),
            (NOW + 7, 1)
        );
        assert_eq!(batch.first_timestamp, NOW - 5);
        let lat = ProduceLimits {
            log_append_time: true,
            ..limits()
        };
        let batch = validate_produce(&data, &lat).unwrap();
        let expected_at = if compression == Compression::None {
            3
        } else {
            0
        };
        assert_eq!(
            (batch.max_timestamp, batch.offset_of_max_timestamp_delta),
            (NOW, expected_at)
        );
    }
    // No timestamp above -1: none, as Kafka starts from NO_TIMESTAMP.
    let data = batch_of(&header(Compression::None), &[(-1, None), (-1, None)]);
    let batch = validate_produce(&data, &limits()).unwrap();
    assert_eq!(
        (batch.max_timestamp, batch.offset_of_max_timestamp_delta),
        (-1, -1)
    );
}

#[test]
fn framing_errors_are_kafkas() {
    let data = three_records(Compression::None);
    assert_eq!(code(&[]), INVALID_RECORD);
    assert_eq!(code(&data[..11]), INVALID_RECORD);
    // A batch cut short is no batch at all to Kafka's batch iterator.
    assert_eq!(code(&data[..data.len() - 1]), INVALID_RECORD);
    let mut short = data.clone();
    short[LENGTH_OFFSET..LOG_OVERHEAD].copy_from_slice(&13i32.to_be_bytes());
    assert_eq!(code(&short), CORRUPT_MESSAGE);
    for (magic, expected) in [
        (0u8, INVALID_RECORD),
        (1, INVALID_RECORD),
        (3, CORRUPT_MESSAGE),
        (0xff, CORRUPT_MESSAGE),
    ] {
        let mut other = data.clone();
        other[MAGIC_OFFSET] = magic;
        assert_eq!(code(&other), expected, "magic {magic}");
    }
}

#[test]
fn one_batch_and_nothing_after_it() {
    let data = three_records(Compression::None);
    let two = [data.clone(), data.clone()].concat();
    let err = validate_produce(&two, &limits()).unwrap_err();
    assert_eq!(err.code, INVALID_RECORD);
    assert!(err.message.contains("exactly one record batch"), "{err}");
    let trailing = [data.clone(), vec![0; 5]].concat();
    assert_eq!(code(&trailing), INVALID_RECORD);
    // Bytes after the batch whose length is impossible: Kafka's iterator calls them corrupt.
    let mut garbage = [data.clone(), vec![0; 12]].concat();
    garbage[data.len() + LENGTH_OFFSET..].copy_from_slice(&3i32.to_be_bytes());
    assert_eq!(code(&garbage), CORRUPT_MESSAGE);
}

#[test]
fn zstd_needs_produce_v7() {
    let old = ProduceLimits {
        allow_zstd: false,
        ..limits()
    };
    assert_eq!(
        code_with(&three_records(Compression::Zstd), &old),
        UNSUPPORTED_COMPRESSION_TYPE
    );
    assert!(validate_produce(&three_records(Compression::Lz4), &old).is_ok());
}

#[test]
fn header_checks_come_in_kafkas_order() {
    let data = three_records(Compression::None);
    // The base offset is checked before the size and the CRC.
    let mut moved = data.clone();
    moved[7] = 5;
    assert_eq!(code(&moved), INVALID_RECORD);
    let small = ProduceLimits {
        max_message_bytes: data.len() as i64 - 1,
        ..limits()
    };
    let mut damaged = data.clone();
    damaged[ATTRIBUTES_OFFSET + 5] ^= 1;
    assert_eq!(code_with(&damaged, &small), MESSAGE_TOO_LARGE);
    let exact = ProduceLimits {
        max_message_bytes: data.len() as i64,
        ..limits()
    };
    assert!(validate_produce(&data, &exact).is_ok());
    let err = validate_produce(&damaged, &limits()).unwrap_err();
    assert_eq!(err.code, CORRUPT_MESSAGE);
    assert!(
        err.message.starts_with("Record is corrupt (stored crc = "),
        "{err}"
    );
    // A batch shorter than its header fails as a batch whose CRC does not match.
    assert_eq!(code(&resealed(data[..40].to_vec())), CORRUPT_MESSAGE);
}

#[test]
fn unknown_compression_ids_are_kafkas_unknown_server_error() {
    let data = three_records(Compression::None);
    for id in 5..=7u8 {
        let data = patched(data.clone(), ATTRIBUTES_OFFSET + 1, &[id]);
        assert_eq!(code(&data), UNKNOWN_SERVER_ERROR);
        let old = ProduceLimits {
            allow_zstd: false,
            ..limits()
        };
        assert_eq!(code_with(&data, &old), UNKNOWN_SERVER_ERROR);
    }
}

#[test]
fn validate_batch_checks() {
    let data = three_records(Compression::Gzip);
    let cases: [(&str, usize, Vec<u8>); 5] = [
        (
            "negative offset range",
            LAST_OFFSET_DELTA_OFFSET,
            (-1i32).to_be_bytes().to_vec(),
        ),
        ("count 0", RECORDS_COUNT_OFFSET, 0i32.to_be_bytes().to_vec()),
        (
            "count differs from offsets",
            RECORDS_COUNT_OFFSET,
            2i32.to_be_bytes().to_vec(),
        ),
        (
            "control batch",
            ATTRIBUTES_OFFSET + 1,
            vec![1 | CONTROL_BIT as u8],
        ),
        (
            "producer id without sequence",
            PRODUCER_ID_OFFSET,
            7i64.to_be_bytes().to_vec(),
        ),
    ];
    for (what, at, bytes) in cases {
        let mut data = patched(data.clone(), at, &bytes);
        if what == "producer id without sequence" {
            data = patched(data, BASE_SEQUENCE_OFFSET, &(-1i32).to_be_bytes());
        }
        let err = validate_produce(&data, &limits()).unwrap_err();
        assert_eq!((what, err.code), (what, INVALID_RECORD), "{err}");
        assert!(err.record_errors.is_empty());
    }
    // Without a producer id, no sequence is needed.
    let data = patched(data, BASE_SEQUENCE_OFFSET, &(-1i32).to_be_bytes());
    assert!(validate_produce(&data, &limits()).is_ok());
}

#[test]
fn records_that_do_not_decompress_are_kafkas_unknown_server_error() {
    for compression in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut data = three_records(compression);
        let n = data.len();
        data[n - 3] ^= 0x5a;
        data.truncate(n - 1);
        let err = validate_produce(&resealed(data), &limits()).unwrap_err();
        assert_eq!(err.code, UNKNOWN_SERVER_ERROR, "{compression:?}: {err}");
        assert!(err
            .message
            .starts_with("Failed to decompress record stream"));
    }
}

#[test]
fn records_framed_wrong_are_invalid() {
    for compression in COMPRESSIONS {
        let data = three_records(compression);
        let body = compression
            .decompress(&data[RECORD_BATCH_OVERHEAD..], 0)
            .unwrap();
        let reframe = |body: &[u8]| {
            let mut out = data[..RECORD_BATCH_OVERHEAD].to_vec();
            out.extend(compression.compress(body));
            resealed(out)
        };
        // Fewer records than the count says, bytes after the last, a record length that is wrong.
        let mut longer = body.clone();
        longer.push(0);
        let mut bad_length = body.clone();
        bad_length[0] += 2;
        for (what, body) in [
            ("short", body[..body.len() - 2].to_vec()),
            ("long", longer),
            ("length", bad_length),
        ] {
            let err = validate_produce(&reframe(&body), &limits()).unwrap_err();
            assert_eq!(
                (what, err.code),
                (what, INVALID_RECORD),
                "{compression:?}: {err}"
            );
        }
    }
}

#[test]
fn offset_deltas_must_count_from_zero() {
    let records: Vec<RecordToWrite<'_>> = [0, 2, 3]
        .into_iter()
        .map(|offset| RecordToWrite {
            offset,
            timestamp: NOW,
            key: None,
            value: None,
            headers: &[],
        })
        .collect();
    for compression in COMPRESSIONS {
        let data = write_records(&header(compression), 3, None, &records).unwrap();
        let data = patched(data, LAST_OFFSET_DELTA_OFFSET, &2i32.to_be_bytes());
        assert_eq!(code(&data), INVALID_RECORD, "{compression:?}");
    }
}

#[test]
fn compacted_topics_need_keys() {
    let compacted = ProduceLimits {
        require_keys: true,
        ..limits()
    };
    for compression in COMPRESSIONS {
        let data = three_records(compression);
        let err = validate_produce(&data, &compacted).unwrap_err();
        assert_eq!(err.code, INVALID_RECORD);
        assert_eq!(
            err.record_errors,
            vec![(
                2,
                "Compacted topic cannot accept message without key".to_owned()
            )]
        );
        assert_eq!(
            err.message,
            "One or more records have been rejected due to 1 record errors in total, and only \
             showing the first three errors at most: [RecordError(batchIndex=2, \
             message='Compacted topic cannot accept message without key')]"
        );
    }
}

#[test]
fn the_message_shows_three_record_errors_at_most() {
    let compacted = ProduceLimits {
        require_keys: true,
        ..limits()
    };
    let data = batch_of(&header(Compression::None), &[(NOW, None); 5]);
    let err = validate_produce(&data, &compacted).unwrap_err();
    assert_eq!(err.record_errors.len(), 5);
    assert_eq!(err.message.matches("RecordError(").count(), 3);
    assert!(err.message.contains("due to 5 record errors"));
}

#[test]
fn create_time_must_lie_in_the_window() {
    let window = ProduceLimits {
        before_max_ms: HOUR,
        ..limits()
    };
    let data = batch_of(
        &header(Compression::Snappy),
        &[
            (NOW, None),
            (NOW + HOUR + 1, None),
            (NOW - HOUR, None),
            (-1, None),
            (NOW - HOUR - 1, None),
        ],
    );
    let err = validate_produce(&data, &window).unwrap_err();
    assert_eq!(err.code, INVALID_TIMESTAMP);
    assert_eq!(
        err.message,
        "One or more records have been rejected due to invalid timestamp"
    );
    let indexes: Vec<i32> = err.record_errors.iter().map(|(i, _)| *i).collect();
    assert_eq!(indexes, [1, 4]);
    assert_eq!(
        err.record_errors[0].1,
        format!(
            "Timestamp {} of message with offset 1 is out of range. The timestamp should be \
             within [{}, {}]",
            NOW + HOUR + 1,
            NOW - HOUR,
            NOW + HOUR
        )
    );
    // Kafka 4's defaults take any past timestamp.
    let data = batch_of(&header(Compression::None), &[(0, None), (NOW + HOUR, None)]);
    assert!(validate_produce(&data, &limits()).is_ok());
}

#[test]
fn a_timestamp_error_makes_the_whole_refusal_invalid_timestamp() {
    let strict = ProduceLimits {
        require_keys: true,
        ..limits()
    };
    let data = batch_of(
        &header(Compression::None),
        &[(NOW, None), (NOW + 2 * HOUR, Some(b"k"))],
    );
    let err = validate_produce(&data, &strict).unwrap_err();
    assert_eq!(err.code, INVALID_TIMESTAMP);
    assert_eq!(err.record_errors.len(), 2);
}

#[test]
fn producers_may_not_set_log_append_time() {
    let data = three_records(Compression::None);
    let attributes = [0, TIMESTAMP_TYPE_BIT as u8];
    let lat_batch = patched(data.clone(), ATTRIBUTES_OFFSET, &attributes);
    // On a LogAppendTime topic: every record is at fault.
    let lat = ProduceLimits {
        log_append_time: true,
        ..limits()
    };
    let err = validate_produce(&lat_batch, &lat).unwrap_err();
    assert_eq!(err.code, INVALID_TIMESTAMP);
    assert_eq!(err.record_errors.len(), 3);
    assert!(err.record_errors[0].1.starts_with(
        "Invalid timestamp type in message DefaultRecord(offset=0, timestamp=1700000000000, \
         key=1 bytes, value=1 bytes)"
    ));
    // On a CreateTime topic the records read the header's max timestamp, checked as any.
    assert!(validate_produce(&lat_batch, &limits()).is_ok());
    let no_max = patched(lat_batch, MAX_TIMESTAMP_OFFSET, &(-1i64).to_be_bytes());
    assert_eq!(code(&no_max), INVALID_TIMESTAMP);
}

#[test]
fn assign_offsets_in_place() {
    for compression in COMPRESSIONS {
        let data = three_records(compression);
        let mut create = data.clone();
        assign_offsets(&mut create, 1000, 7, None);
        assert_eq!(
            create[CRC_OFFSET..],
            data[CRC_OFFSET..],
            "the CRC covers none of it"
        );
        let parsed = read_batches(&create, 0);
        assert!(parsed.error.is_none());
        let b = &parsed.batches[0];
        assert_eq!(
            (b.base_offset, b.last_offset, b.partition_leader_epoch),
            (1000, 1002, 7)
        );
        let offsets: Vec<i64> = b.records.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, [1000, 1001, 1002]);

        let mut appended = data.clone();
        assign_offsets(&mut appended, 5, 1, Some(NOW + 9));
        let parsed = read_batches(&appended, 0);
        assert!(parsed.error.is_none(), "CRC recomputed: {:?}", parsed.error);
        let b = &parsed.batches[0];
        assert!(b.log_append_time);
        assert_eq!((b.base_timestamp, b.max_timestamp), (NOW, NOW + 9));
        assert!(b.records.iter().all(|r| r.timestamp == NOW + 9));
        assert_eq!(b.compression, compression);
    }
    let mut short = vec![1u8; 20];
    assign_offsets(&mut short, 5, 1, Some(NOW));
    assert_eq!(short, vec![1u8; 20]);
}
