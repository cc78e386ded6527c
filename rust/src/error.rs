//! The crate's one error type. The Python bindings convert it to Python exceptions in exactly
//! one place (`python/errors.rs`).

/// Everything that can go wrong in the Rust core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An argument is outside what the operation accepts (for example a delay out of range).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// An object asked to do what its state forbids: a purgatory that is shut down, or one
    /// re-entered while it was updating itself (from a key's `__eq__` or a finalizer).
    #[error("{0}")]
    IllegalState(String),

    /// A value of the wrong kind (for example an operation whose `__init__` never ran).
    #[error("{0}")]
    WrongType(String),

    /// Input ended before a field it announced.
    #[error("truncated input at byte {position}: {what} needs {needed} bytes, {available} left")]
    Truncated {
        position: usize,
        needed: usize,
        available: usize,
        what: String,
    },

    /// Input that cannot be what it claims (bad checksum, impossible length, invalid UTF-8...).
    #[error("corrupt input at byte {position}: {reason}")]
    Corrupt { position: usize, reason: String },

    /// A record of a known type with a version this codec cannot write.
    #[error("unsupported version: {0}")]
    UnsupportedVersion(String),

    /// A KIP-848 `SubscribedTopicRegex` that RE2J does not compile: Kafka's
    /// INVALID_REGULAR_EXPRESSION, with its message and RE2J's description of the error.
    #[error("SubscribedTopicRegex `{pattern}` is not a valid regular expression: {description}.")]
    InvalidRegularExpression {
        pattern: String,
        description: String,
    },

    /// Reading a segment file failed.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The absolute byte position of a decoding error.
    pub fn position(&self) -> Option<usize> {
        match self {
            Error::Truncated { position, .. } | Error::Corrupt { position, .. } => Some(*position),
            _ => None,
        }
    }

    /// The same error, `offset` bytes further into a larger input.
    pub fn shifted(self, offset: usize) -> Error {
        match self {
            Error::Truncated {
                position,
                needed,
                available,
                what,
            } => Error::Truncated {
                position: position + offset,
                needed,
                available,
                what,
            },
            Error::Corrupt { position, reason } => Error::Corrupt {
                position: position + offset,
                reason,
            },
            other => other,
        }
    }

    /// What went wrong, told relative to `part` (a record's value, a batch's decompressed
    /// data) whose first byte its reader counted as `start`: for an error then reported at a
    /// byte of the input that holds `part`, since `part`'s own bytes are not the input's.
    pub fn within(self, part: &str, start: usize) -> String {
        match self {
            Error::Corrupt { position, reason } => {
                format!(
                    "{reason}, at byte {} of {part}",
                    position.saturating_sub(start)
                )
            }
            Error::Truncated {
                position,
                needed,
                available,
                what,
            } => format!(
                "{part} ends early: {what} at byte {} needs {needed} bytes, {available} left",
                position.saturating_sub(start)
            ),
            other => format!("{part}: {other}"),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
