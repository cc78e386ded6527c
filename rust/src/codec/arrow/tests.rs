//! The Arrow decoder's tests: reference vectors and mixed logs decoded whole and in runs side
//! by side, which must give the same rows, and stop at the same batch when corrupt.

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::Array;

use super::*;
use crate::codec::arrow::runs::{decode_runs, plan_runs};
use crate::codec::arrow::schema::{
    member, COMMITTED_OFFSET, CONTROL, EPOCH, IS_TOMBSTONE, MEMBERS, MEMBER_ID, RAW_KEY,
    TOPIC_PARTITIONS,
};
use crate::codec::batch::{
    split_at_batches, write_batch, write_control_batch, BatchHeader, ControlMarker,
};
use crate::codec::compression::Compression;
use crate::codec::compression::Compression::{Gzip, Lz4, Snappy, Zstd};
use crate::testing::hex;

/// Key and value of reference vectors: a `consumer` group with one member (subscription
/// and assignment decoded), an offset commit.
fn vectors() -> [Vec<u8>; 4] {
    let key = hex("0002001b6b61666b6573632d646576636c75737465722d67726f75702d6964");
    let value = hex(
        "00030008636f6e73756d657200000007000572616e6765002c72646b61666b61\
         2d39663466633162302d316437642d343437312d393065382d65306636346633\
         6339643966000001857ee10d9500000001002c72646b61666b612d3966346663\
         3162302d316437642d343437312d393065382d653066363466336339643966ff\
         ff000772646b61666b61000b2f3137322e31382e302e31000493e00000afc800\
         000013000100000001000374303100000000000000000000001f000000000001\
         00037430310000000300000000000000010000000200000000",
    );
    let okey =
        hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000");
    let oval = hex("0003000000000000006affffffff00000000018579eff58c");
    [key, value, okey, oval]
}

/// `batches` batches cycling through what a log holds: group metadata with members whose
/// consumer protocol decodes and members whose does not, offset commits, tombstones,
/// opaque records, transaction markers; every third batch compressed, from batch
/// `first_compressed` on.
/// Every third batch compressed with `compression`, from the `first_compressed`th on.
fn mixed_log(batches: usize, first_compressed: usize, compression: Compression) -> Vec<u8> {
    let [key, value, okey, oval] = vectors();
    let opaque_key = [0u8, 99, 1, 2];
    let mut bad_member = value.clone();
    // The value ends with the member's subscription (an int32 length, then 19 bytes:
    // version, topic count, ...) and assignment (length, 31 bytes); a topic count too
    // large for the subscription's bytes leaves its topics unread.
    let count = bad_member.len() - 58 + 4 + 2;
    bad_member[count..count + 4].copy_from_slice(&[0x7f; 4]);
    let mut log = Vec::new();
    let mut offset = 0;
    for n in 0..batches {
        let records: Vec<(Option<&[u8]>, Option<&[u8]>)> = match n % 5 {
            0 => vec![(Some(&key), Some(&value)), (Some(&okey), Some(&oval))],
            1 => vec![(Some(&okey), None), (Some(&key), Some(&bad_member))],
            2 => vec![
                (Some(&opaque_key), Some(&[1, 2, 3])),
                (Some(&okey), Some(&oval)),
            ],
            3 => vec![(Some(&okey), Some(&oval)); 3],
            _ => vec![],
        };
        let header = BatchHeader {
            compression: if n % 3 == first_compressed {
                compression
            } else {
                Compression::None
            },
            ..BatchHeader::plain(offset, 1_000 + n as i64)
        };
        let batch = if records.is_empty() {
            let marker = ControlMarker {
                commit: true,
                coordinator_epoch: 1,
            };
            write_control_batch(&header, marker)
        } else {
            write_batch(&header, &records)
        };
        offset += records.len().max(1) as i64;
        log.extend(batch.unwrap());
    }
    log
}

#[test]
fn runs_decoded_side_by_side_give_the_rows_of_one_decode() {
    let log = mixed_log(200, 1, Zstd);
    let (serial, walk) = decode_arrow_in_runs(&log, 9, 4, 1, 1);
    assert!(walk.error.is_none());
    let serial = serial.unwrap();
    assert_eq!(serial.num_rows(), 40 * 10);
    let members = serial.column_by_name(MEMBERS).unwrap().as_list::<i32>();
    let fourth = members.value(3);
    let fourth = fourth.as_struct();
    let subscribed = fourth.column_by_name(member::SUBSCRIBED_TOPICS).unwrap();
    assert!(
        subscribed.is_null(0),
        "the unreadable subscription is a null list"
    );
    let assigned = fourth.column_by_name(member::ASSIGNED_PARTITIONS).unwrap();
    assert!(assigned.is_valid(0), "its assignment still decodes");
    for threads in [2, 3, 7] {
        assert_eq!(split_at_batches(&log, threads, 1 << 10).len(), threads);
        let (runs, walk) = decode_arrow_in_runs(&log, 9, 4, threads, 1 << 10);
        assert!(walk.error.is_none());
        assert_eq!(walk.valid_bytes, log.len());
        assert_eq!(runs.unwrap(), serial, "{threads} threads");
    }
    // gzip and zstd runs take two threads each, one decompressing ahead; lz4 and snappy
    // runs one each.
    for compression in [Gzip, Zstd, Lz4, Snappy] {
        let log = mixed_log(200, 0, compression);
        let (serial, _) = decode_arrow_in_runs(&log, 9, 4, 1, 1);
        let serial = serial.unwrap();
        for threads in [2, 6] {
            let (runs, walk) = decode_arrow_in_runs(&log, 9, 4, threads, 1 << 10);
            assert!(walk.error.is_none());
            assert_eq!(runs.unwrap(), serial, "{compression:?}, {threads} threads");
        }
    }
}

#[test]
fn columns_no_run_fills_are_null_and_share_one_buffer() {
    let [_, _, okey, oval] = vectors();
    let opaque: (Option<&[u8]>, Option<&[u8]>) = (Some(&[0, 99, 1, 2]), Some(&[3]));
    let mut log = Vec::new();
    for n in 0..60 {
        // Only the middle run of three holds an opaque record (raw_key, raw_value).
        let records = if n == 30 {
            vec![opaque]
        } else {
            vec![(Some(&okey[..]), Some(&oval[..])); 4]
        };
        log.extend(write_batch(&BatchHeader::plain(n * 4, 1), &records).unwrap());
    }
    let (serial, _) = decode_arrow_in_runs(&log, 0, 4, 1, 1);
    let serial = serial.unwrap();
    for threads in [2, 3, 5] {
        let (runs, walk) = decode_arrow_in_runs(&log, 0, 4, threads, 1 << 10);
        assert!(walk.error.is_none());
        assert_eq!(runs.unwrap(), serial, "{threads} threads");
    }
    let raw_key = serial.column_by_name(RAW_KEY).unwrap();
    assert_eq!(raw_key.null_count(), serial.num_rows() - 1);
    let unused = [CONTROL, EPOCH, TOPIC_PARTITIONS, MEMBERS, MEMBER_ID];
    let buffer = |name: &str| {
        let data = serial.column_by_name(name).unwrap().to_data();
        assert_eq!(data.null_count(), serial.num_rows(), "{name}");
        data.buffers()[0].as_ptr()
    };
    assert!(unused.iter().all(|name| buffer(name) == buffer(CONTROL)));
}

#[test]
fn runs_of_slow_inflating_batches_take_two_threads() {
    let min_run = 1 << 10;
    for (compression, pipelined) in [(Gzip, true), (Zstd, true), (Lz4, false), (Snappy, false)] {
        let log = mixed_log(200, 0, compression);
        let (runs, two_threads) = plan_runs(&log, 6, min_run);
        assert_eq!(two_threads, pipelined, "{compression:?}");
        assert_eq!(runs.len(), if pipelined { 3 } else { 6 }, "{compression:?}");
        // Too short for two runs: the one run pipelines whatever its compression.
        let (runs, two_threads) = plan_runs(&log, 6, log.len());
        assert_eq!((runs.len(), two_threads), (1, true), "{compression:?}");
        assert_eq!(plan_runs(&log, 1, min_run), (vec![0..log.len()], false));
    }
    // Uncompressed, or compressed only later: one thread a run.
    let log = mixed_log(200, 1, Gzip);
    assert_eq!(plan_runs(&log, 6, min_run).1, false);
    assert_eq!(plan_runs(&log, 6, log.len()).1, false);
}

/// A cut guessed inside a batch (at a whole batch held in a record's value, which passes
/// for a batch start) costs only time: the rows, and where a corrupt log stops, are one
/// decode's.
#[test]
fn a_guessed_cut_inside_a_batch_decodes_on_past_it() {
    use crate::codec::batch::batch_start_near;
    let [_, _, okey, oval] = vectors();
    let inner = write_batch(
        &BatchHeader::plain(0, 1),
        &[(Some(&okey[..]), Some(&oval[..]))],
    )
    .unwrap();
    let opaque_key: &[u8] = &[0, 99, 1, 2];
    let mut log = Vec::new();
    let (mut outer_at, mut inner_at, mut boundary) = (0, 0, 0);
    for n in 0..40 {
        let batch = if n == 20 {
            write_batch(
                &BatchHeader::plain(n * 3, 1),
                &[(Some(opaque_key), Some(&inner[..]))],
            )
            .unwrap()
        } else {
            write_batch(
                &BatchHeader::plain(n * 3, 1),
                &[(Some(&okey[..]), Some(&oval[..])); 3],
            )
            .unwrap()
        };
        if n == 20 {
            outer_at = log.len();
            let within = batch.windows(inner.len()).position(|w| w == &inner[..]);
            inner_at = outer_at + within.unwrap();
        }
        if n == 30 {
            boundary = log.len();
        }
        log.extend(batch);
    }
    assert_eq!(batch_start_near(&log, outer_at, 1 << 20), Some(outer_at));
    assert_eq!(
        batch_start_near(&log, outer_at + 1, 1 << 20),
        Some(inner_at)
    );
    assert_eq!(batch_start_near(&log, inner_at + 1, 10), None);
    let (serial, _) = decode_arrow_in_runs(&log, 7, 4, 1, 1);
    let serial = serial.unwrap();
    for cuts in [vec![inner_at], vec![boundary], vec![inner_at, boundary]] {
        let mut parts = Vec::new();
        let mut start = 0;
        for &cut in &cuts {
            parts.push(start..cut);
            start = cut;
        }
        parts.push(start..log.len());
        let (columns, walk) = decode_runs(&log, 7, 4, &parts, false, true);
        assert!(walk.error.is_none(), "{cuts:?}");
        assert_eq!(walk.valid_bytes, log.len());
        assert_eq!(columns.finish(true).unwrap(), serial, "{cuts:?}");
    }
    // Corrupt before the guessed cut, and after it: the walk stops where one decode's
    // does, and the whole decode gives its rows.
    for corrupt_at in [outer_at - 30, boundary + 40] {
        let mut data = log.clone();
        data[corrupt_at] ^= 0x40;
        let (one, one_walk) = decode_arrow_in_runs(&data, 7, 4, 1, 1);
        let parts = [0..inner_at, inner_at..data.len()];
        let (_, walk) = decode_runs(&data, 7, 4, &parts, false, true);
        assert!(one_walk.error.is_some());
        assert_eq!(walk.valid_bytes, one_walk.valid_bytes);
        assert_eq!(
            walk.error.map(|e| e.to_string()),
            one_walk.error.as_ref().map(|e| e.to_string())
        );
        let min_run = inner_at.min(data.len() - inner_at) / 2;
        let (runs, runs_walk) = decode_arrow_in_runs(&data, 7, 4, 2, min_run);
        assert_eq!(runs_walk.valid_bytes, one_walk.valid_bytes);
        assert_eq!(runs.unwrap(), one.unwrap());
    }
}

#[test]
fn runs_stop_where_one_decode_stops() {
    let log = mixed_log(200, 1, Zstd);
    for corrupt_at in [log.len() / 10, log.len() / 2, log.len() - 30] {
        let mut data = log.clone();
        data[corrupt_at] ^= 0x40;
        let (serial, serial_walk) = decode_arrow_in_runs(&data, 9, 4, 1, 1);
        let (runs, walk) = decode_arrow_in_runs(&data, 9, 4, 4, 1 << 10);
        assert!(serial_walk.error.is_some());
        assert_eq!(walk.valid_bytes, serial_walk.valid_bytes);
        assert_eq!(
            walk.error.map(|e| e.to_string()),
            serial_walk.error.map(|e| e.to_string())
        );
        assert_eq!(runs.unwrap(), serial.unwrap(), "corrupt at {corrupt_at}");
    }
}

#[test]
fn group_metadata_rows_carry_members_and_assignments() {
    let key = hex("0002001b6b61666b6573632d646576636c75737465722d67726f75702d6964");
    let value = hex(
        "00030008636f6e73756d657200000007000572616e6765002c72646b61666b61\
         2d39663466633162302d316437642d343437312d393065382d65306636346633\
         6339643966000001857ee10d9500000001002c72646b61666b612d3966346663\
         3162302d316437642d343437312d393065382d653066363466336339643966ff\
         ff000772646b61666b61000b2f3137322e31382e302e31000493e00000afc800\
         000013000100000001000374303100000000000000000000001f000000000001\
         00037430310000000300000000000000010000000200000000",
    );
    let okey =
        hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000");
    let oval = hex("0003000000000000006affffffff00000000018579eff58c");
    let batch = crate::codec::batch::write_batch(
        &crate::codec::batch::BatchHeader::plain(0, 5),
        &[
            (Some(&key), Some(&value)),
            (Some(&okey), Some(&oval)),
            (Some(&okey), None),
        ],
    )
    .unwrap();
    let (rb, walk) = decode_arrow(&batch, 0, 3, 1);
    assert!(walk.error.is_none());
    let rb = rb.unwrap();
    assert_eq!(rb.num_rows(), 3);
    assert_eq!(rb.schema(), schema());
    let committed = rb
        .column_by_name(COMMITTED_OFFSET)
        .unwrap()
        .as_primitive::<Int64Type>();
    assert!(committed.is_null(0));
    assert_eq!(committed.value(1), 106);
    assert!(rb
        .column_by_name(IS_TOMBSTONE)
        .unwrap()
        .as_boolean()
        .value(2));
    let members = rb.column_by_name(MEMBERS).unwrap().as_list::<i32>();
    assert!(members.is_null(1));
    let first = members.value(0);
    let first = first.as_struct();
    assert_eq!(
        first
            .column_by_name(member::CLIENT_ID)
            .unwrap()
            .as_string::<i32>()
            .value(0),
        "rdkafka"
    );
    let assigned = first
        .column_by_name(member::ASSIGNED_PARTITIONS)
        .unwrap()
        .as_list::<i32>()
        .value(0);
    let tp = assigned.as_struct();
    assert_eq!(tp.column(0).as_string::<i32>().value(0), "t01");
    let parts = tp.column(1).as_list::<i32>().value(0);
    assert_eq!(
        parts.as_primitive::<Int32Type>().values().to_vec(),
        vec![0, 1, 2]
    );
    let subscribed = first
        .column_by_name(member::SUBSCRIBED_TOPICS)
        .unwrap()
        .as_list::<i32>()
        .value(0);
    assert_eq!(subscribed.as_string::<i32>().value(0), "t01");
}
