//! KIP-1101's metadata hash: what a consumer group stores as `ConsumerGroupMetadataValue`'s
//! `metadata_hash`, so that a change of its subscribed topics' metadata (partitions, racks)
//! is seen as a change of one number. Kafka's `org.apache.kafka.coordinator.group.Utils`
//! (`computeTopicHash`, `computeGroupHash`) computes it with hash4j's streaming XXH3-64 (seed
//! 0); XXH3 of a stream is XXH3 of its bytes joined, which [`HashStream`] collects as hash4j's
//! `HashSink` writes them.

use twox_hash::XxHash3_64;

use crate::error::{Error, Result};

/// The version of the topic hash's byte layout (Kafka's `TOPIC_HASH_MAGIC_BYTE`).
const TOPIC_HASH_MAGIC_BYTE: u8 = 0;

/// The bytes of a hash4j `HashStream64`, as its `HashSink` methods put them: little-endian
/// numbers, strings as UTF-16 units.
#[derive(Default)]
struct HashStream(Vec<u8>);

impl HashStream {
    fn put_byte(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }

    fn put_int(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    fn put_long(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// hash4j's `putString`: every UTF-16 unit (`putChar`, little-endian), then the length in
    /// units (`putInt`).
    fn put_string(&mut self, s: &str) -> &mut Self {
        let mut units = 0i32;
        for unit in s.encode_utf16() {
            self.0.extend_from_slice(&unit.to_le_bytes());
            units = units.wrapping_add(1);
        }
        self.put_int(units)
    }

    /// `getAsLong`: the XXH3-64 of the bytes, seed 0, as Java's signed long.
    fn get_as_long(&self) -> i64 {
        XxHash3_64::oneshot(&self.0) as i64
    }
}

/// Java's `String.length()`: the number of UTF-16 units.
fn java_length(s: &str) -> i32 {
    s.encode_utf16().count() as i32
}

/// Kafka's `Utils.computeTopicHash` of a topic that exists: its id (16 bytes, most significant
/// first, as Kafka's `Uuid` holds them), name, partition count, and each partition's racks
/// (`partition_racks[i]` for partition `i`, in any order: they are sorted as Java sorts
/// strings, by UTF-16 units; partitions past its end have none).
pub fn topic_hash(
    topic_id: &[u8; 16],
    name: &str,
    num_partitions: i32,
    partition_racks: &[Vec<&str>],
) -> Result<i64> {
    if num_partitions < 0 {
        return Err(Error::InvalidArgument(format!(
            "num_partitions {num_partitions} is negative"
        )));
    }
    if partition_racks.len() > num_partitions as usize {
        return Err(Error::InvalidArgument(format!(
            "racks of {} partitions for a topic of {num_partitions}",
            partition_racks.len()
        )));
    }
    let (msb, lsb) = topic_id.split_at(8);
    let long = |half: &[u8]| i64::from_be_bytes(half.try_into().expect("8 bytes"));
    let mut stream = HashStream::default();
    stream
        .put_byte(TOPIC_HASH_MAGIC_BYTE)
        .put_long(long(msb))
        .put_long(long(lsb))
        .put_string(name)
        .put_int(num_partitions);
    for partition in 0..num_partitions {
        stream.put_int(partition);
        let mut racks: Vec<&str> = partition_racks
            .get(partition as usize)
            .cloned()
            .unwrap_or_default();
        racks.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        for rack in racks {
            // "<length><value>": no separator can be told from a rack's own characters.
            stream.put_int(java_length(rack)).put_string(rack);
        }
    }
    Ok(stream.get_as_long())
}

/// Kafka's `Utils.computeGroupHash`: 0 for no topics, else the hash of the topics' hashes,
/// which the caller gives in the order of their names (Java's, by UTF-16 units).
pub fn group_hash(topic_hashes_by_name: &[i64]) -> i64 {
    if topic_hashes_by_name.is_empty() {
        return 0;
    }
    let mut stream = HashStream::default();
    for &hash in topic_hashes_by_name {
        stream.put_long(hash);
    }
    stream.get_as_long()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// XXH3-64 (seed 0) vectors of the reference implementation, libxxhash's `XXH3_64bits`.
    #[test]
    fn xxh3_64_of_the_reference_implementation() {
        assert_eq!(XxHash3_64::oneshot(b""), 0x2d06800538d394c2);
        assert_eq!(XxHash3_64::oneshot(b"abc"), 0x78af5f94892f3950);
    }

    #[test]
    fn the_topic_hash_stream_is_hash4js() {
        let id: [u8; 16] = std::array::from_fn(|i| i as u8 + 1);
        let mut expected = vec![0u8];
        expected.extend_from_slice(&[8, 7, 6, 5, 4, 3, 2, 1]); // msb 0x0102..08, little-endian
        expected.extend_from_slice(&[16, 15, 14, 13, 12, 11, 10, 9]);
        expected.extend_from_slice(&[b't', 0, b'\xe9', 0]); // "té" as UTF-16LE
        expected.extend_from_slice(&2i32.to_le_bytes()); // its length in units
        expected.extend_from_slice(&2i32.to_le_bytes()); // partitions
        expected.extend_from_slice(&0i32.to_le_bytes()); // partition 0: racks a, then b
        for rack in ["a", "b"] {
            expected.extend_from_slice(&1i32.to_le_bytes());
            expected.extend_from_slice(&[rack.as_bytes()[0], 0]);
            expected.extend_from_slice(&1i32.to_le_bytes());
        }
        expected.extend_from_slice(&1i32.to_le_bytes()); // partition 1: none
        let got = topic_hash(&id, "té", 2, &[vec!["b", "a"]]).unwrap();
        assert_eq!(got, XxHash3_64::oneshot(&expected) as i64);
        assert_ne!(
            got,
            topic_hash(&id, "té", 2, &[vec![], vec!["b", "a"]]).unwrap()
        );
    }

    #[test]
    fn racks_sort_as_java_strings_by_utf16_units() {
        // U+FF61 sorts after U+1F600 by code point, before it by UTF-16 unit (0xD83D).
        let id = [0; 16];
        let java_order = topic_hash(&id, "t", 1, &[vec!["\u{1F600}", "\u{FF61}"]]).unwrap();
        assert_eq!(
            java_order,
            topic_hash(&id, "t", 1, &[vec!["\u{FF61}", "\u{1F600}"]]).unwrap()
        );
        let mut stream = HashStream::default();
        stream
            .put_byte(0)
            .put_long(0)
            .put_long(0)
            .put_string("t")
            .put_int(1)
            .put_int(0);
        for rack in ["\u{1F600}", "\u{FF61}"] {
            stream.put_int(java_length(rack)).put_string(rack);
        }
        assert_eq!(java_order, stream.get_as_long());
        assert_eq!(java_length("\u{1F600}"), 2);
    }

    #[test]
    fn group_hash_of_topic_hashes() {
        assert_eq!(group_hash(&[]), 0);
        let mut bytes = (-1i64).to_le_bytes().to_vec();
        bytes.extend_from_slice(&7i64.to_le_bytes());
        assert_eq!(group_hash(&[-1, 7]), XxHash3_64::oneshot(&bytes) as i64);
    }

    /// Values of libxxhash's `XXH3_64bits` over the streams hash4j writes for these.
    #[test]
    fn hashes_of_the_reference_implementation() {
        let id: [u8; 16] = std::array::from_fn(|i| i as u8);
        let racks = [vec!["rack-b", "rack-a"], vec![], vec!["rack-c"]];
        assert_eq!(
            topic_hash(&id, "orders", 3, &racks).unwrap(),
            8350927281223784952
        );
        assert_eq!(group_hash(&[-1, 7]), -168736227686911735);
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(topic_hash(&[0; 16], "t", -1, &[]).is_err());
        assert!(topic_hash(&[0; 16], "t", 1, &[vec![], vec![]]).is_err());
    }
}
