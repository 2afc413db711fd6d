"""The sequential test: its bounds, its likelihood ratio, where it stops, and its error rates."""

from __future__ import annotations

import math
import statistics

import pytest

from clients.bots.peel import PeelBot
from clients.bots.random_bot import RandomBot
from tournaments.play.sprt_simulation import SimulatedMatch, play_edges, simulate_match
from tournaments.stats.sprt import SequentialTest, Sprt, fixed_sample_blocks, llr, run_sprt


def max_log_likelihood(values: list[float], mean: float) -> float:
    """log L of a normal with this mean and its maximum-likelihood variance, computed directly."""
    variance = statistics.fmean((x - mean) ** 2 for x in values)
    return sum(-0.5 * math.log(2 * math.pi * variance) - (x - mean) ** 2 / (2 * variance) for x in values)


class TestTheTest:
    def test_wald_bounds(self) -> None:
        """alpha = beta = 0.05: log(0.05 / 0.95) and log(0.95 / 0.05), i.e. -+log 19."""
        test = Sprt(d0=0, d1=3)
        assert test.lower == pytest.approx(-math.log(19))
        assert test.upper == pytest.approx(math.log(19))
        other = Sprt(d0=0, d1=3, alpha=0.01, beta=0.2)
        assert other.upper == pytest.approx(math.log(0.8 / 0.01))
        assert other.lower == pytest.approx(math.log(0.2 / 0.99))

    @pytest.mark.parametrize(
        "values",
        [[1.0, 4.0, -2.0, 6.5, 3.0], [0.0, 0.5, -0.5, 0.25], [10.0, -8.0, 12.0, 3.0, 3.0, -1.0, 7.0]],
    )
    def test_the_ratio_is_the_generalised_likelihood_ratio(self, values: list[float]) -> None:
        """n/2 log(s0^2 / s1^2) is log L1 - log L0, each at its own maximum-likelihood variance."""
        n, mean = len(values), statistics.fmean(values)
        variance = statistics.pvariance(values)
        expected = max_log_likelihood(values, 3.0) - max_log_likelihood(values, 0.0)
        assert llr(n, mean, variance, d0=0.0, d1=3.0) == pytest.approx(expected)

    def test_no_variation_no_ratio(self) -> None:
        """All blocks equal: the ratio would be infinite, so the test takes no decision."""
        assert llr(12, 0.0, 0.0, d0=0, d1=3) is None
        state = run_sprt([0.0] * 50, Sprt(d0=0, d1=3))
        assert (state.blocks, state.llr, state.verdict) == (50, None, None)
        assert "until the blocks vary" in state.describe()

    def test_no_look_before_the_minimum(self) -> None:
        """Values far above D1 from the start: H1, but only at the tenth block."""
        test = Sprt(d0=0, d1=3, min_blocks=10)
        values = [9.0, 11.0] * 20
        sequential = SequentialTest(test)
        verdicts = [sequential.add(value) for value in values[:10]]
        assert verdicts == [None] * 9 + ["H1"]
        assert "from block 10" in run_sprt(values[:5], test).describe()

    def test_stops_at_the_first_crossing_and_reads_no_more(self) -> None:
        test = Sprt(d0=0, d1=3, min_blocks=2)
        values = [0.5, -0.5, 0.2, -0.1, 0.3, -0.4, 0.1, 0.0, -0.2, 0.4]
        state = run_sprt(values, test)
        assert state.verdict == "H0"
        assert state.llr is not None
        assert state.llr <= test.lower
        before = run_sprt(values[: state.blocks - 1], test)
        assert before.verdict is None
        sequential = SequentialTest(test)
        for value in values[: state.blocks]:
            sequential.add(value)
        with pytest.raises(ValueError, match=f"the test stopped at block {state.blocks}"):
            sequential.add(1.0)

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"d0": 3, "d1": 3}, "needs D0 < D1"),
            ({"d0": 0, "d1": 3, "alpha": 0.0}, "alpha must be between 0 and 0.5"),
            ({"d0": 0, "d1": 3, "beta": 0.6}, "beta must be between 0 and 0.5"),
            ({"d0": 0, "d1": 3, "min_blocks": 1}, "at least 2 blocks"),
        ],
    )
    def test_impossible_parameters_are_refused(self, kwargs: dict[str, float], message: str) -> None:
        with pytest.raises(ValueError, match=message):
            Sprt(**kwargs)  # type: ignore[arg-type]

    def test_round_trips_as_json(self) -> None:
        test = Sprt(d0=-1, d1=2.5, alpha=0.01, beta=0.1, min_blocks=20)
        assert Sprt.from_json(test.to_json()) == test

    def test_fixed_size_yardstick(self) -> None:
        """Block SD 9, D1 - D0 = 3, alpha = beta = 0.05: ((1.645 + 1.645) * 3)^2, about 97 blocks."""
        assert fixed_sample_blocks(Sprt(d0=0, d1=3), 9.0) == pytest.approx(97.39, abs=0.01)


class TestSimulatedMatches:
    @pytest.mark.slow
    def test_a_simulated_match_is_the_test_run_on_the_played_edges(self) -> None:
        """The edges a match read are the first blocks of the same match played on, and replay exactly."""
        test = Sprt(d0=0, d1=12)
        match = simulate_match(RandomBot, RandomBot, test=test, seed=7, table_size=3)
        assert match.state.verdict is not None
        assert len(match.edges) == match.state.blocks
        played = play_edges(RandomBot, RandomBot, seed=7, table_size=3)
        assert [next(played) for _ in match.edges] == list(match.edges)
        assert run_sprt(match.edges, test) == match.state
        assert simulate_match(RandomBot, RandomBot, test=test, seed=7, table_size=3) == match


def runs(candidate: type, baseline: type, test: Sprt, count: int) -> list[SimulatedMatch]:
    return [
        simulate_match(candidate, baseline, test=test, seed=1000 + seed, table_size=3)
        for seed in range(count)
    ]


@pytest.mark.heavy
@pytest.mark.slow
class TestErrorRates:
    """Seeded matches played in process (a reduced bench/sprt.py): the rates hold with a margin.

    Every run replays exactly (seeded bots, seeded deals, no clock in the play), so these
    tests pass or fail the same way every time.
    """

    def test_clones_seldom_accept_h1(self) -> None:
        """Random against random (seeded per table and seat): alpha 0.05, at most 10% H1 in 40 runs."""
        test = Sprt(d0=0, d1=12)  # about half a block SD: some twenty blocks a run
        matches = runs(RandomBot, RandomBot, test, 40)
        h1 = sum(match.state.verdict == "H1" for match in matches)
        h0 = sum(match.state.verdict == "H0" for match in matches)
        assert h1 <= 4
        assert h0 >= 34
        assert all(match.state.blocks >= test.min_blocks for match in matches)

    def test_a_stronger_candidate_is_accepted_sooner_than_a_fixed_test_decides(self) -> None:
        """Peel against random at three seats gains about 49 chips a session: H1 of [44, 48].

        At least 85% of 30 runs accept H1, and on average they read less than three
        quarters of the blocks that the fixed-size test with the same error rates needs at
        the blocks' SD (about half, in fact).
        """
        test = Sprt(d0=44, d1=48)
        matches = runs(PeelBot, RandomBot, test, 30)
        assert sum(match.state.verdict == "H1" for match in matches) >= 26
        sd = statistics.stdev(value for match in matches for value in match.edges)
        mean_blocks = statistics.fmean(match.state.blocks for match in matches)
        assert mean_blocks < 0.75 * fixed_sample_blocks(test, sd)
