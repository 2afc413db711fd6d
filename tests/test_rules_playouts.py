"""Seeded random playouts: invariants over thousands of deals, every profile, 3 to 7 seats.

Every built-in profile (seven-card Nap among them) at every table size it allows, and
short packs (32 and 28 cards, the lowest ranks stripped) under heather, full-ladder and
seven-card at the table sizes their packs allow.
"""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from referee.rules import (
    PROFILES,
    Card,
    DealSettled,
    Phase,
    Profile,
    Session,
    SessionRecord,
    deal_from_view,
    record_of,
    replay,
    verify,
)

SESSIONS_PER_CASE = 250  # x 8 deals = 2,000 deals for each profile and table size


def _short_pack(base: str, pack_size: int) -> Profile:
    """``base`` with a short pack, seating as many players as the pack can deal to."""
    profile = PROFILES[base]
    most = min(profile.max_players, pack_size // profile.hand_size)
    return replace(profile, name=f"{base}-{pack_size}", pack_size=pack_size, max_players=most)


RULES = {
    **PROFILES,
    **{
        p.name: p
        for p in (
            _short_pack("heather", 32),
            _short_pack("heather", 28),
            _short_pack("full-ladder", 32),
            _short_pack("full-ladder", 28),
            _short_pack("seven-card", 32),
        )
    },
}

CASES = [
    (name, seats)
    for name, profile in RULES.items()
    for seats in range(3, 8)
    if profile.min_players <= seats <= profile.max_players
]


def _check_view(session: Session, seat: int) -> None:
    view = session.view(seat)
    deal = session.deal
    hidden = {card for other in deal.seats if other != seat for card in deal.hands[other]}
    hidden |= set(deal.deck[len(deal.seats) * deal.profile.hand_size :])
    assert not (view.visible_cards & hidden), "a view shows a card its seat may not see"
    assert view.hand == tuple(deal.hands[seat])
    if view.to_act == seat and not deal.over:
        assert view.legal_actions == deal.legal_actions()
    else:
        assert view.legal_actions == ()


@pytest.mark.slow
@pytest.mark.parametrize(("profile_name", "seats"), CASES)
def test_random_playouts_keep_every_invariant(profile_name: str, seats: int) -> None:
    """Zero-sum deals, a trick per card in hand, each dealt card once, legal moves, no leaks, exact replay."""
    profile = RULES[profile_name]
    tricks = profile.hand_size
    rng = random.Random(f"{profile_name}/{seats}")
    for number in range(SESSIONS_PER_CASE):
        session = Session(profile, table_size=seats, seed=rng.randrange(2**32))
        settled: list[DealSettled] = []
        while not session.over:
            legal = session.legal_actions()
            assert legal, "no legal action while the session goes on"
            assert list(legal) == sorted(legal, key=_order), "legal actions are not sorted"
            if number % 25 == 0:
                _check_view(session, session.to_act or 0)
            events = session.apply(rng.choice(legal))
            settled.extend(e for e in events if isinstance(e, DealSettled))
        assert len(settled) == len(session.deals)
        for deal, settlement in zip(session.deals, settled, strict=True):
            assert sorted(deal.deck) == list(profile.pack), "a deck is not an order of the profile's pack"
            assert sum(settlement.payments) == 0
            assert deal.phase is Phase.OVER
            if deal.declarer is None:
                assert settlement.payments == (0,) * seats
                continue
            assert len(deal.tricks) == tricks
            played = [card for trick in deal.tricks for _, card in trick.plays]
            assert len(played) == len(set(played)) == tricks * len(deal.seats)
            assert set(played) == set(deal.deck[: tricks * len(deal.seats)])
            assert sum(deal.tricks_won) == tricks
        assert sum(session.balances) == 0
        best = max(session.balances[s] for s in session.in_play)
        assert all(session.balances[s] == best for s in session.winners)
        record = SessionRecord.from_json(json.loads(json.dumps(record_of(session).to_json())))
        assert verify(record) == []
        again = replay(record)
        assert again.balances == session.balances
        assert [d.actions for d in again.deals] == [d.actions for d in session.deals]


def _order(action: object) -> tuple[int, int]:
    return (1, action.index) if isinstance(action, Card) else (0, 0)


@pytest.mark.parametrize(("profile_name", "seats"), [("heather", 4), ("seven-card", 5), ("heather-28", 4)])
def test_deal_from_view_rebuilds_the_same_position(profile_name: str, seats: int) -> None:
    """A deal rebuilt from a seat's view and the true hidden hands continues exactly like the original.

    Short packs too: the rebuilt deal's undealt stock is the rest of the profile's pack.
    """
    profile = RULES[profile_name]
    rng = random.Random(5)
    checked = 0
    for seed in range(300):
        session = Session(profile, table_size=seats, seed=seed)
        deal = session.deal
        steps = rng.randrange(4, 20)
        for _ in range(steps):
            if deal.over:
                break
            deal.apply(rng.choice(deal.legal_actions()))
        if deal.over or deal.to_act is None:
            continue
        seat = deal.to_act
        view = session.view(seat)
        others = {s: deal.hands[s] for s in deal.seats if s != seat}
        rebuilt = deal_from_view(view, profile, others)
        assert sorted(rebuilt.deck) == list(profile.pack)
        assert rebuilt.legal_actions() == deal.legal_actions()
        assert rebuilt.tricks_won == deal.tricks_won
        assert rebuilt.trump is deal.trump
        while not deal.over:
            action = rng.choice(deal.legal_actions())
            assert deal.apply(action) == rebuilt.apply(action)
        assert rebuilt.payments == deal.payments
        checked += 1
    assert checked > 100


def test_copy_branches_without_touching_the_original() -> None:
    """Applying actions to a copy leaves the original deal as it was."""
    session = Session(PROFILES["full-ladder"], table_size=5, seed=3)
    deal = session.deal
    rng = random.Random(1)
    for _ in range(8):
        deal.apply(rng.choice(deal.legal_actions()))
    before = (deal.actions, deal.trick, deal.tricks_won, [tuple(h) for h in deal.hands])
    twin = deal.copy()
    while not twin.over:
        twin.apply(rng.choice(twin.legal_actions()))
    assert (deal.actions, deal.trick, deal.tricks_won, [tuple(h) for h in deal.hands]) == before
    assert twin.payments is not None
