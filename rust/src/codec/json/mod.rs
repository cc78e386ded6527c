//! JSON exactly as Python's `json.dumps(obj, separators=(",", ":"))` writes it: what
//! `groupcoord dump-log` prints ([`lines`]), byte for byte the lines it printed when Python
//! built them from the record objects.
//!
//! Python's encoder, with its default `ensure_ascii=True`, writes every character outside
//! printable ASCII (space to `~`) as `\uXXXX` in lower-case hex, a character above U+FFFF as
//! its UTF-16 surrogate pair, and `"`, `\`, backspace, form feed, newline, carriage return
//! and tab as two-character escapes. Integers are decimal, `None` is `null`. The values
//! Python has no JSON form of are given one as `dump-log` gives it: bytes as padded base64,
//! uuids as Kafka prints them (unpadded base64url).
//!
//! A record's key and value are written by [`records`], which `scripts/generate_records.py`
//! writes from the records' declaration (the same members, in the same order, as the record
//! classes' `to_dict`).

pub mod lines;
mod records;
#[cfg(test)]
mod tests;

use crate::codec::consumer_group::{base64_into, uuid_string, Datum};
use crate::codec::primitives::TaggedSection;

pub use records::JsonFields;

/// A value with a JSON form.
pub trait Json {
    /// Appends the value's JSON to `out`.
    fn write_json(&self, out: &mut Vec<u8>);
}

/// A JSON object being written: `{`, then members, then `}` at [`Object::end`].
pub struct Object<'o> {
    out: &'o mut Vec<u8>,
    empty: bool,
}

impl<'o> Object<'o> {
    pub fn begin(out: &'o mut Vec<u8>) -> Self {
        out.push(b'{');
        Object { out, empty: true }
    }

    /// Starts the member `name`, returning the output for the caller to write its value.
    /// Names are the fields' own, plain ASCII that needs no escape (the
    /// declaration's snake_case), written as they are.
    pub fn key(&mut self, name: &'static str) -> &mut Vec<u8> {
        debug_assert!(!name.bytes().any(|b| ESCAPED[b as usize]), "{name:?}");
        let separator: &[u8] = if self.empty { b"\"" } else { b",\"" };
        self.empty = false;
        self.out.extend_from_slice(separator);
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    pub fn field<T: Json + ?Sized>(&mut self, name: &'static str, value: &T) {
        value.write_json(self.key(name));
    }

    /// The member only when the value is not `None`, as `to_dict` gives a field it shows
    /// only when set.
    pub fn when_set<T: Json>(&mut self, name: &'static str, value: &Option<T>) {
        if let Some(value) = value {
            self.field(name, value);
        }
    }

    /// `unknown_tagged_fields`, a list of `{"tag", "data"}`, only when there are any.
    pub fn tagged_fields(&mut self, section: &TaggedSection<'_>) {
        if section.is_empty() {
            return;
        }
        let out = self.key("unknown_tagged_fields");
        out.push(b'[');
        for (i, (tag, data)) in section.fields().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let mut entry = Object::begin(out);
            entry.field("tag", &tag);
            entry.field("data", data);
            entry.end();
        }
        out.push(b']');
    }

    pub fn end(self) {
        self.out.push(b'}');
    }
}

/// Where a byte of a string's UTF-8 needs more than itself: not printable ASCII, or `"` or
/// `\`.
const ESCAPED: [bool; 256] = {
    let mut table = [true; 256];
    let mut b = b' ';
    while b <= b'~' {
        table[b as usize] = b == b'"' || b == b'\\';
        b += 1;
    }
    table
};

/// Whether any of the 8 bytes of `word` is [`ESCAPED`], found for all 8 at once: most
/// strings have none, and are copied as they are.
fn any_escaped(word: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH_BITS: u64 = ONES * 0x80;
    // Each byte's high bit set where the byte is below `n` (n <= 0x80), or zero.
    let below = |x: u64, n: u8| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH_BITS;
    let equal = |b: u8| below(word ^ (ONES * u64::from(b)), 1);
    (below(word, b' ') | word & HIGH_BITS | equal(0x7f) | equal(b'"') | equal(b'\\')) != 0
}

/// Appends `s` as a JSON string.
pub fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let (mut at, mut copied) = (0, 0);
    while at < bytes.len() {
        if let Some(word) = bytes.get(at..at + 8) {
            if !any_escaped(u64::from_le_bytes(word.try_into().expect("8 bytes"))) {
                at += 8;
                continue;
            }
        }
        if !ESCAPED[bytes[at] as usize] {
            at += 1;
            continue;
        }
        out.extend_from_slice(&bytes[copied..at]);
        if bytes[at].is_ascii() {
            escape_ascii(out, bytes[at]);
            at += 1;
        } else {
            let c = s[at..].chars().next().expect("at a character's first byte");
            let mut units = [0; 2];
            for unit in c.encode_utf16(&mut units) {
                escape_unit(out, *unit);
            }
            at += c.len_utf8();
        }
        copied = at;
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

/// Appends as a JSON string the text whose UTF-16 code units are `units`, lone surrogates
/// included (as Python's strings may hold them: a file name of bytes that are not UTF-8,
/// decoded with `surrogateescape`).
pub fn utf16_string(out: &mut Vec<u8>, units: &[u16]) {
    out.push(b'"');
    for &unit in units {
        match u8::try_from(unit) {
            Ok(b) if !ESCAPED[b as usize] => out.push(b),
            Ok(b) if b.is_ascii() => escape_ascii(out, b),
            _ => escape_unit(out, unit),
        }
    }
    out.push(b'"');
}

fn escape_ascii(out: &mut Vec<u8>, b: u8) {
    let short = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x08 => b'b',
        0x0c => b'f',
        _ => return escape_unit(out, u16::from(b)),
    };
    out.extend_from_slice(&[b'\\', short]);
}

fn escape_unit(out: &mut Vec<u8>, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digit = |shift: u16| HEX[usize::from((unit >> shift) & 0xf)];
    out.extend_from_slice(&[b'\\', b'u', digit(12), digit(8), digit(4), digit(0)]);
}

/// Appends an integer in decimal.
pub fn int(out: &mut Vec<u8>, value: i64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839404142434445464748495051525354555657585960\
        6162636465666768697071727374757677787980818283848586878889909192939495969798\
        99";
    if value < 0 {
        out.push(b'-');
    }
    let mut n = value.unsigned_abs();
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[n as usize * 2..n as usize * 2 + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    out.extend_from_slice(&digits[at..]);
}

macro_rules! json_int {
    ($($t:ty),*) => {$(
        impl Json for $t {
            fn write_json(&self, out: &mut Vec<u8>) {
                int(out, i64::from(*self));
            }
        }
    )*};
}
json_int!(i8, i16, i32, i64, u32);

impl Json for usize {
    fn write_json(&self, out: &mut Vec<u8>) {
        let value = i64::try_from(*self).expect("a byte position fits in an i64");
        int(out, value);
    }
}

impl Json for bool {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}

impl Json for str {
    fn write_json(&self, out: &mut Vec<u8>) {
        string(out, self);
    }
}

impl Json for String {
    fn write_json(&self, out: &mut Vec<u8>) {
        string(out, self);
    }
}

impl<T: Json + ?Sized> Json for &T {
    fn write_json(&self, out: &mut Vec<u8>) {
        (**self).write_json(out);
    }
}

impl<T: Json> Json for Option<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Some(value) => value.write_json(out),
            None => out.extend_from_slice(b"null"),
        }
    }
}

/// Bytes: padded base64.
impl Json for [u8] {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'"');
        base64_into(out, self);
        out.push(b'"');
    }
}

impl Json for Vec<u8> {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.as_slice().write_json(out);
    }
}

/// A uuid: as Kafka prints one (`Uuid.toString`).
impl Json for [u8; 16] {
    fn write_json(&self, out: &mut Vec<u8>) {
        string(out, &uuid_string(self));
    }
}

impl<T: Json> Json for [T] {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        for (i, item) in self.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            item.write_json(out);
        }
        out.push(b']');
    }
}

impl<T: Json> Json for Vec<T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        self.as_slice().write_json(out);
    }
}

/// A pair (a topic and its partitions): a list of two, as Python's encoder gives a tuple.
impl<A: Json, B: Json> Json for (A, B) {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'[');
        self.0.write_json(out);
        out.push(b',');
        self.1.write_json(out);
        out.push(b']');
    }
}

/// A consumer-group value's fields as the record objects give them: structs as objects.
impl Json for Datum {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Datum::Null => out.extend_from_slice(b"null"),
            Datum::Int(v) => int(out, *v),
            Datum::Str(s) => string(out, s),
            Datum::Bytes(b) => b.write_json(out),
            Datum::Uuid(u) => u.write_json(out),
            Datum::List(items) => items.write_json(out),
            Datum::Struct(fields) => {
                let mut o = Object::begin(out);
                for (name, value) in fields {
                    o.field(*name, value);
                }
                o.end();
            }
        }
    }
}
