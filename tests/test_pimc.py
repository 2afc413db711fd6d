"""The PIMC bot: its exact solver against brute force, its sampling, its decisions."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import replace

import pytest

from clients.bots.peel import PeelBot
from clients.bots.pimc import Batch, Budget, PimcBot, Position, SearchAbortedError, Solver
from clients.bots.pimc.bot import _Estimate, _hand_to_declare
from clients.bots.pimc.budget import Clock, Deadline
from clients.bots.pimc.sampling import Knowledge, bid_weight
from clients.bots.random_bot import RandomBot
from clients.sdk import Bot
from clients.sdk.local import play_local
from referee.rules import (
    CARDS,
    PASS,
    PROFILES,
    Action,
    Bid,
    Card,
    Contract,
    Deal,
    DealSettled,
    Phase,
    Profile,
    SeatView,
    Session,
    Suit,
    parse_action,
    parse_cards,
    seat_view,
)

FULL_LADDER = PROFILES["full-ladder"]
SEVEN_CARD = PROFILES["seven-card"]
PACK_32 = replace(FULL_LADDER, name="pack-32", source="tests: house rules", pack_size=32, max_players=6)
"""House rules: full-ladder with a 32-card pack (Ace down to 7)."""
SUITS = list(Suit)
SMALL = Profile(
    name="small",
    source="tests: three-card hands, so that brute force reaches the first lead",
    summary="Two / Misère / Three with three cards each",
    contracts=(
        Contract("two", "Two", 2, 2, 2),
        Contract("misere", "Misère", 0, 3, 3, misere=True),
        Contract("three", "Three", 3, 3, 3),
    ),
    hand_size=3,
    deal_pattern=(2, 1),
)


def brute_tricks(deal: Deal) -> int:
    """The declarer's tricks with best play: plain minimax over the engine, no pruning.

    The declarer maximizes its tricks (minimizes them in a misère), the defenders the
    opposite.
    """
    if deal.over:
        return deal.tricks_won[deal.declarer]  # type: ignore[index]
    maximizer = (deal.to_act == deal.declarer) != deal.contract.misere  # type: ignore[union-attr]
    values = []
    for action in deal.legal_actions():
        branch = deal.copy()
        branch.apply(action)
        values.append(brute_tricks(branch))
    return max(values) if maximizer else min(values)


def random_position(rng: random.Random, profile: Profile, seats: int, contract: str, cards_left: int) -> Deal:
    """A deal at ``seats`` seats, ``contract`` bid by eldest hand, played at random until
    ``cards_left`` cards remain in the hands."""
    deck = list(profile.pack)
    rng.shuffle(deck)
    deal = Deal(profile, deck=deck, dealer=rng.randrange(seats), table_size=seats)
    deal.apply(Bid(contract))
    while deal.phase is Phase.BIDDING:
        deal.apply(PASS)
    while sum(len(hand) for hand in deal.hands) > cards_left:
        deal.apply(rng.choice(deal.legal_actions()))
    return deal


# (seats, cards left in the hands): the last two or three tricks, at and between trick boundaries
CASES = [
    (3, 9),
    (3, 8),
    (3, 7),
    (4, 12),
    (4, 10),
    (4, 9),
    (5, 10),
    (5, 9),
    (5, 13),
    (7, 14),
    (7, 12),
    (7, 11),
]


@pytest.mark.slow
class TestSolverAgreesWithBruteForce:
    """The solver's verdict (made or not) and the declarer's tricks match plain minimax."""

    @pytest.mark.parametrize(("seats", "cards_left"), CASES)
    def test_end_positions(self, seats: int, cards_left: int) -> None:
        rng = random.Random(f"{seats}/{cards_left}")
        for _ in range(30):
            contract = rng.choice(["three", "four", "nap", "misere"])
            deal = random_position(rng, FULL_LADDER, seats, contract, cards_left)
            value = brute_tricks(deal)
            solver = Solver(Position.from_deal(deal))
            assert solver.can_make() == deal.contract.made(value), deal.actions  # type: ignore[union-attr]
            assert solver.tricks() == value, deal.actions
            for card in deal.legal_actions():
                branch = deal.copy()
                branch.apply(card)
                after = brute_tricks(branch)
                assert solver.tricks_after(card.index) == after, (deal.actions, card)  # type: ignore[union-attr]
                assert solver.makes_after(card.index) == deal.contract.made(after)  # type: ignore[union-attr]

    @pytest.mark.parametrize("seats", [3, 4])
    def test_from_the_first_lead_which_chooses_trump(self, seats: int) -> None:
        """Three-card hands, so the whole deal is searched, the trump-choosing lead included."""
        rng = random.Random(seats)
        for _ in range(25):
            contract = rng.choice(["two", "three", "misere"])
            deal = random_position(rng, SMALL, seats, contract, seats * 3 - rng.choice([0, 0, 1]))
            value = brute_tricks(deal)
            solver = Solver(Position.from_deal(deal))
            assert solver.tricks() == value, deal.actions
            assert solver.can_make() == deal.contract.made(value)  # type: ignore[union-attr]

    def test_a_card_played_to_the_trick_separates_ranks(self) -> None:
        """K and J of hearts are not equivalent while the Q lies on the current trick."""
        deal = Deal.from_hands(
            SMALL,
            {0: parse_cards("QH 2C 3C"), 1: parse_cards("KH JH 5C"), 2: parse_cards("2H 6C 7C")},
            dealer=2,
            table_size=3,
        )
        for bid in ("two", "pass", "pass"):
            deal.apply(Bid(bid))
        deal.apply(Card("QH"))
        solver = Solver(Position.from_deal(deal))
        king, jack = brute_after(deal, Card("KH")), brute_after(deal, Card("JH"))
        assert king != jack
        assert solver.tricks_after(Card("KH").index) == king
        assert solver.tricks_after(Card("JH").index) == jack

    def test_node_limit_aborts_and_leaves_the_solver_usable(self) -> None:
        rng = random.Random(11)
        deal = random_position(rng, FULL_LADDER, 7, "three", 35)
        solver = Solver(Position.from_deal(deal), node_limit=3)
        with pytest.raises(SearchAbortedError):
            solver.can_make()
        assert solver.position.hands == Position.from_deal(deal).hands
        assert Solver(Position.from_deal(deal)).legal() == solver.legal()

    def test_a_deadline_aborts_within_a_few_hundred_nodes_and_leaves_the_solver_usable(self) -> None:
        """Seven cards at seven seats, a misère from the first lead: millions of nodes unbounded.

        The node limit alone does not keep time there (a node costs several times what it
        does with five cards), so the solver also looks at its deadline.
        """
        deal = random_position(random.Random(3), SEVEN_CARD, 7, "misere", 49)
        now = [0.0]
        solver = Solver(Position.from_deal(deal), deadline=Deadline(1.0, lambda: now[0]))
        now[0] = 1.0
        with pytest.raises(SearchAbortedError):
            solver.can_make()
        assert solver.nodes <= 257
        assert solver.position.hands == Position.from_deal(deal).hands
        with pytest.raises(SearchAbortedError):  # still past it
            solver.can_make()
        in_time = Solver(Position.from_deal(deal), node_limit=3_000, deadline=Deadline(1.0, lambda: 0.0))
        with pytest.raises(SearchAbortedError):  # the node limit, much later
            in_time.can_make()
        assert in_time.nodes == 3_001

    def test_the_clock_gives_each_solve_the_cap_or_a_floor(self) -> None:
        now = [10.05]
        clock = Clock(0.2, lambda: now[0], 10.0)
        assert clock.deadline() == Deadline(10.2, clock.now)
        now[0] = 10.5
        assert clock.deadline(floor=0.03) == Deadline(10.53, clock.now)
        assert Clock(None, lambda: now[0], 10.0).deadline() is None


def brute_after(deal: Deal, card: Card) -> int:
    branch = deal.copy()
    branch.apply(card)
    return brute_tricks(branch)


# ---------------------------------------------------------------------------- sampling


def views_in_play(seed: int, seats: int, count: int, profile: Profile = FULL_LADDER) -> list[SeatView]:
    """Views of seats to act during random play, with their deals."""
    rng = random.Random(seed)
    out: list[SeatView] = []
    while len(out) < count:
        contract = rng.choice(["three", "misere"])
        deal = random_position(rng, profile, seats, contract, seats * profile.hand_size)
        while not deal.over:
            out.append(seat_view(deal, deal.to_act))  # type: ignore[arg-type]
            deal.apply(rng.choice(deal.legal_actions()))
    return out


class TestSampling:
    """Samples agree with everything the seat knows, and reach into the undealt stock."""

    @pytest.mark.slow
    @pytest.mark.parametrize(
        ("profile", "seats"),
        [
            ("full-ladder", 3),
            ("full-ladder", 5),
            ("full-ladder", 7),
            ("seven-card", 4),
            ("seven-card", 7),
            ("pack-32", 6),
        ],
    )
    def test_samples_are_consistent(self, profile: str, seats: int) -> None:
        """Five or seven cards a hand, from the table's pack only (52 cards, or 32)."""
        rules = PROFILES.get(profile, PACK_32)
        rng = random.Random(seats)
        for view in views_in_play(seats, seats, 120, rules):
            knowledge = Knowledge.of(view, pack=rules.pack)
            assert set(knowledge.unseen) == set(rules.pack) - view.visible_cards
            for _ in range(5):
                hands = knowledge.sample(rng)
                assert set(hands) == set(view.seats_in_play) - {view.seat}
                dealt = [card for hand in hands.values() for card in hand]
                assert len(dealt) == len(set(dealt))
                assert not set(dealt) & view.visible_cards
                assert set(dealt) <= set(rules.pack)
                for seat, hand in hands.items():
                    played = sum(1 for t in view.tricks for who, _ in t.plays if who == seat)
                    played += sum(1 for who, _ in view.trick if who == seat)
                    assert len(hand) == rules.hand_size - played
                    for suit in knowledge.voids.get(seat, ()):
                        assert all(card.suit is not suit for card in hand)

    def test_voids_come_from_failures_to_follow(self) -> None:
        hands = {0: "AS KS QS JS 10S", 1: "2H 3H 4H 5H 6H", 2: "2S 7H 8H 9H 10H"}
        deal = Deal.from_hands(
            FULL_LADDER, {seat: parse_cards(text) for seat, text in hands.items()}, dealer=2, table_size=3
        )
        for action in ("three", "pass", "pass", "AS", "2H", "2S"):
            deal.apply(Bid(action) if action in {"three", "pass"} else Card(action))
        knowledge = Knowledge.of(seat_view(deal, 0), pack=FULL_LADDER.pack)
        assert knowledge.voids == {1: frozenset({Card("AS").suit})}
        assert len(knowledge.unseen) == 52 - 5 - 2

    def test_the_stock_is_drawn_from(self) -> None:
        """With five players 27 unseen cards are never dealt; over many samples, every unseen
        card turns up in some hand."""
        view = views_in_play(5, 5, 1)[0]
        knowledge = Knowledge.of(view, pack=FULL_LADDER.pack)
        assert knowledge.stock == 27
        rng = random.Random(0)
        seen: set[Card] = set()
        for _ in range(300):
            seen.update(card for hand in knowledge.sample(rng).values() for card in hand)
        assert seen == set(knowledge.unseen)

    def test_hard_voids_fall_back_to_a_constrained_deal(self) -> None:
        """Seats 1 and 2 void in three suits: rejection rarely succeeds, the greedy deal still fits."""
        hands = {0: "2C 3C 4C 5C 6C", 1: "2D 3D 4D 5D 6D", 2: "2H 3H 4H 5H 6H"}
        deal = Deal.from_hands(
            FULL_LADDER, {seat: parse_cards(text) for seat, text in hands.items()}, dealer=2, table_size=3
        )
        view = seat_view(deal, 0)
        knowledge = Knowledge(
            seat=0,
            unseen=tuple(c for c in CARDS if c not in view.visible_cards),
            holding=((1, 5), (2, 5)),
            voids={1: frozenset(SUITS[:3]), 2: frozenset(SUITS[:3])},
        )
        for seed in range(5):
            sample = knowledge.sample(random.Random(seed))
            for hand in sample.values():
                assert len(hand) == 5
                assert all(card.suit is SUITS[3] for card in hand)

    def test_bid_weights_are_soft(self) -> None:
        for view in views_in_play(3, 4, 30):
            weight = bid_weight(
                view, Knowledge.of(view, pack=FULL_LADDER.pack).sample(random.Random(2)), pack_size=52
            )
            assert 0 < weight <= 1


def pool_views(profile: Profile, seats: int, sessions: int) -> list[tuple[SeatView, Deal]]:
    """Every seat's view at every step of the play, in seeded random sessions, with the deal itself.

    Random play exchanges, peeps and takes the widow often (each is one legal action among few).
    """
    out: list[tuple[SeatView, Deal]] = []
    for seed in range(sessions):
        rng = random.Random(seed)
        session = Session(profile, table_size=seats, seed=seed)
        while not session.over:
            deal = session.deal
            if deal.phase is Phase.PLAY:
                now = deal.copy()
                out.extend((seat_view(now, seat), now) for seat in now.seats)
            session.apply(rng.choice(session.legal_actions()))
    return out


@pytest.mark.slow
class TestSamplingAfterExchanges:
    """The pool variants: samples agree with what each seat saw of exchanges and the widow."""

    @pytest.mark.parametrize(("profile", "seats"), [("purchase", 3), ("ecarte", 5), ("peep", 4), ("peep", 7)])
    def test_the_real_deal_is_always_one_of_the_samples(self, profile: str, seats: int) -> None:
        """Each other seat's real hand fits: unseen cards, or cards it is known to hold, none of a void suit.

        And every sample keeps out what the seat saw (its own discards, a widow left or in
        its own hand), puts a widow it saw the declarer take in the declarer's hand, and
        deals each seat as many cards as it holds.
        """
        rules = PROFILES[profile]
        rng = random.Random(seats)
        known_widows = 0
        for view, deal in pool_views(rules, seats, 6):
            knowledge = Knowledge.of(view, pack=rules.pack)
            for seat in view.seats_in_play:
                if seat == view.seat:
                    continue
                held = set(deal.hands[seat])
                known = set(knowledge.known.get(seat, ()))
                assert held <= set(knowledge.unseen) | known
                assert not {card.suit for card in held - known} & knowledge.voids.get(seat, frozenset())
            widow_held = view.widow is not None and view.widow in deal.hands[view.declarer or 0]
            if widow_held and view.declarer != view.seat:
                known_widows += 1
            hands = knowledge.sample(rng)
            dealt = [card for hand in hands.values() for card in hand]
            assert len(dealt) == len(set(dealt))
            assert not set(dealt) & (set(view.discarded) | set(view.hand) | view.played)
            for seat, hand in hands.items():
                assert len(hand) == len(deal.hands[seat])
            if widow_held and view.declarer != view.seat:
                assert view.widow in hands[view.declarer]  # type: ignore[index]
            elif view.widow is not None:
                assert view.widow not in dealt
        if rules.widow:
            assert known_widows > 0

    def test_a_widow_peeped_at_and_taken_is_in_the_declarers_hand(self) -> None:
        """Seat 1 peeps at 7C, seat 0 declares and takes it: every sample of seat 1 gives 7C to seat 0."""
        hands = {0: "AH KH QH JH 10H", 1: "2C 3C 4C 5C 6C", 2: "2D 3D 4D 5D 6D"}
        deal = Deal.from_hands(
            PROFILES["peep"],
            {seat: parse_cards(text) for seat, text in hands.items()},
            dealer=2,
            table_size=3,
            widow=Card("7C"),
        )
        for text in ("nap", "peep", "pass", "pass", "widow:10H"):
            deal.apply(parse_action(text))
        knowledge = Knowledge.of(seat_view(deal, 1), pack=CARDS)
        assert knowledge.known == {0: (Card("7C"),)}
        assert dict(knowledge.holding) == {0: 4, 2: 5}
        assert Card("7C") not in knowledge.unseen
        for seed in range(20):
            sample = knowledge.sample(random.Random(seed))
            assert Card("7C") in sample[0]
            assert len(sample[0]) == 5
        unseen = Knowledge.of(seat_view(deal, 2), pack=CARDS)
        assert not unseen.known
        assert Card("7C") in unseen.unseen

    def test_pimc_bids_on_the_hand_with_the_widow_it_saw(self) -> None:
        """Three hearts and the widow JH: the samples are solved with JH in place of the lowest side card."""
        hands = {0: "AH KH QH 2C 3D", 1: "2H 3H 4H 5H 6H", 2: "7S 8S 10S QS KS"}
        deal = Deal.from_hands(
            PROFILES["peep"],
            {seat: parse_cards(text) for seat, text in hands.items()},
            dealer=2,
            table_size=3,
            widow=Card("JH"),
        )
        before = seat_view(deal, 0)
        deal.apply(parse_action("peep"))
        after = seat_view(deal, 0)
        rules = PROFILES["peep"]
        assert _hand_to_declare(before, rules) == before.hand
        assert set(_hand_to_declare(after, rules)) == set(parse_cards("3D JH QH KH AH"))


# ---------------------------------------------------------------------------- the bot


class Checked(Bot):
    """Asserts that the wrapped bot always answers a legal action."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner

    def decide(self, view: SeatView) -> Action:
        self.inner.table, self.inner.seat = self.table, self.seat
        action = self.inner.decide(view)
        assert action in view.legal_actions, (view, action)
        return action


def quick(seed: int, profile: Profile | None = None) -> PimcBot:
    return PimcBot(budget=Budget(samples=6, seconds=None, nodes=3_000), seed=seed, profile=profile)


class TestPimcBot:
    """Seeded in-process sessions: every decision legal, the same seed the same game."""

    @pytest.mark.heavy
    @pytest.mark.slow
    @pytest.mark.parametrize(
        ("profile", "seats"),
        [
            ("heather", 3),
            ("full-ladder", 4),
            ("two-to-five", 5),
            ("heather", 7),
            ("seven-card", 3),
            ("seven-card", 5),
            ("seven-card", 7),
            ("pack-32", 4),
            ("purchase", 3),
            ("ecarte", 4),
            ("peep", 5),
        ],
    )
    def test_decisions_are_legal(self, profile: str, seats: int) -> None:
        """Seven-card Nap, a 32-card pack (the bots are given the house rules) and the pool variants."""
        rules = PROFILES.get(profile, PACK_32)
        for seed in range(2):
            bots: list[Bot] = [
                Checked(quick(seed, rules)),
                Checked(PeelBot(profile=rules)),
                Checked(quick(seed + 7, rules)),
            ]
            bots += [Checked(RandomBot(seed=seed * 10 + i)) for i in range(seats - 3)]
            session = play_local(bots, seed=seed, profile=rules)
            assert session.over
            assert sum(session.balances) == 0

    @pytest.mark.slow
    def test_it_guesses_from_the_tables_pack(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """With a 32-card pack, every guess of the hidden cards, bidding and playing, is of those 32."""
        guessed: list[tuple[Phase, frozenset[Card]]] = []
        knowledge_of = Knowledge.of

        def spy(view: SeatView, *, pack: tuple[Card, ...]) -> Knowledge:
            knowledge = knowledge_of(view, pack=pack)
            guessed.append((view.phase, frozenset(knowledge.unseen)))
            return knowledge

        monkeypatch.setattr(Knowledge, "of", spy)
        bots: list[Bot] = [quick(1, PACK_32), PeelBot(profile=PACK_32), quick(2, PACK_32), RandomBot(seed=3)]
        play_local(bots, seed=3, profile=PACK_32)
        assert {phase for phase, _ in guessed} == {Phase.BIDDING, Phase.PLAY}
        assert all(unseen <= set(PACK_32.pack) for _, unseen in guessed)

    @pytest.mark.slow
    def test_the_default_budget_plays_the_same_on_a_slow_clock(self) -> None:
        """The default budget is counted (samples, nodes), not timed: a seeded bot is reproducible.

        One session on a clock that never moves and on one that moves 1 ms at every look
        (a slow, loaded machine): the same actions, and no decision reached the safety cap.
        """

        def session(step: float) -> tuple[list[list[Action]], int]:
            now = [0.0]

            def clock() -> float:
                now[0] += step
                return now[0]

            pimc = PimcBot(seed=2, clock=clock, batch=Batch())
            played = play_local([pimc, PeelBot(), RandomBot(seed=1)], seed=6, profile=HEATHER)
            return [list(deal.actions) for deal in played.deals], pimc.capped

        assert Budget().seconds is not None  # a cap there is; it is not what decides
        still, moving = session(0.0), session(0.001)
        assert moving == still
        assert still[1] == 0

    def test_the_cap_counts_the_deciding_threads_cpu_not_the_wall_clock(self) -> None:
        """Time spent waiting (for the CPU other processes hold, for the next request) is not thinking."""
        bot = PimcBot()
        start = bot._now()  # noqa: SLF001 - the clock the cap reads
        time.sleep(0.2)
        assert bot._now() - start < 0.05  # noqa: SLF001 - asleep, this thread used no CPU

    @pytest.mark.slow
    def test_a_cpu_hog_beside_it_changes_no_choice(self) -> None:
        """The default bot (its default clock) plays the same deals the same, with another thread busy."""

        def session() -> tuple[list[list[Action]], int]:
            pimc = PimcBot(seed=2, batch=Batch())
            played = play_local([pimc, PeelBot(), RandomBot(seed=1)], seed=6, profile=HEATHER)
            return [list(deal.actions) for deal in played.deals], pimc.capped

        quiet = session()
        stop = threading.Event()

        def hog() -> None:
            while not stop.is_set():
                sum(range(10_000))

        busy = threading.Thread(target=hog, daemon=True)
        busy.start()
        try:
            loaded = session()
        finally:
            stop.set()
            busy.join()
        assert loaded == quiet
        assert quiet[1] == 0

    def test_a_decision_past_the_cap_is_counted(self) -> None:
        now = [0.0]

        def clock() -> float:
            now[0] += 0.1
            return now[0]

        bot = PimcBot(budget=Budget(samples=50, seconds=0.2, batch_seconds=None), clock=clock, batch=Batch())
        bot.table, bot.seat = "t", 0
        bot.decide(opening_view("AS KS QS JS 10S"))
        assert bot.capped == 1

    @pytest.mark.slow
    def test_a_fixed_seed_replays(self) -> None:
        runs = [
            play_local([quick(3), PeelBot(), quick(4), RandomBot(seed=1)], seed=5, profile=FULL_LADDER)
            for _ in range(2)
        ]
        assert [d.actions for d in runs[0].deals] == [d.actions for d in runs[1].deals]

    def test_bids_nap_on_a_cold_hand_and_passes_a_hopeless_one(self) -> None:
        profile = PROFILES["heather"]
        deal = Deal.from_hands(
            profile,
            {
                0: parse_cards("AS KS QS JS 10S"),
                1: parse_cards("2C 3D 4H 7C 8D"),
                2: parse_cards("2D 5C 6H 9C 3H"),
            },
            dealer=2,
            table_size=3,
        )
        bot = quick(0)
        assert bot.bid(seat_view(deal, 0)) == Bid("nap")
        deal.apply(Bid("nap"))
        assert bot.bid(seat_view(deal, 1)) == PASS

    @pytest.mark.parametrize(
        ("hand", "bid"), [("AS KS QS JS 10S 9S 8S", "seven"), ("10S 9S 2S 9H 10D 2C 3C", "pass")]
    )
    def test_bids_seven_on_a_cold_seven_card_hand_and_passes_a_hopeless_one(
        self, hand: str, bid: str
    ) -> None:
        """Seven cards each, four seats: seven top spades are worth Seven (24 a seat), not Six."""
        others = {1: "2D 3D 4D 5D 6D 7D 8D", 2: "2H 3H 4H 5H 6H 7H 8H", 3: "4C 5C 6C 7C 8C 9C 10C"}
        hands = {0: parse_cards(hand), **{s: parse_cards(t) for s, t in others.items()}}
        view = seat_view(Deal.from_hands(SEVEN_CARD, hands, dealer=3, table_size=4), 0)
        bot = PimcBot(budget=Budget(samples=8, seconds=None), seed=0)
        bot.table, bot.seat = "t", 0
        assert bot.bid(view) == (PASS if bid == "pass" else Bid(bid))

    def test_the_declarer_draws_the_last_trump_to_make_nap(self) -> None:
        """Declarer holds AS KS QS JS and 2C; with one trump still out it keeps leading trumps."""
        profile = PROFILES["heather"]
        deal = Deal.from_hands(
            profile,
            {
                0: parse_cards("AS KS QS JS 2C"),
                1: parse_cards("2D 3D 4H 7C 8D"),
                2: parse_cards("10S 5C 6H 9C 3H"),
            },
            dealer=2,
            table_size=3,
        )
        for action in ("nap", "pass", "pass"):
            deal.apply(Bid(action))
        bot = PimcBot(budget=Budget(samples=12, seconds=None), seed=1)
        card = bot.play(seat_view(deal, 0))
        assert card.suit.letter == "S"


# ---------------------------------------------------------------------------- bidding by expected chips

HEATHER = PROFILES["heather"]
FOUR_HANDS = {1: "2C 3D 4H 8C 8D", 2: "2D 5C 6H 9C 3H", 3: "4C 4D 5D 6D 7D"}
"""The other hands of a 4-seat heather deal (seat 0 speaks first, the dealer is seat 3)."""


def opening_view(hand: str, *, bids: tuple[tuple[int, str], ...] = ()) -> SeatView:
    """The view of the seat to speak after ``bids`` in a 4-seat heather deal where seat 0 holds ``hand``."""
    hands = {0: parse_cards(hand), **{seat: parse_cards(text) for seat, text in FOUR_HANDS.items()}}
    dealer = (bids[0][0] - 1) % 4 if bids else 3
    deal = Deal.from_hands(HEATHER, hands, dealer=dealer, table_size=4)
    for _, bid in bids:
        deal.apply(Bid(bid))
    return seat_view(deal, deal.to_act)  # type: ignore[arg-type]


class Fixed(PimcBot):
    """A PIMC bot whose double-dummy chances are given, to test the choice alone."""

    def __init__(self, chances: dict[str, float], standing: float | None = None) -> None:
        super().__init__(budget=Budget(samples=1, seconds=None), caution=0.0)
        self.fixed = chances
        self.standing_chance = standing

    def estimate(self, view: SeatView, targets: object, *, misere: bool, standing: object) -> _Estimate:
        del view, targets, misere
        return _Estimate(chances=self.fixed, standing=None if standing is None else self.standing_chance)


class TestBiddingByExpectedChips:
    """Each contract is worth ``opponents * (p * win - (1 - p) * lose)``; the best positive one is bid."""

    def test_a_marginal_three_passes_when_its_worth_is_negative(self) -> None:
        view = opening_view("10S 9S 2S 7H 10C")
        assert Fixed({"3": 0.45, "4": 0.1, "5": 0.0}).bid(view) == PASS
        assert Fixed({"3": 0.55, "4": 0.1, "5": 0.0}).bid(view) == Bid("three")

    def test_nap_when_it_pays_more_than_four(self) -> None:
        """At 5/5 against 4/4, Nap is worth more once p(nap) > 0.8 p(four) + 0.1."""
        view = opening_view("AS KS 7S AH JC")
        assert Fixed({"3": 1.0, "4": 0.95, "5": 0.8}).bid(view) == Bid("four")
        assert Fixed({"3": 1.0, "4": 0.95, "5": 0.9}).bid(view) == Bid("nap")

    def test_wellington_only_over_nap_and_only_when_it_pays(self) -> None:
        view = opening_view("AS KS QS AH KH", bids=((1, "nap"),))
        assert Bid("wellington") in view.legal_actions
        assert Fixed({"5": 0.45}, standing=0.0).bid(view) == PASS
        assert Fixed({"5": 0.6}, standing=0.0).bid(view) == Bid("wellington")

    def test_outbids_a_contract_likely_to_be_made_even_at_a_small_loss(self) -> None:
        """Passing a Three that will be made costs 3 x (2p - 1); a Four losing less is better."""
        view = opening_view("AS KS 7S AH JC", bids=((1, "three"),))
        chances = {"4": 0.45, "5": 0.0}
        assert Fixed(chances, standing=0.2).bid(view) == PASS
        assert Fixed(chances, standing=0.9).bid(view) == Bid("four")

    def test_a_seat_that_keeps_failing_is_trusted_less(self) -> None:
        bot = Fixed({"4": 0.45, "5": 0.0}, standing=0.9)
        view = opening_view("AS KS 7S AH JC", bids=((1, "three"),))
        for _ in range(4):
            failed = DealSettled(declarer=1, contract="nap", tricks=1, made=False, payments=(5, -15, 5, 5))
            bot.on_event(failed)
        assert bot.bid(view) == PASS

    def test_the_solver_bids_nap_on_a_cold_hand_and_passes_a_weak_one(self) -> None:
        bot = PimcBot(budget=Budget(samples=40, seconds=None), seed=0)
        bot.table, bot.seat = "t", 0
        assert bot.bid(opening_view("AS KS QS JS 10S")) == Bid("nap")
        assert bot.bid(opening_view("10S 9S 2S 7H 10C")) == PASS


class TestBatches:
    """Decisions back to back for different tables share one time budget (one batch of requests)."""

    def test_back_to_back_tables_share_a_batch_and_a_repeated_table_starts_anew(self) -> None:
        batch = Batch()
        assert batch.begin("a", 10.0, size=3) == 0.0
        batch.end = 10.2
        assert batch.begin("b", 10.201, size=3) == pytest.approx(0.201)
        batch.end = 10.4
        assert batch.begin("a", 10.401, size=3) == 0.0
        batch.end = 10.5
        assert batch.begin("c", 11.0, size=3) == 0.0

    def test_a_batch_holds_at_most_its_size(self) -> None:
        batch = Batch()
        for number, table in enumerate("abcd"):
            used = batch.begin(table, 10.0 + number * 0.1, size=3)
            batch.end = 10.0 + number * 0.1 + 0.099
            assert used == pytest.approx(0.0 if number in {0, 3} else number * 0.1)

    def test_a_spent_batch_leaves_the_minimum_of_samples(self) -> None:
        now = [0.0]
        batch = Batch()
        budget = Budget(samples=50, seconds=0.2, batch_seconds=0.3)

        def clock() -> float:
            now[0] += 0.001
            return now[0]

        view = opening_view("AS KS QS JS 10S")
        first = PimcBot(budget=budget, clock=clock, batch=batch)
        first.table = "a"
        first.decide(view)
        batch.start -= 1.0  # as if the batch had run for a second already
        second = PimcBot(budget=budget, clock=clock, batch=batch)
        second.table = "b"
        before = now[0]
        second.decide(view)
        assert now[0] - before < 0.05  # two samples' worth of clock reads, not 50
