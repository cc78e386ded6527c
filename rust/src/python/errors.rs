//! The one conversion from [`crate::Error`] to Python exceptions.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

use crate::Error;

create_exception!(
    groupcoord._native,
    GroupCoordError,
    PyException,
    "Base class of the errors raised by groupcoord's native core."
);

impl From<Error> for PyErr {
    fn from(err: Error) -> PyErr {
        match err {
            Error::InvalidArgument(msg) => PyValueError::new_err(msg),
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("GroupCoordError", m.py().get_type::<GroupCoordError>())?;
    Ok(())
}
