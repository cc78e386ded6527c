//! The compression codecs of Kafka record batches: gzip, snappy (Kafka's xerial framing on
//! write, xerial or a raw block on read), lz4 (frames; the magic-0 header-checksum quirk on
//! read) and zstd.

use std::io::{Read, Write};

use crate::error::{Error, Result};

/// Attribute bits 0-2 of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

/// The most bytes one batch may decompress to; larger means a corrupt or hostile input.
pub const MAX_DECOMPRESSED: usize = 256 << 20;

const XERIAL_MAGIC: &[u8; 8] = b"\x82SNAPPY\x00";
const XERIAL_HEADER_LEN: usize = 16;
const XERIAL_BLOCK: usize = 32 * 1024;

impl Compression {
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            _ => return None,
        })
    }

    pub fn id(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        [Compression::None, Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd]
            .into_iter()
            .find(|c| c.name() == name)
    }

    /// Decompresses `data`, which starts at absolute `position`. `legacy_magic0` selects the
    /// broken lz4 header checksum of magic-0 messages (Kafka's KAFKA-3160).
    pub fn decompress(self, data: &[u8], position: usize) -> Result<Vec<u8>> {
        let corrupt = |reason: String| Error::Corrupt { position, reason };
        match self {
            Compression::None => Ok(data.to_vec()),
            Compression::Gzip => read_capped(flate2::read::MultiGzDecoder::new(data))
                .map_err(|e| corrupt(format!("gzip: {e}"))),
            Compression::Snappy => snappy_decompress(data).map_err(|e| corrupt(format!("snappy: {e}"))),
            Compression::Lz4 => lz4_decompress(data).map_err(|e| corrupt(format!("lz4: {e}"))),
            Compression::Zstd => zstd::stream::read::Decoder::new(data)
                .and_then(read_capped)
                .map_err(|e| corrupt(format!("zstd: {e}"))),
        }
    }

    /// Compresses `data` as a Kafka producer or broker would.
    pub fn compress(self, data: &[u8]) -> Vec<u8> {
        match self {
            Compression::None => data.to_vec(),
            Compression::Gzip => {
                let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                enc.write_all(data).and_then(|()| enc.finish()).unwrap_or_default()
            }
            Compression::Snappy => xerial_compress(data),
            Compression::Lz4 => {
                let mut enc = lz4_flex::frame::FrameEncoder::new(Vec::new());
                enc.write_all(data)
                    .map_err(std::io::Error::other)
                    .and_then(|()| enc.finish().map_err(std::io::Error::other))
                    .unwrap_or_default()
            }
            Compression::Zstd => zstd::stream::encode_all(data, 3).unwrap_or_default(),
        }
    }
}

fn read_capped(reader: impl Read) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    reader.take(MAX_DECOMPRESSED as u64 + 1).read_to_end(&mut out)?;
    if out.len() > MAX_DECOMPRESSED {
        return Err(std::io::Error::other(format!(
            "decompresses to more than {MAX_DECOMPRESSED} bytes"
        )));
    }
    Ok(out)
}

fn snappy_decompress(data: &[u8]) -> std::result::Result<Vec<u8>, String> {
    if data.len() >= XERIAL_HEADER_LEN && &data[..8] == XERIAL_MAGIC {
        let mut out = Vec::new();
        let mut rest = &data[XERIAL_HEADER_LEN..];
        while !rest.is_empty() {
            if rest.len() < 4 {
                return Err("truncated xerial block length".into());
            }
            let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            rest = &rest[4..];
            if len > rest.len() {
                return Err(format!("xerial block of {len} bytes, {} left", rest.len()));
            }
            out.extend(snappy_raw(&rest[..len], MAX_DECOMPRESSED - out.len())?);
            rest = &rest[len..];
        }
        Ok(out)
    } else {
        snappy_raw(data, MAX_DECOMPRESSED)
    }
}

fn snappy_raw(block: &[u8], cap: usize) -> std::result::Result<Vec<u8>, String> {
    let len = snap::raw::decompress_len(block).map_err(|e| e.to_string())?;
    if len > cap {
        return Err(format!("block decompresses to {len} bytes, over the limit"));
    }
    snap::raw::Decoder::new().decompress_vec(block).map_err(|e| e.to_string())
}

fn xerial_compress(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 2 + XERIAL_HEADER_LEN);
    out.extend_from_slice(XERIAL_MAGIC);
    out.extend_from_slice(&1i32.to_be_bytes());
    out.extend_from_slice(&1i32.to_be_bytes());
    let mut encoder = snap::raw::Encoder::new();
    for chunk in data.chunks(XERIAL_BLOCK) {
        let block = encoder.compress_vec(chunk).unwrap_or_default();
        out.extend_from_slice(&(block.len() as u32).to_be_bytes());
        out.extend_from_slice(&block);
    }
    out
}

/// lz4 frames. Kafka's magic-0 writers computed the header checksum over the magic too; the
/// frame decoder checks it, so a frame whose checksum is wrong only in that way has its header
/// checksum byte rewritten to the correct one before decoding.
fn lz4_decompress(data: &[u8]) -> std::result::Result<Vec<u8>, String> {
    match read_capped(lz4_flex::frame::FrameDecoder::new(data)) {
        Ok(out) => Ok(out),
        Err(first) => match fix_broken_lz4_header_checksum(data) {
            Some(fixed) => read_capped(lz4_flex::frame::FrameDecoder::new(&fixed[..])).map_err(|e| e.to_string()),
            None => Err(first.to_string()),
        },
    }
}

fn fix_broken_lz4_header_checksum(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < 7 || data[..4] != [0x04, 0x22, 0x4d, 0x18] {
        return None;
    }
    let flg = data[4];
    let descriptor_len = 2 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
    let hc_at = 4 + descriptor_len;
    if data.len() <= hc_at {
        return None;
    }
    let broken = (xxhash32(&data[..hc_at]) >> 8) as u8;
    if data[hc_at] != broken {
        return None;
    }
    let mut fixed = data.to_vec();
    fixed[hc_at] = (xxhash32(&data[4..hc_at]) >> 8) as u8;
    Some(fixed)
}

/// XXH32 with seed 0, for lz4 frame header checksums.
fn xxhash32(data: &[u8]) -> u32 {
    const P1: u32 = 0x9E37_79B1;
    const P2: u32 = 0x85EB_CA77;
    const P3: u32 = 0xC2B2_AE3D;
    const P4: u32 = 0x27D4_EB2F;
    const P5: u32 = 0x1656_67B1;
    let mut chunks = data.chunks_exact(16);
    let mut h = if data.len() >= 16 {
        let mut v = [P1.wrapping_add(P2), P2, 0, 0u32.wrapping_sub(P1)];
        for chunk in &mut chunks {
            for (i, lane) in v.iter_mut().enumerate() {
                let w = u32::from_le_bytes([chunk[4 * i], chunk[4 * i + 1], chunk[4 * i + 2], chunk[4 * i + 3]]);
                *lane = lane.wrapping_add(w.wrapping_mul(P2)).rotate_left(13).wrapping_mul(P1);
            }
        }
        v[0].rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18))
    } else {
        P5
    };
    h = h.wrapping_add(data.len() as u32);
    let tail = chunks.remainder();
    let mut words = tail.chunks_exact(4);
    for w in &mut words {
        let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        h = h.wrapping_add(w.wrapping_mul(P3)).rotate_left(17).wrapping_mul(P4);
    }
    for &b in words.remainder() {
        h = h.wrapping_add(u32::from(b).wrapping_mul(P5)).rotate_left(11).wrapping_mul(P1);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips() {
        let data: Vec<u8> = (0..100_000u32).flat_map(|i| (i % 251).to_be_bytes()).collect();
        for c in [Compression::None, Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd] {
            let packed = c.compress(&data);
            assert_eq!(c.decompress(&packed, 0).unwrap(), data, "{}", c.name());
        }
    }

    #[test]
    fn snappy_reads_xerial_and_raw_blocks() {
        let data = b"hello hello hello hello".repeat(10);
        let xerial = Compression::Snappy.compress(&data);
        assert_eq!(&xerial[..8], XERIAL_MAGIC);
        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(Compression::Snappy.decompress(&raw, 0).unwrap(), data);
        assert_eq!(Compression::Snappy.decompress(&xerial, 0).unwrap(), data);
    }

    #[test]
    fn lz4_header_checksums_of_kafka_frames() {
        // FLG/BD 60/40: the correct header checksum is 0x82, the magic-0 "broken" one 0x1a.
        let magic = [0x04u8, 0x22, 0x4d, 0x18];
        assert_eq!((xxhash32(&[0x60, 0x40]) >> 8) as u8, 0x82);
        assert_eq!((xxhash32(&[magic[0], magic[1], magic[2], magic[3], 0x60, 0x40]) >> 8) as u8, 0x1a);
        let mut frame = magic.to_vec();
        frame.extend_from_slice(&[0x60, 0x40, 0x1a]);
        let payload = b"kafka";
        frame.extend_from_slice(&(payload.len() as u32 | 0x8000_0000).to_le_bytes());
        frame.extend_from_slice(payload);
        frame.extend_from_slice(&[0, 0, 0, 0]);
        assert_eq!(Compression::Lz4.decompress(&frame, 0).unwrap(), payload);
    }

    #[test]
    fn xxhash32_reference_values() {
        assert_eq!(xxhash32(b""), 0x02CC_5D05);
        assert_eq!(xxhash32(b"abc"), 0x32D1_53FF);
        assert_eq!(xxhash32(b"Nobody inspects the spammish repetition"), 0xE229_3B2F);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let garbage: [&[u8]; 4] = [
            b"",
            b"\x00",
            b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\xff\xff\xff\xff",
            b"\x04\x22\x4d\x18\x60\x40\x82\xff\xff\xff\x7f",
        ];
        for c in [Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd] {
            for data in garbage {
                let _ = c.decompress(data, 9);
            }
        }
        assert!(Compression::Gzip.decompress(b"\x00", 9).is_err());
        assert!(Compression::Zstd.decompress(b"\x00", 9).is_err());
        assert!(Compression::Snappy.decompress(garbage[2], 9).is_err());
        let err = Compression::Lz4.decompress(garbage[3], 9).unwrap_err();
        assert_eq!(err.position(), Some(9));
    }
}
