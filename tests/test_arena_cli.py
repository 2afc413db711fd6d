"""`nap arena` and `nap bot submit --arena` through click, against a real arena served on 127.0.0.1.

The arena is :func:`tests.arena_web_helpers.build_arena`'s (admin, alice with her entry
``ace.1``, bob; blocks played for real in process), copied for each test and served by
:func:`tournaments.arena.web.make_app` from a thread of its own, whose loop alone touches
the arena; the commands run in the test's thread through click's runner and ask it over
HTTP, as they would any arena. No admission runs there: a test moves a submission
through its steps in the store itself, between two of ``--wait``'s questions (its
:func:`~tournaments.cli.arena.pause`, which the tests replace, so that no test waits).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import stat
import threading
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from aiohttp import web
from click.testing import CliRunner, Result

from tests.arena_web_helpers import LIMIT, SETTINGS, Built, build_arena
from tournaments.arena.client import ArenaClient, ClientError, Connection, sent_in_clear
from tournaments.arena.service import open_arena
from tournaments.arena.web import make_app
from tournaments.cli import arena as arena_cli
from tournaments.cli import main
from tournaments.plan.versions import pack

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tournaments.arena.service import Arena
    from tournaments.store.arena import SubmissionStatus

T = TypeVar("T")


class Served:
    """An arena served on 127.0.0.1 by a loop in a thread of its own; :meth:`call` runs code on that loop."""

    def __init__(self, built: Built, folder: Path) -> None:
        self.built = built
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="arena server", daemon=True)
        self._thread.start()
        self.arena: Arena = self.call(lambda: open_arena(folder / "arena.db", SETTINGS).arena)
        self._runner = web.AppRunner(make_app(self.arena), handle_signals=False, shutdown_timeout=1.0)
        self._site: web.TCPSite | None = None
        self.port = 0
        self._wait(self._runner.setup())
        self.start()
        self.url = f"http://127.0.0.1:{self.port}"

    def _wait(self, work: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(timeout=60)

    def call(self, work: Callable[[], T]) -> T:
        """``work()``, run on the server's loop (the arena's thread)."""

        async def run() -> T:
            return work()

        result: T = self._wait(run())
        return result

    def start(self) -> None:
        """Listen (again, on the same port after :meth:`stop`)."""
        self._site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        self._wait(self._site.start())
        self.port = self._runner.addresses[0][1]

    def stop(self) -> None:
        """Stop listening: the arena does not answer until :meth:`start`."""
        assert self._site is not None
        self._wait(self._site.stop())
        self._site = None

    def move(self, number: int, status: SubmissionStatus, step: str, text: str, **facts: object) -> None:
        """Move submission ``number`` to ``status`` with a step of its log, as admission and the ladder do."""

        def work() -> None:
            self.arena.store.update_submission(number, status=status, **facts)
            self.arena.store.add_step(number, step, text)

        self.call(work)

    def who(self, token: str) -> tuple[str, bool] | None:
        """Whom the arena takes ``token`` for (name, admin); None: nobody."""
        caller = self.call(lambda: self.arena.caller(token))
        return None if caller is None else (caller.name, caller.admin)

    def count(self) -> int:
        """How many submissions the arena holds."""
        return self.call(lambda: len(self.arena.store.submissions()))

    def close(self) -> None:
        self._wait(self._runner.cleanup())
        self.call(self.arena.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=60)
        self._loop.close()


class Elsewhere:
    """A web site on 127.0.0.1 that is no arena (a page at every address, or a redirect); its requests."""

    def __init__(self, served: Served, *, redirect: str | None = None, document: object = None) -> None:
        self.asked: list[tuple[str, str | None]] = []
        self._served = served

        async def answer(request: web.Request) -> web.StreamResponse:
            self.asked.append((request.path, request.headers.get("Authorization")))
            if redirect is not None:
                raise web.HTTPFound(redirect)
            if document is not None:
                return web.json_response(document)
            return web.Response(
                text="<html><body>Welcome to the club</body></html>", content_type="text/html"
            )

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", answer)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=1.0)
        served._wait(self._runner.setup())  # noqa: SLF001 - the same loop
        served._wait(web.TCPSite(self._runner, "127.0.0.1", 0).start())  # noqa: SLF001 - the same loop
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"

    def close(self) -> None:
        self._served._wait(self._runner.cleanup())  # noqa: SLF001 - the same loop


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build_arena(tmp_path_factory.mktemp("arena"))


@pytest.fixture
def served(built: Built, tmp_path: Path) -> Iterator[Served]:
    shutil.copytree(built.folder, tmp_path / "arena")
    server = Served(built, tmp_path / "arena")
    yield server
    server.close()


@pytest.fixture
def elsewhere(served: Served) -> Iterator[Elsewhere]:
    site = Elsewhere(served)
    yield site
    site.close()


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config folder of the test's own, and none of the person's variables (nor a proxy)."""
    home = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.delenv("NAP_ARENA_URL", raising=False)
    monkeypatch.delenv("NAP_ARENA_TOKEN", raising=False)
    for proxy in ("http_proxy", "https_proxy", "all_proxy"):  # the arenas here are on 127.0.0.1
        monkeypatch.delenv(proxy, raising=False)
        monkeypatch.delenv(proxy.upper(), raising=False)
    return home


def nap(*args: object, stdin: str | None = None, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, [str(arg) for arg in args], input=stdin, env=env)


def login(served: Served, token: str) -> Result:
    result = nap("arena", "login", served.url, stdin=token + "\n")
    assert result.exit_code == 0, result.output
    return result


def a_bot(folder: Path, name: str = "mybot") -> Path:
    """A bot folder as `nap bot new` makes it."""
    result = nap("bot", "new", name, "--dir", folder)
    assert result.exit_code == 0, result.output
    return folder / name


class Script:
    """--wait's pauses, each making the next change of a script in the arena instead of waiting."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *changes: Callable[[], None]) -> None:
        self.changes = list(changes)
        self.pauses: list[float] = []
        monkeypatch.setattr(arena_cli, "pause", self.pause)

    def pause(self, seconds: float) -> None:
        self.pauses.append(seconds)
        if self.changes:
            self.changes.pop(0)()


def last_line(result: Result) -> str:
    return result.output.strip().splitlines()[-1]


class TestLogin:
    """`nap arena login URL` checks the token with the arena and saves both, for the owner's eyes only."""

    def test_login_checks_the_token_and_saves_it_readable_by_its_owner_only(
        self, served: Served, config_home: Path
    ) -> None:
        result = login(served, served.built.alice)
        path = config_home / "nap" / "arena.toml"
        assert result.stdout == f"signed in to {served.url} as alice (submit); saved in {path}\n"
        assert served.built.alice not in result.output
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        text = path.read_text()
        assert f'url = "{served.url}"' in text
        assert f'token = "{served.built.alice}"' in text
        assert not [p for p in path.parent.iterdir() if p != path]  # no temporary file left behind

    def test_a_login_again_without_url_is_to_the_saved_arena(self, served: Served) -> None:
        login(served, served.built.alice)
        result = nap("arena", "login", stdin=served.built.bob + "\n")
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"signed in to {served.url} as bob (submit)")
        assert nap("arena", "status").output.startswith("no submissions yet")

    def test_a_login_says_when_a_variable_goes_before_what_it_saves(self, served: Served) -> None:
        env = {"NAP_ARENA_TOKEN": served.built.bob, "NAP_ARENA_URL": "http://127.0.0.1:1"}
        result = nap("arena", "login", served.url, stdin=served.built.alice + "\n", env=env)
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith(f"signed in to {served.url} as alice")
        assert result.stderr.splitlines() == [
            "note: $NAP_ARENA_TOKEN is set, and goes before the saved token until you unset it",
            "note: $NAP_ARENA_URL names another arena, asked instead of this one until you unset it",
        ]

    def test_the_saved_arena_and_token_serve_the_next_commands(self, served: Served) -> None:
        login(served, served.built.alice)
        result = nap("arena", "status", "--json")
        assert result.exit_code == 0, result.output
        assert [s["entry"] for s in json.loads(result.stdout)] == ["ace.1"]

    def test_a_wrong_token_is_refused_and_nothing_is_saved(self, served: Served, config_home: Path) -> None:
        wrong = "nap_" + "A" * 43
        result = nap("arena", "login", served.url + "/", stdin=wrong + "\n")
        assert result.exit_code == 1
        assert last_line(result) == (
            f"Error: the arena at {served.url} refused the token from the token given (wrong or revoked): "
            f"run nap arena login {served.url} with a good one"
        )
        assert wrong not in result.output
        assert not (config_home / "nap" / "arena.toml").exists()

    def test_no_token_given(self, served: Served) -> None:
        result = nap("arena", "login", served.url, stdin="\n")
        assert result.exit_code == 1
        assert last_line(result) == "Error: no token given: paste the token the arena's organiser gave you"

    def test_a_config_file_others_may_read_is_refused_in_one_line(
        self, served: Served, config_home: Path
    ) -> None:
        login(served, served.built.alice)
        path = config_home / "nap" / "arena.toml"
        path.chmod(0o644)
        result = nap("arena", "status")
        assert result.exit_code == 1
        assert result.output == (
            f"Error: {path} holds a token and others may read it (mode 0644): run chmod 600 {path}\n"
        )

    def test_the_saved_token_goes_to_its_own_arena_only(self, served: Served, elsewhere: Elsewhere) -> None:
        login(served, served.built.alice)
        result = nap("arena", "status", "--arena", elsewhere.url)
        assert result.exit_code == 1
        assert result.output == (
            f"Error: no token for {elsewhere.url}: "
            f"run nap arena login {elsewhere.url} (or set NAP_ARENA_TOKEN)\n"
        )
        assert elsewhere.asked == []

    def test_the_variables_name_the_arena_and_the_token_without_a_config_file(
        self, served: Served, config_home: Path
    ) -> None:
        env = {"NAP_ARENA_URL": served.url, "NAP_ARENA_TOKEN": served.built.bob}
        result = nap("arena", "status", env=env)
        assert result.exit_code == 0, result.output
        assert result.output == "no submissions yet: nap bot submit FOLDER --arena uploads a bot\n"
        assert not config_home.exists()

    def test_the_variables_alone_do_not_read_the_config_file(self, served: Served, config_home: Path) -> None:
        login(served, served.built.alice)
        (config_home / "nap" / "arena.toml").chmod(0o644)  # refused, but not needed
        env = {"NAP_ARENA_URL": served.url, "NAP_ARENA_TOKEN": served.built.bob}
        result = nap("arena", "status", env=env)
        assert (result.exit_code, result.output) == (
            0,
            "no submissions yet: nap bot submit FOLDER --arena uploads a bot\n",
        )

    def test_a_token_from_the_variable_that_is_refused_says_so(self, served: Served) -> None:
        env = {"NAP_ARENA_URL": served.url, "NAP_ARENA_TOKEN": "nap_" + "B" * 43}
        result = nap("arena", "status", env=env)
        assert result.exit_code == 1
        assert result.output == (
            f"Error: the arena at {served.url} refused the token from $NAP_ARENA_TOKEN (wrong or revoked): "
            "set NAP_ARENA_TOKEN to a good one\n"
        )


class TestPeople:
    """An admin adds people, lists them, revokes and renews their tokens; nobody else may."""

    def test_user_add_shows_the_token_once_on_stdout_alone_and_it_signs_in(self, served: Served) -> None:
        login(served, served.built.admin)
        result = nap("arena", "user", "add", "carol")
        assert result.exit_code == 0, result.output
        token = result.stdout.strip()
        assert token.startswith("nap_")
        assert len(token) == 47
        assert "carol" in result.stderr
        assert "shown only this once" in result.stderr
        assert served.who(token) == ("carol", False)
        assert login(served, token).stdout.startswith(f"signed in to {served.url} as carol (submit)")

    def test_user_add_admin_in_json(self, served: Served) -> None:
        login(served, served.built.admin)
        result = nap("arena", "user", "add", "dora", "--admin", "--json")
        assert result.exit_code == 0, result.output
        added = json.loads(result.stdout)
        assert added["name"] == "dora"
        assert added["admin"] is True
        assert served.who(added["token"]) == ("dora", True)

    def test_a_name_taken_is_the_arenas_409_line(self, served: Served) -> None:
        login(served, served.built.admin)
        result = nap("arena", "user", "add", "alice")
        assert result.exit_code == 1
        assert result.output.startswith("Error: ")
        assert "alice" in result.output
        assert len(result.output.splitlines()) == 1

    def test_user_list_as_lines_and_as_json(self, served: Served) -> None:
        login(served, served.built.admin)
        lines = nap("arena", "user", "list")
        assert lines.exit_code == 0, lines.output
        rows = [line.split("\t") for line in lines.stdout.splitlines()]
        assert rows[0] == ["name", "admin", "valid tokens", "added (UTC)"]
        assert [row[:3] for row in rows[1:]] == [
            ["admin", "admin", "1"],
            ["alice", "", "1"],
            ["bob", "", "1"],
        ]
        document = nap("arena", "user", "list", "--json")
        assert document.exit_code == 0, document.output
        people = json.loads(document.stdout)
        assert [(p["name"], p["admin"], p["tokens"]) for p in people] == [
            ("admin", True, 1),
            ("alice", False, 1),
            ("bob", False, 1),
        ]

    def test_user_revoke_ends_every_token_of_that_person(self, served: Served) -> None:
        login(served, served.built.admin)
        result = nap("arena", "user", "revoke", "bob")
        assert result.exit_code == 0, result.output
        assert result.output == "revoked 1 token of bob (nap arena user token bob makes a new one)\n"
        assert served.who(served.built.bob) is None
        again = nap("arena", "user", "revoke", "bob")
        assert again.output == "bob had no valid token\n"

    def test_user_token_makes_a_new_one_for_an_admin_or_oneself(self, served: Served) -> None:
        login(served, served.built.admin)
        made = nap("arena", "user", "token", "bob")
        assert made.exit_code == 0, made.output
        token = made.stdout.strip()
        assert served.who(token) == ("bob", False)
        login(served, served.built.bob)
        own = nap("arena", "user", "token", "bob", "--json")
        assert own.exit_code == 0, own.output
        assert json.loads(own.stdout)["name"] == "bob"
        theirs = nap("arena", "user", "token", "alice")
        assert theirs.exit_code == 1
        assert theirs.output == "Error: only an admin can make a token for someone else\n"

    @pytest.mark.parametrize(
        "command",
        [("user", "add", "eve"), ("user", "list"), ("user", "revoke", "bob"), ("user", "list", "--json")],
    )
    def test_a_person_who_is_no_admin_is_refused_with_the_arenas_403_line(
        self, served: Served, command: tuple[str, ...]
    ) -> None:
        login(served, served.built.alice)
        result = nap("arena", *command)
        assert result.exit_code == 1
        assert result.output == "Error: only an admin can do this\n"
        assert result.stdout == ""


class TestSubmit:
    """`nap bot submit FOLDER --arena [URL]`: the manifest read, the folder packed and uploaded, what next."""

    def test_a_bot_folder_is_uploaded_to_the_configured_arena_and_queued(
        self, served: Served, tmp_path: Path
    ) -> None:
        login(served, served.built.bob)
        folder = a_bot(tmp_path)
        result = nap("bot", "submit", folder, "--arena")
        assert result.exit_code == 0, result.output
        number = served.count()
        size = len(pack(folder))
        assert result.output == (
            f"submitted mybot 0.1 ({size:,} bytes) to {served.url}: submission {number}, queued\n"
            f"follow it: nap arena status {number} --wait\n"
        )
        stored = served.call(lambda: served.arena.store.submission(number))
        assert (stored.owner, stored.status, stored.size) == ("bob", "queued", size)
        upload = served.call(lambda: served.arena.store.upload(stored.upload))
        assert upload == pack(folder)

    def test_an_arena_given_on_the_command_line_is_named_in_what_follows(
        self, served: Served, tmp_path: Path
    ) -> None:
        folder = a_bot(tmp_path)
        env = {"NAP_ARENA_TOKEN": served.built.bob}
        result = nap("bot", "submit", folder, "--arena", served.url, env=env)
        assert result.exit_code == 0, result.output
        assert (
            last_line(result) == f"follow it: nap arena status {served.count()} --wait --arena {served.url}"
        )

    def test_a_bad_manifest_is_refused_before_anything_is_sent(self, served: Served, tmp_path: Path) -> None:
        login(served, served.built.bob)
        folder = a_bot(tmp_path)
        (folder / "nap-bot.toml").write_text('name = "my bot"\nversion = "0.1"\ncommand = ["x"]\n')
        before = served.count()
        result = nap("bot", "submit", folder, "--arena")
        assert result.exit_code == 1
        assert result.output == (
            f"Error: {folder / 'nap-bot.toml'}: field 'name' must be 1-40 letters, digits, '-' or '_', "
            "got 'my bot'\n"
        )
        assert served.count() == before

    def test_a_pack_over_the_arenas_limit_is_its_413_line_and_nothing_is_stored(
        self, served: Served, tmp_path: Path
    ) -> None:
        login(served, served.built.bob)
        folder = a_bot(tmp_path)
        (folder / "weights.bin").write_bytes(
            os.urandom(LIMIT + 4096)
        )  # random bytes: gzip cannot shrink them
        size = len(pack(folder))
        before = served.count()
        result = nap("bot", "submit", folder, "--arena")
        assert result.exit_code == 1
        assert result.output == f"Error: the pack is {size:,} bytes, over this arena's limit of {LIMIT:,}\n"
        assert served.count() == before

    def test_past_the_quota_is_the_arenas_429_line(self, served: Served, tmp_path: Path) -> None:
        login(served, served.built.alice)  # alice's entry is one submission of her quota of 3
        folder = a_bot(tmp_path)
        for _ in range(2):
            assert nap("bot", "submit", folder, "--arena").exit_code == 0
        result = nap("bot", "submit", folder, "--arena")
        assert result.exit_code == 1
        assert result.output == (
            "Error: alice made 3 submissions in the last 24 hours, the arena's quota: try again later\n"
        )

    def test_a_folder_after_a_bare_arena_flag_is_refused_as_no_address(self, tmp_path: Path) -> None:
        result = nap("bot", "submit", "--arena", tmp_path)
        assert result.exit_code == 2
        assert f"{str(tmp_path)!r} is not an arena's address (http://HOST:PORT)" in result.output

    def test_options_of_a_local_submission_are_refused_with_an_arena(
        self, served: Served, tmp_path: Path
    ) -> None:
        result = nap("bot", "submit", a_bot(tmp_path), "-n", "3", "--arena", served.url)
        assert result.exit_code == 2
        assert (
            "Error: --sessions: for a submission to this machine's database, not to an arena" in result.output
        )

    def test_wait_without_an_arena_is_refused(self, tmp_path: Path) -> None:
        result = nap("bot", "submit", a_bot(tmp_path), "--wait")
        assert result.exit_code == 2
        assert "Error: --wait follows a submission to an arena: give --arena too" in result.output

    def test_submit_wait_follows_it_until_placed_exit_0(
        self, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        login(served, served.built.bob)
        number = served.count() + 1
        entry = f"mybot.{number}"
        rating = {
            "mean": 1.25,
            "half_width": 3.5,
            "low": -2.25,
            "high": 4.75,
            "n": 4,
            "sd": 2.0,
            "warning": None,
        }
        script = Script(
            monkeypatch,
            lambda: served.move(number, "building", "build", "nothing to build"),
            lambda: served.move(
                number, "placing", "placing", "4 placement blocks against the anchors", entry=entry
            ),
            lambda: served.move(number, "placed", "placed", "provisional rating +1.2 ± 3.5", rating=rating),
        )
        result = nap("bot", "submit", a_bot(tmp_path), "--arena", "--wait")
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert lines[0].endswith(f"to {served.url}: submission {number}, queued")
        assert [line.split(maxsplit=2)[1:] for line in lines[1:-1]] == [
            ["upload", f"received {len(pack(tmp_path / 'mybot')):,} bytes; queued"],
            ["build", "nothing to build"],
            ["placing", "4 placement blocks against the anchors"],
            ["placed", "provisional rating +1.2 ± 3.5"],
        ]
        assert lines[-1] == f"submission {number} placed as {entry}"
        assert script.pauses == [arena_cli.POLL_S] * 3


class TestStatus:
    """`nap arena status [ID] [--json] [--wait]`: the caller's submissions, one with its log, one followed."""

    def submitted(self, served: Served, folder: Path) -> int:
        result = nap("bot", "submit", a_bot(folder), "--arena")
        assert result.exit_code == 0, result.output
        return served.count()

    def test_the_callers_submissions_as_lines_and_as_json(self, served: Served, tmp_path: Path) -> None:
        login(served, served.built.alice)
        number = self.submitted(served, tmp_path)
        lines = nap("arena", "status")
        assert lines.exit_code == 0, lines.output
        rows = [line.split("\t") for line in lines.stdout.splitlines()]
        assert rows[0] == ["id", "bot", "version", "status", "entry", "rating", "submitted (UTC)", "note"]
        assert [row[:5] for row in rows[1:]] == [
            ["1", "ace", "1.0", "placed", "ace.1"],
            [str(number), "", "", "queued", ""],
        ]
        document = nap("arena", "status", "--json")
        assert document.exit_code == 0, document.output
        found = json.loads(document.stdout)
        assert [(s["id"], s["owner"], s["status"]) for s in found] == [
            (1, "alice", "placed"),
            (number, "alice", "queued"),
        ]

    def test_an_admin_sees_everyones_with_their_owner(self, served: Served, tmp_path: Path) -> None:
        login(served, served.built.bob)
        number = self.submitted(served, tmp_path)
        login(served, served.built.admin)
        rows = [line.split("\t") for line in nap("arena", "status").stdout.splitlines()]
        assert rows[0][:2] == ["id", "owner"]
        assert [row[:2] for row in rows[1:]] == [["1", "alice"], [str(number), "bob"]]
        only = json.loads(nap("arena", "status", "--owner", "alice", "--json").stdout)
        assert [s["id"] for s in only] == [1]

    def test_one_submission_with_its_whole_log(self, served: Served, tmp_path: Path) -> None:
        login(served, served.built.bob)
        number = self.submitted(served, tmp_path)
        served.move(number, "refused", "refused", "the bot exited at its start\nits last line: boom")
        result = nap("arena", "status", number)
        assert result.exit_code == 0, result.output
        lines = result.output.splitlines()
        assert lines[0] == f"submission {number} by bob: (manifest not read yet), refused"
        assert lines[1].startswith("submitted ")
        assert lines[2].split(maxsplit=2)[1] == "upload"
        assert lines[3].split(maxsplit=2)[1:] == ["refused", "the bot exited at its start"]
        assert lines[4] == " " * 20 + "its last line: boom"
        document = json.loads(nap("arena", "status", number, "--json").stdout)
        assert document["id"] == number
        assert [s["step"] for s in document["steps"]] == ["upload", "refused"]

    def test_a_submission_of_someone_elses_is_the_arenas_403_and_none_its_404(self, served: Served) -> None:
        login(served, served.built.bob)
        theirs = nap("arena", "status", "1")
        assert (theirs.exit_code, theirs.output) == (1, "Error: submission 1 is not yours\n")
        none = nap("arena", "status", "999")
        assert (none.exit_code, none.output) == (1, "Error: no submission 999\n")

    def test_wait_follows_one_until_refused_exit_1(
        self, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        login(served, served.built.bob)
        number = self.submitted(served, tmp_path)
        Script(
            monkeypatch,
            lambda: served.move(number, "building", "unpack", "2 files, 1,234 bytes: mybot 0.1 (python)"),
            lambda: None,  # a question with nothing new
            lambda: served.move(
                number, "refused", "refused", "the bot exited at its start", reason="it exited"
            ),
        )
        result = nap("arena", "status", number, "--wait")
        assert result.exit_code == 1, result.output
        lines = result.output.splitlines()
        assert lines[0] == f"submission {number} by bob: (manifest not read yet), queued"
        assert [line.split(maxsplit=2)[1] for line in lines[1:-1]] == ["upload", "unpack", "refused"]
        assert lines[-1] == f"submission {number} refused: it exited"

    def test_wait_without_an_id_follows_the_latest_and_json_prints_its_last_answer(
        self, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        login(served, served.built.alice)
        number = self.submitted(served, tmp_path)
        Script(monkeypatch, lambda: served.move(number, "refused", "refused", "no", reason="no"))
        result = nap("arena", "status", "--wait", "--json")
        assert result.exit_code == 1
        document = json.loads(result.stdout)
        assert (document["id"], document["status"]) == (number, "refused")
        assert [s["step"] for s in document["steps"]] == ["upload", "refused"]

    def test_wait_asks_again_while_the_arena_restarts(
        self, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        login(served, served.built.bob)
        number = self.submitted(served, tmp_path)

        def restarted() -> None:
            served.start()
            served.move(number, "refused", "refused", "no", reason="no")

        Script(monkeypatch, served.stop, lambda: None, restarted)
        result = nap("arena", "status", number, "--wait")
        assert result.exit_code == 1, result.output
        refused = f"cannot reach the arena at {served.url}: connection refused (is it running, on that port?)"
        assert result.stderr.splitlines() == [
            f"{refused}; asking again for up to 5 minutes",
            f"the arena at {served.url} answers again",
        ]
        assert last_line(result) == f"submission {number} refused: no"

    def test_wait_gives_up_on_an_arena_that_does_not_answer_for_long(
        self, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        login(served, served.built.bob)
        number = self.submitted(served, tmp_path)
        script = Script(monkeypatch, served.stop)
        result = nap("arena", "status", number, "--wait")
        assert result.exit_code == 1
        refused = f"cannot reach the arena at {served.url}: connection refused (is it running, on that port?)"
        assert last_line(result) == f"Error: {refused}"
        assert sum(script.pauses) == arena_cli.POLL_S + arena_cli.OUTAGE_S
        served.start()  # for the fixture's cleanup

    def test_ctrl_c_stops_following_and_says_how_to_follow_again(
        self, served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        login(served, served.built.bob)
        number = self.submitted(served, tmp_path)

        def interrupted() -> None:
            raise KeyboardInterrupt

        Script(monkeypatch, interrupted)
        result = nap("arena", "status", number, "--wait")
        assert result.exit_code == 130
        assert result.stderr == (
            f"stopped following; submission {number} goes on in the arena: nap arena status {number}\n"
        )


class TestFailures:
    """Every failure to ask the arena is one line naming the fix."""

    def test_no_arena_configured(self) -> None:
        result = nap("arena", "user", "list")
        assert (result.exit_code, result.output) == (
            1,
            "Error: no arena configured: give --arena URL or run nap arena login URL\n",
        )

    def test_an_arena_that_is_not_there(self, served: Served) -> None:
        with socket.socket() as bound:  # a port of ours that does not listen: connections to it are refused
            bound.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{bound.getsockname()[1]}"
            result = nap("arena", "login", url, stdin=served.built.alice + "\n")
        assert result.exit_code == 1
        assert result.output == (
            f"Error: cannot reach the arena at {url}: connection refused (is it running, on that port?)\n"
        )

    def test_an_arena_that_does_not_answer(self) -> None:
        with socket.create_server(("127.0.0.1", 0)) as silent:  # takes connections, never answers
            url = f"http://127.0.0.1:{silent.getsockname()[1]}"
            connection = Connection(url=url, token=None, token_source="nowhere")  # noqa: S106 - no token
            client = ArenaClient(connection, timeout_s=0.2)
            with pytest.raises(ClientError, match=r"^cannot reach the arena at .*: no answer within 0\.2 s$"):
                client.me()

    def test_a_web_site_that_is_not_an_arena(self, served: Served, elsewhere: Elsewhere) -> None:
        result = nap("arena", "login", elsewhere.url, stdin=served.built.alice + "\n")
        assert result.exit_code == 1
        assert result.output == (
            f"Error: {elsewhere.url} does not answer as a Nap arena (HTTP 200 text/html to GET /api/v1/me): "
            "is it the arena's address?\n"
        )

    def test_json_of_another_shape_is_not_an_arenas(self, served: Served) -> None:
        other = Elsewhere(served, document={"name": "alice", "admin": "yes"})
        try:
            result = nap("arena", "login", other.url, stdin=served.built.alice + "\n")
        finally:
            other.close()
        assert result.exit_code == 1
        assert result.output == (
            f"Error: {other.url} does not answer as a Nap arena "
            "(an answer of another shape to GET /api/v1/me): is it the arena's address?\n"
        )

    def test_a_redirect_is_not_followed(self, served: Served) -> None:
        target = Elsewhere(served)
        redirecting = Elsewhere(served, redirect=f"{target.url}/api/v1/me")
        try:
            result = nap("arena", "login", redirecting.url, stdin=served.built.alice + "\n")
        finally:
            redirecting.close()
            target.close()
        assert result.exit_code == 1
        assert result.output == (
            f"Error: {redirecting.url} redirects to {target.url}/api/v1/me: "
            "give the arena's address itself (it is not followed)\n"
        )
        assert redirecting.asked == [("/api/v1/me", f"Bearer {served.built.alice}")]
        assert target.asked == []

    @pytest.mark.parametrize(
        ("url", "in_clear"),
        [
            ("http://arena.example.org", True),
            ("http://192.0.2.7:8080", True),
            ("https://arena.example.org", False),
            ("http://127.0.0.1:8080", False),
            ("http://[::1]:8080", False),
            ("http://localhost:8080", False),
        ],
    )
    def test_plain_http_to_another_machine_is_sent_in_clear(self, url: str, in_clear) -> None:
        assert sent_in_clear(url) is in_clear

    def test_an_address_that_is_no_url(self) -> None:
        result = nap("arena", "status", "--arena", "ftp://example.org")
        assert result.output == (
            "Error: 'ftp://example.org' is not an arena's address: give http://HOST:PORT or https://HOST\n"
        )
