//! The `__consumer_offsets` log format: record batches ([`batch`], magic 2, and [`legacy`],
//! magic 0 and 1, sharing [`record_batch`]), their compression ([`compression`]), Kafka's
//! primitive encodings ([`primitives`]) and the coordinator's records ([`records`]).

pub mod arrow;
pub mod batch;
pub mod compression;
pub mod consumer_group;
pub mod consumer_group_fields;
pub mod consumer_protocol;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod generated;
#[cfg(test)]
mod generated_tests;
pub mod json;
pub mod legacy;
pub mod log;
pub mod primitives;
pub mod record_batch;
pub mod records;
