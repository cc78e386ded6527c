"""The Arrow columns' names in Python (groupcoord.format.columns) against the codec's schema
and the records' declaration."""

from __future__ import annotations

from groupcoord.format import codec
from groupcoord.format import columns as C
from groupcoord.format.records import (
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    CONSUMER_PROTOCOL_ASSIGNMENT,
    MEMBER_METADATA,
    Struct,
)


def test_the_columns_are_the_codecs_schema_in_order() -> None:
    assert C.COLUMNS == tuple(codec.arrow_schema().names)


def test_every_column_name_is_a_column() -> None:
    names = {value for name, value in vars(C).items()
             if name.isupper() and isinstance(value, str) and name not in ("COMMIT", "ABORT")}
    nested = {C.SUBSCRIBED_TOPICS, C.ASSIGNED_PARTITIONS}
    assert names - nested <= set(C.COLUMNS)


def test_nested_columns_are_the_declared_structs() -> None:
    schema = codec.arrow_schema()
    member = schema.field(C.MEMBERS).type.value_type
    assert [f.name for f in member] == [
        *(f.name for f in MEMBER_METADATA.fields), C.SUBSCRIBED_TOPICS, C.ASSIGNED_PARTITIONS]
    assigned = member.field(C.ASSIGNED_PARTITIONS).type.value_type
    partition = CONSUMER_PROTOCOL_ASSIGNMENT.fields[0].type.element
    assert isinstance(partition, Struct)
    assert [f.name for f in assigned] == [f.name for f in partition.fields]
    topic_partitions = schema.field(C.TOPIC_PARTITIONS).type.value_type
    declared = CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE.fields[0].type.element
    assert isinstance(declared, Struct)
    assert [f.name for f in topic_partitions] == [f.name for f in declared.fields]


def test_control_names_are_the_codecs() -> None:
    log = b"".join(codec.write_control_batch(base_offset=i, timestamp=0, producer_id=7,
                                             producer_epoch=0, commit=commit)
                   for i, commit in enumerate((True, False)))
    assert codec.decode_arrow(log).column(C.CONTROL).to_pylist() == [C.COMMIT, C.ABORT]
