"""The output folder's layout (``--out``, ``nap-out`` by default): one folder per tournament.

::

    <out>/t<N>/standings.md, .json, .html     tournament N's standings
    <out>/t<N>/sessions.html, replays/        its sessions, linked from the standings
                                              (tournaments.report.session_pages)
    <out>/t<N>/bots/<bot>-r<R>.log            its bots' output, a file per process (rotation R)
    <out>/latest                              a link to the newest tournament's folder
    <out>/index.html                          every tournament folder, newest first

So the next tournament never overwrites this one's files, and a folder can be archived,
mailed or moved whole. The session logs are in the database, with the sessions
(``nap log export`` writes them out as files). The runner's ``logs_root`` is ``<out>``
itself. The index is built from the folders themselves (their ``standings.json``), not
from a database.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
from typing import TYPE_CHECKING, Any

from tournaments.errors import writing

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["INDEX", "LATEST", "logs_root", "point_latest", "render_index", "tournament_folder", "write_index"]

INDEX = "index.html"
"""The page in ``<out>`` that lists every tournament folder."""

LATEST = "latest"
"""The link in ``<out>`` to the newest tournament's folder (the highest id published), the one
``nap standings`` prints: a run that finishes after a newer one leaves it alone."""


def logs_root(out: Path) -> Path:
    """Where the bots' output goes for ``--out out``: ``<out>/t<N>/bots/`` holds tournament N's."""
    return out.resolve()


def tournament_folder(out: Path, tournament: int) -> Path:
    """``<out>/t<N>``: tournament N's standings, pages and bot output."""
    return out / f"t{tournament}"


def point_latest(out: Path, tournament: int) -> Path | None:
    """Make ``<out>/latest`` a relative link to the newest tournament's folder, in one step.

    ``tournament`` has just been published; the newest is it, or a newer one published
    before it (two runs at once: the older may finish last). Returns the link, or None
    where none can be made (no symbolic links on this file system, or a real file or
    folder named ``latest`` is in the way).
    """
    link = out / LATEST
    if link.exists() and not link.is_symlink():
        return None
    newest = max(tournament, *_published(out))
    temporary = out / f".{LATEST}.{os.getpid()}.tmp"
    try:
        temporary.unlink(missing_ok=True)
        temporary.symlink_to(f"t{newest}", target_is_directory=True)
        temporary.replace(link)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        return None
    return link


def _published(out: Path) -> list[int]:
    """The ids of the tournaments whose standings are in ``out`` (``t<N>/standings.json``)."""
    found = (re.fullmatch(r"t(\d+)", folder.name) for folder in out.glob("t*"))
    return [int(number[1]) for number in found if number and (out / number[0] / "standings.json").is_file()]


def write_index(out: Path) -> Path:
    """Write ``<out>/index.html`` from the ``t<N>/standings.json`` files now in ``out``."""
    entries: list[tuple[int, dict[str, Any]]] = []
    for folder in out.glob("t*"):
        number = re.fullmatch(r"t(\d+)", folder.name)
        if number is None or not (folder / "standings.json").is_file():
            continue
        try:
            data = json.loads((folder / "standings.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}
        entries.append((int(number.group(1)), data if isinstance(data, dict) else {}))
    page = out / INDEX
    with writing(page):
        page.write_text(render_index(entries), encoding="utf-8")
    return page


def render_index(entries: list[tuple[int, dict[str, Any]]]) -> str:
    """The index page: one row per tournament (its number and ``standings.json`` data), newest first."""
    rows = []
    for number, data in sorted(entries, key=lambda entry: entry[0], reverse=True):
        about = data.get("tournament") or {}
        cells = [
            f'<a href="t{number}/standings.html">t{number}</a>',
            html.escape(str(data.get("title", ""))),
            html.escape(str(about.get("status", ""))),
            html.escape(str(data.get("sessions", ""))),
            html.escape(str(about.get("started_at", ""))[:19].replace("T", " ")),
        ]
        rows.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("folder", "tournament", "status", "sessions", "started (UTC)"))
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            '<head><meta charset="utf-8"><title>Nap Arena tournaments</title>',
            (
                "<style>body { font-family: system-ui, sans-serif; margin: 2rem; } "
                "td, th { padding: 0.25rem 0.6rem; text-align: left; }</style></head>"
            ),
            "<body>",
            "<h1>Nap Arena tournaments</h1>",
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
            "</body>",
            "</html>",
            "",
        ]
    )
