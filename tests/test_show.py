"""The text of ``nap log show``: what the rules engine says, and for a seat only what it may see."""

from __future__ import annotations

import random
import re
from dataclasses import replace

import pytest

from referee.rules import (
    PASS,
    PROFILES,
    Card,
    Deal,
    Penalty,
    Phase,
    Session,
    SessionRecord,
    record_of,
    replay,
)
from tests.rules_helpers import contract_session
from tournaments.report.session_text import bot_names, render_session, walk

BOTS = ["greedy", "pimc", "random", "cautious"]
CARD_TEXT = re.compile(r"(?<![0-9])(?:10|[2-9JQKA])[♣♦♥♠]")


def played_session(seed: int = 11) -> tuple[SessionRecord, list[list[dict[str, object]]]]:
    """A whole heather session at four seats under a seeded random policy that passes often.

    Returns the record and decisions shaped like a log's, with made-up latencies.
    """
    rng = random.Random(seed)
    session = Session(PROFILES["heather"], table_size=4, seed=seed)
    decisions: list[list[dict[str, object]]] = []
    while not session.over:
        legal = session.legal_actions()
        bidding = session.deal.phase is Phase.BIDDING
        action = PASS if bidding and rng.random() < 0.7 else rng.choice(legal)
        number = len(session.deals) - 1
        if number == len(decisions):
            decisions.append([])
        decisions[number].append({"action": str(action), "seat": session.to_act, "latency_ms": 1.25})
        session.apply(action)
    return record_of(session), decisions


@pytest.fixture(scope="module")
def played() -> tuple[SessionRecord, list[list[dict[str, object]]]]:
    return played_session()


@pytest.fixture(scope="module")
def deals(played: tuple[SessionRecord, object]) -> list[Deal]:
    return replay(played[0]).deals


def sections(text: str) -> list[str]:
    """The text of each deal, the first first."""
    return re.split(r"\n(?=Deal \d+)", text.split("\nFinal balances:", maxsplit=1)[0])[1:]


def cards_in(text: str) -> set[Card]:
    return {
        Card(match.replace("♣", "C").replace("♦", "D").replace("♥", "H").replace("♠", "S"))
        for match in CARD_TEXT.findall(text)
    }


def hand_of(deal: Deal, seat: int) -> set[Card]:
    """The five cards ``seat`` was dealt (replayed deals end with empty hands)."""
    return (
        {card for trick in deal.tricks for s, card in trick.plays if s == seat}
        | set(deal.hands[seat])
        | {card for s, card in deal.trick if s == seat}
    )


def played_cards(deal: Deal) -> set[Card]:
    return {card for trick in deal.tricks for _, card in trick.plays} | {card for _, card in deal.trick}


def test_deals_are_counted_from_one_as_on_every_page(played: tuple[SessionRecord, object]) -> None:
    """``nap log show`` says ``Deal 1`` for the first deal, as the play, watch and replay pages do."""
    record = played[0]
    numbers = [section.split(":")[0] for section in sections(render_session(record, bots=BOTS))]
    assert numbers[0] == "Deal 1"
    assert numbers[-1].startswith(f"Deal {len(record.deals)}")


def test_the_sample_session_has_passed_and_played_deals(deals: list[Deal]) -> None:
    """The fixture exercises both kinds of deal, so the hiding tests below mean something."""
    assert any(deal.declarer is None for deal in deals)
    assert any(deal.declarer is not None for deal in deals)


def test_table_text_shows_every_card_dealt_to_seat_0(played: tuple[SessionRecord, object]) -> None:
    """In table mode, the first deal's section holds all five cards seat 0 was dealt, as ``Q♥``."""
    record = played[0]
    first = next(walk(record))
    text = sections(render_session(record, bots=BOTS))[0]
    assert len(first.views[0].hand) == 5
    for card in first.views[0].hand:
        assert card.pretty in text
    line = next(line for line in text.splitlines() if line.strip().startswith("seat 0 (greedy)"))
    assert cards_in(line) == set(first.views[0].hand)


def test_table_text_shows_every_hand(played: tuple[SessionRecord, object], deals: list[Deal]) -> None:
    """Every seat's dealt hand appears in its deal's section."""
    for deal, text in zip(deals, sections(render_session(played[0], bots=BOTS)), strict=True):
        for seat in deal.seats:
            assert hand_of(deal, seat) <= cards_in(text)


def test_seat_text_shows_only_its_hand_and_played_cards(
    played: tuple[SessionRecord, object], deals: list[Deal]
) -> None:
    """With ``seat=1`` each deal shows seat 1's hand and, of the others, only the cards played."""
    text = render_session(played[0], bots=BOTS, seat=1)
    assert "Shown: as seat 1 (pimc)" in text
    for deal, section in zip(deals, sections(text), strict=True):
        shown = cards_in(section)
        assert hand_of(deal, 1) <= shown
        assert shown <= hand_of(deal, 1) | played_cards(deal)
        if deal.declarer is None:
            assert shown == hand_of(deal, 1)
            assert section.count("5 cards, hidden") == 3


def test_trick_winners_match_the_engine(played: tuple[SessionRecord, object], deals: list[Deal]) -> None:
    """Each trick line ends with the winner the engine gives, and lists its cards in order."""
    for seat in (None, 2):
        text = render_session(played[0], bots=BOTS, seat=seat)
        for deal, section in zip(deals, sections(text), strict=True):
            lines = re.findall(r"^\s+(\d)\. (.*) -> seat (\d)$", section, flags=re.MULTILINE)
            assert [int(winner) for _, _, winner in lines] == [t.winner for t in deal.tricks]
            for (_, plays, _), trick in zip(lines, deal.tricks, strict=True):
                assert plays == ", ".join(f"seat {s} {card.pretty}" for s, card in trick.plays)


def test_payments_and_balances_match_the_engine(
    played: tuple[SessionRecord, object], deals: list[Deal]
) -> None:
    """Each deal's payments line is the engine's settlement; balances run up to the final ones."""
    record = played[0]
    text = render_session(record, bots=BOTS)
    running = [0] * 4
    for deal, section in zip(deals, sections(text), strict=True):
        assert deal.payments is not None
        running = [b + p for b, p in zip(running, deal.payments, strict=True)]
        payments = re.search(r"Payments: (.*)", section)
        balances = re.search(r"Balances: (.*)", section)
        assert payments is not None
        assert balances is not None
        assert [int(x) for x in re.findall(r"seat \d ([-+]?\d+)", payments.group(1))] == list(deal.payments)
        assert [int(x) for x in re.findall(r"seat \d ([-+]?\d+)", balances.group(1))] == running
    assert tuple(running) == record.balances
    winners = ", ".join(f"seat {s} ({BOTS[s]})" for s in record.winners)
    assert f"Winners: {winners}\n" in text


Played = tuple[SessionRecord, list[list[dict[str, object]]]]


def test_decision_latencies_are_shown_per_action(played: Played) -> None:
    """Given a log's decisions, every bid and card carries its latency."""
    record, decisions = played
    text = render_session(record, bots=BOTS, decisions=decisions)
    actions = sum(len(deal.actions) for deal in record.deals)
    assert text.count("(1.2 ms)") == actions
    assert "ms" not in render_session(record, bots=BOTS)


def test_a_penalty_stops_the_deal_and_hides_the_unplayed_cards() -> None:
    """A revoke penalty mid-trick shows the unfinished trick and who faulted; hands stay hidden."""
    session = Session(PROFILES["full-ladder"], table_size=3, seed=5)
    while session.deal.phase is Phase.BIDDING:
        legal = session.legal_actions()
        session.apply(legal[1] if session.to_act == session.deal.order[0] else PASS)
    session.apply(session.legal_actions()[0])
    session.apply(Penalty(session.to_act or 0))
    record = record_of(session)
    deal = replay(record).deals[0]
    seat = next(s for s in deal.seats if s != deal.declarer)
    decisions = [[{"latency_ms": 3, "fault": "late"}] * len(deal.actions)]
    text = render_session(record, bots=BOTS[:3], seat=seat, decisions=decisions)
    first = sections(text)[0]
    assert "(unfinished)" in first
    assert "faulted (3.0 ms, fault: late)" in first
    assert len(played_cards(deal)) == 1
    assert cards_in(first) == hand_of(deal, seat) | played_cards(deal)


def test_bad_arguments_are_refused(played: tuple[SessionRecord, object]) -> None:
    with pytest.raises(ValueError, match="no seat 4"):
        render_session(played[0], bots=BOTS, seat=4)
    with pytest.raises(ValueError, match="3 bot names for a table of 4"):
        render_session(played[0], bots=BOTS[:3])


def test_bot_names_read_a_logs_bots_list() -> None:
    bots = [{"seat": 1, "bot": "pimc"}, {"seat": 0, "bot": "greedy"}]
    assert bot_names(bots, 3) == ["greedy", "pimc", "seat 2"]


@pytest.fixture(scope="module")
def seven() -> SessionRecord:
    """A seven-card session at four seats: Six, Seven and Nap declared, and a passed deal."""
    session = contract_session(
        PROFILES["seven-card"], table_size=4, seed=5, contracts=("six", "seven", "nap", "pass")
    )
    return record_of(session)


class TestSevenCardsAndShortPacks:
    """Seven-card Nap (Six and Seven, seven tricks) and a short pack are shown like any session."""

    def test_every_hand_has_seven_cards_and_every_deal_seven_tricks(self, seven: SessionRecord) -> None:
        deals = replay(seven).deals
        text = render_session(seven, bots=BOTS)
        assert "Nap session: seven-card, 4 seats" in text
        for deal, section in zip(deals, sections(text), strict=True):
            hands = [line for line in section.splitlines() if re.match(r"^    seat \d \(", line)]
            assert [len(cards_in(line)) for line in hands] == [7] * 4
            for seat in deal.seats:
                assert hand_of(deal, seat) <= cards_in(section)
            tricks = re.findall(r"^\s+(\d)\. .* -> seat (\d)$", section, flags=re.MULTILINE)
            assert [int(n) for n, _ in tricks] == ([1, 2, 3, 4, 5, 6, 7] if deal.declarer is not None else [])

    def test_six_and_seven_are_named_and_settled(self, seven: SessionRecord) -> None:
        deals = replay(seven).deals
        sections_ = sections(render_session(seven, bots=BOTS))
        for deal, section in zip(deals, sections_, strict=True):
            if deal.contract is None:
                assert "All passed" in section
                continue
            label, declarer = deal.contract.label, deal.declarer
            assert declarer is not None
            assert f"declares {label}, trump" in section
            taken = deal.tricks_won[declarer]
            outcome = "made" if deal.contract.made(taken) else "failed"
            assert f"Result: {label} {outcome}, declarer took {taken} trick" in section
        assert {"Six", "Seven", "Nap"} <= {deal.contract.label for deal in deals if deal.contract is not None}

    def test_a_seat_sees_seven_cards_of_its_own_and_card_backs_counted(self, seven: SessionRecord) -> None:
        deals = replay(seven).deals
        text = render_session(seven, bots=BOTS, seat=2)
        for deal, section in zip(deals, sections(text), strict=True):
            shown = cards_in(section)
            assert hand_of(deal, 2) <= shown
            assert shown <= hand_of(deal, 2) | played_cards(deal)
            assert section.count("7 cards, hidden") == 3

    def test_a_short_pack_and_four_deals(self) -> None:
        """House rules with a 32-card pack and four deals: only the pack's cards, four sections."""
        pub = replace(
            PROFILES["full-ladder"],
            name="pub",
            source="tests",
            pack_size=32,
            max_players=6,
            deals_per_session=4,
        )
        record = record_of(contract_session(pub, table_size=5, seed=2, contracts=("nap", "three")))
        text = render_session(record, bots=[*BOTS, "peel"])
        assert len(sections(text)) == len(record.deals) >= 4
        assert "(tie-break)" not in "\n".join(sections(text)[:4])
        assert cards_in(text) <= set(pub.pack)
        assert len(cards_in(text)) > 20
