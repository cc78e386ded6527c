#![no_main]
//! Any bytes: decoding a `__consumer_offsets` log returns records or an error with a position
//! inside the input, never a panic; the valid prefix decodes cleanly; the Arrow decode stops
//! at the same batch with as many rows; the benchmark ceilings never panic.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let decoded = _native::codec::log::decode_log(data, 0, 0);
    if let Some(err) = &decoded.error {
        assert!(err.position().is_some_and(|p| p <= data.len()));
    }
    assert!(_native::codec::log::decode_log(&data[..decoded.valid_bytes], 0, 0).error.is_none());
    let (batch, walk) = _native::codec::arrow::decode_arrow(data, 0, 0);
    assert_eq!(walk.valid_bytes, decoded.valid_bytes);
    assert_eq!(batch.map(|b| b.num_rows()).ok(), Some(decoded.records.len()));
    let _ = _native::codec::batch::checksum_batches(data);
    let _ = _native::codec::batch::decompress_batches(data);
    for record in &decoded.records {
        if let Some(value) = &record.value {
            let _ = _native::codec::records::encode_value(value);
        }
    }
});
