//! The PyO3 bindings: a thin layer over the Python-free core modules.

use pyo3::prelude::*;

mod batch_classes;
mod classic_records;
mod codec;
mod consumer_group_fields;
mod decode;
mod errors;
mod input;
mod json_lines;
mod metadata_hash;
mod names;
mod network;
mod other_records;
mod partitioner;
mod produce;
mod purgatory;
mod record_class;
mod record_methods;
mod record_objects;
mod topic_regex;

/// The compiled module, imported as `groupcoord._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    purgatory::register(m)?;
    codec::register(m)?;
    json_lines::register(m)?;
    partitioner::register(m)?;
    metadata_hash::register(m)?;
    network::register(m)?;
    topic_regex::register(m)?;
    Ok(())
}
