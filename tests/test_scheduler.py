"""The tournament plan: fair tables, every seat for every bot, and replayable seeds."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from referee.rules import PROFILES
from tournaments.plan.scheduler import (
    MAX_TABLE_SIZE,
    BlockSpec,
    check_table_size,
    derive_seed,
    match_schedule,
    schedule,
)


def bots(n: int) -> list[str]:
    return [f"bot{i}" for i in range(n)]


def pair_meetings(entrants: list[str], blocks: tuple[BlockSpec, ...]) -> Counter[frozenset[str]]:
    meetings: Counter[frozenset[str]] = Counter(
        {frozenset(pair): 0 for pair in itertools.combinations(entrants, 2)}
    )
    for block in blocks:
        meetings.update(frozenset(pair) for pair in itertools.combinations(block.bots, 2))
    return meetings


def spread(counts: Counter[Any]) -> int:
    return max(counts.values()) - min(counts.values())


class TestTables:
    @pytest.mark.parametrize(("n", "k", "cycles"), [(3, 3, 4), (4, 3, 2), (5, 3, 1), (6, 4, 2)])
    def test_full_cycles_use_every_subset_equally(self, n: int, k: int, cycles: int) -> None:
        """With enough blocks, every k-subset plays once per cycle, so pairs meet equally."""
        entrants = bots(n)
        blocks = schedule(entrants, table_size=k, sessions=cycles * math.comb(n, k) * k, seed=7)
        tables = Counter(frozenset(block.bots) for block in blocks)
        assert set(tables) == {frozenset(c) for c in itertools.combinations(entrants, k)}
        assert set(tables.values()) == {cycles}
        assert spread(pair_meetings(entrants, blocks)) == 0

    @pytest.mark.slow
    @pytest.mark.parametrize(
        ("n", "k", "blocks"),
        [(7, 3, 7), (9, 3, 12), (6, 3, 10), (7, 4, 7), (8, 4, 14)],
    )
    @pytest.mark.parametrize("seed", [0, 1, 2])
    def test_balanced_rounds_find_pairwise_balanced_designs(
        self, n: int, k: int, blocks: int, seed: int
    ) -> None:
        """Short of a full cycle, tables still even out pair meetings (Fano plane, etc.).

        Each case admits a design in which every pair meets equally often; the plan must
        find one, and every bot must appear equally often.
        """
        entrants = bots(n)
        plan = schedule(entrants, table_size=k, sessions=blocks * k, seed=seed)
        assert len(plan) == blocks
        assert spread(pair_meetings(entrants, plan)) == 0
        assert spread(Counter(bot for block in plan for bot in block.bots)) == 0

    @pytest.mark.parametrize(("n", "k", "blocks"), [(6, 3, 4), (10, 3, 20)])
    def test_balanced_rounds_keep_pair_spread_within_one(self, n: int, k: int, blocks: int) -> None:
        """Where exact balance is impossible, pairs meet within one of each other."""
        entrants = bots(n)
        plan = schedule(entrants, table_size=k, sessions=blocks * k, seed=3)
        assert spread(pair_meetings(entrants, plan)) <= 1

    @pytest.mark.slow
    @pytest.mark.parametrize(("n", "k"), [(5, 3), (7, 4), (8, 5), (11, 7), (12, 6)])
    @pytest.mark.parametrize("blocks", [1, 2, 5, 13])
    def test_appearances_within_one(self, n: int, k: int, blocks: int) -> None:
        """No bot ever plays more than one block more than another."""
        plan = schedule(bots(n), table_size=k, sessions=blocks * k, seed=blocks)
        appearances = Counter(dict.fromkeys(bots(n), 0))
        appearances.update(bot for block in plan for bot in block.bots)
        assert sum(appearances.values()) == blocks * k
        assert spread(appearances) <= 1

    @pytest.mark.parametrize(("sessions", "blocks"), [(1, 1), (4, 2), (5, 2), (6, 2), (7, 3)])
    def test_blocks_round_sessions_up(self, sessions: int, blocks: int) -> None:
        """A block yields k sessions, so the plan has ceil(sessions / k) blocks."""
        plan = schedule(bots(5), table_size=3, sessions=sessions, seed=0)
        assert len(plan) == blocks
        assert [block.index for block in plan] == list(range(blocks))


class TestSeats:
    def test_every_bot_holds_every_seat_once_per_block(self) -> None:
        """Over a block's rotations each seat sees each bot exactly once."""
        for block in schedule(bots(7), table_size=5, sessions=60, seed=11):
            seatings = [block.seating(r) for r in block.rotations]
            assert len(seatings) == block.table_size == 5
            for seat in range(5):
                assert sorted(s[seat] for s in seatings) == sorted(block.bots)
            for seating in seatings:
                assert sorted(seating) == sorted(block.bots)

    def test_rotation_moves_each_bot_one_seat_up(self) -> None:
        """The bot at seat s in rotation 0 sits at seat s + r (mod k) in rotation r."""
        block = BlockSpec(index=0, board_seed=1, bots=("a", "b", "c", "d"))
        assert block.seating(0) == ("a", "b", "c", "d")
        assert block.seating(1) == ("d", "a", "b", "c")
        assert block.seating(3) == ("b", "c", "d", "a")

    @pytest.mark.parametrize("rotation", [-1, 4])
    def test_rotation_out_of_range_is_an_error(self, rotation: int) -> None:
        block = BlockSpec(index=0, board_seed=1, bots=("a", "b", "c", "d"))
        with pytest.raises(ValueError, match=r"rotation -?\d+ out of range"):
            block.seating(rotation)

    @pytest.mark.parametrize(("n", "blocks"), [(3, 10), (4, 12)])
    def test_seat_order_varies_who_sits_next_to_whom(self, n: int, blocks: int) -> None:
        """Even when one table plays every block, each bot follows each other equally often."""
        plan = schedule(bots(n), table_size=n, sessions=blocks * n, seed=5)
        follows = Counter((block.bots[i], block.bots[(i + 1) % n]) for block in plan for i in range(n))
        assert len(follows) == n * (n - 1)
        assert spread(follows) == 0
        assert len({block.bots[0] for block in plan}) > 1


class TestSeeds:
    @pytest.mark.slow
    def test_same_seed_same_plan(self) -> None:
        """A plan is a pure function of its inputs: rerunning it reproduces it exactly."""
        first = schedule(bots(8), table_size=4, sessions=100, seed=42)
        assert first == schedule(bots(8), table_size=4, sessions=100, seed=42)

    def test_different_seed_different_board_seeds(self) -> None:
        first = schedule(bots(6), table_size=3, sessions=30, seed=1)
        second = schedule(bots(6), table_size=3, sessions=30, seed=2)
        assert not {b.board_seed for b in first} & {b.board_seed for b in second}
        assert len({b.board_seed for b in first}) == len(first)

    def test_board_seeds_do_not_depend_on_the_bots(self) -> None:
        """Two tournaments with one seed deal the same cards, whoever enters."""
        first = schedule(bots(5), table_size=3, sessions=30, seed=9)
        second = schedule(["x", "y", "z", "w"], table_size=4, sessions=40, seed=9)
        assert [b.board_seed for b in first] == [b.board_seed for b in second]

    def test_derive_seed_is_stable_across_processes(self) -> None:
        """Pinned value: SHA-256 based, so it cannot drift with PYTHONHASHSEED."""
        assert derive_seed(2024, "board", 0) == 8799213782408905048

    def test_derive_seed_separates_labels(self) -> None:
        seeds = {derive_seed(1), derive_seed(1, 0), derive_seed(1, "0"), derive_seed(1, 0, 0)}
        assert len(seeds) == 4
        assert all(0 <= seed < 2**63 for seed in seeds)


class TestValidation:
    @pytest.mark.parametrize(
        ("n", "k", "message"),
        [
            (5, 2, "table size 2 is not allowed: Nap is played by 3 to 7 players"),
            (9, MAX_TABLE_SIZE + 1, "table size 8 is not allowed"),
            (4, 5, r"table size 5 exceeds the number of entrants \(4\)"),
        ],
    )
    def test_table_size_errors_name_the_problem(self, n: int, k: int, message: str) -> None:
        with pytest.raises(ValueError, match=message):
            schedule(bots(n), table_size=k, sessions=10, seed=0)

    def test_duplicate_entrants_are_an_error(self) -> None:
        with pytest.raises(ValueError, match="entrants listed more than once: a"):
            schedule(["a", "b", "a", "c"], table_size=3, sessions=3, seed=0)

    def test_sessions_must_be_positive(self) -> None:
        with pytest.raises(ValueError, match="sessions must be at least 1, got 0"):
            schedule(bots(3), table_size=3, sessions=0, seed=0)


class TestTheProfilesTableSizes:
    """With a rules profile, the table sizes are the profile's, not Nap's 3 to 7."""

    PACK_32 = replace(PROFILES["full-ladder"], name="pub", source="tests", pack_size=32, max_players=6)

    def test_seven_card_nap_plays_at_seven_seats(self) -> None:
        plan = schedule(bots(7), table_size=7, sessions=14, seed=3, profile=PROFILES["seven-card"])
        assert [block.table_size for block in plan] == [7, 7]

    @pytest.mark.parametrize(
        ("profile", "message"),
        [
            ("two-to-five", "table size 7 is not allowed by the rules profile two-to-five: 3 to 6 players$"),
            (
                "pub",
                (
                    r"table size 7 is not allowed by the rules profile pub: 3 to 6 players "
                    r"\(its 32-card pack deals 5 cards to at most 6\)$"
                ),
            ),
        ],
    )
    def test_a_size_the_profile_refuses_is_one_line_naming_it(self, profile: str, message: str) -> None:
        rules = PROFILES.get(profile, self.PACK_32)
        with pytest.raises(ValueError, match=message):
            schedule(bots(8), table_size=7, sessions=7, seed=0, profile=rules)
        with pytest.raises(ValueError, match=message):
            check_table_size(7, rules)
        check_table_size(6, rules)

    def test_a_profile_may_allow_what_nap_does_not(self) -> None:
        """House rules for eight players of five cards (40 of the 52): -k 8 is theirs to allow."""
        eight = replace(PROFILES["heather"], name="eight", source="tests", max_players=8)
        assert len(schedule(bots(8), table_size=8, sessions=8, seed=0, profile=eight)) == 1
        with pytest.raises(ValueError, match="Nap is played by 3 to 7 players"):
            check_table_size(8)


class TestMatchSchedule:
    """A match seats the candidate at every table, with k - 1 copies of the baseline or a pool."""

    def test_every_block_seats_the_candidate_and_the_copies(self) -> None:
        plan = match_schedule("new", ["old", "old-2", "old-3"], table_size=4, sessions=40, seed=3)
        assert len(plan) == 10
        assert all(sorted(block.bots) == ["new", "old", "old-2", "old-3"] for block in plan)
        assert len({block.bots for block in plan}) > 1  # seat orders vary
        follows = Counter(
            (block.bots[i], block.bots[(i + 1) % 4])
            for block in plan
            for i in range(4)
            if block.bots[i] == "new"
        )
        assert set(follows) == {("new", "old"), ("new", "old-2"), ("new", "old-3")}

    def test_a_pool_comes_round_evenly(self) -> None:
        """Pool of four at 3 seats: each pair of opponents joins the candidate equally often."""
        pool = ["a", "b", "c", "d"]
        plan = match_schedule("new", pool, table_size=3, sessions=3 * 12, seed=5)
        assert all("new" in block.bots for block in plan)
        opponents = Counter(frozenset(set(block.bots) - {"new"}) for block in plan)
        assert set(opponents.values()) == {2}
        assert len(opponents) == math.comb(4, 2)

    def test_the_deals_are_the_tournaments(self) -> None:
        """A match and a tournament with one seed play the same board seeds, block for block."""
        match = match_schedule("new", ["old", "old-2"], table_size=3, sessions=30, seed=9)
        tournament = schedule(bots(5), table_size=3, sessions=30, seed=9)
        assert [b.board_seed for b in match] == [b.board_seed for b in tournament]
        assert match == match_schedule("new", ["old", "old-2"], table_size=3, sessions=30, seed=9)

    @pytest.mark.parametrize(
        ("candidate", "opponents", "message"),
        [
            ("old", ["old", "old-2"], "entrants listed more than once: old"),
            ("new", ["old"], r"table size 3 exceeds the number of entrants \(2\)"),
        ],
    )
    def test_errors_name_the_problem(self, candidate: str, opponents: list[str], message: str) -> None:
        with pytest.raises(ValueError, match=message):
            match_schedule(candidate, opponents, table_size=3, sessions=3, seed=0)
