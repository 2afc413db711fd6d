"""Matches played in process, to measure the sequential test itself: its error rates and its cost.

:func:`simulate_match` plays one match the way ``nap match --sprt`` does (the same
schedule, the same blocks, the same edges, the same test) but with the bots called in
process by the library's block player (:func:`~tournaments.play.blocks.play_block_in_process`:
the referee's match core, no gRPC, no store), one block after another until the test
decides. Many seeded runs tell how often the test accepts H1 for clones (its false
positive rate, which should stay near ``alpha``) and for a known stronger candidate (its
power), and how many sessions it took (``bench/sprt.py``). :func:`play_edges` gives the
block edges alone, for a benchmark that plays blocks once and resamples them.

The time limits are set far beyond any decision, so that no run ever depends on how fast
the machine was; with seeded bots on counted budgets every run replays exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from referee.match import TimeLimits
from referee.rules import DEFAULT_PROFILE
from tournaments.plan.candidate_match import block_edge
from tournaments.plan.scheduler import match_schedule
from tournaments.play.blocks import BlockRun, play_block_in_process
from tournaments.stats.sprt import SequentialTest, Sprt, SprtState

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from clients.sdk.bot import Bot
    from referee.rules import Profile

CANDIDATE = "candidate"
"""The candidate's name in a simulated match; the opponents are ``baseline``, ``baseline-2``, ..."""

_NO_TIME_LIMIT = TimeLimits(decision_ms=10**9)


@dataclass(frozen=True, slots=True)
class SimulatedMatch:
    """One simulated match: where its test stopped, and the edges it read."""

    seed: int
    table_size: int
    state: SprtState
    edges: tuple[float, ...]

    @property
    def sessions(self) -> int:
        """Sessions the test read: whole blocks of ``table_size``."""
        return self.state.blocks * self.table_size


def play_edges(  # noqa: PLR0913 - keywords, each with a default but the seed
    candidate: Callable[[], Bot],
    baseline: Callable[[], Bot],
    *,
    seed: int,
    table_size: int = 4,
    max_blocks: int = 1000,
    profile: Profile = DEFAULT_PROFILE,
) -> Iterator[float]:
    """The candidate's edges, block after block, against ``table_size - 1`` copies of ``baseline``.

    ``seed`` is the match seed (its deals, and its table ids, on which seeded bots seed
    themselves). Each block is played when the next edge is asked for, up to
    ``max_blocks``: the caller stops when it has read enough.
    """
    opponents = ["baseline", *(f"baseline-{i}" for i in range(2, table_size))]
    factories: dict[str, Callable[[], Bot]] = {CANDIDATE: candidate, **dict.fromkeys(opponents, baseline)}
    plan = match_schedule(
        CANDIDATE,
        opponents,
        table_size=table_size,
        sessions=max_blocks * table_size,
        seed=seed,
        profile=profile,
    )
    for block in plan:
        run = BlockRun(
            tournament=seed,
            index=block.index,
            board_seed=block.board_seed,
            bots=block.bots,
            profile=profile,
            time_limits=_NO_TIME_LIMIT,
            rotations=tuple(block.rotations),
        )
        yield block_edge((done.result for done in play_block_in_process(run, factories)), CANDIDATE)


def simulate_match(  # noqa: PLR0913 - keywords, each with a default but the test and seed
    candidate: Callable[[], Bot],
    baseline: Callable[[], Bot],
    *,
    test: Sprt,
    seed: int,
    table_size: int = 4,
    max_blocks: int = 1000,
    profile: Profile = DEFAULT_PROFILE,
) -> SimulatedMatch:
    """Play ``candidate`` against ``table_size - 1`` copies of ``baseline`` until ``test`` decides.

    ``seed`` is the match seed (its deals, and its table ids, on which seeded bots seed
    themselves); at most ``max_blocks`` blocks are played (then the state has no verdict).
    """
    sequential = SequentialTest(test)
    edges: list[float] = []
    for edge in play_edges(
        candidate, baseline, seed=seed, table_size=table_size, max_blocks=max_blocks, profile=profile
    ):
        edges.append(edge)
        if sequential.add(edge) is not None:
            break
    return SimulatedMatch(seed=seed, table_size=table_size, state=sequential.state, edges=tuple(edges))
