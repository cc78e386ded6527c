//! The property a fuzz run checks on any input. The bounded test in [`super::log`] runs it in
//! CI over random and mutated logs; `fuzz/` runs it under cargo-fuzz by hand. Keeping it here
//! means a change of the decoders' signatures breaks CI, not only the fuzz target.

use super::arrow::decode_arrow;
use super::batch::{checksum_batches, decompress_batches};
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
