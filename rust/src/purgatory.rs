//! Delayed-operation purgatory. (Filled in by the purgatory work.)
