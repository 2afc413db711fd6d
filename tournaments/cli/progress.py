"""The tournament's console display: a progress bar (or plain lines) and a live standings table.

Everything a running tournament prints is built here; the runner prints nothing: the
command line gives it a :class:`ConsoleObserver` among its observers
(:mod:`tournaments.play.observers`), and the runner tells it how the run goes. On a
terminal progress is a bar; elsewhere (a pipe, a file, a CI log) it is one plain line every few seconds
(:class:`PlainProgress`), since a bar redrawn in place turns into debris there.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from tournaments.play.observers import RunObserver
from tournaments.report.publish import POOL_HEADER, flag_warnings, percent, pool_cell, rank_label, rank_notes
from tournaments.words import count

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.progress import TaskID

    from tournaments.play.observers import RunEnd, RunProgress, RunStart
    from tournaments.results import SessionResult
    from tournaments.stats.standings import Estimate, Standings

PLAIN_EVERY_S = 5.0
"""Seconds between two lines of :class:`PlainProgress`."""

RANKING_NOTE = "Ranked by mean chips per session; ranks are shared unless the data separates them."
"""How the standings printed on the console are ranked: their caption begins with it."""
RATING_NOTE = (
    "rating: Bradley-Terry on all sessions (Elo scale, average 0); it counts who ended a "
    "session with more chips than whom, not by how much, so it may order bots differently."
)
"""What the rating is, in the caption of the standings printed on the console."""
BUSY_MARK = " [busy machine: bots late]"
"""Added to the progress line once the late faults say the machine is too busy.

See :mod:`tournaments.stats.load_check`."""


class SpeedColumn(ProgressColumn):
    """Sessions per second, from rich's moving estimate."""

    def render(self, task: Task) -> Text:
        """The speed as ``123.4 sessions/s`` (blank until there is an estimate)."""
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.1f} sessions/s", style="progress.data.speed")


def progress_columns() -> tuple[ProgressColumn, ...]:
    """Columns for a tournament's ``rich`` progress bar: done/total, speed, time left."""
    return (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        SpeedColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )


class PlainProgress(Progress):
    """Progress for a console that is not a terminal: a plain line every ``every_s`` seconds.

    Each line reads ``NAME: 120/200 sessions, 13.8 sessions/s, 0:00:06 left``; the first
    comes with the first session, the last when the display stops. ``clock`` (seconds,
    monotonic) is rich's own, so the speed and the spacing of lines come from one source.
    """

    def __init__(
        self,
        *,
        console: Console,
        every_s: float = PLAIN_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(console=console, disable=True, get_time=clock)
        self.every_s = every_s
        self._printed: dict[TaskID, tuple[float, float]] = {}
        """Per task, when its last line was printed and the count it showed."""

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        """Advance as rich does, then print a line if the last one is ``every_s`` old."""
        super().advance(task_id, advance)
        last = self._printed.get(task_id)
        if last is None or self.get_time() - last[0] >= self.every_s:
            self._print_line(task_id)

    def stop(self) -> None:
        """Print each task's final count (unless its last line showed it), then stop."""
        for task in self.tasks:
            last = self._printed.get(task.id)
            if last is not None and last[1] != task.completed:
                self._print_line(task.id)
        super().stop()

    def _print_line(self, task_id: TaskID) -> None:
        task = self._tasks[task_id]
        self._printed[task_id] = (self.get_time(), task.completed)
        self.console.print(plain_line(task), markup=False, highlight=False, soft_wrap=True)


def plain_line(task: Task) -> str:
    """``NAME: 120/200 sessions, 13.8 sessions/s, 0:00:06 left`` (speed and time left once known)."""
    total = "?" if task.total is None else f"{task.total:g}"
    parts = [f"{task.description}: {task.completed:g}/{total} sessions"]
    speed = task.finished_speed or task.speed
    if speed:
        parts.append(f"{speed:,.1f} sessions/s")
    if task.finished:
        parts.append("done")
    elif task.time_remaining is not None:
        parts.append(f"{timedelta(seconds=round(task.time_remaining))} left")
    return ", ".join(parts)


def tournament_progress(console: Console, *, transient: bool = False) -> Progress:
    """A bar on a terminal; :class:`PlainProgress` anywhere else (``transient``: the bar vanishes)."""
    if console.is_terminal:
        return Progress(*progress_columns(), console=console, transient=transient)
    return PlainProgress(console=console)


def standings_table(standings: Standings, *, title: str = "Standings", live: bool = False) -> Table:
    """A compact ``rich`` table of standings: shared ranks, chips with 95% interval, win share, rating.

    In the pool variants (:attr:`Standings.shows_pool`) it adds each bot's pool record as declarer.

    The caption says how the table is ordered and what the rating is; ``live`` adds that
    live intervals are not a stopping rule.
    """
    table = Table(title=title, caption=_caption(standings, live=live), caption_justify="left")
    headers = (
        "#",
        "bot",
        "sessions",
        "chips/session",
        "95% CI",
        "LOS over next",
        "win share",
        *([POOL_HEADER] if standings.shows_pool else []),
        "faults",
        "rating",
    )
    for header in headers:
        table.add_column(header, justify="left" if header == "bot" else "right")
    for position, line in enumerate(standings.bots):
        share = line.win_share
        table.add_row(
            rank_label(standings, line),
            line.bot,
            str(line.sessions),
            f"{line.chips.mean:+.2f}",
            _spread(line.chips),
            "" if position == len(standings.bots) - 1 else percent(line.los_next),
            f"{share.mean:.3f} {_spread(share, digits=3)}",
            *([pool_cell(standings, line, separator="\n")] if standings.shows_pool else []),
            str(line.faults),
            f"{line.rating:+.0f}",
        )
    return table


def standings_lines(standings: Standings, *, title: str = "Standings") -> list[str]:
    """The standings as plain lines, for a console that is not a terminal (a pipe, a file, a CI log).

    The figures of :func:`standings_table`, two lines a bot (three with a pool record),
    each figure named, so that nothing needs cutting to fit 80 columns: rich fits a table
    to the width it assumes for a pipe (80) by cutting its cells (``+18.…``).
    """
    width = max((len(line.bot) for line in standings.bots), default=0)
    lines = [title]
    for position, line in enumerate(standings.bots):
        share = line.win_share
        figures = [
            f"win share {share.mean:.3f} {_spread(share, digits=3)}",
            *([] if position == len(standings.bots) - 1 else [f"LOS over next {percent(line.los_next)}"]),
            f"faults {line.faults}",
            f"rating {line.rating:+.0f}",
            *([] if (cpu := line.cpu_ms_per_decision) is None else [f"CPU {cpu:.1f} ms a decision"]),
        ]
        lines += [
            (
                f"{rank_label(standings, line):<3} {line.bot:<{width}}  {line.chips.mean:+.2f} "
                f"chips/session {_spread(line.chips)}, {count(line.sessions, 'session')}"
            ),
            "    " + ", ".join(figures),
        ]
        if standings.shows_pool:
            lines.append(f"    as declarer: {pool_cell(standings, line)}")
    return lines


def show_standings(console: Console, standings: Standings, *, title: str, live: bool = False) -> None:
    """Print the standings: :func:`standings_table` on a terminal, :func:`standings_lines` elsewhere.

    Without a terminal the table's caption follows the lines, as a paragraph that wraps
    between words.
    """
    if console.is_terminal:
        console.print(standings_table(standings, title=title, live=live))
        return
    for line in standings_lines(standings, title=title):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    console.print(_caption(standings, live=live), markup=False, highlight=False)


def _caption(standings: Standings, *, live: bool) -> str:
    """How the standings are ranked, why ranks are shared or missing (:func:`rank_notes`), the rating.

    ``live`` adds that intervals are no stopping rule.
    """
    stopping = (
        "Intervals are not a stopping rule: stopping once one clears zero finds differences that "
        "are not there. To stop as soon as the data decides: nap match --sprt."
    )
    parts = [RANKING_NOTE, *rank_notes(standings), RATING_NOTE, *([stopping] if live else [])]
    return " ".join(parts)


def _spread(value: Estimate, *, digits: int = 2) -> str:
    """``±1.25``, ``±3.10 (3 blocks)``, ``n/a (1 block)`` or ``n/a (no variation)``: short, for a terminal.

    Where there is no interval it says why, in fewer words than the standings files do.
    """
    if value.half_width is None:
        return "n/a (1 block)" if value.n < 2 else "n/a (no variation)"
    return f"±{value.half_width:.{digits}f}" + ("" if value.trusted else f" ({value.n} blocks)")


def standings_printer(progress: Progress | None) -> Callable[[Standings], None]:
    """Print live standings as a table, above ``progress``'s bar (or to stderr without one).

    Standings equal to the last ones printed are not printed again: a look every few
    seconds at a tournament that has not moved shows nothing new. A bot the rotation check
    flags gets its warning under the table.
    """
    console = progress.console if progress is not None else Console(stderr=True)
    shown: list[Standings] = []

    def show(standings: Standings) -> None:
        if shown and shown[-1] == standings:
            return
        shown[:] = [standings]
        title = f"Standings after {count(standings.sessions, 'session')}"
        show_standings(console, standings, title=title, live=True)
        for warning in flag_warnings(standings):
            console.print(warning, markup=False, highlight=False, soft_wrap=True)

    return show


class ConsoleObserver(RunObserver):
    """A run on the console: a line as it starts, a progress line, live standings, a line on late faults.

    ``announce`` makes the line printed as a run starts (None: none). The progress line,
    a task of ``progress`` for each run, names the tournament, or a match's test so far,
    marked while the machine is too busy (:data:`BUSY_MARK`). Every ``standings_every``
    seconds (None: never) the standings so far are printed above it
    (:func:`standings_printer`). One observer may follow several runs, one after the other.
    """

    def __init__(
        self,
        progress: Progress,
        *,
        announce: Callable[[RunStart], str] | None = None,
        standings_every: float | None = None,
    ) -> None:
        self.progress = progress
        self.standings_every = standings_every
        self._announce = announce
        self._show = standings_printer(progress)
        self._name = ""
        self._task: TaskID | None = None
        self._line = ""

    def started(self, start: RunStart) -> None:
        """Print the announcement, and start the run's progress line where it stands."""
        if self._announce is not None:
            text = self._announce(start)
            self.progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
        self._name = start.name
        self._line = self._line_of(start.progress)
        self._task = self.progress.add_task(
            self._line, total=start.progress.sessions, completed=start.progress.recorded
        )

    def committed(self, result: SessionResult, progress: RunProgress) -> None:  # noqa: ARG002 - only counted
        """Advance the progress line, renamed first if what it says has changed.

        Once a match's test has decided, the line's total is what has been played: the
        run stops there, so no time is left to show for the most it might have played.
        """
        task = self._task
        if task is None:
            return
        line = self._line_of(progress)
        if line != self._line:
            self._line = line
            self.progress.update(task, description=line)
        if progress.decided:
            self.progress.update(task, total=progress.recorded)
        self.progress.advance(task)

    def standings(self, standings: Standings) -> None:
        """Print the standings so far (unless they are those printed last)."""
        self._show(standings)

    def ended(self, end: RunEnd) -> None:
        """Print the run's one line on its late faults, if it had any."""
        if end.late is not None:
            self.progress.console.print(end.late, markup=False, highlight=False, soft_wrap=True)

    def _line_of(self, progress: RunProgress) -> str:
        return (progress.test or self._name) + (BUSY_MARK if progress.busy else "")
