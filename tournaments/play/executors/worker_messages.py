"""The messages between the runner and its workers: one frozen class per message, in two unions.

Both executors carry the same values. A local worker process
(:mod:`~tournaments.play.executors.workers`) reads :data:`ToWorker` from its stdin and
writes :data:`ToRunner` to its stdout, each pickled behind a 4-byte length::

    runner                                  worker
    Start(setup, ...)                 ->
                                      <-    Ready(where) or Failed(reason)
    PlayBlock(run, entries)           ->    (several in flight)
                                      <-    SessionPlayed(result, log), each rotation
                                      <-    BlockPlayed(block), or EntryFailed(block, ...)
    Retire(entries)                   ->    (an arena's: entries no block seats again)
    Asked(key, question)              ->    (a spectator's, only when someone watches)
                                      <-    Answered(key, answer)
    Stop()                            ->    (or the pipe closes: the runner is gone)
                                      <-    Failed(reason), at any time: the worker stops

A Ray worker is the same :class:`~tournaments.play.executors.block_worker.BlockWorker`,
called through Ray: ``start(Start) -> Ready``, ``play(PlayBlock)`` streams
:class:`SessionPlayed` (its end is the block's :class:`BlockPlayed`, or an
:class:`EntryFailed` alone), ``retire(Retire)``,
``answer(Question) -> Answer`` (which the Ray executor does not call: its tables are not
watched, :data:`~tournaments.play.executors.ray.NOT_WATCHED`). There each call gets its
own reply, so nothing is keyed; the runner checks each reply's kind (:func:`expected`) as
it does a pipe's; a failure travels as Ray's own task error instead of :class:`Failed`;
and a call the actor does not have is refused by Ray at the runner's end.

**A message the receiving end does not expect** (a kind it does not know, one it cannot
unpickle, or a known one out of place, such as a second ``Start``) ends the run, the same
way on both ends, with one line naming its kind: the runner raises a
:class:`~tournaments.errors.RunnerError` (``worker 2 sent an unexpected message
(tuple)``); a worker answers :class:`Failed` (``a worker was sent an unexpected message
(tuple)``), which the runner raises as it raises any worker's failure, and stops its bots.
Both ends are this program, started by the runner from one installation, so such a
message means they are out of step (a bug, or code changed under a running tournament):
going on could drop a session or leave a question unanswered forever, while stopping
keeps every finished session and ``nap tournament resume`` plays the rest.
"""

from __future__ import annotations

import asyncio
import pickle
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, TypeVar

if TYPE_CHECKING:
    from tournaments.plan.entries import BotEntry
    from tournaments.play.blocks import BlockRun
    from tournaments.play.host import WorkerSetup
    from tournaments.play.tables import TableEvents, TableInPlay
    from tournaments.results import SessionResult

__all__ = [
    "Answer",
    "Answered",
    "Asked",
    "BlockPlayed",
    "EntryFailed",
    "EventsAnswer",
    "EventsQuestion",
    "Failed",
    "PlayBlock",
    "Question",
    "Ready",
    "Retire",
    "SessionPlayed",
    "Start",
    "Stop",
    "TablesAnswer",
    "TablesQuestion",
    "ToRunner",
    "ToWorker",
    "UnexpectedMessage",
    "WorkerInfo",
    "expected",
    "framed",
    "runner_receives",
    "worker_receives",
]

_HEADER = struct.Struct(">I")
"""A message's length in bytes, before its pickle."""

M = TypeVar("M")


# ---------------------------------------------------------------------------- a spectator's questions


@dataclass(frozen=True, slots=True)
class TablesQuestion:
    """Which tables are in play on the worker? Answered by :class:`TablesAnswer`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EventsQuestion:
    """A table's public events from number ``since`` on. Answered by :class:`EventsAnswer`."""

    table: str
    since: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TablesAnswer:
    """The tables in play on the worker, in the order they started."""

    tables: tuple[TableInPlay, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class EventsAnswer:
    """A table's public events (None: the worker neither plays it nor kept its end)."""

    events: TableEvents | None


Question: TypeAlias = TablesQuestion | EventsQuestion
"""What a worker answers about the tables it plays (:meth:`BlockWorker.answer`)."""
Answer: TypeAlias = TablesAnswer | EventsAnswer


# ---------------------------------------------------------------------------- runner -> worker


@dataclass(frozen=True, slots=True, kw_only=True)
class Start:
    """Host a share of the tournament: start a referee and every bot process, then say :class:`Ready`.

    ``bot_log_suffix`` tells this worker's bot logs apart from the others' (``-w2``,
    ``-ray1``). With ``portable_bots`` the entries come as
    :func:`~tournaments.play.executors.shipping.portable_bots` made them for another node:
    the worker makes them local (their folders built once per node) and logs its bots
    where it can (a Ray worker).
    """

    setup: WorkerSetup
    bot_log_suffix: str = ""
    portable_bots: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayBlock:
    """Play the block's rotations in turn: a :class:`SessionPlayed` each, then :class:`BlockPlayed`.

    ``entries`` are the bots it seats that the worker was not started with: it starts each
    the first time (:meth:`~tournaments.play.host.BlockHost.enter`), or answers
    :class:`EntryFailed` and plays nothing of the block.
    """

    run: BlockRun
    entries: tuple[BotEntry, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Retire:
    """Stop the processes of these entries: no block seats them again."""

    entries: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Asked:
    """A spectator's question; ``key`` finds the asker when the :class:`Answered` comes back."""

    key: int
    question: Question


@dataclass(frozen=True, slots=True)
class Stop:
    """Stop the blocks in play (nobody waits for them), then the bots and the referee."""


ToWorker: TypeAlias = Start | PlayBlock | Retire | Asked | Stop


# ---------------------------------------------------------------------------- worker -> runner


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkerInfo:
    """Where a started worker runs: for the runner's log lines and for people looking for bot logs."""

    pid: int
    host: str
    """The node's host name."""
    bot_logs: str
    """The folder of this worker's bot logs, on its node."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Ready:
    """The worker's bots are connected: it plays the blocks it is sent."""

    where: WorkerInfo


@dataclass(frozen=True, slots=True, kw_only=True)
class Failed:
    """The worker cannot go on (a bot that cannot start, an error while playing): one line, and it stops."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionPlayed:
    """A finished session: its result and its log, encoded (:func:`~tournaments.store.logs.encode_log`)."""

    result: SessionResult
    log: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockPlayed:
    """Every rotation of block ``block`` was sent: the worker takes another."""

    block: int


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryFailed:
    """Block ``block`` was not played: its entry ``entry`` could not start, for ``reason`` (one line)."""

    block: int
    entry: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Answered:
    """The answer to the question :class:`Asked` with ``key``."""

    key: int
    answer: Answer


ToRunner: TypeAlias = Ready | Failed | SessionPlayed | BlockPlayed | EntryFailed | Answered


# ---------------------------------------------------------------------------- on the pipes


class UnexpectedMessage(Exception):  # noqa: N818 - it is the message, not an error of its own
    """A message the receiving end does not expect; ``kind`` names it (its class, or why it is unreadable)."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"unexpected message ({kind})")
        self.kind = kind

    @classmethod
    def of(cls, message: object) -> UnexpectedMessage:
        """The error for ``message``, named by its class."""
        return cls(type(message).__name__)


def framed(message: ToWorker | ToRunner) -> bytes:
    """The message as it travels over a pipe: its length, then its pickle."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


async def worker_receives(reader: asyncio.StreamReader) -> ToWorker | None:
    """The runner's next message, or None once the runner closed its end; raises UnexpectedMessage."""
    message = await _unpickled(reader)
    if message is None:
        return None
    if not isinstance(message.value, ToWorker):
        raise UnexpectedMessage.of(message.value)
    return message.value


async def runner_receives(reader: asyncio.StreamReader) -> ToRunner | None:
    """A worker's next message, or None once the worker closed its end; raises UnexpectedMessage."""
    message = await _unpickled(reader)
    if message is None:
        return None
    if not isinstance(message.value, ToRunner):
        raise UnexpectedMessage.of(message.value)
    return message.value


def expected(message: object, kind: type[M]) -> M:
    """``message`` if it is a ``kind``, else raises UnexpectedMessage: a Ray worker's reply, typed."""
    if not isinstance(message, kind):
        raise UnexpectedMessage.of(message)
    return message


@dataclass(frozen=True, slots=True)
class _Unpickled:
    value: object


async def _unpickled(reader: asyncio.StreamReader) -> _Unpickled | None:
    """The next framed object, or None at the end of the pipe (a message cut short included)."""
    try:
        (size,) = _HEADER.unpack(await reader.readexactly(_HEADER.size))
        data = await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        return None
    try:
        return _Unpickled(pickle.loads(data))  # noqa: S301 - the runner's own worker, or its runner
    except (pickle.UnpicklingError, AttributeError, ImportError, EOFError, ValueError) as exc:
        kind = f"unreadable: {type(exc).__name__}"
        raise UnexpectedMessage(kind) from exc
