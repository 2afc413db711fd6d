r"""A bot process's CPU shared out among the requests it holds: the CPU decision clock, as values.

A local bot is clocked in its own CPU: the CPU its process tree spends, read from outside
it (the kernel's accounting) at moments the caller chooses, while the process holds
requests. One process serves many tables and may hold many requests at once; nothing
outside it can tell which of them it worked on. A :class:`CpuLedger` shares the CPU out
by one rule:

- the CPU spent while the process holds requests may belong to **any** request it held at
  that moment (CPU spent while it holds none belongs to no request and is never charged);
- a request is late only when that CPU **cannot** be shared out so that every request it
  held gets no more than its limit (``late_ms``: its deadline and the clock's margin).
  Then the oldest request it holds is late, and takes its limit and what is beyond the
  limits: the others may still share the rest within theirs;
- an answered request takes the CPU not yet taken that was spent while it was held, the
  earliest first, up to its limit: what the decision records as its CPU.

So an honest bot, one that works on a request only while it holds it and never spends
more than a request's limit on it, is never late, whatever order it works in and however
many tables it serves: its own work is one way of sharing the CPU out within every limit,
and taking the earliest CPU first never leaves a sharing impossible that was possible (the
exchange argument of matching points to intervals by their right ends: every request
still held was sent no later than now, and the earliest CPU is the one the fewest of them
can take). And a slow bot cannot hide its work behind many tables: while it holds requests
it never spends more CPU than the sum of their limits (a late request counts its limit
once, and what it is charged beyond); beyond that its oldest request is late, however many
tables it holds, and holding more requests lends their limits once, not again. What no rule
from outside can tell apart is how a process spreads its CPU among the requests it holds
at once (one long decision and several quick ones look like several even ones); a wall
clock cannot either, and the wall-clock backstop bounds how long a request may be held.

Only the sum can be outrun as CPU comes in: a new reading's CPU may go to every request
held now, so the ledger is late exactly when the CPU not yet taken exceeds the limits of
the requests held (:attr:`CpuLedger.slack_ms` below zero); taking answers and late requests
out keeps every other condition of a sharing (Hall's) as it was.

Milliseconds throughout; readings are the process tree's cumulative CPU. Pure: nothing
here reads a clock or a file.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Final

__all__ = ["CPU_EPSILON_MS", "CpuLedger"]

CPU_EPSILON_MS: Final = 1e-6
"""CPU within this of the limits is within them (sums of floats)."""


class CpuLedger:
    """The CPU of one bot process while it holds requests, and who may take it (see the module).

    Requests are held in the order the process was sent them (:meth:`hold`); CPU comes in
    with each reading (:meth:`read`) and waits in groups, each tagged with the count of
    holds before it: a group may go to any request held then and still held. Each request
    leaves with the CPU it takes: :meth:`release` when it is answered (or withdrawn, or
    ends on the wall clock's backstop), :meth:`overrun` when the sum is outrun.
    """

    __slots__ = ("_cap", "_cpu", "_free", "_held", "_holds", "_last", "_tags", "cores")

    def __init__(self, *, cores: float = 1.0) -> None:
        self.cores = cores
        """The most CPU the process can spend per millisecond of the wall clock (its cores):
        how soon the ledger can be outrun (:meth:`check_in_ms`)."""
        self._held: dict[int, tuple[int, float]] = {}
        """Per request id held, in the order held: its hold number and its limit."""
        self._holds = 0
        """Holds so far: the next one's number minus one."""
        self._tags: list[int] = []
        """Each group of CPU not yet taken: the number of the last hold before it (ascending)."""
        self._cpu: list[float] = []
        """Each group's CPU not yet taken (ms), beside :attr:`_tags`."""
        self._cap = 0.0
        """The limits of the requests held, summed."""
        self._free = 0.0
        """The CPU not yet taken, summed."""
        self._last: float | None = None
        """The last reading."""

    def __contains__(self, request_id: int) -> bool:
        return request_id in self._held

    @property
    def holding(self) -> bool:
        """Whether the process holds a request."""
        return bool(self._held)

    @property
    def slack_ms(self) -> float:
        """CPU the process may still spend before its oldest request is late (negative: outrun)."""
        return self._cap - self._free

    def check_in_ms(self, *, least_ms: float) -> float | None:
        """How soon (wall-clock ms) the process could outrun its limits; None while it holds nothing.

        At :attr:`cores` milliseconds of CPU per millisecond, never sooner than ``least_ms``
        (the caller's shortest wait between readings).
        """
        if not self._held:
            return None
        return max(least_ms, self.slack_ms / self.cores)

    def read(self, cpu_ms: float) -> None:
        """The process tree has spent ``cpu_ms`` of CPU in all (a reading): share out what is new.

        The first reading only sets the start; a reading lower than the last (the process
        was started again) starts again from it. CPU spent while nothing is held is dropped.
        """
        last = self._last
        self._last = cpu_ms
        if last is None or not self._held:
            return
        spent = cpu_ms - last
        if spent <= 0:
            return
        tags = self._tags
        if tags and tags[-1] == self._holds:
            self._cpu[-1] += spent
        else:
            tags.append(self._holds)
            self._cpu.append(spent)
        self._free += spent

    def hold(self, request_id: int, limit_ms: float) -> None:
        """The process was sent ``request_id``: from now on CPU may go to it, up to ``limit_ms``.

        A request held already (sent again after a reconnect) stays as it was.
        """
        if request_id in self._held:
            return
        self._holds += 1
        self._held[request_id] = (self._holds, limit_ms)
        self._cap += limit_ms

    def release(self, request_id: int, *, beyond: float = 0.0) -> float:
        """``request_id`` leaves (answered, withdrawn, ended): the CPU it takes (0: it was not held).

        It takes the earliest CPU not yet taken that was spent while it was held, up to its
        limit (and ``beyond`` it, for a late request); what no request still held can take
        is dropped.
        """
        found = self._held.pop(request_id, None)
        if found is None:
            return 0.0
        number, cap = found
        self._cap -= cap
        limit = cap + beyond
        tags, cpu = self._tags, self._cpu
        first = index = bisect_left(tags, number)
        taken = 0.0
        while index < len(tags) and taken < limit:
            share = min(cpu[index], limit - taken)
            taken += share
            if share >= cpu[index]:
                index += 1
            else:
                cpu[index] -= share
        del tags[first:index], cpu[first:index]
        self._free -= taken
        self._drop_orphans()
        return taken

    def overrun(self) -> list[tuple[int, float]]:
        """The requests that are late now, oldest first, each with the CPU it takes.

        While the CPU not yet taken exceeds the limits of the requests held, no sharing
        keeps every one within its limit: the oldest is late and leaves with its limit and
        the excess (the earliest CPU it may take), so that the others may share the rest.
        """
        late: list[tuple[int, float]] = []
        while self._held and self._free > self._cap + CPU_EPSILON_MS:
            oldest = next(iter(self._held))
            late.append((oldest, self.release(oldest, beyond=self._free - self._cap)))
        return late

    def drop(self) -> list[int]:
        """Nothing is held any more (the bot is gone): the requests that were."""
        held = list(self._held)
        self._held.clear()
        self._cap = 0.0
        self._clear_groups()
        return held

    def _drop_orphans(self) -> None:
        """Drop the groups that no request still held may take (spent before the oldest was held)."""
        held = self._held
        if not held:
            self._clear_groups()
            return
        oldest = next(iter(held.values()))[0]
        tags = self._tags
        if tags and tags[0] < oldest:
            end = bisect_left(tags, oldest)
            self._free -= sum(self._cpu[:end])
            del tags[:end], self._cpu[:end]

    def _clear_groups(self) -> None:
        self._tags.clear()
        self._cpu.clear()
        self._free = 0.0

    def __repr__(self) -> str:
        return (
            f"<CpuLedger holding {len(self._held)} (limits {self._cap:.1f} ms), "
            f"{self._free:.1f} ms not yet taken>"
        )
