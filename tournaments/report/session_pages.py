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

Rendering is pure; :func:`write_session_pages` alone reads logs and writes files.
"""

from __future__ import annotations

import html
import json
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote

from referee.rules import RecordError
from tournaments.errors import LogError, StoreError
from tournaments.report.audit import open_log
from tournaments.report.replay_page import render_replay_html, write_replay

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence
    from pathlib import Path

    from tournaments.results import FaultRecord, SessionResult
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
    faults: tuple[FaultRecord, ...]

    @property
    def fault_bots(self) -> tuple[str, ...]:
        """The bots that made a fault, each once, in seat order."""
        return tuple(dict.fromkeys(fault.bot for fault in sorted(self.faults, key=lambda f: f.seat)))


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


def first_fault(link: SessionLink) -> FaultRecord:
    """The session's earliest fault (ValueError when it has none)."""
    return min(link.faults, key=lambda f: (f.deal, f.decision))


def fault_place(fault: FaultRecord) -> str:
    """``deal 2, decision 5`` (both from 0, as in the logs), or ``deal 2`` for a fault not at a decision."""
    return f"deal {fault.deal}" + ("" if fault.decision < 0 else f", decision {fault.decision}")


def first_fault_fragment(link: SessionLink) -> str:
    """The replay's URL fragment that opens at the session's first fault (the table's view), or ``""``.

    The step after the fault's decision shows what was played in its place
    (:func:`tournaments.report.replay_page.fault_markers`).
    """
    if not link.faults:
        return ""
    first = first_fault(link)
    return f"#view=table&deal={first.deal}&step={first.decision + 1}"


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
            faults=session_log.payload.get("faults") or (),
            links=(("standings", "../standings.html"), ("all sessions", f"../{SESSIONS}")),
        )
        write_replay(folder / replay_href(link.id), page)
        made.add(link.id)
    path = folder / SESSIONS
    path.write_text(
        render_sessions_html(links, title=title, made=made, folder=folder, db=db, total=total),
        encoding="utf-8",
    )
    return path, made


_CSS = """
body { font-family: system-ui, sans-serif; margin: 1rem; color: #222; }
table { border-collapse: collapse; margin: 1rem 0; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
thead th { background: #f3f3f3; }
.win { font-weight: 600; }
.fault { color: #b00020; }
code { font-size: 0.8rem; word-break: break-all; }
.note { color: #666; font-size: 0.9rem; }
.wide { overflow-x: auto; }
"""
"""The page's style. ``.wide`` holds the table: wider than a phone, it scrolls sideways in
its box, and the page does not."""

_SCRIPT = """
"use strict";
(function () {
  function filter() {
    const params = {};
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      const [key, value] = part.split("=");
      if (key) params[decodeURIComponent(key)] = decodeURIComponent(value || "");
    }
    let shown = 0;
    const rows = document.querySelectorAll("tr[data-bots]");
    for (const row of rows) {
      const bots = JSON.parse(row.dataset.bots);
      const faulty = JSON.parse(row.dataset.faultBots);
      let keep = true;
      if (params.bot && !bots.includes(params.bot)) keep = false;
      if (params.opponent && !bots.includes(params.opponent)) keep = false;
      if (params.faults === "1") {
        keep = keep && (params.bot ? faulty.includes(params.bot) : faulty.length > 0);
      }
      row.hidden = !keep;
      if (keep) shown++;
    }
    let what = "All sessions";
    if (params.bot) what = "Sessions of " + params.bot;
    if (params.bot && params.opponent) what += " with " + params.opponent;
    if (params.faults === "1") what += params.bot ? " in which it made a fault" : " with a fault";
    document.getElementById("filter").textContent = what + ": " + shown + " of " + rows.length;
    document.getElementById("all").hidden = !location.hash;
  }
  window.addEventListener("hashchange", filter);
  filter();
})();
"""


def _seat_cells(link: SessionLink) -> str:
    cells = []
    for seat, (bot, chips) in enumerate(zip(link.bots, link.chips, strict=True)):
        text = f"{seat}: {html.escape(bot)} {chips:+d}"
        cells.append(f'<span class="win">{text}</span>' if seat in link.winners else text)
    return "<br>".join(cells)


def _fault_cell(link: SessionLink) -> str:
    """Each faulty seat's faults counted by kind, then where the first one was."""
    if not link.faults:
        return ""
    counts: dict[tuple[int, str], dict[str, int]] = {}
    for fault in link.faults:
        kinds = counts.setdefault((fault.seat, fault.bot), {})
        kinds[fault.kind] = kinds.get(fault.kind, 0) + 1
    lines = [
        f"seat {seat} ({html.escape(bot)}): "
        + ", ".join(f"{count} {html.escape(kind)}" for kind, count in sorted(kinds.items()))
        for (seat, bot), kinds in sorted(counts.items())
    ]
    lines.append(f"first at {fault_place(first_fault(link))}")
    return '<span class="fault">' + "<br>".join(lines) + "</span>"


def render_sessions_html(  # noqa: PLR0913 - the rows, and what the page says of them
    links: Sequence[SessionLink],
    *,
    title: str,
    made: Collection[int],
    folder: Path,
    db: Path | None = None,
    total: int | None = None,
) -> str:
    """The sessions list: one row per session, filtered by the URL fragment (see the module).

    A session in ``made`` links to its replay page (at its first fault, if any); any other
    links to where ``nap log html`` (the command shown, with ``db`` and ``folder``) writes it.
    ``total`` above ``len(links)`` says that only some sessions are listed.
    """
    rows = []
    for link in links:
        href = replay_href(link.id)
        if link.id in made:
            replay = f'<a href="{href}{first_fault_fragment(link)}">replay</a>'
        else:
            command = replay_command(link.id, folder / href, db)
            replay = f'<a href="{href}">replay</a> (write it first: <code>{html.escape(command)}</code>)'
        attributes = (
            f"data-bots='{html.escape(json.dumps(list(link.bots)))}' "
            f"data-fault-bots='{html.escape(json.dumps(list(link.fault_bots)))}'"
        )
        cells = [
            f'<td id="s{link.id}">{link.id}</td>',
            f"<td>{link.block}</td>",
            f"<td>{link.rotation}</td>",
            f"<td>{_seat_cells(link)}</td>",
            f"<td>{_fault_cell(link)}</td>",
            f"<td>{replay}</td>",
        ]
        rows.append(f"<tr {attributes}>{''.join(cells)}</tr>")
    head = "".join(
        f"<th>{h}</th>" for h in ("session", "block", "rotation", "seat: bot chips", "faults", "replay")
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            '<head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>Sessions: {html.escape(title)}</title>",
            f"<style>{_CSS}</style></head>",
            "<body>",
            (
                '<p><a href="standings.html">standings</a> &middot; '
                f'<a id="all" href="{SESSIONS}">every session</a></p>'
            ),
            f"<h1>Sessions: {html.escape(title)}</h1>",
            f'<p id="filter">All sessions: {len(links)}</p>',
            *(
                [
                    (
                        f'<p class="note">Listed: {len(links):,} of {total:,} sessions, the faulty '
                        "ones first, then the first played. <code>nap log list</code> finds any.</p>"
                    )
                ]
                if total is not None and total > len(links)
                else []
            ),
            (
                "<p class=\"note\">Chips are each seat's net for the session; a winner's are in bold. "
                "Faults count deals and decisions from 0, as the logs do. A replay page not written "
                "yet is written by the command beside its link.</p>"
            ),
            f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>',
            *rows,
            "</tbody></table></div>",
            f"<script>{_SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )
