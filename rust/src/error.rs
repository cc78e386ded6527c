//! The crate's one error type. The Python bindings convert it to Python exceptions in exactly
//! one place (`python/errors.rs`).

/// Everything that can go wrong in the Rust core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An argument is outside what the operation accepts (for example a delay out of range).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

pub type Result<T> = std::result::Result<T, Error>;
