//! The batch reader's tests: real and written logs read whole, chunk by chunk, resumed and
//! on two threads; damage found where it is; legacy input.

use super::*;
use crate::codec::compression::Compression;
use crate::error::Error;
use crate::testing::hex;
use std::sync::mpsc;

/// kafka-python's `record_batch_data_v2` (its `test/record/test_records.py`): real broker batches.
#[test]
fn real_broker_batches_decode() {
    let data = hex(
        "00000000000000000000003b00000001020318a2700000000000000000015dff\
         7b063c0000015dff7b063cffffffffffffffffffffffffffff00000001120000\
         00010631323300\
         0000000000000001000000400000000202c85cbd230000000000010000015dff\
         7cdd6c0000015dff7cde14ffffffffffffffffffffffffffff000000020c0000\
         000100000e00d00202010000\
         00000000000000000000004500000000025cd8ef520000000000000000016585\
         b6f3c10000016585b6f3c1ffffffffffffffffffffffffffff00000001260000\
         0001066864720208686b6579086876616c",
    );
    let parsed = read_batches(&data, 0);
    assert!(parsed.error.is_none(), "{:?}", parsed.error);
    let [a, b, c] = &parsed.batches[..] else {
        panic!("3 batches")
    };
    assert_eq!(
        (
            a.info.crc,
            a.info.partition_leader_epoch,
            a.records[0].timestamp
        ),
        (0x0318_a270, 1, 1_503_229_838_908)
    );
    assert_eq!(a.records[0].value.as_deref(), Some(&b"123"[..]));
    assert_eq!(b.records.len(), 2);
    assert_eq!(
        (b.records[1].offset, b.records[1].timestamp),
        (2, 1_503_229_959_532 + 168)
    );
    assert_eq!(
        c.records[0].headers,
        vec![("hkey".to_owned(), Some(b"hval".to_vec()))]
    );
}

/// sarama's compressed batches (`record_test.go`, raw snappy, lz4 with checksums).
#[test]
fn compressed_vectors_decode() {
    for data in [
        "00000000000000000000005e00000000029fecb6bd000100000000000001588dcd593800000000000000000000000000000000000000000000000000011f8b08000000000000ffd260e062e060646266616365636762e3e0e462e1e601040000ffffadc9586715000000",
        "000000000000000000000048000000000215009f61000200000000000001588dcd59380000000000000000000000000000000000000000000000000001155028000a00080102030406050607020608090a040b0c",
        "0000000000000000000000590000000002a94a77c5000300000000000001588dcd5938000000000000000000000000000000000000000000000000000104224d186470b91500008028000a00080102030406050607020608090a040b0c000000000c3bef92",
    ] {
        let parsed = read_batches(&hex(data), 0);
        assert!(parsed.error.is_none(), "{:?}", parsed.error);
        let r = &parsed.batches[0].records[0];
        assert_eq!(r.key.as_deref(), Some(&[1u8, 2, 3, 4][..]));
        assert_eq!(r.value.as_deref(), Some(&[5u8, 6, 7][..]));
        assert_eq!(r.headers, vec![("\u{8}\t\n".to_owned(), Some(vec![0x0b, 0x0c]))]);
        assert_eq!(r.timestamp, 1_479_847_795_000 + 5);
    }
}

#[test]
fn every_truncation_and_bit_flip_is_an_error_with_a_position() {
    let header = BatchHeader {
        compression: Compression::None,
        ..BatchHeader::plain(0, 1)
    };
    let bytes = write_batch(&header, &[(Some(b"key"), Some(b"value"))]).unwrap();
    for cut in 1..bytes.len() {
        let parsed = read_batches(&bytes[..cut], 1000);
        let err = parsed.error.expect("truncated input must be reported");
        assert_eq!(parsed.valid_bytes, 0);
        assert!(
            err.position().is_some_and(|p| p >= 1000),
            "cut {cut}: {err}"
        );
    }
    for i in 0..bytes.len() {
        for bit in 0..8 {
            let mut flipped = bytes.clone();
            flipped[i] ^= 1 << bit;
            let parsed = read_batches(&flipped, 0);
            if i >= ATTRIBUTES_OFFSET
                || (CRC_OFFSET..ATTRIBUTES_OFFSET).contains(&i)
                || i == MAGIC_OFFSET
            {
                assert!(
                    parsed.error.is_some(),
                    "flip at byte {i} bit {bit} went unnoticed"
                );
            }
        }
    }
}

#[test]
fn ceilings_checksum_and_decompress_every_batch() {
    let recs: Vec<(Option<&[u8]>, Option<&[u8]>)> =
        vec![(Some(b"key"), Some(b"some value, some value"))];
    let record_bytes =
        write_batch(&BatchHeader::plain(0, 1), &recs).unwrap().len() - RECORD_BATCH_OVERHEAD;
    for c in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let mut log = Vec::new();
        for i in 0..3 {
            log.extend(
                write_batch(
                    &BatchHeader {
                        compression: c,
                        ..BatchHeader::plain(i, 1)
                    },
                    &recs,
                )
                .unwrap(),
            );
        }
        log.extend_from_slice(&log[..20].to_vec());
        assert_eq!(
            checksum_batches(&log),
            3,
            "{c:?}: the torn tail is not a batch"
        );
        let expected = if c == Compression::None {
            0
        } else {
            3 * record_bytes
        };
        assert_eq!(decompress_batches(&log).unwrap(), expected, "{c:?}");
        let mut flipped = log.clone();
        flipped[ATTRIBUTES_OFFSET + 5] ^= 1;
        assert_eq!(checksum_batches(&flipped), 2);
    }
    let mut mislabelled = write_batch(
        &BatchHeader {
            compression: Compression::Lz4,
            ..BatchHeader::plain(0, 1)
        },
        &recs,
    )
    .unwrap();
    mislabelled[ATTRIBUTES_OFFSET + 1] = Compression::Gzip.id();
    assert!(decompress_batches(&mislabelled).is_err());
}

#[test]
fn a_resumed_reader_reads_what_one_reader_reads() {
    let mut log = Vec::new();
    for (i, c) in [
        Compression::None,
        Compression::Gzip,
        Compression::Zstd,
        Compression::Lz4,
    ]
    .into_iter()
    .cycle()
    .take(12)
    .enumerate()
    {
        let value = format!("value {i}");
        let recs: Vec<(Option<&[u8]>, Option<&[u8]>)> =
            vec![(Some(b"k"), Some(value.as_bytes())); 3];
        log.extend(
            write_batch(
                &BatchHeader {
                    compression: c,
                    ..BatchHeader::plain(3 * i as i64, 1)
                },
                &recs,
            )
            .unwrap(),
        );
    }
    let good = log.len();
    log.extend_from_slice(&log[..30].to_vec());
    let offsets = |chunk: &Chunk<'_>| -> Vec<(i64, Vec<u8>)> {
        let records = chunk
            .batches()
            .flat_map(|(_, records)| records.map(|r| r.unwrap()))
            .collect::<Vec<_>>();
        records
            .iter()
            .map(|r| (r.offset, r.value.unwrap().to_vec()))
            .collect()
    };
    let mut whole = Vec::new();
    let mut reader = LogReader::new(&log, 100);
    let mut chunk = Chunk::default();
    while reader.fill(&mut chunk, usize::MAX) {
        whole.extend(offsets(&chunk));
    }
    let mut resumed = Vec::new();
    let mut state = ReaderState::default();
    let error = loop {
        let (mut reader, mut chunk) = LogReader::resume(&log, 100, state);
        let filled = reader.fill(&mut chunk, 1);
        resumed.extend(offsets(&chunk));
        let (next, error) = reader.suspend(chunk);
        state = next;
        if !filled || error.is_some() {
            break error;
        }
    };
    assert_eq!(whole.len(), 36);
    assert_eq!(resumed, whole);
    assert_eq!(state.at, good);
    assert_eq!(error.and_then(|e| e.position()), Some(100 + good));
}

/// A log of `batches` batches cycling through the compressions, each of 20 records whose
/// values are 2 KiB of pseudo-random hex digits, then a torn copy of its first batch.
fn long_log(batches: usize) -> (Vec<u8>, usize) {
    let mut log = Vec::new();
    let compressions = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut hex = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        format!("{seed:016x}")
    };
    for i in 0..batches {
        let values: Vec<String> = (0..20).map(|_| (0..128).map(|_| hex()).collect()).collect();
        let recs: Vec<(Option<&[u8]>, Option<&[u8]>)> = values
            .iter()
            .map(|v| (Some(&b"k"[..]), Some(v.as_bytes())))
            .collect();
        let header = BatchHeader {
            compression: compressions[i % compressions.len()],
            ..BatchHeader::plain(20 * i as i64, 1)
        };
        log.extend(write_batch(&header, &recs).unwrap());
    }
    let good = log.len();
    log.extend_from_slice(&log[..40].to_vec());
    (log, good)
}

/// A log of `n` one-record batches, each a little longer than the one before, and where
/// each batch starts.
fn growing_batches(n: usize) -> (Vec<u8>, Vec<usize>) {
    let header = BatchHeader::plain(0, 5);
    let mut log = Vec::new();
    let mut starts = Vec::new();
    for i in 0..n {
        starts.push(log.len());
        let value = vec![b'v'; 10 + i * 7];
        log.extend(write_batch(&header, &[(Some(b"k"), Some(&value))]).unwrap());
    }
    (log, starts)
}

#[test]
fn runs_are_cut_between_batches_of_about_equal_size() {
    let (log, starts) = growing_batches(60);
    let runs = split_at_batches(&log, 4, 1000);
    assert_eq!(runs.len(), 4);
    assert_eq!(runs[0].start, 0);
    assert_eq!(runs.last().unwrap().end, log.len());
    for w in runs.windows(2) {
        assert_eq!(w[0].end, w[1].start);
        assert!(starts.contains(&w[1].start), "cut inside a batch");
    }
    for run in &runs {
        assert!(
            run.len().abs_diff(log.len() / 4) < 700,
            "{run:?} of {}",
            log.len()
        );
    }
    let long = split_at_batches(&log, 4, log.len() / 3);
    assert!((2..=3).contains(&long.len()));
    assert!(long.iter().all(|run| run.len() >= log.len() / 3));
    assert_eq!(split_at_batches(&log, 1, 1), vec![0..log.len()]);
    // A length prefix that makes no sense: the run before it takes the rest.
    let mut broken = log.clone();
    broken[starts[20] + LENGTH_OFFSET..starts[20] + LOG_OVERHEAD].copy_from_slice(&[0xff; 4]);
    let runs = split_at_batches(&broken, 4, 1000);
    assert!(runs.len() <= 2 && runs.last().unwrap().end == log.len());
    assert!(runs.last().unwrap().start <= starts[20]);
}

#[test]
fn windows_end_at_the_first_batch_end_past_their_size() {
    let (log, starts) = growing_batches(30);
    let ends: Vec<usize> = starts[1..].iter().copied().chain([log.len()]).collect();
    for size in [1, ends[0], ends[0] + 1, 1000, log.len()] {
        let window = window_of_batches(&log, size);
        assert_eq!(window, *ends.iter().find(|&&end| end >= size).unwrap());
    }
    assert_eq!(window_of_batches(&log, log.len() + 1), log.len());
    assert_eq!(window_of_batches(&[], 100), 0);
    // A length prefix that makes no sense, or a batch cut short: the window takes the rest,
    // so that a walk of it meets the damage.
    let mut broken = log.clone();
    broken[ends[9] + LENGTH_OFFSET..ends[9] + LOG_OVERHEAD].copy_from_slice(&[0xff; 4]);
    assert_eq!(window_of_batches(&broken, ends[5]), ends[5]);
    assert_eq!(window_of_batches(&broken, ends[12]), log.len());
    assert_eq!(
        window_of_batches(&log[..ends[9] + 20], ends[12]),
        ends[9] + 20
    );
}

#[test]
fn a_batch_says_how_it_is_compressed() {
    let plain = BatchHeader::plain(0, 5);
    let gzip = BatchHeader {
        compression: Compression::Gzip,
        ..BatchHeader::plain(0, 5)
    };
    let records = [(Some(&b"k"[..]), Some(&b"v"[..]))];
    assert_eq!(
        first_compression(&write_batch(&plain, &records).unwrap()),
        Some(Compression::None)
    );
    assert_eq!(
        first_compression(&write_batch(&gzip, &records).unwrap()),
        Some(Compression::Gzip)
    );
    assert_eq!(first_compression(&[]), None);
}

#[test]
fn a_pipelined_walk_reads_what_a_serial_one_reads() {
    let (log, good) = long_log(120);
    assert!(log.len() >= PIPELINE_BYTES);
    let serial = {
        let mut reader = LogReader::new(&log, 7);
        let mut chunk = Chunk::default();
        let mut values = Vec::new();
        while reader.fill(&mut chunk, CHUNK_BYTES) {
            for (_, records) in chunk.batches() {
                values.extend(records.map(|r| r.unwrap().value.unwrap().to_vec()));
            }
        }
        values
    };
    let mut pipelined = Vec::new();
    let mut checked = Vec::new();
    let walk = LogReader::new(&log, 7).chunks(CHUNK_BYTES, |chunk, at| {
        checked.push(at);
        chunk.process(7, |_, records| {
            for record in records {
                pipelined.push(record?.value.unwrap().to_vec());
            }
            Ok(())
        })
    });
    assert_eq!(serial.len(), 2400);
    assert_eq!(pipelined, serial);
    assert!(checked.len() > 4 && checked.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(checked.last(), Some(&good));
    assert_eq!(walk.valid_bytes, good);
    assert_eq!(walk.error.and_then(|e| e.position()), Some(7 + good));
}

#[test]
fn a_pipelined_walk_stops_where_its_consumer_fails() {
    let (log, _) = long_log(120);
    let mut batches = 0;
    let mut stop_at = 0;
    let walk = LogReader::new(&log, 0).walk(CHUNK_BYTES, |info, _| {
        batches += 1;
        if batches == 50 {
            stop_at = info.position;
            return Err(Error::Corrupt {
                position: info.position,
                reason: "stop here".into(),
            });
        }
        Ok(())
    });
    assert_eq!(batches, 50);
    assert_eq!(walk.valid_bytes, stop_at);
    assert_eq!(walk.error.and_then(|e| e.position()), Some(stop_at));
}

#[test]
fn a_pipeline_dropped_midway_stops_its_filler() {
    let (log, good) = long_log(120);
    // Leaked, so that a filler left running (the failure) never reads freed memory.
    let log: &'static [u8] = Vec::leak(log);
    // SAFETY: the log is leaked, alive and unchanged for the rest of the process.
    let mut pipeline = unsafe { Pipeline::start(LogReader::new(log, 0), CHUNK_BYTES) };
    let (first, checked) = pipeline.next_chunk().expect("a first chunk");
    assert!(checked > 0 && checked < good);
    assert_eq!(
        first.batches().next().map(|(info, _)| info.position),
        Some(0)
    );
    pipeline.recycle(first);
    // The filler is a chunk ahead, blocked on its full channel: dropping the pipeline must
    // wake it and join it, not hang. The drop runs on a thread of its own, waited for with
    // a bound.
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        drop(pipeline);
        let _ = done_tx.send(());
    });
    assert!(
        done_rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .is_ok(),
        "dropping a pipeline left its filler running"
    );
}

/// A consumer that panics midway: the panic comes out of the walk, after its filler thread
/// was woken and joined (it would otherwise wait on its full channel for ever, and the walk
/// with it). The walk runs on a thread of its own, waited for with a bound.
#[test]
fn a_pipelined_walk_whose_consumer_panics_joins_its_filler() {
    let (log, _) = long_log(120);
    // Leaked, so that a filler left running (the failure) never reads freed memory.
    let log: &'static [u8] = Vec::leak(log);
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut chunks = 0;
        let walk = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            LogReader::new(log, 0).chunks(CHUNK_BYTES, |_, _| {
                chunks += 1;
                if chunks == 2 {
                    panic!("the consumer fails");
                }
                Ok(())
            })
        }));
        let panic = walk.err().and_then(|p| p.downcast_ref::<&str>().copied());
        let _ = done_tx.send((panic, chunks));
    });
    let done = done_rx.recv_timeout(std::time::Duration::from_secs(30));
    assert_eq!(
        done.expect("a panicking consumer left its filler running"),
        (Some("the consumer fails"), 2)
    );
}

#[test]
fn valid_prefix_stops_before_a_torn_tail() {
    let a = write_batch(&BatchHeader::plain(0, 1), &[(Some(b"a"), Some(b"1"))]).unwrap();
    let b = write_batch(&BatchHeader::plain(1, 1), &[(Some(b"b"), Some(b"2"))]).unwrap();
    let mut log = a.clone();
    log.extend_from_slice(&b[..b.len() - 3]);
    let parsed = read_batches(&log, 0);
    assert_eq!(parsed.batches.len(), 1);
    assert_eq!(parsed.valid_bytes, a.len());
    assert_eq!(parsed.error.and_then(|e| e.position()), Some(a.len()));
}

#[test]
fn next_valid_batch_skips_damage_and_counts_legacy_only_when_asked() {
    let a = write_batch(&BatchHeader::plain(0, 1), &[(Some(b"a"), Some(b"1"))]).unwrap();
    let b = write_batch(&BatchHeader::plain(1, 1), &[(Some(b"b"), Some(b"2"))]).unwrap();
    let mut log = a.clone();
    log.extend_from_slice(&[0x02; 40]);
    let b_at = log.len();
    log.extend_from_slice(&b);
    // Damage the first batch's records: its CRC no longer matches.
    log[a.len() - 1] ^= 0xff;
    assert_eq!(next_valid_batch(&log, 0, false), b_at);
    assert_eq!(next_valid_batch(&log, b_at, false), log.len());
    assert_eq!(next_valid_batch(&log, usize::MAX, true), log.len());

    // A magic-1 message (kafka-python's legacy vector) after junk.
    let legacy = hex("000000000000000000000019478628c201000000015e1867abaeffffffff00000003313233");
    let mut log = vec![0x01; 30];
    log.extend_from_slice(&legacy);
    assert_eq!(next_valid_batch(&log, 0, false), log.len());
    assert_eq!(next_valid_batch(&log, 0, true), 30);
}

/// A magic-1 message with a right CRC-32.
fn message(attributes: i8, offset: i64, value: &[u8]) -> Vec<u8> {
    let mut body = vec![1, attributes as u8];
    body.extend(1_000i64.to_be_bytes());
    body.extend((-1i32).to_be_bytes());
    body.extend((value.len() as i32).to_be_bytes());
    body.extend(value);
    let mut out = offset.to_be_bytes().to_vec();
    out.extend(((4 + body.len()) as i32).to_be_bytes());
    out.extend(crc32fast::hash(&body).to_be_bytes());
    out.extend(body);
    out
}

/// A gzip wrapper whose inner messages end early, every CRC right: the error names the
/// wrapper's compressed value, a byte of the input, and where in the inflated messages.
#[test]
fn damage_inside_a_compressed_wrapper_is_named_at_a_byte_of_the_input() {
    let mut inner = message(0, 0, b"first");
    // The second message's body, after its offset and size.
    let second_body_at = inner.len() + 12;
    inner.extend(message(0, 1, b"second"));
    inner.pop();
    let wrapper = message(1, 1, &Compression::Gzip.compress(&inner));
    let value_at = wrapper.len() - Compression::Gzip.compress(&inner).len();
    let parsed = read_batches(&wrapper, 100);
    let error = parsed
        .error
        .expect("inner messages that end early are an error");
    assert_eq!(error.position(), Some(100 + value_at));
    let text = error.to_string();
    assert!(
        text.contains("decompressed data ends early")
            && text.contains(&format!("at byte {second_body_at} needs")),
        "{text}"
    );
}

/// kafka-python's legacy message vectors (`test/record/test_legacy_records.py`).
#[test]
fn kafka_python_legacy_vectors() {
    let v1 = hex("000000000000000000000019478628c201000000015e1867abaeffffffff00000003313233");
    let v0 = hex("000000000000000000000011feb01dbf0000ffffffff00000003313233");
    for (data, magic, ts) in [(v1, 1, 1_503_648_000_942), (v0, 0, -1)] {
        let parsed = read_batches(&data, 0);
        assert!(parsed.error.is_none(), "{:?}", parsed.error);
        let b = &parsed.batches[0];
        assert_eq!(b.info.magic, magic);
        assert_eq!(b.records[0].value.as_deref(), Some(&b"123"[..]));
        assert_eq!(b.records[0].key, None);
        assert_eq!(b.records[0].timestamp, ts);
        let mut bad = data.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(
            read_batches(&bad, 0).error.is_some(),
            "CRC-32 must catch a flipped byte"
        );
    }
}
