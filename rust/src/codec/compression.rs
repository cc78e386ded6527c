//! The compression codecs of Kafka record batches: gzip, snappy (Kafka's xerial framing on
//! write, xerial or a raw block on read), lz4 (frames; the magic-0 header-checksum quirk on
//! read) and zstd.

use std::io::Write;

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
    lz4_block: Vec<u8>,
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
            Compression::Lz4 => self.unlz4(data, out).map_err(|e| format!("lz4: {e}")),
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

const LZ4_MAGIC: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];
const LZ4_WINDOW: usize = 64 << 10;
const LZ4_FLG_VERSION: u8 = 0xc0;
const LZ4_FLG_INDEPENDENT_BLOCKS: u8 = 0x20;
const LZ4_FLG_BLOCK_CHECKSUMS: u8 = 0x10;
const LZ4_FLG_CONTENT_SIZE: u8 = 0x08;
const LZ4_FLG_CONTENT_CHECKSUM: u8 = 0x04;
const LZ4_FLG_RESERVED: u8 = 0x02;
const LZ4_FLG_DICTIONARY_ID: u8 = 0x01;
const LZ4_BD_RESERVED: u8 = 0x8f;
const LZ4_UNCOMPRESSED_BLOCK: u32 = 0x8000_0000;

/// The descriptor of one lz4 frame (FLG, BD and what they announce).
struct Lz4Frame {
    flags: u8,
    max_block: usize,
    content_size: Option<u64>,
}

impl Lz4Frame {
    /// Reads a frame's header, returning the frame and the bytes after it. The header checksum
    /// may also be the one Kafka's magic-0 writers computed, over the magic too.
    fn read(data: &[u8]) -> std::result::Result<(Self, &[u8]), String> {
        let [m0, m1, m2, m3, flags, bd, ..] = *data else {
            return Err("truncated frame header".into());
        };
        if [m0, m1, m2, m3] != LZ4_MAGIC {
            return Err("not an lz4 frame (wrong magic number)".into());
        }
        if flags & LZ4_FLG_VERSION != 0x40 {
            return Err(format!("frame version {} is not 1", flags >> 6));
        }
        if flags & LZ4_FLG_RESERVED != 0 || bd & LZ4_BD_RESERVED != 0 {
            return Err("reserved bits set in the frame descriptor".into());
        }
        if flags & LZ4_FLG_DICTIONARY_ID != 0 {
            return Err("frames with a dictionary id are not supported".into());
        }
        let max_block = match bd >> 4 {
            4 => 64 << 10,
            5 => 256 << 10,
            6 => 1 << 20,
            7 => 4 << 20,
            code => return Err(format!("block size code {code} is not 4 to 7")),
        };
        let descriptor_len = if flags & LZ4_FLG_CONTENT_SIZE != 0 {
            10
        } else {
            2
        };
        let (Some(descriptor), Some(&checksum)) = (
            data.get(4..4 + descriptor_len),
            data.get(4 + descriptor_len),
        ) else {
            return Err("truncated frame header".into());
        };
        let content_size = (flags & LZ4_FLG_CONTENT_SIZE != 0)
            .then(|| u64::from_le_bytes(descriptor[2..10].try_into().expect("eight bytes")));
        let header = &data[..4 + descriptor_len];
        if checksum != (xxhash32(descriptor) >> 8) as u8
            && checksum != (xxhash32(header) >> 8) as u8
        {
            return Err("frame header checksum mismatch".into());
        }
        let frame = Lz4Frame {
            flags,
            max_block,
            content_size,
        };
        Ok((frame, &data[header.len() + 1..]))
    }

    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

impl Decompressor {
    /// lz4 frames, one after another; skippable frames are skipped. Each block is decompressed
    /// into a scratch buffer kept between calls and appended to `out`, so a batch allocates and
    /// zeroes nothing. Linked blocks (which Kafka's own reader refuses) see the frame's output
    /// so far, up to lz4's 64 KiB window, as their dictionary.
    fn unlz4(&mut self, mut data: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), String> {
        let cap = out.len() + MAX_DECOMPRESSED;
        while !data.is_empty() {
            if let [0x50..=0x5f, 0x2a, 0x4d, 0x18, a, b, c, d, ref rest @ ..] = *data {
                let len = u32::from_le_bytes([a, b, c, d]) as usize;
                data = rest.get(len..).ok_or("truncated skippable frame")?;
                continue;
            }
            let (frame, rest) = Lz4Frame::read(data)?;
            data = self.lz4_blocks(&frame, rest, out, cap)?;
        }
        Ok(())
    }

    /// The blocks of one frame up to its end mark and content checksum; returns what follows.
    fn lz4_blocks<'a>(
        &mut self,
        frame: &Lz4Frame,
        mut data: &'a [u8],
        out: &mut Vec<u8>,
        cap: usize,
    ) -> std::result::Result<&'a [u8], String> {
        let frame_start = out.len();
        if self.lz4_block.len() < frame.max_block {
            self.lz4_block.resize(frame.max_block, 0);
        }
        let checksum_len = if frame.has(LZ4_FLG_BLOCK_CHECKSUMS) {
            4
        } else {
            0
        };
        loop {
            let [a, b, c, d, ref rest @ ..] = *data else {
                return Err("truncated block size".into());
            };
            let size = u32::from_le_bytes([a, b, c, d]);
            if size == 0 {
                data = rest;
                break;
            }
            let len = (size & !LZ4_UNCOMPRESSED_BLOCK) as usize;
            if len > frame.max_block {
                return Err(format!(
                    "block of {len} bytes, over the frame's maximum of {}",
                    frame.max_block
                ));
            }
            let (Some(block), Some(after)) = (rest.get(..len), rest.get(len + checksum_len..))
            else {
                return Err(format!("truncated block of {len} bytes"));
            };
            if checksum_len != 0 && rest[len..len + 4] != xxhash32(block).to_le_bytes() {
                return Err("block checksum mismatch".into());
            }
            let produced = if size & LZ4_UNCOMPRESSED_BLOCK != 0 {
                block
            } else {
                let scratch = &mut self.lz4_block[..frame.max_block];
                let written = if frame.has(LZ4_FLG_INDEPENDENT_BLOCKS) {
                    lz4_flex::block::decompress_into(block, scratch)
                } else {
                    let dictionary = &out[frame_start.max(out.len().saturating_sub(LZ4_WINDOW))..];
                    lz4_flex::block::decompress_into_with_dict(block, scratch, dictionary)
                }
                .map_err(|e| e.to_string())?;
                &self.lz4_block[..written]
            };
            if produced.len() > cap - out.len() {
                return Err(format!(
                    "decompresses to more than {MAX_DECOMPRESSED} bytes"
                ));
            }
            out.extend_from_slice(produced);
            data = after;
        }
        let content = &out[frame_start..];
        if frame
            .content_size
            .is_some_and(|size| size != content.len() as u64)
        {
            return Err(format!(
                "frame holds {} bytes, its header says {}",
                content.len(),
                frame.content_size.unwrap_or_default()
            ));
        }
        if frame.has(LZ4_FLG_CONTENT_CHECKSUM) {
            let [a, b, c, d, ref rest @ ..] = *data else {
                return Err("truncated content checksum".into());
            };
            if xxhash32(content) != u32::from_le_bytes([a, b, c, d]) {
                return Err("content checksum mismatch".into());
            }
            data = rest;
        }
        Ok(data)
    }
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

    /// lz4_flex's own frame decoder, the reference for ours.
    fn lz4_reference(frame: &[u8]) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let mut out = Vec::new();
        lz4_flex::frame::FrameDecoder::new(frame).read_to_end(&mut out)?;
        Ok(out)
    }

    fn lz4_frame(data: &[u8], info: lz4_flex::frame::FrameInfo) -> Vec<u8> {
        let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    /// Records-like data over several 64 KiB blocks, with repeats across blocks, so linked
    /// blocks reach back into the ones before.
    fn lz4_sample() -> Vec<u8> {
        (0..30_000u32)
            .flat_map(|i| format!("group-{} topic-{} {i}|", i % 7, i % 13).into_bytes())
            .collect()
    }

    #[test]
    fn lz4_frames_of_every_layout_decode_as_lz4_flex_decodes_them() {
        use lz4_flex::frame::{BlockMode, BlockSize, FrameInfo};
        let data = lz4_sample();
        assert!(data.len() > 4 * (64 << 10));
        for mode in [BlockMode::Independent, BlockMode::Linked] {
            for size in [BlockSize::Max64KB, BlockSize::Max256KB, BlockSize::Max4MB] {
                for (block_checksums, content_checksum, content_size) in [
                    (false, false, None),
                    (true, false, None),
                    (false, true, None),
                    (true, true, Some(data.len() as u64)),
                ] {
                    let info = FrameInfo::new()
                        .block_mode(mode)
                        .block_size(size)
                        .block_checksums(block_checksums)
                        .content_checksum(content_checksum)
                        .content_size(content_size);
                    let frame = lz4_frame(&data, info);
                    let case = format!("{mode:?} {size:?} {block_checksums} {content_checksum}");
                    assert_eq!(lz4_reference(&frame).unwrap(), data, "{case}");
                    assert_eq!(
                        Compression::Lz4.decompress(&frame, 0).unwrap(),
                        data,
                        "{case}"
                    );
                }
            }
        }
    }

    #[test]
    fn lz4_reads_frames_one_after_another_and_skips_skippable_ones() {
        let first = Compression::Lz4.compress(b"first frame;");
        let second = Compression::Lz4.compress(b"second frame");
        let mut log = first.clone();
        log.extend_from_slice(&[0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
        log.extend_from_slice(&second);
        let mut out = b"before|".to_vec();
        Decompressor::default()
            .decompress_into(Compression::Lz4, &log, 0, &mut out)
            .unwrap();
        assert_eq!(out, b"before|first frame;second frame");
        assert!(Compression::Lz4.decompress(&[], 0).unwrap().is_empty());
    }

    #[test]
    fn lz4_damage_is_an_error_where_lz4_flex_also_fails() {
        use lz4_flex::frame::{BlockMode, FrameInfo};
        let data = lz4_sample();
        for info in [
            FrameInfo::new()
                .block_checksums(true)
                .content_checksum(true),
            FrameInfo::new().block_mode(BlockMode::Linked),
        ] {
            let frame = lz4_frame(&data[..100_000], info);
            let cut = (1..frame.len())
                .step_by(97)
                .chain(frame.len() - 5..frame.len());
            for at in cut {
                let truncated = &frame[..at];
                let ours = Compression::Lz4.decompress(truncated, 7);
                assert!(ours.is_err(), "cut at {at} of {}", frame.len());
                assert_eq!(ours.unwrap_err().position(), Some(7));
            }
            let mut flips = 0;
            for at in (0..frame.len()).step_by(61) {
                let mut damaged = frame.clone();
                damaged[at] ^= 0x5a;
                match (
                    Compression::Lz4.decompress(&damaged, 0),
                    lz4_reference(&damaged),
                ) {
                    (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "byte {at}"),
                    (Err(_), Err(_)) => {}
                    (ours, theirs) => {
                        flips += 1;
                        eprintln!(
                            "byte {at}: ours {:?}, lz4_flex {:?}",
                            ours.map(|v| v.len()),
                            theirs.map(|v| v.len())
                        );
                    }
                }
            }
            assert_eq!(flips, 0);
        }
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
