"""Golden tests: the seed documents' own worked examples and rules, played card by card."""

from __future__ import annotations

import pytest

from referee.rules import (
    CARDS,
    PROFILES,
    Bid,
    Card,
    Deal,
    DealSettled,
    IllegalActionError,
    Session,
    Suit,
    TrumpChosen,
)
from referee.rules.cards import cards_text
from tests.rules_helpers import deal_of, play

HEATHER = PROFILES["heather"]
FULL = PROFILES["full-ladder"]
TWO_TO_FIVE = PROFILES["two-to-five"]

# Four seats, dealer 3, so seat 0 (eldest hand) speaks first and leads if it declares.
FOUR_SEATS_SWEEP = {
    0: "AH KH QH JH 10H",
    1: "AC KC QC JC 10C",
    2: "AD KD QD JD 10D",
    3: "AS KS QS JS 10S",
}
FOUR_SEATS_THREE_TRICKS = {
    0: "AH KH QH 2C 2D",
    1: "AC KC QC JC 10C",
    2: "AD KD QD JD 10D",
    3: "AS KS QS JS 10S",
}


def test_seed_000_four_made_with_five_tricks_pays_four_from_each() -> None:
    """Seed 000: four play, Four takes all five: declarer +12, each other -4; overtricks earn nothing."""
    deal = deal_of(HEATHER, FOUR_SEATS_SWEEP, dealer=3)
    events = play(
        deal,
        "four pass pass pass AH AC AD AS  KH KC KD KS  QH QC QD QS  JH JC JD JS  10H 10C 10D 10S",
    )
    assert deal.tricks_won == (5, 0, 0, 0)
    assert deal.payments == (12, -4, -4, -4)
    assert isinstance(events[-1], DealSettled)
    assert events[-1].made is True
    assert sum(deal.payments) == 0


def test_seed_000_four_with_only_three_tricks_pays_four_to_each() -> None:
    """Seed 000: the same Four made with only three tricks fails: declarer -12, defenders +4."""
    deal = deal_of(HEATHER, FOUR_SEATS_THREE_TRICKS, dealer=3)
    play(
        deal,
        "four pass pass pass AH 10C 10D 10S  KH JC JD JS  QH QC QD QS  2C AC AD AS  KC KD KS 2D",
    )
    assert deal.tricks_won[0] == 3
    assert deal.payments == (-12, 4, 4, 4)


def test_seed_002_three_made_collects_nine_from_three_opponents() -> None:
    """Seed 002: four play, you bid Three and take three: each of the others pays you 3 (+9)."""
    deal = deal_of(TWO_TO_FIVE, FOUR_SEATS_THREE_TRICKS, dealer=3)
    play(
        deal,
        "three pass pass pass AH 10C 10D 10S  KH JC JD JS  QH QC QD QS  2C AC AD AS  KC KD KS 2D",
    )
    assert deal.tricks_won[0] == 3
    assert deal.payments == (9, -3, -3, -3)


def test_seed_002_three_with_two_tricks_pays_three_to_each() -> None:
    """Seed 002: had you taken only two, you would have paid 3 to each (-9)."""
    hands = dict(FOUR_SEATS_THREE_TRICKS)
    hands[0] = "AH KH 2S 2C 2D"
    hands[3] = "AS KS QS JS QH"
    deal = deal_of(TWO_TO_FIVE, hands, dealer=3)
    play(
        deal,
        "three pass pass pass AH 10C 10D QH  KH JC JD JS  2S QC QD AS  KS 2C KC KD  QS 2D AC AD",
    )
    assert deal.tricks_won[0] == 2
    assert deal.payments == (-9, 3, 3, 3)


# Three seats, dealer 2: seat 0 is eldest. Leading hearts makes five, leading spades three.
TRUMP_CHOICE = {0: "AS KS AH KH QH", 1: "QS JS 10S 2H 2C", 2: "3C 4C 5C 6C 7C"}


def test_leading_hearts_makes_hearts_trump_and_five_tricks() -> None:
    """The declarer's first card sets trump: hearts first, and no one can ruff: five tricks."""
    deal = deal_of(HEATHER, TRUMP_CHOICE, dealer=2)
    events = play(deal, "four pass pass AH 2H 3C")
    assert TrumpChosen(Suit.HEARTS) in events
    play(deal, "KH 2C 4C  QH 10S 5C  AS JS 6C  KS QS 7C")
    assert deal.tricks_won[0] == 5
    assert deal.payments == (8, -4, -4)


def test_leading_spades_with_the_same_hand_makes_only_three() -> None:
    """With spades led first, spades are trump: the defender ruffs the second heart: three tricks."""
    deal = deal_of(HEATHER, TRUMP_CHOICE, dealer=2)
    play(deal, "four pass pass AS 10S 3C  KS JS 4C  AH 2H 5C")
    assert deal.trump is Suit.SPADES
    play(deal, "KH QS 6C")
    assert deal.tricks[-1].winner == 1
    play(deal, "2C 7C QH")
    assert deal.tricks[-1].winner == 2
    assert deal.tricks_won[0] == 3
    assert deal.payments == (-8, 4, 4)


def test_off_suit_ace_never_wins_a_trick() -> None:
    """Highest trump wins, else the highest card of the suit led: an off-suit Ace wins nothing."""
    deal = deal_of(HEATHER, TRUMP_CHOICE, dealer=2)
    play(deal, "four pass pass AS 10S 3C  KS JS 4C  AH 2H 5C  KH QS 6C")
    # seat 1 leads the two of clubs; the declarer's Queen of hearts is off-suit and not trump
    play(deal, "2C 7C QH")
    assert deal.tricks[-1].winner == 2


def test_no_duty_to_trump_when_void() -> None:
    """A seat void in the suit led may play any card: trumps and discards are all legal."""
    deal = deal_of(HEATHER, TRUMP_CHOICE, dealer=2)
    play(deal, "four pass pass AS 10S 3C  KS JS 4C  AH 2H 5C  KH")
    assert deal.to_act == 1
    assert deal.legal_actions() == (Card("2C"), Card("QS"))


def test_must_follow_suit_is_enforced_with_its_reason() -> None:
    """A seat holding the suit led must follow; the error says which suit."""
    deal = deal_of(HEATHER, TRUMP_CHOICE, dealer=2)
    play(deal, "four pass pass AH")
    with pytest.raises(IllegalActionError, match="must follow suit: hearts"):
        deal.apply(Card("2C"))


def test_not_your_turn_names_the_seat_to_act() -> None:
    """Checking another seat's action names the seat whose turn it is."""
    deal = deal_of(HEATHER, TRUMP_CHOICE, dealer=2)
    with pytest.raises(IllegalActionError, match="not your turn: seat 0 to act"):
        deal.check(Bid("pass"), seat=2)


def test_wellington_refused_without_a_prior_nap() -> None:
    """Wellington only over an existing Nap: refused first, refused over Four, allowed over Nap."""
    deal = deal_of(HEATHER, FOUR_SEATS_SWEEP, dealer=3)
    with pytest.raises(IllegalActionError, match="Wellington only over Nap"):
        deal.apply(Bid("wellington"))
    play(deal, "four")
    with pytest.raises(IllegalActionError, match="Wellington only over Nap"):
        deal.apply(Bid("wellington"))
    play(deal, "nap wellington")
    assert deal.legal_actions() == (Bid("pass"),)
    play(deal, "pass")
    assert deal.declarer == 2
    assert deal.contract is not None
    assert deal.contract.name == "wellington"


def test_bids_must_strictly_raise() -> None:
    """Each bid must beat the current highest one."""
    deal = deal_of(HEATHER, FOUR_SEATS_SWEEP, dealer=3)
    play(deal, "four")
    with pytest.raises(IllegalActionError, match="a bid must beat Four"):
        deal.apply(Bid("three"))
    assert deal.legal_actions() == (Bid("pass"), Bid("nap"))


def test_misere_has_no_trump_and_fails_on_the_first_trick_won() -> None:
    """Misère: the first card sets no trump; the declarer who wins a single trick has failed."""
    hands = {0: "2H 3C 4D 5S 6H", 1: "AH AC AD AS KH", 2: "KC KD KS QH QC"}
    deal = deal_of(FULL, hands, dealer=2)
    events = play(deal, "misere pass pass 2H AH QH")
    assert deal.trump is None
    assert not any(isinstance(e, TrumpChosen) for e in events)
    assert deal.tricks[0].winner == 1
    # seat 1 leads the Ace of spades; the declarer must follow with 5S and loses it
    play(deal, "AS KS 5S  AC KC 3C  AD KD 4D  KH QC 6H")
    assert deal.tricks_won[0] == 0
    assert deal.payments == (6, -3, -3)

    failing = deal_of(FULL, {0: "AH 3C 4D 5S 6H", 1: "2H AC AD AS KH", 2: "KC KD KS QH QC"}, dealer=2)
    play(failing, "misere pass pass AH 2H QH")
    assert failing.tricks_won[0] == 1
    assert failing.contract is not None
    assert not failing.contract.made(failing.tricks_won[0])


def test_misere_off_suit_cards_never_win_without_trump() -> None:
    """With no trump, a trick goes to the highest card of the suit led even against Aces elsewhere."""
    hands = {0: "2H 3C 4D 5S 6H", 1: "AH AC AD AS KH", 2: "KC KD KS QH QC"}
    deal = deal_of(FULL, hands, dealer=2)
    play(deal, "misere pass pass 2H AH QH  AS KS 5S  AC KC 3C  AD KD 4D  KH QC 6H")
    assert deal.tricks[-1].winner == 1


def test_all_pass_scores_zero_and_counts_toward_the_eight_deals() -> None:
    """All pass: zero for everyone, the next dealer deals, and the deal is one of the eight."""
    session = Session(HEATHER, table_size=4, seed=11)
    dealers = []
    while not session.over:
        deal = session.deal
        dealers.append(deal.dealer)
        while not deal.over:
            session.apply(Bid("pass"))
    assert len(session.deals) == 8
    assert session.balances == (0, 0, 0, 0)
    assert session.winners == (0, 1, 2, 3)
    assert dealers == [(dealers[0] + i) % 4 for i in range(8)]


def test_nap_stakes_are_asymmetric_in_full_ladder() -> None:
    """Seed 001: Nap wins 10 per opponent but loses only 5."""
    deal = deal_of(FULL, FOUR_SEATS_SWEEP, dealer=3)
    play(
        deal,
        "nap pass pass pass AH AC AD AS  KH KC KD KS  QH QC QD QS  JH JC JD JS  10H 10C 10D 10S",
    )
    assert deal.payments == (30, -10, -10, -10)
    failing = deal_of(FULL, FOUR_SEATS_THREE_TRICKS, dealer=3)
    play(
        failing,
        "nap pass pass pass AH 10C 10D 10S  KH JC JD JS  QH QC QD QS  2C AC AD AS  KC KD KS 2D",
    )
    assert failing.payments == (-15, 5, 5, 5)


# Seven-card Nap (seed 001, common variations): four seats, dealer 3, seat 0 eldest.
SEVEN = PROFILES["seven-card"]
SEVEN_SWEEP = {
    0: "AH KH QH JH 10H 9H 8H",
    1: "AC KC QC JC 10C 9C 8C",
    2: "AD KD QD JD 10D 9D 8D",
    3: "AS KS QS JS 10S 9S 8S",
}
SEVEN_SIX_TRICKS = {**SEVEN_SWEEP, 0: "AH KH QH JH 10H 9H 2C"}
SIX_TRICKS_PLAY = (
    "AH AC AD AS  KH KC KD KS  QH QC QD QS  JH JC JD JS  10H 10C 10D 10S  9H 9C 9D 9S  2C 8C 8D 8S"
)


def test_seed_001_seven_made_pays_24_from_each_opponent() -> None:
    """Seed 001: in seven-card Nap, Seven (all seven tricks) pays 24 per opponent."""
    deal = deal_of(SEVEN, SEVEN_SWEEP, dealer=3)
    events = play(
        deal,
        "seven pass pass pass AH AC AD AS  KH KC KD KS  QH QC QD QS  JH JC JD JS  "
        "10H 10C 10D 10S  9H 9C 9D 9S  8H 8C 8D 8S",
    )
    assert len(deal.tricks) == 7
    assert deal.tricks_won == (7, 0, 0, 0)
    assert deal.payments == (72, -24, -24, -24)
    assert isinstance(events[-1], DealSettled)
    assert events[-1].made is True


@pytest.mark.parametrize(
    ("bid", "payments"),
    [("nap", (30, -10, -10, -10)), ("six", (54, -18, -18, -18)), ("seven", (-36, 12, 12, 12))],
)
def test_seven_card_contracts_count_tricks_out_of_seven(bid: str, payments: tuple[int, ...]) -> None:
    """Six tricks of seven make Nap (five) and Six, and fail Seven, which then pays 12 to each."""
    deal = deal_of(SEVEN, SEVEN_SIX_TRICKS, dealer=3)
    play(deal, f"{bid} pass pass pass {SIX_TRICKS_PLAY}")
    assert deal.tricks_won == (6, 1, 0, 0)
    assert deal.payments == payments


def test_seven_card_has_no_wellington_nor_blucher() -> None:
    """Seed 001: Wellington and Blücher are eliminated in seven-card Nap; over Nap come Six and Seven."""
    deal = deal_of(SEVEN, SEVEN_SWEEP, dealer=3)
    for name in ("wellington", "blucher"):
        assert Bid(name) not in deal.legal_actions()
        with pytest.raises(IllegalActionError, match=f"{name} is not a contract of the seven-card rules"):
            deal.check(Bid(name))
    play(deal, "nap")
    assert deal.legal_actions() == (Bid("pass"), Bid("six"), Bid("seven"))
    with pytest.raises(IllegalActionError, match="wellington is not a contract of the seven-card rules"):
        deal.apply(Bid("wellington"))


def test_seven_cards_are_dealt_four_then_three_from_the_dealers_left() -> None:
    """A deck in pack order, dealer 2 of 4: seats 3, 0, 1, 2 get four cards each, then three each."""
    deal = Deal(SEVEN, deck=CARDS, dealer=2, table_size=4)
    assert {seat: cards_text(hand) for seat, hand in enumerate(deal.hands)} == {
        3: "2C 3C 4C 5C 5D 6D 7D",
        0: "6C 7C 8C 9C 8D 9D 10D",
        1: "10C JC QC KC JD QD KD",
        2: "AC 2D 3D 4D AD 2H 3H",
    }
    assert deal.to_act == 3


def test_seven_card_misere_is_losing_all_seven_tricks() -> None:
    """Misère in seven-card Nap: no trump, all seven tricks are played, the declarer takes none: 3 each."""
    hands = {0: "2H 3H 4H 5H 2C 3C 4C", 1: "AH KH QH JH AC KC QC", 2: "10H 9H 8H 7H JC 10C 9C"}
    deal = deal_of(SEVEN, hands, dealer=2)
    play(deal, "misere pass pass 2H AH 10H  KH 9H 3H  QH 8H 4H  JH 7H 5H  AC JC 2C  KC 10C 3C")
    assert deal.payments is None
    play(deal, "QC 9C 4C")
    assert (len(deal.tricks), deal.tricks_won, deal.trump) == (7, (0, 7, 0), None)
    assert deal.payments == (6, -3, -3)
