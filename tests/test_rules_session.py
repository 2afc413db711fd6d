"""Sessions: rotation, finite chips, tie-break deals, records and their verification."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest

from referee.rules import (
    CARDS,
    PROFILES,
    Bid,
    Card,
    DealStarted,
    RecordError,
    SeatEliminated,
    SeatRebought,
    Session,
    SessionOver,
    SessionRecord,
    deal_deck,
    first_dealer,
    record_of,
    verify,
)
from referee.rules.cards import cards_text

FULL = PROFILES["full-ladder"]


def _play_randomly(session: Session, rng: random.Random) -> list[object]:
    events: list[object] = list(session.opening)
    while not session.over:
        events.extend(session.apply(rng.choice(session.legal_actions())))
    return events


def test_first_dealer_is_the_lowest_card_of_the_draw_and_depends_only_on_the_seed() -> None:
    """The draw is reproducible from the seed and spreads the first deal over the seats."""
    dealers = {first_dealer(seed, 5) for seed in range(200)}
    assert dealers == set(range(5))
    assert first_dealer(42, 5) == first_dealer(42, 5)


def test_sessions_with_the_same_seed_deal_the_same_cards() -> None:
    """A board set is a function of its seed, whatever the players do."""
    one = Session(PROFILES["heather"], table_size=4, seed=99)
    two = Session(PROFILES["heather"], table_size=4, seed=99)
    _play_randomly(one, random.Random(1))
    _play_randomly(two, random.Random(2))
    assert [d.deck for d in one.deals] == [d.deck for d in two.deals]
    assert [d.dealer for d in one.deals] == [d.dealer for d in two.deals]


def test_a_seat_that_runs_out_of_chips_is_eliminated_and_dealt_no_more() -> None:
    """Seed 001's finite stacks: at zero chips a seat leaves; later deals skip it."""
    profile = replace(FULL, name="short-stacks", starting_chips=6, tie_break_deal=False)
    seen = 0
    for seed in range(60):
        session = Session(profile, table_size=5, seed=seed)
        events = _play_randomly(session, random.Random(seed))
        out: set[int] = set()
        for event in events:
            if isinstance(event, SeatEliminated):
                seen += 1
                out.add(event.seat)
                assert session.balances[event.seat] <= -6
            elif isinstance(event, DealStarted):
                assert not out & set(event.seats), "an eliminated seat was dealt in"
        assert out.isdisjoint(session.in_play)
        assert out.isdisjoint(session.winners)
        assert sum(session.balances) == 0
        if len(session.in_play) < 3:
            assert len(session.deals) <= 8
    assert seen > 0


def test_rebuy_keeps_a_broke_seat_in_play() -> None:
    """With rebuys allowed, a seat at zero buys in again instead of leaving."""
    profile = replace(FULL, name="rebuys", starting_chips=6, rebuy=True, tie_break_deal=False)
    rebought = 0
    for seed in range(30):
        session = Session(profile, table_size=4, seed=seed)
        events = _play_randomly(session, random.Random(seed))
        rebought += sum(isinstance(e, SeatRebought) for e in events)
        assert not any(isinstance(e, SeatEliminated) for e in events)
        assert session.in_play == [0, 1, 2, 3]
        assert len(session.deals) == 8
    assert rebought > 0


def test_tied_leaders_play_one_extra_deal_among_themselves() -> None:
    """Seed 001: seats tied for the lead after the last deal play one more deal, only they."""
    session = Session(FULL, table_size=4, seed=8)
    events: list[object] = []
    for _ in range(8):
        deal = session.deal
        while not deal.over:
            events.extend(session.apply(Bid("pass")))
    assert len(session.deals) == 9
    assert isinstance(events[-1], DealStarted)
    assert session.deal.seats == (0, 1, 2, 3)
    assert session.deals_in_session == 9
    # in the tie-break deal the eldest hand bids Three and wins all five tricks or not:
    # either way the session ends after it, with winners among the tied seats
    final = _play_randomly(session, random.Random(3))
    assert isinstance(final[-1], SessionOver)
    assert len(session.deals) == 9


def test_winners_share_ties_without_a_tie_break_profile() -> None:
    """Heather has no tie-break deal: every seat with the top balance wins."""
    session = Session(PROFILES["heather"], table_size=3, seed=4)
    while not session.over:
        session.apply(Bid("pass"))
    assert session.winners == (0, 1, 2)


def test_verify_reports_a_tampered_record() -> None:
    """Changing one card of a recorded play, or the claimed balances, is caught by verify."""
    session = Session(PROFILES["heather"], table_size=4, seed=21)
    _play_randomly(session, random.Random(21))
    data = record_of(session).to_json()
    assert verify(SessionRecord.from_json(data)) == []

    lying = dict(
        data,
        balances=[b + 1 if i == 0 else b - 1 if i == 1 else b for i, b in enumerate(data["balances"])],
    )
    assert any("balances" in p for p in verify(SessionRecord.from_json(lying)))

    played = next(d for d in data["deals"] if len(d["actions"]) > 10)
    index = next(i for i, a in enumerate(played["actions"]) if len(a) <= 3 and a[-1] in "CDHS")
    hand_card = played["actions"][index]
    other = next(c for c in ("2C", "3D", "4H", "5S") if c != hand_card)
    played["actions"][index] = other
    problems = verify(SessionRecord.from_json(data))
    assert problems
    assert "action" in problems[0]


def test_a_record_that_is_not_a_record_gets_a_clear_error() -> None:
    """Reading garbage as a record raises RecordError naming the problem."""
    with pytest.raises(RecordError, match="not a nap-session-record"):
        SessionRecord.from_json({"format": "something else"})
    session = Session(PROFILES["heather"], table_size=3, seed=1)
    data = record_of(session).to_json()
    data["deals"][0]["deck"] = "QH QH"
    with pytest.raises(RecordError, match="malformed record"):
        SessionRecord.from_json(data)


def test_card_text_round_trips_and_is_interned() -> None:
    """Cards read back from their text and repr, and each card exists once."""
    card = Card("10S")
    assert str(card) == "10S"
    assert eval(repr(card)) is card  # noqa: S307 - repr must read back
    assert Card("q♥") is Card("QH")
    with pytest.raises(ValueError, match="not a card"):
        Card("1X")


def test_a_views_fields_are_named_as_the_seat_view_and_in_its_order() -> None:
    """ViewFields (what the referee encodes) and SeatView (what a bot reads) are one list of fields."""
    from dataclasses import fields  # noqa: PLC0415

    from referee.rules import SeatView, ViewFields  # noqa: PLC0415

    assert ViewFields._fields == tuple(field.name for field in fields(SeatView))
    session = Session(PROFILES["heather"], table_size=4, seed=2)
    view = session.view(session.to_act or 0)
    assert view.fields() == session.view_fields(view.seat)
    assert SeatView(*view.fields()) == view


SHORT = replace(PROFILES["full-ladder"], name="piquet-pack", pack_size=32, max_players=6)


def test_a_short_pack_session_draws_and_deals_from_its_own_pack() -> None:
    """The first-dealer draw and every deck of a 32-card session come from the 32 cards (Ace to 7)."""
    pack = SHORT.pack
    differs = 0
    for seed in range(40):
        session = Session(SHORT, table_size=5, seed=seed)
        assert session.first_dealer == first_dealer(seed, 5, pack=pack)
        differs += session.first_dealer != first_dealer(seed, 5)
        _play_randomly(session, random.Random(seed))
        assert all(sorted(deal.deck) == list(pack) for deal in session.deals)
        assert all(deal.deck == deal_deck(seed, n, pack=pack) for n, deal in enumerate(session.deals))
    assert differs > 0


def test_a_short_pack_record_holds_its_pack_and_replays() -> None:
    """A 32-card session's record has 32-card decks and verifies; a deck of another pack is refused."""
    session = Session(SHORT, table_size=4, seed=12)
    _play_randomly(session, random.Random(12))
    data = record_of(session).to_json()
    assert data["rules"]["pack_size"] == 32
    assert all(len(deal["deck"].split()) == 32 for deal in data["deals"])
    record = SessionRecord.from_json(json.loads(json.dumps(data)))
    assert record.profile == SHORT
    assert verify(record) == []

    whole = json.loads(json.dumps(data))
    whole["deals"][0]["deck"] = cards_text(CARDS)
    with pytest.raises(RecordError, match="deal 0: a deck must hold each of the 32 cards of the pack once"):
        SessionRecord.from_json(whole)
    foreign = json.loads(json.dumps(data))
    foreign["deals"][1]["deck"] = foreign["deals"][1]["deck"].replace("7C", "2C")
    with pytest.raises(RecordError, match="deal 1: a deck must hold each of the 32 cards"):
        SessionRecord.from_json(foreign)


def test_a_record_from_before_pack_size_reads_as_its_built_in_profile() -> None:
    """Records written before pack_size existed have none in their rules: the pack is the 52 cards."""
    session = Session(PROFILES["heather"], table_size=4, seed=3)
    _play_randomly(session, random.Random(3))
    data = record_of(session).to_json()
    del data["rules"]["pack_size"]
    record = SessionRecord.from_json(data)
    assert record.profile is PROFILES["heather"]
    assert verify(record) == []
