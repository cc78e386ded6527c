//! `__consumer_offsets` records (filled below).
