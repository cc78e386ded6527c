//! Bindings of [`crate::metadata_hash`]; `groupcoord.format.metadata_hash` is their typed face.

use pyo3::prelude::*;

use crate::metadata_hash;
use crate::python::errors::invalid_argument;

/// Kafka's `Utils.computeTopicHash`; `topic_id` is the uuid's 16 bytes (`uuid.UUID.bytes`).
#[pyfunction]
#[pyo3(signature = (topic_id, name, num_partitions, racks = Vec::new()))]
fn topic_hash(
    topic_id: &[u8],
    name: &str,
    num_partitions: i32,
    racks: Vec<Vec<String>>,
) -> PyResult<i64> {
    let topic_id: &[u8; 16] = topic_id
        .try_into()
        .map_err(|_| invalid_argument(format!("a topic id is 16 bytes, not {}", topic_id.len())))?;
    let racks: Vec<Vec<&str>> = racks
        .iter()
        .map(|p| p.iter().map(String::as_str).collect())
        .collect();
    Ok(metadata_hash::topic_hash(
        topic_id,
        name,
        num_partitions,
        &racks,
    )?)
}

/// Kafka's `Utils.computeGroupHash`, of topic hashes in the order of their topics' names.
#[pyfunction]
fn group_hash(topic_hashes: Vec<i64>) -> i64 {
    metadata_hash::group_hash(&topic_hashes)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(topic_hash, m)?)?;
    m.add_function(wrap_pyfunction!(group_hash, m)?)?;
    Ok(())
}
