//! Control records (Kafka's `ControlRecordType` and `EndTransactionMarker`): a transaction's
//! COMMIT or ABORT marker, read and written.

use crate::codec::batch::write::{write_batch, BatchHeader};
use crate::codec::compression::Compression;
use crate::codec::primitives::{Reader, Writer};
use crate::error::Result;

/// A transaction marker (Kafka's `EndTransactionMarker`): COMMIT or ABORT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlMarker {
    pub commit: bool,
    pub coordinator_epoch: i32,
}

/// Control record types: 0 ABORT, 1 COMMIT, others (KRaft) carried as their number.
pub fn control_record_type(key: &[u8]) -> Option<i16> {
    let mut r = Reader::new(key, 0);
    let _version = r.i16().ok()?;
    r.i16().ok()
}

/// Encodes a control batch holding one COMMIT or ABORT marker.
pub fn write_control_batch(header: &BatchHeader, marker: ControlMarker) -> Result<Vec<u8>> {
    let mut key = Vec::new();
    key.put_i16(0);
    key.put_i16(i16::from(marker.commit));
    let mut value = Vec::new();
    value.put_i16(0);
    value.put_i32(marker.coordinator_epoch);
    let header = BatchHeader {
        is_transactional: true,
        is_control: true,
        compression: Compression::None,
        ..*header
    };
    write_batch(&header, &[(Some(&key), Some(&value))])
}

/// The COMMIT/ABORT marker of a control record, if it is one.
pub fn control_marker(key: Option<&[u8]>, value: Option<&[u8]>) -> Option<ControlMarker> {
    let kind = control_record_type(key?)?;
    if kind > 1 {
        return None;
    }
    let mut r = Reader::new(value?, 0);
    let _version = r.i16().ok()?;
    Some(ControlMarker {
        commit: kind == 1,
        coordinator_epoch: r.i32().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::batch::walk::read_batches;
    use crate::testing::hex;

    #[test]
    fn control_batches_round_trip() {
        let header = BatchHeader {
            producer_id: 7,
            producer_epoch: 2,
            ..BatchHeader::plain(5, 10)
        };
        let bytes = write_control_batch(
            &header,
            ControlMarker {
                commit: true,
                coordinator_epoch: 3,
            },
        )
        .unwrap();
        let b = &read_batches(&bytes, 0).batches[0];
        assert!(b.info.is_control && b.info.is_transactional);
        assert_eq!(
            control_marker(b.records[0].key.as_deref(), b.records[0].value.as_deref()),
            Some(ControlMarker {
                commit: true,
                coordinator_epoch: 3
            })
        );
    }

    /// A constructed four-batch segment (commit, tombstone, transactional commit, COMMIT
    /// marker); our writer produces its first batch byte for byte.
    #[test]
    fn coordinator_segment_vector() {
        let b1 = hex(
            "0000000000000000000000790000000002e0bab9c80000000000000000018579\
             eff58c0000018579eff58cffffffffffffffffffff00000000000000018c0100\
             0000500001001b6b61666b6573632d646576636c75737465722d67726f75702d\
             6964000374303100000000300003000000000000006affffffff000000000185\
             79eff58c00",
        );
        let b4 = hex(
            "0000000000000003000000420000000002bcdd34690030000000000000018579\
             efff500000018579efff500000000000000fa00000ffffffff00000001200000\
             0008000000010c00000000000500",
        );
        let key =
            hex("0001001b6b61666b6573632d646576636c75737465722d67726f75702d6964000374303100000000");
        let value = hex("0003000000000000006affffffff00000000018579eff58c");
        let written = write_batch(
            &BatchHeader::plain(0, 1_672_788_047_244),
            &[(Some(&key), Some(&value))],
        )
        .unwrap();
        assert_eq!(written, b1);
        let control = write_control_batch(
            &BatchHeader {
                producer_id: 4000,
                producer_epoch: 0,
                base_sequence: -1,
                ..BatchHeader::plain(3, 1_672_788_049_744)
            },
            ControlMarker {
                commit: true,
                coordinator_epoch: 5,
            },
        )
        .unwrap();
        assert_eq!(control, b4);
    }
}
