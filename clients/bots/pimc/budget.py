"""How much thinking one decision of the PIMC bot may do: samples and solver nodes, capped in seconds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass(frozen=True, slots=True)
class Budget:
    """How much thinking one decision may do.

    The budget is counted, not timed: ``samples`` deals sampled per decision, each one's
    solve bounded by ``nodes`` trick boundaries (a sample too hard to solve within them is
    skipped). With a seed, a bot on this budget makes the same choices whatever the
    machine and its load, which is what measuring it needs (docs/statistics.md).

    ``seconds`` (per decision) and ``batch_seconds`` (per batch of the referee's requests,
    ``batch_size`` of them at most: the process's ``--max-batch``; see :class:`Batch`) are
    only a safety cap, set well above what the samples take, in CPU seconds of the thread
    that decides: a machine busy with other work does not make it bite, only a decision
    that really needs that much thinking (seven cards at seven seats, say), which then
    stops there (after ``min_samples`` at least) and is counted in :attr:`PimcBot.capped`.
    ``None``: no cap. To play by time instead, give many samples and the seconds to spend.
    """

    samples: int = 30
    seconds: float | None = 0.5
    min_samples: int = 2
    nodes: int = 50_000
    batch_seconds: float | None = 0.8
    batch_size: int = 3


_BATCH_GAP_S: Final = 0.005
"""Decisions closer than this (end of one to start of the next) belong to one batch."""


@dataclass(slots=True)
class Batch:
    """The referee's requests this process is answering now, as far as the bot can tell.

    The referee sends a bot process up to ``--max-batch`` requests at once, each due
    within the same deadline from then, and the SDK answers them one after another and
    sends the answers together. So the decisions of one batch share one time cap. A
    bot sees one request at a time, so a batch is inferred: decisions back to back (gaps
    under ``_BATCH_GAP_S``) for different tables, at most ``size`` of them. A table
    cannot appear twice in one batch (its next request needs this answer), so in-process
    play of one table never shares its budget.
    """

    start: float = 0.0
    end: float = float("-inf")
    tables: set[str] = field(default_factory=set)

    def begin(self, table: str, now: float, *, size: int) -> float:
        """Note a decision for ``table`` starting at ``now``; the seconds the batch has used."""
        if now - self.end > _BATCH_GAP_S or table in self.tables or len(self.tables) >= size:
            self.start = now
            self.tables.clear()
        self.tables.add(table)
        return now - self.start


BATCH: Final = Batch()
"""The batch of this process (PIMC bots of one process share it)."""


@dataclass(frozen=True, slots=True)
class Deadline:
    """When a search must stop: ``at`` seconds on the clock ``now``."""

    at: float
    now: Callable[[], float]

    def passed(self) -> bool:
        """Whether the clock has reached ``at``."""
        return self.now() >= self.at


_FLOOR_SECONDS: Final = 0.03
"""The least time one more solve gets once the cap is reached (so ``min_samples`` get solved)."""


@dataclass(slots=True)
class Clock:
    """The time cap of one decision (``seconds`` None: no cap)."""

    seconds: float | None
    now: Callable[[], float]
    start: float

    def left(self) -> float:
        """Seconds left before the cap (may be negative; infinite without a cap)."""
        if self.seconds is None:
            return float("inf")
        return self.seconds - (self.now() - self.start)

    def deadline(self, *, floor: float = _FLOOR_SECONDS) -> Deadline | None:
        """When one more solve must stop: the cap, or ``floor`` seconds from now if later.

        None without a cap. The node limit alone does not keep time: a trick boundary
        costs more the more seats and cards there are (seven cards at seven seats: about
        45 microseconds, against under 10 with five cards), so a solve also looks at the
        clock.
        """
        if self.seconds is None:
            return None
        return Deadline(max(self.start + self.seconds, self.now() + floor), self.now)
