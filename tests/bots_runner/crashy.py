"""A Peel bot that crashes (exit status 70) after CRASH_AFTER decisions, once.

The first process to start creates the marker file ``CRASH_MARKER`` and crashes; every
later process (the restarts) plays normally. Each start appends a line to the marker's
``.starts`` file, so a test can count how often the runner launched it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from clients.bots.peel import PeelBot
from clients.sdk import run

MARKER = Path(os.environ["CRASH_MARKER"])
AFTER = int(os.environ.get("CRASH_AFTER", "40"))


def main() -> None:
    with MARKER.with_suffix(".starts").open("a") as starts:
        starts.write(f"{os.getpid()}\n")
    try:  # made here, or by another process already: only the one that makes it crashes
        os.close(os.open(MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        crash = True
    except FileExistsError:
        crash = False
    decisions = 0

    class Crashy(PeelBot):
        def decide(self, view):  # type: ignore[no-untyped-def]
            nonlocal decisions
            decisions += 1
            if crash and decisions > AFTER:
                print(f"crashing after {AFTER} decisions", file=sys.stderr, flush=True)  # noqa: T201 - the last words the runner reports
                os._exit(70)
            return super().decide(view)

    run(Crashy, name="crashy", version="1.0", argv=[])


if __name__ == "__main__":
    main()
