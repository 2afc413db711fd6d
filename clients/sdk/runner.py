"""``run()``: the one call a bot's ``__main__`` makes; command line, signals and exit status.

The network (:mod:`clients.sdk.connection`, grpc) is imported when :func:`serve` starts, not
with this module: a bot module that imports ``run`` loads no grpc until it serves.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import signal
import sys
from typing import TYPE_CHECKING, NoReturn

from clients.environment import ADDRESS_ENV, TOKEN_ENV
from clients.sdk.bot import wants_events
from clients.sdk.dispatch import Dispatcher
from clients.sdk.options import Options

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from clients.sdk.bot import Bot
    from clients.sdk.options import ExitCode


def add_options(parser: argparse.ArgumentParser, *, name: str) -> None:
    """Add the SDK's options (``--address``, ``--token``, ``--name``...) to ``parser``."""
    group = parser.add_argument_group("referee connection")
    group.add_argument(
        "--address", default=os.environ.get(ADDRESS_ENV), help=f"referee host:port (default: ${ADDRESS_ENV})"
    )
    group.add_argument(
        "--token",
        default=os.environ.get(TOKEN_ENV),
        help=f"this bot entry's secret token (default: ${TOKEN_ENV})",
    )
    group.add_argument("--name", default=name, help=f"bot name for the referee's logs (default: {name})")
    group.add_argument(
        "--max-batch",
        type=int,
        default=256,
        metavar="N",
        help="decisions accepted outstanding at once (default: 256)",
    )
    group.add_argument(
        "--reconnect-for",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="how long to keep reconnecting after the stream breaks (default: 15)",
    )


def parse_options(
    argv: Sequence[str] | None = None,
    *,
    name: str,
    version: str = "0",
    parser: argparse.ArgumentParser | None = None,
) -> tuple[Options, argparse.Namespace]:
    """Parse the command line (the bot's own options too, if ``parser`` has them).

    Exits with status 2 and a usage message when the address or token is missing.
    """
    parser = parser if parser is not None else argparse.ArgumentParser(prog=name)
    add_options(parser, name=name)
    args = parser.parse_args(argv)
    if not args.address:
        parser.error(f"the referee's address is needed: --address HOST:PORT or ${ADDRESS_ENV}")
    if not args.token:
        parser.error(f"a token is needed: --token TOKEN or ${TOKEN_ENV}")
    if args.max_batch < 1:
        parser.error("--max-batch must be at least 1")
    options = Options(
        address=args.address,
        token=args.token,
        name=args.name,
        version=version,
        max_batch=args.max_batch,
        reconnect_for=args.reconnect_for,
    )
    return options, args


def run(
    factory: Callable[[], Bot],
    *,
    name: str,
    version: str = "0",
    argv: Sequence[str] | None = None,
    options: Options | None = None,
) -> NoReturn:
    """Play for the referee until it has no more tables for this bot, then exit.

    ``factory`` (usually the Bot subclass itself) is called once per (table, seat). The
    address and token come from ``options`` or else the command line (``--address``,
    ``--token``) or the environment (``NAP_REFEREE``, ``NAP_TOKEN``). Exit status: 0 when
    the referee ends the stream or on SIGTERM/SIGINT (after a Goodbye), 1 on an
    unrecoverable stream error, 2 on an unknown token, a Refusal or bad usage, 3 when the
    referee stays unreachable past the reconnect budget. Errors are one line on stderr.
    The garbage collector is left as Python sets it: freezing or tuning it is the bot's
    choice (``docs/writing-a-bot-python.md``).
    """
    if options is None:
        options, _ = parse_options(argv, name=name, version=version)
    code = asyncio.run(serve(factory, options))
    sys.exit(int(code))


async def serve(factory: Callable[[], Bot], options: Options) -> ExitCode:
    """:func:`run` without the exit: serve until done, stopping cleanly on SIGTERM/SIGINT."""
    from clients.sdk.connection import Connection  # noqa: PLC0415 - grpc, loaded only to serve

    prefix = f"{options.name}: "

    def log(line: str) -> None:
        print(prefix + line, file=sys.stderr, flush=True)  # noqa: T201 - diagnostics on stderr

    if not options.events and wants_events(factory):
        options = dataclasses.replace(options, events=True)
    dispatcher = Dispatcher(factory, log=log)
    connection = Connection(options, dispatcher, log=log)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, connection.stop)
    try:
        code = await connection.serve()
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
    stats = dispatcher.stats
    if stats.errors or stats.illegal or stats.event_errors:
        log(
            f"{stats.decisions} decisions; {stats.errors} raised, {stats.illegal} illegal "
            f"(answered with the lowest legal action), {stats.event_errors} event errors"
        )
    return code
