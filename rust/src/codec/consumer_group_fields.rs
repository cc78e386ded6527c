//! A consumer-group value built from loosely typed fields, as `ConsumerGroupValue.fields`
//! gives them (snake_case names, uuids as Kafka's base64url strings, nested structs as maps),
//! by its record type's declared schema: every field checked against its declared type, so
//! that the value encodes and decodes back equal.
//!
//! What a writer may leave out: a tagged field, which then takes its declared default (as
//! Kafka's generated classes start every field at its default), and a struct's
//! [`UNKNOWN_TAGGED_FIELDS`]. An untagged field is on the wire in every value, and Kafka's
//! readers give no default for one, so leaving it out is an error rather than a silent zero.
//! `None` given for a tagged field that is not nullable is that field left out.

use crate::codec::consumer_group::{
    tagged_default, uuid_from_string, value_schema, Datum, FieldDef, FieldType,
    UNKNOWN_TAGGED_FIELDS,
};
use crate::codec::records::ConsumerGroupValue;
use crate::error::{Error, Result};

/// A field's value as the caller gave it, before its schema says what it must be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loose {
    Null,
    Int(i64),
    /// An integer beyond int64, by its decimal digits.
    HugeInt(String),
    Str(String),
    Bytes(Vec<u8>),
    /// A uuid given as one (rather than as Kafka's string form of one).
    Uuid([u8; 16]),
    List(Vec<Loose>),
    /// A mapping from field names, in the order given.
    Map(Vec<(String, Loose)>),
    /// Anything else, by the name of its type.
    Other(String),
}

impl Loose {
    fn describe(&self) -> String {
        match self {
            Loose::Null => "None".into(),
            Loose::Int(v) => format!("int {v}"),
            Loose::HugeInt(v) => format!("int {v}"),
            Loose::Str(v) => format!("str {v:?}"),
            Loose::Bytes(v) => format!("bytes of length {}", v.len()),
            Loose::Uuid(_) => "a uuid".into(),
            Loose::List(v) => format!("a sequence of {} items", v.len()),
            Loose::Map(_) => "a mapping".into(),
            Loose::Other(name) => format!("a {name}"),
        }
    }
}

/// The consumer-group value of `record_type` (3 to 8, 16) at `version` whose fields are
/// `fields`, a [`Loose::Map`].
pub fn build_value(record_type: i16, version: i16, fields: Loose) -> Result<ConsumerGroupValue> {
    let (schema, defs) = value_schema(record_type).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "record type {record_type} is not a consumer-group record (3 to 8, 16)"
        ))
    })?;
    if version != 0 {
        return Err(Error::UnsupportedVersion(format!(
            "{schema} version {version} (known: 0)"
        )));
    }
    let fields = build_struct(defs, fields, schema, "")?;
    Ok(ConsumerGroupValue {
        record_type,
        version,
        schema,
        fields,
    })
}

/// A struct of `defs` in the value of `schema`; `path` is where it is (empty at the top, else
/// ending in `.`), for messages.
fn build_struct(
    defs: &'static [FieldDef],
    value: Loose,
    schema: &str,
    path: &str,
) -> Result<Datum> {
    let place = match path.strip_suffix('.') {
        Some(field) => format!("field {field}"),
        None => format!("the fields of {schema}"),
    };
    let mut given = match value {
        Loose::Map(entries) => entries,
        other => {
            return Err(Error::WrongType(format!(
                "{place}: a mapping of field names, not {}",
                other.describe()
            )))
        }
    };
    if let Some((name, _)) = given
        .iter()
        .find(|(name, _)| name != UNKNOWN_TAGGED_FIELDS && !defs.iter().any(|f| f.name == name))
    {
        let known: Vec<&str> = defs.iter().map(|f| f.name).collect();
        return Err(Error::InvalidArgument(format!(
            "field {path}{name}: no such field in {schema} (the fields there: {})",
            known.join(", ")
        )));
    }
    let mut take = |name: &str| {
        given
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| given.swap_remove(i).1)
    };
    let mut out = Vec::with_capacity(defs.len() + 1);
    for f in defs.iter().filter(|f| f.tag.is_none()) {
        let value = take(f.name).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "field {path}{}: missing (an untagged field is in every {schema})",
                f.name
            ))
        })?;
        out.push((
            f.name,
            build_field(&f.ty, value, schema, &format!("{path}{}", f.name))?,
        ));
    }
    for f in defs.iter().filter(|f| f.tag.is_some()) {
        let value = match take(f.name) {
            None => tagged_default(f),
            Some(Loose::Null) if !nullable(&f.ty) => tagged_default(f),
            Some(v) => build_field(&f.ty, v, schema, &format!("{path}{}", f.name))?,
        };
        out.push((f.name, value));
    }
    let unknown_path = format!("{path}{UNKNOWN_TAGGED_FIELDS}");
    match take(UNKNOWN_TAGGED_FIELDS) {
        None | Some(Loose::Null) => {}
        Some(Loose::List(items)) if items.is_empty() => {}
        Some(Loose::List(items)) => {
            let items = items
                .into_iter()
                .enumerate()
                .map(|(i, item)| unknown_tagged_field(item, &format!("{unknown_path}[{i}]")))
                .collect::<Result<Vec<_>>>()?;
            out.push((UNKNOWN_TAGGED_FIELDS, Datum::List(items)));
        }
        Some(other) => {
            return Err(Error::WrongType(format!(
                "field {unknown_path}: a sequence of {{\"tag\", \"data\"}}, not {}",
                other.describe()
            )))
        }
    }
    Ok(Datum::Struct(out))
}

fn nullable(ty: &FieldType) -> bool {
    matches!(
        ty,
        FieldType::NullableStr | FieldType::NullableArray(_) | FieldType::NullableStruct(_)
    )
}

/// One undeclared tagged field, `{"tag": int, "data": bytes}`, as a decoded struct holds it.
fn unknown_tagged_field(item: Loose, path: &str) -> Result<Datum> {
    let shape = || {
        Error::WrongType(format!(
            "field {path}: a mapping {{\"tag\": int, \"data\": bytes}}"
        ))
    };
    let Loose::Map(entries) = item else {
        return Err(shape());
    };
    let (mut tag, mut data) = (None, None);
    for (name, value) in entries {
        match (name.as_str(), value) {
            ("tag", Loose::Int(t)) => tag = Some(t),
            ("data", Loose::Bytes(d)) => data = Some(d),
            _ => return Err(shape()),
        }
    }
    let (Some(tag), Some(data)) = (tag, data) else {
        return Err(shape());
    };
    if u32::try_from(tag).is_err() {
        return Err(Error::InvalidArgument(format!(
            "field {path}: tag {tag} is out of range (0 to {})",
            u32::MAX
        )));
    }
    Ok(Datum::Struct(vec![
        ("tag", Datum::Int(tag)),
        ("data", Datum::Bytes(data)),
    ]))
}

fn build_field(ty: &'static FieldType, value: Loose, schema: &str, path: &str) -> Result<Datum> {
    let wrong = |expected: &str, value: &Loose| {
        Error::WrongType(format!(
            "field {path}: {expected}, not {}",
            value.describe()
        ))
    };
    let int = |bits: u32, value: Loose| -> Result<Datum> {
        let (min, max) = (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1);
        match value {
            Loose::Int(v) if (min..=max).contains(&i128::from(v)) => Ok(Datum::Int(v)),
            Loose::Int(v) => Err(out_of_range(path, &v.to_string(), bits, min, max)),
            Loose::HugeInt(v) => Err(out_of_range(path, &v, bits, min, max)),
            other => Err(wrong(&format!("an int{bits}"), &other)),
        }
    };
    match (ty, value) {
        (
            FieldType::NullableStr | FieldType::NullableArray(_) | FieldType::NullableStruct(_),
            Loose::Null,
        ) => Ok(Datum::Null),
        (_, Loose::Null) => Err(Error::WrongType(format!(
            "field {path}: None, but the field is not nullable"
        ))),
        (FieldType::I8, v) => int(8, v),
        (FieldType::I32, v) => int(32, v),
        (FieldType::I64, v) => int(64, v),
        (FieldType::Str | FieldType::NullableStr, Loose::Str(s)) => Ok(Datum::Str(s)),
        (FieldType::Bytes, Loose::Bytes(b)) => Ok(Datum::Bytes(b)),
        (FieldType::Uuid, Loose::Uuid(u)) => Ok(Datum::Uuid(u)),
        (FieldType::Uuid, Loose::Str(s)) => {
            uuid_from_string(&s).map(Datum::Uuid).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "field {path}: {s:?} is not a uuid as Kafka writes one \
                     (22 characters of base64url)"
                ))
            })
        }
        (FieldType::Array(inner) | FieldType::NullableArray(inner), Loose::List(items)) => items
            .into_iter()
            .enumerate()
            .map(|(i, item)| build_field(inner, item, schema, &format!("{path}[{i}]")))
            .collect::<Result<Vec<_>>>()
            .map(Datum::List),
        (FieldType::Struct(defs) | FieldType::NullableStruct(defs), v) => {
            build_struct(defs, v, schema, &format!("{path}."))
        }
        (FieldType::Str | FieldType::NullableStr, v) => Err(wrong("a str", &v)),
        (FieldType::Bytes, v) => Err(wrong("bytes", &v)),
        (FieldType::Uuid, v) => Err(wrong("a uuid (uuid.UUID or Kafka's string form)", &v)),
        (FieldType::Array(_) | FieldType::NullableArray(_), v) => Err(wrong("a sequence", &v)),
    }
}

fn out_of_range(path: &str, value: &str, bits: u32, min: i128, max: i128) -> Error {
    Error::InvalidArgument(format!(
        "field {path}: {value} is out of range for an int{bits} ({min} to {max})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::records::ConsumerGroupKey;
    use crate::codec::records::{decode_value, encode_value, Key, Value};

    fn map(entries: Vec<(&str, Loose)>) -> Loose {
        Loose::Map(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    fn round_trip(v: &ConsumerGroupValue) -> Vec<u8> {
        let data = encode_value(&Value::ConsumerGroup(v.clone())).unwrap();
        let key = Key::ConsumerGroup(ConsumerGroupKey {
            record_type: v.record_type,
            group_id: "g".into(),
            member_id: None,
            regular_expression: None,
        });
        let back = decode_value(&key, Some(&data), 0).unwrap();
        assert_eq!(back, Some(Value::ConsumerGroup(v.clone())));
        data
    }

    #[test]
    fn a_group_metadata_value_without_its_tagged_fields_takes_their_defaults() {
        let v = build_value(3, 0, map(vec![("epoch", Loose::Int(10))])).unwrap();
        assert_eq!(
            v.fields,
            Datum::Struct(vec![
                ("epoch", Datum::Int(10)),
                ("metadata_hash", Datum::Int(0)),
                ("creation_time_ms", Datum::Null),
            ])
        );
        assert_eq!(v.schema, "ConsumerGroupMetadataValue");
        // Neither default is written: what Kafka 4.3 writes for a group without a hash.
        assert_eq!(round_trip(&v), crate::testing::hex("0000 0000000a 00"));
        let hashed = build_value(
            3,
            0,
            map(vec![
                ("epoch", Loose::Int(10)),
                ("metadata_hash", Loose::Int(-5)),
            ]),
        )
        .unwrap();
        assert_eq!(
            round_trip(&hashed),
            crate::testing::hex("0000 0000000a 01 00 08 fffffffffffffffb")
        );
    }

    #[test]
    fn nested_structs_uuids_and_nulls() {
        let id: [u8; 16] = std::array::from_fn(|i| i as u8);
        let tp = |topic_id: Loose, epochs: Loose| {
            map(vec![
                ("topic_id", topic_id),
                (
                    "partitions",
                    Loose::List(vec![Loose::Int(0), Loose::Int(1)]),
                ),
                ("assignment_epochs", epochs),
            ])
        };
        let fields = map(vec![
            ("member_epoch", Loose::Int(5)),
            ("previous_member_epoch", Loose::Int(4)),
            ("state", Loose::Int(0)),
            (
                "assigned_partitions",
                Loose::List(vec![
                    tp(
                        Loose::Uuid(id),
                        Loose::List(vec![Loose::Int(5), Loose::Int(5)]),
                    ),
                    tp(Loose::Str("AAECAwQFBgcICQoLDA0ODw".into()), Loose::Null),
                ]),
            ),
            ("partitions_pending_revocation", Loose::List(vec![])),
        ]);
        let v = build_value(8, 0, fields).unwrap();
        round_trip(&v);

        let member = map(vec![
            ("instance_id", Loose::Null),
            ("rack_id", Loose::Str("r1".into())),
            ("client_id", Loose::Str("c".into())),
            ("client_host", Loose::Str("h".into())),
            (
                "subscribed_topic_names",
                Loose::List(vec![Loose::Str("t".into())]),
            ),
            ("subscribed_topic_regex", Loose::Null),
            ("rebalance_timeout_ms", Loose::Int(4000)),
            ("server_assignor", Loose::Str("uniform".into())),
            ("classic_member_metadata", Loose::Null),
            (
                UNKNOWN_TAGGED_FIELDS,
                Loose::List(vec![map(vec![
                    ("tag", Loose::Int(9)),
                    ("data", Loose::Bytes(vec![1])),
                ])]),
            ),
        ]);
        let v = build_value(5, 0, member).unwrap();
        round_trip(&v);
    }

    fn error(record_type: i16, fields: Vec<(&str, Loose)>) -> String {
        build_value(record_type, 0, map(fields))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (error(3, vec![]), "field epoch: missing"),
            (
                error(3, vec![("epoch", Loose::Int(1)), ("epoc", Loose::Int(1))]),
                "field epoc: no such field in ConsumerGroupMetadataValue",
            ),
            (
                error(3, vec![("epoch", Loose::Int(1 << 31))]),
                "field epoch: 2147483648 is out of range for an int32",
            ),
            (
                error(3, vec![("epoch", Loose::HugeInt("1".repeat(30)))]),
                "is out of range for an int32",
            ),
            (
                error(3, vec![("epoch", Loose::Str("1".into()))]),
                "field epoch: an int32, not str \"1\"",
            ),
            (
                error(3, vec![("epoch", Loose::Null)]),
                "field epoch: None, but the field is not nullable",
            ),
            (
                error(
                    7,
                    vec![(
                        "topic_partitions",
                        Loose::List(vec![map(vec![
                            ("topic_id", Loose::Str("nope".into())),
                            ("partitions", Loose::List(vec![])),
                        ])]),
                    )],
                ),
                "field topic_partitions[0].topic_id: \"nope\" is not a uuid",
            ),
            (
                error(
                    7,
                    vec![(
                        "topic_partitions",
                        Loose::List(vec![map(vec![("topic_id", Loose::Uuid([0; 16]))])]),
                    )],
                ),
                "field topic_partitions[0].partitions: missing",
            ),
            (
                error(
                    7,
                    vec![("topic_partitions", Loose::List(vec![Loose::Int(1)]))],
                ),
                "field topic_partitions[0]: a mapping of field names, not int 1",
            ),
        ];
        for (got, expected) in cases {
            assert!(got.contains(expected), "{got:?} lacks {expected:?}");
        }
        assert!(matches!(
            build_value(2, 0, map(vec![])),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            build_value(3, 1, map(vec![("epoch", Loose::Int(1))])),
            Err(Error::UnsupportedVersion(_))
        ));
        assert!(matches!(
            build_value(3, 0, Loose::List(vec![])),
            Err(Error::WrongType(_))
        ));
    }
}
