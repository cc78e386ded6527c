//! Bindings of [`crate::topic_regex`]: a compiled `SubscribedTopicRegex` as a Python object.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::topic_regex;

/// KIP-848's `SubscribedTopicRegex`, compiled as Kafka's RE2J compiles it.
#[pyclass(name = "TopicRegex", module = "groupcoord._native", frozen)]
struct TopicRegex {
    inner: topic_regex::TopicRegex,
}

#[pymethods]
impl TopicRegex {
    #[new]
    fn new(pattern: &str) -> PyResult<TopicRegex> {
        Ok(TopicRegex {
            inner: topic_regex::TopicRegex::compile(pattern)?,
        })
    }

    #[getter]
    fn pattern(&self) -> &str {
        self.inner.pattern()
    }

    fn matches(&self, name: &str) -> bool {
        self.inner.is_match(name)
    }

    /// The names matched, as the very objects given (none is copied).
    fn matching<'py>(&self, names: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyString>>> {
        let mut matched = Vec::new();
        for name in names.try_iter()? {
            let name = name?.cast_into::<PyString>()?;
            if self.inner.is_match(name.to_str()?) {
                matched.push(name);
            }
        }
        Ok(matched)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let pattern = PyString::new(py, self.inner.pattern()).repr()?;
        Ok(format!("TopicRegex({pattern})"))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<TopicRegex>()
}
