//! The property a fuzz run checks on any input. The bounded test below runs it in CI over
//! random and mutated logs; `fuzz/` runs it under cargo-fuzz by hand. Keeping it here means a
//! change of the decoders' signatures breaks CI, not only the fuzz target.

use super::arrow::decode_arrow;
use super::batch::{
    assign_offsets, checksum_batches, decompress_batches, read_batches, validate_produce,
    ProduceLimits,
};
use super::log::decode_log;
use super::records::encode_value;

/// Panics (an assertion) unless decoding `data`, as if it started at absolute `position`:
/// - gives records or an error with a position inside the input;
/// - leaves a valid prefix that decodes with no error;
/// - into Arrow, stops at the same batch with the same error and as many rows;
///
/// and the benchmark ceilings and re-encoding the decoded values do not panic either.
pub fn check_any_input(data: &[u8], position: usize) {
    let decoded = decode_log(data, position, 0);
    if let Some(err) = &decoded.error {
        let at = err.position().expect("decode errors carry a position");
        assert!(
            (position..=position + data.len()).contains(&at),
            "position {at} outside the input"
        );
    }
    assert!(decoded.valid_bytes <= data.len());
    assert!(
        decode_log(&data[..decoded.valid_bytes], position, 0)
            .error
            .is_none(),
        "the valid prefix must decode cleanly"
    );
    let (batch, walk) = decode_arrow(data, position, 0, 1);
    assert_eq!(
        walk.valid_bytes, decoded.valid_bytes,
        "Arrow and records stop at the same batch"
    );
    assert_eq!(
        walk.error.map(|e| e.to_string()),
        decoded.error.map(|e| e.to_string())
    );
    assert_eq!(
        batch.expect("the valid prefix builds").num_rows(),
        decoded.records.len()
    );
    let _ = checksum_batches(data);
    let _ = decompress_batches(data);
    for value in decoded.records.iter().filter_map(|r| r.value.as_ref()) {
        let _ = encode_value(value);
    }
}

/// Panics (an assertion) unless validating `data` as a produced batch, under a CreateTime and
/// a LogAppendTime topic, answers without panicking, and a batch it accepts is all of `data`
/// and, its offsets assigned, reads back with as many records.
pub fn check_produce_input(data: &[u8]) {
    for log_append_time in [false, true] {
        let limits = ProduceLimits {
            max_message_bytes: 1 << 20,
            require_keys: log_append_time,
            log_append_time,
            now_ms: 1_700_000_000_000,
            before_max_ms: i64::MAX,
            after_max_ms: 3_600_000,
            allow_zstd: true,
        };
        let Ok(batch) = validate_produce(data, &limits) else {
            continue;
        };
        assert_eq!(batch.size, data.len());
        let mut assigned = data.to_vec();
        assign_offsets(
            &mut assigned,
            1 << 40,
            3,
            log_append_time.then_some(limits.now_ms),
        );
        let parsed = read_batches(&assigned, 0);
        assert!(parsed.error.is_none(), "{:?}", parsed.error);
        let records = parsed.batches[0].records.len();
        assert_eq!(records as i32, batch.record_count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::batch::{
        crc32c, first_compression, frames, write_batch, write_control_batch, BatchHeader,
        ControlMarker, ATTRIBUTES_OFFSET, CRC_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD,
    };
    use crate::codec::compression::Compression;
    use crate::codec::records::{
        encode_key, GroupMetadataKey, GroupMetadataValue, Key, MemberMetadata, OffsetCommitKey,
        OffsetCommitValue, Value,
    };
    use crate::testing::Rng;

    /// A log of every batch kind: offset commits, group metadata, tombstones, each
    /// compression, a control batch.
    fn sample_log(rng: &mut Rng) -> Vec<u8> {
        let mut log = Vec::new();
        let mut offset = 0;
        for (i, c) in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ]
        .into_iter()
        .enumerate()
        {
            let mut recs = Vec::new();
            for p in 0..(1 + rng.below(5) as i32) {
                let key = encode_key(&Key::OffsetCommit(OffsetCommitKey {
                    group: format!("g{i}"),
                    topic: "t".into(),
                    partition: p,
                    record_type: 1,
                }))
                .unwrap();
                let value = encode_value(&Value::OffsetCommit(OffsetCommitValue {
                    topic_id: None,
                    unknown_tagged_fields: Default::default(),
                    offset: rng.below(1000) as i64,
                    metadata: "m".into(),
                    commit_timestamp: 5,
                    leader_epoch: -1,
                    expire_timestamp: -1,
                    version: (rng.below(5)) as i16,
                }))
                .unwrap();
                recs.push((key, Some(value)));
            }
            let member = MemberMetadata {
                unknown_tagged_fields: Default::default(),
                member_id: "m".into(),
                group_instance_id: None,
                client_id: "c".into(),
                client_host: "h".into(),
                rebalance_timeout: 1,
                session_timeout: 1,
                subscription: vec![0, 1],
                assignment: vec![],
            };
            let gkey = encode_key(&Key::GroupMetadata(GroupMetadataKey {
                group: format!("g{i}"),
            }))
            .unwrap();
            let gval = encode_value(&Value::GroupMetadata(GroupMetadataValue {
                unknown_tagged_fields: Default::default(),
                protocol_type: "consumer".into(),
                generation: 1,
                protocol: Some("range".into()),
                leader: Some("m".into()),
                current_state_timestamp: 3,
                members: vec![member],
                version: 3,
            }))
            .unwrap();
            recs.push((gkey.clone(), Some(gval)));
            recs.push((gkey, None));
            let refs: Vec<(Option<&[u8]>, Option<&[u8]>)> = recs
                .iter()
                .map(|(k, v)| (Some(k.as_slice()), v.as_deref()))
                .collect();
            let header = BatchHeader {
                compression: c,
                ..BatchHeader::plain(offset, 1000)
            };
            offset += refs.len() as i64;
            log.extend(write_batch(&header, &refs).unwrap());
        }
        let header = BatchHeader {
            producer_id: 9,
            producer_epoch: 0,
            ..BatchHeader::plain(offset, 1000)
        };
        log.extend(
            write_control_batch(
                &header,
                ControlMarker {
                    commit: false,
                    coordinator_epoch: 1,
                },
            )
            .unwrap(),
        );
        log
    }

    /// `batch` with its records replaced by `records`, compressed as before, and its length
    /// and CRC made right again: damage the CRC does not catch.
    fn resealed(batch: &[u8], records: &[u8]) -> Vec<u8> {
        let compression = first_compression(batch).unwrap();
        let mut out = batch[..RECORD_BATCH_OVERHEAD].to_vec();
        out.extend(compression.compress(records));
        let length = (out.len() - LOG_OVERHEAD) as i32;
        out[LOG_OVERHEAD - 4..LOG_OVERHEAD].copy_from_slice(&length.to_be_bytes());
        let crc = crc32c(&out[ATTRIBUTES_OFFSET..]);
        out[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
        out
    }

    /// The bounded stand-in for a fuzz run that CI can afford: random and mutated logs meet
    /// [`check_any_input`], as a cargo-fuzz run (`fuzz/`, by hand) does.
    /// One round in five damages the records inside a compressed batch and reseals it, which a
    /// fuzzer reaches by learning the CRC.
    #[test]
    fn mutated_and_random_logs_never_panic() {
        let mut rng = Rng(0xC0FF_EE00);
        let log = sample_log(&mut rng);
        assert!(decode_log(&log, 0, 0).error.is_none());
        let mut at = 0;
        let compressed: Vec<_> = frames(&log)
            .map(|batch| {
                at += batch.len();
                at - batch.len()..at
            })
            .filter(|b| first_compression(&log[b.clone()]) != Some(Compression::None))
            .collect();
        assert_eq!(compressed.len(), 4);
        for round in 0..5000 {
            let mut data = log.clone();
            match round % 5 {
                0 => {
                    for _ in 0..1 + rng.below(4) {
                        let i = rng.below(data.len() as u64) as usize;
                        data[i] ^= 1 << rng.below(8);
                    }
                }
                1 => data.truncate(rng.below(data.len() as u64) as usize),
                2 => {
                    let i = rng.below(data.len() as u64) as usize;
                    let n = rng.below(16) as usize;
                    for b in data.iter_mut().skip(i).take(n) {
                        *b = rng.next() as u8;
                    }
                }
                3 => data = (0..rng.below(600)).map(|_| rng.next() as u8).collect(),
                _ => {
                    let batch = compressed[rng.below(4) as usize].clone();
                    let compression = first_compression(&log[batch.clone()]).unwrap();
                    let mut records = compression
                        .decompress(&log[batch.start + RECORD_BATCH_OVERHEAD..batch.end], 0)
                        .unwrap();
                    if rng.below(2) == 0 {
                        records.truncate(rng.below(records.len() as u64) as usize);
                    } else {
                        let i = rng.below(records.len() as u64) as usize;
                        records[i] ^= 1 << rng.below(8);
                    }
                    let sealed = resealed(&log[batch.clone()], &records);
                    data.splice(batch, sealed);
                }
            }
            let _round = Round(round);
            check_any_input(&data, 100);
        }
    }

    /// The bounded stand-in for a fuzz run of [`check_produce_input`]: one produced batch of
    /// each compression, its bytes flipped, cut or overwritten, or its records damaged and
    /// the batch resealed; rounds whose CRC holds reach the record checks.
    #[test]
    fn mutated_produced_batches_never_panic() {
        let mut rng = Rng(0x5EED_0001);
        let batches: Vec<Vec<u8>> = [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ]
        .into_iter()
        .map(|compression| {
            let header = BatchHeader {
                compression,
                ..BatchHeader::plain(0, 1_700_000_000_000)
            };
            let recs: [(Option<&[u8]>, Option<&[u8]>); 3] = [
                (Some(b"k"), Some(b"v")),
                (None, Some(b"v")),
                (Some(b"k"), None),
            ];
            write_batch(&header, &recs).unwrap()
        })
        .collect();
        for round in 0..5000 {
            let batch = &batches[rng.below(5) as usize];
            let mut data = batch.clone();
            match round % 4 {
                0 => {
                    for _ in 0..1 + rng.below(4) {
                        let i = rng.below(data.len() as u64) as usize;
                        data[i] ^= 1 << rng.below(8);
                    }
                }
                1 => data.truncate(rng.below(data.len() as u64) as usize),
                2 => {
                    let i = rng.below(data.len() as u64) as usize;
                    for b in data.iter_mut().skip(i).take(rng.below(16) as usize) {
                        *b = rng.next() as u8;
                    }
                    // Header fields damaged behind a CRC that holds.
                    if rng.below(2) == 0 && data.len() >= RECORD_BATCH_OVERHEAD {
                        let crc = crc32c(&data[ATTRIBUTES_OFFSET..]);
                        data[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
                    }
                }
                _ => {
                    let compression = first_compression(batch).unwrap();
                    let mut records = compression
                        .decompress(&batch[RECORD_BATCH_OVERHEAD..], 0)
                        .unwrap();
                    let i = rng.below(records.len() as u64) as usize;
                    records[i] ^= 1 << rng.below(8);
                    if rng.below(3) == 0 {
                        records.truncate(i);
                    }
                    data = resealed(batch, &records);
                }
            }
            let _round = Round(round);
            check_produce_input(&data);
        }
        for batch in &batches {
            check_produce_input(batch);
        }
    }

    /// Names the round of a failing check.
    struct Round(usize);

    impl Drop for Round {
        fn drop(&mut self) {
            if std::thread::panicking() {
                eprintln!("in round {}", self.0);
            }
        }
    }
}
