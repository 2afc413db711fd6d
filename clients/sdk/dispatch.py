"""From a referee Batch to one Answers message: the SDK's pure core (no grpc, no IO).

The dispatcher keeps one :class:`~clients.sdk.bot.Bot` per (table, seat), decodes each
decision request into a :class:`~referee.rules.SeatView` (lazily: see
:class:`~referee.wire.fastdecode.LazySeatView`), asks the bot, checks the answer
is legal and builds the reply. Everything about the network lives in
:mod:`clients.sdk.connection`; this module is driven by tests with hand-made messages.
"""

from __future__ import annotations

import inspect
import sys
import time
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from clients.sdk.bot import Bot
from referee.rules import CARDS, Action, Bid, fallback_action
from referee.wire import nap_pb2
from referee.wire.codec import event_from_proto
from referee.wire.fastdecode import ViewDecoder, actions_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from referee.rules import SeatView

_DETAILED_ERRORS: Final = 20
"""Bot errors logged with a traceback; after that, one line per 1000 errors."""


def legal_actions_of(texts: Sequence[str]) -> tuple[Action, ...]:
    """Decode legal action strings (fast path for the canonical spellings); ValueError if one is none."""
    return actions_of(texts)


def _legal_or_empty(texts: Sequence[str]) -> tuple[Action, ...]:
    try:
        return legal_actions_of(texts)
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


class Dispatcher:
    """Answers batches for every table and seat of one connection.

    ``factory`` makes a bot for a (table, seat) the first time it appears in a batch;
    :meth:`close_table` forgets the table's bots. ``decode_request`` is by default a
    :class:`~referee.wire.fastdecode.ViewDecoder`'s: lazy views, equal to the codec's
    ``view_from_proto`` ones, whose fields past ``legal_actions`` are decoded when the bot
    first reads one (and then only what the (table, seat)'s view added since the last
    decoded one); ``decode_event`` is the codec's (tests may pass fakes). Events are
    decoded only for bots that override :meth:`Bot.on_event`, and events the codec maps to
    no engine event (a substitution notice, an unknown kind) are not delivered.
    """

    def __init__(
        self,
        factory: Callable[[], Bot],
        *,
        decode_request: Callable[[nap_pb2.DecisionRequest], SeatView] | None = None,
        decode_event: Callable[[nap_pb2.TableEvent], object] | None = event_from_proto,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self._factory = factory
        self._views = ViewDecoder()
        self._decode_request = decode_request if decode_request is not None else self._views.request
        self._decode_event = decode_event
        self._log = log if log is not None else _stderr
        self._bots: dict[str, dict[int, tuple[Bot, bool]]] = {}
        """Per table, per seat: the bot and whether it wants events."""
        self._wants_events: dict[type, bool] = {}
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

    def handle_batch(self, batch: nap_pb2.Batch) -> nap_pb2.BotMessage | Awaitable[nap_pb2.BotMessage] | None:
        """Deliver the batch's events, decide its requests, and return ONE Answers message.

        Returns None for a batch without requests. If a bot's ``decide`` returned an
        awaitable (an ``async def`` bot), the result is an awaitable that resolves to the
        whole Answers message once every decision of the batch is made.
        """
        if batch.events:
            self._deliver(batch.events)
        requests = batch.requests
        if not requests:
            return None
        out = nap_pb2.BotMessage()
        answers = out.answers.answers
        add = answers.add
        pending: list[tuple[int, nap_pb2.DecisionRequest, tuple[Action, ...], Awaitable[Any], float]] = []
        clock = time.perf_counter
        decode = self._decode_request
        bots = self._bots
        for request in requests:
            started = clock()
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
                pending.append((len(answers), request, legal, action, started))
                add(request_id=request.request_id)
                continue
            else:
                text = self._text(request, legal, action)
            add(request_id=request.request_id, action=text, think_ms=int((clock() - started) * 1000))
        self.stats.decisions += len(requests)
        if pending:
            return self._finish(out, pending)
        return out

    async def _finish(
        self,
        out: nap_pb2.BotMessage,
        pending: list[tuple[int, nap_pb2.DecisionRequest, tuple[Action, ...], Awaitable[Any], float]],
    ) -> nap_pb2.BotMessage:
        answers = out.answers.answers
        for index, request, legal, awaitable, started in pending:
            try:
                action = await awaitable
            except Exception:  # noqa: BLE001 - a bot's bug must not stop the process
                action = self._failed(request, legal)
            answer = answers[index]
            answer.action = self._text(request, legal, action)
            answer.think_ms = int((time.perf_counter() - started) * 1000)
        return out

    def _text(self, request: nap_pb2.DecisionRequest, legal: tuple[Action, ...], action: object) -> str:
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

    def _failed(self, request: nap_pb2.DecisionRequest, legal: tuple[Action, ...]) -> Action | str:
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

    def _lowest_text(self, request: nap_pb2.DecisionRequest, legal: tuple[Action, ...]) -> str:
        if not legal:
            return request.legal_actions[0] if request.legal_actions else "pass"
        return request.legal_actions[legal.index(fallback_action(legal))]

    def _deliver(self, events: Sequence[nap_pb2.TableEvent]) -> None:
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


_DOMAIN_ACTIONS: Final = frozenset({Bid, type(CARDS[0])})


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)  # noqa: T201 - the SDK's diagnostics go to stderr
