"""``nap bot check``'s report in words: what the command prints, and what an arena's admission log keeps."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tournaments.words import count

if TYPE_CHECKING:
    from tournaments.play.practice import CheckReport

__all__ = ["check_lines"]


def check_lines(report: CheckReport) -> list[str]:
    """The report as ``nap bot check`` prints it, the verdict last and with its reasons."""
    against = ", ".join(report.opponents) or "nobody"
    lines = [f"{report.bot}: {count(report.sessions, 'session')} against {against}"]
    if report.error:
        lines.append(f"  could not play: {report.error}")
    else:
        latency = ", ".join(f"{k} {v:.1f} ms" for k, v in report.latency_ms.items()) or "no decisions"
        faults = ", ".join(f"{n} {kind}" for kind, n in sorted(report.faults.items())) or "none"
        cpu = ", ".join(f"{k} {v:.1f} ms" for k, v in report.cpu_ms.items())
        lines += [
            f"  {report.decisions} decisions; latency: {latency}" + (f"; its own CPU: {cpu}" if cpu else ""),
            f"  faults: {faults}",
            f"  score: {report.chips_per_session:+.1f} chips/session",
        ]
        lines += _baseline_lines(report)
    if report.exits:
        statuses = ", ".join(_exit(report, number) for number in range(len(report.exits)))
        lines.append(f"  its process exited on its own, with status {statuses}")
    if report.last_output and (report.exits or report.faults or report.error):
        lines.append("  its last output lines:")
        lines += [f"    | {line}" for line in report.last_output]
    lines.append(f"  verdict: {'PASS' if report.passed else 'FAIL'}{_reasons(report)}")
    return lines


def _exit(report: CheckReport, number: int) -> str:
    """The ``number``-th exit's status, with why it exited when that is known."""
    why = report.exit_reasons[number] if number < len(report.exit_reasons) else ""
    return f"{report.exits[number]} ({why})" if why else str(report.exits[number])


def _baseline_lines(report: CheckReport) -> list[str]:
    base = report.baseline
    if base is None:
        return []
    if base.difference is None:
        return [f"  baseline: {base.bot} in its seat could not be compared: {base.error}"]
    edge = base.difference
    spread = "" if edge.half_width is None else f" ± {edge.half_width:.1f}"
    why = f"95% interval over {edge.n} blocks" if edge.half_width is not None else "no interval"
    caveat = "" if edge.caveat is None else f", {edge.caveat}"
    return [
        f"  baseline: {base.bot} in its seat on the same deals: {base.chips_per_session:+.1f} chips/session",
        (
            f"  difference ({report.bot} minus {base.bot}): {edge.mean:+.1f}{spread} chips/session "
            f"({why}{caveat})"
        ),
    ]


def _reasons(report: CheckReport) -> str:
    """`` (why)`` after FAIL: the error, the exit, the faults; empty on PASS."""
    if report.passed:
        return ""
    reasons = []
    if report.error:
        reasons.append("it could not play")
    if report.exits:
        reasons.append(f"its process exited with status {_exit(report, 0)}")
    if report.faults:
        reasons.append(count(sum(report.faults.values()), "fault"))
    if not reasons:
        reasons.append("no session played")
    return f" ({'; '.join(reasons)})"
