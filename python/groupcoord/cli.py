"""The ``groupcoord`` command line."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groupcoord", description="A Kafka-compatible consumer-group coordinator."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    from groupcoord import dump_log

    dump = commands.add_parser(
        "dump-log",
        help="print the records of __consumer_offsets segment files as JSON lines",
        description=dump_log.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dump.add_argument("files", nargs="+", metavar="FILE", help="segment (.log) files")
    dump.add_argument("--no-decode", action="store_true",
                      help="print raw batches (header fields, base64 keys and values)")
    dump.add_argument("--stop-at-corruption", action="store_true",
                      help="report a corrupt tail on stderr but exit 0, as log recovery would")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version or args.command is None:
        from groupcoord import __version__

        print(f"groupcoord {__version__}")
        return 0
    if args.command == "dump-log":
        from groupcoord import dump_log

        return dump_log.main(args.files, decode=not args.no_decode,
                             stop_at_corruption=args.stop_at_corruption)
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
