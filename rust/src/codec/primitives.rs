//! Kafka's primitive encodings: big-endian fixed-width integers, zigzag varints (record
//! fields), unsigned varints (compact lengths, tags), strings, bytes and tagged-field
//! sections.
//!
//! [`Reader`] is a cursor over a byte slice that knows the absolute position of its first
//! byte, so every error names where in the file or buffer it happened. No read panics: every
//! length is checked against what remains before anything is sliced or allocated.

use crate::error::{Error, Result};

/// A cursor over `data`, whose first byte sits at absolute position `base`.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    base: usize,
}

macro_rules! read_be {
    ($name:ident, $t:ty, $what:literal) => {
        #[inline]
        pub fn $name(&mut self) -> Result<$t> {
            let bytes = self.take(std::mem::size_of::<$t>(), $what)?;
            let mut buf = [0u8; std::mem::size_of::<$t>()];
            buf.copy_from_slice(bytes);
            Ok(<$t>::from_be_bytes(buf))
        }
    };
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8], base: usize) -> Self {
        Reader { data, pos: 0, base }
    }

    /// Absolute position of the next byte.
    pub fn position(&self) -> usize {
        self.base + self.pos
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// An error at the current position.
    pub fn corrupt(&self, reason: impl Into<String>) -> Error {
        Error::Corrupt {
            position: self.position(),
            reason: reason.into(),
        }
    }

    /// The next `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.truncated(n, what));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    #[cold]
    #[inline(never)]
    fn truncated(&self, needed: usize, what: &str) -> Error {
        Error::Truncated {
            position: self.position(),
            needed,
            available: self.remaining(),
            what: what.to_owned(),
        }
    }

    /// A reader over the next `n` bytes, advancing past them.
    pub fn sub(&mut self, n: usize, what: &str) -> Result<Reader<'a>> {
        let base = self.position();
        Ok(Reader::new(self.take(n, what)?, base))
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let out = &self.data[self.pos..];
        self.pos = self.data.len();
        out
    }

    read_be!(i8, i8, "int8");
    read_be!(i16, i16, "int16");
    read_be!(i32, i32, "int32");
    read_be!(i64, i64, "int64");
    read_be!(u32, u32, "uint32");

    /// An unsigned LEB128 varint of at most 5 bytes (Kafka's `readUnsignedVarint`).
    #[inline(always)]
    pub fn uvarint(&mut self) -> Result<u32> {
        let start = self.position();
        let mut value: u32 = 0;
        for i in 0..5 {
            let b = self.take(1, "unsigned varint")?[0];
            value |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                if i == 4 && b > 0x0f {
                    break;
                }
                return Ok(value);
            }
        }
        Err(Error::Corrupt {
            position: start,
            reason: "unsigned varint longer than 5 bytes or above 32 bits".into(),
        })
    }

    fn uvarlong(&mut self) -> Result<u64> {
        let start = self.position();
        let mut value: u64 = 0;
        for i in 0..10 {
            let b = self.take(1, "varlong")?[0];
            value |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                if i == 9 && b > 0x01 {
                    break;
                }
                return Ok(value);
            }
        }
        Err(Error::Corrupt {
            position: start,
            reason: "varlong longer than 10 bytes".into(),
        })
    }

    /// A zigzag varint (record fields of magic 2).
    #[inline(always)]
    pub fn varint(&mut self) -> Result<i32> {
        let u = self.uvarint()?;
        Ok(((u >> 1) as i32) ^ -((u & 1) as i32))
    }

    /// A zigzag varlong.
    pub fn varlong(&mut self) -> Result<i64> {
        let u = self.uvarlong()?;
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    /// A length-prefixed field: `len` from the prefix, -1 meaning null.
    #[inline]
    fn sized(&mut self, len: i64, what: &str) -> Result<Option<&'a [u8]>> {
        if len == -1 {
            return Ok(None);
        }
        match usize::try_from(len) {
            Ok(n) => self.take(n, what).map(Some),
            Err(_) => Err(self.bad_length(len, what)),
        }
    }

    #[cold]
    #[inline(never)]
    fn bad_length(&self, len: i64, what: &str) -> Error {
        if len < 0 {
            self.corrupt(format!("negative length {len} for {what}"))
        } else {
            self.corrupt(format!("length {len} of {what} too large"))
        }
    }

    /// `string` (int16 length) or compact string, nullable, borrowed.
    #[inline(always)]
    pub fn nullable_str(&mut self, compact: bool) -> Result<Option<&'a str>> {
        let len = if compact {
            i64::from(self.uvarint()?) - 1
        } else {
            i64::from(self.i16()?)
        };
        let start = self.position();
        match self.sized(len, "string")? {
            None => Ok(None),
            Some(bytes) => utf8(bytes).map(Some).map_err(|e| Error::Corrupt {
                position: start,
                reason: format!("invalid UTF-8 in string: {e}"),
            }),
        }
    }

    /// A non-nullable string, borrowed.
    #[inline(always)]
    pub fn str(&mut self, compact: bool) -> Result<&'a str> {
        let start = self.position();
        self.nullable_str(compact)?.ok_or_else(|| Error::Corrupt {
            position: start,
            reason: "null in a non-nullable string".into(),
        })
    }

    /// `string` (int16 length) or compact string, nullable.
    pub fn nullable_string(&mut self, compact: bool) -> Result<Option<String>> {
        Ok(self.nullable_str(compact)?.map(str::to_owned))
    }

    /// A non-nullable string.
    pub fn string(&mut self, compact: bool) -> Result<String> {
        self.str(compact).map(str::to_owned)
    }

    /// `bytes` (int32 length) or compact bytes, nullable, borrowed.
    #[inline(always)]
    pub fn nullable_byte_slice(&mut self, compact: bool) -> Result<Option<&'a [u8]>> {
        let len = if compact {
            i64::from(self.uvarint()?) - 1
        } else {
            i64::from(self.i32()?)
        };
        self.sized(len, "bytes")
    }

    /// Non-nullable bytes, borrowed.
    #[inline(always)]
    pub fn byte_slice(&mut self, compact: bool) -> Result<&'a [u8]> {
        let start = self.position();
        self.nullable_byte_slice(compact)?
            .ok_or_else(|| Error::Corrupt {
                position: start,
                reason: "null in non-nullable bytes".into(),
            })
    }

    /// `bytes` (int32 length) or compact bytes, nullable.
    pub fn nullable_bytes(&mut self, compact: bool) -> Result<Option<Vec<u8>>> {
        Ok(self.nullable_byte_slice(compact)?.map(<[u8]>::to_vec))
    }

    pub fn bytes(&mut self, compact: bool) -> Result<Vec<u8>> {
        self.byte_slice(compact).map(<[u8]>::to_vec)
    }

    /// An array count (int32 or compact), -1/null as `None`. The count is checked against
    /// the bytes left, assuming each element takes at least `min_element_size` bytes.
    pub fn array_len(&mut self, compact: bool, min_element_size: usize) -> Result<Option<usize>> {
        let start = self.position();
        let n = if compact {
            i64::from(self.uvarint()?) - 1
        } else {
            i64::from(self.i32()?)
        };
        if n == -1 {
            return Ok(None);
        }
        let too_many = n < 0
            || (n as u64).saturating_mul(min_element_size.max(1) as u64) > self.remaining() as u64;
        if too_many {
            return Err(Error::Corrupt {
                position: start,
                reason: format!(
                    "array count {n} does not fit the {} bytes left",
                    self.remaining()
                ),
            });
        }
        Ok(Some(n as usize))
    }

    /// A non-nullable array count.
    pub fn array(&mut self, compact: bool, min_element_size: usize) -> Result<usize> {
        let start = self.position();
        self.array_len(compact, min_element_size)?
            .ok_or_else(|| Error::Corrupt {
                position: start,
                reason: "null in a non-nullable array".into(),
            })
    }

    /// A tagged-field section of a struct that declares no tagged fields: every field in it
    /// is unknown to this codec, kept as read.
    pub fn tagged_section(&mut self) -> Result<TaggedSection<'a>> {
        let start = self.pos;
        let count = self.uvarint()?;
        for _ in 0..count {
            let _tag = self.uvarint()?;
            let size = self.uvarint()? as usize;
            self.take(size, "tagged field")?;
        }
        Ok(TaggedSection {
            raw: &self.data[start..self.pos],
            declared: None,
        })
    }

    pub fn uuid(&mut self) -> Result<[u8; 16]> {
        let mut out = [0u8; 16];
        out.copy_from_slice(self.take(16, "uuid")?);
        Ok(out)
    }
}

/// Tagged fields a struct's schema does not declare, as `(tag, bytes)` in the order they were
/// read. Kafka's readers keep them and its writers write them back; so do this codec's.
pub type UnknownTaggedFields = Vec<(u32, Vec<u8>)>;

/// A tagged-field section as it lies in the input, checked by the [`Reader`] that returned it
/// (the only way to make one): the count, then each field's tag, size and bytes. Its fields
/// are those the struct's schema does not declare: a declared one, once taken
/// ([`TaggedSection::take_declared`]), is left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaggedSection<'a> {
    raw: &'a [u8],
    declared: Option<u32>,
}

impl<'a> TaggedSection<'a> {
    /// True when the section holds no field (or the struct had no section).
    pub fn is_empty(&self) -> bool {
        self.raw.len() <= 1 || self.fields().next().is_none()
    }

    /// Each undeclared field's tag and bytes.
    pub fn fields(&self) -> impl Iterator<Item = (u32, &'a [u8])> {
        let mut r = Reader::new(self.raw, 0);
        let count = if self.raw.len() <= 1 {
            0
        } else {
            r.uvarint().unwrap_or(0)
        };
        let declared = self.declared;
        // The reader that made the section checked it, so no read below fails.
        (0..count)
            .map_while(move |_| {
                let tag = r.uvarint().ok()?;
                let size = r.uvarint().ok()? as usize;
                Some((tag, r.take(size, "tagged field").ok()?))
            })
            .filter(move |(tag, _)| Some(*tag) != declared)
    }

    /// The bytes of the field tagged `tag`, one the struct's schema declares, if the section
    /// holds it; from then on [`TaggedSection::fields`] leaves that tag out.
    pub fn take_declared(&mut self, tag: u32) -> Option<&'a [u8]> {
        let bytes = self.fields().find(|(t, _)| *t == tag).map(|(_, b)| b);
        self.declared = Some(tag);
        bytes
    }

    pub fn to_owned(&self) -> UnknownTaggedFields {
        self.fields().map(|(tag, b)| (tag, b.to_vec())).collect()
    }
}

/// Refuses tagged fields Kafka's writers refuse: tags that do not strictly increase, and tags
/// above Java's largest `int` (which a Kafka reader takes for negative numbers).
pub fn check_tags(fields: &[(u32, Vec<u8>)]) -> Result<()> {
    if let Some((tag, _)) = fields.iter().find(|(tag, _)| *tag > i32::MAX as u32) {
        return Err(Error::InvalidArgument(format!(
            "tagged field {tag} is above the largest tag Kafka writes, {}",
            i32::MAX
        )));
    }
    match fields.windows(2).find(|pair| pair[0].0 >= pair[1].0) {
        Some(pair) => Err(Error::InvalidArgument(format!(
            "tagged field {} follows tagged field {}: tags must be strictly increasing",
            pair[1].0, pair[0].0
        ))),
        None => Ok(()),
    }
}

/// True when every byte is below 0x80. Names in this log are short: a word (or two
/// overlapping words) at a time with no byte loop for the tail, which is where the standard
/// check spends a name's time.
#[inline]
fn is_ascii(bytes: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("eight bytes"));
    let n = bytes.len();
    if n >= 8 {
        let tail = word(&bytes[n - 8..]);
        let high = bytes
            .chunks_exact(8)
            .fold(tail, |high, chunk| high | word(chunk));
        high & HIGH == 0
    } else if n >= 4 {
        let half = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("four bytes"));
        (half(&bytes[..4]) | half(&bytes[n - 4..])) & 0x8080_8080 == 0
    } else {
        bytes.iter().fold(0, |high, &b| high | b) < 0x80
    }
}

/// `bytes` as a string if they are UTF-8. Names in this log are nearly always ASCII, which
/// [`is_ascii`] checks; anything else goes through the full check.
pub fn utf8(bytes: &[u8]) -> std::result::Result<&str, std::str::Utf8Error> {
    if is_ascii(bytes) {
        // SAFETY: ASCII is valid UTF-8.
        Ok(unsafe { std::str::from_utf8_unchecked(bytes) })
    } else {
        std::str::from_utf8(bytes)
    }
}

/// Appends Kafka encodings to a `Vec<u8>`.
pub trait Writer {
    fn put_i8(&mut self, v: i8);
    fn put_i16(&mut self, v: i16);
    fn put_i32(&mut self, v: i32);
    fn put_i64(&mut self, v: i64);
    fn put_u32(&mut self, v: u32);
    fn put_uvarint(&mut self, v: u32);
    fn put_varint(&mut self, v: i32);
    fn put_varlong(&mut self, v: i64);
    /// Fails on a string over 32,767 bytes, which no STRING length prefix holds (Kafka's
    /// writers refuse it too, compact or not).
    fn put_nullable_string(&mut self, v: Option<&str>, compact: bool) -> Result<()>;
    fn put_string(&mut self, v: &str, compact: bool) -> Result<()>;
    fn put_nullable_bytes(&mut self, v: Option<&[u8]>, compact: bool) -> Result<()>;
    fn put_array_len(&mut self, n: usize, compact: bool);
    /// A tagged-field section of `fields`, which Kafka requires in strictly increasing tag
    /// order (its writers refuse any other, as this one does).
    fn put_tagged_fields(&mut self, fields: &[(u32, Vec<u8>)]) -> Result<()>;
    /// A tagged-field section of `fields` in the order given, whatever it is: not one Kafka
    /// writes unless [`check_tags`] accepts it.
    fn put_tagged_fields_as_given(&mut self, fields: &[(u32, Vec<u8>)]) -> Result<()>;
}

impl Writer for Vec<u8> {
    fn put_i8(&mut self, v: i8) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_i16(&mut self, v: i16) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_i32(&mut self, v: i32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_i64(&mut self, v: i64) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_be_bytes());
    }
    fn put_uvarint(&mut self, mut v: u32) {
        while v >= 0x80 {
            self.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.push(v as u8);
    }
    fn put_varint(&mut self, v: i32) {
        self.put_uvarint(((v << 1) ^ (v >> 31)) as u32);
    }
    fn put_varlong(&mut self, v: i64) {
        let mut u = ((v << 1) ^ (v >> 63)) as u64;
        while u >= 0x80 {
            self.push((u as u8) | 0x80);
            u >>= 7;
        }
        self.push(u as u8);
    }
    fn put_nullable_string(&mut self, v: Option<&str>, compact: bool) -> Result<()> {
        self.put_nullable_bytes_with(v.map(str::as_bytes), compact, true)
    }
    fn put_string(&mut self, v: &str, compact: bool) -> Result<()> {
        self.put_nullable_string(Some(v), compact)
    }
    fn put_nullable_bytes(&mut self, v: Option<&[u8]>, compact: bool) -> Result<()> {
        self.put_nullable_bytes_with(v, compact, false)
    }
    fn put_array_len(&mut self, n: usize, compact: bool) {
        if compact {
            self.put_uvarint(n as u32 + 1);
        } else {
            self.put_i32(n as i32);
        }
    }
    fn put_tagged_fields(&mut self, fields: &[(u32, Vec<u8>)]) -> Result<()> {
        check_tags(fields)?;
        self.put_tagged_fields_as_given(fields)
    }
    fn put_tagged_fields_as_given(&mut self, fields: &[(u32, Vec<u8>)]) -> Result<()> {
        self.put_uvarint(fields.len() as u32);
        for (tag, bytes) in fields {
            let size = u32::try_from(bytes.len())
                .ok()
                .filter(|&n| n <= i32::MAX as u32)
                .ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "tagged field {tag} of {} bytes is too long to be serialized",
                        bytes.len()
                    ))
                })?;
            self.put_uvarint(*tag);
            self.put_uvarint(size);
            self.extend_from_slice(bytes);
        }
        Ok(())
    }
}

trait SizedWriter {
    fn put_nullable_bytes_with(
        &mut self,
        v: Option<&[u8]>,
        compact: bool,
        int16_len: bool,
    ) -> Result<()>;
}

impl SizedWriter for Vec<u8> {
    fn put_nullable_bytes_with(
        &mut self,
        v: Option<&[u8]>,
        compact: bool,
        int16_len: bool,
    ) -> Result<()> {
        let Some(b) = v else {
            match (compact, int16_len) {
                (true, _) => self.put_uvarint(0),
                (false, true) => self.put_i16(-1),
                (false, false) => self.put_i32(-1),
            }
            return Ok(());
        };
        let max = if int16_len {
            i16::MAX as usize
        } else {
            i32::MAX as usize - 1
        };
        if b.len() > max {
            let what = if int16_len {
                "a string"
            } else {
                "a bytes field"
            };
            return Err(Error::InvalidArgument(format!(
                "{what} of {} bytes is too long to be serialized (at most {max})",
                b.len()
            )));
        }
        match (compact, int16_len) {
            (true, _) => self.put_uvarint(b.len() as u32 + 1),
            (false, true) => self.put_i16(b.len() as i16),
            (false, false) => self.put_i32(b.len() as i32),
        }
        self.extend_from_slice(b);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_vectors() {
        for (v, bytes) in [
            (-1i32, vec![0x01]),
            (0, vec![0x00]),
            (1, vec![0x02]),
            (70, vec![0x8c, 0x01]),
        ] {
            let mut out = Vec::new();
            out.put_varint(v);
            assert_eq!(out, bytes, "encode {v}");
            assert_eq!(Reader::new(&bytes, 0).varint().unwrap(), v, "decode {v}");
        }
        for v in [i64::MIN, -1, 0, 1, i64::MAX] {
            let mut out = Vec::new();
            out.put_varlong(v);
            assert_eq!(Reader::new(&out, 0).varlong().unwrap(), v);
        }
        for v in [i32::MIN, i32::MAX] {
            let mut out = Vec::new();
            out.put_varint(v);
            assert_eq!(Reader::new(&out, 0).varint().unwrap(), v);
        }
    }

    #[test]
    fn overlong_varints_are_errors() {
        let six = [0x80u8, 0x80, 0x80, 0x80, 0x80, 0x01];
        assert!(matches!(
            Reader::new(&six, 7).uvarint(),
            Err(Error::Corrupt { position: 7, .. })
        ));
        let eleven = [0x80u8; 11];
        assert!(Reader::new(&eleven, 0).varlong().is_err());
        let above_32_bits = [0x80u8, 0x80, 0x80, 0x80, 0x10];
        let err = Reader::new(&above_32_bits, 0).uvarint().unwrap_err();
        assert!(err.to_string().contains("above 32 bits"), "{err}");
    }

    #[test]
    fn a_byte_of_0x80_or_more_anywhere_makes_a_name_non_ascii() {
        for len in 0..40 {
            let name: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(is_ascii(&name), "{len} ASCII bytes");
            for at in 0..len {
                for high in [0x80, 0xc3, 0xff] {
                    let mut bad = name.clone();
                    bad[at] = high;
                    assert!(!is_ascii(&bad), "{high:#x} at {at} of {len}");
                    assert_eq!(utf8(&bad).is_ok(), std::str::from_utf8(&bad).is_ok());
                }
            }
        }
        assert_eq!(utf8("café".as_bytes()), Ok("café"));
    }

    #[test]
    fn strings_and_bytes_round_trip() {
        for compact in [false, true] {
            let mut out = Vec::new();
            out.put_string("grüppe", compact).unwrap();
            out.put_nullable_string(None, compact).unwrap();
            out.put_nullable_bytes(Some(b"\x00\x01"), compact).unwrap();
            out.put_nullable_bytes(None, compact).unwrap();
            let mut r = Reader::new(&out, 0);
            assert_eq!(r.string(compact).unwrap(), "grüppe");
            assert_eq!(r.nullable_string(compact).unwrap(), None);
            assert_eq!(r.nullable_bytes(compact).unwrap(), Some(vec![0, 1]));
            assert_eq!(r.nullable_bytes(compact).unwrap(), None);
            assert!(r.is_empty());
        }
    }

    #[test]
    fn a_string_over_32767_bytes_is_refused_not_written() {
        let longest = "x".repeat(i16::MAX as usize);
        for compact in [false, true] {
            let mut out = Vec::new();
            out.put_string(&longest, compact).unwrap();
            assert_eq!(Reader::new(&out, 0).string(compact).unwrap(), longest);
            let mut out = vec![7];
            let refused = out.put_string(&format!("{longest}x"), compact);
            assert!(
                matches!(&refused, Err(Error::InvalidArgument(m)) if m.contains("32768 bytes")),
                "{refused:?}"
            );
            assert_eq!(out, [7], "nothing written");
        }
    }

    #[test]
    fn truncation_and_bad_lengths_name_positions() {
        let mut r = Reader::new(&[0x00, 0x05, b'a'], 100);
        match r.string(false) {
            Err(Error::Truncated {
                position,
                needed,
                available,
                ..
            }) => {
                assert_eq!((position, needed, available), (102, 5, 1));
            }
            other => panic!("{other:?}"),
        }
        let mut r = Reader::new(&[0xff, 0xfe], 10);
        assert!(matches!(
            r.string(false),
            Err(Error::Corrupt { position: 12, .. })
        ));
        let mut r = Reader::new(&[0x7f, 0xff, 0xff, 0xff], 0);
        assert!(
            r.array(false, 1).is_err(),
            "a count that cannot fit is refused before allocating"
        );
        let mut r = Reader::new(&[0x00, 0x02, 0xff, 0xfe], 0);
        assert!(r.string(false).is_err(), "invalid UTF-8");
    }
}
