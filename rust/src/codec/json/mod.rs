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

    /// Starts the member `name`, whose value the caller writes next to [`Object::out`].
    pub fn key(&mut self, name: &str) -> &mut Vec<u8> {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        string(self.out, name);
        self.out.push(b':');
        self.out
    }

    pub fn field<T: Json + ?Sized>(&mut self, name: &str, value: &T) {
        value.write_json(self.key(name));
    }

    /// The member only when the value is not `None`, as `to_dict` gives a field it shows
    /// only when set.
    pub fn when_set<T: Json>(&mut self, name: &str, value: &Option<T>) {
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

/// Appends `s` as a JSON string.
pub fn string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let (mut at, mut copied) = (0, 0);
    while at < bytes.len() {
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
    if value < 0 {
        out.push(b'-');
    }
    let mut n = value.unsigned_abs();
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
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
                    o.field(name, value);
                }
                o.end();
            }
        }
    }
}
