"""What the watch page is sent, as JSON-ready values (pure: no sockets, no clock of its own).

:class:`RunFeed` follows one run from what the runner publishes (its start, each session
committed): the progress (sessions done of all, the rate over the last minute) and the
faults (counts by bot and kind, the latest few). :func:`standings_json` is the standings'
table as the page shows it, with the figures of ``standings.md``. :func:`event_json` is
one public event of a table in play (:mod:`tournaments.play.tables`): the engine's events
hold no hidden card, and cards appear here only as played (``CardPlayed``, ``TrickWon``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, deque
from enum import Enum
from typing import TYPE_CHECKING, Any

from referee.rules import Bid, Card
from tournaments.report.publish import interval, percent, rank_label

if TYPE_CHECKING:
    from referee.rules import Event
    from tournaments.play.observers import RunStart
    from tournaments.play.tables import TableInPlay
    from tournaments.results import SessionResult
    from tournaments.stats.standings import Standings

__all__ = ["RunFeed", "event_json", "standings_json", "table_json"]

FAULTS_SHOWN = 20
"""The latest faults listed on the page."""
RATE_WINDOW_S = 60.0
"""The rate is over the sessions committed in this window (or since the run started)."""


def _value(value: object) -> object:
    """A field of an event as JSON: a card or a bid as its text, tuples as lists."""
    if isinstance(value, Card | Bid | Enum):
        return str(value)
    if isinstance(value, tuple | list):
        return [_value(item) for item in value]
    return value


def event_json(event: Event) -> dict[str, Any]:
    """One public event: ``{"kind": "CardPlayed", "seat": 2, "card": "QH"}`` (its fields, by name)."""
    fields = {field.name: _value(getattr(event, field.name)) for field in dataclasses.fields(event)}
    return {"kind": type(event).__name__, **fields}


def table_json(table: TableInPlay) -> dict[str, Any]:
    """A table in play, for the list the page selects from."""
    return {
        "table": table.table,
        "block": table.block,
        "rotation": table.rotation,
        "bots": list(table.bots),
        "deals": table.deals,
    }


def standings_json(standings: Standings) -> dict[str, Any]:
    """The standings' table: per bot in ranking order, its figures as ``standings.md`` writes them."""
    return {
        "sessions": standings.sessions,
        "blocks": standings.blocks,
        "bots": [
            {
                "rank": rank_label(standings, line),
                "bot": line.bot,
                "sessions": line.sessions,
                "chips": interval(line.chips),
                "chips_mean": line.chips.mean,
                "win_share": interval(line.win_share, digits=3, signed=False),
                "los_next": "-" if position == len(standings.bots) - 1 else percent(line.los_next),
                "faults": line.faults,
                "rating": f"{line.rating:+.0f}",
            }
            for position, line in enumerate(standings.bots)
        ],
    }


class RunFeed:
    """One run as the page shows it: progress, rate and faults, from the runner's callbacks.

    Times are given (seconds on any monotonic clock), so that it is a function of its inputs.
    """

    def __init__(self) -> None:
        self.start: RunStart | None = None
        self.committed = 0
        """Sessions committed by this run."""
        self._times: deque[float] = deque()
        self.fault_counts: Counter[tuple[str, str]] = Counter()
        """Faults of this run by (bot, kind)."""
        self.faults: deque[dict[str, Any]] = deque(maxlen=FAULTS_SHOWN)
        self.state = "starting"
        """``starting``, ``playing``, then ``finished`` or ``stopped``."""

    def started(self, start: RunStart) -> None:
        """The run starts playing ``start``."""
        self.start = start
        self.state = "playing"

    def session(self, result: SessionResult, now: float) -> None:
        """A session was committed at ``now``."""
        self.committed += 1
        times = self._times
        times.append(now)
        while times and times[0] < now - RATE_WINDOW_S:
            times.popleft()
        for fault in result.faults:  # (faults of earlier runs are in the standings' counts)
            self.fault_counts[fault.bot, fault.kind] += 1
            self.faults.append(
                {
                    "bot": fault.bot,
                    "kind": fault.kind,
                    "block": result.block,
                    "rotation": result.rotation,
                    "deal": fault.deal,
                    "detail": fault.detail,
                }
            )

    def rate(self, now: float) -> float | None:
        """Sessions per second over the last :data:`RATE_WINDOW_S`, or since the run's first commit.

        None until two sessions are committed (the bots' start-up is not counted).
        """
        times = self._times
        if len(times) < 2:  # a rate needs two commits
            return None
        first = times[0]
        if now - first < RATE_WINDOW_S and self.committed == len(times):  # the run's first commit is in
            elapsed = now - first
            return None if elapsed <= 0 else (len(times) - 1) / elapsed
        since = now - RATE_WINDOW_S
        return sum(1 for when in times if when >= since) / RATE_WINDOW_S

    def status_json(self, now: float) -> dict[str, Any]:
        """The progress and the faults."""
        start = self.start
        total = 0 if start is None else start.progress.sessions
        done = (0 if start is None else start.progress.recorded) + self.committed
        return {
            "state": self.state,
            "tournament": None if start is None else start.tournament,
            "name": None if start is None else start.name,
            "resume": None if start is None else start.resume,
            "done": done,
            "total": total,
            "rate": self.rate(now),
            "faults": {
                "total": sum(self.fault_counts.values()),
                "by_bot": [
                    {"bot": bot, "kind": kind, "count": count}
                    for (bot, kind), count in sorted(self.fault_counts.items())
                ],
                "latest": list(self.faults),
            },
        }
