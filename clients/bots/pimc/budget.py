"""How much thinking one decision of the PIMC bot may do, in samples, solver nodes and seconds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Callable

_SOLVER_NODES_PER_SECOND: Final = 60_000
"""A cautious estimate of trick boundaries the solver visits per second, to turn the time
left into a node limit so that no single sample overruns the decision's budget."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much thinking one decision may do.

    ``samples`` bounds the deals sampled, ``seconds`` the wall time (``None``: no time
    limit, so that a seeded bot is reproducible); at least ``min_samples`` are tried when
    time runs out first. ``nodes`` bounds the trick boundaries one sample's solve may
    visit (less when the time left allows fewer): a sample too hard to solve in time is
    skipped. ``batch_seconds`` bounds the time of the decisions of one batch of the
    referee's requests, ``batch_size`` (the process's ``--max-batch``) the requests a
    batch may hold (see :class:`Batch`); they apply only with a time limit.
    """

    samples: int = 120
    seconds: float | None = 0.2
    min_samples: int = 2
    nodes: int = 50_000
    batch_seconds: float | None = 0.6
    batch_size: int = 3


_BATCH_GAP_S: Final = 0.005
"""Decisions closer than this (end of one to start of the next) belong to one batch."""


@dataclass(slots=True)
class Batch:
    """The referee's requests this process is answering now, as far as the bot can tell.

    The referee sends a bot process up to ``--max-batch`` requests at once, each due
    within the same deadline from then, and the SDK answers them one after another and
    sends the answers together. So the decisions of one batch share one time budget. A
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


_FLOOR_SECONDS: Final = 2_000 / _SOLVER_NODES_PER_SECOND
"""The least time one more solve gets once the budget is spent (as the node floor: ``min_samples``)."""


@dataclass(slots=True)
class Clock:
    """The time budget of one decision (``seconds`` None: no limit)."""

    seconds: float | None
    nodes: int
    now: Callable[[], float]
    start: float

    def left(self) -> float:
        """Seconds left (may be negative; infinite without a limit)."""
        if self.seconds is None:
            return float("inf")
        return self.seconds - (self.now() - self.start)

    def node_limit(self, *, floor: int = 2_000) -> int:
        """The nodes one more solve may visit: what the time left allows, at least ``floor``."""
        left = self.left()
        if left == float("inf"):
            return self.nodes
        return min(self.nodes, max(floor, int(left * _SOLVER_NODES_PER_SECOND)))

    def deadline(self, *, floor: float = _FLOOR_SECONDS) -> Deadline | None:
        """When one more solve must stop: the end of the budget, or ``floor`` seconds from now if later.

        None without a time limit. The node limit alone does not keep time: a trick
        boundary costs more the more seats and cards there are (seven cards at seven
        seats: about 45 microseconds, against under 10 with five cards), so a solve also
        looks at the clock.
        """
        if self.seconds is None:
            return None
        return Deadline(max(self.start + self.seconds, self.now() + floor), self.now)
