"""Run the referee standalone: ``python -m referee.server --port 50051 --token NAME=TOKEN ...``.

It serves until interrupted. The tournament CLI wraps the same facade as ``nap serve``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE, ProfileError, get_profile
from referee.server.app import Referee
from referee.server.limits import ServerLimits
from referee.server.setup import configure_logging, port_in_use, tune_collector


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m referee.server", description="Run the Nap Arena referee."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=50051, help="port (0: any free port)")
    parser.add_argument(
        "--token", action="append", default=[], metavar="NAME=TOKEN", help="register a bot entry (repeatable)"
    )
    parser.add_argument("--profile", default=DEFAULT_PROFILE.name, help="rules profile announced to bots")
    parser.add_argument("--decision-ms", type=int, default=1000)
    parser.add_argument("--bank-ms", type=int, default=0)
    parser.add_argument("--max-outstanding", type=int, default=ServerLimits().max_outstanding)
    parser.add_argument("--fault-limit", type=int, default=10)
    parser.add_argument("--json-logs", action="store_true", help="log JSON lines")
    return parser


async def _serve(referee: Referee, host: str, port: int) -> int:
    if port_in_use(host, port):
        print(f"referee: cannot listen on {host}:{port} (in use?)", file=sys.stderr)  # noqa: T201
        return 2
    try:
        bound = await referee.start(host=host, port=port)
    except OSError as exc:
        print(f"referee: {exc}", file=sys.stderr)  # noqa: T201 - the one-line CLI error
        return 2
    print(f"referee listening on {host}:{bound}", file=sys.stderr, flush=True)  # noqa: T201
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await referee.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and serve until interrupted."""
    args = _parser().parse_args(argv)
    configure_logging(json=args.json_logs)
    tune_collector()
    try:
        profile = get_profile(args.profile)
        referee = Referee(
            limits=ServerLimits(max_outstanding=args.max_outstanding, fault_limit=args.fault_limit),
            profile=profile,
            time_limits=TimeLimits(args.decision_ms, args.bank_ms),
        )
        for entry in args.token:
            name, sep, token = entry.partition("=")
            if not sep or not name or not token:
                msg = f"--token must be NAME=TOKEN, not {entry!r}"
                raise ValueError(msg)  # noqa: TRY301 - reported just below
            referee.add_bot(name=name, token=token)
    except (ValueError, ProfileError) as exc:
        print(f"referee: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    return asyncio.run(_serve(referee, args.host, args.port))


if __name__ == "__main__":
    sys.exit(main())
