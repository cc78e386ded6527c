"""The ``groupcoord`` command line."""

from __future__ import annotations

import argparse
import sys

from groupcoord.config import Config, read_properties


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
    from groupcoord import inspect

    inspect_parser = commands.add_parser(
        "inspect",
        help="print the groups and offsets that loading a __consumer_offsets log directory yields",
        description=inspect.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    inspect_parser.add_argument("data_dir", metavar="DATA_DIR",
                                help="a directory of __consumer_offsets-N partition directories")
    inspect_parser.add_argument("--json", action="store_true", help="print one JSON document")
    add_config_arguments(inspect_parser)
    return parser


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config server.properties`` and ``--set name=value``, Kafka's setting names."""
    parser.add_argument("--config", metavar="FILE", help="a Kafka server.properties file")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override one setting (repeatable), e.g. offsets.topic.num.partitions=50")


def config_from_arguments(args: argparse.Namespace) -> Config:
    properties: dict[str, str] = read_properties(args.config) if args.config else {}
    for assignment in args.set:
        name, sep, value = assignment.partition("=")
        if not sep:
            raise ValueError(f"--set takes NAME=VALUE, not {assignment!r}")
        properties[name.strip()] = value.strip()
    return Config.from_properties(properties)


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
    if args.command == "inspect":
        from groupcoord import inspect

        try:
            config = config_from_arguments(args)
        except ValueError as e:
            parser.error(str(e))
        return inspect.main(args.data_dir, config, as_json=args.json)
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
