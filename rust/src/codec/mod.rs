//! `__consumer_offsets` codec. (Filled in by the codec work.)
