//! Legacy message sets, magic 0 and 1 (Kafka's `LegacyRecord`).
//!
//! ```text
//! offset int64, messageSize int32,
//! crc uint32 (CRC-32 of magic .. end), magic int8, attributes int8 (bits 0-2 codec,
//! bit 3 timestamp type in v1), timestamp int64 (v1 only), key int32-length bytes,
//! value int32-length bytes
//! ```
//!
//! A compressed message (a *wrapper*) holds in its value the compressed bytes of an inner
//! message set. The wrapper's offset is that of its last inner message; in v1 the inner offsets
//! are relative (0..n-1), in v0 absolute. Each wrapper, or each uncompressed message, is
//! returned as one [`Batch`].

use crate::codec::compression::Compression;
use crate::codec::primitives::Reader;
use crate::codec::record_batch::{in_decompressed, Batch, BatchInfo, Record, LOG_OVERHEAD};
use crate::error::{Error, Result};

const TIMESTAMP_TYPE_BIT: i8 = 0x08;

struct Message {
    offset: i64,
    crc: u32,
    magic: i8,
    attributes: i8,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
}

fn read_message(r: &mut Reader<'_>) -> Result<Message> {
    let start = r.position();
    let offset = r.i64()?;
    let size = r.i32()?;
    if size < 14 {
        return Err(Error::Corrupt {
            position: start + 8,
            reason: format!("message size {size} below 14"),
        });
    }
    let mut m = r.sub(size as usize, "legacy message")?;
    let crc = m.u32()?;
    let covered_at = m.position();
    let covered = m.clone().rest();
    let computed = crc32fast::hash(covered);
    if computed != crc {
        return Err(Error::Corrupt {
            position: start,
            reason: format!("CRC-32 mismatch (stored {crc:#010x}, computed {computed:#010x})"),
        });
    }
    debug_assert_eq!(covered_at, start + LOG_OVERHEAD + 4);
    let magic = m.i8()?;
    if !(0..=1).contains(&magic) {
        return Err(Error::Corrupt {
            position: covered_at,
            reason: format!("magic {magic} inside a legacy message set"),
        });
    }
    let attributes = m.i8()?;
    let timestamp = if magic == 1 { m.i64()? } else { -1 };
    let key = m.nullable_bytes(false)?;
    let value = m.nullable_bytes(false)?;
    if !m.is_empty() {
        return Err(m.corrupt("bytes left after the message value"));
    }
    Ok(Message {
        offset,
        crc,
        magic,
        attributes,
        timestamp,
        key,
        value,
    })
}

/// Parses the one legacy entry that makes up `data` (already cut to its size).
pub fn read_legacy(data: &[u8], position: usize) -> Result<Batch> {
    let mut r = Reader::new(data, position);
    let wrapper = read_message(&mut r)?;
    let codec = (wrapper.attributes & 0x07) as u8;
    let compression = match Compression::from_id(codec) {
        Some(c) if c != Compression::Zstd => c,
        _ => {
            return Err(Error::Corrupt {
                position: position + LOG_OVERHEAD + 5,
                reason: format!("invalid compression id {codec} for magic {}", wrapper.magic),
            })
        }
    };
    let log_append_time = wrapper.magic == 1 && wrapper.attributes & TIMESTAMP_TYPE_BIT != 0;
    let records = if compression == Compression::None {
        vec![Record {
            offset: wrapper.offset,
            timestamp: wrapper.timestamp,
            key: wrapper.key.clone(),
            value: wrapper.value.clone(),
            headers: Vec::new(),
        }]
    } else {
        let inner_at = position + data.len() - wrapper.value.as_ref().map_or(0, Vec::len);
        let compressed = wrapper.value.as_deref().unwrap_or_default();
        let inner = compression.decompress(compressed, inner_at)?;
        let mut ir = Reader::new(&inner, inner_at);
        let mut messages = Vec::new();
        while !ir.is_empty() {
            let m = read_message(&mut ir).map_err(|e| in_decompressed(e, inner_at))?;
            if m.attributes & 0x07 != 0 {
                return Err(Error::Corrupt {
                    position: inner_at,
                    reason: "nested compressed message".into(),
                });
            }
            messages.push(m);
        }
        let last_relative = messages.last().map_or(0, |m| m.offset);
        messages
            .into_iter()
            .map(|m| Record {
                offset: if wrapper.magic == 1 && wrapper.offset != 0 {
                    wrapper.offset - last_relative + m.offset
                } else {
                    m.offset
                },
                timestamp: if log_append_time {
                    wrapper.timestamp
                } else {
                    m.timestamp
                },
                key: m.key,
                value: m.value,
                headers: Vec::new(),
            })
            .collect()
    };
    let first = records.first().map_or(wrapper.offset, |r| r.offset);
    let last = records.last().map_or(wrapper.offset, |r| r.offset);
    let max_timestamp = records.iter().map(|r| r.timestamp).max().unwrap_or(-1);
    let info = BatchInfo {
        position,
        size: data.len(),
        base_offset: first,
        last_offset: last,
        partition_leader_epoch: -1,
        magic: wrapper.magic,
        crc: wrapper.crc,
        compression,
        log_append_time,
        is_transactional: false,
        is_control: false,
        has_delete_horizon: false,
        base_timestamp: records.first().map_or(-1, |r| r.timestamp),
        max_timestamp,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        record_count: records.len(),
    };
    Ok(Batch { info, records })
}
