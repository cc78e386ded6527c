//! The JSON writer against what Python's `json.dumps(..., separators=(",", ":"))` writes
//! (the expected texts are its output), and `dump-log`'s lines of a small log.

use super::lines::{batch_lines, record_lines};
use super::*;
use crate::codec::batch::{
    write_batch, write_control_batch, BatchHeader, ControlMarker, LogReader, CHUNK_BYTES,
};
use crate::codec::compression::Compression;
use crate::codec::records::{encode_key, encode_value, GroupMetadataKey, Key, OffsetCommitKey};
use crate::codec::records::{OffsetCommitValue, Value};
use crate::error::Error;

fn json<T: Json + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    value.write_json(&mut out);
    String::from_utf8(out).expect("JSON is ASCII")
}

#[test]
fn strings_are_escaped_as_pythons_encoder_escapes_them() {
    for (text, expected) in [
        ("", r#""""#),
        ("plain", r#""plain""#),
        ("q\"b\\s/", r#""q\"b\\s/""#),
        ("\u{8}\u{c}\n\r\t", r#""\b\f\n\r\t""#),
        ("\0\u{1}\u{1f}\u{7f}", r#""\u0000\u0001\u001f\u007f""#),
        ("é\u{2028}\u{ffff}", r#""\u00e9\u2028\uffff""#),
        ("😀𝄞", r#""\ud83d\ude00\ud834\udd1e""#),
        ("aéb😀c", r#""a\u00e9b\ud83d\ude00c""#),
    ] {
        assert_eq!(json(text), expected, "{text:?}");
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut out = Vec::new();
        utf16_string(&mut out, &units);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            expected,
            "{text:?} as UTF-16"
        );
    }
}

/// The check of 8 bytes at once finds an escaped byte wherever it is in a longer string.
#[test]
fn an_escaped_byte_is_found_at_every_place() {
    for special in ['"', '\\', '\0', '\n', '\u{1f}', '\u{7f}', 'é', '😀'] {
        for at in 0..20 {
            let text: String = (0..20)
                .map(|i| if i == at { special } else { 'a' })
                .collect();
            let mut expected = String::new();
            for c in text.chars() {
                expected += &json(c.encode_utf8(&mut [0; 4]))[1..];
                expected.pop();
            }
            assert_eq!(json(text.as_str()), format!("\"{expected}\""), "{text:?}");
        }
    }
}

#[test]
fn lone_surrogates_are_escaped_as_they_are() {
    let mut out = Vec::new();
    utf16_string(&mut out, &[u16::from(b'x'), 0xdcff, 0xd83d]);
    assert_eq!(out, br#""x\udcff\ud83d""#);
}

#[test]
fn every_other_value() {
    for n in (-1000..1000).chain([i64::MIN, i64::MAX, 1 << 40, -(1 << 53) - 1]) {
        assert_eq!(json(&n), n.to_string());
    }
    assert_eq!(json(&i64::MIN), "-9223372036854775808");
    assert_eq!(json(&i64::MAX), "9223372036854775807");
    assert_eq!(json(&0i16), "0");
    assert_eq!(json(&u32::MAX), "4294967295");
    assert_eq!(json(&true), "true");
    assert_eq!(json(&None::<i32>), "null");
    assert_eq!(json(&b"foob"[..]), r#""Zm9vYg==""#);
    assert_eq!(json(&Vec::<u8>::new()), r#""""#);
    let uuid: [u8; 16] = std::array::from_fn(|i| i as u8);
    assert_eq!(json(&uuid), r#""AAECAwQFBgcICQoLDA0ODw""#);
    let pairs = vec![("t".to_owned(), vec![0, -1])];
    assert_eq!(json(&pairs), r#"[["t",[0,-1]]]"#);
    let datum = Datum::Struct(vec![
        ("a", Datum::List(vec![Datum::Int(1), Datum::Null])),
        ("b", Datum::Bytes(vec![0xfb, 0xff])),
        ("c", Datum::Struct(vec![])),
    ]);
    assert_eq!(json(&datum), r#"{"a":[1,null],"b":"+/8=","c":{}}"#);
}

/// A commit, a tombstone and a COMMIT marker, as `dump-log` prints them.
#[test]
fn record_and_batch_lines_of_a_small_log() {
    let key = encode_key(&Key::OffsetCommit(OffsetCommitKey {
        group: "g".into(),
        topic: "t".into(),
        partition: 0,
        record_type: 1,
    }))
    .unwrap();
    let value = encode_value(&Value::OffsetCommit(OffsetCommitValue {
        offset: 106,
        metadata: String::new(),
        commit_timestamp: 5,
        leader_epoch: -1,
        expire_timestamp: -1,
        version: 3,
        topic_id: None,
        unknown_tagged_fields: Vec::new(),
    }))
    .unwrap();
    let tombstone =
        encode_key(&Key::GroupMetadata(GroupMetadataKey { group: "g".into() })).unwrap();
    let mut log = write_batch(
        &BatchHeader {
            compression: Compression::Lz4,
            ..BatchHeader::plain(0, 5)
        },
        &[
            (Some(&key[..]), Some(&value[..])),
            (Some(&tombstone[..]), None),
        ],
    )
    .unwrap();
    let marker = ControlMarker {
        commit: true,
        coordinator_epoch: 5,
    };
    let first = log.len();
    log.extend(
        write_control_batch(
            &BatchHeader {
                producer_id: 9,
                producer_epoch: 0,
                ..BatchHeader::plain(2, 6)
            },
            marker,
        )
        .unwrap(),
    );
    let lines = |write: &dyn Fn(&mut Vec<u8>, &crate::codec::batch::Chunk<'_>) -> Option<Error>| {
        let mut out = Vec::new();
        let walk = LogReader::new(&log, 0).chunks(CHUNK_BYTES, |chunk, _| {
            assert!(write(&mut out, chunk).is_none());
            Ok(())
        });
        assert!(walk.error.is_none());
        String::from_utf8(out).unwrap()
    };
    let records = lines(&|out, chunk| record_lines(out, br#""f.log""#, 7, chunk));
    let head = |position: usize, offset: i64, timestamp: i64, producer: &str| {
        format!(
            r#"{{"file":"f.log","batch_position":{position},"partition":7,"offset":{offset},"timestamp":{timestamp},{producer}"#
        )
    };
    let plain = r#""producer_id":-1,"producer_epoch":-1,"is_transactional":false"#;
    assert_eq!(
        records,
        [
            head(0, 0, 5, plain)
                + r#","control":null,"record_type":1,"key":{"record_type":1,"group":"g","topic":"t","partition":0},"value":{"version":3,"offset":106,"leader_epoch":-1,"metadata":"","commit_timestamp":5,"expire_timestamp":-1}}"#,
            head(0, 1, 5, plain)
                + r#","control":null,"record_type":2,"key":{"record_type":2,"group":"g"},"value":null}"#,
            head(first, 2, 6, r#""producer_id":9,"producer_epoch":0,"is_transactional":true"#)
                + r#","control":"commit","record_type":null,"key":null,"value":null}"#,
            String::new(),
        ]
        .join("\n")
    );
    let batches = lines(&|out, chunk| batch_lines(out, br#""f.log""#, chunk));
    let last = batches.lines().last().unwrap();
    assert!(
        last.starts_with(&format!(r#"{{"file":"f.log","position":{first},"size":"#))
            && last.contains(r#""compression":"none","timestamp_type":"create""#)
            && last.ends_with(r#""delete_horizon_ms":null,"records":[{"offset":2,"timestamp":6,"key":"AAAAAQ==","value":"AAAAAAAF","headers":[]}]}"#),
        "{last}"
    );
    assert!(batches
        .lines()
        .next()
        .unwrap()
        .contains(r#""compression":"lz4""#));
}

/// A record that does not decode ends the lines at its batch: the batch's lines already
/// written are taken out again.
#[test]
fn a_corrupt_record_takes_its_batch_out() {
    let good = encode_key(&Key::GroupMetadata(GroupMetadataKey { group: "g".into() })).unwrap();
    let mut log = write_batch(&BatchHeader::plain(0, 1), &[(Some(&good[..]), None)]).unwrap();
    log.extend(
        write_batch(
            &BatchHeader::plain(1, 1),
            &[
                (Some(&good[..]), None),
                (Some(&b"\x00\x02\x00\x09g"[..]), None),
            ],
        )
        .unwrap(),
    );
    let mut out = Vec::new();
    let mut error = None;
    LogReader::new(&log, 0).chunks(CHUNK_BYTES, |chunk, _| {
        error = record_lines(&mut out, b"\"f\"", -1, chunk);
        Ok(())
    });
    let error = error
        .expect("the second batch's record is corrupt")
        .to_string();
    assert!(error.contains("record at offset 2"), "{error}");
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 1);
}
