"""What a bot process can see of the machine beside its tables: other processes, databases.

Shared by the ``seed`` and ``dbreader`` cheaters and the probe (copied into their folders
when bench/fairplay.py stages them, like ``_perfect.py``). Every function here returns what it could read and
skips what it could not: inside a sandbox, ``/proc`` shows no other process and no
database is in reach, and the cheater then plays honestly.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

DATABASE = "nap.db"
"""The tournament database's default file name (``nap --db``'s default)."""


@dataclass(frozen=True, slots=True)
class Process:
    """Another process: its command line and, when readable, its working folder."""

    pid: int
    argv: tuple[str, ...]
    cwd: Path | None


def tournament_processes() -> list[Process]:
    """The other processes of this bot's own tournament: its ``nap`` ancestors and all under the top one.

    Its parent chain is followed up while the processes are ``nap``'s (:func:`is_nap`: a
    worker, the runner), then every process under the topmost one (its workers and their
    bots) is listed through ``/proc/PID/task/*/children``. A bot could read every process
    in ``/proc`` (as ``ps`` does); this one stays within its own tournament's, which hold
    all it needs: the runner's command line and folder. Empty when ``/proc`` shows no parent
    (a sandbox's own PID namespace) or when the bot was started by hand.
    """
    me = os.getpid()
    top: int | None = None
    pid = os.getppid()
    while pid > 1:
        argv = _argv(pid)
        if not argv or not is_nap(argv):
            break
        top = pid
        pid = _parent(pid)
    if top is None:
        return []
    out = []
    waiting = [top]
    seen = {me}
    while waiting:
        pid = waiting.pop()
        if pid in seen:
            continue
        seen.add(pid)
        argv = _argv(pid)
        if argv:
            try:
                cwd: Path | None = Path(f"/proc/{pid}/cwd").readlink()
            except OSError:
                cwd = None
            out.append(Process(pid, tuple(argv), cwd))
        waiting.extend(_children(pid))
    return out


def is_nap(argv: Sequence[str]) -> bool:
    """Whether a command line is one of ``nap``'s: the ``nap`` command, a worker, a Python bot."""
    for i, part in enumerate(argv[:3]):
        name = Path(part).name
        if name in {"nap", "bot.py"}:
            return True
        if part == "-m" and i + 1 < len(argv) and argv[i + 1].split(".")[0] in {"tournaments", "clients"}:
            return True
    return False


def _argv(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.rstrip(b"\0").split(b"\0") if part]


def _parent(pid: int) -> int:
    """The parent pid from ``/proc/PID/stat`` (0 when unreadable)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
        return int(stat[stat.rindex(")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out.extend(int(child) for child in (task / "children").read_text(encoding="utf-8").split())
        except (OSError, ValueError):
            continue
    return out


def option_values(argv: Sequence[str], option: str) -> list[str]:
    """The values given to ``option`` in ``argv``, as ``--db PATH`` or ``--db=PATH``."""
    values = []
    for i, part in enumerate(argv):
        if part == option and i + 1 < len(argv):
            values.append(argv[i + 1])
        elif part.startswith(option + "="):
            values.append(part[len(option) + 1 :])
    return values


def database_paths() -> list[Path]:
    """Existing files that may be the tournament database, each once.

    ``./nap.db`` and ``../nap.db``; every ``--db`` of another process of the tournament
    (relative to that process's working folder); ``nap.db`` in the working folder of each.
    """
    candidates = [Path(DATABASE), Path("..") / DATABASE]
    for process in tournament_processes():
        for value in option_values(process.argv, "--db"):
            path = Path(value)
            if not path.is_absolute() and process.cwd is not None:
                path = process.cwd / path
            candidates.append(path)
        if process.cwd is not None:
            candidates.append(process.cwd / DATABASE)
    out: list[Path] = []
    for path in candidates:
        try:
            resolved = path.resolve()
            if resolved not in out and resolved.is_file():
                out.append(resolved)
        except OSError:
            continue
    return out


def open_read_only(path: Path) -> sqlite3.Connection:
    """``path`` opened read-only (never written, never created); raises ``sqlite3.Error`` if unreadable."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=1.0)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error:
        conn.close()
        raise
    return conn
