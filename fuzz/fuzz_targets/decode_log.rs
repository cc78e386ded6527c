#![no_main]
//! Any bytes meet `codec::fuzzing::check_any_input`: decoding a `__consumer_offsets` log
//! returns records or an error with a position inside the input, never a panic; the valid
//! prefix decodes cleanly; the Arrow decode stops at the same batch with as many rows; the
//! benchmark ceilings never panic.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| _native::codec::fuzzing::check_any_input(data, 0));
