"""The declarer record in the pool variants: recorded from the deals, stored, aggregated, shown.

Each declaration carries the chips its declarer took from the pool, whether it took the
widow and how many cards it had exchanged; the standings sum them per bot and show them
only on a profile with a pool (or where they are not all zeros), so heather's standings
look as they always did.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from rich.console import Console

from clients.bots.peel import PeelBot
from clients.bots.random_bot import RandomBot
from referee.match import TimeLimits
from referee.rules import (
    CardsExchanged,
    DealSettled,
    PoolClaimed,
    SessionRecord,
    WidowPeeked,
    WidowTaken,
    get_profile,
)
from tests.old_schemas import create_old_database
from tournaments.cli import main
from tournaments.cli.progress import standings_table
from tournaments.play.blocks import BlockRun, play_block_in_process
from tournaments.report.publish import POOL_HEADER, from_json, render_html, render_markdown, to_json
from tournaments.report.session_text import walk
from tournaments.results import Declaration, SeatResult, SessionResult
from tournaments.stats.standings import Standings, compute_standings
from tournaments.stats.tally import PoolRecord
from tournaments.store import schema as store_schema
from tournaments.store.database import Store

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from clients.sdk import Bot

POOL_PROFILES = ("purchase", "ecarte", "peep")
BOTS = ("random", "peel", "random-2")


def play(profile: str, *, blocks: int) -> list[tuple[SessionRecord, SessionResult, dict[str, object]]]:
    """Seeded blocks of random, peel and another random, in process: each session's record, result and log."""
    factories: dict[str, Callable[[], Bot]] = {
        "random": lambda: RandomBot(seed=5),
        "peel": PeelBot,
        "random-2": lambda: RandomBot(seed=6),
    }
    played = []
    for index in range(blocks):
        spec = BlockRun(
            tournament=1,
            index=index,
            board_seed=55 + index,  # a board set on which each pool profile has a pool taken
            bots=BOTS,
            profile=get_profile(profile),
            time_limits=TimeLimits(),
            rotations=(0, 1, 2),
        )
        for finished in play_block_in_process(spec, factories):
            record = finished.log["record"]
            assert isinstance(record, dict)
            played.append((SessionRecord.from_json(record), finished.result, finished.log))
    return played


def declarations_from_events(record: SessionRecord) -> list[list[Declaration]]:
    """Per seat, its declarations as the record's events tell them (not as the code under test reads them)."""
    declared: list[list[Declaration]] = [[] for _ in range(record.table_size)]
    exchanged: dict[int, int] = {}
    widow: bool | None = None
    peeked: set[int] = set()
    settled: DealSettled | None = None
    for step in walk(record):
        if step.action is None:  # a new deal
            exchanged, widow, peeked, settled = {}, None, set(), None
        for event in step.events:
            if isinstance(event, CardsExchanged):
                exchanged[event.seat] = event.count
            elif isinstance(event, WidowPeeked):
                peeked.add(event.seat)
            elif isinstance(event, WidowTaken):
                widow = event.taken
            elif isinstance(event, DealSettled):
                settled = event
                if event.declarer is not None and event.contract is not None:
                    declared[event.declarer].append(
                        Declaration(
                            event.contract,
                            bool(event.made),
                            widow_taken=widow,
                            peeked=None if widow is None else event.declarer in peeked,
                            exchanged=exchanged.get(event.declarer, 0),
                        )
                    )
            elif isinstance(event, PoolClaimed):
                assert settled is not None
                assert settled.declarer == event.seat
                last = declared[event.seat][-1]
                declared[event.seat][-1] = Declaration(
                    last.contract,
                    last.made,
                    pool_chips=event.amount,
                    widow_taken=last.widow_taken,
                    peeked=last.peeked,
                    exchanged=last.exchanged,
                )
    return declared


class TestRecorded:
    """A session's declarations hold what its declarers did with the exchanges, the widow and the pool."""

    @pytest.mark.slow
    @pytest.mark.parametrize("profile", POOL_PROFILES)
    def test_each_declaration_matches_the_records_events(self, profile: str) -> None:
        """Seeded sessions of each profile: each declaration as the events tell it; each figure used."""
        declarations = []
        for record, result, log in play(profile, blocks=1):
            expected = declarations_from_events(record)
            assert [list(seat.declarations) for seat in result.seats] == expected
            declarations += [d for seat in result.seats for d in seat.declarations]
            logged = log["result"]
            assert isinstance(logged, dict)
            assert [
                [
                    (d["pool_chips"], d["widow_taken"], d["peeked"], d["exchanged"])
                    for d in seat["declarations"]
                ]
                for seat in logged["seats"]
            ] == [[(d.pool_chips, d.widow_taken, d.peeked, d.exchanged) for d in seat] for seat in expected]
        assert any(d.pool_chips for d in declarations)
        if get_profile(profile).widow:
            assert {d.widow_taken for d in declarations} == {True, False}
            assert {d.peeked for d in declarations} == {True, False}
            assert not any(d.exchanged for d in declarations)
        else:
            assert {d.widow_taken for d in declarations} == {None}
            assert {d.peeked for d in declarations} == {None}
            assert any(d.exchanged for d in declarations)

    def test_heather_declarations_and_logs_are_as_before(self) -> None:
        """No pool: the defaults everywhere, and a log's declarations hold only the contract and made."""
        for _, result, log in play("heather", blocks=1):
            for seat in result.seats:
                for declaration in seat.declarations:
                    assert (declaration.pool_chips, declaration.widow_taken, declaration.exchanged) == (
                        0,
                        None,
                        0,
                    )
            logged = log["result"]
            assert isinstance(logged, dict)
            for seat_log in logged["seats"]:
                for item in seat_log["declarations"]:
                    assert set(item) == {"contract", "made"}


POOLED = (
    Declaration("nap", made=True, pool_chips=7, widow_taken=True, peeked=True, exchanged=2),
    Declaration("three", made=False, widow_taken=False, exchanged=1),
    Declaration("four", made=True, widow_taken=None),
)


def pooled_session(tournament: int, *, block: int = 0) -> SessionResult:
    return SessionResult(
        tournament=tournament,
        block=block,
        rotation=0,
        board_seed=1000 + block,
        seats=(
            SeatResult(0, "alpha", 9, 1.0, POOLED),
            SeatResult(1, "beta", -4, 0.0, (Declaration("misere", made=False, widow_taken=True),)),
            SeatResult(2, "gamma", -5, 0.0),
        ),
    )


def write_version_1(db: Path) -> None:
    """A database as schema version 1 left it: one session of a tournament, its declarations."""
    with closing(sqlite3.connect(db)) as conn:
        create_old_database(conn, 1)
        conn.execute(
            "INSERT INTO tournaments (id, name, config, seed, status, created_at)"
            " VALUES (1, 'old', '{}', 7, 'finished', '2026-01-01T00:00:00.000+00:00')"
        )
        conn.execute(
            "INSERT INTO blocks (tournament_id, idx, board_seed, bots)"
            ' VALUES (1, 0, 1000, \'["alpha", "beta", "gamma"]\')'
        )
        conn.execute(
            "INSERT INTO sessions (id, tournament_id, block_idx, rotation, log_path, finished_at)"
            " VALUES (1, 1, 0, 0, 'x.json', '2026-01-01T00:00:00.000+00:00')"
        )
        conn.executemany(
            "INSERT INTO seat_results (session_id, seat, bot, chips, win_share) VALUES (1, ?, ?, ?, ?)",
            [(0, "alpha", 10, 1.0), (1, "beta", -5, 0.0), (2, "gamma", -5, 0.0)],
        )
        conn.executemany(
            "INSERT INTO declarations (session_id, seat, contract, made) VALUES (1, ?, ?, ?)",
            [(0, "nap", 1), (1, "three", 0)],
        )
        conn.commit()


class TestStored:
    """The store keeps the three figures, and a database written before them still opens and reads."""

    def test_round_trip(self, tmp_path: Path) -> None:
        """The pool chips, the widow (taken, left, or none) and the exchanges read back as recorded."""
        with Store.open(tmp_path / "nap.db") as store:
            tournament = store.create_tournament(
                name="pool", config={}, seed=1, blocks=[(0, 1000, ("alpha", "beta", "gamma"))]
            )
            result = pooled_session(tournament)
            store.record_session(result, log=b"a log")
            assert store.session_results(tournament) == [result]

    @pytest.mark.slow
    def test_a_version_1_database_opens_reads_and_takes_new_sessions(self, tmp_path: Path) -> None:
        """A version 1 file is migrated when opened: old declarations read with defaults, new ones in full."""
        db = tmp_path / "old.db"
        write_version_1(db)
        with Store.open(db, check=False) as store:
            [old] = store.session_results(1)
            assert old.seats[0].declarations == (Declaration("nap", made=True),)
            assert old.seats[1].declarations == (Declaration("three", made=False),)
        with closing(sqlite3.connect(db)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == store_schema.SCHEMA_VERSION == 7
        with Store.open(db) as store:  # migrated once: opening again changes nothing
            tournament = store.create_tournament(
                name="pool", config={}, seed=1, blocks=[(0, 1000, ("alpha", "beta", "gamma"))]
            )
            store.record_session(pooled_session(tournament), log=b"a log")
            assert store.session_results(tournament) == [pooled_session(tournament)]
            assert store.session_results(1) == [old]


def pool_standings(*, has_pool: bool = True, results: list[SessionResult] | None = None) -> Standings:
    return compute_standings(
        results or [pooled_session(1, block=0), pooled_session(1, block=1)], has_pool=has_pool
    )


class TestAggregated:
    """Per bot, the pools taken and their chips, the widows taken and made, the cards exchanged."""

    def test_sums_over_the_bots_declarations(self) -> None:
        standings = pool_standings()
        alpha = standings.bot("alpha")
        assert alpha.pool == PoolRecord(
            pools=2,
            pool_chips=14,
            widows=4,
            widows_taken=2,
            widows_taken_made=2,
            widows_peeked=2,
            cards_exchanged=6,
        )
        assert alpha.declarations == 6
        assert alpha.mean_exchanged == 1.0
        beta = standings.bot("beta")
        assert beta.pool == PoolRecord(widows=2, widows_taken=2)
        assert beta.mean_exchanged == 0.0
        gamma = standings.bot("gamma")
        assert gamma.pool.empty
        assert gamma.mean_exchanged is None

    def test_shown_on_a_pool_profile_or_where_not_all_zeros(self) -> None:
        """A pool profile shows the records even when all zeros; elsewhere only records not all zeros show."""
        plain = [
            SessionResult(
                1,
                0,
                0,
                1000,
                (SeatResult(0, "a", 1, 1.0, (Declaration("nap", made=True),)), SeatResult(1, "b", -1, 0.0)),
            )
        ]
        assert not compute_standings(plain).shows_pool
        assert compute_standings(plain, has_pool=True).shows_pool
        assert pool_standings(has_pool=False).shows_pool


class TestShown:
    """The terminal table, standings.md, .json and .html: the pool records on a pool profile only."""

    def test_heather_standings_look_as_before(self) -> None:
        """No pool column, no pool keys: the headers and keys of before (and the rotation check's)."""
        results = [pooled_session(1, block=b) for b in range(2)]
        plain = [
            SessionResult(
                r.tournament,
                r.block,
                r.rotation,
                r.board_seed,
                tuple(
                    SeatResult(
                        s.seat,
                        s.bot,
                        s.chips,
                        s.win_share,
                        tuple(Declaration(d.contract, made=d.made) for d in s.declarations),
                    )
                    for s in r.seats
                ),
            )
            for r in results
        ]
        standings = compute_standings(plain)
        markdown = render_markdown(standings)
        assert (
            "| # | bot | sessions | blocks | chips/session (95% CI) | LOS over next"
            " | win share (95% CI) / chance | declarer made/attempted | faults | rating (Bradley-Terry) |"
        ) in markdown
        data = to_json(standings, title="t")
        assert "has_pool" not in data
        assert set(data["bots"][0]) == {
            "rank",
            "tied",
            "los_next",
            "bot",
            "sessions",
            "blocks",
            "chips_per_session",
            "win_share",
            "expected_win_share",
            "declarer",
            "faults",
            "asked",
            "played_by_referee",
            "unranked",
            "rating",
            "rotation_edge",
            "rotation_flagged",
            "cpu_us",
            "clocked",
            "cpu_ms_per_decision",
        }
        assert POOL_HEADER not in render_html(standings)
        console = Console(width=300, record=True)
        console.print(standings_table(standings))
        assert "pool" not in console.export_text()

    def test_pool_records_in_every_output(self) -> None:
        standings = pool_standings()
        cell = "pools 2 (14 chips); widow 2/4 taken, 2 made, 2 peeked; 1.00 cards exchanged"
        markdown = render_markdown(standings)
        assert POOL_HEADER in markdown
        assert cell in markdown
        assert "| beta |" in markdown
        assert "pools 0 (0 chips); widow 2/2 taken, 0 made, 0 peeked; 0.00 cards exchanged" in markdown
        page = render_html(standings)
        assert f"<th>{POOL_HEADER}</th>" in page
        assert f"<td>{cell}</td>" in page
        console = Console(width=400, record=True)
        console.print(standings_table(standings))
        text = console.export_text()
        assert POOL_HEADER in text
        assert all(part in text for part in cell.split("; "))
        data = json.loads(json.dumps(to_json(standings, title="t")))
        assert data["has_pool"] is True
        alpha = next(line for line in data["bots"] if line["bot"] == "alpha")
        assert alpha["declarer_pool"] == {
            "pools": 2,
            "pool_chips": 14,
            "widows": 4,
            "widows_taken": 2,
            "widows_taken_made": 2,
            "widows_peeked": 2,
            "cards_exchanged": 6,
            "mean_cards_exchanged": 1.0,
        }
        gamma = next(line for line in data["bots"] if line["bot"] == "gamma")
        assert gamma["declarer_pool"]["mean_cards_exchanged"] is None
        assert from_json(data) == standings

    def test_only_the_parts_a_profile_uses(self) -> None:
        """Without a widow or exchanges anywhere (Purchase with none made), the cell says only the pools."""
        results = [
            SessionResult(
                1,
                0,
                0,
                1000,
                (
                    SeatResult(0, "a", 5, 1.0, (Declaration("nap", made=True, pool_chips=5),)),
                    SeatResult(1, "b", -5, 0.0),
                ),
            )
        ]
        standings = compute_standings(results, has_pool=True)
        assert "| pools 1 (5 chips) |" in render_markdown(standings)
        assert "| - |" in render_markdown(standings)


@pytest.mark.slow
def test_a_peep_tournament_publishes_the_pool_records(tmp_path: Path) -> None:
    """`nap tournament run --profile peep`: standings.json and `nap standings --json` carry them."""
    db, out = tmp_path / "nap.db", tmp_path / "out"
    args = ["--profile", "peep", "-b", "random", "-b", "peel", "-b", "random2=random", "-n", "3"]
    ran = CliRunner().invoke(main, ["tournament", "run", *args, "--db", str(db), "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    published = json.loads((out / "t1" / "standings.json").read_text())
    asked = CliRunner().invoke(main, ["standings", "--db", str(db), "--json"])
    assert asked.exit_code == 0, asked.output
    for data in (published, json.loads(asked.stdout)):
        assert data["has_pool"] is True
        random = next(line for line in data["bots"] if line["bot"] == "random")
        assert random["declarer_pool"]["widows"] > 0
