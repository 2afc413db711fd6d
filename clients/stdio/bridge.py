"""The stdin/stdout bridge: a bot in any language, as a program that reads and writes JSON lines.

::

    NAP_REFEREE=host:port NAP_TOKEN=secret python -m clients.stdio.bridge -- ./bot --its-options

A program that answers the pool variants' decisions says so with ``--decisions
exchange,peep,widow`` (its Hello lists them); without it the referee refuses the bridge
for a tournament of a profile that asks them.

The bridge holds the gRPC stream to the referee (through the SDK's connection: Hello,
reconnects, Goodbye on SIGTERM) and runs the program as its child. Each decision request
becomes one JSON line on the program's stdin; the program's next line on stdout is its
answer (docs/stdio-protocol.md). The bridge never answers for the program: a reply that
is no action is forwarded as it is (the referee records it as malformed), and a request
the program does not answer in time, or that was in flight when it exited, is left
unanswered (the referee records it as late). The program is restarted when it exits, a
bounded number of times; past that the bridge says Goodbye and exits with status 1.

Exit status: 0 when the referee ends the stream or on SIGTERM/SIGINT; 1 when the program
cannot be started or keeps exiting; 2 on an unknown token, a Refusal or bad usage; 3 when
the referee stays unreachable.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final, NoReturn

from clients.environment import ADDRESS_ENV, TOKEN_ENV
from clients.sdk import Bot, Dispatcher, ExitCode, Options, add_options
from clients.sdk.connection import Connection
from clients.stdio.child import ChildBot, ChildError, StderrTail
from clients.stdio.jsonlines import decode_reply, encode_request
from referee.wire.botstream import Answer
from referee.wire.stream import DECISION_KINDS

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from referee.wire.botstream import Answers, Batch, Request

NAME: Final = "stdio-bridge"
VERSION: Final = "1.0"


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    """How the bridge runs its program."""

    program: tuple[str, ...]
    """The program's argv, run in the bridge's working directory."""
    max_restarts: int = 3
    """Restarts of the program after it exits on its own, before the bridge gives up."""
    hang_timeout_s: float = 10.0
    """A program that owes a reply this long past a deadline is killed (and restarted)."""
    stderr_log: Path | None = None
    """Where the last 64 KiB of the program's stderr are written (on each exit and at the end)."""


class StdioDispatcher(Dispatcher):
    """Answers each Batch by asking the child program, one JSON line per request.

    It plays the SDK dispatcher's part for :class:`~clients.sdk.connection.Connection`:
    ``handle_batch`` returns an awaitable of the batch's answers, all in one Answers
    message: only the requests the program answered in time (possibly none).
    """

    def __init__(self, child: ChildBot, *, log: Callable[[str], None]) -> None:
        super().__init__(Bot, log=log)
        self.child = child
        self.answered = 0
        """Requests answered with the program's reply."""
        self.unanswered = 0
        """Requests left for the referee to fault (no reply in time, or the program died)."""

    def handle_batch(self, batch: Batch) -> Answers | Awaitable[Answers] | None:
        """Start asking the program about every request now (in order); answer when all are settled."""
        requests = batch.requests
        if not requests:
            return None
        now = asyncio.get_running_loop().time()
        asks = [self._ask(request, started=now) for request in requests]
        return self._answers(requests, [asyncio.ensure_future(ask) for ask in asks])

    async def _ask(self, request: Request, *, started: float) -> str | None:
        line = await self.child.ask(
            encode_request(request.message),
            table=request.table,
            expires_at=started + request.deadline_ms / 1000,
        )
        if line is None:
            return None
        return decode_reply(line, request_id=request.request_id)

    async def _answers(
        self,
        requests: Sequence[Request],
        asks: Sequence[asyncio.Future[str | None]],
    ) -> Answers:
        answers = []
        for request, reply in zip(requests, await asyncio.gather(*asks), strict=True):
            if reply is None:
                self.unanswered += 1
                continue
            self.answered += 1
            answers.append(Answer(request.request_id, reply))
        return tuple(answers)

    def close_table(self, table: str) -> None:
        """The table is over: requests of it still with the program are given up on."""
        super().close_table(table)
        self.child.withdraw(table)


def _log(line: str) -> None:
    print(f"{NAME}: {line}", file=sys.stderr, flush=True)  # noqa: T201 - diagnostics on stderr


async def serve(settings: Settings, options: Options, *, log: Callable[[str], None] = _log) -> int:
    """Run the program and serve the referee until the stream ends; return the exit status."""
    env = dict(os.environ)
    env.pop(TOKEN_ENV, None)  # the program needs no secret
    env.setdefault("PYTHONUNBUFFERED", "1")
    connection: Connection | None = None

    def give_up() -> None:  # the program keeps exiting: leave the referee
        if connection is not None:
            connection.stop()

    child = ChildBot(
        settings.program,
        log=log,
        env=env,
        stderr=StderrTail(log=log, path=settings.stderr_log),
        max_restarts=settings.max_restarts,
        hang_timeout_s=settings.hang_timeout_s,
        on_give_up=give_up,
    )
    try:
        await child.start()
    except ChildError as exc:
        log(str(exc))
        return 1
    dispatcher = StdioDispatcher(child, log=log)
    connection = Connection(options, dispatcher, log=log)
    if child.gave_up:
        connection.stop()

    def stop() -> None:
        child.begin_close()
        connection.stop()

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop)
    try:
        code = await connection.serve()
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await child.close()
    log(
        f"{dispatcher.answered} answered, {dispatcher.unanswered} left unanswered, "
        f"{child.restarts} restarts, {child.stale_replies} late replies dropped"
    )
    if child.gave_up:
        return 1
    return int(code)


def parse_arguments(argv: Sequence[str] | None = None) -> tuple[Settings, Options]:
    """The bridge's command line: SDK connection options, bridge options, ``--``, the program."""
    parser = argparse.ArgumentParser(
        prog="python -m clients.stdio.bridge",
        description="Serve the Nap referee with a program that speaks JSON lines on stdin/stdout.",
        epilog="Example: python -m clients.stdio.bridge -- ./bot",
    )
    parser.add_argument(
        "--max-restarts",
        type=int,
        default=3,
        metavar="N",
        help="restart the program at most N times after it exits (default: 3)",
    )
    parser.add_argument(
        "--hang-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="kill a program that owes a reply this long past its deadline (default: 10)",
    )
    parser.add_argument(
        "--stderr-log",
        type=Path,
        default=None,
        metavar="PATH",
        help="write the last 64 KiB of the program's stderr here",
    )
    parser.add_argument(
        "--decisions",
        default="",
        metavar="KINDS",
        help=(
            "the decisions beyond bids and cards the program answers, comma-separated: "
            f"{', '.join(DECISION_KINDS)} (default: none; the pool variants need them)"
        ),
    )
    parser.add_argument("program", nargs="+", help="the bot program and its arguments (after --)")
    add_options(parser, name=NAME)
    # One decision at a time by default: the referee's clock for a request starts when it is
    # sent, so requests wait in the referee's queue rather than behind a busy program.
    parser.set_defaults(max_batch=1)
    parser._option_string_actions["--max-batch"].help = (  # noqa: SLF001 - the SDK's option, our default
        "requests written to the program before its replies come back (default: 1)"
    )
    args = parser.parse_args(argv)
    if not args.address:
        parser.error(f"the referee's address is needed: --address HOST:PORT or ${ADDRESS_ENV}")
    if not args.token:
        parser.error(f"a token is needed: --token TOKEN or ${TOKEN_ENV}")
    if args.max_batch < 1 or args.max_restarts < 0 or args.hang_timeout <= 0:
        parser.error("--max-batch must be at least 1, --max-restarts not negative, --hang-timeout positive")
    decisions = tuple(kind.strip() for kind in args.decisions.split(",") if kind.strip())
    unknown = [kind for kind in decisions if kind not in DECISION_KINDS]
    if unknown:
        parser.error(f"--decisions: no such kind {', '.join(unknown)} (kinds: {', '.join(DECISION_KINDS)})")
    name = args.name if args.name != NAME else f"stdio:{Path(args.program[0]).name}"
    options = Options(
        address=args.address,
        token=args.token,
        name=name,
        version=VERSION,
        max_batch=args.max_batch,
        reconnect_for=args.reconnect_for,
        decisions=decisions,
    )
    settings = Settings(
        program=tuple(args.program),
        max_restarts=args.max_restarts,
        hang_timeout_s=args.hang_timeout,
        stderr_log=args.stderr_log,
    )
    return settings, options


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """``python -m clients.stdio.bridge [options] -- PROGRAM ARGS...``."""
    settings, options = parse_arguments(argv)
    sys.exit(asyncio.run(serve(settings, options)))


__all__ = ["ExitCode", "Settings", "StdioDispatcher", "main", "parse_arguments", "serve"]

if __name__ == "__main__":
    main()
