//! Hierarchical timing wheel. (Filled in by the purgatory work.)
