"""Tables in play as a spectator sees them: which are playing, and their public events so far.

A run hands its observers (:meth:`~tournaments.play.observers.RunObserver.tables`) a
:class:`TableSource`: it lists the tables in flight and gives the events of one since a
point. Nothing is computed until a spectator asks, so a run that nobody watches pays
nothing for it.

Only the engine's events leave a host: every one of them may be shown to every seat
(:mod:`referee.rules.events`: an exchange is a count, a peep says who looked, a new deal
names its dealer and seats, never a hand). They are built on the host that plays the
table, by replaying the referee's record so far (:func:`public_events`), so the record's
decks never travel: a worker process sends the events alone over its pipe to the runner.

Where the tables are played decides what can be watched: a referee in the runner's
process (:class:`HostTables`) or local worker processes (the pool's source, in
:mod:`tournaments.play.executors.workers`) forward them; Ray workers do not
(:class:`NoTables`, with the reason).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from referee.rules import fresh_session

if TYPE_CHECKING:
    from collections.abc import Sequence

    from referee.rules import Event, SessionRecord

__all__ = [
    "HostTables",
    "NoTables",
    "TableEvents",
    "TableFollower",
    "TableInPlay",
    "TableSource",
    "merged",
    "public_events",
]

_ENDED_KEPT = 64
"""Finished sessions of followed tables kept for their last events (the latest)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TableInPlay:
    """A table playing now: one rotation of a block, the bots in seat order."""

    table: str
    """The table's id (as its bots see it)."""
    block: int
    rotation: int
    bots: tuple[str, ...]
    deals: int
    """The deals its session plays (one more if a tie-break deal is added)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TableEvents:
    """A table's public events from number ``since`` on, and whether its session is over."""

    table: str
    since: int
    events: tuple[Event, ...]
    over: bool


class TableSource(Protocol):
    """The tables a run is playing, for a spectator: asked only when someone watches."""

    @property
    def unavailable(self) -> str | None:
        """Why no table can be watched in this run (None: they can)."""

    async def tables(self) -> tuple[TableInPlay, ...]:
        """The tables in play now."""

    async def events(self, table: str, since: int) -> TableEvents | None:
        """``table``'s public events from number ``since``; None when it is unknown here."""


def public_events(record: SessionRecord) -> tuple[Event, ...]:
    """Every event of a session's record so far, in order (pure: a replay through the engine).

    The record holds the decks; the events never hold a hidden card, so this is the one
    step between what the referee knows and what a spectator may be shown.
    """
    session = fresh_session(record)
    events: list[Event] = list(session.opening)
    for deal in record.deals:
        for action in deal.actions:
            events.extend(session.apply(action))
    return tuple(events)


class TableFollower:
    """A host's tables in play and, once a spectator looks, the public events of any of them.

    The host calls :meth:`started` and :meth:`ended` around each session: a dict entry
    each, nothing more until a spectator asks for the tables. From then on, a session
    that ends leaves its final record here for a while (the latest
    :data:`_ENDED_KEPT`), so that a table chosen as it ends still shows its last deal.
    A spectator's questions are answered from the referee's live record of the table,
    or from that final record.
    """

    def __init__(self) -> None:
        self._playing: dict[str, TableInPlay] = {}
        self._watched = False
        self._ended: OrderedDict[str, SessionRecord] = OrderedDict()

    def started(self, table: TableInPlay) -> None:
        """``table`` starts playing."""
        self._playing[table.table] = table

    def ended(self, table: str, record: SessionRecord | None) -> None:
        """``table``'s session is over with ``record`` (None: it was stopped), kept once watched."""
        self._playing.pop(table, None)
        if self._watched and record is not None:
            ended = self._ended
            ended[table] = record
            if len(ended) > _ENDED_KEPT:
                ended.popitem(last=False)

    def tables(self) -> tuple[TableInPlay, ...]:
        """The tables in play now, in the order they started (a spectator looks from now on)."""
        self._watched = True
        return tuple(self._playing.values())

    def events(self, table: str, since: int, *, live: SessionRecord | None) -> TableEvents | None:
        """``table``'s public events from ``since``: ``live`` is its record now, if it is playing."""
        self._watched = True
        if live is not None:
            return _from(table, since, live, over=False)
        ended = self._ended.get(table)
        return None if ended is None else _from(table, since, ended, over=True)


def _from(table: str, since: int, record: SessionRecord, *, over: bool) -> TableEvents:
    events = public_events(record)
    return TableEvents(table=table, since=since, events=events[max(0, since) :], over=over)


class HostTables:
    """The tables of a referee in this process: answered on the spot."""

    def __init__(self, follower: TableFollower, record_of: _Records) -> None:
        self._follower = follower
        self._record_of = record_of

    @property
    def unavailable(self) -> str | None:
        """None: every table of this referee can be watched."""
        return None

    async def tables(self) -> tuple[TableInPlay, ...]:
        """The tables in play now."""
        return self._follower.tables()

    async def events(self, table: str, since: int) -> TableEvents | None:
        """``table``'s public events from ``since``."""
        return self._follower.events(table, since, live=self._record_of(table))


class _Records(Protocol):
    def __call__(self, table: str) -> SessionRecord | None: ...


@dataclass(frozen=True, slots=True)
class NoTables:
    """A run whose tables cannot be watched, and why (said on the watch page)."""

    reason: str

    @property
    def unavailable(self) -> str | None:
        """The reason."""
        return self.reason

    async def tables(self) -> tuple[TableInPlay, ...]:
        """None."""
        return ()

    async def events(self, table: str, since: int) -> TableEvents | None:  # noqa: ARG002 - the protocol's
        """None."""
        return None


def merged(sources: Sequence[tuple[TableInPlay, ...]]) -> tuple[TableInPlay, ...]:
    """The tables of several hosts, by block and rotation."""
    return tuple(sorted((t for tables in sources for t in tables), key=lambda t: (t.block, t.rotation)))
