"""A match, pure: whether the candidate is better than its baseline, and by how much.

A match is a tournament whose every block seats the candidate with ``k - 1`` opponents:
copies of one baseline, or a pool (:func:`~tournaments.plan.scheduler.match_schedule`). Each
complete block gives one number, the candidate's **edge**: its mean chips per session
over the block minus the mean of the other seats' (the average opponent at its table).
When candidate and opponents are the same program the seats are interchangeable, so the
edge's expectation is exactly zero; since a session's chips sum to zero, the edge is
``k / (k - 1)`` times the candidate's own mean.

Blocks are read in block-index order, whole blocks only: the edges are the longest run
of complete blocks from block 0, whatever order the blocks finished in. With an
:class:`~tournaments.stats.sprt.Sprt` the match stops at the first block where the test
decides (:class:`MatchMonitor` tells the runner), and a match resumed after an
interruption reads the same blocks in the same order, so it stops where it would have.

:func:`summarize` gives what a match reports: the edge with its 95% interval, the
likelihood of superiority, the blocks and sessions read, and the test's verdict.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tournaments.stats.estimates import Estimate, estimate, likelihood_of_superiority
from tournaments.stats.sprt import SequentialTest, Sprt, SprtState, run_sprt

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from tournaments.results import SessionResult

__all__ = ["MatchMonitor", "MatchPlan", "MatchSummary", "block_edge", "block_edges", "summarize"]


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """What makes a tournament a match: the candidate, and the test that may stop it early.

    Without ``sprt`` the match plays its sessions to the end (a fixed-size match).
    """

    candidate: str
    sprt: Sprt | None = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data, as the tournament's stored config keeps it."""
        return {"candidate": self.candidate, "sprt": None if self.sprt is None else self.sprt.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatchPlan:
        """Read a plan written by :meth:`to_json`."""
        sprt = data.get("sprt")
        return cls(candidate=str(data["candidate"]), sprt=None if sprt is None else Sprt.from_json(sprt))


def block_edge(sessions: Iterable[SessionResult], candidate: str) -> float:
    """The candidate's edge over one block: its mean chips per session minus its opponents'."""
    mine: list[int] = []
    theirs: list[int] = []
    for result in sessions:
        for seat in result.seats:
            (mine if seat.bot == candidate else theirs).append(seat.chips)
    if not mine or not theirs:
        msg = f"{candidate} is not one of several bots in these sessions"
        raise ValueError(msg)
    return sum(mine) / len(mine) - sum(theirs) / len(theirs)


def block_edges(results: Iterable[SessionResult], candidate: str) -> list[float]:
    """The edges of the complete blocks from block 0 on, in block-index order, up to the first gap."""
    by_block: dict[int, list[SessionResult]] = defaultdict(list)
    for result in results:
        by_block[result.block].append(result)
    edges = []
    index = 0
    while index in by_block and _complete(by_block[index]):
        edges.append(block_edge(by_block[index], candidate))
        index += 1
    return edges


def _complete(sessions: Sequence[SessionResult]) -> bool:
    return len({result.rotation for result in sessions}) == sessions[0].table_size


class MatchMonitor:
    """Follows a match's sessions as they are committed, and says when its test has decided.

    Sessions may come in any order; the test reads each block as soon as it and every
    block before it are complete. ``state`` is None for a match without a test.
    """

    def __init__(self, plan: MatchPlan, recorded: Iterable[SessionResult] = ()) -> None:
        self.plan = plan
        self._test = None if plan.sprt is None else SequentialTest(plan.sprt)
        self._waiting: dict[int, list[SessionResult]] = defaultdict(list)
        self._next = 0
        for result in recorded:
            self.add(result)

    @property
    def state(self) -> SprtState | None:
        """Where the test stands (None without one)."""
        return None if self._test is None else self._test.state

    @property
    def decided(self) -> bool:
        """Whether the test has accepted a hypothesis: no more blocks are needed."""
        state = self.state
        return state is not None and state.verdict is not None

    def add(self, result: SessionResult) -> None:
        """Take one committed session into account."""
        if self._test is None or self.decided:
            return
        self._waiting[result.block].append(result)
        while not self.decided:
            block = self._waiting.get(self._next)
            if not block or not _complete(block):
                return
            del self._waiting[self._next]
            self._test.add(block_edge(block, self.plan.candidate))
            self._next += 1

    def describe(self) -> str:
        """The progress line's note: the LLR and its bounds, or the verdict once taken."""
        state = self.state
        if state is None:
            return ""
        if state.verdict is not None:
            return f"{state.verdict} accepted at block {state.blocks}, {state.describe()}"
        return f"block {state.blocks}, {state.describe()}"


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """What a match shows: the edge over the blocks read, how sure, and the verdict.

    ``edge`` is the candidate's edge in chips per session with its 95% interval over
    ``blocks`` blocks (``sessions`` sessions), read in block-index order up to where the
    test stopped; ``los`` the likelihood that the edge is above zero; ``state`` where the
    test stands (None for a fixed-size match). ``played`` counts every recorded session,
    including those that finished after the test had stopped (kept, not counted).
    ``faults`` counts each bot's faults over the sessions read (bots with none left out):
    a faulted decision is played for the bot by the referee, so the edge measures it too.
    """

    candidate: str
    opponents: tuple[str, ...]
    table_size: int
    edge: Estimate | None
    los: float | None
    blocks: int
    sessions: int
    played: int
    state: SprtState | None
    faults: Mapping[str, int] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """The conclusion in words: what was accepted, or that the test goes on, or none."""
        state = self.state
        if state is None:
            return "fixed-size match: no sequential test; read the interval"
        test = state.test
        if state.verdict == "H1":
            return (
                f"H1 accepted: {self.candidate} is stronger "
                f"(an edge of {test.d1:+.2f} fits the blocks better than {test.d0:+.2f})"
            )
        if state.verdict == "H0":
            return (
                f"H0 accepted: {self.candidate} is not stronger by {test.d1:+.2f} "
                f"(an edge of {test.d0:+.2f} fits the blocks better)"
            )
        return f"undecided after {state.blocks} blocks: neither bound reached"

    def to_json(self) -> dict[str, Any]:
        """Everything in the summary as JSON-ready data with stable keys."""
        state, edge = self.state, self.edge
        return {
            "candidate": self.candidate,
            "opponents": list(self.opponents),
            "table_size": self.table_size,
            "edge": None if edge is None else edge.to_json(),
            "los": self.los,
            "blocks": self.blocks,
            "sessions": self.sessions,
            "played": self.played,
            "sprt": None
            if state is None
            else {
                **state.test.to_json(),
                "lower": state.test.lower,
                "upper": state.test.upper,
                "llr": state.llr,
                "verdict": state.verdict,
            },
            "verdict": self.verdict,
            "faults": dict(sorted(self.faults.items())),
        }


def summarize(results: Sequence[SessionResult], plan: MatchPlan) -> MatchSummary:
    """The match's summary from its recorded sessions (any order)."""
    edges = block_edges(results, plan.candidate)
    state = None
    if plan.sprt is not None:
        state = run_sprt(edges, plan.sprt)
        edges = edges[: state.blocks]
    faults: Counter[str] = Counter()
    for result in results:
        if result.block < len(edges):
            faults.update({seat.bot: seat.faults for seat in result.seats if seat.faults})
    sizes = {result.table_size for result in results}
    opponents = sorted({seat.bot for result in results for seat in result.seats} - {plan.candidate})
    table_size = max(sizes) if sizes else 0
    edge = estimate(edges) if edges else None
    return MatchSummary(
        candidate=plan.candidate,
        opponents=tuple(opponents),
        table_size=table_size,
        edge=edge,
        los=None if edge is None else likelihood_of_superiority(edge),
        blocks=len(edges),
        sessions=len(edges) * table_size,
        played=len(results),
        state=state,
        faults=dict(faults),
    )
