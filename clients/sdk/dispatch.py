"""From a referee's Batch to the bot's answers: the SDK's core, without grpc or protobuf.

The dispatcher keeps one :class:`~clients.sdk.bot.Bot` per (table, seat), has each
decision request's :class:`~referee.rules.SeatView` decoded (lazily: see
:class:`~referee.wire.fastdecode.LazySeatView`), asks the bot, checks the answer is legal
and makes the reply. It deals in the values of :mod:`referee.wire.botstream` (a
:class:`~referee.wire.botstream.Batch` in, :data:`~referee.wire.botstream.Answers` out),
which also reads and writes the messages. A batch decided at once is one Answers
message; one that takes longer is an :class:`Answering`, whose answers are handed over
as they are ready (see :data:`FLUSH_AFTER`). The network lives in
:mod:`clients.sdk.connection`; the only output here is the log (stderr unless the caller
passes one), and tests drive it with batches read from hand-made messages.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import time
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from clients.sdk.bot import Bot
from referee.rules import CARDS, Action, Bid, Exchange, Peep, TakeWidow, fallback_action
from referee.wire.botstream import Answer, RequestViews, event_of
from referee.wire.fastdecode import actions_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Sequence

    from referee.rules import Profile, SeatView
    from referee.wire.botstream import Answers, Batch, EventNotice, Request

FLUSH_AFTER: Final = 0.005
"""Seconds a batch's synchronous decisions run before the answers made so far are sent.

A bot decides a batch's requests one after another on the event loop's thread; past
this delay the answers decided so far leave in an Answers message of their own, and the
delay starts again. Why 5 ms: a slow bot's first answers then wait at most that (plus
the decision under way) for its later ones, half a percent of a 1 s decision limit and
the scale of the referee's own batching delay; a fast bot's whole batch (the SDK spends
about 5 us a decision, ``bench/sdk.py``: 256 requests take 1-2 ms) still leaves as one
message; and a bot that decides for longer sends at most one extra message per 5 ms of
deciding, which costs it about 80 us of CPU (one Answers write through grpc.aio, measured
on a 2-core machine), under 2% of that time. 10 ms would halve that cost and double the
wait."""

_DETAILED_ERRORS: Final = 20
"""Bot errors logged with a traceback; after that, one line per 1000 errors."""


def _legal_or_empty(texts: Sequence[str]) -> tuple[Action, ...]:
    """The legal actions ``texts`` spell, for the fallback answer; none if one is no action."""
    try:
        return actions_of(texts)
    except ValueError:
        return ()


@dataclass(slots=True)
class Stats:
    """What the dispatcher did, for the exit summary and for tests."""

    decisions: int = 0
    """Requests answered."""
    errors: int = 0
    """Decisions in which the bot raised (the lowest legal action was answered instead)."""
    illegal: int = 0
    """Decisions in which the bot returned an action that is not legal (likewise replaced)."""
    event_errors: int = 0
    """Events whose handling (decoding or ``on_event``) raised; they are skipped."""


class Answering:
    """A batch whose answers leave in more than one Answers message, each part when it is ready.

    :meth:`Dispatcher.handle_batch` returns one when it could not answer the whole batch at
    once: its synchronous decisions ran past the dispatcher's ``flush_after`` (:meth:`resume`
    decides the next ones, again for at most that long), or a bot's ``decide`` returned an
    awaitable (an ``async def`` bot). Awaitable decisions run as tasks, all at the same
    time, and each answer is ready as soon as its task completes. :meth:`take` hands over
    every answer ready so far as one Answers message; :meth:`wait` waits for more. The
    connection sends what it takes at once, so answers ready at about the same time share
    a message and none waits for the batch's slowest decision.
    """

    __slots__ = ("_resume", "_waiter", "answers", "position", "requests", "running")

    def __init__(self, requests: Sequence[Request], resume: Callable[[Answering], None]) -> None:
        self.requests = requests
        self.position = 0
        """Requests whose ``decide`` has been called, in order (the first ``position`` ones)."""
        self.running = 0
        """Awaitable decisions not yet settled."""
        self.answers: list[Answer] = []
        """The answers ready and not yet taken, in the order they were ready."""
        self._resume = resume
        self._waiter: asyncio.Future[None] | None = None

    @property
    def decided(self) -> bool:
        """Whether every request's ``decide`` has been called (awaitables may still be running)."""
        return self.position == len(self.requests)

    @property
    def finished(self) -> bool:
        """Whether nothing more will be ready: all decided and settled, and every answer taken."""
        return self.position == len(self.requests) and not self.running and not self.answers

    def resume(self) -> None:
        """Decide the next requests synchronously, until none is left or ``flush_after`` has passed."""
        self._resume(self)

    def take(self) -> Answers | None:
        """The answers ready so far, for one Answers message (None if there are none); they are not kept."""
        answers = self.answers
        if not answers:
            return None
        self.answers = []
        return tuple(answers)

    async def wait(self) -> None:
        """Return once an answer is ready to take or no decision is running (at once if so already).

        For one waiter at a time. Answers settled in the same turn of the event loop are all
        ready when it returns, and those settled while the taker sends wait for the next take.
        """
        if self.answers or not self.running:
            return
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        await waiter

    def put(self, request_id: int, action: str) -> None:
        """Add a settled decision's answer (the dispatcher's part)."""
        self.answers.append(Answer(request_id, action))
        self._wake()

    def settled(self, task: asyncio.Future[None]) -> None:
        """One awaitable decision is over (the done callback of its task)."""
        del task
        self.running -= 1
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)


class Dispatcher:
    """Answers batches for every table and seat of one connection.

    ``factory`` makes a bot for a (table, seat) the first time it appears in a batch;
    :meth:`close_table` forgets the table's bots. ``decode_request`` is by default a
    :class:`~referee.wire.botstream.RequestViews`'s: lazy views, equal to the codec's
    ``view_from_proto`` ones, whose fields past ``legal_actions`` are decoded when the bot
    first reads one (and then only what the (table, seat)'s view added since the last
    decoded one); ``decode_event`` is :func:`~referee.wire.botstream.event_of` (tests may
    pass fakes). Events are
    decoded only for bots that override :meth:`Bot.on_event`, and events the codec maps to
    no engine event (a substitution notice, an unknown kind) are not delivered.

    ``flush_after`` (seconds, on ``clock``) is how long a batch's synchronous decisions
    run before the answers made so far are handed over (:data:`FLUSH_AFTER`).
    """

    def __init__(  # noqa: PLR0913 - keywords, each with a default
        self,
        factory: Callable[[], Bot],
        *,
        decode_request: Callable[[Request], SeatView] | None = None,
        decode_event: Callable[[EventNotice], object] | None = event_of,
        log: Callable[[str], None] | None = None,
        flush_after: float = FLUSH_AFTER,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._factory = factory
        self._views = RequestViews()
        self._decode_request = decode_request if decode_request is not None else self._views.view
        self._decode_event = decode_event
        self._log = log if log is not None else _stderr
        self._flush_after = flush_after
        self._clock = clock
        self.rules: Profile | None = None
        """The rules the referee announced: every bot made from now on gets them (:attr:`Bot.rules`)."""
        self._bots: dict[str, dict[int, tuple[Bot, bool]]] = {}
        """Per table, per seat: the bot and whether it wants events."""
        self._wants_events: dict[type, bool] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        """The awaitable decisions running (asyncio keeps only weak references to tasks)."""
        self.stats = Stats()

    @property
    def tables(self) -> frozenset[str]:
        """The tables that currently have bots."""
        return frozenset(self._bots)

    def bot(self, table: str, seat: int) -> Bot:
        """The bot for ``seat`` at ``table``, made by the factory if it is new."""
        return self._seat(table, seat)[0]

    def _seat(self, table: str, seat: int) -> tuple[Bot, bool]:
        seats = self._bots.get(table)
        if seats is None:
            seats = self._bots[table] = {}
        found = seats.get(seat)
        if found is None:
            bot = self._factory()
            bot.table = table
            bot.seat = seat
            bot.rules = self.rules
            kind = type(bot)
            wants = self._wants_events.get(kind)
            if wants is None:
                wants = self._wants_events[kind] = kind.on_event is not Bot.on_event
            found = seats[seat] = (bot, wants)
        return found

    def close_table(self, table: str) -> None:
        """Drop the bots of ``table`` (its session is over or it was aborted)."""
        self._bots.pop(table, None)
        self._views.forget(table)

    def handle_batch(self, batch: Batch) -> Answers | Answering | Awaitable[Answers] | None:
        """Deliver the batch's events, then decide its requests in order.

        Returns None for a batch without requests; the answers of ONE Answers message when
        every decision was made synchronously within ``flush_after``; otherwise an
        :class:`Answering` that hands the answers over as they are ready. Awaitable
        decisions (``async def decide``) are started as tasks, so they need a running event
        loop. (A subclass may instead return an awaitable of the batch's answers, all in
        one message, as the stdio bridge does.) The batch's closed tables and faults are
        the caller's to handle, after this returns.
        """
        if batch.events:
            self._deliver(batch.events)
        requests = batch.requests
        if not requests:
            return None
        answering = Answering(requests, self._decide)
        self._decide(answering)
        if answering.running or answering.position != len(requests):
            return answering
        return tuple(answering.answers)

    def _decide(self, answering: Answering) -> None:
        """Decide ``answering``'s next requests in order, until none is left or ``flush_after`` has passed."""
        first = answering.position
        answers = answering.answers
        add = answers.append
        # Each request decided adds one answer or starts one task, and nothing else adds to
        # ``answers`` meanwhile (tasks run only once this returns): counting both says how
        # far the loop got, so the SDK's hottest loop keeps no index.
        before = len(answers)
        tasks = 0
        clock = self._clock
        decode = self._decode_request
        bots = self._bots
        flush_at = clock() + self._flush_after
        for request in answering.requests[first:] if first else answering.requests:
            legal: tuple[Action, ...] = ()
            try:
                view = decode(request)
                legal = view.legal_actions
                seats = bots.get(request.table)
                found = None if seats is None else seats.get(request.seat)
                if found is None:
                    found = self._seat(request.table, request.seat)
                action: Any = found[0].decide(view)
            except Exception:  # noqa: BLE001 - a bot's bug must not stop the process
                legal = legal or _legal_or_empty(request.legal_actions)
                action = self._failed(request, legal)
            if action.__class__ in _DOMAIN_ACTIONS:
                try:  # the request's own spelling of the action: the common case, inline
                    text = request.legal_actions[legal.index(action)]
                except ValueError:
                    text = self._text(request, legal, action)
            elif inspect.isawaitable(action):
                self._start(answering, self._settle(answering, request, legal, action))
                tasks += 1
                if clock() >= flush_at:
                    break
                continue
            else:
                text = self._text(request, legal, action)
            add(_new_answer(Answer, (request.request_id, text)))
            if clock() >= flush_at:  # one clock reading per decision
                break
        decided = len(answers) - before + tasks
        self.stats.decisions += decided
        answering.position = first + decided

    def _start(self, answering: Answering, decision: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(decision)
        answering.running += 1
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(answering.settled)

    async def _settle(
        self,
        answering: Answering,
        request: Request,
        legal: tuple[Action, ...],
        awaitable: Awaitable[Any],
    ) -> None:
        """Await an ``async def`` bot's decision and hand its answer (or the fallback) to ``answering``."""
        try:
            action = await awaitable
        except Exception:  # noqa: BLE001 - a bot's bug must not stop the process
            action = self._failed(request, legal)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # we are being cancelled (the process is ending), not the bot's awaitable
            action = self._failed(request, legal)
        answering.put(request.request_id, self._text(request, legal, action))

    def _text(self, request: Request, legal: tuple[Action, ...], action: object) -> str:
        """The answer's action string: the request's own spelling of a legal action."""
        try:
            return request.legal_actions[legal.index(action)]
        except ValueError:
            if isinstance(action, str) and action in request.legal_actions:
                return action
        self.stats.illegal += 1
        if self.stats.illegal <= _DETAILED_ERRORS:
            self._log(
                f"bot answered {action!r}, not one of the legal actions "
                f"{', '.join(request.legal_actions)} (table {request.table}, seat {request.seat}, "
                f"request {request.request_id}); answering the lowest legal action"
            )
        return self._lowest_text(request, legal)

    def _failed(self, request: Request, legal: tuple[Action, ...]) -> Action | str:
        """Log the exception being handled and return the fallback action."""
        stats = self.stats
        stats.errors += 1
        where = f"table {request.table}, seat {request.seat}, request {request.request_id}"
        if stats.errors <= _DETAILED_ERRORS:
            self._log(
                f"bot raised while deciding ({where}); answering the lowest legal action\n"
                + traceback.format_exc().rstrip()
            )
        elif stats.errors % 1000 == 0:
            self._log(f"bot raised again ({stats.errors} errors so far; {where})")
        if not legal:
            return request.legal_actions[0] if request.legal_actions else "pass"
        return fallback_action(legal)

    def _lowest_text(self, request: Request, legal: tuple[Action, ...]) -> str:
        if not legal:
            return request.legal_actions[0] if request.legal_actions else "pass"
        return request.legal_actions[legal.index(fallback_action(legal))]

    def _deliver(self, events: Sequence[EventNotice]) -> None:
        decode = self._decode_event
        for event in events:
            bot, wants = self._seat(event.table, event.seat)
            if not wants or decode is None:
                continue
            try:
                decoded = decode(event)
                if decoded is not None:
                    bot.on_event(decoded)
            except Exception:  # noqa: BLE001 - a bot's bug must not stop the process
                self.stats.event_errors += 1
                if self.stats.event_errors <= _DETAILED_ERRORS:
                    self._log(
                        f"bot raised in on_event (table {event.table}, seat {event.seat}); "
                        "event skipped\n" + traceback.format_exc().rstrip()
                    )


_DOMAIN_ACTIONS: Final = frozenset({Bid, type(CARDS[0]), Exchange, Peep, TakeWidow})
_new_answer: Final = tuple.__new__
"""Makes an :class:`~referee.wire.botstream.Answer` without its Python-level ``__new__``."""


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # noqa: T201 - the SDK's diagnostics go to stderr
