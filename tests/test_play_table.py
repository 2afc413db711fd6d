"""nap play's page messages and seat, without processes: what the page is sent, built from one seat's stream.

The table a page shows is folded from what the referee tells the seat (its decision
requests and its events, through the wire codec as the stream carries them); seeded random
sessions check, after every message, that no card the seat may not see at that moment is
in it. The page server refuses a wrong or missing token; a second tab takes the seat
over; a stale or illegal click is refused; a clock that runs out with no tab open leaves
the table; the command refuses a table that cannot be, in one line. Servers here are
in-process, on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest
from click.testing import CliRunner

from referee.match import FaultKind, SeatPenalized
from referee.rules import (
    DECLINE_EXCHANGE,
    DECLINE_WIDOW,
    PASS,
    PEEP,
    Bid,
    Card,
    Exchange,
    FaultPolicy,
    Session,
    TakeWidow,
    get_profile,
    record_of,
)
from referee.wire._gen.nap.v1 import nap_pb2
from referee.wire.botstream import RequestViews, read_batch
from referee.wire.codec import request_to_proto, told_from_proto, told_to_proto
from tests.play_helpers import visible_by_moment
from tournaments.cli import main
from tournaments.store.database import Store
from tournaments.web.play import PAGE_FILES, told_everything
from tournaments.web.seat import PersonSeat, Seating
from tournaments.web.server import REFUSED, PageServer, static_folder
from tournaments.web.table import Decision, SeatTable, action_entry, cards_in, policy_note

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from referee.rules import Profile
    from referee.wire.botstream import Request

TABLE = "0123456789abcdef"


def _request(session: Session, seat: int, request_id: int, deadline_ms: int = 60_000) -> Request:
    """The decision request the referee would send ``seat`` now, read back as the SDK reads it."""
    message = request_to_proto(
        session.view(seat), table=TABLE, request_id=request_id, deadline_ms=deadline_ms, time_bank_ms=0
    )
    batch = nap_pb2.Batch()
    batch.requests.append(message)
    return read_batch(batch).requests[0]


def _play_watched(profile: Profile, *, seed: int, seat: int) -> tuple[Session, list[dict[str, Any]]]:
    """A seeded random session, with every snapshot ``seat``'s page would get, in order."""
    rng = random.Random(seed)
    session = Session(profile, table_size=4 if profile.name != "peep" else 3, seed=seed)
    names = tuple(f"bot{n}" for n in range(session.table_size))
    table = SeatTable(seat=seat, names=names, rules=session.profile)
    views = RequestViews()
    snapshots: list[dict[str, Any]] = []

    def tell(events: object, deal: int) -> None:
        for told in session.tell(seat, events, deal=deal):  # type: ignore[arg-type]
            wire = told_from_proto(told_to_proto(told, table=TABLE, seat=seat))
            assert wire == told, "the codec gives back what the seat was told"
            assert wire is not None
            table.tell(wire)
            snapshots.append(table.snapshot())

    tell(session.opening, 0)
    ids = iter(range(1, 10_000))
    while not session.over:
        legal = session.legal_actions()
        if session.to_act == seat:
            request = _request(session, seat, next(ids))
            table.see(Decision(request.request_id, views.view(request), 60_000, tuple(request.legal_actions)))
            snapshots.append(table.snapshot())
            table.answered()
        deal = len(session.deals) - 1
        tell(session.apply(rng.choice(legal)), deal)
    return session, snapshots


@pytest.mark.parametrize(
    ("profile", "seed", "seat"),
    [("heather", 3, 0), ("full-ladder", 4, 2), ("peep", 5, 1), ("purchase", 6, 3), ("ecarte", 7, 0)],
)
def test_the_page_is_sent_only_what_the_seat_may_see(profile: str, seed: int, seat: int) -> None:
    """After every request and event, a snapshot's cards are among those the seat's views reveal then."""
    session, snapshots = _play_watched(get_profile(profile), seed=seed, seat=seat)
    allowed = visible_by_moment(record_of(session), seat)
    assert len(snapshots) > 40
    for snapshot in snapshots:
        moment = (snapshot["deal"], snapshot["played"])
        assert moment in allowed, f"the page is at {moment}, which the session never was"
        leaked = cards_in(snapshot) - allowed[moment]
        assert not leaked, f"at deal {moment[0]} after {moment[1]} cards the page was sent {sorted(leaked)}"
    last = snapshots[-1]
    assert last["over"] is not None
    assert last["balances"] == list(session.balances)
    assert last["over"]["winners"] == list(session.winners)


def test_a_decision_shows_the_views_hand_and_legal_actions() -> None:
    """A request's snapshot holds the view's hand and one entry per legal action, as the referee spells it."""
    session = Session(get_profile("heather"), table_size=3, seed=11)
    seat = session.to_act
    assert seat is not None
    table = SeatTable(seat=seat, names=("a", "b", "c"), rules=session.profile)
    request = _request(session, seat, 7)
    table.see(Decision(7, RequestViews().view(request), 5000, tuple(request.legal_actions)))
    snapshot = table.snapshot(remaining_ms=1234)
    assert snapshot["hand"] == [card.text for card in session.view(seat).hand]
    decision = snapshot["decision"]
    assert decision["request"] == 7
    assert decision["remaining_ms"] == 1234
    assert [entry["action"] for entry in decision["actions"]] == list(request.legal_actions)
    assert json.loads(json.dumps(snapshot)) == snapshot, "the snapshot is plain JSON"


def test_a_substitution_is_told_in_the_log_and_ends_the_decision() -> None:
    """The referee's penalty notice for this seat clears its pending decision and says what was played."""
    session = Session(get_profile("heather"), table_size=3, seed=11)
    seat = session.to_act
    assert seat is not None
    table = SeatTable(seat=seat, names=("a", "b", "c"), rules=session.profile)
    request = _request(session, seat, 7)
    table.see(Decision(7, RequestViews().view(request), 5000, tuple(request.legal_actions)))
    table.tell(SeatPenalized(seat=seat, deal=0, fault=FaultKind.LATE, substitute=PASS))
    assert table.decision is None
    assert table.log[-1] == "Your fault (late): the referee played pass instead"


@pytest.mark.parametrize(
    "notice",
    [
        SeatPenalized(seat=2, deal=3, fault=FaultKind.LATE, substitute=Card("QH")),
        SeatPenalized(seat=0, deal=1, fault=FaultKind.DISCONNECT, substitute=PASS),
        SeatPenalized(seat=1, deal=0, fault=FaultKind.ILLEGAL),
    ],
)
def test_a_penalty_notice_reads_back_as_it_was_told(notice: SeatPenalized) -> None:
    """``told_from_proto`` inverts ``told_to_proto`` for penalty notices too (substitute or revoke)."""
    assert told_from_proto(told_to_proto(notice, table=TABLE, seat=1)) == notice


def test_action_entries_label_every_kind() -> None:
    """Cards, bids, exchanges, the peep and the widow each get a kind, their cards and a label."""
    heather = get_profile("heather")
    assert action_entry("QH", Card("QH"), heather) == {
        "action": "QH",
        "kind": "card",
        "cards": ["QH"],
        "label": "Q\u2665",
    }
    assert action_entry("nap", Bid("nap"), heather)["label"] == heather.contract("nap").label
    assert action_entry("pass", PASS, heather)["label"] == "Pass"
    swap = Exchange((Card("2C"), Card("9H")))
    assert action_entry(str(swap), swap, None)["cards"] == ["2C", "9H"]
    assert action_entry(str(DECLINE_EXCHANGE), DECLINE_EXCHANGE, None)["label"] == "Keep my hand"
    assert action_entry("peep", PEEP, None)["kind"] == "peep"
    give = TakeWidow(Card("10S"))
    assert action_entry(str(give), give, None) == {
        "action": "widow:10S",
        "kind": "widow",
        "cards": ["10S"],
        "label": "Give 10\u2660 for the widow",
    }
    assert action_entry(str(DECLINE_WIDOW), DECLINE_WIDOW, None)["label"] == "Leave the widow"


def test_the_policy_note_says_what_happens_at_the_deadline() -> None:
    """The page's note names the profile's fault policy, the clock and the fault limit."""
    substitute = policy_note(FaultPolicy.SUBSTITUTE, decision_ms=60_000, fault_limit=10)
    assert "60 s per decision" in substitute
    assert "lowest legal card" in substitute
    assert "after 10 faults" in substitute
    assert "revoke" in policy_note(FaultPolicy.REVOKE, decision_ms=1500, fault_limit=0)


# ---------------------------------------------------------------------------- the servers


def _serve(seat: PersonSeat, body: Callable[[PageServer], Awaitable[None]]) -> None:
    """Run ``body`` against a page server of ``seat`` on 127.0.0.1, in this process."""

    async def main() -> None:
        server = PageServer(folder=static_folder("play.html"), files=PAGE_FILES, handlers={"ws": seat.socket})
        await server.start()
        try:
            await body(server)
        finally:
            await seat.close_tabs()
            await server.stop()

    asyncio.run(main())


def _seat(left: list[bool] | None = None) -> PersonSeat:
    return PersonSeat(hello={"name": "ann"}, on_leave=lambda: (left if left is not None else []).append(True))


async def _next(socket: aiohttp.ClientWebSocketResponse, kind: str) -> dict[str, Any]:
    """The next message of ``kind`` on ``socket`` (others skipped)."""
    while True:
        message = await asyncio.wait_for(socket.receive_json(), 10)
        if message["type"] == kind:
            return dict(message)


def test_a_wrong_or_missing_token_is_refused() -> None:
    """Without the token, or with another, every path is 403 with a message; with it, the page and files."""

    async def body(server: PageServer) -> None:
        base = f"http://127.0.0.1:{server.port}"
        async with aiohttp.ClientSession() as client:
            for path in ("/", "/play.js", "/wrong/", f"/{server.token}x/", f"/x{server.token}/ws"):
                async with client.get(base + path) as response:
                    assert response.status == 403, path
                    assert (await response.text()).strip() == REFUSED
            async with client.get(server.url) as response:
                assert response.status == 200
                assert "<title>Nap Arena: your table</title>" in await response.text()
                assert "default-src 'self'" in response.headers["Content-Security-Policy"]
            async with client.get(server.url + "play.js") as response:
                assert response.status == 200
            async with client.get(server.url + "../server.py") as response:
                assert response.status in {403, 404}
            async with client.get(server.url + "seat.py") as response:
                assert response.status == 404

    _serve(_seat(), body)


def test_a_second_tab_takes_the_seat_over() -> None:
    """The second tab gets the seat (hello, the table); the first is told so and closed."""

    async def body(server: PageServer) -> None:
        address = server.url + "ws"
        async with aiohttp.ClientSession() as client:
            first = await client.ws_connect(address)
            assert (await _next(first, "hello"))["name"] == "ann"
            second = await client.ws_connect(address)
            assert (await _next(second, "hello"))["name"] == "ann"
            replaced = await _next(first, "replaced")
            assert "another tab" in replaced["message"]
            closing = await asyncio.wait_for(first.receive(), 10)
            assert closing.type in {
                aiohttp.WSMsgType.CLOSE,
                aiohttp.WSMsgType.CLOSED,
                aiohttp.WSMsgType.CLOSING,
            }
            await second.close()

    _serve(_seat(), body)


def test_the_page_answers_the_pending_decision_and_nothing_else() -> None:
    """A click for another request, or an illegal action, is refused with a message; a legal one answers."""
    session = Session(get_profile("heather"), table_size=3, seed=11)
    seat_number = session.to_act
    assert seat_number is not None
    seat = _seat()
    seat.expect(TABLE, Seating(("a", "b", "c"), seat_number, 1, 1))
    request = _request(session, seat_number, 41)

    async def body(server: PageServer) -> None:
        async with aiohttp.ClientSession() as client:
            page = await client.ws_connect(server.url + "ws")
            await _next(page, "hello")
            deciding = asyncio.create_task(seat.decide([request], RequestViews(), session.profile))
            snapshot = await _next(page, "table")
            assert snapshot["decision"]["request"] == 41
            assert snapshot["names"] == ["a", "b", "c"]
            await page.send_json({"type": "act", "request": 40, "action": "pass"})
            assert "decision is over" in (await _next(page, "refused"))["message"]
            await page.send_json({"type": "act", "request": 41, "action": "blucher"})
            assert "not one of the legal actions" in (await _next(page, "refused"))["message"]
            legal = snapshot["decision"]["actions"][-1]["action"]
            await page.send_json({"type": "act", "request": 41, "action": legal})
            answers = await asyncio.wait_for(deciding, 10)
            assert [(a.request_id, a.action) for a in answers] == [(41, legal)]
            await page.close()

    _serve(seat, body)


def test_a_clock_that_runs_out_with_no_tab_leaves_the_table() -> None:
    """No answer: nothing is sent (the referee's policy plays); with no tab open the seat also leaves."""
    session = Session(get_profile("heather"), table_size=3, seed=11)
    seat_number = session.to_act
    assert seat_number is not None
    left: list[bool] = []
    seat = _seat(left)

    async def main() -> None:
        answers = await seat.decide([_request(session, seat_number, 9, deadline_ms=10)], RequestViews(), None)
        assert answers == ()

    asyncio.run(main())
    assert left == [True]
    assert seat.left


def test_the_driver_waits_until_the_referee_closed_the_table_or_the_stream_ended() -> None:
    """The page is told "done" only after all of a session: the seat waits for the referee's close.

    The referee hands over a finished session while its last events are still on their way
    to the seat; the driver waits for the table's close (which comes after them), or for
    the seat's stream to end (a seat that left hears nothing more).
    """
    seat = _seat()
    seat.expect(TABLE, Seating(("a", "b", "c"), 0, 1, 1))

    async def main() -> None:
        stream: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiting = asyncio.create_task(told_everything(seat, TABLE, connections=[stream]))
        await asyncio.sleep(0.01)
        assert not waiting.done(), "the table is not closed yet"
        seat.closed(TABLE)
        await asyncio.wait_for(waiting, 10)
        seat.expect("other", Seating(("a", "b", "c"), 0, 2, 2))
        waiting = asyncio.create_task(told_everything(seat, "other", connections=[stream]))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        stream.set_result(None)  # the seat's stream ended (it left): nothing more will come
        await asyncio.wait_for(waiting, 10)

    asyncio.run(main())


# ---------------------------------------------------------------------------- the command


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["-b", "random", "-b", "r2=random", "--seat", "5"], "--seat must be 0 to 2 at a table of 3, not 5"),
        (
            ["-b", "random", "-b", "r2=random", "--name", "r2"],
            "'r2' is also a bot's name: choose another --name",
        ),
        (["-b", "random"], "1 bots and you make 2 players: "),
        ([], "nap play needs bots to play against: --bot peel --bot pimc, say"),
    ],
)
def test_a_table_that_cannot_be_is_one_line(tmp_path: Path, args: list[str], error: str) -> None:
    """A bad seat, a name taken by a bot, too few players: one line, exit 1, before anything starts."""
    result = CliRunner().invoke(
        main, ["play", *args, "--sandbox", "off", "--no-browser", "--db", str(tmp_path / "nap.db")]
    )
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"Error: {error}")
    with Store.open(tmp_path / "nap.db") as store:
        assert not store.tournaments(), "nothing was stored"
