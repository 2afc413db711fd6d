"""Play a whole session in-process, no referee and no network: for testing bots.

The same :class:`~clients.sdk.bot.Bot` objects the SDK serves over the wire play here
through :class:`referee.rules.Session`; each gets the same views (and, if it overrides
``on_event``, the same engine events) it would get from the referee.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clients.sdk.bot import Bot
from referee.rules import DEFAULT_PROFILE, IllegalActionError, Profile, Session

if TYPE_CHECKING:
    from collections.abc import Sequence


def play_local(
    bots: Sequence[Bot],
    *,
    seed: int,
    profile: Profile = DEFAULT_PROFILE,
    table: str = "local",
) -> Session:
    """Play one session with ``bots[i]`` at seat i; return the finished session.

    Raises :class:`referee.rules.IllegalActionError` (naming the seat and the action)
    the moment a bot answers something that is not one of its legal actions.
    """
    session = Session(profile, table_size=len(bots), seed=seed)
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
            msg = (f"seat {to_act} answered {action!r}; legal: "
                   f"{', '.join(map(str, view.legal_actions))}")
            raise IllegalActionError(msg)
        _tell(listeners, session.apply(action))
    return session


def _tell(listeners: Sequence[Bot], events: Sequence[object]) -> None:
    for event in events:
        for bot in listeners:
            bot.on_event(event)
