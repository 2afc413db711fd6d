"""Seeded random playouts: invariants over thousands of deals, every profile, 3 to 7 seats.

Every built-in profile (seven-card Nap and the pool variants among them) at every table
size it allows, and short packs (32 and 28 cards, the lowest ranks stripped) under
heather, full-ladder and seven-card, and under purchase and peep (where a short pack
leaves a short stock), at the table sizes their packs allow; packs sized by the table
(28 to 40 cards) under full-ladder and peep. Then the pool variants on short stacks,
with rebuys or elimination and penalties now and then: at every step what is offered is
what is accepted, and every record verifies.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from dataclasses import replace
from itertools import combinations
from typing import TYPE_CHECKING

import pytest

from referee.rules import (
    BID_NAMES,
    CARDS,
    DECLINE_WIDOW,
    PACKS_BY_TABLE,
    PEEP,
    PROFILES,
    Bid,
    Card,
    Deal,
    DealSettled,
    Exchange,
    IllegalActionError,
    Penalty,
    Phase,
    PoolClaimed,
    PoolReturned,
    Profile,
    SeatEliminated,
    SeatRebought,
    Session,
    SessionRecord,
    TakeWidow,
    deal_from_view,
    record_of,
    replay,
    verify,
)

if TYPE_CHECKING:
    from referee.rules import Action

SESSIONS_PER_CASE = 120  # x 8 deals = 960 deals for each profile and table size


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
            _short_pack("purchase", 32),
            _short_pack("ecarte", 28),
            _short_pack("peep", 28),
            replace(PROFILES["full-ladder"], name="full-ladder-by-table", pack_sizes=PACKS_BY_TABLE),
            replace(PROFILES["peep"], name="peep-by-table", pack_sizes=PACKS_BY_TABLE),
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
    if deal.profile.has_pool:
        _check_pool_view(session, seat)
        return
    assert not (view.visible_cards & hidden), "a view shows a card its seat may not see"
    assert view.hand == tuple(deal.hands[seat])
    if view.to_act == seat and not deal.over:
        assert view.legal_actions == deal.legal_actions()
    else:
        assert view.legal_actions == ()


@pytest.mark.heavy
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
            assert sorted(deal.deck) == list(profile.pack_at(seats)), (
                "a deck is not an order of the table's pack"
            )
            assert sum(settlement.payments) == 0
            assert deal.phase is Phase.OVER
            if deal.declarer is None:
                assert settlement.payments == (0,) * seats
                continue
            assert len(deal.tricks) == tricks
            played = [card for trick in deal.tricks for _, card in trick.plays]
            assert len(played) == len(set(played)) == tricks * len(deal.seats)
            if not profile.has_pool:  # exchanges and the widow bring in other cards: see the pool test
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


def _check_pool_view(session: Session, seat: int) -> None:
    """What a seat sees in the pool variants: its hand, draws, discards; the widow if it paid or took it."""
    view = session.view(seat)
    deal = session.deal
    sees_widow = seat in deal.peeked or (deal.widow_taken is True and seat == deal.declarer)
    assert view.widow == (deal.widow if sees_widow else None), "the widow shown to a seat that did not pay"
    assert view.hand == tuple(deal.hands[seat])
    assert view.drawn == deal.drawn[seat]
    assert view.discarded == deal.discarded[seat]
    assert (view.pool, view.exchanged, view.peeked, view.widow_taken) == (
        session.pool,
        deal.exchanged,
        deal.peeked,
        deal.widow_taken,
    )
    hidden = {card for other in deal.seats if other != seat for card in deal.hands[other]}
    hidden |= {card for other in deal.seats if other != seat for card in deal.discarded[other]}
    hidden |= set(deal.stock)
    if deal.widow is not None and not deal.widow_taken:  # once taken, it is in the declarer's hand
        hidden.add(deal.widow)
    if sees_widow:
        hidden.discard(deal.widow)
    assert not (view.visible_cards & hidden), "a view shows a card its seat may not see"


def _check_cards_once(deal: Deal) -> None:
    """Hands, cards played, stock, widow (unless taken) and discards hold each card of the pack once."""
    played = [card for trick in deal.tricks for _, card in trick.plays] + [card for _, card in deal.trick]
    everywhere = [card for seat in deal.seats for card in deal.hands[seat]] + played + list(deal.stock)
    everywhere += [card for seat in deal.seats for card in deal.discarded[seat]]
    if deal.widow is not None and not deal.widow_taken:
        everywhere.append(deal.widow)
    counts = Counter(everywhere)
    assert max(counts.values()) == 1, "a card is in two places"
    assert set(counts) == set(deal.profile.pack), "a card went missing"


POOL_CASES = [(name, seats) for name, seats in CASES if RULES[name].has_pool]


@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.parametrize(("profile_name", "seats"), POOL_CASES)
def test_pool_playouts_keep_the_pool_and_the_cards_straight(profile_name: str, seats: int) -> None:
    """Pool variants: balances and pool sum to zero at every step, every card is in one place, no leaks.

    Exchanges draw only what the stock holds and keep hands whole; the pool is claimed
    by a Nap or higher made, or returned at the end, so a finished session sums to zero.
    """
    profile = RULES[profile_name]
    rng = random.Random(f"pool/{profile_name}/{seats}")
    claimed = returned = 0
    for number in range(60):
        session = Session(profile, table_size=seats, seed=rng.randrange(2**32))
        while not session.over:
            deal = session.deal
            if number % 6 == 0:
                for seat in deal.seats:
                    _check_view(session, seat)
            _check_cards_once(deal)
            in_trick = {seat for seat, _ in deal.trick}
            for seat in deal.seats:
                assert len(deal.hands[seat]) == profile.hand_size - len(deal.tricks) - (seat in in_trick)
            assert sum(session.balances) + session.pool == 0
            assert sum(session.pool_paid) == session.pool
            events = session.apply(rng.choice(session.legal_actions()))
            claimed += sum(isinstance(e, PoolClaimed) for e in events)
            returned += sum(isinstance(e, PoolReturned) for e in events)
        assert session.pool == 0
        assert sum(session.balances) == 0
        for deal in session.deals:
            _check_cards_once(deal)
            played = [card for trick in deal.tricks for _, card in trick.plays]
            assert (
                len(played) == len(set(played)) == (len(deal.seats) * profile.hand_size if deal.tricks else 0)
            )
        record = SessionRecord.from_json(json.loads(json.dumps(record_of(session).to_json())))
        assert record.profile == profile.at_table(seats)
        assert verify(record) == []
        again = replay(record)
        assert (again.balances, again.winners, again.pool) == (session.balances, session.winners, 0)
        assert [d.actions for d in again.deals] == [d.actions for d in session.deals]
    assert claimed + returned > 0


def _order(action: object) -> tuple[int, int]:
    return (1, action.index) if isinstance(action, Card) else (0, 0)


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize(
    ("profile_name", "seats"),
    [("purchase", 4), ("ecarte", 3), ("peep", 5), ("purchase-32", 6), ("peep-28", 4)],
)
def test_deal_from_view_rebuilds_a_pool_variant_position(profile_name: str, seats: int) -> None:
    """From any seat's view at any moment (exchange, auction, widow, play), the rebuilt deal plays on.

    Given the true hidden cards (the other hands, the widow, the stock), it continues
    exactly; given only the hands (the made-up exchanges and default guesses), its legal
    actions are still the real ones at the view's moment.
    """
    profile = RULES[profile_name]
    rng = random.Random(11)
    phases: set[Phase] = set()
    for seed in range(150):
        session = Session(profile, table_size=seats, seed=seed)
        for _ in range(rng.randrange(0, 16)):
            if session.deal.over or (session.deal.phase is Phase.PLAY and rng.random() < 0.3):
                break
            session.apply(rng.choice(session.legal_actions()))
        deal = session.deal
        if deal.over:
            continue
        seat = rng.choice([seat for seat in deal.seats if seat != deal.to_act] + [deal.to_act or 0])
        view = session.view(seat)
        others = {s: deal.hands[s] for s in deal.seats if s != seat}
        guessed = deal_from_view(view, profile, others)
        assert sorted(guessed.deck) == list(profile.pack)
        assert guessed.legal_actions() == deal.legal_actions()
        assert (guessed.phase, guessed.to_act, guessed.exchanged, guessed.peeked) == (
            deal.phase,
            deal.to_act,
            deal.exchanged,
            deal.peeked,
        )
        assert [guessed.hands[s] for s in deal.seats] == [deal.hands[s] for s in deal.seats]
        rebuilt = deal_from_view(view, profile, others, widow=deal.widow, stock=deal.stock)
        assert rebuilt.stock == deal.stock
        phases.add(deal.phase)
        while not deal.over:
            action = rng.choice(deal.legal_actions())
            assert deal.apply(action) == rebuilt.apply(action)
            assert [rebuilt.hands[s] for s in deal.seats] == [deal.hands[s] for s in deal.seats]
        assert rebuilt.payments == deal.payments
    expected = {Phase.BIDDING, Phase.PLAY}
    expected |= {Phase.EXCHANGE} if profile.exchange_max else {Phase.WIDOW}
    assert phases == expected


def _fingerprint(profile_name: str, seats: int, sessions: int = 12) -> str:
    """A digest of seeded random sessions: their views (the fields of before the pool), events, records."""
    old_fields = [
        *("profile", "table_size", "seat", "seats_in_play", "deal_number", "deals_in_session", "dealer"),
        *("phase", "to_act", "hand", "bids", "declarer", "contract", "trump", "trick", "tricks"),
        *("tricks_won", "balances", "legal_actions"),
    ]
    digest = hashlib.sha256()
    rng = random.Random(f"{profile_name}/{seats}")
    for _ in range(sessions):
        session = Session(PROFILES[profile_name], table_size=seats, seed=rng.randrange(2**32))
        digest.update(repr(session.opening).encode())
        while not session.over:
            seat: int = session.to_act  # type: ignore[assignment]
            view = session.view(seat)
            digest.update(repr(tuple(getattr(view, name) for name in old_fields)).encode())
            events = session.apply(rng.choice(session.legal_actions()))
            digest.update(repr(events).encode())
            told = session.tell((seat + 1) % seats, events, deal=len(session.deals) - 1)
            digest.update(repr(told).encode())
        digest.update(json.dumps(record_of(session).to_json(), sort_keys=True).encode())
    return digest.hexdigest()[:16]


BEFORE_THE_POOL = {
    ("heather", 3): "243f28c6af1cc055",
    ("heather", 5): "d97916baaf81d26d",
    ("heather", 6): "8cfbf2204fb79603",
    ("full-ladder", 3): "0b73eb7e1bc0ef03",
    ("full-ladder", 5): "bc3523f7e1d7222d",
    ("full-ladder", 6): "0d46e084a44da2cc",
    ("two-to-five", 3): "31740ff650f8e9c2",
    ("two-to-five", 5): "d8fb253df106ac43",
    ("two-to-five", 6): "ce20c2b83f540d9a",
    ("seven-card", 3): "29d3ff6c62aed532",
    ("seven-card", 5): "ec963153111b11c5",
    ("seven-card", 6): "ec8ca3e97fa19a04",
}


@pytest.mark.parametrize(
    ("profile_name", "seats"),
    [  # three seats in the quick run; the larger tables (longer sessions) in the whole suite
        case if case[1] == 3 else pytest.param(*case, marks=pytest.mark.slow)
        for case in sorted(BEFORE_THE_POOL)
    ],
)
def test_profiles_without_a_pool_play_exactly_as_before(profile_name: str, seats: int) -> None:
    """Seeded random sessions give the views, events and records they gave before the pool variants existed.

    The digests were taken with the rules engine of commit ec636ed, before Purchase,
    Écarté and Peep Nap: the new parameters' defaults change nothing for the profiles
    that were there.
    """
    assert _fingerprint(profile_name, seats) == BEFORE_THE_POOL[profile_name, seats]


def _chips_and_pool(name: str, base: str, **changes: object) -> Profile:
    return replace(PROFILES[base], name=name, source="tests: house rules", **changes)  # type: ignore[arg-type]


CHIPS_AND_POOL = {
    p.name: p
    for p in (
        _chips_and_pool("purchase-rebuy-1", "purchase", starting_chips=1, rebuy=True),
        _chips_and_pool("purchase-rebuy-6", "purchase", starting_chips=6, rebuy=True),
        _chips_and_pool("purchase-out-6", "purchase", starting_chips=6),
        _chips_and_pool("ecarte-rebuy-3", "ecarte", starting_chips=3, rebuy=True),
        _chips_and_pool(
            "ecarte-28-rebuy", "ecarte", starting_chips=6, rebuy=True, pack_size=28, max_players=5
        ),
        _chips_and_pool("peep-rebuy-1", "peep", starting_chips=1, rebuy=True),
        _chips_and_pool(
            "peep-exchange-rebuy",  # the Peep table: 6 chips, rebuys, 2 cards at most, fees per card
            "peep",
            starting_chips=6,
            rebuy=True,
            exchange_max=2,
            exchange_fee_per_card=True,
        ),
        _chips_and_pool(
            "peep-free-rebuy",
            "peep",
            starting_chips=2,
            rebuy=True,
            peep_fee=0,
            pool_claim="three",
            exchange_max=1,
        ),
        _chips_and_pool("peep-out-3", "peep", starting_chips=3, tie_break_deal=False),
        _chips_and_pool(
            "purchase-widow-rebuy", "purchase", starting_chips=4, rebuy=True, widow=True, exchange_fee=2
        ),
        _chips_and_pool(
            "purchase-by-table-rebuy", "purchase", starting_chips=6, rebuy=True, pack_sizes=PACKS_BY_TABLE
        ),
        _chips_and_pool(
            "ecarte-peep-by-table-rebuy",
            "ecarte",
            starting_chips=6,
            rebuy=True,
            widow=True,
            pack_sizes=PACKS_BY_TABLE,
        ),
        _chips_and_pool(
            "purchase-short-rebuy",
            "purchase",
            starting_chips=6,
            rebuy=True,
            deals_per_session=3,
            tie_break_deal=False,
        ),
    )
}
"""The pool variants on short stacks, with rebuys (and a few with elimination): house rules of every kind."""

CHIPS_AND_POOL_CASES = [
    (name, seats)
    for name, profile in CHIPS_AND_POOL.items()
    for seats in range(3, 8)
    if profile.min_players <= seats <= profile.max_players
]

PENALTY_RATE = 0.03
"""How often a seat to play is penalized instead (a faulting bot under the revoke policy)."""


def _candidates(deal: Deal) -> list[Action]:
    """What the seat to act might send: each bid, the peep, every exchange, each widow choice, every card."""
    hand = deal.hands[deal.to_act or 0]
    return [
        *(Bid(name) for name in BID_NAMES),
        PEEP,
        *(Exchange(cards) for size in range(len(hand) + 1) for cards in combinations(hand, size)),
        DECLINE_WIDOW,
        *(TakeWidow(card) for card in hand),
        *CARDS,
    ]


def _accepted(session: Session, action: Action) -> bool:
    try:
        session.check(action, seat=session.to_act)
    except IllegalActionError:
        return False
    return True


def _choose(legal: tuple[Action, ...], rng: random.Random) -> Action:
    """A random legal action; in the exchange a random count first, so every count is played."""
    if isinstance(legal[0], Exchange):
        count = rng.choice(sorted({len(action.cards) for action in legal}))  # type: ignore[union-attr]
        return rng.choice([action for action in legal if len(action.cards) == count])  # type: ignore[union-attr]
    return rng.choice(legal)


def _play_checking_every_offer(
    session: Session, rng: random.Random, *, every_candidate: bool, seen: Counter[str]
) -> None:
    """Play ``session`` out at random, faults penalized now and then, checking each step's offers.

    Every offered action passes the check; with ``every_candidate``, the check accepts
    nothing else either. At each deal's start every seat in play has chips to pay.
    """
    profile = session.profile
    while not session.over:
        deal = session.deal
        if not deal.action_count and profile.starting_chips is not None:
            assert all((session.stack(seat) or 0) > 0 for seat in deal.seats), "a seat dealt in with no chips"
        legal = session.legal_actions()
        assert legal, "no legal action while the session goes on"
        if every_candidate:
            accepted = [action for action in _candidates(deal) if _accepted(session, action)]
            assert set(accepted) == set(legal), "what is offered and what is accepted differ"
        else:
            for action in legal:
                session.check(action, seat=session.to_act)
        if isinstance(legal[0], Exchange) and deal.stacks is not None:
            most = min(profile.exchange_max, len(deal.stock))
            seen["exchange cut by chips"] += max(len(action.cards) for action in legal) < most  # type: ignore[union-attr]
        if deal.phase is Phase.PLAY and rng.random() < PENALTY_RATE:
            events = session.apply(Penalty(deal.to_act or 0))
            seen["penalty"] += 1
        else:
            events = session.apply(_choose(legal, rng))
        rebought = Counter(e.seat for e in events if isinstance(e, SeatRebought))
        seen["several stakes"] += any(count > 1 for count in rebought.values())
        seen["rebuy"] += bool(rebought)
        seen["eliminated"] += any(isinstance(e, SeatEliminated) for e in events)
        seen["pool claimed"] += any(isinstance(e, PoolClaimed) for e in events)
        seen["pool returned"] += any(isinstance(e, PoolReturned) for e in events)
        assert sum(session.balances) + session.pool == 0


def _check_record(session: Session) -> None:
    record = SessionRecord.from_json(json.loads(json.dumps(record_of(session).to_json())))
    assert verify(record) == [], "an engine-played record does not verify"
    again = replay(record)
    assert (again.balances, again.winners, again.rebuys) == (
        session.balances,
        session.winners,
        session.rebuys,
    )


@pytest.mark.slow
@pytest.mark.parametrize("profile_name", sorted(CHIPS_AND_POOL))
def test_with_chips_and_a_pool_every_offer_is_accepted_and_every_record_verifies(profile_name: str) -> None:
    """A few sessions of each house rule at its middle table size (the slow test below plays them all)."""
    profile = CHIPS_AND_POOL[profile_name]
    seats = (profile.min_players + profile.max_players) // 2
    rng = random.Random(f"offers/{profile_name}")
    seen: Counter[str] = Counter()
    for _ in range(3):
        session = Session(profile, table_size=seats, seed=rng.randrange(2**32))
        _play_checking_every_offer(session, rng, every_candidate=True, seen=seen)
        _check_record(session)


@pytest.mark.heavy
@pytest.mark.slow
@pytest.mark.parametrize(("profile_name", "seats"), CHIPS_AND_POOL_CASES)
def test_every_offer_is_accepted_and_every_record_verifies_at_every_table_size(
    profile_name: str, seats: int
) -> None:
    """Every house rule with chips and a pool, every table size: offers and checks agree at every step.

    Stacks run out (exchanges cut short by chips), seats buy back in, several stakes at a
    time after a penalty, or leave; the pool is claimed and returned; every record of a
    session the engine played replays and verifies.
    """
    profile = CHIPS_AND_POOL[profile_name]
    rng = random.Random(f"offers/{profile_name}/{seats}")
    seen: Counter[str] = Counter()
    for number in range(40):
        session = Session(profile, table_size=seats, seed=rng.randrange(2**32))
        _play_checking_every_offer(session, rng, every_candidate=number % 4 == 0, seen=seen)
        _check_record(session)
    assert seen["penalty"] > 0
    assert seen["pool claimed"] + seen["pool returned"] > 0
    if profile.rebuy:
        assert seen["rebuy"] > 0
        assert not seen["eliminated"]
    else:
        assert not seen["rebuy"]
