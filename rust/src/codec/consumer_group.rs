//! The new (KIP-848) group coordinator's records, types 3 to 8 and 16, decoded from schemas
//! declared once as data: the [`FieldDef`] tables of [`super::generated`], which
//! `scripts/generate_records.py` writes from `python/groupcoord/format/records.py`.
//!
//! Keys are non-flexible: `GroupId` string, with `MemberId` (types 5, 7, 8) or
//! `RegularExpression` (16). Values are version 0, flexible: compact strings and arrays, a
//! tagged-field section after every struct. A value decodes into a [`Datum::Struct`] whose
//! field names are the snake_case of Kafka's; uuids keep their 16 bytes. A tagged field that
//! is absent decodes as its declared default ([`TagDefault`]), and one at its default is left
//! out when written, as Kafka's generated readers and writers do. Tagged fields the schema
//! does not declare are kept,
//! as Kafka's classes keep them, in one more field, [`UNKNOWN_TAGGED_FIELDS`], present only
//! when there are some, and written back.

pub use crate::codec::generated::{key_second_field, value_schema};
use crate::codec::primitives::{check_tags, Reader, Writer};
use crate::error::{Error, Result};

/// The type of a declared field.
#[derive(Debug)]
pub enum FieldType {
    I8,
    I32,
    I64,
    Str,
    NullableStr,
    Bytes,
    Uuid,
    Array(&'static FieldType),
    NullableArray(&'static FieldType),
    Struct(&'static [FieldDef]),
    NullableStruct(&'static [FieldDef]),
}

/// The default of a tagged field: what it reads as when absent, and the value it is left out
/// at when written (Kafka's generated writers skip a tagged field equal to its default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TagDefault {
    /// Kafka's zero value of the type: 0, a zero uuid, an empty array, an empty struct. A
    /// schema without a default, or with the JSON `"default": null` (which Kafka's generator
    /// reads as no default), has this one: a null value is then written, as its marker.
    Zero,
    /// Null (`"default": "null"` in Kafka's terms): left out when null.
    Null,
}

/// A declared field: its name, type, and tag and default if it is a tagged field.
#[derive(Debug)]
pub struct FieldDef {
    pub name: &'static str,
    pub ty: FieldType,
    pub tag: Option<u32>,
    pub default: TagDefault,
}

pub(crate) const fn field(name: &'static str, ty: FieldType) -> FieldDef {
    FieldDef {
        name,
        ty,
        tag: None,
        default: TagDefault::Zero,
    }
}

pub(crate) const fn tagged(
    name: &'static str,
    tag: u32,
    ty: FieldType,
    default: TagDefault,
) -> FieldDef {
    FieldDef {
        name,
        ty,
        tag: Some(tag),
        default,
    }
}

/// A decoded value of a declared schema.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Datum {
    Null,
    Int(i64),
    Str(String),
    Bytes(Vec<u8>),
    Uuid([u8; 16]),
    List(Vec<Datum>),
    Struct(Vec<(&'static str, Datum)>),
}

/// The field of a decoded struct that holds the tagged fields its schema does not declare: a
/// list of structs `{tag, data}`, in the order read.
pub const UNKNOWN_TAGGED_FIELDS: &str = "unknown_tagged_fields";

/// Kafka's form of a uuid (`Uuid.toString`): unpadded base64url.
pub fn uuid_string(uuid: &[u8; 16]) -> String {
    let mut out = Vec::with_capacity(22);
    base64_with(&mut out, uuid, BASE64URL, false);
    String::from_utf8(out).expect("base64 is ASCII")
}

/// The uuid of Kafka's form of one (`Uuid.fromString`, unpadded base64url), if `text` is one
/// exactly as [`uuid_string`] writes it.
pub fn uuid_from_string(text: &str) -> Option<[u8; 16]> {
    let digits = text
        .bytes()
        .map(|c| BASE64URL.iter().position(|&a| a == c).map(|d| d as u128))
        .collect::<Option<Vec<u128>>>()?;
    let (&last, first) = digits.split_last().filter(|_| digits.len() == 22)?;
    // 22 digits are 132 bits: the uuid's 128, then four that must be zero.
    let bits = first.iter().fold(0u128, |bits, d| bits << 6 | d);
    (last & 0xf == 0).then(|| (bits << 2 | last >> 4).to_be_bytes())
}

/// Standard, padded base64: bytes in JSON, as `dump-log` prints them.
pub fn base64(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    base64_into(&mut out, bytes);
    String::from_utf8(out).expect("base64 is ASCII")
}

/// [`base64`] of `bytes`, appended to `out`.
pub fn base64_into(out: &mut Vec<u8>, bytes: &[u8]) {
    base64_with(out, bytes, BASE64, true);
}

/// The digits of standard base64 and of base64url.
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Appends the base64 of `bytes` in the alphabet of `digits`.
fn base64_with(out: &mut Vec<u8>, bytes: &[u8], digits: &[u8; 64], pad: bool) {
    let digit = |i: u32| digits[(i & 63) as usize];
    out.reserve(bytes.len().div_ceil(3) * 4);
    let mut triples = bytes.chunks_exact(3);
    for t in &mut triples {
        let n = u32::from(t[0]) << 16 | u32::from(t[1]) << 8 | u32::from(t[2]);
        out.extend_from_slice(&[digit(n >> 18), digit(n >> 12), digit(n >> 6), digit(n)]);
    }
    let rest = triples.remainder();
    if !rest.is_empty() {
        let n = rest
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..=rest.len() {
            out.push(digit(n >> (18 - 6 * i)));
        }
        if pad {
            out.extend(std::iter::repeat_n(b'=', 3 - rest.len()));
        }
    }
}

/// Decodes a flexible struct of `fields` (its tagged-field section included).
pub fn decode_struct(r: &mut Reader<'_>, fields: &'static [FieldDef]) -> Result<Datum> {
    let mut out: Vec<(&'static str, Datum)> = Vec::with_capacity(fields.len());
    for f in fields.iter().filter(|f| f.tag.is_none()) {
        out.push((f.name, decode_field(r, &f.ty)?));
    }
    let tagged: Vec<&FieldDef> = fields.iter().filter(|f| f.tag.is_some()).collect();
    let mut found: Vec<(&'static str, Datum)> = Vec::new();
    let mut unknown = Vec::new();
    let count = r.uvarint()?;
    for _ in 0..count {
        let tag = r.uvarint()?;
        let size = r.uvarint()? as usize;
        let mut sub = r.sub(size, "tagged field")?;
        match tagged.iter().find(|f| f.tag == Some(tag)) {
            Some(f) => {
                // A tag given twice keeps its last value, as Kafka's readers do.
                let value = decode_field(&mut sub, &f.ty)?;
                if !sub.is_empty() {
                    // Kafka reads a known field from the stream, not from its size: it would
                    // take these bytes for the next field.
                    return Err(sub.corrupt(format!(
                        "{} bytes after tagged field {} within its size",
                        sub.remaining(),
                        f.name
                    )));
                }
                found.retain(|(name, _)| *name != f.name);
                found.push((f.name, value));
            }
            None => unknown.push(Datum::Struct(vec![
                ("tag", Datum::Int(i64::from(tag))),
                ("data", Datum::Bytes(sub.rest().to_vec())),
            ])),
        }
    }
    for f in tagged {
        let value = match found.iter().position(|(n, _)| *n == f.name) {
            Some(i) => found.swap_remove(i).1,
            None => tagged_default(f),
        };
        out.push((f.name, value));
    }
    if !unknown.is_empty() {
        out.push((UNKNOWN_TAGGED_FIELDS, Datum::List(unknown)));
    }
    Ok(Datum::Struct(out))
}

/// What a tagged field left out of its section reads as, and is left out at: its declared
/// default.
pub fn tagged_default(f: &FieldDef) -> Datum {
    match f.default {
        TagDefault::Null => Datum::Null,
        TagDefault::Zero => zero(&f.ty),
    }
}

/// Kafka's zero value of a type: 0, empty strings, bytes and arrays, a zero uuid, a struct of
/// zero values (its tagged fields at their defaults): the default Kafka's generator gives a
/// field that declares none, nullable or not (`new Struct()`, `""`, `new ArrayList<>(0)`).
fn zero(ty: &FieldType) -> Datum {
    match ty {
        FieldType::I8 | FieldType::I32 | FieldType::I64 => Datum::Int(0),
        FieldType::Str | FieldType::NullableStr => Datum::Str(String::new()),
        FieldType::Bytes => Datum::Bytes(Vec::new()),
        FieldType::Uuid => Datum::Uuid([0; 16]),
        FieldType::Array(_) | FieldType::NullableArray(_) => Datum::List(Vec::new()),
        FieldType::Struct(fields) | FieldType::NullableStruct(fields) => empty_struct(fields),
    }
}

/// A struct of `fields` at Kafka's zero values, its tagged fields at their defaults: what an
/// empty struct (`new Struct()` in Kafka's classes) holds.
fn empty_struct(fields: &'static [FieldDef]) -> Datum {
    Datum::Struct(
        fields
            .iter()
            .map(|f| {
                let value = match f.tag {
                    Some(_) => tagged_default(f),
                    None => zero(&f.ty),
                };
                (f.name, value)
            })
            .collect(),
    )
}

/// The `(tag, bytes)` pairs of a struct's [`UNKNOWN_TAGGED_FIELDS`] field.
fn unknown_tagged_fields(value: &Datum) -> Result<Vec<(u32, Vec<u8>)>> {
    let items = match value {
        Datum::Null => return Ok(Vec::new()),
        Datum::List(items) => items,
        other => {
            return Err(Error::InvalidArgument(format!(
                "field {UNKNOWN_TAGGED_FIELDS}: {other:?} is not a list of {{tag, data}}"
            )))
        }
    };
    items
        .iter()
        .map(|item| {
            let entry = match item {
                Datum::Struct(entry) => entry.as_slice(),
                _ => &[],
            };
            let get = |name: &str| entry.iter().find(|(n, _)| *n == name).map(|(_, v)| v);
            match (get("tag"), get("data")) {
                (Some(Datum::Int(tag)), Some(Datum::Bytes(data))) => u32::try_from(*tag)
                    .map(|tag| (tag, data.clone()))
                    .map_err(|_| {
                        Error::InvalidArgument(format!("tagged field tag {tag} out of range"))
                    }),
                _ => Err(Error::InvalidArgument(format!(
                    "field {UNKNOWN_TAGGED_FIELDS}: {item:?} is not {{tag, data}}"
                ))),
            }
        })
        .collect()
}

fn decode_field(r: &mut Reader<'_>, ty: &'static FieldType) -> Result<Datum> {
    Ok(match ty {
        FieldType::I8 => Datum::Int(i64::from(r.i8()?)),
        FieldType::I32 => Datum::Int(i64::from(r.i32()?)),
        FieldType::I64 => Datum::Int(r.i64()?),
        FieldType::Str => Datum::Str(r.string(true)?),
        FieldType::NullableStr => r.nullable_string(true)?.map_or(Datum::Null, Datum::Str),
        FieldType::Bytes => Datum::Bytes(r.bytes(true)?),
        FieldType::Uuid => Datum::Uuid(r.uuid()?),
        FieldType::Array(inner) => decode_array(r, inner, false)?,
        FieldType::NullableArray(inner) => decode_array(r, inner, true)?,
        FieldType::Struct(fields) => decode_struct(r, fields)?,
        // A tagged nullable struct starts with an unsigned varint: 0 for null, more (Kafka
        // writes 1) for a struct that follows.
        FieldType::NullableStruct(fields) => match r.uvarint()? {
            0 => Datum::Null,
            _ => decode_struct(r, fields)?,
        },
    })
}

fn decode_array(r: &mut Reader<'_>, inner: &'static FieldType, nullable: bool) -> Result<Datum> {
    let at = r.position();
    let Some(n) = r.array_len(true, 1)? else {
        return if nullable {
            Ok(Datum::Null)
        } else {
            Err(Error::Corrupt {
                position: at,
                reason: "null in a non-nullable array".into(),
            })
        };
    };
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        items.push(decode_field(r, inner)?);
    }
    Ok(Datum::List(items))
}

/// Where [`encode_struct`] writes the tagged fields a struct's schema does not declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownTags {
    /// Among the known ones in tag order, as Kafka writes them; refused unless their tags
    /// strictly increase and differ from the known ones', as Kafka's writers refuse them.
    InTagOrder,
    /// After the known ones, in the order they were read, whatever it is: an encoding that
    /// decodes to an equal value (how a decoded value is pickled), not one Kafka would write.
    AsRead,
}

/// Encodes `datum`, a [`Datum::Struct`] of `fields`, as a flexible struct.
pub fn encode_struct(
    out: &mut Vec<u8>,
    fields: &'static [FieldDef],
    datum: &Datum,
    unknown_tags: UnknownTags,
) -> Result<()> {
    let Datum::Struct(values) = datum else {
        return Err(Error::InvalidArgument(
            "a struct field needs a Datum::Struct".into(),
        ));
    };
    let value_of = |name: &str| {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&Datum::Null, |(_, v)| v)
    };
    for f in fields.iter().filter(|f| f.tag.is_none()) {
        encode_field(out, &f.ty, value_of(f.name), f.name, unknown_tags)?;
    }
    // A tagged field at its default is left out: the reader takes the default back.
    let present = fields
        .iter()
        .filter(|f| f.tag.is_some() && *value_of(f.name) != tagged_default(f));
    let mut section = Vec::new();
    for f in present {
        let mut body = Vec::new();
        encode_field(&mut body, &f.ty, value_of(f.name), f.name, unknown_tags)?;
        section.push((f.tag.unwrap_or_default(), body));
    }
    let unknown = unknown_tagged_fields(value_of(UNKNOWN_TAGGED_FIELDS))?;
    match unknown_tags {
        UnknownTags::AsRead => {
            section.extend(unknown);
            out.put_tagged_fields_as_given(&section)
        }
        UnknownTags::InTagOrder => {
            check_tags(&unknown)?;
            if let Some((tag, _)) = unknown
                .iter()
                .find(|(tag, _)| section.iter().any(|(known, _)| known == tag))
            {
                return Err(Error::InvalidArgument(format!(
                    "unknown tagged field {tag} has the tag of a field the schema declares"
                )));
            }
            section.extend(unknown);
            section.sort_by_key(|(tag, _)| *tag);
            out.put_tagged_fields(&section)
        }
    }
}

fn encode_field(
    out: &mut Vec<u8>,
    ty: &'static FieldType,
    value: &Datum,
    name: &str,
    unknown_tags: UnknownTags,
) -> Result<()> {
    let mismatch =
        || Error::InvalidArgument(format!("field {name}: {value:?} does not fit {ty:?}"));
    match (ty, value) {
        (FieldType::I8, Datum::Int(v)) => out.put_i8(i8::try_from(*v).map_err(|_| mismatch())?),
        (FieldType::I32, Datum::Int(v)) => out.put_i32(i32::try_from(*v).map_err(|_| mismatch())?),
        (FieldType::I64, Datum::Int(v)) => out.put_i64(*v),
        (FieldType::Str | FieldType::NullableStr, Datum::Str(v)) => out.put_string(v, true)?,
        (FieldType::NullableStr, Datum::Null) => out.put_nullable_string(None, true)?,
        (FieldType::Bytes, Datum::Bytes(v)) => out.put_nullable_bytes(Some(v), true)?,
        (FieldType::Uuid, Datum::Uuid(v)) => out.extend_from_slice(v),
        (FieldType::Array(inner) | FieldType::NullableArray(inner), Datum::List(items)) => {
            out.put_array_len(items.len(), true);
            for item in items {
                encode_field(out, inner, item, name, unknown_tags)?;
            }
        }
        (FieldType::NullableArray(_), Datum::Null) => out.put_uvarint(0),
        (FieldType::Struct(fields), v) => encode_struct(out, fields, v, unknown_tags)?,
        (FieldType::NullableStruct(_), Datum::Null) => out.put_uvarint(0),
        (FieldType::NullableStruct(fields), v) => {
            out.put_uvarint(1);
            encode_struct(out, fields, v, unknown_tags)?;
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::hex;

    #[test]
    fn base64_gives_rfc_4648_vectors_and_kafkas_uuid_form() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
        let mut uuid: [u8; 16] = std::array::from_fn(|i| i as u8);
        assert_eq!(uuid_string(&uuid), "AAECAwQFBgcICQoLDA0ODw");
        (uuid[12], uuid[13]) = (0xfb, 0xff);
        assert_eq!(uuid_string(&uuid), "AAECAwQFBgcICQoL-_8ODw");
        for uuid in [uuid, [0; 16], [0xff; 16]] {
            assert_eq!(uuid_from_string(&uuid_string(&uuid)), Some(uuid));
        }
        for not_one in [
            "AAECAwQFBgcICQoL-_8OD",    // 21 digits
            "AAECAwQFBgcICQoL-_8ODw==", // padded
            "AAECAwQFBgcICQoL+/8ODw",   // standard base64's digits
            "AAECAwQFBgcICQoL-_8ODx",   // low bits set: no uuid writes it
        ] {
            assert_eq!(uuid_from_string(not_one), None, "{not_one}");
        }
    }

    /// Decodes, and checks that encoding gives the bytes back.
    fn decode(record_type: i16, body: &[u8]) -> Datum {
        let (_, schema) = value_schema(record_type).unwrap();
        let mut r = Reader::new(body, 0);
        let d = decode_struct(&mut r, schema).unwrap();
        assert!(r.is_empty());
        let mut again = Vec::new();
        encode_struct(&mut again, schema, &d, UnknownTags::InTagOrder).unwrap();
        assert_eq!(again, body);
        d
    }

    /// A constructed ConsumerGroupMetadataValue v0, epoch 10.
    #[test]
    fn group_metadata_vector() {
        // An absent metadata hash reads as Kafka's default for it, 0; an absent creation time
        // (Kafka's trunk only) as null.
        assert_eq!(
            decode(3, &hex("0000000a 00")),
            Datum::Struct(vec![
                ("epoch", Datum::Int(10)),
                ("metadata_hash", Datum::Int(0)),
                ("creation_time_ms", Datum::Null)
            ])
        );
        // With both tagged fields present (tag 0: 8 bytes, tag 1: 8 bytes) and an unknown tag 9,
        // which is kept and written back between them in tag order.
        let d = decode(
            3,
            &hex("0000000a 03 00 08 0000000000000007 01 08 00000000000003e8 09 01 ff"),
        );
        let unknown = Datum::List(vec![Datum::Struct(vec![
            ("tag", Datum::Int(9)),
            ("data", Datum::Bytes(vec![0xff])),
        ])]);
        assert_eq!(
            d,
            Datum::Struct(vec![
                ("epoch", Datum::Int(10)),
                ("metadata_hash", Datum::Int(7)),
                ("creation_time_ms", Datum::Int(1000)),
                (UNKNOWN_TAGGED_FIELDS, unknown.clone()),
            ])
        );
        let (_, schema) = value_schema(3).unwrap();
        let clash = Datum::Struct(vec![
            ("epoch", Datum::Int(10)),
            ("metadata_hash", Datum::Int(7)),
            (
                UNKNOWN_TAGGED_FIELDS,
                Datum::List(vec![Datum::Struct(vec![
                    ("tag", Datum::Int(0)),
                    ("data", Datum::Bytes(vec![])),
                ])]),
            ),
        ]);
        let err =
            encode_struct(&mut Vec::new(), schema, &clash, UnknownTags::InTagOrder).unwrap_err();
        assert!(err.to_string().contains("has the tag of a field"), "{err}");
    }

    #[test]
    fn unknown_tags_out_of_order_are_refused_for_kafka_and_kept_as_read_for_a_copy() {
        let (_, schema) = value_schema(3).unwrap();
        // Unknown tags 9 then 5, which Kafka reads but its writers refuse.
        let body = hex("0000000a 02 09 01 61 05 01 62");
        let d = decode_struct(&mut Reader::new(&body, 0), schema).unwrap();
        let err = encode_struct(&mut Vec::new(), schema, &d, UnknownTags::InTagOrder).unwrap_err();
        assert!(err.to_string().contains("strictly increasing"), "{err}");
        let mut copy = Vec::new();
        encode_struct(&mut copy, schema, &d, UnknownTags::AsRead).unwrap();
        assert_eq!(copy, body);
        assert_eq!(
            decode_struct(&mut Reader::new(&copy, 0), schema).unwrap(),
            d
        );
        // A known tag given twice keeps its last value, as Kafka's readers do.
        let twice = hex("0000000a 02 00 08 0000000000000007 00 08 0000000000000008");
        let Datum::Struct(fields) = decode_struct(&mut Reader::new(&twice, 0), schema).unwrap()
        else {
            panic!()
        };
        assert_eq!(fields[1], ("metadata_hash", Datum::Int(8)));
        // A known tagged field whose size holds more than the field.
        let longer = hex("0000000a 01 00 09 0000000000000007 ff");
        let err = decode_struct(&mut Reader::new(&longer, 0), schema).unwrap_err();
        assert!(
            err.to_string()
                .contains("1 bytes after tagged field metadata_hash"),
            "{err}"
        );
    }

    #[test]
    fn current_member_assignment_with_nested_tagged_epochs() {
        let uuid = "000102030405060708090a0b0c0d0e0f";
        let body = hex(&format!(
            "00000005 00000004 02 \
             02 {uuid} 03 00000000 00000001 01 00 09 03 00000005 00000005 \
             01 \
             00"
        ));
        let Datum::Struct(fields) = decode(8, &body) else {
            panic!()
        };
        assert_eq!(fields[0], ("member_epoch", Datum::Int(5)));
        assert_eq!(fields[2], ("state", Datum::Int(2)));
        let Datum::List(assigned) = &fields[3].1 else {
            panic!()
        };
        let Datum::Struct(tp) = &assigned[0] else {
            panic!()
        };
        assert_eq!(
            tp[1],
            (
                "partitions",
                Datum::List(vec![Datum::Int(0), Datum::Int(1)])
            )
        );
        assert_eq!(
            tp[2],
            (
                "assignment_epochs",
                Datum::List(vec![Datum::Int(5), Datum::Int(5)])
            )
        );
        assert_eq!(
            fields[4],
            ("partitions_pending_revocation", Datum::List(vec![]))
        );
    }

    #[test]
    fn member_metadata_with_classic_member() {
        let body = hex("00 03 7231 02 63 02 68 02 02 74 00 00000fa0 06 72616e6765 \
             01 00 10 01 0000afc8 02 06 72616e6765 02 00 00 00");
        let Datum::Struct(fields) = decode(5, &body) else {
            panic!()
        };
        assert_eq!(fields[0], ("instance_id", Datum::Null));
        assert_eq!(fields[1], ("rack_id", Datum::Str("r1".into())));
        assert_eq!(
            fields[4],
            (
                "subscribed_topic_names",
                Datum::List(vec![Datum::Str("t".into())])
            )
        );
        assert_eq!(fields[6], ("rebalance_timeout_ms", Datum::Int(4000)));
        let Datum::Struct(classic) = &fields[8].1 else {
            panic!("{:?}", fields[8])
        };
        assert_eq!(classic[0], ("session_timeout_ms", Datum::Int(45_000)));
    }

    /// What Kafka's coordinator writes for a member of the consumer protocol: its classic
    /// member metadata null, as tag 0 of one byte, 0.
    #[test]
    fn member_metadata_of_a_consumer_protocol_member() {
        let body = hex("00 00 02 63 02 68 02 02 74 00 00000fa0 08 756e69666f726d 01 00 01 00");
        let Datum::Struct(fields) = decode(5, &body) else {
            panic!()
        };
        assert_eq!(fields[7], ("server_assignor", Datum::Str("uniform".into())));
        assert_eq!(fields[8], ("classic_member_metadata", Datum::Null));
        let (_, schema) = value_schema(5).unwrap();
        let mut again = Vec::new();
        encode_struct(
            &mut again,
            schema,
            &Datum::Struct(fields),
            UnknownTags::InTagOrder,
        )
        .unwrap();
        assert_eq!(again, body, "written as Kafka writes it");

        // Without tag 0 the field takes Kafka's default, an empty struct, and stays left out.
        let without = hex("00 00 02 63 02 68 02 02 74 00 00000fa0 08 756e69666f726d 00");
        let Datum::Struct(fields) = decode(5, &without) else {
            panic!()
        };
        assert_eq!(
            fields[8],
            (
                "classic_member_metadata",
                Datum::Struct(vec![
                    ("session_timeout_ms", Datum::Int(0)),
                    ("supported_protocols", Datum::List(vec![]))
                ])
            )
        );
    }

    /// Kafka's generated writers leave out a tagged field equal to its default, and its
    /// readers take an absent one as the default: a metadata hash or assignment timestamp of
    /// 0, an empty array of assignment epochs (whose JSON `"default": null` Kafka's generator
    /// reads as no default). A null array of epochs is written, as its marker.
    #[test]
    fn tagged_fields_at_their_defaults_are_left_out() {
        let (_, schema) = value_schema(3).unwrap();
        let at_default = Datum::Struct(vec![
            ("epoch", Datum::Int(10)),
            ("metadata_hash", Datum::Int(0)),
        ]);
        let mut out = Vec::new();
        encode_struct(&mut out, schema, &at_default, UnknownTags::InTagOrder).unwrap();
        assert_eq!(out, hex("0000000a 00"));

        assert_eq!(
            decode(6, &hex("00000003 00")),
            Datum::Struct(vec![
                ("assignment_epoch", Datum::Int(3)),
                ("assignment_timestamp", Datum::Int(0)),
            ])
        );
        decode(6, &hex("00000003 01 00 08 0000000000000001"));

        let uuid = "000102030405060708090a0b0c0d0e0f";
        let type8 = |tagged: &str| {
            let body = hex(&format!(
                "00000001 00000000 00 02 {uuid} 02 00000000 {tagged} 01 00"
            ));
            let Datum::Struct(fields) = decode(8, &body) else {
                panic!()
            };
            let Datum::List(assigned) = &fields[3].1 else {
                panic!()
            };
            let Datum::Struct(tp) = &assigned[0] else {
                panic!()
            };
            tp[2].1.clone()
        };
        assert_eq!(type8("00"), Datum::List(vec![]), "absent: the default");
        assert_eq!(
            type8("01 00 01 00"),
            Datum::Null,
            "null: written, as its marker"
        );
        assert_eq!(
            type8("01 00 05 02 00000007"),
            Datum::List(vec![Datum::Int(7)])
        );
    }

    #[test]
    fn truncated_values_are_errors() {
        let body = hex("00000005 00000004 02 02");
        let (_, schema) = value_schema(8).unwrap();
        for cut in 0..body.len() {
            assert!(decode_struct(&mut Reader::new(&body[..cut], 0), schema).is_err());
        }
    }
}
