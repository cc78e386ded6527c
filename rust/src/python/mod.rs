//! The PyO3 bindings: a thin layer over the Python-free core modules.

use pyo3::prelude::*;

mod codec;
mod errors;
mod partitioner;
mod purgatory;
mod record_class;
mod record_methods;

/// The compiled module, imported as `groupcoord._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    purgatory::register(m)?;
    codec::register(m)?;
    partitioner::register(m)?;
    Ok(())
}
