"""Watching a run, without processes: the public feed of a table, the page's payloads, the token.

The feed is the engine's events replayed from a record: no event may hold a card before
it is played (so no hand), and what a follower is asked for starts where the page is.
The server refuses every path without its token (a real aiohttp server on 127.0.0.1:0,
in this process).
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import TYPE_CHECKING, Any, cast

import aiohttp
import pytest

from referee.match.faults import Fault, FaultKind
from referee.rules import DEFAULT_PROFILE, Card, CardPlayed, DealStarted, Session, record_of
from tournaments.play.observers import RunProgress, RunStart
from tournaments.play.tables import NoTables, TableFollower, TableInPlay, public_events
from tournaments.results import SeatResult, SessionResult
from tournaments.stats.standings import compute_standings
from tournaments.web.watch import Watch
from tournaments.web.watch_feed import RunFeed, event_json, standings_json

if TYPE_CHECKING:
    from referee.rules import SessionRecord
    from tournaments.store.database import Store


def played_record(seed: int, *, actions: int | None = None) -> SessionRecord:
    """A session of the default profile played with random legal actions (all, or the first ``actions``)."""
    session = Session(DEFAULT_PROFILE, table_size=4, seed=seed)
    chooser = random.Random(seed)
    done = 0
    while not session.over and (actions is None or done < actions):
        session.apply(chooser.choice(session.legal_actions()))
        done += 1
    return record_of(session)


def cards_in(value: object) -> set[str]:
    """Every card text anywhere in a JSON value."""
    texts = {str(card) for card in _all_cards()}
    if isinstance(value, str):
        return {value} & texts
    if isinstance(value, list):
        return set().union(*(cards_in(item) for item in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(cards_in(item) for item in value.values())) if value else set()
    return set()


def _all_cards() -> tuple[Card, ...]:
    return DEFAULT_PROFILE.pack


class TestPublicFeed:
    """A table's feed: the engine's events, each card only once played."""

    @pytest.mark.parametrize("seed", [1, 2, 3])
    @pytest.mark.parametrize("actions", [0, 7, 30, None])
    def test_no_card_is_shown_before_it_is_played(self, seed: int, actions: int | None) -> None:
        record = played_record(seed, actions=actions)
        played: list[tuple[int, str]] = []
        for number, dealt in enumerate(record.deals):
            played.extend((number, str(a)) for a in dealt.actions if isinstance(a, Card))
        seen: list[tuple[int, str]] = []
        deal = -1
        for event in public_events(record):
            data = event_json(event)
            if isinstance(event, DealStarted):
                deal = event.deal
            if isinstance(event, CardPlayed):
                seen.append((deal, data["card"]))
            elif data["kind"] != "TrickWon":  # a trick repeats its cards, once played
                assert not cards_in(data), data
        assert seen == played

    def test_the_feed_is_the_whole_record_replayed(self) -> None:
        record = played_record(5)
        events = public_events(record)
        assert type(events[0]).__name__ == "DealStarted"
        assert type(events[-1]).__name__ == "SessionOver"
        assert sum(type(e).__name__ == "DealSettled" for e in events) == len(record.deals)

    def test_event_json_names_the_kind_and_writes_cards_as_text(self) -> None:
        assert event_json(CardPlayed(2, Card("QH"))) == {"kind": "CardPlayed", "seat": 2, "card": "QH"}


class TestFollower:
    """What a host keeps for a spectator: nothing until one asks."""

    def table(self, name: str = "t1") -> TableInPlay:
        return TableInPlay(table=name, block=3, rotation=1, bots=("a", "b", "c", "d"), deals=8)

    def test_nothing_is_kept_when_nobody_watches(self) -> None:
        follower = TableFollower()
        follower.started(self.table())
        follower.ended("t1", played_record(1))
        assert follower.events("t1", 0, live=None) is None
        assert follower.tables() == ()

    def test_events_start_where_the_page_is(self) -> None:
        follower = TableFollower()
        follower.started(self.table())
        assert follower.tables() == (self.table(),)
        live = played_record(1, actions=20)
        first = follower.events("t1", 0, live=live)
        assert first is not None
        assert not first.over
        later = follower.events("t1", 5, live=live)
        assert later is not None
        assert later.since == 5
        assert later.events == first.events[5:]

    def test_a_watched_table_that_ends_gives_its_last_events(self) -> None:
        follower = TableFollower()
        follower.started(self.table())
        follower.tables()  # a spectator looks
        record = played_record(1)
        follower.ended("t1", record)
        ended = follower.events("t1", 0, live=None)
        assert ended is not None
        assert ended.over
        assert ended.events == public_events(record)
        assert follower.tables() == ()

    def test_a_run_on_ray_says_why_no_table_shows(self) -> None:
        source = NoTables("the Ray executor does not forward the tables in play")
        assert source.unavailable is not None
        assert asyncio.run(source.tables()) == ()
        assert asyncio.run(source.events("t1", 0)) is None


def result(block: int, rotation: int, chips: dict[str, int], faults: tuple[Fault, ...] = ()) -> SessionResult:
    top = max(chips.values())
    winners = sum(value == top for value in chips.values())
    return SessionResult(
        tournament=1,
        block=block,
        rotation=rotation,
        board_seed=100 + block,
        seats=tuple(
            SeatResult(seat=seat, bot=bot, chips=value, win_share=1 / winners if value == top else 0.0)
            for seat, (bot, value) in enumerate(chips.items())
        ),
        faults=faults,
    )


START = RunStart(
    tournament=1, name="t", resume="nap tournament resume 1", progress=RunProgress(recorded=3, sessions=12)
)


class TestPayloads:
    """The progress, faults and standings the page is sent."""

    def test_progress_counts_earlier_runs_and_the_rate_skips_start_up(self) -> None:
        feed = RunFeed()
        feed.started(START)
        assert feed.status_json(0.0)["done"] == 3
        assert feed.rate(5.0) is None
        for when in (10.0, 11.0, 12.0):
            feed.session(result(0, 0, {"a": 1, "b": -1}), now=when)
        status = feed.status_json(12.0)
        assert (status["done"], status["total"]) == (6, 12)
        assert status["rate"] == pytest.approx(1.0)

    def test_faults_are_counted_by_bot_and_kind(self) -> None:
        feed = RunFeed()
        feed.started(START)
        late = Fault(
            kind=FaultKind.LATE, bot="a", table="t", seat=0, deal=2, decision=4, elapsed_ms=900.0, detail=""
        )
        feed.session(result(1, 2, {"a": -3, "b": 3}, faults=(late, late)), now=1.0)
        faults = feed.status_json(1.0)["faults"]
        assert faults["total"] == 2
        assert faults["by_bot"] == [{"bot": "a", "kind": "late", "count": 2}]
        assert faults["latest"][0] == {
            "bot": "a", "kind": "late", "block": 1, "rotation": 2, "deal": 2, "detail": "",
        }  # fmt: skip

    def test_standings_are_written_as_the_standings_file_writes_them(self) -> None:
        results = [
            result(block, rotation, {"a": 2 + block, "b": -2 - block})
            for block in range(3)
            for rotation in range(2)
        ]
        payload = standings_json(compute_standings(results))
        assert payload["sessions"] == 6
        assert [line["bot"] for line in payload["bots"]] == ["a", "b"]
        top = payload["bots"][0]
        assert top["sessions"] == 6
        assert top["chips_mean"] == pytest.approx(3.0)
        assert top["chips"].startswith("+3.00 ± ")
        assert top["rank"] in {"1", "1="}
        assert payload["bots"][1]["los_next"] == "-"


class _NoStore:
    """A store that is never read (no run starts in these tests)."""


async def _fetch(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with session.get(url) as response:
        return response.status, await response.text()


class TestServer:
    """Only the address with the token gets anything."""

    def test_wrong_or_missing_token_is_refused(self) -> None:
        async def check() -> dict[str, Any]:
            watch = Watch(store=cast("Store", _NoStore()))
            watch.bind()
            base = f"http://127.0.0.1:{watch.port}"
            found: dict[str, Any] = {}
            async with watch, aiohttp.ClientSession() as session:
                found["page"] = await _fetch(session, watch.url)
                found["script"] = await _fetch(session, watch.url + "watch.js")
                found["root"] = await _fetch(session, base + "/")
                found["wrong"] = await _fetch(session, base + "/not-the-token/")
                found["wrong script"] = await _fetch(session, base + "/not-the-token/watch.js")
                found["prefix"] = await _fetch(session, base + "/" + watch.token[:-1] + "/")
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await session.ws_connect(base + "/nope/ws")
                found["ws wrong"] = refused.value.status
                async with session.ws_connect(watch.url + "ws") as ws:
                    found["ws"] = json.loads((await ws.receive()).data)
            return found

        found = asyncio.run(check())
        assert found["page"][0] == 200
        assert 'data-state="starting"' in found["page"][1]
        assert found["script"][0] == 200
        for refused in ("root", "wrong", "wrong script", "prefix"):
            status, text = found[refused]
            assert status == 403, refused
            assert "token" in text
        assert found["ws wrong"] == 403
        assert found["ws"]["type"] == "status"
        assert found["ws"]["state"] == "starting"

    def test_a_taken_port_is_one_clear_error(self) -> None:
        first = Watch(store=cast("Store", _NoStore()))
        first.bind()
        try:
            second = Watch(store=cast("Store", _NoStore()), port=first.port)
            with pytest.raises(Exception, match=r"cannot serve the watch page on 127\.0\.0\.1:\d+"):
                second.bind()
        finally:
            asyncio.run(_close(first))

    def test_as_an_observer_it_shows_the_start_the_sessions_and_the_tables(self) -> None:
        watch = Watch(store=cast("Store", _NoStore()), clock=lambda: 5.0)
        watch.started(START)
        watch.committed(result(0, 0, {"a": 1, "b": -1}), RunProgress(recorded=4, sessions=12))
        source = NoTables("not here")
        watch.tables(source)
        status = watch._status(5.0)  # noqa: SLF001 - what the page is sent
        assert (status["tournament"], status["done"], status["total"]) == (1, 4, 12)
        assert status["tables_unavailable"] == "not here"


async def _close(watch: Watch) -> None:
    async with watch:
        pass
