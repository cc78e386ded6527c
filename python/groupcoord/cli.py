"""The ``groupcoord`` command line."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groupcoord", description="A Kafka-compatible consumer-group coordinator."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version or args.command is None:
        from groupcoord import __version__

        print(f"groupcoord {__version__}")
        return 0
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
