"""The rotation check: each bot's edge on boards played before, exact from running totals, and its test.

A bot's rotation edge ``D`` over a complete block is its duplicate edge (its result with a
hand against the others' results with the same hand) on the later rotations, less the same
on the first (:func:`tournaments.stats.tally.rotation_edge_units`). The totals keep it from three
integers per bot and block, in any order of the rotations; the standings flag a bot whose
mean ``D`` is above zero by a one-sided t test, Bonferroni over the bots tested, from ten
complete blocks on.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction
from typing import TYPE_CHECKING

import pytest

from clients.bots.peel import PeelBot
from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE
from tests.rotation_helpers import BOTS, block_results, synthetic, zero_sum
from tournaments.plan.scheduler import BlockSpec
from tournaments.play.blocks import BlockRun, play_block_in_process
from tournaments.results import SessionResult
from tournaments.stats.estimates import Estimate, t_quantile
from tournaments.stats.rotation_check import ALPHA, MIN_BLOCKS, rotation_flags
from tournaments.stats.standings import compute_standings, standings_of
from tournaments.stats.tally import ROTATION_UNIT, tally_of

if TYPE_CHECKING:
    from collections.abc import Sequence


def edge_by_definition(chips: Sequence[Sequence[int]], bots: Sequence[str], bot: str) -> Fraction:
    """``D`` as docs/statistics.md defines it, computed the long way round."""
    k = len(bots)
    spec = BlockSpec(index=0, board_seed=0, bots=tuple(bots))

    def edge(rotation: int) -> Fraction:
        seat = spec.seating(rotation).index(bot)
        others = [chips[other][seat] for other in range(k) if other != rotation]
        return chips[rotation][seat] - Fraction(sum(others), k - 1)

    return sum((edge(r) for r in range(1, k)), Fraction(0)) / (k - 1) - edge(0)


class TestTheStatistic:
    """``D`` from the running totals equals its definition exactly, whatever the order of the rotations."""

    @pytest.mark.parametrize("seats", [2, 3, 4, 5, 6, 7])
    def test_the_totals_give_the_definition_exactly(self, seats: int) -> None:
        rng = random.Random(seats)
        bots = rng.sample(BOTS[:seats], seats)
        chips = [zero_sum(rng, seats, 30) for _ in range(seats)]
        results = block_results(chips, bots)
        rng.shuffle(results)  # rotation 0 need not come first
        tally = tally_of(results)
        for bot in bots:
            totals = tally.bots[bot]
            expected = edge_by_definition(chips, bots, bot) * ROTATION_UNIT
            assert expected.denominator == 1
            assert (totals.rotation_blocks, totals.rotation_edge) == (1, int(expected))
            assert totals.rotation_edge_sq == int(expected) ** 2
        assert sum(tally.bots[bot].rotation_edge for bot in bots) == 0  # the edges of a block sum to zero

    def test_a_hand_made_block(self) -> None:
        """Three seats; alpha does better with every hand on its second and third plays.

        Rotation 0 seats alpha, beta, gamma; rotation 1 gamma, alpha, beta; rotation 2 beta,
        gamma, alpha. Alpha holds seat 0 (+2 against the others' mean +4: -2), then seat 1
        (+6 against -4.5: +10.5), then seat 2 (+3 against -5: +8). D = (10.5 + 8) / 2 + 2.
        """
        chips = [[2, -3, 1], [5, 6, -11], [3, -6, 3]]
        tally = tally_of(block_results(chips, ("alpha", "beta", "gamma")))
        assert tally.bots["alpha"].rotation_edge == Fraction(45, 4) * ROTATION_UNIT == 40_500
        assert edge_by_definition(chips, ("alpha", "beta", "gamma"), "alpha") == Fraction(45, 4)

    def test_any_order_of_the_rotations_gives_the_same_totals(self) -> None:
        rng = random.Random(3)
        chips = [zero_sum(rng, 4, 10) for _ in range(4)]
        results = block_results(chips, BOTS[:4])
        first = tally_of(results)
        assert any(totals.rotation_edge for totals in first.bots.values())
        for order in itertools.permutations(results):
            assert tally_of(order) == first

    def test_an_incomplete_block_gives_no_edge(self) -> None:
        rng = random.Random(4)
        results = block_results([zero_sum(rng, 4, 10) for _ in range(4)], BOTS[:4])
        for missing in range(4):
            tally = tally_of(results[:missing] + results[missing + 1 :])
            assert all(totals.rotation_blocks == 0 for totals in tally.bots.values())
            assert all(line.rotation_edge is None for line in standings_of(tally).bots)

    def test_a_block_without_its_first_rotation_gives_no_edge(self) -> None:
        """A 3-seat block played 3 times without rotation 0 (one twice, which the store refuses): no edge."""
        rng = random.Random(8)
        results = block_results([zero_sum(rng, 3, 10) for _ in range(3)], BOTS[:3])
        tally = tally_of([results[1], results[1], results[2]])
        assert all(totals.rotation_blocks == 0 for totals in tally.bots.values())

    @pytest.mark.parametrize("seats", [3, 4, 5, 6, 7])
    def test_a_bot_that_gains_on_later_rotations(self, seats: int) -> None:
        """A gain ``g`` at every later rotation, taken equally from the others: ``D = k(k-2)g/(k-1)^2``."""
        gain = 6 * (seats - 1)
        bots = BOTS[:seats]
        for cheat_seat in range(seats):
            spec = BlockSpec(index=0, board_seed=0, bots=bots)
            chips = [
                [
                    0 if rotation == 0 else (gain if seat == (cheat_seat + rotation) % seats else -6)
                    for seat in range(seats)
                ]
                for rotation in range(seats)
            ]
            assert all(spec.seating(r)[(cheat_seat + r) % seats] == bots[cheat_seat] for r in range(seats))
            tally = tally_of(block_results(chips, bots))
            cheater = bots[cheat_seat]
            k = seats
            assert (
                tally.bots[cheater].rotation_edge
                == Fraction(k * (k - 2) * gain, (k - 1) ** 2) * ROTATION_UNIT
            )
            for victim in bots:
                if victim != cheater:
                    expected = -Fraction(k * (k - 2) * gain, (k - 1) ** 3) * ROTATION_UNIT
                    assert tally.bots[victim].rotation_edge == expected < 0

    def test_tallies_of_other_scales_add_the_edges_as_they_are(self) -> None:
        """Merging a 3-seat tally (in 1/6) with a 4-seat one (1/12) leaves the edges in 1/3600."""
        rng = random.Random(5)
        threes = synthetic(rng, blocks=3, seats=3)
        fours = [
            SessionResult(2, r.block, r.rotation, r.board_seed, r.seats)
            for r in synthetic(rng, blocks=3, seats=4)
        ]
        apart = tally_of(threes), tally_of(fours)
        together = tally_of(threes + fours)
        assert (apart[0].scale, apart[1].scale, together.scale) == (6, 12, 12)
        assert apart[0].merged(apart[1]) == together
        for bot, totals in together.bots.items():
            parts = [tally.bots[bot] for tally in apart if bot in tally.bots]
            assert totals.rotation_edge == sum(part.rotation_edge for part in parts)
            assert totals.rotation_edge_sq == sum(part.rotation_edge_sq for part in parts)
            assert totals.rotation_blocks == sum(part.rotation_blocks for part in parts) > 0
        line = standings_of(together).bot("alpha")
        assert line.rotation_edge is not None
        assert line.rotation_edge.mean == pytest.approx(
            sum(tally.bots["alpha"].rotation_edge for tally in apart) / (ROTATION_UNIT * 6)
        )


class TestClones:
    def test_identical_deterministic_bots_give_exactly_zero_and_no_flag(self) -> None:
        """Peel against itself, played in process: D = 0 in every block, so no spread and no test."""
        results = []
        for index, bots in enumerate([("peel", "peel-2", "peel-3"), ("peel-3", "peel", "peel-2")]):
            run = BlockRun(
                tournament=1,
                index=index,
                board_seed=7 + index,
                bots=bots,
                profile=DEFAULT_PROFILE,
                time_limits=TimeLimits(decision_ms=10**9),
                rotations=(0, 1, 2),
            )
            results += [done.result for done in play_block_in_process(run, dict.fromkeys(bots, PeelBot))]
        assert any(seat.chips for result in results for seat in result.seats)
        tally = tally_of(results)
        assert all(
            (t.rotation_blocks, t.rotation_edge, t.rotation_edge_sq) == (2, 0, 0) for t in tally.bots.values()
        )
        for line in compute_standings(results).bots:
            assert line.rotation_edge == Estimate(mean=0.0, half_width=None, n=2, sd=0.0)
            assert not line.rotation_flagged


class TestTheFlag:
    def test_a_cheater_is_flagged_and_its_victims_are_not(self) -> None:
        results = synthetic(random.Random(11), blocks=40, cheater="gamma", gain=9)
        standings = compute_standings(results)
        assert {line.bot for line in standings.bots if line.rotation_flagged} == {"gamma"}
        gamma = standings.bot("gamma")
        assert gamma.rotation_edge is not None
        assert gamma.rotation_edge.n == 40
        assert gamma.rotation_edge.low is not None
        assert gamma.rotation_edge.low > 0
        victims = [line.rotation_edge for line in standings.bots if line.bot != "gamma"]
        assert all(edge is not None and edge.n == 40 for edge in victims)
        # Every block's edges sum to zero: what the cheater gains, its victims lose.
        assert sum(edge.mean for edge in victims if edge is not None) == pytest.approx(
            -gamma.rotation_edge.mean
        )

    @pytest.mark.slow
    @pytest.mark.parametrize("seed", range(5))
    def test_honest_noise_is_not_flagged(self, seed: int) -> None:
        standings = compute_standings(synthetic(random.Random(seed), blocks=40))
        assert not any(line.rotation_flagged for line in standings.bots)
        assert all(line.rotation_edge is not None and line.rotation_edge.n == 40 for line in standings.bots)

    def test_fewer_than_ten_blocks_are_never_flagged(self) -> None:
        results = synthetic(random.Random(12), blocks=MIN_BLOCKS, cheater="beta", gain=60, noise=2)
        nine = compute_standings([r for r in results if r.block < MIN_BLOCKS - 1])
        edge = nine.bot("beta").rotation_edge
        assert edge is not None
        assert edge.n == MIN_BLOCKS - 1
        assert edge.mean > 20
        assert not any(line.rotation_flagged for line in nine.bots)
        assert compute_standings(results).bot("beta").rotation_flagged  # the tenth block

    def test_bonferroni_over_the_bots_tested(self) -> None:
        """A t of 3.0 over 10 blocks clears t(0.99, 9) = 2.82 alone, not t(1 - 0.01/3, 9) among three."""
        n = 10
        sd = 2.0
        suspect = Estimate(mean=3.0 * sd / math.sqrt(n), half_width=1.0, n=n, sd=sd)
        assert t_quantile(1 - ALPHA, n - 1) < 3.0 < t_quantile(1 - ALPHA / 3, n - 1)
        honest = Estimate(mean=0.0, half_width=1.0, n=n, sd=sd)
        assert rotation_flags({"suspect": suspect}) == {"suspect"}
        assert rotation_flags({"suspect": suspect, "a": honest, "b": honest}) == frozenset()
        untested = {
            "few": Estimate(mean=0.0, half_width=1.0, n=n - 1, sd=sd),
            "still": Estimate(mean=0.0, half_width=None, n=n, sd=0.0),
            "none": None,
        }
        assert rotation_flags({"suspect": suspect, **untested}) == {"suspect"}
