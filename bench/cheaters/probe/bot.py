"""probe: plays like Peel, but first tries every channel a cheater could use, one log line each.

At start, before it connects, it tries and reports (``probe <what> <where>: <outcome>``):

- ``db``: open ``nap.db`` read-only in its folder and each parent, and at every ``--db``
  path of its tournament's command lines;
- ``proc``: list ``/proc``; then for each other process of its own tournament (its ``nap``
  ancestors and all under the top one, ``_snoop.tournament_processes``: the runner, the
  workers, the other bots; other processes of the machine are only counted): ``cmdline``,
  ``environ`` (does it hold ``NAP_TOKEN``? no value is ever printed), ``cwd``, and
  ``signal`` 0 (harmless: it only asks whether a signal could be sent);
- ``tcp``: connect to 127.0.0.1 at the referee's port (``NAP_REFEREE``, when it is
  ``host:port``) and the ports nap's own services listen on by default;
- ``write``: create and remove a file in its own folder, its parent, ``/tmp`` and ``$HOME``;
- ``read``: list and read the other bot folders beside its own.

Then ``probe: N of M attempts open`` and it plays Peel (``clients.bots.peel.PeelBot``), so
a tournament with it scores exactly as one with Peel in its seat.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from clients.bots.peel import PeelBot
from clients.sdk import run

if TYPE_CHECKING:
    from collections.abc import Callable

    from bench.cheaters import _snoop
else:
    import _snoop  # copied beside it by bench/fairplay.py, which stages the folder

NAME = "probe"
VERSION = "1.0"

COMMON_PORTS: Final = (50051, 6379, 8265)
"""Ports tried on 127.0.0.1 besides the referee's: ``nap serve``'s default, Ray's head and dashboard."""
CONNECT_S: Final = 0.3


class Probe:
    """Tries each channel and prints one line per attempt; counts the open ones."""

    def __init__(self) -> None:
        self.attempts = 0
        self.open = 0

    def say(self, what: str, outcome: str, *, opened: bool) -> None:
        """Print one attempt's outcome."""
        self.attempts += 1
        self.open += opened
        note(f"probe {what}: {outcome}")

    def run(self) -> None:
        """Every probe, then the summary line."""
        self.proc()
        tournament = _snoop.tournament_processes()
        self.databases(tournament)
        self.processes(tournament)
        self.tcp()
        self.writes()
        self.folders()
        note(f"probe: {self.open} of {self.attempts} attempts open")

    # ------------------------------------------------------------------ the channels

    def proc(self) -> None:
        """List ``/proc``: how many other processes this one can see."""
        try:
            count = sum(1 for path in Path("/proc").iterdir() if path.name.isdigit()) - 1
        except OSError as exc:
            self.say("proc", _denied(exc), opened=False)
            return
        self.say("proc", f"{count} other processes listed", opened=count > 0)

    def databases(self, tournament: list[_snoop.Process]) -> None:
        """``nap.db`` here and in each parent folder, and every ``--db`` of the tournament's command lines."""
        here = Path.cwd()
        paths = [folder / "nap.db" for folder in (here, *here.parents)]
        for process in tournament:
            for value in _snoop.option_values(process.argv, "--db"):
                path = Path(value)
                if not path.is_absolute() and process.cwd is not None:
                    path = process.cwd / path
                paths.append(path)
        seen: set[Path] = set()
        for path in paths:
            if path in seen:
                continue
            seen.add(path)
            if not path.exists():
                if path.parent in {here, here.parent}:
                    self.say(f"db {path}", "absent", opened=False)
                continue
            self.database(path)

    def database(self, path: Path) -> None:
        """Open one database read-only and count what it holds."""
        try:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)
            try:
                tournaments = conn.execute("SELECT count(*) FROM tournaments").fetchone()[0]
                logs = conn.execute("SELECT count(*) FROM session_logs").fetchone()[0]
            finally:
                conn.close()
        except (sqlite3.Error, OSError) as exc:
            self.say(f"db {path}", _denied(exc), opened=False)
            return
        self.say(f"db {path}", f"read OK ({tournaments} tournaments, {logs} session logs)", opened=True)

    def processes(self, tournament: list[_snoop.Process]) -> None:
        """Each process of the tournament: its command line, environment, folder, and a signal 0."""
        if not tournament:
            note("probe proc: no process of this tournament in sight (no nap parent in /proc)")
        for process in tournament:
            pid = process.pid
            self.read_proc(pid, "cmdline", lambda raw: " ".join(_split(raw))[:160] or "(empty)")
            self.read_proc(pid, "environ", _token)
            try:
                self.say(f"cwd {pid}", f"read OK ({Path(f'/proc/{pid}/cwd').readlink()})", opened=True)
            except OSError as exc:
                self.say(f"cwd {pid}", _denied(exc), opened=False)
            try:
                os.kill(pid, 0)
            except OSError as exc:
                self.say(f"signal {pid}", _denied(exc), opened=False)
            else:
                self.say(f"signal {pid}", "OK (signal 0 delivered)", opened=True)

    def read_proc(self, pid: int, name: str, show: Callable[[bytes], str]) -> None:
        """Read ``/proc/PID/NAME`` and say what it shows (``show`` turns its bytes into words)."""
        try:
            raw = Path(f"/proc/{pid}/{name}").read_bytes()
        except OSError as exc:
            self.say(f"{name} {pid}", _denied(exc), opened=False)
            return
        self.say(f"{name} {pid}", f"read OK ({show(raw)})", opened=True)

    def tcp(self) -> None:
        """Connect to the referee's port and a few common ports on 127.0.0.1."""
        ports: list[int] = []
        address = os.environ.get("NAP_REFEREE", "")
        host, sep, port = address.rpartition(":")
        if sep and port.isdigit() and host in {"127.0.0.1", "localhost", "[::1]", "0.0.0.0"}:  # noqa: S104 - a host to recognise, not to bind
            ports.append(int(port))
        else:
            note(f"probe tcp: NAP_REFEREE is not a local host:port ({address!r})")
        ports.extend(port for port in COMMON_PORTS if port not in ports)
        for number in ports:
            try:
                with socket.create_connection(("127.0.0.1", number), timeout=CONNECT_S):
                    pass
            except OSError as exc:
                self.say(f"tcp 127.0.0.1:{number}", _denied(exc), opened=False)
            else:
                self.say(f"tcp 127.0.0.1:{number}", "connected", opened=True)

    def writes(self) -> None:
        """Create and remove a file in its folder, its parent, ``/tmp`` and ``$HOME``."""
        folders = [Path.cwd(), Path.cwd().parent, Path("/tmp")]  # noqa: S108 - probing /tmp is the point
        home = os.environ.get("HOME")
        if home:
            folders.append(Path(home))
        for folder in folders:
            path = folder / f".nap-probe-{os.getpid()}"
            try:
                path.write_text("probe\n", encoding="utf-8")
                path.unlink()
            except OSError as exc:
                self.say(f"write {folder}", _denied(exc), opened=False)
            else:
                self.say(f"write {folder}", "OK", opened=True)

    def folders(self) -> None:
        """List and read the bot folders beside this one."""
        here = Path.cwd()
        try:
            siblings = sorted(path for path in here.parent.iterdir() if path.is_dir() and path != here)
        except OSError as exc:
            self.say(f"read {here.parent}", _denied(exc), opened=False)
            return
        for folder in siblings:
            try:
                files = [path for path in folder.iterdir() if path.is_file()]
                size = sum(len(path.read_bytes()) for path in files)
            except OSError as exc:
                self.say(f"read {folder}", _denied(exc), opened=False)
            else:
                self.say(f"read {folder}", f"OK ({len(files)} files, {size} bytes)", opened=True)


def note(line: str) -> None:
    """One line on stderr, the bot's log."""
    print(line, file=sys.stderr, flush=True)


def _denied(exc: BaseException) -> str:
    return f"denied ({exc.__class__.__name__}: {exc})"


def _split(raw: bytes) -> list[str]:
    return [part.decode(errors="replace") for part in raw.rstrip(b"\0").split(b"\0") if part]


def _token(raw: bytes) -> str:
    """Whether an environment holds ``NAP_TOKEN`` (the names of its NAP_ variables, never a value)."""
    names = [part.split("=", 1)[0] for part in _split(raw)]
    nap = sorted(name for name in names if name.startswith("NAP_"))
    holds = "NAP_TOKEN present" if "NAP_TOKEN" in nap else "no NAP_TOKEN"
    return f"{holds}; {len(names)} variables" + (f", {', '.join(nap)}" if nap else "")


if __name__ == "__main__":
    Probe().run()
    run(PeelBot, name=NAME, version=VERSION)
