"""Whether the machine was too busy for the clock: late faults from several bots at once.

A bot that is slow is late on its own. A machine too busy for the decision clock (too
many workers or tables for its cores, another job beside the tournament) makes every bot
late, and often several in the same session, whoever they are. So a session in which two
or more bots were late is the sign that faults track the load rather than the bots, and
one such session is enough to say so: those faults, and the chips the referee's play cost
or won, measure the machine. The advice is the same whatever the cause: fewer workers or
tables in flight, or a longer clock.

The runner keeps a :class:`LateFaults` as sessions come in (the progress line and the end
of the run warn), and the store gives the same counts for a stored tournament (the
standings files carry the warning). The module is pure: no IO, no clock.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from referee.match.faults import FaultKind

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

    @classmethod
    def of(cls, results: Iterable[SessionResult]) -> LateFaults:
        """The late faults of ``results``."""
        late = cls()
        for result in results:
            late.add(result)
        return late

    def add(self, result: SessionResult) -> bool:
        """Count ``result``'s late faults; True when this session is the first to make :attr:`busy` true."""
        was_busy = self.busy
        bots = [fault.bot for fault in result.faults if fault.kind == FaultKind.LATE]
        self.by_bot.update(bots)
        self.together += len(set(bots)) >= 2
        return self.busy and not was_busy

    @property
    def busy(self) -> bool:
        """Whether the late faults point at the machine: two or more bots late in one session."""
        return self.together > 0

    @property
    def total(self) -> int:
        """All late faults."""
        return sum(self.by_bot.values())

    def warning(self, *, load: str = "") -> str | None:
        """The warning when :attr:`busy`, else None; ``load`` (``"load 5.2 on 2 cores"``) is quoted in it."""
        if not self.busy:
            return None
        bots = ", ".join(f"{bot} {count}" for bot, count in sorted(self.by_bot.items()))
        where = f" ({load})" if load else ""
        return (
            f"the machine may be too busy for the clock{where}: {self.total} late faults ({bots}), "
            f"two or more bots late in {self.together} session{'s' if self.together != 1 else ''}; "
            f"the referee played those decisions, so the standings measure the load as well as the bots: "
            f"{ADVICE}"
        )

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
