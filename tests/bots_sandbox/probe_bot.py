"""A bot that tries every channel a cheater would, prints what it reached, then plays at random.

python probe_bot.py --db PATH --out PATH --other PATH --pid PID --port PORT

One line per attempt on stdout: ``probe NAME: reached DETAIL`` or ``probe NAME: denied DETAIL``.
``db``: read the database; ``out``: list the output folder; ``other``: list another bot's
folder; ``proc``: read the command line of process PID (the runner); ``procs``: see any
process but its own tree; ``tcp``: connect to 127.0.0.1:PORT; ``write-folder``: write a
file in its own folder; ``write-parent``: in its folder's parent; ``tmp``: write in /tmp
(its scratch space: reached, and private).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from clients.bots.random_bot import RandomBot
from clients.sdk import parse_options, run

if TYPE_CHECKING:
    from collections.abc import Callable


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _try(name: str, attempt: Callable[[], str]) -> None:
    try:
        detail = attempt()
    except OSError as exc:
        _say(f"probe {name}: denied {type(exc).__name__}: {exc.strerror or exc}")
    else:
        _say(f"probe {name}: reached {detail}")


def _connect(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        return f"127.0.0.1:{port}"


def _other_processes() -> str:
    mine = {os.getpid(), os.getppid()}
    others = [
        pid
        for pid in (int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit())
        if pid not in mine and pid > 2
    ]
    if not others:
        raise PermissionError(1, "no other process in sight")
    return f"{len(others)} other processes"


def _write(folder: Path) -> str:
    path = folder / f"probe-{os.getpid()}.txt"
    path.write_text("written by the probe\n")
    path.unlink()
    return str(folder)


def probe(args: argparse.Namespace) -> None:
    _try("db", lambda: f"{len(Path(args.db).read_bytes())} bytes of {args.db}")
    _try("out", lambda: f"{len(list(Path(args.out).iterdir()))} entries in {args.out}")
    _try("other", lambda: f"{[path.name for path in Path(args.other).iterdir()]} in {args.other}")
    _try("proc", lambda: Path(f"/proc/{args.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
    _try("procs", _other_processes)
    _try("tcp", lambda: _connect(args.port))
    _try("write-folder", lambda: _write(Path.cwd()))
    _try("write-parent", lambda: _write(Path.cwd().parent))
    _try("tmp", lambda: _write(Path("/tmp")))  # noqa: S108 - its scratch space


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for option in ("--db", "--out", "--other"):
        parser.add_argument(option, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--port", type=int, required=True)
    options, args = parse_options(sys.argv[1:], name="probe", version="1", parser=parser)
    probe(args)
    run(RandomBot, name="probe", version="1", options=options)


if __name__ == "__main__":
    main()
