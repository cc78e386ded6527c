"""The ``groupcoord`` command line: ``serve``, ``inspect``, ``dump-log`` and ``repair``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from groupcoord.config import Config, read_properties

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groupcoord", description="A Kafka-compatible consumer-group coordinator."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    from groupcoord.cli import dump_log

    dump = commands.add_parser(
        "dump-log",
        help="print the records of __consumer_offsets segment files as JSON lines",
        description=dump_log.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dump.add_argument("files", nargs="+", metavar="FILE",
                      help="segment (.log) files, or directories: a partition's, or a broker's log directory")
    dump.add_argument("--no-decode", action="store_true",
                      help="print raw batches (header fields, base64 keys and values)")
    dump.add_argument("--stop-at-corruption", action="store_true",
                      help="report a corrupt tail on stderr but exit 0, as log recovery would")
    dump.set_defaults(command_parser=dump)

    from groupcoord.cli import inspect

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
    inspect_parser.set_defaults(command_parser=inspect_parser)

    from groupcoord.cli import repair

    repair_parser = commands.add_parser(
        "repair",
        help="rewrite damaged __consumer_offsets partitions keeping every valid batch (originals kept)",
        description=repair.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    repair_parser.add_argument("data_dir", metavar="DATA_DIR",
                               help="a stopped server's data directory (its __consumer_offsets-N)")
    repair_parser.add_argument("--partition", type=int, action="append", default=[], metavar="N",
                               help="repair only this partition (repeatable)")
    repair_parser.add_argument("--dry-run", action="store_true",
                               help="only report what is damaged and what repairing would lose")
    add_config_arguments(repair_parser)
    repair_parser.set_defaults(command_parser=repair_parser)

    serve = commands.add_parser(
        "serve",
        help="serve Kafka clients: groups, offsets and group administration",
        description="Serve the Kafka wire protocol: consumer groups form, rebalance, commit "
                    "and fetch offsets, and are listed, described and deleted, on this node.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument("--port", type=int, default=9092, help="port to listen on (9092)")
    serve.add_argument("--data-dir", default="groupcoord-data", type=Path,
                       help="the __consumer_offsets log and the topics (./groupcoord-data)")
    serve.add_argument("--topic", action="append", default=[], metavar="NAME:PARTITIONS",
                       help="a topic to create (or grow); repeatable")
    serve.add_argument("--node-id", type=int, help="node id (node.id, default 0)")
    serve.add_argument("--metrics-port", type=int,
                       help="serve /metrics and /admin/owned-partitions over HTTP on this port")
    add_config_arguments(serve)
    serve.add_argument("--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS,
                       help="INFO (default), DEBUG, WARNING, ERROR or CRITICAL")
    serve.add_argument("--log-format", choices=("text", "json"), default="text",
                       help="text lines (default) or one JSON object per line")
    serve.set_defaults(command_parser=serve)
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


def load_config(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Config:
    """The settings of ``--config`` and ``--set``; a file that cannot be read or a bad
    setting ends the command with the reason (exit status 2), and a name that is no setting
    of ours is named on stderr."""
    try:
        config = config_from_arguments(args)
    except OSError as error:
        parser.error(f"cannot read --config {args.config}: {error.strerror or error}")
    except ValueError as error:
        parser.error(str(error))
    for name in config.extra:
        print(f"{parser.prog}: ignoring unknown setting {name}", file=sys.stderr)
    return config


def _serve(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from groupcoord.server import logs
    from groupcoord.server.app import ServerOptions, run
    from groupcoord.server.topics import parse_topic_spec

    config = load_config(parser, args)
    try:
        if args.node_id is not None:
            config = config.with_overrides({"node.id": args.node_id})
        topics = [parse_topic_spec(spec) for spec in args.topic]
    except ValueError as error:
        parser.error(str(error))
    logs.configure(args.log_level, args.log_format)
    options = ServerOptions(host=args.host, port=args.port, data_dir=args.data_dir,
                            topics=topics, metrics_port=args.metrics_port, config=config)
    return run(options)


def _printing(command: str, run: Callable[[], int]) -> int:
    """``run``'s exit status, with no traceback for a file that cannot be read or an output
    that cannot be written (status 1). A reader that went away (``groupcoord dump-log FILE |
    head``) is no error to tell; either way Python must not complain again when it flushes
    stdout at exit."""
    try:
        return run()
    except OSError as e:
        if e.filename is not None:
            print(f"groupcoord {command}: {e.filename}: {e.strerror or e}", file=sys.stderr)
            return 1
        if not isinstance(e, BrokenPipeError):
            print(f"groupcoord {command}: cannot write the output: {e.strerror or e}", file=sys.stderr)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    if next((arg for arg in given if not arg.startswith("-")), None) == "serve":
        # Before the parser imports the other commands, most of the package: a good part of
        # a second, in which a SIGTERM would kill the server's start.
        from groupcoord.server.shutdown import catch_stop_signals

        catch_stop_signals()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version or args.command is None:
        from groupcoord import __version__

        print(f"groupcoord {__version__}")
        return 0
    if args.command == "dump-log":
        from groupcoord.cli import dump_log

        return _printing("dump-log", lambda: dump_log.main(
            args.files, decode=not args.no_decode, stop_at_corruption=args.stop_at_corruption))
    if args.command == "serve":
        return _serve(args.command_parser, args)
    if args.command == "inspect":
        from groupcoord.cli import inspect

        config = load_config(args.command_parser, args)
        return _printing("inspect", lambda: inspect.main(args.data_dir, config, as_json=args.json))
    if args.command == "repair":
        from groupcoord.cli import repair

        config = load_config(args.command_parser, args)
        return _printing("repair", lambda: repair.main(
            args.data_dir, config, partitions=args.partition, dry_run=args.dry_run))
    parser.error(f"unknown command {args.command!r}")
    return 2
