//! groupcoord's Rust core.
//!
//! - [`timer`]: a hierarchical timing wheel (Kafka's `TimingWheel`/`SystemTimer` design) driven by
//!   a caller-supplied clock.
//! - [`purgatory`]: delayed operations watched under keys (Kafka's `DelayedOperationPurgatory`).
//! - [`codec`]: the `__consumer_offsets` log format: record batches and the coordinator's records.
//! - [`metadata_hash`]: KIP-1101's hash of a consumer group's subscribed topics' metadata.
//! - [`partitioner`]: which `__consumer_offsets` partition owns a group (Kafka's `partitionFor`).
//! - [`network`]: the network thread that writes the server's answers to client sockets.
//! - [`topic_regex`]: KIP-848's `SubscribedTopicRegex`, read and matched as Kafka's RE2J does.
//!
//! None of these modules depends on Python. The PyO3 bindings live in `python/` behind the
//! `python` feature, which maturin enables; `cargo test` runs without an interpreter.

pub mod codec;
pub mod error;
pub mod metadata_hash;
pub mod network;
pub mod partitioner;
pub mod purgatory;
pub mod timer;
pub mod topic_regex;

#[cfg(test)]
mod testing;

#[cfg(feature = "python")]
mod python;

pub use error::{Error, Result};

/// mimalloc keeps freed blocks for reuse a while before it gives them back to the system.
/// An Arrow decode writes hundreds of megabytes of fresh column buffers; with the system
/// allocator each of those pages is faulted in and zeroed anew on every call, which cost a
/// fifth of a decode's time. (pyarrow's own memory pools make the same choice.)
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
