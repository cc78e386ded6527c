"""Codec benchmarks: decoding a realistic segment with the Rust codec (``rust``) and with
kafka-python's record parser plus pure-Python key/value decoding (``python``), per
compression, side by side.

Full scale decodes 100 MB of records per round; ``GROUPCOORD_BENCH_SCALE=smoke`` 256 KB.
``extra_info`` records MB/s and records/s of the round (recomputed by the report from the
median).
"""

from __future__ import annotations

from typing import Any

import pytest

from conftest import scaled
from offsets_data import segment

from groupcoord import codec, pycodec

COMPRESSIONS = ["none", "gzip", "snappy", "lz4", "zstd"]
SIZE = scaled(100 << 20, 256 << 10)


def _versions() -> str:
    import importlib.metadata as md

    names = ("kafka-python", "crc32c", "python-snappy", "lz4", "zstandard")
    return ", ".join(f"{n} {md.version(n)}" for n in names)


@pytest.fixture(scope="module", autouse=True)
def _print_peer_versions() -> None:
    from kafka.record import util

    accelerated = util.crc32c_c is not None
    print(f"\ncodec benchmark peers: {_versions()}; kafka-python C crc32c: {accelerated}")
    assert accelerated, "the baseline must run with the crc32c C accelerator"


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("impl", ["rust", "python"])
def test_decode_objects(benchmark: Any, impl: str, compression: str) -> None:
    data = segment(SIZE, compression)
    expected = len(codec.decode_records(data))

    def rust() -> int:
        return len(codec.decode_records(data))

    def python() -> int:
        return sum(1 for _ in pycodec.decode_records(data))

    benchmark.group = f"decode-objects-{compression}"
    result = benchmark.pedantic(rust if impl == "rust" else python, rounds=scaled(3, 1), iterations=1)
    assert result == expected
    benchmark.extra_info.update(bytes=len(data), records=expected)


def _python_arrow(data: bytes) -> Any:
    """The baseline into Arrow: kafka-python + pycodec, rows flattened, pyarrow infers."""
    import pyarrow as pa

    rows = []
    for r in pycodec.decode_records(data):
        row = {"partition": r["partition"], "offset": r["offset"], "timestamp": r["timestamp"]}
        for prefix in ("key", "value"):
            if r[prefix] is not None:
                row.update({f"{prefix}_{k}": v for k, v in r[prefix].items()})
        rows.append(row)
    return pa.RecordBatch.from_pylist(rows)


@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("impl", ["rust", "python"])
def test_decode_arrow(benchmark: Any, impl: str, compression: str) -> None:
    data = segment(SIZE, compression)
    expected = len(codec.decode_records(data))

    def rust() -> int:
        return int(codec.decode_arrow(data).num_rows)

    def python() -> int:
        return int(_python_arrow(data).num_rows)

    benchmark.group = f"decode-arrow-{compression}"
    result = benchmark.pedantic(rust if impl == "rust" else python, rounds=scaled(3, 1), iterations=1)
    assert result == expected
    benchmark.extra_info.update(bytes=len(data), records=expected)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_read_batches_ceiling(benchmark: Any, compression: str) -> None:
    """Parsing batches with CRC checks and decompression but no key/value decoding: the
    ceiling for the decode above."""
    data = segment(SIZE, compression)
    benchmark.group = f"decode-objects-{compression}"
    batches = benchmark.pedantic(lambda: codec.read_batches(data), rounds=scaled(3, 1), iterations=1)
    benchmark.extra_info.update(bytes=len(data), records=sum(len(b.records) for b in batches))


def test_pycodec_matches_rust() -> None:
    data = segment(scaled(2 << 20, 64 << 10), "none")
    rust = codec.decode_records(data)
    python = list(pycodec.decode_records(data))
    assert len(rust) == len(python)
    for r, p in zip(rust, python):
        assert r.offset == p["offset"] and r.timestamp == p["timestamp"]
        assert r.key is not None and r.key.to_dict() == p["key"]
        assert (r.value.to_dict() if r.value is not None else None) == p["value"]
