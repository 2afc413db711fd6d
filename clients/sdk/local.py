"""Bots in process, no network: :func:`play_local` for testing a bot, :class:`LocalBot` for play.

The same :class:`~clients.sdk.bot.Bot` objects the SDK serves over the wire play here;
each gets the same views (and, if it overrides ``on_event``, the same engine events) it
would get from the referee. :func:`play_local` plays one session through
:class:`referee.rules.Session` alone and stops at the first illegal answer (a bot
author's test); :class:`LocalBot` answers the referee's own match core
(:class:`referee.match.Simulation`), so in-process play has the referee's clocks, faults
and policies.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from clients.sdk.bot import Bot, decide_or_fallback, wants_events
from referee.match import Answer, Leave, SeatPenalized
from referee.rules import (
    DEFAULT_PROFILE,
    IllegalActionError,
    Penalized,
    Profile,
    SeatView,
    Session,
    get_profile,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from referee.match import Ask, Reaction, Tell


def play_local(
    bots: Sequence[Bot],
    *,
    seed: int,
    profile: Profile | str = DEFAULT_PROFILE,
    table: str = "local",
) -> Session:
    """Play one session with ``bots[i]`` at seat i; return the finished session.

    ``profile`` is a :class:`~referee.rules.Profile` or what ``nap --profile`` takes: a
    built-in profile's name (``"peep"``) or a house-rules ``.toml`` file (an unknown one
    is a :class:`~referee.rules.ProfileError` that lists the names). Raises
    :class:`referee.rules.IllegalActionError` (naming the seat and the action) the moment a
    bot answers something that is not one of its legal actions.
    """
    rules = get_profile(profile) if isinstance(profile, str) else profile
    session = Session(rules, table_size=len(bots), seed=seed)
    listeners = [bot for bot in bots if type(bot).on_event is not Bot.on_event]
    for seat, bot in enumerate(bots):
        bot.table = table
        bot.seat = seat
    _tell(listeners, session.opening)
    while not session.over:
        to_act = session.to_act
        assert to_act is not None  # noqa: S101 - a session not over always has a seat to act
        view = session.view(to_act)
        action = bots[to_act].decide(view)
        if action not in view.legal_actions:
            msg = f"seat {to_act} answered {action!r}; legal: {', '.join(map(str, view.legal_actions))}"
            raise IllegalActionError(msg)
        _tell(listeners, session.apply(action))
    return session


def _tell(listeners: Sequence[Bot], events: Sequence[object]) -> None:
    for event in events:
        for bot in listeners:
            bot.on_event(event)


class LocalBot:
    """SDK bots answering the match core in process, as the SDK would answer the referee.

    One :class:`Bot` per (table, seat), made by ``factory`` when the table first asks
    that seat, and given ``rules`` (as the SDK gives the rules of the referee's Welcome).
    Each request is decided at once with :func:`decide_or_fallback` (a bot that raises
    or answers an illegal action gets the fallback played, and no fault, as over gRPC);
    the time it took, on ``clock``, is its think time, and the CPU its thread spent, on
    ``cpu``, what it spent on the decision (for a bot on the CPU clock, as a tournament's
    local bots are). A bot that raises ``SystemExit``
    is a process that exits: it leaves and does not come back. Events reach the bots that
    override :meth:`Bot.on_event`, as the SDK decodes them.
    """

    def __init__(
        self,
        factory: Callable[[], Bot],
        *,
        rules: Profile | None = None,
        clock: Callable[[], float] = time.perf_counter,
        cpu: Callable[[], float] = time.thread_time,
    ) -> None:
        self._factory = factory
        self._rules = rules
        self._clock = clock
        self._cpu = cpu
        self._bots: dict[tuple[str, int], Bot] = {}
        self.listening = wants_events(factory)
        self.fallbacks = 0
        """Decisions in which the fallback was played for the bot."""

    def bot(self, table: str, seat: int) -> Bot:
        """The bot at ``seat`` of ``table``, made if new."""
        bot = self._bots.get((table, seat))
        if bot is None:
            bot = self._bots[table, seat] = self._factory()
            bot.table, bot.seat, bot.rules = table, seat, self._rules
        return bot

    def respond(self, ask: Ask, deadline_ms: int, now: float) -> list[Reaction]:
        """Decide ``ask`` now; the answer leaves after the time the bot took."""
        del deadline_ms, now
        bot = self.bot(ask.table, ask.seat)
        started, cpu = self._clock(), self._cpu()
        try:
            action, problem = decide_or_fallback(bot, SeatView(*ask.view))
        except SystemExit:
            spent = (self._cpu() - cpu) * 1000
            return [Leave((self._clock() - started) * 1000, detail="the bot exited", cpu_ms=spent)]
        self.fallbacks += problem is not None
        spent = (self._cpu() - cpu) * 1000
        return [Answer(ask.request_id, str(action), (self._clock() - started) * 1000, spent)]

    def tell(self, tell: Tell) -> None:
        """Hand the seat's bot the engine events of ``tell`` (a substitution notice is none)."""
        if not self.listening:
            return
        bot = self.bot(tell.table, tell.seat)
        for item in tell.items:
            if isinstance(item, SeatPenalized):
                if item.substitute is None:
                    bot.on_event(Penalized(item.seat))
            else:
                bot.on_event(item.event)
