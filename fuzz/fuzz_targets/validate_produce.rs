#![no_main]
//! Any bytes meet `codec::fuzzing::check_produce_input`: validating them as a produced batch
//! answers without a panic, and a batch it accepts reads back, its offsets assigned, with as
//! many records.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| _native::codec::fuzzing::check_produce_input(data));
