"""The arena's web layer in process: its API and pages over a real arena, through aiohttp's test client.

The arena is real (a temporary database, people made through the service) and its ladder
blocks are played for real in process (:func:`tests.arena_helpers.played_block`: the
built-in bots' policies on the referee's match core), so the logs, replays and ratings
are genuine. One arena is built per module and copied for each test.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import ssl
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from unittest import mock

import aiohttp
import pytest
from aiohttp import web
from aiohttp.streams import StreamReader
from aiohttp.test_utils import TestClient, TestServer, make_mocked_request
from structlog.testing import capture_logs

from referee.rules import CardPlayed, DealStarted, SessionRecord, TrickWon
from tests.arena_helpers import played_block
from tests.arena_web_helpers import (
    ENTRY,
    LIMIT,
    OWN_LOG,
    POLICIES,
    SEATS,
    SETTINGS,
    Built,
    build_arena,
    cards_in,
    in_play,
)
from tournaments.arena import service
from tournaments.arena.board import leaderboard
from tournaments.arena.live import table_view
from tournaments.arena.service import open_arena
from tournaments.arena.web import make_app
from tournaments.plan.versions import pack
from tournaments.play.tables import TableInPlay, public_events
from tournaments.report.audit import open_log

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator
    from pathlib import Path

    from tournaments.arena.service import Arena

T = TypeVar("T")
Client = TestClient[web.Request, web.Application]


@dataclass(frozen=True, slots=True)
class Site:
    """A fresh copy of the module's arena, for one test."""

    arena: Arena
    built: Built


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build_arena(tmp_path_factory.mktemp("arena"))


@pytest.fixture
def site(built: Built, tmp_path: Path) -> Iterator[Site]:
    shutil.copytree(built.folder, tmp_path / "arena")
    arena = open_arena(tmp_path / "arena" / "arena.db", SETTINGS).arena
    yield Site(arena, built)
    arena.close()


def served(arena: Arena, check: Callable[[Client], Awaitable[T]]) -> T:
    """Serve ``arena`` on 127.0.0.1 for as long as ``check`` asks it things through a client."""

    async def run() -> T:
        async with TestClient(TestServer(make_app(arena)), cookie_jar=aiohttp.DummyCookieJar()) as client:
            return await check(client)

    return asyncio.run(run())


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def cookie(token: str) -> dict[str, str]:
    return {"Cookie": f"nap_arena={token}"}


def a_pack(folder: Path, name: str = "mine") -> bytes:
    """A real bot pack, as ``nap bot submit`` makes it."""
    bot = folder / name
    bot.mkdir()
    (bot / "nap-bot.toml").write_text(f'name = "{name}"\nversion = "0.1"\nlanguage = "python"\n')
    (bot / "bot.py").write_text("print('a bot')\n")
    return pack(bot)


class TestTokens:
    """Every token is checked: a wrong or revoked one is a 401; a page that needs one sends to the login."""

    def test_a_wrong_token_is_refused_with_401_even_where_none_is_needed(self, site: Site) -> None:
        wrong = site.built.alice[:-2] + ("AA" if not site.built.alice.endswith("AA") else "BB")

        async def check(client: Client) -> list[tuple[int, Any]]:
            found = []
            for path in ("/api/v1/me", "/api/v1/leaderboard", "/api/v1/submissions"):
                response = await client.get(path, headers=bearer(wrong))
                found.append((response.status, await response.json()))
            return found

        for status, body in served(site.arena, check):
            assert status == 401
            assert body == {"error": "the token is wrong or revoked (Authorization: Bearer nap_...)"}

    def test_no_token_is_401_where_one_is_needed(self, site: Site) -> None:
        async def check(client: Client) -> tuple[int, Any]:
            response = await client.get("/api/v1/me")
            return response.status, await response.json()

        status, body = served(site.arena, check)
        assert status == 401
        assert body["error"].startswith("a token is needed")

    def test_a_revoked_token_is_401(self, site: Site) -> None:
        bob = site.built.bob

        async def check(client: Client) -> list[tuple[int, Any]]:
            before = await client.get("/api/v1/me", headers=bearer(bob))
            revoked = await client.post("/api/v1/people/bob/revoke", headers=bearer(site.built.admin))
            after = await client.get("/api/v1/me", headers=bearer(bob))
            page = await client.get("/me", headers=cookie(bob), allow_redirects=False)
            return [
                (before.status, await before.json()),
                (revoked.status, await revoked.json()),
                (after.status, await after.json()),
                (page.status, page.headers.get("Location")),
            ]

        before, revoked, after, page = served(site.arena, check)
        assert before == (200, {"name": "bob", "admin": False, "scopes": ["submit"]})
        assert revoked == (200, {"revoked": 1})
        assert after[0] == 401
        assert page == (303, "/login?next=%2Fme")

    @pytest.mark.parametrize("path", ["/me", f"/entries/{ENTRY}/log", "/submissions/1"])
    def test_a_personal_page_without_a_token_sends_to_the_login(self, site: Site, path: str) -> None:
        async def check(client: Client) -> tuple[int, str | None, str]:
            response = await client.get(path, allow_redirects=False)
            return response.status, response.headers.get("Location"), response.headers.get("Set-Cookie", "")

        status, location, set_cookie = served(site.arena, check)
        assert status == 303
        assert location == f"/login?next={path.replace('/', '%2F')}"
        assert set_cookie.startswith("nap_arena=")  # an old cookie is cleared
        assert "Max-Age=0" in set_cookie

    def test_a_cookie_does_not_make_a_post(self, site: Site) -> None:
        """A state-changing request counts the Authorization header only: no other site can make one."""

        async def check(client: Client) -> tuple[int, Any]:
            response = await client.post(
                "/api/v1/people", json={"name": "mallory"}, headers=cookie(site.built.admin)
            )
            return response.status, await response.json()

        status, body = served(site.arena, check)
        assert status == 401
        assert "mallory" not in {p.name for p in site.arena.store.people()}
        assert body["error"].startswith("a token is needed")


class TestLogin:
    """The login form keeps the token in an HttpOnly, SameSite=Strict cookie; only this site's forms count."""

    def test_a_good_token_signs_in_and_the_cookie_opens_my_page(self, site: Site) -> None:
        async def check(client: Client) -> tuple[int, str | None, str, int, str]:
            origin = f"http://{client.host}:{client.port}"
            response = await client.post(
                "/login",
                data={"token": site.built.alice, "next": "/me"},
                headers={"Origin": origin},
                allow_redirects=False,
            )
            set_cookie = response.headers.get("Set-Cookie", "")
            mine = await client.get("/me", headers=cookie(site.built.alice))
            return (
                response.status,
                response.headers.get("Location"),
                set_cookie,
                mine.status,
                await mine.text(),
            )

        status, location, set_cookie, mine, page = served(site.arena, check)
        assert (status, location) == (303, "/me")
        assert set_cookie.startswith(f"nap_arena={site.built.alice};")
        attributes = {part.strip().split("=")[0].lower() for part in set_cookie.split(";")}
        assert {"httponly", "samesite", "path", "max-age"} <= attributes
        assert "SameSite=Strict" in set_cookie
        assert "secure" not in attributes  # plain http here; https gets Secure
        assert mine == 200
        assert '<a href="/me" id="signed-in">alice</a>' in page

    def test_over_https_the_cookie_is_secure(self, site: Site) -> None:
        """The login form sent over https: its cookie goes back over https only."""
        body = f"token={site.built.alice}".encode()

        async def check() -> tuple[int, str]:
            app = make_app(site.arena)
            payload = StreamReader(mock.Mock(_reading_paused=False), 1 << 16, loop=asyncio.get_running_loop())
            payload.feed_data(body)
            payload.feed_eof()
            headers = {
                "Sec-Fetch-Site": "same-origin",
                "Content-Type": "application/x-www-form-urlencoded",
                "Content-Length": str(len(body)),
            }
            request = make_mocked_request(
                "POST", "/login", headers, app=app, payload=payload, sslcontext=ssl.create_default_context()
            )
            assert request.secure
            handler = (await app.router.resolve(request)).handler
            response = await handler(request)
            assert isinstance(response, web.Response)
            return response.status, response.cookies["nap_arena"].OutputString()

        status, set_cookie = asyncio.run(check())
        assert status == 303
        assert set_cookie.startswith(f"nap_arena={site.built.alice};")
        assert "Secure" in set_cookie.split("; ")
        assert "HttpOnly" in set_cookie.split("; ")

    def test_a_wrong_token_gets_the_form_again_with_401_and_no_cookie(self, site: Site) -> None:
        async def check(client: Client) -> tuple[int, str, str | None]:
            response = await client.post(
                "/login",
                data={"token": "nap_" + "x" * 43},
                headers={"Origin": f"http://{client.host}:{client.port}"},
                allow_redirects=False,
            )
            return response.status, await response.text(), response.headers.get("Set-Cookie")

        status, page, set_cookie = served(site.arena, check)
        assert status == 401
        assert "that token is wrong or revoked" in page
        assert set_cookie is None

    @pytest.mark.parametrize(
        "headers",
        [{"Origin": "https://elsewhere.example"}, {"Origin": "null"}, {}, {"Sec-Fetch-Site": "cross-site"}],
    )
    def test_a_form_from_another_site_is_refused(self, site: Site, headers: dict[str, str]) -> None:
        async def check(client: Client) -> list[tuple[int, str | None]]:
            login = await client.post(
                "/login", data={"token": site.built.alice}, headers=headers, allow_redirects=False
            )
            logout = await client.post("/logout", headers=headers, allow_redirects=False)
            return [(r.status, r.headers.get("Set-Cookie")) for r in (login, logout)]

        for status, set_cookie in served(site.arena, check):
            assert status == 403
            assert set_cookie is None

    def test_the_login_sends_nowhere_but_this_site(self, site: Site) -> None:
        async def check(client: Client) -> list[str | None]:
            found = []
            for going in (
                "//elsewhere.example/x",
                "https://elsewhere.example/",
                "/\\elsewhere.example",
                "/\t/elsewhere.example",
                "/\n/elsewhere.example",
                "/me",
            ):
                response = await client.post(
                    "/login",
                    data={"token": site.built.alice, "next": going},
                    headers={"Sec-Fetch-Site": "same-origin"},
                    allow_redirects=False,
                )
                found.append(response.headers.get("Location"))
            return found

        assert served(site.arena, check) == ["/", "/", "/", "/", "/", "/me"]

    def test_logout_clears_the_cookie(self, site: Site) -> None:
        async def check(client: Client) -> tuple[int, str | None, str]:
            response = await client.post(
                "/logout",
                headers={**cookie(site.built.alice), "Sec-Fetch-Site": "same-origin"},
                allow_redirects=False,
            )
            return response.status, response.headers.get("Location"), response.headers.get("Set-Cookie", "")

        status, location, set_cookie = served(site.arena, check)
        assert (status, location) == (303, "/")
        assert set_cookie.startswith('nap_arena="";')
        assert "Max-Age=0" in set_cookie

    def test_the_login_and_logout_forms_render(self, site: Site) -> None:
        async def check(client: Client) -> list[str]:
            return [await (await client.get(path)).text() for path in ("/login?next=/me", "/logout")]

        login, logout = served(site.arena, check)
        assert '<input type="hidden" name="next" value="/me">' in login
        assert '<form method="post" action="/logout">' in logout


class TestPeople:
    """An admin adds people and tokens; a person may make a token for themselves only."""

    def test_an_admin_adds_a_person_whose_token_works_once_shown(self, site: Site) -> None:
        admin = bearer(site.built.admin)

        async def check(client: Client) -> list[tuple[int, Any]]:
            found = []
            added = await client.post("/api/v1/people", json={"name": "carol"}, headers=admin)
            body = await added.json()
            found.append((added.status, body))
            me = await client.get("/api/v1/me", headers=bearer(body["token"]))
            found.append((me.status, await me.json()))
            again = await client.post("/api/v1/people", json={"name": "carol"}, headers=admin)
            found.append((again.status, await again.json()))
            people = await client.get("/api/v1/people", headers=admin)
            found.append((people.status, await people.json()))
            return found

        added, me, again, people = served(site.arena, check)
        assert added[0] == 201
        assert added[1]["name"] == "carol"
        assert added[1]["token"].startswith("nap_")
        assert me == (200, {"name": "carol", "admin": False, "scopes": ["submit"]})
        assert again[0] == 409
        assert people[0] == 200
        assert [(p["name"], p["admin"], p["tokens"]) for p in people[1]] == [
            ("admin", True, 1),
            ("alice", False, 1),
            ("bob", False, 1),
            ("carol", False, 1),
        ]

    def test_a_person_may_not_add_people_nor_make_someone_elses_token(self, site: Site) -> None:
        bob = bearer(site.built.bob)

        async def check(client: Client) -> list[int]:
            found = []
            for path, body in (
                ("/api/v1/people", {"name": "mallory"}),
                ("/api/v1/people/alice/tokens", None),
            ):
                response = await client.post(path, json=body, headers=bob)
                found.append(response.status)
            own = await client.post("/api/v1/people/bob/tokens", headers=bob)
            found.append(own.status)
            listed = await client.get("/api/v1/people", headers=bob)
            found.append(listed.status)
            return found

        assert served(site.arena, check) == [403, 403, 201, 403]

    @pytest.mark.parametrize("body", ["not json", "[1]", '{"name": 7}', '{"name": "x", "admin": "yes"}'])
    def test_a_malformed_person_is_400(self, site: Site, body: str) -> None:
        async def check(client: Client) -> tuple[int, Any]:
            response = await client.post("/api/v1/people", data=body, headers=bearer(site.built.admin))
            return response.status, await response.json()

        status, answer = served(site.arena, check)
        assert status == 400
        assert set(answer) == {"error"}

    def test_a_body_over_the_applications_limit_is_413(self, site: Site) -> None:
        async def check(client: Client) -> tuple[int, Any]:
            body = json.dumps({"name": "x" * (20 << 10)})
            response = await client.post("/api/v1/people", data=body, headers=bearer(site.built.admin))
            return response.status, await response.json()

        status, answer = served(site.arena, check)
        assert status == 413
        assert "Maximum request body size" in answer["error"]


async def _raw(client: Client, head: str, *parts: bytes) -> tuple[int, bytes]:
    """Send ``head`` and ``parts`` as they are; the answer's status and body (not waiting for the end)."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    try:
        writer.write(head.replace("\n", "\r\n").encode() + b"\r\n")
        for part in parts:
            writer.write(part)
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), timeout=60)
        length = 0
        while (line := await asyncio.wait_for(reader.readline(), timeout=60)) not in {b"\r\n", b""}:
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        body = await asyncio.wait_for(reader.readexactly(length), timeout=60)
    finally:
        writer.close()
        await writer.wait_closed()
    return int(status_line.split()[1]), body


def _upload_head(token: str, *, length: str, expect: bool = False) -> str:
    lines = [
        "POST /api/v1/submissions HTTP/1.1",
        "Host: arena.test",
        f"Authorization: Bearer {token}",
        "Content-Type: application/gzip",
        length,
    ]
    if expect:
        lines.append("Expect: 100-continue")
    return "\n".join(lines) + "\n"


class TestUploads:
    """A submission is an upload: bounded before it is read, refused in one line, quota'd."""

    def test_a_pack_is_queued_and_followed_by_its_owner_only(self, site: Site, tmp_path: Path) -> None:
        data = a_pack(tmp_path)
        alice, bob = site.built.alice, site.built.bob

        async def check(client: Client) -> list[tuple[int, Any]]:
            sent = await client.post(
                "/api/v1/submissions",
                data=data,
                headers={**bearer(alice), "Content-Type": "application/gzip"},
            )
            made = await sent.json()
            found: list[tuple[int, Any]] = [(sent.status, made)]
            for path, token in (
                ("/api/v1/submissions", alice),
                (f"/api/v1/submissions/{made['id']}", alice),
                (f"/api/v1/submissions/{made['id']}", bob),
                ("/api/v1/submissions", bob),
            ):
                response = await client.get(path, headers=bearer(token))
                found.append((response.status, await response.json()))
            for token in (alice, bob):
                page = await client.get(f"/submissions/{made['id']}", headers=cookie(token))
                found.append((page.status, await page.text()))
            return found

        sent, listed, mine, theirs, bobs, page, bob_page = served(site.arena, check)
        assert sent[0] == 202
        made = sent[1]
        assert set(made) == {
            "id", "owner", "status", "reason", "name", "version", "entry", "size",
            "submitted_at", "updated_at", "rating", "steps",
        }  # fmt: skip
        assert (made["owner"], made["status"], made["size"], made["entry"]) == (
            "alice",
            "queued",
            len(data),
            None,
        )
        assert [s["step"] for s in made["steps"]] == ["upload"]
        assert listed[0] == 200
        assert [s["id"] for s in listed[1]][-1] == made["id"]
        assert mine == (200, made)
        assert theirs == (403, {"error": f"submission {made['id']} is not yours"})
        assert bobs == (200, [])
        assert page[0] == 200
        assert f"received {len(data):,} bytes; queued" in page[1]
        assert bob_page[0] == 403
        assert f"submission {made['id']} is not yours" in bob_page[1]

    def test_a_client_that_asks_before_sending_is_told_to_go_on(self, site: Site, tmp_path: Path) -> None:
        """``Expect: 100-continue`` (as curl sends a large body): a good token and size are told to go on."""
        data = a_pack(tmp_path)

        async def check(client: Client) -> tuple[int, Any]:
            response = await client.post(
                "/api/v1/submissions", data=data, headers=bearer(site.built.alice), expect100=True
            )
            return response.status, await response.json()

        status, made = served(site.arena, check)
        assert (status, made["status"], made["size"]) == (202, "queued", len(data))

    def test_what_is_not_a_pack_is_refused_in_one_line_and_kept_as_refused(self, site: Site) -> None:
        async def check(client: Client) -> tuple[int, Any]:
            response = await client.post(
                "/api/v1/submissions", data=b"PK\x03\x04 a zip", headers=bearer(site.built.alice)
            )
            return response.status, await response.json()

        status, body = served(site.arena, check)
        assert status == 400
        assert re.fullmatch(r"submission \d+ refused: not a bot pack: [^\n]+", body["error"])
        last = site.arena.store.submissions(owner="alice")[-1]
        assert last.status == "refused"

    def test_an_upload_over_the_limit_by_its_length_is_413_before_a_byte_is_read(self, site: Site) -> None:
        """The Content-Length says too much: the answer comes though the body is never sent."""
        before = len(site.arena.store.submissions())

        async def check(client: Client) -> list[tuple[int, bytes]]:
            over = _upload_head(site.built.alice, length=f"Content-Length: {LIMIT + 1}")
            asked = _upload_head(site.built.alice, length=f"Content-Length: {LIMIT + 1}", expect=True)
            return [await _raw(client, over), await _raw(client, asked)]

        for status, body in served(site.arena, check):
            assert status == 413  # and not 100 Continue first, for the one that asked
            assert json.loads(body) == {
                "error": f"the pack is {LIMIT + 1:,} bytes, over this arena's limit of {LIMIT:,}"
            }
        assert len(site.arena.store.submissions()) == before

    def test_a_chunked_upload_is_read_no_further_than_the_limit(self, site: Site) -> None:
        """No length given: the stream is cut at the limit, though the rest of it never comes."""
        before = len(site.arena.store.submissions())
        piece = b"\x1f\x8b" + b"x" * (LIMIT // 2)
        chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"

        async def check(client: Client) -> tuple[int, bytes]:
            head = _upload_head(site.built.alice, length="Transfer-Encoding: chunked")
            return await _raw(client, head, chunk, chunk, chunk)  # no last chunk: the upload never ends

        status, body = served(site.arena, check)
        assert status == 413
        assert "over this arena's limit" in json.loads(body)["error"]
        assert len(site.arena.store.submissions()) == before

    def test_a_wrong_token_is_401_before_the_upload_is_read(self, site: Site) -> None:
        async def check(client: Client) -> tuple[int, bytes]:
            return await _raw(client, _upload_head("nap_" + "y" * 43, length="Content-Length: 1000"))

        status, body = served(site.arena, check)
        assert status == 401
        assert "wrong or revoked" in json.loads(body)["error"]

    def test_the_quota_is_429(self, site: Site) -> None:
        made = site.arena.store.submitted_since("alice", hours=24)

        async def check(client: Client) -> list[tuple[int, Any]]:
            found = []
            for number in range(SETTINGS.quota - made + 1):
                response = await client.post(
                    "/api/v1/submissions", data=b"\x1f\x8b%d" % number, headers=bearer(site.built.alice)
                )
                found.append((response.status, await response.json()))
            return found

        *taken, refused = served(site.arena, check)
        assert [status for status, _ in taken] == [202] * (SETTINGS.quota - made)
        assert refused == (
            429,
            {"error": "alice made 3 submissions in the last 24 hours, the arena's quota: try again later"},
        )


class TestBoard:
    """Everyone sees the leaderboard and the entries, rated over complete blocks only."""

    def test_the_arenas_trouble_is_said_on_the_board_and_the_page(self, site: Site) -> None:
        site.arena.trouble.now = "the ladder stopped: arena.db: database or disk is full (free some space)"

        async def check(client: Client) -> tuple[Any, str]:
            board = await (await client.get("/api/v1/leaderboard")).json()
            return board, await (await client.get("/")).text()

        try:
            board, page = served(site.arena, check)
        finally:
            site.arena.trouble.now = None
        assert board["trouble"].endswith("database or disk is full (free some space)")
        assert "The ladder is not playing now: the ladder stopped: arena.db: database or disk is full" in page

    def test_the_leaderboards_json(self, site: Site) -> None:
        async def check(client: Client) -> tuple[int, Any]:
            response = await client.get("/api/v1/leaderboard")
            return response.status, await response.json()

        status, board = served(site.arena, check)
        assert status == 200
        assert set(board) == {"arena", "updated_at", "trouble", "blocks", "sessions", "entries", "retired"}
        assert board["trouble"] is None
        assert board["arena"] == {
            "profile": "heather",
            "table_sizes": [4],
            "decision_ms": SETTINGS.decision_ms,
            "keep": 2,
            "quota": 3,
            "placement_blocks": 4,
        }
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", board["updated_at"])
        assert (board["blocks"], board["sessions"], board["retired"]) == (2, 9, [])
        rows = {row["entry"]: row for row in board["entries"]}
        assert set(rows) == set(SEATS)
        for row in board["entries"]:
            assert set(row) == {
                "rank", "entry", "owner", "bot", "version", "status", "rating", "blocks",
                "sessions", "faults", "rotation_flagged", "unranked",
            }  # fmt: skip
            assert set(row["rating"]) == {"mean", "half_width", "low", "high", "n", "sd", "warning"}
            assert row["rating"]["n"] == row["blocks"] == 2
            # (the arena's seed is secret: two blocks may happen to give an entry the same chips)
            assert row["rating"]["warning"] in ("only 2 blocks", "no variation over 2 blocks")
        assert (rows[ENTRY]["owner"], rows[ENTRY]["status"], rows[ENTRY]["sessions"]) == (
            "alice",
            "placed",
            9,
        )
        assert (rows["pimc"]["owner"], rows["pimc"]["status"], rows["pimc"]["version"]) == (
            None,
            "anchor",
            "built in",
        )

    def test_the_leaderboard_page_shows_each_rating_with_its_interval(self, site: Site) -> None:
        board = site.arena.leaderboard()

        async def check(client: Client) -> str:
            return await (await client.get("/")).text()

        page = served(site.arena, check)
        assert '<span id="blocks">2</span> complete blocks' in page
        for row in board.rows:
            assert row.rating is not None
            # (the arena's seed is secret: two blocks may happen to give an entry the same chips)
            if row.rating.half_width is None:
                shown = f"{row.rating.mean:+.2f} (no variation over 2 blocks)"
            else:
                shown = f"{row.rating.mean:+.2f} ± {row.rating.half_width:.2f} (only 2 blocks)"
            assert re.search(
                rf'<tr data-entry="{re.escape(row.entry)}">\s*<td class="rank">[^<]*</td>\s*'
                rf'<td class="entry"><a href="/entries/{re.escape(row.entry)}">'
                rf"{re.escape(row.entry)}</a></td>"
                rf"[\s\S]*?<td class=\"rating\">{re.escape(shown)}</td>",
                page,
            ), row.entry
        assert '<script src="/static/arena.js" defer></script>' in page

    def test_an_entrys_json_and_page_list_only_its_complete_blocks_sessions(self, site: Site) -> None:
        async def check(client: Client) -> tuple[Any, str, int, int]:
            entry = await (await client.get(f"/api/v1/entries/{ENTRY}")).json()
            page = await (await client.get(f"/entries/{ENTRY}")).text()
            unknown = await client.get("/api/v1/entries/nobody.9")
            unknown_page = await client.get("/entries/nobody.9")
            return entry, page, unknown.status, unknown_page.status

        entry, page, unknown, unknown_page = served(site.arena, check)
        assert (entry["entry"], entry["owner"], entry["status"]) == (ENTRY, "alice", "placed")
        assert [v["entry"] for v in entry["versions"]] == [ENTRY]
        assert {h["opponent"] for h in entry["versus"]} == {"random", "peel", "pimc"}
        assert [s["step"] for s in entry["steps"]] == []
        sessions = entry["sessions"]
        assert len(sessions) == 8
        assert {s["block"] for s in sessions} == {0, 1}
        assert site.built.unfinished not in {s["id"] for s in sessions}
        for session in sessions:
            assert f'<a href="/sessions/{session["id"]}">rotation {session["rotation"]}</a>' in page
        assert f"/sessions/{site.built.unfinished}" not in page
        assert "Against each opponent" in page
        assert f"/entries/{ENTRY}/log" not in page  # a visitor is not shown the link to the owner's logs
        assert (unknown, unknown_page) == (404, 404)


class TestSessions:
    """A session's log and replay are public once its block is complete, never before."""

    def test_a_session_of_a_block_in_play_is_404_until_its_block_is_complete(self, site: Site) -> None:
        unfinished = site.built.unfinished

        async def check(client: Client) -> list[tuple[int, str]]:
            found = []
            for path in (f"/api/v1/sessions/{unfinished}", f"/sessions/{unfinished}"):
                response = await client.get(path)
                found.append((response.status, await response.text()))
            played_block(
                site.arena, SEATS, policies=POLICIES, rotations=(1, 2, 3), index=site.built.unfinished_block
            )
            for path in (f"/api/v1/sessions/{unfinished}", f"/sessions/{unfinished}"):
                response = await client.get(path)
                found.append((response.status, await response.text()))
            return found

        api, page, api_after, page_after = served(site.arena, check)
        why = f"session {unfinished} is not public until every rotation of its block has been played"
        assert api == (404, json.dumps({"error": why}))
        assert page[0] == 404
        assert why in page[1]
        assert cards_in(api[1] + page[1]) == []
        assert api_after[0] == 200
        log = json.loads(api_after[1])
        assert log["record"]["deals"]
        assert page_after[0] == 200
        assert "nap-replay-data" in page_after[1]

    def test_a_replay_is_served_with_a_policy_for_its_own_script_only(self, site: Site) -> None:
        async def check(client: Client) -> tuple[int, str, str, str]:
            response = await client.get(f"/sessions/{site.built.complete}")
            board = await client.get("/")
            return (
                response.status,
                await response.text(),
                response.headers["Content-Security-Policy"],
                board.headers["Content-Security-Policy"],
            )

        status, page, policy, board_policy = served(site.arena, check)
        assert status == 200
        script = page.split("<script>", 1)[1].split("</script>", 1)[0]
        style = page.split("<style>", 1)[1].split("</style>", 1)[0]
        import base64  # noqa: PLC0415 - this test's own check of the hashes
        import hashlib  # noqa: PLC0415

        def sha(text: str) -> str:
            return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

        assert f"script-src 'self' {sha(script)};" in policy
        assert f"style-src 'self' {sha(style)};" in policy
        assert "unsafe" not in policy
        assert "frame-ancestors 'none'" in policy
        assert "script-src" not in board_policy  # every other page: no inline script at all
        assert f"Session {site.built.complete}: block 0, rotation" in page

    def test_an_unknown_session_is_404(self, site: Site) -> None:
        async def check(client: Client) -> list[int]:
            return [(await client.get(path)).status for path in ("/api/v1/sessions/9999", "/sessions/x1")]

        assert served(site.arena, check) == [404, 404]


class TestBotLogs:
    """A bot's own log is its owner's (and an admin's): anyone else gets 403, and never its text."""

    def test_the_owner_reads_it_another_person_gets_403(self, site: Site) -> None:
        async def check(client: Client) -> list[tuple[int, str]]:
            found = []
            for token in (site.built.alice, site.built.admin, site.built.bob):
                api = await client.get(f"/api/v1/entries/{ENTRY}/log", headers=bearer(token))
                page = await client.get(f"/entries/{ENTRY}/log", headers=cookie(token))
                found += [(api.status, await api.text()), (page.status, await page.text())]
            return found

        alice_api, alice_page, admin_api, admin_page, bob_api, bob_page = served(site.arena, check)
        log = json.loads(alice_api[1])
        assert alice_api[0] == 200
        assert log["entry"] == ENTRY
        assert [(entry["process"], entry["tail"]) for entry in log["logs"]] == [
            (f"{ENTRY}-r0", OWN_LOG + "\n")
        ]
        assert alice_page[0] == 200
        assert OWN_LOG in alice_page[1]
        assert admin_api[0] == admin_page[0] == 200
        assert bob_api == (403, json.dumps({"error": f"the log of {ENTRY} is its owner's"}))
        assert bob_page[0] == 403
        assert OWN_LOG not in bob_page[1]

    def test_my_page_shows_my_submissions_logs_and_my_bots_logs_and_no_one_elses(self, site: Site) -> None:
        async def check(client: Client) -> list[str]:
            return [
                await (await client.get(path, headers=cookie(token))).text()
                for path, token in (
                    ("/me", site.built.alice),
                    ("/me", site.built.bob),
                    (f"/entries/{ENTRY}", site.built.alice),
                    (f"/entries/{ENTRY}", site.built.bob),
                )
            ]

        alice, bob, alice_entry, bob_entry = served(site.arena, check)
        assert OWN_LOG in alice
        assert f'<a href="/entries/{ENTRY}">{ENTRY}</a>' in alice
        assert OWN_LOG not in bob
        assert "None yet." in bob
        assert f'<a href="/entries/{ENTRY}/log" id="bot-log">' in alice_entry
        assert f"/entries/{ENTRY}/log" not in bob_entry


def _record(site: Site) -> SessionRecord:
    return open_log(site.arena.store.log(site.built.unfinished), name="its log").record


class TestLive:
    """The tables in play: public figures of the deal in play, and no card at all."""

    def test_the_live_view_follows_a_session_without_a_card(self, site: Site) -> None:
        """At every point of a whole session: no card, tricks and balances as the record has them."""
        record = _record(site)
        events = public_events(record)
        table = TableInPlay(table="t", block=2, rotation=0, bots=SEATS, deals=8)
        assert any(isinstance(e, CardPlayed) for e in events)
        for end in range(len(events) + 1):
            view = table_view(table, events[:end], profile=record.profile)
            shown = json.dumps(view.to_json(), ensure_ascii=False)
            assert cards_in(shown) == [], end
            in_deal = events[:end][::-1]
            since_deal = next((i for i, e in enumerate(in_deal) if isinstance(e, DealStarted)), len(in_deal))
            assert sum(view.tricks_won) == sum(isinstance(e, TrickWon) for e in in_deal[:since_deal])
        assert view.over
        assert view.balances == record.balances
        assert view.deal == len(record.deals)

    def test_the_live_api_and_page_show_the_deal_in_play_and_no_card(self, site: Site) -> None:
        tables = in_play(site.arena, site.built)
        site.arena.tables = tables
        played = tables.played
        view = table_view(tables.table, played, profile=site.arena.settings.profile)

        async def check(client: Client) -> tuple[Any, str]:
            api = await (await client.get("/api/v1/live")).json()
            page = await (await client.get("/live")).text()
            return api, page

        api, page = served(site.arena, check)
        assert api == {"tables": [view.to_json()], "unavailable": None}
        assert api["tables"][0]["deal"] >= 2
        assert sum(seat["tricks_won"] for seat in api["tables"][0]["seats"]) == 2
        assert api["tables"][0]["trick_cards"] == 2
        assert f"Block {site.built.unfinished_block}, rotation 0: deal {view.deal} of 8" in page
        if view.contract is not None:
            assert f"contract: {view.contract} by seat {view.declarer}" in page
        played_cards = [str(e.card) for e in played if isinstance(e, CardPlayed)]
        assert played_cards
        assert cards_in(json.dumps(api, ensure_ascii=False)) == []
        assert cards_in(page) == []

    def test_without_tables_the_page_says_so(self, site: Site) -> None:
        async def check(client: Client) -> tuple[Any, str]:
            return await (await client.get("/api/v1/live")).json(), await (await client.get("/live")).text()

        api, page = served(site.arena, check)
        assert api == {"tables": [], "unavailable": None}
        assert "No table is in play right now." in page


class TestEvents:
    """The event stream tells the pages when a block completes and when a submission changes."""

    @pytest.mark.parametrize("held_back", [False, True], ids=["quick board", "board held back"])
    def test_a_completed_block_and_a_submission_are_sent(
        self, site: Site, monkeypatch: pytest.MonkeyPatch, *, held_back: bool
    ) -> None:
        """A board held back (slow to compute, as a large ladder's) is sent once it may be, change or not."""
        if held_back:  # each board takes 0.1 s, and the next waits 50 times that: 5 s

            def slow(*args: Any, **kwargs: Any) -> Any:
                time.sleep(0.1)
                return leaderboard(*args, **kwargs)

            monkeypatch.setattr(service, "leaderboard", slow)
            monkeypatch.setattr(service, "BOARD_SHARE", 50.0)

        async def check(client: Client) -> dict[str, list[Any]]:
            response = await client.get("/api/v1/events")
            assert response.headers["Content-Type"] == "text/event-stream"
            assert await response.content.readline() == b"retry: 3000\n"
            played_block(site.arena, SEATS, policies=POLICIES)
            site.arena.submit(site.arena.caller(site.built.bob), b"\x1f\x8b bob's")
            events: dict[str, list[Any]] = {}

            async def read() -> None:
                kind = None
                while set(events) != {"leaderboard", "submission"}:
                    line = (await response.content.readline()).decode()
                    if line.startswith("event: "):
                        kind = line.removeprefix("event: ").strip()
                    elif line.startswith("data: ") and kind is not None:
                        events.setdefault(kind, []).append(json.loads(line.removeprefix("data: ")))

            with contextlib.suppress(
                TimeoutError
            ):  # a stream that never sends them: the check says what came
                await asyncio.wait_for(read(), timeout=60)
            response.close()
            return events

        events = served(site.arena, check)
        [bobs] = site.arena.store.submissions(owner="bob")
        assert events == {"leaderboard": [{"blocks": 3}], "submission": [{"id": bobs.id}]}

    def test_a_quiet_stream_is_sent_a_comment_now_and_then(self, site: Site) -> None:
        """So that a proxy between keeps it open."""

        async def check() -> bytes:
            app = make_app(site.arena, heartbeat_s=0.01)
            async with TestClient(TestServer(app)) as client:
                response = await client.get("/api/v1/events")
                lines = [await asyncio.wait_for(response.content.readline(), timeout=60) for _ in range(3)]
                response.close()
            return b"".join(lines)

        assert asyncio.run(check()) == b"retry: 3000\n\n: still here\n"

    def test_an_open_stream_ends_when_the_arena_stops(self, site: Site) -> None:
        """Stopping the server ends each stream cleanly, rather than waiting for it and then cutting it."""

        async def check() -> bytes:
            runner = web.AppRunner(make_app(site.arena), shutdown_timeout=10)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            host, port = runner.addresses[0][:2]
            async with aiohttp.ClientSession() as session:
                response = await session.get(f"http://{host}:{port}/api/v1/events")
                first = await response.content.readline()
                await runner.cleanup()
                return first + await response.content.read()  # the stream's clean end, or a payload error

        assert asyncio.run(check()) == b"retry: 3000\n\n"


class TestAnswers:
    """Every answer carries the headers; a bug is a 500 logged, never shown."""

    def test_every_answer_has_the_security_headers(self, site: Site) -> None:
        async def check(client: Client) -> list[tuple[str, dict[str, str]]]:
            found = []
            for path in (
                "/",
                "/api/v1/leaderboard",
                "/static/arena.css",
                "/nowhere",
                "/api/v1/nowhere",
                "/me",
            ):
                response = await client.get(path, headers=cookie(site.built.alice))
                found.append((path, dict(response.headers)))
            return found

        for path, headers in served(site.arena, check):
            assert headers["Cache-Control"] == "no-store", path
            assert headers["X-Content-Type-Options"] == "nosniff", path
            assert headers["Referrer-Policy"] == "no-referrer", path
            assert headers["Content-Security-Policy"].startswith("default-src 'self';"), path

    def test_unknown_paths_are_404_in_the_way_each_half_answers(self, site: Site) -> None:
        async def check(client: Client) -> list[tuple[int, str, str]]:
            found = []
            for path in ("/api/v1/nowhere", "/nowhere"):
                response = await client.get(path)
                found.append((response.status, response.content_type, await response.text()))
            return found

        api, page = served(site.arena, check)
        assert api == (404, "application/json", json.dumps({"error": "not found"}))
        assert page[:2] == (404, "text/html")

    def test_a_bug_is_a_500_whose_traceback_is_logged_not_sent(
        self, site: Site, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def broken() -> None:
            msg = "a secret detail of the host"
            raise RuntimeError(msg)

        monkeypatch.setattr(site.arena, "leaderboard", broken)

        async def check(client: Client) -> list[tuple[int, str]]:
            return [
                (response.status, await response.text())
                for response in [await client.get("/api/v1/leaderboard"), await client.get("/")]
            ]

        with capture_logs() as logs:
            api, page = served(site.arena, check)
        assert api == (500, json.dumps({"error": "the arena failed to answer this (its log says why)"}))
        assert page[0] == 500
        for text in (api[1], page[1]):
            assert "secret detail" not in text
            assert "Traceback" not in text
        failed = [entry for entry in logs if entry["event"] == "web handler failed"]
        assert [entry["path"] for entry in failed] == ["/api/v1/leaderboard", "/"]
        assert all(isinstance(entry["exc_info"], RuntimeError) for entry in failed)
