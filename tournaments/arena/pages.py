"""The arena's pages: server-rendered HTML (jinja2, ``templates/``), plain CSS and a little script.

Everyone sees the leaderboard (``/``, live: ``static/arena.js`` listens to the API's
event stream and swaps in the board again when a block completes), an entry's page, a
session's replay once its block is complete (the replay page of ``nap log html``, served
with a policy that allows its own inline script and style and nothing else), and the
tables in play (``/live``: public events without a card, :mod:`tournaments.arena.live`).
A person signed in (``/login``: their token, kept in the ``nap_arena`` cookie, HttpOnly
and SameSite=Strict) also sees their own submissions with their whole admission logs and
their bots' logs (``/me``, ``/submissions/{id}``, ``/entries/{entry}/log``); a page of
someone else's is refused (403), and a page that needs a token sends the visitor to the
login form. The login and logout forms are accepted from this site only.

Templates get values prepared here; everything is escaped unless marked safe (the
environment is :mod:`tournaments.report.templates`' own, with this folder's loader).
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import urlencode, urlsplit

from aiohttp import web
from jinja2 import PackageLoader

from tournaments.arena.api import LATEST_SESSIONS, path_number
from tournaments.arena.errors import ForbiddenError
from tournaments.arena.serving import COOKIE
from tournaments.errors import ArenaError
from tournaments.report.audit import open_log
from tournaments.report.publish import interval, percent
from tournaments.report.replay_page import render_replay_html
from tournaments.report.templates import ENVIRONMENT
from tournaments.web.server import content_security_policy, file_handler

if TYPE_CHECKING:
    from tournaments.arena.board import BoardRow
    from tournaments.arena.people import Caller
    from tournaments.arena.service import Arena
    from tournaments.arena.serving import Board, Credentials, LiveTables

__all__ = ["Pages"]

COOKIE_DAYS: Final = 30
"""How long a browser keeps a person signed in."""
STATIC: Final = ("arena.css", "arena.js")
"""The files under ``/static/``: nothing else of the folder is served."""

_ENVIRONMENT = ENVIRONMENT.overlay(loader=PackageLoader("tournaments.arena", "templates"))
_ENVIRONMENT.globals = {**ENVIRONMENT.globals, "interval": interval, "percent": percent}


def _static_folder() -> Path:
    """The folder of the pages' files, wherever the package is installed."""
    return Path(str(resources.files("tournaments.arena") / "static"))


class Pages:
    """The pages' handlers over one arena (:meth:`routes`), and its refusals as pages (:meth:`refusal`)."""

    def __init__(self, arena: Arena, *, credentials: Credentials, board: Board, live: LiveTables) -> None:
        self._arena = arena
        self._credentials = credentials
        self._board = board
        self._live = live

    def routes(self) -> list[web.RouteDef]:
        """The pages' routes and their static files."""
        folder = _static_folder()
        return [
            web.get("/", self.leaderboard),
            web.get("/entries/{entry}", self.entry),
            web.get("/entries/{entry}/log", self.entry_log),
            web.get("/sessions/{id}", self.session),
            web.get("/live", self.live),
            web.get("/login", self.login_form),
            web.post("/login", self.login),
            web.get("/logout", self.logout_form),
            web.post("/logout", self.logout),
            web.get("/me", self.me),
            web.get("/submissions/{id}", self.submission),
            *(web.get(f"/static/{name}", file_handler(folder / name)) for name in STATIC),
        ]

    def _viewer(self, request: web.Request) -> Caller | None:
        return self._credentials.caller(request)

    def _page(self, request: web.Request, name: str, *, status: int = 200, **context: object) -> web.Response:
        try:
            viewer = self._viewer(request)
        except ArenaError:  # a wrong token in the header: the page is shown to nobody in particular
            viewer = None
        html = _ENVIRONMENT.get_template(name).render(viewer=viewer, **context)
        return web.Response(text=html, status=status, content_type="text/html")

    def refusal(self, request: web.Request, status: int, message: str) -> web.Response:
        """A refusal as a small page: its status and its one line."""
        return self._page(request, "error.html", status=status, title=f"{status}", message=message)

    def to_login(self, request: web.Request) -> web.Response:
        """The answer to a page that needs a token: the login form, then back here (an old cookie cleared)."""
        response = _see_other(f"/login?{urlencode({'next': request.path_qs})}")
        response.del_cookie(COOKIE, path="/")
        return response

    # What everyone sees

    async def leaderboard(self, request: web.Request) -> web.Response:
        """``/``: every entry on the ladder, ranked, with its interval; the retired ones apart."""
        board, at = self._board.now()
        settings = self._arena.settings
        return self._page(
            request,
            "leaderboard.html",
            title="Leaderboard",
            board=board,
            updated_at=at,
            shared=_shared_ranks(board.rows),
            profile=settings.profile.name,
            table_sizes=", ".join(str(size) for size in settings.table_sizes),
            trouble=self._arena.trouble.now,
        )

    async def entry(self, request: web.Request) -> web.Response:
        """An entry's page: its versions, its results against each opponent, faults, admission, sessions."""
        name = request.match_info["entry"]
        record, steps = self._arena.entry(name)
        sessions = self._arena.store.complete_sessions(self._arena.ladder, name, limit=LATEST_SESSIONS)
        blocks: defaultdict[int, list[tuple[int, int]]] = defaultdict(list)
        for session in sessions:
            blocks[session.block].append((session.rotation, session.id))
        viewer = self._viewer(request)
        return self._page(
            request,
            "entry.html",
            title=name,
            record=record,
            steps=steps,
            blocks=sorted(((block, sorted(rotations)) for block, rotations in blocks.items()), reverse=True),
            owns=viewer is not None and record.row.owner is not None and viewer.owns(record.row.owner),
        )

    async def session(self, request: web.Request) -> web.Response:
        """A session's replay, once its block is complete (404 with why before)."""
        number = path_number(request, "id")
        data = self._arena.session_log(number)
        page = await asyncio.to_thread(_replay, number, data)
        scripts, styles = _inline_elements(page)
        policy = content_security_policy(scripts=scripts, styles=styles)
        return web.Response(text=page, content_type="text/html", headers={"Content-Security-Policy": policy})

    async def live(self, request: web.Request) -> web.Response:
        """The tables in play: seats, deal, bids, contract, trump, tricks won, balances; no card."""
        tables = await self._live.now()
        return self._page(
            request, "live.html", title="Tables in play", tables=tables, unavailable=self._live.unavailable
        )

    # Signing in and out

    async def login_form(self, request: web.Request) -> web.Response:
        """The login form: a token, pasted."""
        return self._page(
            request, "login.html", title="Sign in", next=_local(request.query.get("next")), message=None
        )

    async def login(self, request: web.Request) -> web.Response:
        """Check the token and keep it in the cookie (this site's form only), then go where the person was."""
        _same_site(request)
        form = await request.post()
        token, going = form.get("token"), _local(str(form.get("next", "/")))
        caller = self._arena.caller(token.strip() if isinstance(token, str) else None)
        if caller is None:
            message = "that token is wrong or revoked"
            return self._page(request, "login.html", status=401, title="Sign in", next=going, message=message)
        response = _see_other(going)
        response.set_cookie(
            COOKIE,
            token.strip() if isinstance(token, str) else "",
            path="/",
            max_age=COOKIE_DAYS * 24 * 3600,
            httponly=True,
            samesite="Strict",
            secure=request.secure,
        )
        return response

    async def logout_form(self, request: web.Request) -> web.Response:
        """A page with the sign-out button (signing out is a POST)."""
        return self._page(request, "logout.html", title="Sign out")

    async def logout(self, request: web.Request) -> web.Response:
        """Forget the cookie (this site's form only)."""
        _same_site(request)
        response = _see_other("/")
        response.del_cookie(COOKIE, path="/")
        return response

    # What is the signed-in person's

    async def me(self, request: web.Request) -> web.Response:
        """My submissions with their whole admission logs, and my entries' bot logs."""
        viewer = self._viewer(request)
        me = self._arena.me(viewer)
        mine = self._arena.submissions(viewer, owner=me["name"])
        steps = {s.id: self._arena.submission(viewer, s.id)[1] for s in mine}
        logs = {
            s.entry: self._arena.entry_log(viewer, s.entry)["logs"]
            for s in mine
            if s.entry is not None and s.status in {"placing", "placed"}
        }
        return self._page(
            request,
            "me.html",
            title=me["name"],
            me=me,
            submissions=list(reversed(mine)),
            steps=steps,
            logs=logs,
        )

    async def submission(self, request: web.Request) -> web.Response:
        """One of my submissions with its whole admission log."""
        found, steps = self._arena.submission(self._viewer(request), path_number(request, "id"))
        return self._page(
            request, "submission.html", title=f"Submission {found.id}", submission=found, steps=steps
        )

    async def entry_log(self, request: web.Request) -> web.Response:
        """My entry's bot logs (the end of each process's)."""
        name = request.match_info["entry"]
        found = self._arena.entry_log(self._viewer(request), name)
        return self._page(
            request,
            "entry_log.html",
            title=f"{name}: bot logs",
            entry=name,
            logs=found["logs"],
            faults=found["faults"],
        )


def _replay(number: int, data: bytes) -> str:
    """The replay page of session ``number`` from its log (pure: run off the loop)."""
    log = open_log(data, name=f"the log of session {number}")
    payload = log.payload
    title = f"Session {number}: block {payload.get('block')}, rotation {payload.get('rotation')}"
    return render_replay_html(
        log.record,
        bots=log.bots,
        title=title,
        decisions=log.decisions,
        faults=payload.get("faults") or (),
        links=[("Leaderboard", "/"), ("Its log (JSON)", f"/api/v1/sessions/{number}")],
    )


class _Inline(HTMLParser):
    """The texts of a document's inline scripts (not its data blocks) and style sheets."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._into: list[str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = dict(attrs)
        if (
            tag == "script"
            and "src" not in given
            and given.get("type") in {None, "", "text/javascript", "module"}
        ):
            self._into, self._text = self.scripts, []
        elif tag == "style":
            self._into, self._text = self.styles, []

    def handle_data(self, data: str) -> None:
        if self._into is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style"} and self._into is not None:
            self._into.append("".join(self._text))
            self._into = None


def _inline_elements(page: str) -> tuple[list[str], list[str]]:
    """The texts of ``page``'s inline scripts and style sheets, for its policy's hashes."""
    parser = _Inline()
    parser.feed(page)
    parser.close()
    return parser.scripts, parser.styles


def _shared_ranks(rows: tuple[BoardRow, ...]) -> set[int]:
    """The ranks held by more than one entry (their intervals overlap): shown as ``2=``."""
    counts = Counter(row.rank for row in rows if row.rank is not None)
    return {rank for rank, count in counts.items() if count > 1}


def _same_site(request: web.Request) -> None:
    """Refuse a form sent from another site, as the browser tells: its Sec-Fetch-Site, or else its Origin.

    The pages send no referrer, so a browser sends their forms with ``Origin: null``; every
    current browser also sends ``Sec-Fetch-Site``, which a page cannot set. A request with
    neither (not a browser's form) is refused too.
    """
    fetched_from = request.headers.get("Sec-Fetch-Site")
    if fetched_from is not None:
        same = fetched_from == "same-origin"
    else:
        origin = request.headers.get("Origin", "null")
        same = origin != "null" and urlsplit(origin).netloc == request.host
    if not same:
        msg = "this form is accepted from this site's own pages only"
        raise ForbiddenError(msg)


def _see_other(location: str) -> web.Response:
    return web.Response(status=303, headers={"Location": location})


def _local(path: str | None) -> str:
    r"""``path`` if it is a path of this site (``/me``), else ``/``: the login never sends anyone elsewhere.

    A browser reads ``//host``, ``/\host`` and a path with a tab or a line break in it
    (which it drops) as another site: anything but a plain path is refused.
    """
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    if any(ord(character) <= 0x20 or ord(character) == 0x7F for character in path):
        return "/"
    return path
