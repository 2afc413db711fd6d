"""The rules profile of a view's table, for the example bots.

A view names its table's profile (``view.profile``); a built-in name is all a bot needs
(:data:`referee.rules.PROFILES`: hand size, pack, ladder). House rules come with the
referee's Welcome, which the Python SDK hands to every bot (:attr:`clients.sdk.Bot.rules`);
a bot may also be given them (``--profile FILE.toml``); failing both, it reads what the
view itself shows (:func:`table_rules`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from referee.rules import PASS, PROFILES, Bid

if TYPE_CHECKING:
    from referee.rules import Profile, SeatView


def table_rules(view: SeatView, *, given: Profile | None = None) -> Profile:
    """The profile ``view``'s table plays: ``given`` when it is that one, else the built-in one.

    A profile the bot was not given and that is not built in (house rules) is read from
    the view as far as it goes: ``given`` when there is one, else the first built-in
    profile with the view's hand size whose ladder holds every bid seen. Its pack is then
    that profile's (52 cards), which a short pack's house rules do not have: give such a
    bot its house rules. A profile given is played with the pack of the view's table
    (:meth:`~referee.rules.Profile.at_table`: house rules may size the pack by the table).
    """
    if given is not None and given.name == view.profile:
        return given.at_table(view.table_size)
    built_in = PROFILES.get(view.profile)
    if built_in is not None:
        return built_in
    if given is not None:
        return given.at_table(view.table_size)
    hand_size = (
        len(view.hand)
        + sum(1 for trick in view.tricks for seat, _ in trick.plays if seat == view.seat)
        + sum(1 for seat, _ in view.trick if seat == view.seat)
    )
    bids = {bid.name for _, bid in view.bids if bid is not PASS}
    bids.update(
        action.name for action in view.legal_actions if isinstance(action, Bid) and action is not PASS
    )
    if view.contract is not None:
        bids.add(view.contract)
    fits = [p for p in PROFILES.values() if p.hand_size == hand_size and all(p.has(name) for name in bids)]
    if fits:
        return fits[0]
    return min(PROFILES.values(), key=lambda p: abs(p.hand_size - hand_size))
