"""Whether the machine was too busy for the clock: late faults from several bots at once.

A bot that is slow is late on its own. A machine too busy for the decision clock (too
many workers or tables for its cores, another job beside the tournament) makes every bot
late, and often several in the same session, whoever they are. So a session in which two
or more bots were late is the sign that faults track the load rather than the bots, and
one such session is enough to say so: those faults, and the chips the referee's play cost
or won, measure the machine. A small run (a few sessions, ``nap bot check``) may have no
such session however busy the machine is: there a late fault counted while the machine's
load exceeded its cores says the same (the runner reads the load as it counts). The advice
is the same whatever the cause: fewer workers or tables in flight, or a longer clock.

The runner keeps a :class:`LateFaults` as sessions come in (the progress line is marked
once it says the machine is busy, and the run ends with its one-line :meth:`LateFaults.summary`;
each late fault is logged only at info level, ``nap -v``), and the store gives the counts of
a stored tournament (the standings files carry the warning; the load at the time is not
stored, so they judge by sessions alone). The module is pure: no IO, no clock.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from referee.match.faults import FaultKind
from tournaments.words import count

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from tournaments.results import SessionResult

__all__ = ["ADVICE", "LateFaults"]

ADVICE = "use fewer --workers or --concurrency, or a larger --decision-ms"
"""What to do when late faults track the load."""


@dataclass(slots=True)
class LateFaults:
    """The late faults of a tournament: per bot, and the sessions in which two or more bots were late."""

    by_bot: Counter[str] = field(default_factory=Counter)
    together: int = 0
    """Sessions in which two or more bots were late."""
    loaded: int = 0
    """Late faults counted while the machine's load exceeded its cores (as the runner told :meth:`add`)."""

    @classmethod
    def of(cls, results: Iterable[SessionResult]) -> LateFaults:
        """The late faults of ``results``."""
        late = cls()
        for result in results:
            late.add(result)
        return late

    def add(self, result: SessionResult, *, loaded: bool = False) -> bool:
        """Count ``result``'s late faults; True when this session is the first to make :attr:`busy` true.

        ``loaded``: the machine's load exceeds its cores as the session is counted.
        """
        was_busy = self.busy
        bots = [fault.bot for fault in result.faults if fault.kind == FaultKind.LATE]
        self.by_bot.update(bots)
        self.together += len(set(bots)) >= 2
        if loaded:
            self.loaded += len(bots)
        return self.busy and not was_busy

    @staticmethod
    def late_in(result: SessionResult) -> bool:
        """Whether ``result`` has a late fault (the runner reads the machine's load only then)."""
        return any(fault.kind == FaultKind.LATE for fault in result.faults)

    @property
    def busy(self) -> bool:
        """Whether the late faults point at the machine.

        Two or more bots late in one session, or a bot late while the load exceeded the cores.
        """
        return self.together > 0 or self.loaded > 0

    @property
    def total(self) -> int:
        """All late faults."""
        return sum(self.by_bot.values())

    def warning(self, *, load: str = "") -> str | None:
        """The warning when :attr:`busy`, else None; ``load`` (``"load 5.2 on 2 cores"``) is quoted in it."""
        if not self.busy:
            return None
        where = f" ({load})" if load else ""
        signs = []
        if self.together:
            signs.append(f"two or more bots late in {count(self.together, 'session')}")
        if self.loaded:
            signs.append(f"{count(self.loaded, 'fault')} while its load exceeded its cores")
        return (
            f"the machine may be too busy for the clock{where}: {self._counted()}, {' and '.join(signs)}; "
            f"the referee played those decisions, so the standings measure the load as well as the bots: "
            f"{ADVICE}"
        )

    def summary(self, *, load: str = "") -> str | None:
        """A run's one line on its late faults (None: there were none): :meth:`warning` when :attr:`busy`.

        Each late fault is logged only at info level, which ``nap -v`` prints: the line says so.
        """
        if not self.total:
            return None
        verbose = " (nap -v prints each one)"
        warning = self.warning(load=load)
        if warning is not None:
            return f"{warning}{verbose}"
        return f"{self._counted()}: the referee played those decisions by its fault policy{verbose}"

    def _counted(self) -> str:
        """``3 late faults (mybot 2, peel 1)``."""
        bots = ", ".join(f"{bot} {count}" for bot, count in sorted(self.by_bot.items()))
        return f"{count(self.total, 'late fault')} ({bots})"

    def to_json(self) -> dict[str, Any]:
        """``{"late_faults": {bot: n}, "sessions_late_together": n, "busy": bool, "warning": str | null}``."""
        return {
            "late_faults": dict(sorted(self.by_bot.items())),
            "sessions_late_together": self.together,
            "busy": self.busy,
            "warning": self.warning(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LateFaults:
        """The counts :meth:`to_json` wrote."""
        counts = Counter({str(bot): int(count) for bot, count in data["late_faults"].items()})
        return cls(counts, int(data["sessions_late_together"]))
