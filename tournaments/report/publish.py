"""Standings as files people and programs read: Markdown, JSON and a self-contained HTML page.

Rendering is pure (``render_markdown``, ``render_html``, ``to_json``); only ``publish``
touches the file system. The HTML page (``standings.html`` of :mod:`tournaments.report.templates`,
from a :class:`_StandingsPage` prepared here) carries its CSS and its SVG chart inline and
references nothing on the network, so it renders offline. Given the tournament's sessions,
it links each bot, each crosstable cell and each faulty session to the sessions list and
the replay pages beside it (:mod:`tournaments.report.session_pages`); without them it stands
alone and can be mailed as one file. An interval that is undefined (a single block, or
blocks that never varied) is shown as the mean and the reason, never as ``± 0.00``, and
stored as ``null`` with a ``warning``; an interval from only a few blocks is shown with
that warning. A match
(:mod:`tournaments.plan.candidate_match`) adds its summary: the edge, its interval, the likelihood of
superiority, the blocks and sessions read and the test's verdict. Each file ends with a
"Fair play" section: every bot's edge on boards played before, and a warning for a bot the
rotation check flags (:mod:`tournaments.stats.rotation_check`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tournaments.errors import writing
from tournaments.report.session_pages import (
    REPLAY_LIMIT,
    SESSIONS,
    SessionLink,
    fault_place,
    first_fault,
    first_fault_fragment,
    replay_href,
    sessions_href,
    write_session_pages,
)
from tournaments.report.templates import render
from tournaments.stats.estimates import FEW_BLOCKS
from tournaments.stats.rotation_check import ALPHA, MIN_BLOCKS, rotation_test_json, tested
from tournaments.stats.standings import (
    UNRANKED_SHARE,
    BotStanding,
    ContractRecord,
    Estimate,
    HeadToHead,
    Standings,
)
from tournaments.stats.tally import PoolRecord
from tournaments.words import count

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence
    from pathlib import Path

    from tournaments.plan.candidate_match import MatchSummary

JSON_FORMAT = "nap-arena-standings/3"
"""Identifies the JSON layout; bumped whenever a key changes meaning or disappears.

2: ranks may be shared (``tied``), ``los_next``; win share is an interval; the rating is
one Bradley-Terry number (no ``mu``/``sigma``); intervals carry ``sd`` and ``warning``;
``match``.

3: ``rank`` is null for a bot the referee played most decisions for (``unranked``), with
``asked`` and ``played_by_referee`` counting its decisions; ``tournament.load`` says whether
the machine was too busy for the clock."""

_LABEL_CHARS = 24
"""Bot ids longer than this are shortened in the chart (tables show them whole)."""

FAULTY_LISTED = 20
"""Faulty sessions listed on the standings page itself; the sessions list has them all."""

READING_NOTE = (
    "Intervals are 95% over blocks. Ranks are shared unless the paired difference from the "
    "bot above is separated from zero; LOS is the likelihood that a bot is better than the "
    "next one. The rating is a Bradley-Terry fit on all sessions (Elo scale, average 0), "
    "not an interval. An interval checked again and again is not a stopping rule: to stop "
    "as soon as the data decides, use nap match --sprt."
)


def publish(  # noqa: PLR0913 - the standings, the folder and keyword-only options
    standings: Standings,
    folder: Path,
    *,
    title: str,
    match: MatchSummary | None = None,
    about: Mapping[str, Any] | None = None,
    sessions: Sequence[SessionLink] | None = None,
    log: Callable[[int], bytes] | None = None,
    sessions_total: int | None = None,
    db: Path | None = None,
    replay_limit: int = REPLAY_LIMIT,
) -> tuple[Path, Path, Path]:
    """Write ``standings.md``, ``standings.json`` and ``standings.html`` into ``folder``.

    Creates ``folder`` if needed and overwrites earlier files. Returns the three paths in
    that order. Files are UTF-8. ``match`` adds a match's summary to each; ``about``
    (:func:`tournaments.report.provenance.describe_tournament`) goes into the JSON as ``tournament``.
    ``sessions`` (:func:`tournaments.report.session_pages.session_links`) also writes
    ``sessions.html`` and up to ``replay_limit`` replay pages from the logs ``log`` gives by
    session id, which ``standings.html`` links; ``sessions_total`` says how many sessions
    there are when ``sessions`` lists only some; ``db`` goes into the commands that write
    the other replay pages.
    """
    folder.mkdir(parents=True, exist_ok=True)
    markdown = folder / "standings.md"
    data = folder / "standings.json"
    page = folder / "standings.html"
    isolation = None if about is None else about.get("isolation")
    load = None if about is None else about.get("load")
    with writing(markdown):  # an error names the file (a write on a full disk names none)
        markdown.write_text(
            render_markdown(standings, title=title, match=match, isolation=isolation, load=load),
            encoding="utf-8",
        )
    with writing(data):
        data.write_text(
            json.dumps(to_json(standings, title=title, match=match, about=about), indent=2, sort_keys=True)
            + "\n",
            encoding="utf-8",
        )
    made: set[int] = set()
    if sessions is not None:
        _, made = write_session_pages(
            folder, sessions, title=title, log=log, db=db, limit=replay_limit, total=sessions_total
        )
    with writing(page):
        page.write_text(
            render_html(
                standings,
                title=title,
                match=match,
                sessions=sessions,
                replays=made,
                isolation=isolation,
                load=load,
            ),
            encoding="utf-8",
        )
    return markdown, data, page


def shared_ranks_note(standings: Standings) -> str | None:
    """Why ranks are shared however far apart the means are, when it is for too few blocks; else None."""
    fewest = standings.too_few_blocks
    if fewest is None:
        return None
    shared = "a single block" if fewest == 1 else f"only {fewest} blocks"
    return (
        "Ranks are shared because the blocks are too few: a bot takes a rank of its own only when "
        f"its paired difference from the bot above has a 95% interval above zero over at least "
        f"{FEW_BLOCKS} blocks, and here bots side by side shared {shared}."
    )


def unranked_note(standings: Standings) -> str | None:
    """Which bots are not ranked and why (the referee played most of their decisions); None: all ranked."""
    lines = standings.unranked
    if not lines:
        return None
    bots = ", ".join(f"{line.bot} ({percent(line.played_by_referee)})" for line in lines)
    return (
        f"Not ranked: {bots} of the decisions asked of "
        + ("it" if len(lines) == 1 else "each")
        + " were played by the referee (late, invalid, crashed or disqualified), "
        f"so the chips shown are the referee's play, not the bot's. A bot is ranked only while "
        f"the referee plays at most {UNRANKED_SHARE:.0%} of its decisions."
    )


def rank_notes(standings: Standings) -> list[str]:
    """:func:`shared_ranks_note` and :func:`unranked_note` as a list of sentences (none, one or two)."""
    notes = (shared_ranks_note(standings), unranked_note(standings))
    return [note for note in notes if note is not None]


def interval(value: Estimate, *, digits: int = 2, signed: bool = True) -> str:
    """``+1.25 ± 0.80``; ``+1.25 ± 3.10 (only 3 blocks)``; ``+0.00 (no variation over 5 blocks)``."""
    mean = f"{value.mean:+.{digits}f}" if signed else f"{value.mean:.{digits}f}"
    text = mean if value.half_width is None else f"{mean} ± {value.half_width:.{digits}f}"
    caveat = value.caveat
    return text if caveat is None else f"{text} ({caveat})"


def percent(value: float | None) -> str:
    """A probability as ``97.3%``, or ``n/a``."""
    return "n/a" if value is None else f"{100 * value:.1f}%"


def rank_label(standings: Standings, line: BotStanding) -> str:
    """``2`` or, when the rank is shared, ``2=``; ``-`` for a bot not ranked (``unranked``)."""
    if line.rank is None:
        return "-"
    return f"{line.rank}=" if standings.tied(line.bot) else str(line.rank)


def _declarer(records: tuple[ContractRecord, ...]) -> str:
    return ", ".join(f"{r.contract} {r.made}/{r.attempted}" for r in records) or "-"


POOL_HEADER = "declarer: pool, widow, exchanges"
"""The header of the declarers' pool records, shown only where :attr:`Standings.shows_pool`."""


def pool_cell(standings: Standings, line: BotStanding, *, separator: str = "; ") -> str:
    """A bot's pool record as declarer, as the tables show it, its parts joined by ``separator``.

    ``pools 2 (7 chips)``: the pools it took and their chips; ``widow 3/5 taken, 2 made``
    where any declarer had a widow to take; ``1.40 cards exchanged`` (per declaration)
    where any declarer had exchanged; ``-`` for a bot that never declared.
    """
    pool, exchanged = line.pool, line.mean_exchanged
    if exchanged is None:
        return "-"
    parts = [f"pools {pool.pools} ({pool.pool_chips} chips)"]
    if any(other.pool.widows for other in standings.bots):
        parts.append(
            f"widow {pool.widows_taken}/{pool.widows} taken, {pool.widows_taken_made} made, "
            f"{pool.widows_peeked} peeked"
        )
    if any(other.pool.cards_exchanged for other in standings.bots):
        parts.append(f"{exchanged:.2f} cards exchanged")
    return separator.join(parts)


def _headers(standings: Standings) -> list[str]:
    """The ranking table's headers: :data:`_HEADERS`, with the pool records where they show."""
    if not standings.shows_pool:
        return _HEADERS
    at = _HEADERS.index("declarer made/attempted") + 1
    return [*_HEADERS[:at], POOL_HEADER, *_HEADERS[at:]]


def _rows(standings: Standings) -> list[list[str]]:
    """One row of display cells per bot, in ranking order, matching ``_headers(standings)``."""
    pool = standings.shows_pool
    return [
        [
            rank_label(standings, line),
            line.bot,
            str(line.sessions),
            str(line.blocks),
            interval(line.chips),
            "-" if position == len(standings.bots) - 1 else percent(line.los_next),
            f"{interval(line.win_share, digits=3, signed=False)} / {line.expected_win_share:.3f}",
            _declarer(line.declarer),
            *([pool_cell(standings, line)] if pool else []),
            str(line.faults),
            f"{line.rating:+.0f}",
        ]
        for position, line in enumerate(standings.bots)
    ]


_HEADERS = [
    "#",
    "bot",
    "sessions",
    "blocks",
    "chips/session (95% CI)",
    "LOS over next",
    "win share (95% CI) / chance",
    "declarer made/attempted",
    "faults",
    "rating (Bradley-Terry)",
]


def _cross_cell(standings: Standings, bot: str, opponent: str) -> str:
    if bot == opponent:
        return "-"
    entry = standings.versus(bot, opponent)
    if entry is None:
        return ""
    return f"{interval(entry.difference)} ({entry.difference.n})"


def match_lines(match: MatchSummary) -> list[str]:
    """The match's summary as lines of plain text (the terminal's and the files')."""
    opponents = ", ".join(match.opponents)
    lines = [
        f"{match.candidate} against {opponents} at {match.table_size} seats: "
        f"{count(match.blocks, 'block')}, {count(match.sessions, 'session')} read" + _unread(match),
        "edge (chips per session over the average opponent): "
        + ("n/a" if match.edge is None else _edge(match.edge)),
        f"likelihood of superiority: {percent(match.los)}",
    ]
    if match.state is not None:
        lines.append(f"SPRT {match.state.test.describe()}: {match.state.describe()}")
    lines.append(f"verdict: {match.verdict}")
    if match.faults:
        counts = ", ".join(f"{bot} {count}" for bot, count in sorted(match.faults.items()))
        lines.append(
            f"faults in the sessions read: {counts} (the referee played those decisions, "
            "so the edge counts them; a measurement should have none)"
        )
    return lines


def _unread(match: MatchSummary) -> str:
    """Why some sessions played are not read: `` (60 played: 4 more ...)``; empty when all are."""
    more = match.played - match.sessions
    if more <= 0:
        return ""
    state = match.state
    if state is not None and state.verdict is not None:
        why = f"in blocks after block {state.blocks}, where the test decided"
    else:
        why = "in blocks not complete, or after one (a block is read once all its rotations are in)"
    return f" ({match.played} played: {more} more {why}; kept, not read)"


def _edge(edge: Estimate) -> str:
    if edge.low is None or edge.high is None:
        return interval(edge)
    text = f"{edge.mean:+.2f}, 95% CI [{edge.low:+.2f}, {edge.high:+.2f}]"
    return text if edge.caveat is None else f"{text} ({edge.caveat})"


def render_markdown(
    standings: Standings,
    *,
    title: str = "Standings",
    match: MatchSummary | None = None,
    isolation: Mapping[str, Any] | None = None,
    load: Mapping[str, Any] | None = None,
) -> str:
    """Render the standings as Markdown: the match (if any), the ranking table, the crosstable, fair play.

    Crosstable cells read row bot minus column bot, mean chips per session over the
    blocks they shared, with the 95% interval and, in brackets, the number of blocks.
    ``isolation`` (:func:`tournaments.report.provenance.isolation_record`) says in the fair play
    section whether the bots ran isolated; ``load``
    (:meth:`tournaments.stats.load_check.LateFaults.to_json`) warns above the table when the
    machine was too busy for the clock.
    """

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    names = [line.bot for line in standings.bots]
    headers = _headers(standings)
    head = [f"# {title}", ""]
    if match is not None:
        head += ["## Match", "", *(f"- {line}" for line in match_lines(match)), ""]
    lines = [
        *head,
        f"{count(standings.sessions, 'session')} in {count(standings.blocks, 'block')}. {READING_NOTE}",
        "",
        *(line for warning in load_warnings(load) for line in (f"**Warning: {warning}.**", "")),
        row(headers),
        row(["---"] * len(headers)),
        *(row(cells) for cells in _rows(standings)),
        "",
        *(line for note in rank_notes(standings) for line in (note, "")),
        "## Crosstable (row minus column, chips per session; shared blocks in brackets)",
        "",
        row(["", *names]),
        row(["---"] * (len(names) + 1)),
        *(row([a, *(_cross_cell(standings, a, b) for b in names)]) for a in names),
        "",
        *_fair_play_markdown(standings, isolation),
    ]
    return "\n".join(lines) + "\n"


def load_warnings(load: Mapping[str, Any] | None) -> list[str]:
    """The busy-machine warning of a tournament's ``load`` record, as a list: one sentence, or none."""
    warning = None if load is None else load.get("warning")
    return [] if warning is None else [str(warning)]


def isolation_line(isolation: Mapping[str, Any] | None) -> list[str]:
    """A sentence on whether the bots ran isolated, one on their containment and clocks (none unrecorded)."""
    if isolation is None:
        return []
    if isolation["isolated"]:
        lines = ["Bots ran isolated in every run (docs/security.md)."]
    else:
        lines = [f"Bots not isolated: {isolation['reason']} (docs/security.md)."]
    clocks = isolation.get("clocks")
    if clocks is None:  # recorded before bots were contained and clocked in their CPU
        return lines
    by_clock = {clock: [bot for bot, its in clocks.items() if its == clock] for clock in ("cpu", "wall")}
    said = [
        f"{where} ({', '.join(bots)})"
        for where, bots in (("in their own CPU", by_clock["cpu"]), ("on the wall", by_clock["wall"]))
        if bots
    ]
    clocked = f"Decisions clocked {' and '.join(said)}" if said else "No decision clocked"
    if isolation.get("contained"):
        lines.append(f"{clocked}; each bot's processes contained as a whole in every run (docs/security.md).")
    else:
        lines.append(f"{clocked}; not contained in every run: {isolation['containment']} (docs/security.md).")
    return lines


def _fair_play_markdown(standings: Standings, isolation: Mapping[str, Any] | None) -> list[str]:
    """standings.md's "Fair play": the isolation, each bot's edge on boards played before, the warnings."""
    intro, items, warnings = fair_play_lines(standings)
    return [
        "## Fair play",
        "",
        *(line for sentence in isolation_line(isolation) for line in (sentence, "")),
        intro,
        "",
        *(f"- {item}" for item in items),
        *(line for warning in warnings for line in ("", f"**{warning}**")),
    ]


def to_json(
    standings: Standings,
    *,
    title: str,
    match: MatchSummary | None = None,
    about: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything in the standings (and the match, if any) as JSON-ready data with stable keys.

    ``about`` says what was measured (``tournament``: see
    :func:`tournaments.report.provenance.describe_tournament`); None when it is not known.

    Bots come in ranking order with their ``rank``. Interval ends (``low``, ``high``),
    ``warning``, ``tied``, ``los``, ``mean_cards_exchanged``, ``cpu_ms_per_decision``,
    ``match`` and ``rotation_test`` (the rotation check's method, alpha and minimum of
    blocks) are written for convenience and ignored by ``from_json``. ``has_pool`` and each
    bot's ``declarer_pool`` are written only where the standings show the pool records
    (:attr:`Standings.shows_pool`).
    """

    def bot(line: BotStanding) -> dict[str, Any]:
        return {
            "rank": line.rank,
            "tied": standings.tied(line.bot),
            "los_next": line.los_next,
            "bot": line.bot,
            "sessions": line.sessions,
            "blocks": line.blocks,
            "chips_per_session": line.chips.to_json(),
            "win_share": line.win_share.to_json(),
            "expected_win_share": line.expected_win_share,
            "declarer": [
                {"contract": r.contract, "made": r.made, "attempted": r.attempted} for r in line.declarer
            ],
            "faults": line.faults,
            "asked": line.asked,
            "played_by_referee": line.substituted,
            "unranked": line.unranked,
            "rating": line.rating,
            **({"declarer_pool": _pool_json(line)} if pool else {}),
            "rotation_edge": None if line.rotation_edge is None else line.rotation_edge.to_json(),
            "rotation_flagged": line.rotation_flagged,
            "cpu_us": line.cpu_us,
            "clocked": line.clocked,
            "cpu_ms_per_decision": line.cpu_ms_per_decision,
        }

    pool = standings.shows_pool
    return {
        "format": JSON_FORMAT,
        "title": title,
        "sessions": standings.sessions,
        "blocks": standings.blocks,
        **({"has_pool": standings.has_pool} if pool else {}),
        "bots": [bot(line) for line in standings.bots],
        "crosstable": [
            {"bot": e.bot, "opponent": e.opponent, "difference": e.difference.to_json(), "los": e.los}
            for e in standings.crosstable
        ],
        "match": None if match is None else match.to_json(),
        "tournament": None if about is None else dict(about),
        "rotation_test": rotation_test_json(),
    }


def _pool_json(line: BotStanding) -> dict[str, Any]:
    """A bot's pool record as declarer; ``mean_cards_exchanged`` for convenience (None: never declared)."""
    pool = line.pool
    return {
        "pools": pool.pools,
        "pool_chips": pool.pool_chips,
        "widows": pool.widows,
        "widows_taken": pool.widows_taken,
        "widows_taken_made": pool.widows_taken_made,
        "widows_peeked": pool.widows_peeked,
        "cards_exchanged": pool.cards_exchanged,
        "mean_cards_exchanged": line.mean_exchanged,
    }


def _pool_from_json(data: dict[str, Any] | None) -> PoolRecord:
    """The pool record ``_pool_json`` wrote; all zeros where the standings had none."""
    if data is None:
        return PoolRecord()
    return PoolRecord(**{field.name: int(data[field.name]) for field in dataclasses.fields(PoolRecord)})


def from_json(data: dict[str, Any]) -> Standings:
    """Rebuild the ``Standings`` written by ``to_json`` (after ``json.loads``).

    Raises ``ValueError`` if ``data`` is not in the ``JSON_FORMAT`` layout.
    """
    if data.get("format") != JSON_FORMAT:
        msg = f"not {JSON_FORMAT} data: format is {data.get('format')!r}"
        raise ValueError(msg)

    def est(value: dict[str, Any]) -> Estimate:
        half, sd = value["half_width"], value["sd"]
        return Estimate(
            mean=float(value["mean"]),
            half_width=None if half is None else float(half),
            n=int(value["n"]),
            sd=None if sd is None else float(sd),
        )

    return Standings(
        bots=tuple(
            BotStanding(
                bot=str(line["bot"]),
                rank=None if line["rank"] is None else int(line["rank"]),
                sessions=int(line["sessions"]),
                blocks=int(line["blocks"]),
                chips=est(line["chips_per_session"]),
                win_share=est(line["win_share"]),
                expected_win_share=float(line["expected_win_share"]),
                declarer=tuple(
                    ContractRecord(
                        contract=str(r["contract"]),
                        made=int(r["made"]),
                        attempted=int(r["attempted"]),
                    )
                    for r in line["declarer"]
                ),
                faults=int(line["faults"]),
                rating=float(line["rating"]),
                los_next=None if line["los_next"] is None else float(line["los_next"]),
                pool=_pool_from_json(line.get("declarer_pool")),
                rotation_edge=None if line.get("rotation_edge") is None else est(line["rotation_edge"]),
                rotation_flagged=bool(line.get("rotation_flagged", False)),
                asked=int(line.get("asked", 0)),
                substituted=int(line.get("played_by_referee", 0)),
                cpu_us=int(line.get("cpu_us", 0)),
                clocked=int(line.get("clocked", 0)),
            )
            for line in data["bots"]
        ),
        crosstable=tuple(
            HeadToHead(bot=str(e["bot"]), opponent=str(e["opponent"]), difference=est(e["difference"]))
            for e in data["crosstable"]
        ),
        sessions=int(data["sessions"]),
        blocks=int(data["blocks"]),
        has_pool=bool(data.get("has_pool", False)),
    )


@dataclass(frozen=True, slots=True)
class _Link:
    """A table cell's or a list item's text, linked to ``href`` when there is one."""

    text: str
    href: str | None = None


@dataclass(frozen=True, slots=True)
class _Table:
    """A table of the standings page: its headers, then its rows of cells."""

    headers: tuple[str, ...]
    rows: tuple[tuple[_Link, ...], ...]


@dataclass(frozen=True, slots=True)
class _ChartRow:
    """A bot's row of the chart: its label, its mean's x, its interval's ends' x (None: no interval).

    Coordinates are SVG user units (pixels), ``y`` the row's middle.
    """

    y: float
    label: str
    mean: float
    interval: tuple[float, float] | None
    note: str


@dataclass(frozen=True, slots=True)
class _Chart:
    """The standings page's SVG chart, laid out: ``zero`` is the x of the break-even line."""

    width: int
    height: int
    top: int
    zero: float
    note_x: int
    rows: tuple[_ChartRow, ...]


@dataclass(frozen=True, slots=True)
class _FaultyList:
    """The faulty sessions the standings page lists (``count`` in all), and a link to the others."""

    count: int
    items: tuple[_Link, ...]
    more: _Link | None


@dataclass(frozen=True, slots=True)
class _StandingsPage:
    """What ``standings.html`` shows, in its order; every text is escaped by the template.

    ``sessions_link`` (the sessions list) and ``faulty`` are there when the page links the
    sessions; ``match`` when there is a match.
    """

    title: str
    match: tuple[str, ...] | None
    sessions: int
    blocks: int
    reading_note: str
    load_warnings: tuple[str, ...]
    sessions_link: str | None
    chart: _Chart
    ranking: _Table
    rank_notes: tuple[str, ...]
    crosstable: _Table
    faulty: _FaultyList | None
    isolation: tuple[str, ...]
    fair_play_intro: str
    fair_play: tuple[str, ...]
    fair_play_warnings: tuple[str, ...]


def _chart(standings: Standings) -> _Chart:
    """Lay out the chart: a row per bot, its mean as a dot, its interval as a bar.

    The x axis spans every mean and interval end, and always zero (the break-even line).
    Bots without an interval get a dot and the reason as their label.
    """
    label_w, plot_w, row_h, top = 180, 480, 24, 24
    height = top + row_h * max(len(standings.bots), 1) + 8
    points = [0.0]
    for line in standings.bots:
        ends = (line.chips.low, line.chips.high)
        points += [line.chips.mean, *(end for end in ends if end is not None)]
    low, high = min(points), max(points)
    span = (high - low) or 1.0

    def x(value: float) -> float:
        return label_w + (value - low) / span * plot_w

    rows = []
    for row, line in enumerate(standings.bots):
        chips = line.chips
        rows.append(
            _ChartRow(
                y=top + row_h * row + row_h / 2,
                label=line.bot if len(line.bot) <= _LABEL_CHARS else line.bot[: _LABEL_CHARS - 1] + "…",
                mean=x(chips.mean),
                interval=None if chips.low is None or chips.high is None else (x(chips.low), x(chips.high)),
                note=interval(chips),
            )
        )
    return _Chart(
        width=label_w + plot_w + 260,
        height=height,
        top=top,
        zero=x(0),
        note_x=label_w + plot_w + 6,
        rows=tuple(rows),
    )


def _faulty_list(sessions: Sequence[SessionLink], replays: Collection[int]) -> _FaultyList | None:
    """The standings page's list of faulty sessions, each linked to its replay at its first fault."""
    faulty = [link for link in sessions if link.faults]
    if not faulty:
        return None
    items = []
    for link in faulty[:FAULTY_LISTED]:
        first = first_fault(link)
        where = fault_place(first)
        text = (
            f"session {link.id} (block {link.block}, rotation {link.rotation}): {len(link.faults)} "
            f"fault{'s' if len(link.faults) > 1 else ''}, first at {where}: seat {first.seat} "
            f"({first.bot}) {first.kind}"
        )
        href = (
            replay_href(link.id) + first_fault_fragment(link)
            if link.id in replays
            else f"{SESSIONS}#s{link.id}"
        )
        items.append(_Link(text, href))
    more = len(faulty) - FAULTY_LISTED
    return _FaultyList(
        count=len(faulty),
        items=tuple(items),
        more=_Link(f"and {more} more", sessions_href(faults=True)) if more > 0 else None,
    )


def render_html(  # noqa: PLR0913 - the standings and keyword-only options
    standings: Standings,
    *,
    title: str = "Standings",
    match: MatchSummary | None = None,
    sessions: Sequence[SessionLink] | None = None,
    replays: Collection[int] = (),
    isolation: Mapping[str, Any] | None = None,
    load: Mapping[str, Any] | None = None,
) -> str:
    """Render ``standings.html``: match (if any), chart, ranking, crosstable, fair play; nothing external.

    ``isolation`` and ``load`` are as for :func:`render_markdown`. With ``sessions`` each
    bot, crosstable cell and fault count links to the sessions list
    (``sessions.html``, filtered), and the faulty sessions are listed, linked to their
    replay pages (those in ``replays``) or their rows in the sessions list.
    """
    linked = sessions is not None

    def bot_link(bot: str) -> _Link:
        return _Link(bot, sessions_href(bot=bot) if linked else None)

    headers = _headers(standings)
    faults = headers.index("faults")
    ranking = []
    for line, cells in zip(standings.bots, _rows(standings), strict=True):
        shown = [_Link(cell) for cell in cells]
        shown[1] = bot_link(line.bot)
        if line.faults and linked:
            shown[faults] = _Link(cells[faults], sessions_href(bot=line.bot, faults=True))
        ranking.append(tuple(shown))
    names = [line.bot for line in standings.bots]
    cross = [
        (
            bot_link(a),
            *(
                _Link(
                    _cross_cell(standings, a, b),
                    sessions_href(bot=a, opponent=b)
                    if linked and a != b and standings.versus(a, b)
                    else None,
                )
                for b in names
            ),
        )
        for a in names
    ]
    intro, items, warnings = fair_play_lines(standings)
    page = _StandingsPage(
        title=title,
        match=None if match is None else tuple(match_lines(match)),
        sessions=standings.sessions,
        blocks=standings.blocks,
        reading_note=READING_NOTE,
        load_warnings=tuple(load_warnings(load)),
        sessions_link=sessions_href() if linked else None,
        chart=_chart(standings),
        ranking=_Table(tuple(headers), tuple(ranking)),
        rank_notes=tuple(rank_notes(standings)),
        crosstable=_Table(("", *names), tuple(cross)),
        faulty=None if sessions is None else _faulty_list(sessions, replays),
        isolation=tuple(isolation_line(isolation)),
        fair_play_intro=intro,
        fair_play=tuple(items),
        fair_play_warnings=tuple(warnings),
    )
    return render("standings.html", page=page)


# The rotation check in words (tournaments.stats.rotation_check holds the test itself).


def _rotation_edge(edge: Estimate) -> str:
    """``+8.10 ± 3.20``, or the mean alone where there is no interval."""
    return f"{edge.mean:+.2f}" + ("" if edge.half_width is None else f" ± {edge.half_width:.2f}")


def rotation_warning(line: BotStanding) -> str:
    """The plain sentence said of a flagged bot."""
    edge = line.rotation_edge
    assert edge is not None  # noqa: S101 - a flagged bot has complete blocks
    return (
        f"{line.bot} does better on boards it has seen played before: {_rotation_edge(edge)} chips a session "
        f"over {edge.n} blocks (one-sided t test, {ALPHA:.0%} false-positive rate over all bots); "
        f"a bot that remembers boards does this; see docs/security.md"
    )


def flag_warnings(standings: Standings) -> list[str]:
    """One :func:`rotation_warning` per flagged bot, in the standings' order (none: nobody flagged)."""
    return [rotation_warning(line) for line in standings.bots if line.rotation_flagged]


def fair_play_lines(standings: Standings) -> tuple[str, list[str], list[str]]:
    """The "Fair play" section: an introduction, one item per bot, and the warnings.

    Each item is the bot's rotation edge with its 95% interval over complete blocks, or why
    there is none; the warnings are :func:`flag_warnings`.
    """
    intro = (
        "Edge on boards played before: each bot's chips a session on a board's later rotations "
        "less on its first, both against the others' results with the same hands (95% interval "
        f"over complete blocks). A bot is tested from {MIN_BLOCKS} complete blocks, one-sided, "
        f"at a {ALPHA:.0%} false-positive rate over all bots."
    )
    items = []
    for line in standings.bots:
        edge = line.rotation_edge
        if edge is None:
            items.append(f"{line.bot}: no complete block yet")
            continue
        caveat = edge.caveat
        blocks = f"{edge.n} block{'s' if edge.n > 1 else ''}"
        text = f"{line.bot}: {_rotation_edge(edge)} chips a session over {blocks}"
        if caveat is not None and edge.n > 1:
            text += f" ({caveat})"
        if not tested(edge):
            text += "; not tested"
        items.append(text + ("; flagged" if line.rotation_flagged else ""))
    return intro, items, flag_warnings(standings)
