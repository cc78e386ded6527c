"""The declaration of the ``__consumer_offsets`` records and what is generated from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from groupcoord.format import codec
from groupcoord.format.records import RECORDS, RecordType, parse_versions

ROOT = Path(__file__).resolve().parents[1]


def test_generated_files_are_up_to_date() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_records.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_every_record_type_is_declared_once_in_type_order() -> None:
    assert [r.type for r in RECORDS] == sorted(RecordType)
    assert RecordType.OFFSET_COMMIT == 1 and RecordType.CONSUMER_GROUP_REGULAR_EXPRESSION == 16


def test_kafkas_version_ranges() -> None:
    assert parse_versions("3+") == (3, 0x7FFF)
    assert parse_versions("1") == (1, 1)
    assert parse_versions("2-4") == (2, 4)
    assert parse_versions("none") == (0, -1)


def test_consumer_group_keys_carry_the_declared_fields() -> None:
    for declared in RECORDS:
        if not declared.type.is_consumer_group:
            continue
        names = [f.name for f in declared.key.fields]
        second = {n: "x" for n in names[1:]}
        key = codec.ConsumerGroupKey(declared.type, "g", **second)
        assert codec.decode_key(codec.encode_key(key)) == key
        assert set(key.to_dict()) == {"record_type", *names}
