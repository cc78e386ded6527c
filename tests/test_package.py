"""The installed wheel: it imports, its native module is the compiled one, its CLI runs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import groupcoord
from groupcoord import _native

ROOT = Path(__file__).resolve().parents[1]


def test_version_matches_pyproject() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert groupcoord.__version__ == pyproject["project"]["version"]


def test_native_module_is_compiled_extension() -> None:
    assert Path(_native.__file__).suffix in (".so", ".pyd")


def test_package_is_typed() -> None:
    pkg = Path(groupcoord.__file__).parent
    assert (pkg / "py.typed").exists()
    assert (pkg / "_native.pyi").exists()


def test_cli_prints_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "groupcoord.cli", "--version"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert out.strip() == f"groupcoord {groupcoord.__version__}"
