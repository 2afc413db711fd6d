"""The runner and a spectator, with real worker and bot processes: asked only when watched.

A run without a watcher never asks a host for its tables (every question raises here);
a watched run on worker processes forwards the public events of a table in play over
the workers' pipes, and they are the stored log's events, from the start of the session.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, NoReturn

import pytest

from referee.rules import SessionRecord
from tournaments.plan.config import TournamentConfig
from tournaments.plan.entries import example_bot
from tournaments.play.executors.workers import PoolTables, WorkerPool
from tournaments.play.observers import RunObserver
from tournaments.play.runner import RunOptions, run_tournament, run_tournament_async
from tournaments.play.tables import TableEvents, TableFollower, TableSource, public_events
from tournaments.store.database import Store
from tournaments.store.logs import decode_log

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

pytestmark = pytest.mark.slow

BOTS = (example_bot("random", name="a"), example_bot("random", name="b"), example_bot("random", name="c"))


def config(*, workers: int, sessions: int = 6) -> TournamentConfig:
    return TournamentConfig(
        name="watched", bots=BOTS, table_size=3, sessions=sessions, seed=3, workers=workers
    )


def never(*_args: object, **_kwargs: object) -> NoReturn:
    msg = "a run that nobody watches asked for its tables"
    raise AssertionError(msg)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_without_a_watcher_asks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    """No question reaches a host, no worker is asked, no record is kept for a spectator."""
    monkeypatch.setattr(TableFollower, "tables", never)
    monkeypatch.setattr(TableFollower, "events", never)
    monkeypatch.setattr(WorkerPool, "ask", never)
    monkeypatch.setattr(PoolTables, "tables", never)
    kept: list[object] = []
    ended = TableFollower.ended

    def ending(self: TableFollower, table: str, record: SessionRecord | None) -> None:
        ended(self, table, record)
        kept.extend(self._ended)  # what the follower keeps is the point

    monkeypatch.setattr(TableFollower, "ended", ending)
    with Store.open(tmp_path / "nap.db") as store:
        tournament = run_tournament(config(workers=workers), store=store, logs_root=tmp_path / "logs")
        assert store.tournament(tournament).status == "finished"
        assert len(store.session_results(tournament)) == 6
    assert kept == []
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in tmp_path.iterdir() if p.name.startswith(("nap.db", "logs"))
    )


class _Spectator(RunObserver):
    """Hands the tables in play on to ``hand``."""

    def __init__(self, hand: Callable[[TableSource], None]) -> None:
        self.hand = hand

    def tables(self, source: TableSource) -> None:
        self.hand(source)


def test_a_watched_run_forwards_public_events_from_its_workers(tmp_path: Path) -> None:
    """Events asked for over the workers' pipes are those the stored log replays to, in order."""
    sources: list[TableSource] = []
    handed = asyncio.Event()
    seen: dict[tuple[int, int], list[object]] = {}

    def hand(source: TableSource) -> None:
        sources.append(source)
        handed.set()

    async def watch() -> None:
        await handed.wait()
        source = sources[0]
        assert source.unavailable is None
        while True:
            for table in await source.tables():
                events = seen.setdefault((table.block, table.rotation), [])
                found = await source.events(table.table, len(events))
                if isinstance(found, TableEvents):
                    assert found.since == len(events)
                    events.extend(found.events)
            await asyncio.sleep(0.05)

    async def play(store: Store) -> int:
        watcher = asyncio.create_task(watch())
        try:
            options = RunOptions(observers=(_Spectator(hand),))
            return await run_tournament_async(
                config(workers=2, sessions=12), store=store, logs_root=tmp_path / "logs", options=options
            )
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    with Store.open(tmp_path / "nap.db") as store:
        tournament = asyncio.run(play(store))
        assert isinstance(sources[0], PoolTables)
        assert any(seen.values()), "no table was seen in play"
        for row in store.sessions_by_id(store.session_ids(tournament=tournament)):
            events = seen.get((row.block, row.rotation))
            if not events:
                continue
            log = decode_log(store.log(row.id), name="log")
            stored = public_events(SessionRecord.from_json(log["record"]))  # type: ignore[arg-type]
            assert tuple(events) == stored[: len(events)]
