"""Reading what a bot process left in its log: its exit statuses and its last lines.

The runner captures each bot process's stdout and stderr to ``<logs>/t<N>/bots/<bot>-r<R>.log``
for the process that plays rotation R (``<bot>-w2-r<R>.log`` on worker 2, and so on), with
a ``---`` line at each start and, when it exits on its own, an ``--- exited with status N``
line (:data:`tournaments.play.bots.EXIT_MARK`), followed by ``: why`` when the referee, its
last words or its status said why (:class:`tournaments.play.bots.BotExit`: refused by the
referee and why, a limit reached, a signal).
``nap bot check`` and ``nap log show`` read them back to explain a bot that died.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tournaments.play.bots import EXIT_MARK

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = ["TAIL_LINES", "BotOutput", "bot_output"]

TAIL_LINES = 8
"""Last lines of a bot's output kept."""


@dataclass(frozen=True, slots=True)
class BotOutput:
    """A bot's exit statuses (exits nobody asked for, in order), why (where known) and its last output lines.

    ``reasons`` has one entry per exit: why it exited ("" when nothing said).
    """

    exits: tuple[int, ...] = ()
    last_lines: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()
    reasons: tuple[str, ...] = ()


def bot_output(folders: Iterable[Path], bot: str) -> BotOutput:
    """What ``bot``'s log files in ``folders`` (each a ``bots/`` folder) say, every worker's."""
    pattern = re.compile(rf"{re.escape(bot)}(-w\d+|-ray\d+)?(-r\d+)?")
    files = sorted(
        path
        for folder in folders
        if folder.is_dir()
        for path in folder.glob("*.log")
        if pattern.fullmatch(path.stem)
    )
    exits: list[int] = []
    reasons: list[str] = []
    said: list[str] = []
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(EXIT_MARK):
                status, _, why = line.removeprefix(EXIT_MARK).partition(": ")
                exits.append(int(status))
                reasons.append(why)
            elif not line.startswith("--- ") and line.strip():
                said.append(line)
    return BotOutput(tuple(exits), tuple(said[-TAIL_LINES:]), tuple(files), tuple(reasons))
