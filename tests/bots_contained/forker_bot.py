"""A bot that spreads what it takes over child processes, each within a process's own limits.

python forker_bot.py memory MIB COUNT | processes [SDK options]

``memory``: at its first decision it starts COUNT children, each taking MIB of memory
(and touching it) and then sleeping; after a while it says how many are still alive
(``forker: N of COUNT children alive``). ``processes``: at its first decision it starts
a child that forks sleeping children until a fork is refused, and says how many it made
(``forker: N children``). It plays at random.
"""

from __future__ import annotations

import subprocess
import sys
import time
from typing import TYPE_CHECKING

from clients.bots.random_bot import RandomBot
from clients.sdk import parse_options, run

if TYPE_CHECKING:
    from referee.rules import Action, SeatView

_done: list[int] = []


def _say(line: str) -> None:
    sys.stdout.write(f"forker: {line}\n")
    sys.stdout.flush()


_HOLD = """
import sys, time
held = bytearray(int(sys.argv[1]) << 20)
for page in range(0, len(held), 4096):
    held[page] = 1
time.sleep(3600)
"""
"""A child that takes MIB of memory, touches every page, and sleeps."""

_FORK = """
import os, sys, time
made = 0
while True:
    try:
        pid = os.fork()
    except OSError as exc:
        sys.stdout.write(f"forker: {made} children; the next fork: {exc.strerror}\\n")
        sys.stdout.flush()
        break
    if pid == 0:
        time.sleep(3600)
        os._exit(0)
    made += 1
time.sleep(3600)
"""
"""A child that forks sleeping children until a fork is refused, says how many, and sleeps."""


def memory(mib: int, count: int) -> None:
    """Start ``count`` children of ``mib`` each (fresh interpreters: this one's threads stay its own)."""
    children = [subprocess.Popen([sys.executable, "-c", _HOLD, str(mib)]) for _ in range(count)]
    time.sleep(3)
    alive = sum(1 for child in children if child.poll() is None)
    _say(f"{alive} of {count} children alive")


def processes() -> None:
    """Start the child that forks until it cannot; give it a few seconds to say how many it made."""
    subprocess.Popen([sys.executable, "-c", _FORK])
    time.sleep(3)


class Forker(RandomBot):
    """Random play, after forking at its first decision."""

    args: tuple[str, ...] = ()

    def decide(self, view: SeatView) -> Action:
        """The first time: fork as the command line says."""
        if not _done:
            _done.append(1)
            if self.args[0] == "memory":
                memory(int(self.args[1]), int(self.args[2]))
            else:
                processes()
        return super().decide(view)


def main() -> None:
    kind = sys.argv[1]
    count = 3 if kind == "memory" else 1
    Forker.args = tuple(sys.argv[1 : 1 + count])
    options, _ = parse_options(sys.argv[1 + count :], name="forker", version="1")
    run(Forker, name="forker", version="1", options=options)


if __name__ == "__main__":
    main()
