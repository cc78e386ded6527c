//! Which `__consumer_offsets` partition owns a group: Kafka's `partitionFor`.

use crate::{Error, Result};

/// Java's `String.hashCode`: `31 * h + unit` over the string's UTF-16 code units, wrapping as
/// an `int` does.
pub fn java_string_hash(units: impl IntoIterator<Item = u16>) -> i32 {
    units.into_iter().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// The UTF-16 code units of a string held as code points, as Java holds it: a code point
/// beyond U+FFFF is two surrogates; a lone surrogate stays one unit.
pub fn utf16_units(code_points: impl IntoIterator<Item = u32>) -> impl Iterator<Item = u16> {
    code_points.into_iter().flat_map(|c| {
        if c > 0xFFFF {
            let c = c - 0x1_0000;
            [
                Some(0xD800 | (c >> 10) as u16),
                Some(0xDC00 | (c & 0x3FF) as u16),
            ]
        } else {
            [Some(c as u16), None]
        }
        .into_iter()
        .flatten()
    })
}

/// `Utils.abs(hash) % num_partitions`, where `Utils.abs` maps `i32::MIN` to 0.
pub fn partition_for(hash: i32, num_partitions: i32) -> Result<i32> {
    if num_partitions < 1 {
        return Err(Error::InvalidArgument(format!(
            "num_partitions must be at least 1, not {num_partitions}"
        )));
    }
    let abs = if hash == i32::MIN { 0 } else { hash.abs() };
    Ok(abs % num_partitions)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(s: &str) -> i32 {
        java_string_hash(s.encode_utf16())
    }

    /// Kafka's `partitionFor` over Java's `String.hashCode`, computed with javac/java.
    #[test]
    fn java_vectors() {
        for (group, hash_code, partition) in [
            ("", 0, 0),
            ("a", 97, 47),
            ("my-group", -1_906_497_762, 12),
            ("polygenelubricants", i32::MIN, 0),
            ("\u{e9}", 233, 33),
            ("\u{1f600}", 1_772_899, 49),
            ("gr\u{fc}ppe", -1_233_264_812, 12),
        ] {
            assert_eq!(hash(group), hash_code, "{group}");
            assert_eq!(
                partition_for(hash(group), 50).unwrap(),
                partition,
                "{group}"
            );
        }
    }

    #[test]
    fn code_points_become_java_units() {
        for s in ["", "abc", "\u{e9}t\u{e9}", "\u{1f600}x\u{10ffff}"] {
            let units: Vec<u16> = utf16_units(s.chars().map(u32::from)).collect();
            assert_eq!(units, s.encode_utf16().collect::<Vec<_>>());
        }
        let lone: Vec<u16> = utf16_units([0xD800, 0x61]).collect();
        assert_eq!(lone, [0xD800, 0x61]);
    }

    #[test]
    fn partition_count_must_be_positive() {
        assert!(partition_for(1, 0).is_err());
        assert_eq!(partition_for(-7, 5).unwrap(), 2);
    }
}
