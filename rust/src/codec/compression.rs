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
        [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }

    /// Decompresses `data`, which starts at absolute `position`, into a new buffer.
    pub fn decompress(self, data: &[u8], position: usize) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        Decompressor::default().decompress_into(self, data, position, &mut out)?;
        Ok(out)
    }

    /// Compresses `data` as a Kafka producer or broker would.
    pub fn compress(self, data: &[u8]) -> Vec<u8> {
        match self {
            Compression::None => data.to_vec(),
            Compression::Gzip => {
                let mut enc =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                enc.write_all(data)
                    .and_then(|()| enc.finish())
                    .unwrap_or_default()
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

/// Decompresses batch after batch, reusing its codec state (inflate window, zstd context)
/// from one call to the next; output goes to a buffer the caller also reuses.
#[derive(Default)]
pub struct Decompressor {
    inflate: Option<flate2::Decompress>,
    zstd: Option<zstd::zstd_safe::DCtx<'static>>,
}

impl Decompressor {
    /// Appends the decompression of `data` (which starts at absolute `position`) to `out`.
    /// More than [`MAX_DECOMPRESSED`] bytes is an error.
    pub fn decompress_into(
        &mut self,
        compression: Compression,
        data: &[u8],
        position: usize,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let start = out.len();
        let result = match compression {
            Compression::None => {
                out.extend_from_slice(data);
                Ok(())
            }
            Compression::Gzip => self.gunzip(data, out).map_err(|e| format!("gzip: {e}")),
            Compression::Snappy => snappy_decompress(data, out).map_err(|e| format!("snappy: {e}")),
            Compression::Lz4 => lz4_decompress(data, out).map_err(|e| format!("lz4: {e}")),
            Compression::Zstd => self.unzstd(data, out).map_err(|e| format!("zstd: {e}")),
        };
        let result = result.and_then(|()| match out.len() - start {
            n if n > MAX_DECOMPRESSED => Err(format!(
                "{}: decompresses to more than {MAX_DECOMPRESSED} bytes",
                compression.name()
            )),
            _ => Ok(()),
        });
        result.map_err(|reason| {
            out.truncate(start);
            Error::Corrupt { position, reason }
        })
    }

    /// gzip members (RFC 1952), one after another: header, deflate stream, CRC-32 and size.
    fn gunzip(&mut self, mut data: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), String> {
        let inflate = self
            .inflate
            .get_or_insert_with(|| flate2::Decompress::new(false));
        let cap = out.len() + MAX_DECOMPRESSED;
        loop {
            data = skip_gzip_header(data)?;
            inflate.reset(false);
            let member_start = out.len();
            loop {
                reserve_capped(out, data.len().saturating_mul(4), cap)?;
                let (consumed, produced) = (inflate.total_in(), out.len());
                let status = inflate
                    .decompress_vec(data, out, flate2::FlushDecompress::None)
                    .map_err(|e| e.to_string())?;
                let used = usize::try_from(inflate.total_in() - consumed)
                    .unwrap_or(usize::MAX)
                    .min(data.len());
                data = &data[used..];
                if status == flate2::Status::StreamEnd {
                    break;
                }
                if used == 0 && out.len() == produced && out.len() < out.capacity() {
                    return Err("truncated deflate stream".into());
                }
            }
            let [c0, c1, c2, c3, s0, s1, s2, s3, ref rest @ ..] = *data else {
                return Err("truncated gzip trailer".into());
            };
            let member = &out[member_start..];
            if crc32fast::hash(member) != u32::from_le_bytes([c0, c1, c2, c3]) {
                return Err("CRC-32 mismatch in gzip trailer".into());
            }
            if member.len() as u32 != u32::from_le_bytes([s0, s1, s2, s3]) {
                return Err("size mismatch in gzip trailer".into());
            }
            data = rest;
            if data.is_empty() {
                return Ok(());
            }
        }
    }

    /// zstd frames, one after another (producers stream them, so they rarely carry their size).
    fn unzstd(&mut self, data: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), String> {
        use zstd::zstd_safe::{DCtx, InBuffer, OutBuffer, ResetDirective};
        if self.zstd.is_none() {
            self.zstd = Some(DCtx::try_create().ok_or("cannot allocate a decompression context")?);
        }
        let Some(ctx) = self.zstd.as_mut() else {
            unreachable!("created above")
        };
        ctx.reset(ResetDirective::SessionOnly).map_err(zstd_error)?;
        let cap = out.len() + MAX_DECOMPRESSED;
        let mut input = InBuffer::around(data);
        loop {
            reserve_capped(out, data.len().saturating_mul(4), cap)?;
            let before = (input.pos(), out.len());
            let pos = out.len();
            let hint = ctx
                .decompress_stream(&mut OutBuffer::around_pos(out, pos), &mut input)
                .map_err(zstd_error)?;
            if hint == 0 && input.pos() == data.len() {
                return Ok(());
            }
            if (input.pos(), out.len()) == before && out.len() < out.capacity() {
                return Err("truncated frame".into());
            }
        }
    }
}

fn zstd_error(code: usize) -> String {
    zstd::zstd_safe::get_error_name(code).to_owned()
}

/// Makes room in `out` for about `want` more bytes, never past `cap` in total.
fn reserve_capped(out: &mut Vec<u8>, want: usize, cap: usize) -> std::result::Result<(), String> {
    if out.capacity() - out.len() >= 4096 {
        return Ok(());
    }
    if out.len() >= cap {
        return Err(format!(
            "decompresses to more than {MAX_DECOMPRESSED} bytes"
        ));
    }
    out.reserve(want.max(out.len()).max(32 << 10).min(cap - out.len()));
    Ok(())
}

/// The bytes after a gzip member's header.
fn skip_gzip_header(data: &[u8]) -> std::result::Result<&[u8], String> {
    const FHCRC: u8 = 0x02;
    const FEXTRA: u8 = 0x04;
    const FNAME: u8 = 0x08;
    const FCOMMENT: u8 = 0x10;
    let truncated = || "truncated header".to_owned();
    let [0x1f, 0x8b, method, flags, _, _, _, _, _, _, ref rest @ ..] = *data else {
        return Err(if data.len() < 10 {
            truncated()
        } else {
            "not a gzip member".into()
        });
    };
    if method != 8 {
        return Err(format!("compression method {method} is not deflate"));
    }
    let mut rest = rest;
    if flags & FEXTRA != 0 {
        let [a, b, ref tail @ ..] = *rest else {
            return Err(truncated());
        };
        rest = tail
            .get(usize::from(u16::from_le_bytes([a, b]))..)
            .ok_or_else(truncated)?;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let end = rest.iter().position(|&b| b == 0).ok_or_else(truncated)?;
            rest = &rest[end + 1..];
        }
    }
    if flags & FHCRC != 0 {
        rest = rest.get(2..).ok_or_else(truncated)?;
    }
    Ok(rest)
}

fn snappy_decompress(data: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), String> {
    let cap = out.len() + MAX_DECOMPRESSED;
    if data.len() >= XERIAL_HEADER_LEN && &data[..8] == XERIAL_MAGIC {
        let mut rest = &data[XERIAL_HEADER_LEN..];
        while !rest.is_empty() {
            let [a, b, c, d, ref tail @ ..] = *rest else {
                return Err("truncated xerial block length".into());
            };
            let len = u32::from_be_bytes([a, b, c, d]) as usize;
            if len > tail.len() {
                return Err(format!("xerial block of {len} bytes, {} left", tail.len()));
            }
            snappy_raw(&tail[..len], out, cap)?;
            rest = &tail[len..];
        }
        Ok(())
    } else {
        snappy_raw(data, out, cap)
    }
}

fn snappy_raw(block: &[u8], out: &mut Vec<u8>, cap: usize) -> std::result::Result<(), String> {
    let len = snap::raw::decompress_len(block).map_err(|e| e.to_string())?;
    let start = out.len();
    if len > cap - start {
        return Err(format!("block decompresses to {len} bytes, over the limit"));
    }
    out.resize(start + len, 0);
    let written = snap::raw::Decoder::new()
        .decompress(block, &mut out[start..])
        .map_err(|e| e.to_string())?;
    out.truncate(start + written);
    Ok(())
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
fn lz4_decompress(data: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), String> {
    let start = out.len();
    let read = |frame: &[u8], out: &mut Vec<u8>| -> std::io::Result<()> {
        lz4_flex::frame::FrameDecoder::new(frame)
            .take(MAX_DECOMPRESSED as u64 + 1)
            .read_to_end(out)?;
        if out.len() - start > MAX_DECOMPRESSED {
            return Err(std::io::Error::other(format!(
                "decompresses to more than {MAX_DECOMPRESSED} bytes"
            )));
        }
        Ok(())
    };
    match read(data, out) {
        Ok(()) => Ok(()),
        Err(first) => {
            out.truncate(start);
            match fix_broken_lz4_header_checksum(data) {
                Some(fixed) => read(&fixed, out).map_err(|e| e.to_string()),
                None => Err(first.to_string()),
            }
        }
    }
}

fn fix_broken_lz4_header_checksum(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < 7 || data[..4] != [0x04, 0x22, 0x4d, 0x18] {
        return None;
    }
    let flg = data[4];
    let descriptor_len =
        2 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
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
                let w = u32::from_le_bytes([
                    chunk[4 * i],
                    chunk[4 * i + 1],
                    chunk[4 * i + 2],
                    chunk[4 * i + 3],
                ]);
                *lane = lane
                    .wrapping_add(w.wrapping_mul(P2))
                    .rotate_left(13)
                    .wrapping_mul(P1);
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
        h = h
            .wrapping_add(w.wrapping_mul(P3))
            .rotate_left(17)
            .wrapping_mul(P4);
    }
    for &b in words.remainder() {
        h = h
            .wrapping_add(u32::from(b).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
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
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_be_bytes())
            .collect();
        for c in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
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
        assert_eq!(
            (xxhash32(&[magic[0], magic[1], magic[2], magic[3], 0x60, 0x40]) >> 8) as u8,
            0x1a
        );
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
        assert_eq!(
            xxhash32(b"Nobody inspects the spammish repetition"),
            0xE229_3B2F
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let garbage: [&[u8]; 4] = [
            b"",
            b"\x00",
            b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01\xff\xff\xff\xff",
            b"\x04\x22\x4d\x18\x60\x40\x82\xff\xff\xff\x7f",
        ];
        for c in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
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
