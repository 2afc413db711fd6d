"""The pages that link a tournament's standings to its sessions: a sessions list and replays.

::

    <out>/t<N>/sessions.html         the sessions (up to LISTED_LIMIT): seats, chips, faults, replay
    <out>/t<N>/replays/s<ID>.html    a session's replay page (tournaments.report.replay_page)

``standings.html`` links each bot, each crosstable cell and each faulty session here:
``sessions.html#bot=peel&opponent=random`` lists the sessions those two shared,
``#bot=peel&faults=1`` those in which peel made a fault; its script hides the other rows,
and without a script every row shows. A replay page is about 200 KB (heather, four seats)
and takes some 50 ms to build, so a publish writes at most :data:`REPLAY_LIMIT` of them:
every faulty session first, then the first sessions played. Every other row links to the
page it would be and prints the ``nap log html`` command that writes it there; a page once
written is kept and not built again. docs/standings.md says why.

Rendering is pure (the page is ``sessions.html`` of :mod:`tournaments.report.templates`, from rows
prepared here); :func:`write_session_pages` alone reads logs and writes files.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from referee.rules import RecordError
from tournaments.errors import LogError, StoreError, writing
from tournaments.report.audit import open_log
from tournaments.report.replay_page import render_replay_html, write_replay
from tournaments.report.templates import render

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence
    from pathlib import Path

    from referee.match.faults import Fault
    from tournaments.results import SessionResult
    from tournaments.store.database import SessionRow

__all__ = [
    "LISTED_LIMIT",
    "REPLAYS",
    "REPLAY_LIMIT",
    "SESSIONS",
    "SessionLink",
    "chosen_for_replay",
    "fault_place",
    "first_fault",
    "first_fault_fragment",
    "render_sessions_html",
    "replay_command",
    "replay_href",
    "session_links",
    "sessions_href",
    "write_session_pages",
]

SESSIONS = "sessions.html"
"""The sessions list, beside ``standings.html``."""

REPLAYS = "replays"
"""The folder, beside ``standings.html``, of the replay pages."""

REPLAY_LIMIT = 50
"""Replay pages one publish writes at most (about 10 MB and a few seconds)."""

LISTED_LIMIT = 5000
"""Sessions the sessions list shows at most (about 2 MB): the faulty ones first, then the first played."""


@dataclass(frozen=True, slots=True)
class SessionLink:
    """What the linked pages say of one recorded session; tuples are by seat number.

    ``winners`` are the seats with a win share; ``faults`` every fault in the session.
    """

    id: int
    tournament: int
    block: int
    rotation: int
    bots: tuple[str, ...]
    chips: tuple[int, ...]
    winners: tuple[int, ...]
    faults: tuple[Fault, ...]

    @property
    def fault_bots(self) -> tuple[str, ...]:
        """The bots that made a fault, each once, in seat order."""
        return tuple(dict.fromkeys(fault.bot for fault in sorted(self.faults, key=_seat)))


def session_links(rows: Sequence[SessionRow], results: Sequence[SessionResult]) -> list[SessionLink]:
    """Join the store's session rows with their results (by tournament, block, rotation), in row order.

    A row without a result (not expected) is left out.
    """
    by_key = {(r.tournament, r.block, r.rotation): r for r in results}
    links = []
    for row in rows:
        result = by_key.get((row.tournament, row.block, row.rotation))
        if result is None:
            continue
        links.append(
            SessionLink(
                id=row.id,
                tournament=row.tournament,
                block=row.block,
                rotation=row.rotation,
                bots=result.bots,
                chips=tuple(seat.chips for seat in result.seats),
                winners=tuple(seat.seat for seat in result.seats if seat.win_share > 0),
                faults=result.faults,
            )
        )
    return links


def replay_href(session_id: int) -> str:
    """The replay page of a session, relative to the tournament's folder."""
    return f"{REPLAYS}/s{session_id}.html"


def sessions_href(*, bot: str | None = None, opponent: str | None = None, faults: bool = False) -> str:
    """``sessions.html`` filtered: a bot's sessions, two bots' shared ones, only faulty ones."""
    parts = [
        f"{key}={quote(value, safe='')}" for key, value in (("bot", bot), ("opponent", opponent)) if value
    ]
    if faults:
        parts.append("faults=1")
    return SESSIONS + ("#" + "&".join(parts) if parts else "")


def chosen_for_replay(links: Sequence[SessionLink], *, limit: int = REPLAY_LIMIT) -> list[SessionLink]:
    """The sessions whose replay a publish writes: the faulty ones first, then the first played."""
    ranked = sorted(links, key=lambda link: (not link.faults, link.id))
    return ranked[:limit]


def replay_command(session_id: int, page: Path, db: Path | None) -> str:
    """The command that writes a session's replay page where the sessions list links it."""
    words = ["nap", "log", "html", str(session_id)]
    if db is not None:
        words += ["--db", str(db.resolve())]
    return shlex.join([*words, "-o", str(page.resolve())])


def first_fault(link: SessionLink) -> Fault:
    """The session's earliest fault (ValueError when it has none); one at no decision is first in its deal."""
    return min(link.faults, key=_place)


def fault_place(fault: Fault) -> str:
    """``deal 3, decision 6``, or ``deal 3`` for a fault not at a decision.

    Counted from 1, as every page and text counts deals; the log's fields count from 0
    (``deal 3, decision 6`` is ``"deal": 2, "decision": 5``).
    """
    if fault.deal is None:
        return "no deal"
    return f"deal {fault.deal + 1}" + ("" if fault.decision is None else f", decision {fault.decision + 1}")


def first_fault_fragment(link: SessionLink) -> str:
    """The replay's URL fragment that opens at the session's first fault (the table's view), or ``""``.

    The step after the fault's decision shows what was played in its place
    (:func:`tournaments.report.replay_page.fault_markers`); a fault at no decision opens
    its deal as dealt.
    """
    if not link.faults:
        return ""
    first = first_fault(link)
    if first.deal is None:
        return ""
    step = 0 if first.decision is None else first.decision + 1
    return f"#view=table&deal={first.deal}&step={step}"


def _seat(fault: Fault) -> int:
    """The fault's seat, for ordering: one at no seat first."""
    return -1 if fault.seat is None else fault.seat


def _place(fault: Fault) -> tuple[int, int]:
    """Where the fault was made, for ordering: by deal, then decision, one at none first."""
    return (-1 if fault.deal is None else fault.deal, -1 if fault.decision is None else fault.decision)


def write_session_pages(  # noqa: PLR0913 - the pages, where, and what they say
    folder: Path,
    links: Sequence[SessionLink],
    *,
    title: str,
    log: Callable[[int], bytes] | None = None,
    db: Path | None = None,
    limit: int = REPLAY_LIMIT,
    total: int | None = None,
) -> tuple[Path, set[int]]:
    """Write ``sessions.html`` and the replay pages :func:`chosen_for_replay` picks into ``folder``.

    ``log`` gives a session's log by id (:meth:`tournaments.store.database.Store.log`; None: no
    replay page is written). A replay page already there is kept (a recorded session never
    changes). A session whose log cannot be read gets no page; its row keeps the command.
    ``total`` is the number of sessions when ``links`` lists only some of them. Returns the
    sessions page and the ids of the sessions that have a replay page now.
    """
    made = {link.id for link in links if (folder / replay_href(link.id)).is_file()}
    for link in chosen_for_replay(links, limit=limit if log is not None else 0):
        if link.id in made or log is None:
            continue
        try:
            session_log = open_log(log(link.id), name=f"the log of session {link.id}")
        except (LogError, RecordError, StoreError):
            continue
        where = f"tournament {link.tournament}, block {link.block}, rotation {link.rotation}"
        page = render_replay_html(
            session_log.record,
            bots=session_log.bots,
            title=f"Session {link.id}: {where}",
            decisions=session_log.decisions,
            faults=session_log.faults,
            links=(("standings", "../standings.html"), ("all sessions", f"../{SESSIONS}")),
        )
        write_replay(folder / replay_href(link.id), page)
        made.add(link.id)
    path = folder / SESSIONS
    with writing(path):
        path.write_text(
            render_sessions_html(links, title=title, made=made, folder=folder, db=db, total=total),
            encoding="utf-8",
        )
    return path, made


@dataclass(frozen=True, slots=True)
class _Seat:
    """A seat's cell line in the sessions list: ``1: peel +12``; a winner's is in bold."""

    text: str
    won: bool


@dataclass(frozen=True, slots=True)
class _Listed:
    """One row of the sessions list, as ``sessions.html`` shows it (the template escapes it all).

    ``bots_json`` and ``fault_bots_json`` are the row's bots and faulty bots as JSON lists,
    which the page's filter reads; ``faults`` the lines of its faults cell; ``command``, for a
    replay page not written yet, the command that writes it at ``replay``.
    """

    id: int
    block: int
    rotation: int
    bots_json: str
    fault_bots_json: str
    seats: tuple[_Seat, ...]
    faults: tuple[str, ...]
    replay: str
    command: str | None


def _fault_lines(link: SessionLink) -> tuple[str, ...]:
    """Each faulty seat's faults counted by kind, then where the first one was (none: no fault)."""
    if not link.faults:
        return ()
    counts: dict[tuple[int, str], dict[str, int]] = {}
    for fault in link.faults:
        kinds = counts.setdefault((_seat(fault), fault.bot), {})
        kinds[fault.kind] = kinds.get(fault.kind, 0) + 1
    lines = [
        (bot if seat < 0 else f"seat {seat} ({bot})")
        + ": "
        + ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
        for (seat, bot), kinds in sorted(counts.items())
    ]
    return (*lines, f"first at {fault_place(first_fault(link))}")


def _listed(link: SessionLink, *, made: Collection[int], folder: Path, db: Path | None) -> _Listed:
    href = replay_href(link.id)
    return _Listed(
        id=link.id,
        block=link.block,
        rotation=link.rotation,
        bots_json=json.dumps(list(link.bots)),
        fault_bots_json=json.dumps(list(link.fault_bots)),
        seats=tuple(
            _Seat(f"{seat}: {bot} {chips:+d}", won=seat in link.winners)
            for seat, (bot, chips) in enumerate(zip(link.bots, link.chips, strict=True))
        ),
        faults=_fault_lines(link),
        replay=href + first_fault_fragment(link) if link.id in made else href,
        command=None if link.id in made else replay_command(link.id, folder / href, db),
    )


def render_sessions_html(  # noqa: PLR0913 - the rows, and what the page says of them
    links: Sequence[SessionLink],
    *,
    title: str,
    made: Collection[int],
    folder: Path,
    db: Path | None = None,
    total: int | None = None,
) -> str:
    """``sessions.html``: one row per session, filtered by the URL fragment (see the module).

    A session in ``made`` links to its replay page (at its first fault, if any); any other
    links to where ``nap log html`` (the command shown, with ``db`` and ``folder``) writes it.
    ``total`` above ``len(links)`` says that only some sessions are listed.
    """
    return render(
        "sessions.html",
        title=title,
        sessions_href=SESSIONS,
        rows=[_listed(link, made=made, folder=folder, db=db) for link in links],
        total=total,
    )
