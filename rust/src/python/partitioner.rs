//! Bindings of [`crate::partitioner`]: a Python string's hash read from its own code points,
//! as Java reads its UTF-16 units (lone surrogates included).

use pyo3::prelude::*;
use pyo3::types::{PyString, PyStringData};

use crate::partitioner;

fn java_hash_of(s: &Bound<'_, PyString>) -> PyResult<i32> {
    // SAFETY: the data is read while `s`, which owns it, is borrowed; a string is immutable.
    let data = unsafe { s.data() }?;
    Ok(match data {
        PyStringData::Ucs1(bytes) => {
            partitioner::java_string_hash(bytes.iter().map(|&b| u16::from(b)))
        }
        PyStringData::Ucs2(units) => partitioner::java_string_hash(units.iter().copied()),
        PyStringData::Ucs4(points) => {
            partitioner::java_string_hash(partitioner::utf16_units(points.iter().copied()))
        }
    })
}

/// Java's `String.hashCode` of `s`.
#[pyfunction]
fn java_string_hash(s: &Bound<'_, PyString>) -> PyResult<i32> {
    java_hash_of(s)
}

/// The `__consumer_offsets` partition that owns `group_id`.
#[pyfunction]
fn partition_for(group_id: &Bound<'_, PyString>, num_partitions: i32) -> PyResult<i32> {
    Ok(partitioner::partition_for(
        java_hash_of(group_id)?,
        num_partitions,
    )?)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(java_string_hash, m)?)?;
    m.add_function(wrap_pyfunction!(partition_for, m)?)?;
    Ok(())
}
