"""Matches: the candidate's edge per block, read in block order; a test that stops them, resumed exactly."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from referee.server import TimeLimits
from tournaments.cli import main
from tournaments.cli.match import SPRT_MAX_SESSIONS, exit_status
from tournaments.errors import StoreError, TournamentInterrupted
from tournaments.plan.candidate_match import MatchMonitor, MatchPlan, block_edge, block_edges, summarize
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import example_bot
from tournaments.play.runner import resume_tournament, run_tournament
from tournaments.report.publish import match_lines
from tournaments.results import SeatResult, SessionResult
from tournaments.stats.sprt import Sprt
from tournaments.store.database import Store

if TYPE_CHECKING:
    from pathlib import Path


def session(block: int, rotation: int, chips: dict[str, int]) -> SessionResult:
    return SessionResult(
        tournament=1,
        block=block,
        rotation=rotation,
        board_seed=block,
        seats=tuple(
            SeatResult(seat=seat, bot=bot, chips=value, win_share=0.0)
            for seat, (bot, value) in enumerate(chips.items())
        ),
    )


def match_results(blocks: int, *, seed: int = 1, edge: int = 3) -> list[SessionResult]:
    """Whole 3-seat blocks of ``new`` against ``old`` and ``old-2``, ``new`` ahead by about ``edge``."""
    rng = random.Random(seed)
    results = []
    for block in range(blocks):
        for rotation in range(3):
            new = edge + rng.randint(-6, 6)
            old = rng.randint(-6, 6)
            results.append(session(block, rotation, {"new": new, "old": old, "old-2": -new - old}))
    return results


class TestEdges:
    def test_the_edge_is_the_candidate_minus_the_average_opponent(self) -> None:
        """new +6 and 0 (mean 3); the others -3 and -3, 0 and 0 (mean -1.5): edge 4.5 = 3 * 3/2."""
        block = [
            session(0, 0, {"new": 6, "old": -3, "old-2": -3}),
            session(0, 1, {"old": 0, "new": 0, "old-2": 0}),
        ]
        assert block_edge(block, "new") == pytest.approx(4.5)

    def test_only_whole_blocks_from_block_zero_in_block_order(self) -> None:
        """Block 2 lacks a rotation: blocks 3 and 4 are not read until it is complete."""
        results = [r for r in match_results(5) if (r.block, r.rotation) != (2, 1)]
        shuffled = random.Random(3).sample(results, len(results))
        edges = block_edges(shuffled, "new")
        assert len(edges) == 2
        assert edges == block_edges(results, "new")
        assert len(block_edges(match_results(5), "new")) == 5

    def test_the_monitor_reads_what_summarize_reads_in_any_order(self) -> None:
        """Sessions committed out of order (as blocks finish) stop the test where a straight read does."""
        plan = MatchPlan(candidate="new", sprt=Sprt(d0=0, d1=3, min_blocks=5))
        results = match_results(300, edge=4)
        straight = summarize(results, plan)
        assert straight.state is not None
        assert straight.state.verdict == "H1"
        assert straight.blocks < 300
        monitor = MatchMonitor(plan)
        for result in random.Random(5).sample(results, len(results)):
            monitor.add(result)
        assert monitor.state == straight.state
        resumed = MatchMonitor(plan, results[: 3 * (straight.blocks - 2)])
        assert not resumed.decided
        for result in results[3 * (straight.blocks - 2) :]:
            resumed.add(result)
        assert resumed.state == straight.state

    def test_the_summary_counts_what_the_test_read(self) -> None:
        plan = MatchPlan(candidate="new", sprt=Sprt(d0=0, d1=3, min_blocks=5))
        results = match_results(300, edge=4)
        summary = summarize(results, plan)
        assert summary.sessions == 3 * summary.blocks
        assert summary.played == 900
        assert summary.edge is not None
        assert summary.edge.n == summary.blocks
        assert summary.verdict.startswith("H1 accepted: new is stronger")
        fixed = summarize(results, MatchPlan(candidate="new"))
        assert (fixed.blocks, fixed.state) == (300, None)
        assert fixed.los is not None
        assert fixed.los > 0.99
        assert fixed.verdict.startswith("fixed-size match")

    def test_faults_in_the_sessions_read_are_counted_and_shown(self) -> None:
        """A faulted decision is the referee's, not the bot's: the summary says how many the edge holds.

        Only the blocks the test read count: a fault in a block played after the stop is left out.
        """
        plan = MatchPlan(candidate="new", sprt=Sprt(d0=0, d1=3, min_blocks=5))
        clean = match_results(300, edge=4)
        read = summarize(clean, plan).blocks

        def faulted(result: SessionResult, bot: str, count: int) -> SessionResult:
            seats = tuple(dataclasses.replace(s, faults=count) if s.bot == bot else s for s in result.seats)
            return dataclasses.replace(result, seats=seats)

        results = [
            faulted(r, "new", 2) if (r.block, r.rotation) in {(0, 0), (read - 1, 2)}
            else faulted(r, "old-2", 7) if r.block == read
            else r
            for r in clean
        ]  # fmt: skip
        summary = summarize(results, plan)
        assert summary.blocks == read
        assert summary.faults == {"new": 4}
        assert summary.to_json()["faults"] == {"new": 4}
        assert match_lines(summary)[-1].startswith("faults in the sessions read: new 4 (the referee played")
        assert summarize(clean, plan).faults == {}
        assert not any(line.startswith("faults") for line in match_lines(summarize(clean, plan)))

    def test_the_sessions_played_and_not_read_are_explained(self) -> None:
        """Sessions past the block where the test decided, or in a block not complete, are kept, not read."""
        plan = MatchPlan(candidate="new", sprt=Sprt(d0=0, d1=3, min_blocks=5))
        results = match_results(300, edge=4)
        summary = summarize(results, plan)
        assert summary.state is not None
        first = match_lines(summary)[0]
        more = summary.played - summary.sessions
        assert first.endswith(
            f"{summary.sessions} sessions read ({summary.played} played: {more} more in blocks after "
            f"block {summary.state.blocks}, where the test decided; kept, not read)"
        )
        fixed = summarize(results[:-1], MatchPlan(candidate="new"))  # the last block lacks a rotation
        assert match_lines(fixed)[0].endswith(
            f"({fixed.played} played: {fixed.played - fixed.sessions} more in blocks not complete, or after "
            "one (a block is read once all its rotations are in); kept, not read)"
        )
        whole = summarize(results, MatchPlan(candidate="new"))
        assert match_lines(whole)[0].endswith(f"{whole.sessions} sessions read")

    def test_the_exit_status_is_the_verdict(self) -> None:
        """0 for H1 and for a match without a test, 3 for H0, 4 undecided: never 1 or 2 (errors, usage)."""
        test = Sprt(d0=0, d1=3, min_blocks=5)
        better = summarize(match_results(300, edge=4), MatchPlan(candidate="new", sprt=test))
        worse = summarize(match_results(300, edge=-4), MatchPlan(candidate="new", sprt=test))
        short = summarize(match_results(4, edge=4), MatchPlan(candidate="new", sprt=test))
        fixed = summarize(match_results(4, edge=-4), MatchPlan(candidate="new"))
        assert [summary.state and summary.state.verdict for summary in (better, worse, short, fixed)] == [
            "H1",
            "H0",
            None,
            None,
        ]
        assert [exit_status(summary) for summary in (better, worse, short, fixed)] == [0, 3, 4, 0]

    def test_a_plan_round_trips_in_the_tournament_config(self) -> None:
        plan = MatchPlan(candidate="new", sprt=Sprt(d0=-1, d1=2, alpha=0.1, beta=0.2, min_blocks=7))
        config = TournamentConfig(name="m", bots=(), table_size=3, sessions=30, seed=1, match=plan)
        assert TournamentConfig.from_json(json.loads(json.dumps(config.to_json()))).match == plan
        assert TournamentConfig.from_json({**config.to_json(), "match": None}).match is None


PEEL_VS_RANDOM = (
    example_bot("peel"),
    example_bot("random", name="random"),
    example_bot("random", name="random-2"),
)


def match_config(**options: object) -> TournamentConfig:
    """Peel against two randoms at three seats (an edge of about 49): H1 of [44, 48], some 25 blocks in.

    A minute a decision: the comparisons of a straight and a resumed match need every
    decision the bot's own, and a loaded machine once made a second too short for one.
    """
    options.setdefault("time_limits", TimeLimits(decision_ms=60_000))
    return TournamentConfig(
        name="peel vs random",
        bots=PEEL_VS_RANDOM,
        table_size=3,
        sessions=900,
        seed=4,
        concurrency=4,
        workers=1,
        match=MatchPlan(candidate="peel", sprt=Sprt(d0=44, d1=48)),
        **options,  # type: ignore[arg-type]
    )


@pytest.mark.slow
class TestPlayedMatches:
    """Real referee, real bot processes."""

    def test_the_test_stops_the_match_and_an_interrupted_one_stops_in_the_same_place(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Played straight, the match stops once the test decides, far short of its 900 sessions.

        Played again with a store that fails after 24 sessions, then resumed: the same
        blocks are read, and the test stops at the same block with the same ratio.
        """
        plan = match_config().match
        assert plan is not None
        with Store.open(tmp_path / "straight.db") as store:
            tournament = run_tournament(match_config(), store=store, logs_root=tmp_path / "logs-1")
            assert store.tournament(tournament).status == "finished"
            straight = summarize(store.session_results(tournament), plan)
        assert straight.state is not None
        assert straight.state.verdict == "H1"
        assert straight.played < 300
        assert straight.played - straight.sessions <= 4 * 3  # at most the blocks in flight

        real_record = Store.record_session
        committed: list[int] = []

        def record(self: Store, result: SessionResult, *, log: bytes) -> int:
            if len(committed) == 24:
                msg = "disk full"
                raise StoreError(msg)
            committed.append(result.block)
            return real_record(self, result, log=log)

        with Store.open(tmp_path / "resumed.db") as store:
            monkeypatch.setattr(Store, "record_session", record)
            with pytest.raises(TournamentInterrupted, match="disk full; tournament 1 stopped after 24"):
                run_tournament(match_config(), store=store, logs_root=tmp_path / "logs-2")
            monkeypatch.undo()
            assert store.tournament(1).status == "interrupted"
            resume_tournament(1, store=store, logs_root=tmp_path / "logs-2")
            assert store.tournament(1).status == "finished"
            resumed = summarize(store.session_results(1), plan)
        assert (resumed.state, resumed.edge, resumed.blocks) == (
            straight.state,
            straight.edge,
            straight.blocks,
        )
        assert resumed.played <= straight.sessions + 2 * 4 * 3  # the resumed run stopped too

    def test_nap_match_prints_its_verdict_and_publishes_it(self, tmp_path: Path) -> None:
        db, out = tmp_path / "nap.db", tmp_path / "out"
        args = ["match", "peel", "random", "-k", "3", "--sprt", "44", "48", "--seed", "4", "--json"]
        result = CliRunner().invoke(main, [*args, "--db", str(db), "--out", str(out)])
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        assert data["sprt"]["verdict"] == "H1"
        assert data["verdict"].startswith("H1 accepted: peel is stronger")
        assert data["opponents"] == ["random", "random-2"]
        assert data["sessions"] == 3 * data["blocks"]
        assert data["los"] > 0.99
        published = json.loads((out / "t1" / "standings.json").read_text(encoding="utf-8"))
        assert published["match"]["sprt"]["verdict"] == "H1"
        text = CliRunner().invoke(main, ["standings", "--db", str(db)]).output
        assert "verdict: H1 accepted: peel is stronger" in text
        status = " ".join(CliRunner().invoke(main, ["tournament", "status", "--db", str(db)]).output.split())
        assert f"test: LLR {data['sprt']['llr']:+.2f} (-2.94, +2.94); H1 accepted: peel is stronger" in status

    def test_nap_match_exits_3_on_h0_and_4_undecided(self, tmp_path: Path) -> None:
        """random is no better than peel: H0, exit status 3; one block, too few to look: exit status 4."""
        base = ["match", "random", "peel", "-k", "3", "--sprt", "0", "3", "--min-blocks", "2", "--seed", "1"]
        worse = CliRunner().invoke(
            main, [*base, "--db", str(tmp_path / "a.db"), "--out", str(tmp_path / "a")]
        )
        assert worse.exit_code == 3, worse.output
        assert "verdict: H0 accepted: random is not stronger" in " ".join(worse.output.split())
        short = [*base, "-n", "3", "--json", "--db", str(tmp_path / "b.db"), "--out", str(tmp_path / "b")]
        undecided = CliRunner().invoke(main, short)
        assert undecided.exit_code == 4, undecided.output
        assert json.loads(undecided.stdout)["verdict"] == "undecided after 1 blocks: neither bound reached"

    @pytest.mark.heavy
    def test_nap_match_pimc_peel_stops_on_its_own_and_prints_its_verdict(self, tmp_path: Path) -> None:
        """The issue's command: pimc (on its counted budget) against three peels, ``--sprt 0 3``.

        pimc's edge over peel at 4 seats is above D1 (docs/statistics.md), so the test
        accepts H1 (with seed 1, after some twenty blocks) and the match stops there, far
        short of the 20,000 sessions it may play. The decision limit is raised so that a
        loaded machine cannot turn slow answers into faults; nothing else differs.
        """
        db = tmp_path / "nap.db"
        args = ["match", "pimc", "peel", "--sprt", "0", "3", "--decision-ms", "10000", "--seed", "1"]
        result = CliRunner().invoke(main, [*args, "--db", str(db), "--out", str(tmp_path / "out")])
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())
        read = re.search(
            r"pimc against peel, peel-2, peel-3 at 4 seats: (\d+) blocks, (\d+) sessions read", text
        )
        assert read is not None, text
        blocks, sessions = int(read[1]), int(read[2])
        assert sessions == 4 * blocks
        assert blocks >= 10  # the minimum before the first look
        test = re.search(
            r"SPRT D0 \+0\.00, D1 \+3\.00, alpha 0\.05, beta 0\.05: LLR ([-+][\d.]+) \(-2\.94, \+2\.94\)",
            text,
        )
        assert test is not None, text
        assert float(test[1]) >= 2.94  # the upper bound, log(19), as printed
        assert (
            "verdict: H1 accepted: pimc is stronger (an edge of +3.00 fits the blocks better than +0.00)"
            in text
        )
        with Store.open(db) as store:
            (match,) = store.tournaments()
            played = len(store.session_results(match.id))
        assert match.status == "finished"
        assert sessions <= played < SPRT_MAX_SESSIONS // 20  # stopped by the test, not by its cap


class TestMatchCommand:
    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["peel"], "give a BASELINE, or an opponent pool with --against"),
            (
                ["peel", "random", "--against", "random"],
                "give a BASELINE, or an opponent pool with --against",
            ),
            (["peel", "random", "--sprt", "3", "0"], "the SPRT needs D0 < D1, got D0 3 and D1 0"),
            (["peel", "random", "--sprt", "0", "3", "--alpha", "0.7"], "alpha must be between 0 and 0.5"),
            (["peel", "--against", "random", "-k", "4"], "1 opponents cannot fill a table of 4"),
            (["peel", "peel-2=random", "-k", "9"], "table size 9 is not allowed"),
            (["peel", "--against", "peel"], "the candidate and an opponent are both named peel"),
        ],
    )
    def test_one_line_and_nothing_played(self, tmp_path: Path, args: list[str], message: str) -> None:
        db = tmp_path / "nap.db"
        result = CliRunner().invoke(main, ["match", *args, "--db", str(db), "--out", str(tmp_path / "out")])
        assert result.exit_code != 0
        assert message in result.output
        assert not (tmp_path / "out").exists()
        if db.exists():
            with Store.open(db) as store:
                assert store.tournaments() == []

    def test_help_names_the_test_and_live_standings_point_to_it(self) -> None:
        shown = CliRunner().invoke(main, ["match", "--help"]).output
        for flag in ("--sprt", "--alpha", "--beta", "--min-blocks", "--against", "--json", "--sessions"):
            assert flag in shown
        live = " ".join(CliRunner().invoke(main, ["tournament", "run", "--help"]).output.split())
        assert "not a stopping rule" in live
        assert "nap match --sprt" in live
