"""Keys and values of every declared record type and version, drawn from the declaration
(groupcoord.format.records), written into a log and read back by every decode path: the
record objects (``decode_records``, ``iter_records``), the Arrow rows (``decode_arrow``,
column by column) and ``dump-log``'s lines, each checked against the drawn fields.

The consumer-group values are encoded here, from the declaration, by a small encoder of
Kafka's flexible structs; the others by the codec's classes.
"""

from __future__ import annotations

import base64
import io
import json
import struct
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groupcoord.cli import dump_log
from groupcoord.format import codec
from groupcoord.format import columns as C
from groupcoord.format import records as R

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=5)
UUIDS = st.binary(min_size=16, max_size=16).map(
    lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode())
INTS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_PACK = {"int8": ">b", "int16": ">h", "int32": ">i", "int64": ">q"}


def of_type(t: R.FieldType, version: int) -> st.SearchStrategy[Any]:
    if isinstance(t, R.Array):
        return st.lists(of_type(t.element, version), max_size=3)
    if isinstance(t, R.Struct):
        return struct_values(t.fields, version, flexible=True)
    if t.name in INTS:
        bits = INTS[t.name]
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return {"string": TEXT, "bytes": st.binary(max_size=5), "uuid": UUIDS}[t.name]


def absent(f: R.Field, values: dict[str, Any]) -> Any:
    """What a field not on the wire reads as."""
    return values[f.default.field] if isinstance(f.default, R.CopyOf) else f.zero()


@st.composite
def struct_values(draw: Any, fields: tuple[R.Field, ...], version: int,
                  flexible: bool) -> dict[str, Any]:
    """Every field of a struct as its decoder gives it: drawn where the version has it (a
    tagged field drawn or left at its default), else its default."""
    values: dict[str, Any] = {}
    for f in fields:
        if not f.present(version) or (f.tag is not None and not flexible):
            continue
        value = of_type(f.type, version)
        if f.is_nullable(version):
            value = st.none() | value
        if f.tag is not None:
            value = st.just(f.zero()) | value
        values[f.name] = draw(value)
    for f in fields:
        if f.name not in values:
            values[f.name] = absent(f, values)
    return values


# --- Kafka's flexible structs, encoded from the declaration (the consumer-group values) ------


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def encode_field(t: R.FieldType, value: Any) -> bytes:
    if isinstance(t, R.Array):
        if value is None:
            return uvarint(0)
        return uvarint(len(value) + 1) + b"".join(encode_field(t.element, v) for v in value)
    if isinstance(t, R.Struct):
        return encode_struct(t.fields, value)
    if t.name in _PACK:
        return struct.pack(_PACK[t.name], value)
    if t.name == "uuid":
        return base64.urlsafe_b64decode(value + "==")
    if value is None:
        return uvarint(0)
    data = value.encode() if isinstance(value, str) else value
    return uvarint(len(data) + 1) + data


def encode_struct(fields: tuple[R.Field, ...], values: dict[str, Any]) -> bytes:
    out = b"".join(encode_field(f.type, values[f.name]) for f in fields if f.tag is None)
    tagged = []
    for f in sorted((f for f in fields if f.tag is not None), key=lambda f: f.tag or 0):
        value = values[f.name]
        if value == f.zero():
            continue  # left out, as Kafka leaves a tagged field at its default
        body = (uvarint(0) if value is None else uvarint(1) + encode_struct(f.type.fields, value)
                if isinstance(f.type, R.Struct) else encode_field(f.type, value))
        tagged.append(uvarint(f.tag or 0) + uvarint(len(body)) + body)
    return out + uvarint(len(tagged)) + b"".join(tagged)


# --- one drawn record, as the codec's objects and as each decode path gives it ---------------


@st.composite
def consumer_protocol(draw: Any, decl: R.Schema, make: Any,
                      encode: Any) -> tuple[dict[str, Any], bytes]:
    """A subscription or assignment (``decl``): its fields as its ``to_dict`` gives them, and
    its encoding by the codec."""
    version = draw(st.integers(0, decl.max_version))
    fields = draw(struct_values(decl.fields, version, flexible=False))
    for name in ("owned_partitions", "assigned_partitions"):
        if name in fields:
            fields[name] = [(p["topic"], p["partitions"]) for p in fields[name]]
    return {"version": version, **fields}, encode(make(**fields, version=version))


def subscriptions() -> st.SearchStrategy[tuple[dict[str, Any], bytes]]:
    return consumer_protocol(R.CONSUMER_PROTOCOL_SUBSCRIPTION, codec.ConsumerProtocolSubscription,
                             codec.encode_subscription)


def assignments() -> st.SearchStrategy[tuple[dict[str, Any], bytes]]:
    return consumer_protocol(R.CONSUMER_PROTOCOL_ASSIGNMENT, codec.ConsumerProtocolAssignment,
                             codec.encode_assignment)


@st.composite
def drawn_records(draw: Any, only: tuple[R.Record, int] | None = None) -> dict[str, Any]:
    """A record of any declared type and version, or of ``only``'s."""
    rec: R.Record = draw(st.sampled_from(R.RECORDS)) if only is None else only[0]
    key = draw(struct_values(rec.key.fields, 0, flexible=False))
    version = draw(st.integers(*rec.value.versions)) if only is None else only[1]
    drawn: dict[str, Any] = {"record": rec, "key": key, "version": version, "value": None}
    if draw(st.integers(0, 9)) == 0:
        return drawn  # a tombstone
    value = draw(struct_values(rec.value.fields, version, rec.value.is_flexible(version)))
    if rec.type is R.RecordType.GROUP_METADATA:
        value["protocol_type"] = draw(st.sampled_from(["consumer", "connect"]) | TEXT)
        for member in value["members"]:
            member["subscription_decoded"], member["subscription"] = draw(subscriptions())
            member["assignment_decoded"], member["assignment"] = draw(assignments())
    drawn["value"] = value
    return drawn


MEMBER_FIELDS = tuple(f.name for f in R.MEMBER_METADATA.fields)


def key_object(d: dict[str, Any]) -> Any:
    t, key = d["record"].type, d["key"]
    if t.is_offset_commit:
        return codec.OffsetCommitKey(key["group"], key["topic"], key["partition"], int(t))
    if t is R.RecordType.GROUP_METADATA:
        return codec.GroupMetadataKey(key["group"])
    return codec.ConsumerGroupKey(int(t), **key)


def value_object(d: dict[str, Any], key: Any) -> Any:
    t, value, version = d["record"].type, d["value"], d["version"]
    if value is None:
        return None
    if t.is_offset_commit:
        return codec.OffsetCommitValue(**value, version=version)
    if t is R.RecordType.GROUP_METADATA:
        members = [codec.MemberMetadata(**{n: m[n] for n in MEMBER_FIELDS}) for m in value["members"]]
        return codec.GroupMetadataValue(**{**value, "members": members}, version=version)
    data = struct.pack(">h", version) + encode_struct(d["record"].value.fields, value)
    decoded = codec.decode_value(key, data)
    assert codec.encode_value(decoded) == data, "written back as Kafka writes it"
    return decoded


def jsonable(value: Any) -> Any:
    """``value`` as JSON gives it back: bytes as base64, tuples as lists."""
    return json.loads(json.dumps(value, default=lambda b: base64.b64encode(b).decode()))


def check_object(d: dict[str, Any], key: Any, value: Any) -> None:
    rec, expected = d["record"], d["value"]
    assert {k: v for k, v in key.to_dict().items() if k != "record_type"} == {
        k: v for k, v in d["key"].items() if v is not None or rec.type.is_offset_commit
        or rec.type is R.RecordType.GROUP_METADATA}
    assert key.record_type == rec.type
    if expected is None:
        assert value is None
        return
    assert value.version == d["version"]
    if rec.type.is_consumer_group:
        assert value.schema == rec.value.name and value.fields == expected
        return
    for name, want in expected.items():
        if name == "members":
            got = [{n: getattr(m, n) for n in MEMBER_FIELDS} for m in value.members]
            assert got == [{n: m[n] for n in MEMBER_FIELDS} for m in want]
        else:
            assert getattr(value, name) == want, name


def arrow_row(d: dict[str, Any]) -> dict[str, Any]:
    """The Arrow row the codec gives for a drawn record (its columns but where it lies)."""
    rec, key, value = d["record"], d["key"], d["value"]
    row: dict[str, Any] = {c: None for c in C.COLUMNS}
    row[C.RECORD_TYPE] = int(rec.type)
    row[C.IS_TOMBSTONE] = value is None
    row[C.VALUE_VERSION] = None if value is None else d["version"]
    if rec.type.is_offset_commit:
        row.update(zip(C.OFFSET_COMMIT_KEY_COLUMNS, (key[f.name] for f in rec.key.fields)))
        if value is not None:
            row.update(zip(C.OFFSET_COMMIT_COLUMNS, (value[f.name] for f in rec.value.fields)))
        return row
    if rec.type is R.RecordType.GROUP_METADATA:
        row[C.GROUP] = key["group"]
        if value is not None:
            row.update({name: value[name] for name in C.GROUP_METADATA_COLUMNS})
            consumer = value["protocol_type"] == "consumer"
            row[C.MEMBERS] = [{
                **{n: m[n] for n in MEMBER_FIELDS},
                C.SUBSCRIBED_TOPICS: m["subscription_decoded"]["topics"] if consumer else None,
                C.ASSIGNED_PARTITIONS: [
                    {"topic": t, "partitions": p}
                    for t, p in m["assignment_decoded"]["assigned_partitions"]
                ] if consumer else None,
            } for m in value["members"]]
        return row
    row[C.GROUP] = key["group_id"]
    row[C.MEMBER_ID] = key.get("member_id")
    row[C.REGULAR_EXPRESSION] = key.get("regular_expression")
    if value is not None:
        epoch = {3: "epoch", 6: "assignment_epoch", 8: "member_epoch"}.get(int(rec.type))
        row[C.EPOCH] = value[epoch] if epoch else None
        assigned = {7: "topic_partitions", 8: "assigned_partitions"}.get(int(rec.type))
        row[C.TOPIC_PARTITIONS] = [{"topic_id": tp["topic_id"], "partitions": tp["partitions"]}
                                   for tp in value[assigned]] if assigned else None
        row[C.CONSUMER_GROUP_FIELDS] = jsonable(value)
    return row


def dump_line(d: dict[str, Any], key: Any) -> dict[str, Any]:
    """The ``key`` and ``value`` of the record's ``dump-log`` line."""
    rec, value = d["record"], d["value"]
    line = {"record_type": int(rec.type), "key": jsonable(key.to_dict()), "value": None}
    if value is None:
        return line
    if rec.type.is_consumer_group:
        out = {"record_type": int(rec.type), "version": d["version"], "schema": rec.value.name,
               "fields": value}
    else:
        out = {"version": d["version"], **value}
        if rec.type.is_offset_commit and value["topic_id"] is None:
            del out["topic_id"]
        if rec.type is R.RecordType.GROUP_METADATA:
            consumer = value["protocol_type"] == "consumer"
            out["members"] = [{**{n: m[n] for n in MEMBER_FIELDS}, **({
                "subscription_decoded": m["subscription_decoded"],
                "assignment_decoded": m["assignment_decoded"],
            } if consumer else {})} for m in value["members"]]
    line["value"] = jsonable(out)
    return line


EVERY_VERSION = [(rec, version) for rec in R.RECORDS
                 for version in range(rec.value.versions[0], rec.value.versions[1] + 1)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(drawn_records(), min_size=1, max_size=8), st.integers(1, 3))
def test_every_decode_path_gives_the_declared_fields(drawn: list[dict[str, Any]],
                                                     batches: int) -> None:
    check_every_path(drawn, batches)


@pytest.mark.parametrize("only", EVERY_VERSION,
                         ids=[f"{rec.type.name}-v{version}" for rec, version in EVERY_VERSION])
def test_every_type_and_version(only: tuple[R.Record, int]) -> None:
    @settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(drawn_records(only), min_size=1, max_size=3))
    def check(drawn: list[dict[str, Any]]) -> None:
        check_every_path(drawn, 1)

    check()


def check_every_path(drawn: list[dict[str, Any]], batches: int) -> None:
    """Write the drawn records in ``batches`` batches and read them back every way."""
    keys = [key_object(d) for d in drawn]
    values = [value_object(d, k) for d, k in zip(drawn, keys)]
    encoded = [(codec.encode_key(k), None if v is None else codec.encode_value(v))
               for k, v in zip(keys, values)]
    cut = max(1, len(encoded) // batches)
    log = b"".join(codec.write_batch(encoded[i:i + cut], base_offset=i, timestamp=1_000)
                   for i in range(0, len(encoded), cut))

    decoded = codec.decode_records(log)
    assert [(r.offset, r.key, r.value) for r in decoded] == list(zip(range(len(drawn)), keys, values))
    for d, r in zip(drawn, decoded):
        check_object(d, r.key, r.value)
    assert list(codec.iter_records(log)) == decoded

    rows = codec.decode_arrow(log).to_pylist()
    where = {C.PARTITION, C.OFFSET, C.TIMESTAMP, C.BATCH_POSITION, C.PRODUCER_ID,
             C.PRODUCER_EPOCH, C.IS_TRANSACTIONAL, C.CONTROL}
    for d, row in zip(drawn, rows, strict=True):
        expected = arrow_row(d)
        for column in C.COLUMNS:
            if column in where:
                continue
            got = row[column]
            if column == C.CONSUMER_GROUP_FIELDS and got is not None:
                got = json.loads(got)
            assert got == expected[column], (column, d["record"].type)

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "00000000000000000000.log"
        path.write_bytes(log)
        out, err = io.StringIO(), io.StringIO()
        assert dump_log.dump([path], decode=True, stop_at_corruption=False, out=out, err=err) == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [{k: line[k] for k in ("record_type", "key", "value")} for line in lines] == [
        dump_line(d, k) for d, k in zip(drawn, keys)]
