//! The decoded fields of a consumer-group record ([`Datum`]): one field by name, and the
//! whole as the JSON of the `consumer_group_fields` column.

use crate::codec::consumer_group::{base64, uuid_string, Datum};

pub(super) fn datum_json(d: &Datum, out: &mut String) {
    match d {
        Datum::Null => out.push_str("null"),
        Datum::Int(v) => out.push_str(&v.to_string()),
        Datum::Str(s) => json_string(s, out),
        Datum::Bytes(b) => json_string(&base64(b), out),
        Datum::Uuid(u) => json_string(&uuid_string(u), out),
        Datum::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                datum_json(item, out);
            }
            out.push(']');
        }
        Datum::Struct(fields) => {
            out.push('{');
            for (i, (name, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                json_string(name, out);
                out.push(':');
                datum_json(value, out);
            }
            out.push('}');
        }
    }
}

pub(super) fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

pub(super) fn datum_field<'a>(d: &'a Datum, name: &str) -> Option<&'a Datum> {
    match d {
        Datum::Struct(fields) => fields.iter().find(|(n, _)| *n == name).map(|(_, v)| v),
        _ => None,
    }
}
